"""`viewlint server` and Jupyter notebooks, driven as an editor with LSP 3.17 notebook documents
drives it: pygls's client sends `notebookDocument/didOpen`, `didChange`, `didSave` and `didClose`
to a `viewlint server` subprocess over stdio, and reads the diagnostics published to each cell.

The notebook is the one of the issue: a lost write, a hidden sync and a view stored in a cache,
each in a cell of its own, after a markdown cell and a cell with a line magic. The findings must be
the CLI's on the same notebook file, on the same cells, rows and columns.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Optional

import pytest

pytest.importorskip("pygls")
nbformat = pytest.importorskip("nbformat")

from lsprotocol import types  # noqa: E402
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from conftest import OPT_IN_CONFIG, run_viewlint  # noqa: E402
from test_server import Session, apply_workspace_edit, run_session  # noqa: E402
from viewlint.registry import all_rules  # noqa: E402

MARKDOWN = "# Training notes"
IMPORTS = "%matplotlib inline\nimport torch\nimport torch.nn as nn"
# "😀" is two UTF-16 units and one viewlint column: the finding's character is one more than its column - 1.
LOST_WRITE = (
    "def write_rows(buf: torch.Tensor, idx: list[int], v: torch.Tensor) -> None:\n"
    '    tag = "😀"; buf[idx].copy_(v)'
)
HIDDEN_SYNC = (
    "class Model(nn.Module):\n"
    "    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:\n"
    "        n = lengths.max().item()\n"
    "        return x[:, :n]"
)
CACHED_VIEW = (
    "class Cache:\n"
    "    def __init__(self) -> None:\n"
    "        self.last = {}\n"
    "\n"
    "    def push(self, hidden: torch.Tensor) -> None:\n"
    '        self.last["row"] = hidden.narrow(0, 0, 1)'
)
CELLS = [("markdown", MARKDOWN), ("code", IMPORTS), ("code", LOST_WRITE), ("code", HIDDEN_SYNC), ("code", CACHED_VIEW)]
MARKDOWN_CELL, IMPORTS_CELL, LOST_WRITE_CELL, HIDDEN_SYNC_CELL, CACHED_VIEW_CELL = range(5)
# (cell index, code, LSP range as (line, character, line, character))
EXPECTED = {
    LOST_WRITE_CELL: [("VL201", (1, 16, 1, 33))],
    HIDDEN_SYNC_CELL: [("VL401", (2, 12, 2, 32))],
    CACHED_VIEW_CELL: [("VL101", (5, 27, 5, 49))],
}


def found(diagnostics: list[dict[str, Any]]) -> list[tuple[str, tuple[int, int, int, int]]]:
    return [(d["code"], (d["range"]["start"]["line"], d["range"]["start"]["character"],
                         d["range"]["end"]["line"], d["range"]["end"]["character"])) for d in diagnostics]


class NotebookSession(Session):
    """A session whose client supports notebook documents, holding one notebook's cells as an editor does."""

    NOTEBOOK_CAPABLE = types.ClientCapabilities(notebook_document=types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()))

    def __init__(self, root: Path, marker: Path, capabilities: Optional[types.ClientCapabilities] = None) -> None:
        super().__init__(root, marker, capabilities or self.NOTEBOOK_CAPABLE)
        self.notebook_uri = ""
        self.notebook_version = 0
        self.uris: list[str] = []  # the cells' URIs, in notebook order
        self.texts: dict[str, str] = {}
        self.kinds: dict[str, types.NotebookCellKind] = {}
        self.cell_count = 0

    def _new_cell(self, kind: str, text: str) -> types.TextDocumentItem:
        self.cell_count += 1
        uri = f"vscode-notebook-cell:{self.notebook_path}#cell{self.cell_count}"
        self.texts[uri] = text
        self.kinds[uri] = types.NotebookCellKind.Code if kind == "code" else types.NotebookCellKind.Markup
        self.versions[uri] = 1
        return types.TextDocumentItem(uri=uri, language_id="python" if kind == "code" else "markdown", version=1, text=text)

    def _cell(self, uri: str) -> types.NotebookCell:
        return types.NotebookCell(kind=self.kinds[uri], document=uri)

    async def cell_diagnostics(self, uris: list[str]) -> dict[str, list[dict[str, Any]]]:
        """The next diagnostics published for each of these cells."""
        return {uri: await self.diagnostics(uri) for uri in uris}

    async def open_notebook(self, path: Path, cells: list[tuple[str, str]]) -> dict[str, list[dict[str, Any]]]:
        self.notebook_path = str(path)
        self.notebook_uri = from_fs_path(str(path))
        self.notebook_version = 1
        items = [self._new_cell(kind, text) for kind, text in cells]
        self.uris = [item.uri for item in items]
        self.client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(uri=self.notebook_uri, notebook_type="jupyter-notebook", version=1,
                                                     cells=[self._cell(uri) for uri in self.uris]),
            cell_text_documents=items))
        return await self.cell_diagnostics(self.uris)

    def _change(self, cells: types.NotebookDocumentCellChanges) -> None:
        self.notebook_version += 1
        self.client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=self.notebook_version, uri=self.notebook_uri),
            change=types.NotebookDocumentChangeEvent(cells=cells)))

    async def edit_cell(self, uri: str, text: str) -> dict[str, list[dict[str, Any]]]:
        """Replace a cell's text, as typing in it does."""
        self.texts[uri] = text
        self.versions[uri] += 1
        self._change(types.NotebookDocumentCellChanges(text_content=[types.NotebookDocumentCellContentChanges(
            document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            changes=[types.TextDocumentContentChangeWholeDocument(text=text)])]))
        return await self.cell_diagnostics(self.uris)

    async def insert_cell(self, index: int, kind: str, text: str) -> tuple[str, dict[str, list[dict[str, Any]]]]:
        item = self._new_cell(kind, text)
        self.uris.insert(index, item.uri)
        self._change(types.NotebookDocumentCellChanges(structure=types.NotebookDocumentCellChangeStructure(
            array=types.NotebookCellArrayChange(start=index, delete_count=0, cells=[self._cell(item.uri)]),
            did_open=[item])))
        return item.uri, await self.cell_diagnostics(self.uris)

    async def delete_cell(self, index: int) -> dict[str, list[dict[str, Any]]]:
        uri = self.uris.pop(index)
        self._change(types.NotebookDocumentCellChanges(structure=types.NotebookDocumentCellChangeStructure(
            array=types.NotebookCellArrayChange(start=index, delete_count=1, cells=[]),
            did_close=[types.TextDocumentIdentifier(uri=uri)])))
        return await self.cell_diagnostics([*self.uris, uri])

    async def move_cell(self, old: int, new: int) -> dict[str, list[dict[str, Any]]]:
        """Move a cell as VS Code reports it: one change deleting it, then one inserting it (its text document stays open)."""
        uri = self.uris.pop(old)
        self._change(types.NotebookDocumentCellChanges(structure=types.NotebookDocumentCellChangeStructure(
            array=types.NotebookCellArrayChange(start=old, delete_count=1, cells=[]))))
        await self.cell_diagnostics([*self.uris, uri])  # out of the notebook for now: cleared
        self.uris.insert(new, uri)
        self._change(types.NotebookDocumentCellChanges(structure=types.NotebookDocumentCellChangeStructure(
            array=types.NotebookCellArrayChange(start=new, delete_count=0, cells=[self._cell(uri)]))))
        return await self.cell_diagnostics(self.uris)

    async def change_kind(self, uri: str, kind: types.NotebookCellKind) -> dict[str, list[dict[str, Any]]]:
        self.kinds[uri] = kind
        self._change(types.NotebookDocumentCellChanges(data=[self._cell(uri)]))
        return await self.cell_diagnostics(self.uris)


def run_notebook_session(tmp_path: Path, scenario) -> None:
    run_session(tmp_path, scenario, session_class=NotebookSession)


def write_ipynb(path: Path, cells: list[tuple[str, str]]) -> None:
    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [new_code_cell(text) if kind == "code" else new_markdown_cell(text) for kind, text in cells]
    nbformat.write(notebook, path)


def test_three_findings_on_their_cells_as_the_cli_reports_them_and_a_quick_fix_clears_one(tmp_path: Path) -> None:
    async def scenario(session: NotebookSession, root: Path) -> None:
        path = root / "demo.ipynb"
        write_ipynb(path, CELLS)
        published = await session.open_notebook(path, CELLS)
        uris = list(session.uris)
        assert {index: found(published[uri]) for index, uri in enumerate(uris) if published[uri]} == EXPECTED
        assert published[uris[MARKDOWN_CELL]] == [] and published[uris[IMPORTS_CELL]] == []  # the magic is not a syntax error

        # The same findings as `viewlint check demo.ipynb`: cell numbers, rows, columns (code points) and messages.
        cli = json.loads(run_viewlint("--no-cache", "--output-format", "json", "demo.ipynb", cwd=root).stdout)
        lines = {uri: session.texts[uri].splitlines() for uri in uris}
        server = []
        for index, uri in enumerate(uris):
            for d in published[uri]:
                line = lines[uri][d["range"]["start"]["line"]]
                column = len(line.encode("utf-16-le")[: 2 * d["range"]["start"]["character"]].decode("utf-16-le")) + 1
                server.append((index + 1, d["range"]["start"]["line"] + 1, column, d["code"], d["message"]))
        assert server == [(d["cell"], d["location"]["row"], d["location"]["column"], d["code"], d["message"]) for d in cli]

        lost_write_uri = uris[LOST_WRITE_CELL]
        (lost_write,) = published[lost_write_uri]
        actions = await session.code_actions(lost_write_uri, lost_write, only=["quickfix"])
        (fix,) = [a for a in actions if "Disable" not in a["title"]]
        assert fix["isPreferred"] is False and fix["title"].startswith("viewlint (VL201): ")  # an unsafe fix
        fixed = apply_workspace_edit(session.texts[lost_write_uri], fix["edit"], lost_write_uri)
        assert fixed == LOST_WRITE.replace("buf[idx].copy_(v)", "buf[idx] = v")

        after = await session.edit_cell(lost_write_uri, fixed)
        assert after[lost_write_uri] == []
        assert {index: found(after[uri]) for index, uri in enumerate(uris) if after[uri]} \
            == {HIDDEN_SYNC_CELL: EXPECTED[HIDDEN_SYNC_CELL], CACHED_VIEW_CELL: EXPECTED[CACHED_VIEW_CELL]}

    run_notebook_session(tmp_path, scenario)


def test_the_server_advertises_notebook_sync_for_python_cells_of_jupyter_notebooks(tmp_path: Path) -> None:
    async def scenario(session: NotebookSession, root: Path) -> None:
        sync = session.unstructure(session.initialize_result.capabilities)["notebookDocumentSync"]
        assert sync == {"notebookSelector": [{"notebook": "jupyter-notebook", "cells": [{"language": "python"}]}], "save": True}

    run_notebook_session(tmp_path, scenario)


def test_cells_inserted_moved_deleted_or_turned_to_markdown_keep_findings_with_their_cells(tmp_path: Path) -> None:
    async def scenario(session: NotebookSession, root: Path) -> None:
        await session.open_notebook(root / "demo.ipynb", CELLS)
        uris = list(session.uris)

        # A code cell of three rows inserted above the lost write: every row of the module below it moves, no finding does.
        inserted, published = await session.insert_cell(LOST_WRITE_CELL, "code", "x = 1\ny = 2\nz = 3")
        assert published[inserted] == []
        assert {uris.index(uri): found(published[uri]) for uri in session.uris if published[uri] and uri in uris} == EXPECTED

        # A markdown cell is not Python: even one that reads like a lost write is ignored.
        markdown, published = await session.insert_cell(0, "markdown", "buf[idx].copy_(v)\n%%%% not python")
        assert published[markdown] == []
        assert {uris.index(uri): found(published[uri]) for uri in session.uris if published[uri] and uri in uris} == EXPECTED

        # The cache cell moved above the lost write: still its own finding.
        published = await session.move_cell(session.uris.index(uris[CACHED_VIEW_CELL]), session.uris.index(uris[LOST_WRITE_CELL]))
        assert {uris.index(uri): found(published[uri]) for uri in session.uris if published[uri] and uri in uris} == EXPECTED

        # Deleting the hidden sync's cell clears its diagnostics.
        published = await session.delete_cell(session.uris.index(uris[HIDDEN_SYNC_CELL]))
        assert published[uris[HIDDEN_SYNC_CELL]] == []
        assert {uris.index(uri): found(published[uri]) for uri in session.uris if published[uri] and uri in uris} \
            == {LOST_WRITE_CELL: EXPECTED[LOST_WRITE_CELL], CACHED_VIEW_CELL: EXPECTED[CACHED_VIEW_CELL]}

        # The lost write's cell turned into markdown: no longer linted, its finding goes.
        published = await session.change_kind(uris[LOST_WRITE_CELL], types.NotebookCellKind.Markup)
        assert {uris.index(uri): found(published[uri]) for uri in session.uris if published[uri] and uri in uris} \
            == {CACHED_VIEW_CELL: EXPECTED[CACHED_VIEW_CELL]}

    run_notebook_session(tmp_path, scenario)


def test_noqa_and_hover_work_in_a_cell(tmp_path: Path) -> None:
    async def scenario(session: NotebookSession, root: Path) -> None:
        published = await session.open_notebook(root / "demo.ipynb", CELLS)
        uri = session.uris[HIDDEN_SYNC_CELL]
        (sync,) = published[uri]

        start = sync["range"]["start"]
        hover = await session.hover(uri, start["line"], start["character"] + 2)
        assert hover is not None
        assert hover["contents"]["value"] == all_rules()["VL401"].documentation()
        assert hover["range"] == sync["range"]
        assert await session.hover(session.uris[MARKDOWN_CELL], 0, 2) is None

        actions = await session.code_actions(uri, sync, only=["quickfix"])
        (noqa,) = [a for a in actions if a["title"] == "viewlint (VL401): Disable for this line"]
        silenced = apply_workspace_edit(session.texts[uri], noqa["edit"], uri)
        assert silenced == HIDDEN_SYNC.replace(".item()\n", ".item()  # noqa: VL401\n")
        after = await session.edit_cell(uri, silenced)
        assert after[uri] == []
        assert found(after[session.uris[LOST_WRITE_CELL]]) == EXPECTED[LOST_WRITE_CELL]

    run_notebook_session(tmp_path, scenario)


def test_fix_all_in_a_cell_fixes_that_cell_only(tmp_path: Path) -> None:
    flat = "def flat(n: int) -> torch.Tensor:\n    return torch.zeros(n, 2).contiguous().view(-1)"
    two_redundant = [*CELLS, ("code", flat), ("code", flat.replace("flat", "flat2"))]

    async def scenario(session: NotebookSession, root: Path) -> None:
        published = await session.open_notebook(root / "demo.ipynb", two_redundant)
        uri, other = session.uris[-2], session.uris[-1]
        assert [d["code"] for d in published[uri]] == [d["code"] for d in published[other]] == ["VL301"]
        everything = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}
        (fix_all,) = await session.code_actions(uri, everything, only=["source.fixAll"])
        assert fix_all["kind"] == "source.fixAll.viewlint"
        assert apply_workspace_edit(session.texts[uri], fix_all["edit"], uri) == flat.replace(".contiguous()", "")
        # No safe fix in the cache cell (its clone() is unsafe) nor in the lost-write cell (VL201's rewrite
        # changes behaviour): nothing to offer there.
        assert await session.code_actions(session.uris[CACHED_VIEW_CELL], everything, only=["source.fixAll"]) == []
        assert await session.code_actions(session.uris[LOST_WRITE_CELL], everything, only=["source.fixAll"]) == []

    run_notebook_session(tmp_path, scenario)


def test_configuration_comes_from_the_notebooks_path_saving_lints_again_and_closing_clears(tmp_path: Path) -> None:
    async def scenario(session: NotebookSession, root: Path) -> None:
        (root / "pyproject.toml").write_text(OPT_IN_CONFIG + 'per-file-ignores = { "*.ipynb" = ["VL101"] }\n')
        published = await session.open_notebook(root / "demo.ipynb", CELLS)
        assert published[session.uris[CACHED_VIEW_CELL]] == []
        assert found(published[session.uris[LOST_WRITE_CELL]]) == EXPECTED[LOST_WRITE_CELL]

        (root / "pyproject.toml").write_text(OPT_IN_CONFIG + 'per-file-ignores = { "*.ipynb" = ["VL201"] }\n')
        session.client.notebook_document_did_save(types.DidSaveNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=session.notebook_uri)))
        saved = await session.cell_diagnostics(session.uris)
        assert saved[session.uris[LOST_WRITE_CELL]] == []
        assert found(saved[session.uris[CACHED_VIEW_CELL]]) == EXPECTED[CACHED_VIEW_CELL]

        session.client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=session.notebook_uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=uri) for uri in session.uris]))
        closed = await session.cell_diagnostics(session.uris)
        assert all(diagnostics == [] for diagnostics in closed.values())
        # A closed notebook's cells offer nothing.
        assert await session.code_actions(session.uris[HIDDEN_SYNC_CELL], saved[session.uris[HIDDEN_SYNC_CELL]][0]) == []

    run_notebook_session(tmp_path, scenario)


def test_fixes_in_a_cell_with_ipython_escapes_keep_the_escapes(tmp_path: Path) -> None:
    # The shell escape's lone quote would open a string for a Python tokenizer reading the cell as it is.
    cell = '!echo "unterminated\n%time x = 1\n' + LOST_WRITE
    cells = [("code", IMPORTS), ("code", cell)]

    async def scenario(session: NotebookSession, root: Path) -> None:
        published = await session.open_notebook(root / "demo.ipynb", cells)
        uri = session.uris[1]
        (lost_write,) = published[uri]
        assert found([lost_write]) == [("VL201", (3, 16, 3, 33))]
        actions = await session.code_actions(uri, lost_write, only=["quickfix"])
        by_title = {a["title"].split(": ", 1)[1]: a for a in actions}
        (fix,) = [a for title, a in by_title.items() if title != "Disable for this line"]
        assert apply_workspace_edit(cell, fix["edit"], uri) == cell.replace("buf[idx].copy_(v)", "buf[idx] = v")
        silenced = apply_workspace_edit(cell, by_title["Disable for this line"]["edit"], uri)
        assert silenced == cell + "  # noqa: VL201"
        assert (await session.edit_cell(uri, silenced))[uri] == []

    run_notebook_session(tmp_path, scenario)
