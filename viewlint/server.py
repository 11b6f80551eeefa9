"""`viewlint server`: a Language Server on stdin/stdout (``pip install "viewlint[server]"``).

It reports the findings `viewlint check` would report for each open Python document, pushed
when it is opened, changed or saved, or pulled (``textDocument/diagnostic``) by a client that
pulls; offers each finding's fix as a quick fix that edits only what changes (safe fixes
preferred, unsafe ones not, display-only ones never), a ``# noqa: CODE`` quick fix, a
``source.fixAll.viewlint`` action and ``workspace/executeCommand`` commands
(``viewlint.lsp.commands``); and shows a rule's documentation when hovering a finding. Settings
come from the ``[tool.viewlint]`` above each document, as for the command line, overridden by
the editor's settings (``viewlint.lsp.client_settings``); a changed configuration file re-lints
every open document. Positions are converted in the encoding the client agreed to (UTF-16 by
default). The analysis is viewlint's static path: torch is never imported.

The message loop never lints: lints run one at a time on worker threads, debounced after
changes and stopped when their text is superseded (``viewlint.lsp.scheduler``), reusing the
statements parsed by earlier lints (``viewlint.lsp.incremental``). Messages are read by
``viewlint.lsp.transport``, which survives malformed headers and answers unreadable requests
with JSON-RPC errors.

Documents are held by URI as ``LintedDocument``s (``viewlint.lsp.documents``). Notebooks opened
in an editor that supports LSP 3.17 notebook documents (``notebookDocument/didOpen``…) are held
as ``LintedNotebook``s (``viewlint.lsp.notebooks``): their Python code cells are linted as one
module, as for an .ipynb file, and each cell gets its own diagnostics, code actions and hover.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import json
import os
import sys
import logging
import threading
from pathlib import Path
from typing import Any, BinaryIO, Callable, Optional, Sequence

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from viewlint import __version__
from viewlint.diagnostics import RESERVED_CODES, Diagnostic, Edit, Location
from viewlint.engine import few_collections
from viewlint.fix import is_applicable
from viewlint.lsp.client_settings import ClientSettings, parse_settings
from viewlint.lsp.commands import register_commands, rule_docs_url
from viewlint.lsp.documents import LintedDocument, fix_all_edits, fix_edits, lint_document, noqa_edit
from viewlint.lsp.edits import lsp_range, text_edit
from viewlint.lsp import incremental
from viewlint.lsp.notebooks import EditorCell, LintedNotebook, lint_notebook
from viewlint.lsp.scheduler import LintScheduler, outcome
from viewlint.lsp.transport import serve_stream
from viewlint.notebook import JoinedCells
from viewlint.lsp.positions import UTF16, Position, PositionEncoder
from viewlint.registry import all_rules

logger = logging.getLogger(__name__)
FIX_ALL_KIND = "source.fixAll.viewlint"
CONFIGURATION_FILES = ("pyproject.toml", "viewlint.toml")
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
    """The language server and what it remembers: the last lint of each open document and notebook,
    the editor's settings, and the lints in progress (``viewlint.lsp.scheduler``)."""

    def __init__(self) -> None:
        super().__init__("viewlint", __version__, notebook_document_sync=NOTEBOOK_SYNC)
        self.documents: dict[str, LintedDocument] = {}
        self.notebooks: dict[str, LintedNotebook] = {}
        self.settings = ClientSettings()
        self.scheduler = LintScheduler(self.settings.lint_delay, after_each=_collector_back_on)
        self.pull = False  # the client pulls diagnostics (textDocument/diagnostic): nothing is pushed
        self.generation = 0  # bumped when settings or configuration files change: every lint is stale
        self._generations: dict[str, int] = {}  # key -> generation of its remembered lint
        self.exiting = False  # `shutdown` received: no more lints, nothing more is published

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log the error; show it in the editor only while the connection is open (a failed send
        reported by sending would fail again, and again)."""
        logger.error("%s", error)
        if not self.exiting and not isinstance(error, (OSError, ValueError)):
            super().report_server_error(error, source)

    def start_io(self, stdin: Optional[BinaryIO] = None, stdout: Optional[BinaryIO] = None) -> None:
        """Serve on stdin/stdout with a reader that survives malformed messages (``viewlint.lsp.transport``)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            with incremental.enabled(incremental.StatementCache()):
                asyncio.run(serve_stream(stdin or sys.stdin.buffer, self.protocol, self._stop_event))
        except BrokenPipeError:
            pass
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.exiting = True
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for a lint
                self.scheduler.cancel_all()
            self.shutdown()

    def encoder(self, text: str) -> PositionEncoder:
        """Positions in the encoding negotiated at `initialize`."""
        encoding = self.workspace.position_encoding
        return PositionEncoder(text, str(getattr(encoding, "value", encoding) or UTF16))

    def workspace_root(self) -> Path:
        root = self.workspace.root_path
        return Path(root) if root else Path(os.getcwd())

    def apply_settings(self, raw: Any) -> None:
        """Take the editor's settings; every open document is linted again with them."""
        self.settings = parse_settings(raw, self.workspace_root(), self.settings)
        self.scheduler.debounce = self.settings.lint_delay
        self.configuration_changed()

    def configuration_changed(self) -> None:
        """Settings or a configuration file changed: lint every open document again (or, when the
        client pulls, ask it to pull again)."""
        self.generation += 1
        if self.pull:
            refresh = getattr(getattr(self.client_capabilities.workspace, "diagnostics", None), "refresh_support", False)
            if refresh:
                self.workspace_diagnostic_refresh(None)
            return
        for uri in list(self.documents):
            self.request_lint(uri, delay=0)
        for uri in list(self.notebooks):
            self.request_notebook_lint(uri, delay=0)

    # Text documents.

    def _document_work(self, uri: str) -> tuple[str, Callable[[], LintedDocument]]:
        """The document's current text and the work that lints it (run on a lint thread)."""
        text = self.workspace.get_text_document(uri).source
        path, root, options = _path(uri), self.workspace_root(), self.settings.options
        return text, lambda: _without_collections(lambda: lint_document(text, path, root, options=options))

    def _fresh(self, uri: str) -> Optional[LintedDocument]:
        linted = self.documents.get(uri)
        if linted is None or self._generations.get(uri) != self.generation:
            return None
        return linted if linted.text == self.workspace.get_text_document(uri).source else None

    def _remember(self, uri: str, linted: LintedDocument, generation: int) -> bool:
        """Keep a lint that is still of the document's current text; whether it was kept."""
        document = self.workspace.text_documents.get(uri)
        if document is None or document.source != linted.text or generation != self.generation:
            return False
        self.documents[uri] = linted
        self._generations[uri] = generation
        return True

    def publish(self, uri: str, linted: LintedDocument) -> None:
        if self.pull or self.exiting:
            return
        encoder = self.encoder(linted.text)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri,
            version=self.workspace.get_text_document(uri).version,
            diagnostics=[to_lsp_diagnostic(d, encoder) for d in linted.diagnostics],
        ))

    def request_lint(self, uri: str, delay: Optional[float] = None) -> None:
        """Lint the document soon (after the debounce), then publish its diagnostics."""
        text, work = self._document_work(uri)
        generation = self.generation

        def done(linted: LintedDocument) -> None:
            if self._remember(uri, linted, generation):
                self.publish(uri, linted)

        if uri not in self.documents:
            self.documents[uri] = LintedDocument(text, "", "", None, ())  # open, not linted yet
            self._generations[uri] = -1
        self.scheduler.schedule(uri, work, done, delay, tag=(text, generation))

    async def current(self, uri: str) -> Optional[LintedDocument]:
        """The lint of the document's current text (linted now when it moved on), or None when not open."""
        while uri in self.documents and not self.exiting:
            fresh = self._fresh(uri)
            if fresh is not None:
                return fresh
            text, work = self._document_work(uri)
            generation = self.generation
            # The lint of this very text may be running already (a change's): wait for it.
            future = self.scheduler.running(uri, (text, generation)) or self.scheduler.start(uri, work, (text, generation))
            finished, linted = await outcome(future)
            if not finished:
                continue  # superseded by a newer change: lint that
            if self._remember(uri, linted, generation):
                self.publish(uri, linted)
        return None

    def close(self, uri: str) -> None:
        self.scheduler.cancel(uri)
        self._generations.pop(uri, None)
        if self.documents.pop(uri, None) is not None and not self.pull:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # Notebooks.

    def _editor_cells(self, notebook_uri: str) -> list[EditorCell]:
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        cells = []
        for cell in notebook.cells if notebook is not None else ():
            document = self.workspace.get_text_document(cell.document)
            is_python = cell.kind == types.NotebookCellKind.Code and document.language_id == "python"
            cells.append(EditorCell(cell.document, document.source, is_python))
        return cells

    def _notebook_work(self, notebook_uri: str) -> Callable[[], LintedNotebook]:
        cells, path = self._editor_cells(notebook_uri), _path(notebook_uri)
        root, options = self.workspace_root(), self.settings.options
        return lambda: _without_collections(lambda: lint_notebook(cells, path, root, options))

    def _remember_notebook(self, notebook_uri: str, linted: LintedNotebook, generation: int) -> bool:
        if generation != self.generation or notebook_uri not in self.notebooks \
                or linted.cells != tuple(self._editor_cells(notebook_uri)):
            return False
        previous = self.notebooks.get(notebook_uri)
        self.notebooks[notebook_uri] = linted
        self._generations[notebook_uri] = generation
        self.publish_notebook(linted, previous)
        return True

    def publish_notebook(self, linted: LintedNotebook, previous: Optional[LintedNotebook]) -> None:
        """Publish each cell's diagnostics (an empty list for a cell without findings, and for a cell
        that left the notebook)."""
        if self.pull or self.exiting:
            return
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

    def request_notebook_lint(self, notebook_uri: str, delay: Optional[float] = None) -> None:
        """Lint the notebook's current cells soon, then publish each cell's diagnostics."""
        generation = self.generation
        if notebook_uri not in self.notebooks:
            cells = tuple(self._editor_cells(notebook_uri))
            self.notebooks[notebook_uri] = _unlinted_notebook(cells)
            self._generations[notebook_uri] = -1
        self.scheduler.schedule(notebook_uri, self._notebook_work(notebook_uri),
                                lambda linted: self._remember_notebook(notebook_uri, linted, generation), delay)

    def close_notebook(self, notebook_uri: str, cell_uris: Sequence[str]) -> None:
        """Forget a notebook and clear the diagnostics of its cells."""
        self.scheduler.cancel(notebook_uri)
        self._generations.pop(notebook_uri, None)
        linted = self.notebooks.pop(notebook_uri, None)
        known = [cell.uri for cell in linted.cells] if linted is not None else []
        if self.pull:
            return
        for uri in dict.fromkeys([*known, *cell_uris]):
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    async def current_cell(self, uri: str) -> Optional[tuple[LintedNotebook, LintedDocument, str]]:
        """The notebook holding a cell, the cell's lint and its text (linted now when the notebook
        moved on), or None when the cell is not linted."""
        while not self.exiting:
            notebook = self.workspace.get_notebook_document(cell_uri=uri)
            if notebook is None or notebook.uri not in self.notebooks:
                return None
            linted = self.notebooks[notebook.uri]
            if linted.cells == tuple(self._editor_cells(notebook.uri)) and \
                    self._generations.get(notebook.uri) == self.generation:
                break
            generation = self.generation
            finished, result = await outcome(self.scheduler.start(notebook.uri, self._notebook_work(notebook.uri)))
            if not finished:
                continue
            self._remember_notebook(notebook.uri, result, generation)
        else:
            return None
        document = linted.cell_document(uri)
        number = linted.number(uri)
        if document is None or number is None:
            return None
        return linted, document, linted.cells[number - 1].text


def _without_collections(work: Callable[[], Any]) -> Any:
    """``work()`` with the cyclic garbage collector held off, as the command line lints (see
    ``viewlint.engine.few_collections``: a third of a lint's time goes to scanning young nodes)."""
    with few_collections():
        return work()


def _collector_back_on() -> None:
    """After a lint, even a cancelled one: the collector is on again."""
    if not gc.isenabled():
        gc.unfreeze()
        gc.enable()


def _unlinted_notebook(cells: tuple[EditorCell, ...]) -> LintedNotebook:
    """A notebook that is open but not linted yet."""
    return LintedNotebook(cells, JoinedCells([]), LintedDocument("", "", "", None, ()), ())


def _is_python(uri: str, language_id: Optional[str]) -> bool:
    return language_id == "python" or uri.endswith(PYTHON_SUFFIXES)


def to_lsp_diagnostic(diagnostic: Diagnostic, encoder: PositionEncoder) -> types.Diagnostic:
    """One finding as an LSP diagnostic: problems with the input are errors, findings warnings."""
    reserved = diagnostic.code in RESERVED_CODES
    url = rule_docs_url(diagnostic.code)
    return types.Diagnostic(
        range=lsp_range(diagnostic.start, diagnostic.end, encoder),
        message=diagnostic.message,
        severity=types.DiagnosticSeverity.Error if reserved else types.DiagnosticSeverity.Warning,
        code=diagnostic.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source="viewlint",
    )


def _workspace_edit(uri: str, edits: Sequence[Edit], encoder: PositionEncoder) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(changes={uri: [text_edit(edit, encoder) for edit in edits]})


def _overlaps(diagnostic: Diagnostic, start: Location, end: Location) -> bool:
    """Whether a finding touches the requested range (both ends included, so a cursor on its edge counts)."""
    return diagnostic.start <= end and start <= diagnostic.end


def _wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    """Whether the client asked for actions of this kind (kinds are dot-separated hierarchies)."""
    return not only or any(kind == prefix or kind.startswith(prefix + ".") for prefix in only)


def code_actions(uri: str, linted: LintedDocument, request: types.Range, only: Optional[Sequence[str]],
                 encoder: PositionEncoder, fix_all: Optional[Callable[[], list[Edit]]] = None) -> list[types.CodeAction]:
    """The quick fixes for the findings in ``request``, then the fix-all action for the document
    (``fix_all`` makes its edits; by default, every applicable fix applied to ``linted``)."""
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
        edits = fix_all() if fix_all is not None else fix_all_edits(linted)
        if edits:
            actions.append(types.CodeAction(
                title="viewlint: Fix all" + (" (unsafe fixes included)" if linted.unsafe_fixes else " safe fixes"),
                kind=FIX_ALL_KIND,
                edit=_workspace_edit(uri, edits, encoder),
            ))
    return actions


def hover(linted: LintedDocument, position: types.Position, encoder: PositionEncoder) -> Optional[types.Hover]:
    """The documentation of the rules whose findings cover ``position``."""
    location = encoder.to_location(Position(position.line, position.character))
    covering = [d for d in linted.diagnostics if _overlaps(d, location, location)]
    parts = []
    believed = _belief_at(linted.text, location, linted.display)
    if believed is not None:
        parts.append(believed + "\n")
    if not covering:
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=parts[0])) if parts else None
    rules = all_rules()
    for diagnostic in dict((d.code, d) for d in covering).values():
        rule = rules.get(diagnostic.code)
        if rule is not None:
            parts.append(rule.documentation())
        else:
            parts.append(f"# {diagnostic.name} ({diagnostic.code})\n\n{diagnostic.message}\n")
    first = covering[0]
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n---\n\n".join(parts)),
        range=lsp_range(first.start, first.end, encoder),
    )


def _belief_at(text: str, location: Location, path: Optional[str] = None) -> Optional[str]:
    """What the analysis believes of the binding under the cursor (`viewlint beliefs`), or None."""
    from viewlint.beliefs import hover_text

    try:
        return hover_text(text, location.row, location.column - 1, path)
    except Exception:  # a hover never fails for what the analysis could not read
        return None


def create_server() -> ViewlintServer:
    """A server with every feature registered (started by ``serve``)."""
    server = ViewlintServer()

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: ViewlintServer, params: types.InitializeParams) -> None:
        # A client that pulls diagnostics gets them only when it asks (no duplicates from pushes).
        ls.pull = getattr(params.capabilities.text_document, "diagnostic", None) is not None
        ls.settings = parse_settings(params.initialization_options, ls.workspace_root())
        ls.scheduler.debounce = ls.settings.lint_delay

    @server.feature(types.INITIALIZED)
    def on_initialized(ls: ViewlintServer, params: types.InitializedParams) -> None:
        watching = getattr(getattr(ls.client_capabilities.workspace, "did_change_watched_files", None),
                           "dynamic_registration", False)
        if watching:  # re-lint open documents when a configuration file changes
            ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="viewlint-configuration-files",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                    types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIGURATION_FILES]),
            )]))

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: ViewlintServer, params: Any) -> None:
        ls.exiting = True
        ls.scheduler.cancel_all()

    @server.feature(types.EXIT)
    def on_exit(ls: ViewlintServer, params: Any) -> None:
        ls.exiting = True
        ls.scheduler.cancel_all()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: ViewlintServer, params: types.DidChangeConfigurationParams) -> None:
        ls.apply_settings(params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: ViewlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.rsplit("/", 1)[-1] in CONFIGURATION_FILES for change in params.changes):
            ls.configuration_changed()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ViewlintServer, params: types.DidOpenTextDocumentParams) -> None:
        if _is_python(params.text_document.uri, params.text_document.language_id):
            ls.request_lint(params.text_document.uri, delay=0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ViewlintServer, params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in ls.documents:
            ls.request_lint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: ViewlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.rsplit("/", 1)[-1] in CONFIGURATION_FILES:  # an editor without file watching saved the config
            ls.configuration_changed()
        elif uri in ls.documents:
            ls.request_lint(uri, delay=0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ViewlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: ViewlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.request_notebook_lint(params.notebook_document.uri, delay=0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: ViewlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        # Cell text, cells inserted, deleted or moved, a cell's kind or language: pygls has applied it.
        if params.notebook_document.uri in ls.notebooks:
            ls.request_notebook_lint(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: ViewlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        if params.notebook_document.uri in ls.notebooks:
            ls.request_notebook_lint(params.notebook_document.uri, delay=0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: ViewlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.close_notebook(params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DiagnosticOptions(identifier="viewlint", inter_file_dependencies=False, workspace_diagnostics=False))
    async def pull_diagnostics(ls: ViewlintServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        cell = await ls.current_cell(uri)
        if cell is not None:
            notebook, document, text = cell
            found, encoder = notebook.diagnostics(uri), ls.encoder(text)
        else:
            linted = await ls.current(uri)
            if linted is None:
                return types.RelatedFullDocumentDiagnosticReport(items=[])
            found, encoder, text = linted.diagnostics, ls.encoder(linted.text), linted.text
        items = [to_lsp_diagnostic(d, encoder) for d in found]
        result_id = _result_id(text, items, ls)
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    async def code_action(ls: ViewlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        only = [str(getattr(kind, "value", kind)) for kind in params.context.only or ()]
        cell = await ls.current_cell(uri)
        if cell is not None:
            notebook, document, text = cell
            encoder = ls.encoder(text)
            work = lambda: code_actions(uri, document, params.range, only, encoder,  # noqa: E731
                                        lambda: _as_list(notebook.fix_all_edit(uri)))
        else:
            linted = await ls.current(uri)
            if linted is None:
                return []
            encoder = ls.encoder(linted.text)
            work = lambda: code_actions(uri, linted, params.range, only, encoder)  # noqa: E731
        # Fix-all lints the fixed text again, to a fixpoint: off the message loop, as every lint.
        finished, actions = await outcome(ls.scheduler.start(f"code actions: {uri}", work))
        return actions if finished else []

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: ViewlintServer, params: types.HoverParams) -> Optional[types.Hover]:
        cell = await ls.current_cell(params.text_document.uri)
        if cell is not None:
            _, document, text = cell
            return hover(document, params.position, ls.encoder(text))
        linted = await ls.current(params.text_document.uri)
        if linted is None:
            return None
        return hover(linted, params.position, ls.encoder(linted.text))

    register_commands(server)
    return server


def _as_list(edit: Optional[Edit]) -> list[Edit]:
    return [] if edit is None else [edit]


def _result_id(text: str, items: list[types.Diagnostic], ls: ViewlintServer) -> str:
    """Changes when the diagnostics a client holds for this document would change."""
    data = json.dumps([ls.generation, text, [ls.protocol._converter.unstructure(item) for item in items]])
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def serve() -> None:
    """Run the language server on stdin/stdout until the client asks it to exit."""
    create_server().start_io()
