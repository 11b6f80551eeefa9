"""`viewlint server`: a Language Server on stdin/stdout (``pip install "viewlint[server]"``).

It publishes the findings `viewlint check` would report for each open Python document when it
is opened, changed or saved; offers each finding's fix as a quick fix (safe fixes preferred,
unsafe ones not, display-only ones never), a ``# noqa: CODE`` quick fix, and a
``source.fixAll.viewlint`` action that applies every safe fix; and shows a rule's documentation
when hovering a finding. Settings come from the ``[tool.viewlint]`` above each document, as for
the command line. Positions are converted in the encoding the client agreed to (UTF-16 by
default). The analysis is viewlint's static path: torch is never imported.

Documents are held by URI as ``LintedDocument``s (``viewlint.lsp.documents``): a notebook
document would add its own lint and position mapping next to the text document's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from viewlint import __version__
from viewlint.diagnostics import RESERVED_CODES, Diagnostic, Edit, Location, rule_url
from viewlint.fix import is_applicable
from viewlint.lsp.documents import LintedDocument, fix_all_edit, fix_edits, lint_document, noqa_edit
from viewlint.lsp.positions import UTF16, Position, PositionEncoder
from viewlint.registry import all_rules

FIX_ALL_KIND = "source.fixAll.viewlint"
PYTHON_SUFFIXES = (".py", ".pyi")


class ViewlintServer(LanguageServer):
    """The language server and what it remembers: the last lint of each open document."""

    def __init__(self) -> None:
        super().__init__("viewlint", __version__)
        self.documents: dict[str, LintedDocument] = {}

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
        path = to_fs_path(uri) if uri.startswith("file:") else None
        linted = lint_document(document.source, Path(path) if path else None, self.workspace_root())
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


def code_actions(uri: str, linted: LintedDocument, request: types.Range,
                 only: Optional[Sequence[str]], encoder: PositionEncoder) -> list[types.CodeAction]:
    """The quick fixes for the findings in ``request``, then the fix-all action for the document."""
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
        fix_all = fix_all_edit(linted)
        if fix_all is not None:
            actions.append(types.CodeAction(
                title="viewlint: Fix all safe fixes",
                kind=FIX_ALL_KIND,
                edit=_workspace_edit(uri, [fix_all], encoder),
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

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    def code_action(ls: ViewlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        linted = ls.current(params.text_document.uri)
        if linted is None:
            return []
        only = [str(getattr(kind, "value", kind)) for kind in params.context.only or ()]
        return code_actions(params.text_document.uri, linted, params.range, only, ls.encoder(linted.text))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: ViewlintServer, params: types.HoverParams) -> Optional[types.Hover]:
        linted = ls.current(params.text_document.uri)
        if linted is None:
            return None
        return hover(linted, params.position, ls.encoder(linted.text))

    return server


def serve() -> None:
    """Run the language server on stdin/stdout until the client asks it to exit."""
    create_server().start_io()
