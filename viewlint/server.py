"""`viewlint server`: a Language Server on stdin/stdout (``pip install "viewlint[server]"``).

It publishes the findings `viewlint check` would report for each open Python document when it
is opened, changed or saved; offers each finding's fix as a quick fix (safe fixes preferred,
unsafe ones not, display-only ones never), a ``# noqa: CODE`` quick fix, and a
``source.fixAll.viewlint`` action that applies every safe fix; and shows a rule's documentation
when hovering a finding. Settings come from the ``[tool.viewlint]`` above each document, as for
the command line. Positions are converted in the encoding the client agreed to (UTF-16 by
default). The analysis is viewlint's static path: torch is never imported.

Documents are held by URI as ``LintedDocument``s (``viewlint.lsp.documents``). Notebooks opened
in an editor that supports LSP 3.17 notebook documents (``notebookDocument/didOpen``…) are held
as ``LintedNotebook``s (``viewlint.lsp.notebooks``): their Python code cells are linted as one
module, as for an .ipynb file, and each cell gets its own diagnostics, code actions and hover.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional, Sequence

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from viewlint import __version__
from viewlint.diagnostics import RESERVED_CODES, Diagnostic, Edit, Location, rule_url
from viewlint.fix import is_applicable
from viewlint.lsp.documents import LintedDocument, fix_all_edit, fix_edits, lint_document, noqa_edit
from viewlint.lsp.notebooks import EditorCell, LintedNotebook, lint_notebook
from viewlint.lsp.positions import UTF16, Position, PositionEncoder
from viewlint.registry import all_rules

FIX_ALL_KIND = "source.fixAll.viewlint"
PYTHON_SUFFIXES = (".py", ".pyi")
# Jupyter notebooks with Python cells; the client sends their cells as text documents.
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")])],
    save=True,
)


def _path(uri: str) -> Optional[Path]:
    """Where a document lives, or None for one that is not a file (an unsaved buffer)."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


class ViewlintServer(LanguageServer):
    """The language server and what it remembers: the last lint of each open document and notebook."""

    def __init__(self) -> None:
        super().__init__("viewlint", __version__, notebook_document_sync=NOTEBOOK_SYNC)
        self.documents: dict[str, LintedDocument] = {}
        self.notebooks: dict[str, LintedNotebook] = {}

    def encoder(self, text: str) -> PositionEncoder:
        """Positions in the encoding negotiated at `initialize`."""
        encoding = self.workspace.position_encoding
        return PositionEncoder(text, str(getattr(encoding, "value", encoding) or UTF16))

    def workspace_root(self) -> Path:
        root = self.workspace.root_path
        return Path(root) if root else Path(os.getcwd())

    def lint(self, uri: str) -> LintedDocument:
        """Lint the document's current text, remember the result and publish its diagnostics."""
        document = self.workspace.get_text_document(uri)
        linted = lint_document(document.source, _path(uri), self.workspace_root())
        self.documents[uri] = linted
        encoder = self.encoder(linted.text)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri,
            version=document.version,
            diagnostics=[to_lsp_diagnostic(d, encoder) for d in linted.diagnostics],
        ))
        return linted

    def current(self, uri: str) -> Optional[LintedDocument]:
        """The lint of the document's current text (linted again when the text moved on), or None when not linted."""
        linted = self.documents.get(uri)
        if linted is None:
            return None
        if linted.text != self.workspace.get_text_document(uri).source:
            linted = self.lint(uri)
        return linted

    def _editor_cells(self, notebook_uri: str) -> list[EditorCell]:
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        cells = []
        for cell in notebook.cells if notebook is not None else ():
            document = self.workspace.get_text_document(cell.document)
            is_python = cell.kind == types.NotebookCellKind.Code and document.language_id == "python"
            cells.append(EditorCell(cell.document, document.source, is_python))
        return cells

    def lint_notebook(self, notebook_uri: str) -> LintedNotebook:
        """Lint the notebook's current cells, remember the result and publish each cell's diagnostics
        (an empty list for a cell without findings, and for a cell that left the notebook)."""
        linted = lint_notebook(self._editor_cells(notebook_uri), _path(notebook_uri), self.workspace_root())
        previous = self.notebooks.get(notebook_uri)
        self.notebooks[notebook_uri] = linted
        for cell in linted.cells:
            encoder = self.encoder(cell.text)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=cell.uri,
                version=self.workspace.get_text_document(cell.uri).version,
                diagnostics=[to_lsp_diagnostic(d, encoder) for d in linted.diagnostics(cell.uri)],
            ))
        current = {cell.uri for cell in linted.cells}
        for cell in previous.cells if previous is not None else ():
            if cell.uri not in current:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))
        return linted

    def close_notebook(self, notebook_uri: str, cell_uris: Sequence[str]) -> None:
        """Forget a notebook and clear the diagnostics of its cells."""
        linted = self.notebooks.pop(notebook_uri, None)
        known = [cell.uri for cell in linted.cells] if linted is not None else []
        for uri in dict.fromkeys([*known, *cell_uris]):
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def current_cell(self, uri: str) -> Optional[tuple[LintedNotebook, LintedDocument, str]]:
        """The notebook holding a cell, the cell's lint and its text (linted again when the notebook
        moved on), or None when the cell is not linted."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is None or notebook.uri not in self.notebooks:
            return None
        linted = self.notebooks[notebook.uri]
        if linted.texts != tuple(cell.text for cell in self._editor_cells(notebook.uri)):
            linted = self.lint_notebook(notebook.uri)
        document = linted.cell_document(uri)
        number = linted.number(uri)
        if document is None or number is None:
            return None
        return linted, document, linted.cells[number - 1].text


def _is_python(uri: str, language_id: Optional[str]) -> bool:
    return language_id == "python" or uri.endswith(PYTHON_SUFFIXES)


def _range(start: Location, end: Location, encoder: PositionEncoder) -> types.Range:
    first, last = encoder.to_lsp(start), encoder.to_lsp(end)
    return types.Range(types.Position(*first), types.Position(*last))


def to_lsp_diagnostic(diagnostic: Diagnostic, encoder: PositionEncoder) -> types.Diagnostic:
    """One finding as an LSP diagnostic: problems with the input are errors, findings warnings."""
    reserved = diagnostic.code in RESERVED_CODES
    url = rule_url(diagnostic.code)  # None until the rules' documentation has a published address
    return types.Diagnostic(
        range=_range(diagnostic.start, diagnostic.end, encoder),
        message=diagnostic.message,
        severity=types.DiagnosticSeverity.Error if reserved else types.DiagnosticSeverity.Warning,
        code=diagnostic.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source="viewlint",
    )


def _text_edit(edit: Edit, encoder: PositionEncoder) -> types.TextEdit:
    return types.TextEdit(range=_range(edit.start, edit.end, encoder), new_text=edit.content)


def _workspace_edit(uri: str, edits: Sequence[Edit], encoder: PositionEncoder) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(changes={uri: [_text_edit(edit, encoder) for edit in edits]})


def _overlaps(diagnostic: Diagnostic, start: Location, end: Location) -> bool:
    """Whether a finding touches the requested range (both ends included, so a cursor on its edge counts)."""
    return diagnostic.start <= end and start <= diagnostic.end


def _wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    """Whether the client asked for actions of this kind (kinds are dot-separated hierarchies)."""
    return not only or any(kind == prefix or kind.startswith(prefix + ".") for prefix in only)


def code_actions(uri: str, linted: LintedDocument, request: types.Range, only: Optional[Sequence[str]],
                 encoder: PositionEncoder, fix_all: Optional[Callable[[], Optional[Edit]]] = None) -> list[types.CodeAction]:
    """The quick fixes for the findings in ``request``, then the fix-all action for the document
    (``fix_all`` makes its edit; by default, every safe fix applied to ``linted``)."""
    start = encoder.to_location(Position(request.start.line, request.start.character))
    end = encoder.to_location(Position(request.end.line, request.end.character))
    actions: list[types.CodeAction] = []
    if _wanted(types.CodeActionKind.QuickFix.value, only):
        for diagnostic in linted.diagnostics:
            if not _overlaps(diagnostic, start, end):
                continue
            lsp_diagnostic = to_lsp_diagnostic(diagnostic, encoder)
            edits = fix_edits(linted, diagnostic)
            if edits:
                assert diagnostic.fix is not None
                safe = is_applicable(diagnostic, unsafe_fixes=False)
                actions.append(types.CodeAction(
                    title=f"viewlint ({diagnostic.code}): {diagnostic.fix.message}" + ("" if safe else " (unsafe fix)"),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diagnostic],
                    is_preferred=safe,
                    edit=_workspace_edit(uri, edits, encoder),
                ))
            noqa = noqa_edit(linted, diagnostic)
            if noqa is not None:
                actions.append(types.CodeAction(
                    title=f"viewlint ({diagnostic.code}): Disable for this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diagnostic],
                    edit=_workspace_edit(uri, [noqa], encoder),
                ))
    if _wanted(FIX_ALL_KIND, only):
        edit = fix_all() if fix_all is not None else fix_all_edit(linted)
        if edit is not None:
            actions.append(types.CodeAction(
                title="viewlint: Fix all safe fixes",
                kind=FIX_ALL_KIND,
                edit=_workspace_edit(uri, [edit], encoder),
            ))
    return actions


def hover(linted: LintedDocument, position: types.Position, encoder: PositionEncoder) -> Optional[types.Hover]:
    """The documentation of the rules whose findings cover ``position``."""
    location = encoder.to_location(Position(position.line, position.character))
    covering = [d for d in linted.diagnostics if _overlaps(d, location, location)]
    if not covering:
        return None
    rules = all_rules()
    parts = []
    for diagnostic in dict((d.code, d) for d in covering).values():
        rule = rules.get(diagnostic.code)
        if rule is not None:
            parts.append(rule.documentation())
        else:
            parts.append(f"# {diagnostic.name} ({diagnostic.code})\n\n{diagnostic.message}\n")
    first = covering[0]
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n---\n\n".join(parts)),
        range=_range(first.start, first.end, encoder),
    )


def create_server() -> ViewlintServer:
    """A server with every feature registered (started by ``serve``)."""
    server = ViewlintServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ViewlintServer, params: types.DidOpenTextDocumentParams) -> None:
        if _is_python(params.text_document.uri, params.text_document.language_id):
            ls.lint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ViewlintServer, params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in ls.documents:
            ls.lint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: ViewlintServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri in ls.documents:
            ls.lint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ViewlintServer, params: types.DidCloseTextDocumentParams) -> None:
        if ls.documents.pop(params.text_document.uri, None) is not None:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: ViewlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.lint_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: ViewlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        # Cell text, cells inserted, deleted or moved, a cell's kind or language: pygls has applied it.
        if params.notebook_document.uri in ls.notebooks:
            ls.lint_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: ViewlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        if params.notebook_document.uri in ls.notebooks:
            ls.lint_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: ViewlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.close_notebook(params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    def code_action(ls: ViewlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        only = [str(getattr(kind, "value", kind)) for kind in params.context.only or ()]
        cell = ls.current_cell(uri)
        if cell is not None:
            notebook, document, text = cell
            return code_actions(uri, document, params.range, only, ls.encoder(text), lambda: notebook.fix_all_edit(uri))
        linted = ls.current(uri)
        if linted is None:
            return []
        return code_actions(uri, linted, params.range, only, ls.encoder(linted.text))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: ViewlintServer, params: types.HoverParams) -> Optional[types.Hover]:
        cell = ls.current_cell(params.text_document.uri)
        if cell is not None:
            _, document, text = cell
            return hover(document, params.position, ls.encoder(text))
        linted = ls.current(params.text_document.uri)
        if linted is None:
            return None
        return hover(linted, params.position, ls.encoder(linted.text))

    return server


def serve() -> None:
    """Run the language server on stdin/stdout until the client asks it to exit."""
    create_server().start_io()
