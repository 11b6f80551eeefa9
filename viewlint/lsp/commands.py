"""The server's ``workspace/executeCommand`` commands, and where a rule's documentation lives.

Commands (as Ruff's server offers them, adapted), each taking the documents to act on as
arguments (``{"uri": ..., "version": ...}`` objects, as an editor's command palette sends, or
plain URIs); each sends its edits to the editor with ``workspace/applyEdit``:

- ``viewlint.applyAutofix``: every fix ``viewlint --fix`` would apply (unsafe ones too when the
  ``unsafeFixes`` setting is on), to a fixpoint;
- ``viewlint.applySafeFixes``: the safe fixes only, whatever the settings;
- ``viewlint.applyAllFixes``: safe and unsafe fixes (``--fix --unsafe-fixes``);
- ``viewlint.addNoqa``: a ``# noqa: CODE`` comment for every finding (``--add-noqa``);
- ``viewlint.printDebugInformation``: returns the version, settings and open documents as text.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from lsprotocol import types
from pygls.uris import from_fs_path

from viewlint import __version__
from viewlint.diagnostics import rule_url
from viewlint.lsp.documents import LintedDocument, fix_all_edits, noqa_all_edits
from viewlint.lsp.edits import text_edit
from viewlint.lsp.scheduler import outcome

if TYPE_CHECKING:
    from viewlint.server import ViewlintServer

APPLY_AUTOFIX = "viewlint.applyAutofix"
APPLY_SAFE_FIXES = "viewlint.applySafeFixes"
APPLY_ALL_FIXES = "viewlint.applyAllFixes"
ADD_NOQA = "viewlint.addNoqa"
PRINT_DEBUG_INFORMATION = "viewlint.printDebugInformation"

# docs/rules.md next to the package in a source checkout (an editable install): linked until the
# project publishes its documentation (``viewlint.diagnostics.RULES_DOCS_URL``).
_LOCAL_RULES_DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def rule_docs_url(code: str) -> Optional[str]:
    """The link for a code's documentation (``codeDescription.href``): the published docs when
    there are, else docs/rules.md of this checkout (each code has an anchor there), else None."""
    published = rule_url(code)
    if published is not None:
        return published
    local = _local_rules_docs()
    return f"{local}#{code.lower()}" if local is not None else None


@functools.lru_cache(maxsize=1)
def _local_rules_docs() -> Optional[str]:
    """The URI of docs/rules.md of this checkout, or None; looked for once (every diagnostic published asks)."""
    return from_fs_path(str(_LOCAL_RULES_DOCS)) if _LOCAL_RULES_DOCS.is_file() else None


def _uris(arguments: tuple[Any, ...]) -> list[str]:
    uris = []
    for argument in arguments:
        if isinstance(argument, str):
            uris.append(argument)
        elif isinstance(argument, dict) and isinstance(argument.get("uri"), str):
            uris.append(argument["uri"])
        elif hasattr(argument, "uri") and isinstance(argument.uri, str):
            uris.append(argument.uri)
        else:
            raise ValueError(f"expected a document ({{'uri': ...}}), got {argument!r}")
    return uris


async def _edit_documents(ls: "ViewlintServer", arguments: tuple[Any, ...], label: str,
                          make: Any) -> Optional[types.ApplyWorkspaceEditResult]:
    """Compute ``make(linted)`` edits for each document named and send them to the editor as one edit."""
    changes: dict[str, list[types.TextEdit]] = {}
    for uri in _uris(arguments):
        cell = await ls.current_cell(uri)
        linted: Optional[LintedDocument] = cell[1] if cell is not None else await ls.current(uri)
        if linted is None:
            continue
        text = cell[2] if cell is not None else linted.text
        document = linted
        finished, edits = await outcome(ls.scheduler.start(f"command: {uri}", lambda: make(document)))
        if finished and edits:
            encoder = ls.encoder(text)
            changes[uri] = [text_edit(edit, encoder) for edit in edits]
    if not changes:
        return None
    return await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
        edit=types.WorkspaceEdit(changes=changes), label=label))


def register_commands(server: "ViewlintServer") -> None:
    """Register every command on ``server`` (advertised in its ``executeCommandProvider``)."""

    @server.command(APPLY_AUTOFIX)
    async def apply_autofix(ls: Any, *arguments: Any) -> None:
        await _edit_documents(ls, arguments, "viewlint: Fix all", lambda linted: fix_all_edits(linted))

    @server.command(APPLY_SAFE_FIXES)
    async def apply_safe_fixes(ls: Any, *arguments: Any) -> None:
        await _edit_documents(ls, arguments, "viewlint: Apply safe fixes",
                              lambda linted: fix_all_edits(linted, unsafe_fixes=False))

    @server.command(APPLY_ALL_FIXES)
    async def apply_all_fixes(ls: Any, *arguments: Any) -> None:
        await _edit_documents(ls, arguments, "viewlint: Apply all fixes (unsafe included)",
                              lambda linted: fix_all_edits(linted, unsafe_fixes=True))

    @server.command(ADD_NOQA)
    async def add_noqa(ls: Any, *arguments: Any) -> None:
        await _edit_documents(ls, arguments, "viewlint: Add noqa comments", noqa_all_edits)

    @server.command(PRINT_DEBUG_INFORMATION)
    def print_debug_information(ls: Any, *arguments: Any) -> str:
        options = ls.settings.options
        lines = [
            f"viewlint {__version__}",
            f"workspace root: {ls.workspace_root()}",
            f"diagnostics: {'pulled by the client' if ls.pull else 'pushed'}",
            f"select: {options.overrides.select}, extend-select: {options.overrides.extend_select}, "
            f"ignore: {options.overrides.ignore}, extend-ignore: {options.overrides.extend_ignore}",
            f"configuration: {options.config_path or 'nearest pyproject.toml / viewlint.toml'}",
            f"unsafe fixes: {options.unsafe_fixes}, lint delay: {ls.settings.lint_delay * 1000:g} ms",
            f"open documents: {len(ls.documents)}, notebooks: {len(ls.notebooks)}",
        ]
        return "\n".join(lines)
