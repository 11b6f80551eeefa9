"""`viewlint server` features an editor relies on, driven by pygls's LSP client over stdio:
pull diagnostics, quick fixes that edit only what changes, client settings, re-lint when the
configuration changes, and the `workspace/executeCommand` commands. Findings are compared with
what the `viewlint` command line reports for the same file.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from conftest import run_viewlint  # noqa: E402
from test_server import Session, apply_workspace_edit, by_code, run_session  # noqa: E402

# VL301 (safe fix: a factory's result is contiguous) and VL201 on separate lines.
SOURCE = textwrap.dedent('''\
    import torch


    def make() -> torch.Tensor:
        x = torch.zeros(4, 4).contiguous()
        return x


    def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> None:
        buf[rows].copy_(value)
''')
REDUNDANT_LINE = 4  # 0-based


def cli_findings(path: Path, *flags: str) -> set[tuple[int, str]]:
    """(0-based line, code) of what `viewlint check` reports for the file."""
    result = run_viewlint("check", "--output-format", "json", "--no-cache", *flags, str(path), cwd=path.parent)
    return {(d["location"]["row"] - 1, d["code"]) for d in json.loads(result.stdout)}


def lsp_findings(diagnostics: list[dict[str, Any]]) -> set[tuple[int, str]]:
    return {(d["range"]["start"]["line"], d["code"]) for d in diagnostics}


PULLING = types.ClientCapabilities(
    text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
    workspace=types.WorkspaceClientCapabilities(diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)),
)


class PullSession(Session):
    """A client that pulls diagnostics, and counts the server's requests to pull again."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.refreshes = 0

        @self.client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
        def on_refresh(params: Any) -> None:
            self.refreshes += 1

    async def pull(self, uri: str, previous: Any = None) -> Any:
        return self.unstructure(await asyncio.wait_for(self.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri),
                                           previous_result_id=previous)), 60))


def test_pull_diagnostics_match_the_command_line_and_follow_edits(tmp_path: Path) -> None:
    async def scenario(session: PullSession, root: Path) -> None:
        assert session.initialize_result.capabilities.diagnostic_provider is not None
        path = root / "model.py"
        path.write_text(SOURCE)
        uri = from_fs_path(str(path))
        session.versions[uri] = 1
        session.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SOURCE)))
        report = await session.pull(uri)
        assert report["kind"] == "full"
        assert lsp_findings(report["items"]) == cli_findings(path) == {(REDUNDANT_LINE, "VL301"), (9, "VL201")}
        # Nothing changed: the client's copy is still good.
        assert (await session.pull(uri, report["resultId"]))["kind"] == "unchanged"
        edited = SOURCE.replace("buf[rows].copy_(value)", "buf[rows] = value")
        session.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)]))
        after = await session.pull(uri, report["resultId"])
        assert after["kind"] == "full"
        path.write_text(edited)
        assert lsp_findings(after["items"]) == cli_findings(path) == {(REDUNDANT_LINE, "VL301")}
        assert session.published == {}  # a pulling client gets nothing pushed
        # A configuration change: the server asks the client to pull again.
        session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"settings": {"ignore": ["VL301"]}}))
        for _ in range(100):
            if session.refreshes:
                break
            await asyncio.sleep(0.05)
        assert session.refreshes == 1
        assert (await session.pull(uri, after["resultId"]))["items"] == []

    run_session(tmp_path, scenario, PULLING, session_class=PullSession)


def test_a_quick_fix_edits_only_the_text_that_changes(tmp_path: Path) -> None:
    async def scenario(session: Session, root: Path) -> None:
        path = root / "model.py"
        uri = from_fs_path(str(path))
        (redundant,) = by_code(await session.open(path, SOURCE))["VL301"]
        (fix,) = [a for a in await session.code_actions(uri, redundant, only=["quickfix"]) if "Disable" not in a["title"]]
        (edit,) = fix["edit"]["changes"][uri]
        start = SOURCE.splitlines()[REDUNDANT_LINE].index(".contiguous()")
        # `.contiguous()` is deleted; `torch.zeros(4, 4)` and the rest of the line are not rewritten.
        assert edit == {"range": {"start": {"line": REDUNDANT_LINE, "character": start},
                                  "end": {"line": REDUNDANT_LINE, "character": start + len(".contiguous()")}},
                        "newText": ""}
        fixed = apply_workspace_edit(SOURCE, fix["edit"], uri)
        assert "VL301" not in by_code(await session.change(uri, fixed))

    run_session(tmp_path, scenario)


class WatchingSession(Session):
    """A client that watches files for the server and applies the edits it is sent."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.registrations: list[Any] = []
        self.applied: list[Any] = []

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)

        @self.client.feature(types.WORKSPACE_APPLY_EDIT)
        def on_apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            self.applied.append(self.unstructure(params.edit))
            return types.ApplyWorkspaceEditResult(applied=True)

    async def command(self, name: str, *arguments: Any) -> Any:
        return await asyncio.wait_for(self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments))), 60)


WATCHING = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
    did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))


def test_open_documents_are_linted_again_when_pyproject_changes(tmp_path: Path) -> None:
    async def scenario(session: WatchingSession, root: Path) -> None:
        path = root / "model.py"
        uri = from_fs_path(str(path))
        assert set(by_code(await session.open(path, SOURCE))) == {"VL301", "VL201"}
        for _ in range(100):
            if session.registrations:
                break
            await asyncio.sleep(0.05)
        (registration,) = session.registrations
        assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        patterns = {w["globPattern"] for w in session.unstructure(registration.register_options)["watchers"]}
        assert patterns == {"**/pyproject.toml", "**/viewlint.toml"}

        pyproject = root / "pyproject.toml"
        pyproject.write_text('[tool.viewlint]\nignore = ["VL201"]\n')
        session.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=from_fs_path(str(pyproject)), type=types.FileChangeType.Created)]))
        assert set(by_code(await session.diagnostics(uri))) == {"VL301"}
        pyproject.write_text('[tool.viewlint]\nignore = ["VL301"]\n')
        session.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=from_fs_path(str(pyproject)), type=types.FileChangeType.Changed)]))
        assert set(by_code(await session.diagnostics(uri))) == {"VL201"}

    run_session(tmp_path, scenario, WATCHING, session_class=WatchingSession)


def test_settings_from_the_client_select_ignore_and_configuration(tmp_path: Path) -> None:
    class Configured(Session):
        async def start(self) -> None:
            # initializationOptions as Ruff's VS Code extension sends them.
            original = self.client.initialize_async

            async def initialize(params: types.InitializeParams) -> Any:
                params.initialization_options = {"settings": {"ignore": ["VL201"]}}
                return await original(params)

            self.client.initialize_async = initialize  # type: ignore[method-assign]
            await super().start()

    async def scenario(session: Session, root: Path) -> None:
        path = root / "model.py"
        uri = from_fs_path(str(path))
        assert set(by_code(await session.open(path, SOURCE))) == {"VL301"}
        session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"viewlint": {"select": ["VL201"], "ignore": []}}))
        assert set(by_code(await session.diagnostics(uri))) == {"VL201"}
        # A configuration file for every document, like `--config`.
        (root / "strict.toml").write_text('ignore = ["VL2"]\n')
        session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"settings": {"select": None, "ignore": None, "configuration": "strict.toml"}}))
        assert set(by_code(await session.diagnostics(uri))) == {"VL301"}
        # An unknown code is reported on the document, as a broken configuration is.
        session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"settings": {"select": ["VL999"]}}))
        (error,) = await session.diagnostics(uri)
        assert error["code"] == "VL002" and "VL999" in error["message"]

    run_session(tmp_path, scenario, session_class=Configured)


def test_commands_fix_all_and_add_noqa_as_the_command_line_does(tmp_path: Path) -> None:
    async def scenario(session: WatchingSession, root: Path) -> None:
        capabilities = session.initialize_result.capabilities.execute_command_provider
        assert {"viewlint.applyAutofix", "viewlint.applySafeFixes", "viewlint.applyAllFixes", "viewlint.addNoqa",
                "viewlint.printDebugInformation"} <= set(capabilities.commands)
        path = root / "model.py"
        uri = from_fs_path(str(path))
        await session.open(path, SOURCE)

        await session.command("viewlint.applyAutofix", {"uri": uri, "version": 1})
        (edit,) = session.applied
        path.write_text(SOURCE)
        run_viewlint("check", "--fix", "--no-cache", str(path), cwd=root)
        assert apply_workspace_edit(SOURCE, edit, uri) == path.read_text()
        assert all(len(e["newText"]) < 40 for e in edit["changes"][uri])  # minimal edits, not the whole file

        await session.command("viewlint.applyAllFixes", {"uri": uri})
        path.write_text(SOURCE)
        run_viewlint("check", "--fix", "--unsafe-fixes", "--no-cache", str(path), cwd=root)
        assert apply_workspace_edit(SOURCE, session.applied[1], uri) == path.read_text()

        await session.command("viewlint.addNoqa", uri)
        path.write_text(SOURCE)
        run_viewlint("check", "--add-noqa", "--no-cache", str(path), cwd=root)
        assert apply_workspace_edit(SOURCE, session.applied[2], uri) == path.read_text()

        info = await session.command("viewlint.printDebugInformation")
        assert info.startswith("viewlint ") and "open documents: 1" in info

    run_session(tmp_path, scenario, WATCHING, session_class=WatchingSession)
