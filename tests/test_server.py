"""`viewlint server`, driven the way an editor drives it: pygls's own LSP client talking JSON-RPC
to a `viewlint server` subprocess over stdin/stdout.

Each session opens documents, waits for the diagnostics the server publishes, asks for code
actions and hovers, applies the returned WorkspaceEdits to its own copy of the text (with its own
UTF-16 arithmetic, as an editor would) and sends the result back with didChange.
The server runs with a `torch` on its path that records being imported and then fails: the
whole session must work without it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Optional

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from conftest import OPT_IN_CONFIG, ROOT, run_viewlint  # noqa: E402
from viewlint.diagnostics import Location  # noqa: E402
from viewlint.lsp.positions import UTF8, UTF16, UTF32, Position, PositionEncoder  # noqa: E402
from viewlint.registry import all_rules  # noqa: E402

# A lost write (VL201, safe fix) after non-ASCII text on its line: "ï" is one UTF-16 unit,
# "😀" two, so the finding's LSP character is one more than its viewlint column - 1.
MODEL = textwrap.dedent('''\
    import torch


    class Cache:
        def __init__(self) -> None:
            self.last = {}

        def push(self, hidden: torch.Tensor) -> None:
            self.last["row"] = hidden.narrow(0, 0, 1)
            self.last["head"] = list(hidden.chunk(4))[:2]


    def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> None:
        label = "naïve 😀"; buf[rows].copy_(value)
''')
LOST_WRITE_LINE = 13  # 0-based
LOST_WRITE = "buf[rows].copy_(value)"

POISONED_TORCH = '''\
import os
open(os.environ["VIEWLINT_TEST_TORCH_MARKER"], "w").close()
raise ImportError("the language server imported torch")
'''


def utf16_offset(text: str, position: dict[str, int]) -> int:
    """The string offset of an LSP position counted in UTF-16 units (the editor's side)."""
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: position["line"]])
    line = lines[position["line"]] if position["line"] < len(lines) else ""
    units = 0
    for index, character in enumerate(line):
        if units >= position["character"]:
            return start + index
        units += len(character.encode("utf-16-le")) // 2
    return start + len(line.rstrip("\r\n"))


def apply_workspace_edit(text: str, edit: dict[str, Any], uri: str) -> str:
    """Apply a WorkspaceEdit's TextEdits for one document, last first, as an editor does."""
    assert list(edit["changes"]) == [uri]
    edits = sorted(edit["changes"][uri], key=lambda e: utf16_offset(text, e["range"]["start"]), reverse=True)
    for text_edit in edits:
        start, end = utf16_offset(text, text_edit["range"]["start"]), utf16_offset(text, text_edit["range"]["end"])
        text = text[:start] + text_edit["newText"] + text[end:]
    return text


class Session:
    """One `viewlint server` process and a pygls client connected to it over stdio."""

    def __init__(self, root: Path, marker: Path, capabilities: Optional[types.ClientCapabilities] = None) -> None:
        self.root = root
        self.marker = marker
        self.capabilities = capabilities or types.ClientCapabilities()
        self.client = LanguageClient("viewlint-tests", "1")
        self.published: dict[str, asyncio.Queue] = {}
        self.versions: dict[str, int] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self._queue(params.uri).put_nowait(params)

    def _queue(self, uri: str) -> asyncio.Queue:
        return self.published.setdefault(uri, asyncio.Queue())

    def unstructure(self, value: Any) -> Any:
        """An lsprotocol object as the JSON the wire carried (camelCase keys)."""
        return json.loads(json.dumps(default_converter().unstructure(value)))

    async def start(self) -> None:
        poison = self.root.parent / "poisoned"
        (poison / "torch").mkdir(parents=True, exist_ok=True)
        (poison / "torch" / "__init__.py").write_text(POISONED_TORCH)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(poison), str(ROOT)]),
               "VIEWLINT_TEST_TORCH_MARKER": str(self.marker)}
        await self.client.start_io(sys.executable, "-m", "viewlint", "server", cwd=str(self.root), env=env)
        self.initialize_result = await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=self.capabilities,
            root_uri=from_fs_path(str(self.root)),
            process_id=os.getpid(),
        )), 60)
        self.client.initialized(types.InitializedParams())

    async def stop(self) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), 60)
        self.client.exit(None)
        await self.client.stop()

    async def diagnostics(self, uri: str) -> list[dict[str, Any]]:
        """The next diagnostics published for ``uri``, as JSON."""
        params = await asyncio.wait_for(self._queue(uri).get(), 60)
        return self.unstructure(params)["diagnostics"]

    async def open(self, path: Path, text: str) -> list[dict[str, Any]]:
        uri = from_fs_path(str(path))
        self.versions[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        return await self.diagnostics(uri)

    async def change(self, uri: str, text: str) -> list[dict[str, Any]]:
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        return await self.diagnostics(uri)

    async def code_actions(self, uri: str, diagnostic: dict[str, Any], only: Optional[list[str]] = None) -> list[dict[str, Any]]:
        start, end = diagnostic["range"]["start"], diagnostic["range"]["end"]
        result = await asyncio.wait_for(self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(start["line"], start["character"]), types.Position(end["line"], end["character"])),
            context=types.CodeActionContext(diagnostics=[], only=only),
        )), 60)
        return self.unstructure(result or [])

    async def hover(self, uri: str, line: int, character: int) -> Optional[dict[str, Any]]:
        result = await asyncio.wait_for(self.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line, character))), 60)
        return None if result is None else self.unstructure(result)


def run_session(tmp_path: Path, scenario, capabilities: Optional[types.ClientCapabilities] = None,
                session_class: type[Session] = Session) -> None:
    """Run ``scenario(session, root)`` against a fresh server; the server must never import torch."""
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text(OPT_IN_CONFIG)  # the scenarios' models cache views (VL101)
    marker = tmp_path / "torch-was-imported"

    async def main() -> None:
        session = session_class(root, marker, capabilities)
        await session.start()
        try:
            await scenario(session, root)
        finally:
            await session.stop()

    asyncio.run(main())
    assert not marker.exists(), "the language server imported torch"


def by_code(diagnostics: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for diagnostic in diagnostics:
        found.setdefault(diagnostic["code"], []).append(diagnostic)
    return found


def test_a_quick_fix_applied_by_the_editor_clears_the_finding(tmp_path: Path) -> None:
    async def scenario(session: Session, root: Path) -> None:
        path = root / "model.py"
        path.write_text(MODEL, encoding="utf-8")
        uri = from_fs_path(str(path))
        diagnostics = await session.open(path, MODEL)
        (lost_write,) = by_code(diagnostics)["VL201"]
        line = MODEL.splitlines()[LOST_WRITE_LINE]
        column = line.index(LOST_WRITE)  # code points before the finding
        assert lost_write["range"] == {
            "start": {"line": LOST_WRITE_LINE, "character": column + 1},  # the emoji is two UTF-16 units
            "end": {"line": LOST_WRITE_LINE, "character": column + 1 + len(LOST_WRITE)},
        }
        assert lost_write["severity"] == types.DiagnosticSeverity.Warning
        assert lost_write["source"] == "viewlint"
        # A link to the rule's anchor in docs/rules.md (this checkout's until the docs are published).
        href = lost_write["codeDescription"]["href"]
        assert href.endswith("/docs/rules.md#vl201")
        assert '<a id="vl201"></a>' in (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
        assert lost_write["message"] == "`buf[rows].copy_(…)` writes into a temporary copy: advanced indexing gathers, so `buf` is unchanged"

        actions = await session.code_actions(uri, lost_write)
        (fix,) = [a for a in actions if a["kind"] == "quickfix" and "noqa" not in json.dumps(a["edit"])]
        # VL201's rewrite changes behaviour (the write starts landing): offered, as an unsafe fix, not preferred.
        assert fix["isPreferred"] is False
        assert fix["title"].startswith("viewlint (VL201): ") and fix["title"].endswith("(unsafe fix)")
        assert fix["diagnostics"][0]["code"] == "VL201"
        fixed = apply_workspace_edit(MODEL, fix["edit"], uri)
        assert fixed.splitlines()[LOST_WRITE_LINE] == '    label = "naïve 😀"; buf[rows] = value'

        after = await session.change(uri, fixed)
        assert "VL201" not in by_code(after)
        assert len(by_code(after)["VL101"]) == 2  # the other findings are still there

    run_session(tmp_path, scenario)


def test_noqa_action_silences_the_finding_and_hover_shows_the_rule(tmp_path: Path) -> None:
    async def scenario(session: Session, root: Path) -> None:
        path = root / "model.py"
        uri = from_fs_path(str(path))
        (lost_write,) = by_code(await session.open(path, MODEL))["VL201"]

        start = lost_write["range"]["start"]
        hover = await session.hover(uri, start["line"], start["character"] + 3)
        assert hover is not None
        assert hover["contents"]["kind"] == "markdown"
        assert hover["contents"]["value"] == all_rules()["VL201"].documentation()
        assert hover["range"] == lost_write["range"]
        assert await session.hover(uri, 0, 0) is None  # `import torch` holds no finding

        actions = await session.code_actions(uri, lost_write, only=["quickfix"])
        (noqa,) = [a for a in actions if a["title"] == "viewlint (VL201): Disable for this line"]
        silenced = apply_workspace_edit(MODEL, noqa["edit"], uri)
        assert silenced.splitlines()[LOST_WRITE_LINE] == '    label = "naïve 😀"; buf[rows].copy_(value)  # noqa: VL201'
        assert silenced.splitlines()[:LOST_WRITE_LINE] == MODEL.splitlines()[:LOST_WRITE_LINE]
        assert "VL201" not in by_code(await session.change(uri, silenced))

    run_session(tmp_path, scenario)


def test_unsafe_fixes_are_not_preferred_and_display_only_fixes_are_not_offered(tmp_path: Path) -> None:
    async def scenario(session: Session, root: Path) -> None:
        path = root / "model.py"
        uri = from_fs_path(str(path))
        narrowed, chunked = by_code(await session.open(path, MODEL))["VL101"]

        (unsafe,) = [a for a in await session.code_actions(uri, narrowed, only=["quickfix"]) if "Disable" not in a["title"]]
        assert unsafe["isPreferred"] is False
        assert unsafe["title"].endswith("(unsafe fix)")
        cloned = apply_workspace_edit(MODEL, unsafe["edit"], uri)
        assert 'self.last["row"] = hidden.narrow(0, 0, 1).clone()' in cloned

        # Display-only: no edit to apply, so only the noqa action is offered.
        titles = [a["title"] for a in await session.code_actions(uri, chunked, only=["quickfix"])]
        assert titles == ["viewlint (VL101): Disable for this line"]

    run_session(tmp_path, scenario)


def test_fix_all_applies_every_safe_fix_and_nothing_else(tmp_path: Path) -> None:
    source = MODEL + textwrap.dedent('''\


        def reset(buf: torch.Tensor, mask: torch.Tensor) -> None:
            buf[mask].zero_()


        def flat(n: int) -> torch.Tensor:
            return torch.zeros(n, 2).contiguous().view(-1)
    ''')

    async def scenario(session: Session, root: Path) -> None:
        path = root / "model.py"
        uri = from_fs_path(str(path))
        diagnostics = await session.open(path, source)
        assert len(by_code(diagnostics)["VL201"]) == 2
        everything = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
        actions = await session.code_actions(uri, {"range": everything}, only=["source.fixAll"])
        (fix_all,) = actions
        assert fix_all["kind"] == "source.fixAll.viewlint"
        fixed = apply_workspace_edit(source, fix_all["edit"], uri)
        assert "return torch.zeros(n, 2).view(-1)" in fixed  # VL301's safe fix
        assert "buf[rows].copy_(value)" in fixed and "buf[mask].zero_()" in fixed  # VL201's fix is unsafe
        assert "clone()" not in fixed  # so is VL101's
        after = by_code(await session.change(uri, fixed))
        assert "VL301" not in after and len(after["VL201"]) == 2 and len(after["VL101"]) == 2
        # Nothing safe left to fix: no fix-all action.
        assert await session.code_actions(uri, {"range": everything}, only=["source.fixAll"]) == []

    run_session(tmp_path, scenario)


HOT_HELPER = textwrap.dedent('''\
    import torch


    def decode_step(logits: torch.Tensor) -> int:
        return logits.argmax().item()


    def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> None:
        buf[rows].copy_(value)
''')


def test_configuration_is_read_from_the_documents_pyproject_as_the_cli_does(tmp_path: Path) -> None:
    async def scenario(session: Session, root: Path) -> None:
        (root / "pyproject.toml").write_text(textwrap.dedent('''\
            [tool.viewlint]
            extend-select = ["VL401"]
            hot-functions = ["decode_*"]
            per-file-ignores = { "legacy/*" = ["VL201"] }
            extend-exclude = ["third_party"]
        '''))
        for folder in ("src", "legacy", "third_party", "broken"):
            (root / folder).mkdir()
            (root / folder / "model.py").write_text(HOT_HELPER)
        (root / "broken" / "pyproject.toml").write_text('[tool.viewlint]\nselct = ["VL2"]\n')

        found = await session.open(root / "src" / "model.py", HOT_HELPER)
        assert sorted((d["code"], d["range"]["start"]["line"] + 1) for d in found) == [("VL201", 9), ("VL401", 5)]
        cli = run_viewlint("--output-format", "json", "src/model.py", cwd=root)
        assert sorted((d["code"], d["location"]["row"], d["location"]["column"], d["message"]) for d in json.loads(cli.stdout)) \
            == sorted((d["code"], d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1, d["message"]) for d in found)

        legacy = await session.open(root / "legacy" / "model.py", HOT_HELPER)
        assert sorted(d["code"] for d in legacy) == ["VL401"]  # per-file-ignores
        assert await session.open(root / "third_party" / "model.py", HOT_HELPER) == []  # excluded

        (broken,) = await session.open(root / "broken" / "model.py", HOT_HELPER)
        assert broken["code"] == "VL002"
        assert broken["severity"] == types.DiagnosticSeverity.Error
        assert "configuration error" in broken["message"] and "selct" in broken["message"]

        # The configuration is read again at the next change: fixing it brings the findings back.
        (root / "broken" / "pyproject.toml").write_text('[tool.viewlint]\nselect = ["VL2"]\n')
        repaired = await session.change(from_fs_path(str(root / "broken" / "model.py")), HOT_HELPER)
        assert sorted(d["code"] for d in repaired) == ["VL201"]
        # Saving lints again too. The nearest configuration is the only one (as in Ruff): this one names its hot functions.
        (root / "broken" / "pyproject.toml").write_text('[tool.viewlint]\nselect = ["VL4"]\nhot-functions = ["decode_*"]\n')
        session.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=from_fs_path(str(root / "broken" / "model.py")))))
        saved = await session.diagnostics(from_fs_path(str(root / "broken" / "model.py")))
        assert sorted(d["code"] for d in saved) == ["VL401"]

    run_session(tmp_path, scenario)


def test_syntax_errors_are_errors_and_closing_a_document_clears_its_diagnostics(tmp_path: Path) -> None:
    async def scenario(session: Session, root: Path) -> None:
        path = root / "broken.py"
        uri = from_fs_path(str(path))
        (syntax_error,) = await session.open(path, "def f(:\n    pass\n")
        assert syntax_error["code"] == "VL000"
        assert syntax_error["severity"] == types.DiagnosticSeverity.Error
        assert syntax_error["codeDescription"]["href"].endswith("/docs/rules.md#vl000")  # reserved codes have anchors too
        start = syntax_error["range"]["start"]
        hover = await session.hover(uri, start["line"], start["character"])
        assert hover is not None
        assert hover["contents"]["value"].startswith("# syntax-error (VL000)\n\n" + syntax_error["message"])
        session.client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        assert await session.diagnostics(uri) == []

    run_session(tmp_path, scenario)


def test_a_client_that_counts_in_utf8_gets_utf8_positions(tmp_path: Path) -> None:
    async def scenario(session: Session, root: Path) -> None:
        (lost_write,) = by_code(await session.open(root / "model.py", MODEL))["VL201"]
        line = MODEL.splitlines()[LOST_WRITE_LINE]
        before = line[: line.index(LOST_WRITE)]
        assert lost_write["range"]["start"] == {"line": LOST_WRITE_LINE, "character": len(before.encode("utf-8"))}

    utf8_only = types.ClientCapabilities(general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf8]))
    run_session(tmp_path, scenario, utf8_only)


# ---------------------------------------------------------------------------- positions, without a server


@pytest.mark.parametrize("encoding, character", [(UTF16, 11), (UTF8, 14), (UTF32, 10)])
def test_positions_count_the_negotiated_units(encoding: str, character: int) -> None:
    text = 'x = "ï😀"; y\n'  # `y` is column 11 in code points
    encoder = PositionEncoder(text, encoding)
    assert encoder.to_lsp(Location(1, 11)) == Position(0, character)
    assert encoder.to_location(Position(0, character)) == Location(1, 11)


def test_positions_follow_every_python_line_ending() -> None:
    encoder = PositionEncoder("a\r\nbb\rccc\n😀d")
    assert encoder.to_lsp(Location(4, 2)) == Position(3, 2)
    assert encoder.to_location(Position(2, 3)) == Location(3, 4)
    # Past the end of a line or of the text: clamped, as LSP asks.
    assert encoder.to_location(Position(1, 99)) == Location(2, 3)
    assert encoder.to_lsp(Location(9, 1)) == Position(3, 3)


def test_without_pygls_the_server_command_says_what_to_install(tmp_path: Path) -> None:
    (tmp_path / "pygls").mkdir()
    (tmp_path / "pygls" / "__init__.py").write_text('raise ImportError("No module named pygls")\n')
    result = run_viewlint("server", env={"PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])})
    assert result.returncode == 2
    assert "the language server needs pygls" in result.stderr
    assert 'pip install "pygls>=2,<3"' in result.stderr


@pytest.mark.parametrize("old, new", [
    ("a = 1\r\nb = 2\r\n", "a = 1\r\nb = 2  # noqa: VL201\r\n"),
    ("x\r\ny\r\n", "x\r\nz\r\ny\r\n"),  # an inserted line must not split a \r\n
    ("same", "same"),
    ("", "new\n"),
])
def test_one_edit_turns_the_old_text_into_the_new(old: str, new: str) -> None:
    from viewlint.fix import LineIndex
    from viewlint.lsp.documents import replacement

    edit = replacement(old, new)
    index = LineIndex(old)
    start, end = index.offset(edit.start), index.offset(edit.end)
    assert old[:start] + edit.content + old[end:] == new
    assert "\r" not in old[start - 1:start] or old[start:start + 1] != "\n"


def test_hover_on_a_binding_shows_what_the_analysis_believes(tmp_path: Path) -> None:
    source = textwrap.dedent('''\
        import torch


        def heads(qkv: torch.Tensor):
            q, k, v = qkv.unbind(0)
            return q
    ''')

    async def scenario(session: Session, root: Path) -> None:
        path = root / "heads.py"
        uri = from_fs_path(str(path))
        await session.open(path, source)
        hover = await session.hover(uri, 4, source.splitlines()[4].index("k"))
        assert hover is not None
        assert hover["contents"]["value"].startswith("`k`: tensor, view of qkv (via .unbind())")
        assert await session.hover(uri, 5, 12) is None  # `return q`: no binding, no finding

    run_session(tmp_path, scenario)
