"""The language server's lint scheduling (`viewlint.lsp.scheduler`): debounced, one at a time,
stopped when superseded, even in the middle of a lint that would never end."""

from __future__ import annotations

import asyncio
import threading
import time

from viewlint.lsp.scheduler import SUPERSEDED, LintScheduler


def endless() -> None:
    while True:  # pure Python, as the analysis is: stopped between two steps
        sum(range(100))


def lint_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("viewlint-lint")]


def test_a_superseded_lint_is_stopped_and_the_new_one_answers() -> None:
    async def main() -> None:
        scheduler = LintScheduler()
        first = scheduler.start("doc", endless, tag="v1")
        await asyncio.sleep(0.2)
        assert scheduler.running("doc", "v1") is first and scheduler.running("doc", "v2") is None
        second = scheduler.start("doc", lambda: "findings of v2", tag="v2")
        assert await asyncio.wait_for(first, 1) is SUPERSEDED
        assert await asyncio.wait_for(second, 5) == "findings of v2"
        deadline = time.monotonic() + 2
        while lint_threads() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert lint_threads() == []  # the endless lint's thread has ended

    asyncio.run(main())


def test_changes_in_a_burst_lint_once_with_the_last_text() -> None:
    async def main() -> None:
        scheduler = LintScheduler(debounce=0.1)
        calls: list[int] = []
        results: list[int] = []
        for version in range(1, 6):
            scheduler.schedule("doc", lambda version=version: calls.append(version) or version, results.append)
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)
        assert calls == [5] and results == [5]

    asyncio.run(main())


def test_cancel_all_stops_running_and_pending_lints() -> None:
    async def main() -> None:
        scheduler = LintScheduler(debounce=0.3)
        running = scheduler.start("a", endless)
        results: list[object] = []
        scheduler.schedule("b", lambda: "b", results.append)
        await asyncio.sleep(0.1)
        scheduler.cancel_all()
        assert await asyncio.wait_for(running, 1) is SUPERSEDED
        await asyncio.sleep(0.5)
        assert results == []  # the pending lint never ran
        deadline = time.monotonic() + 2
        while lint_threads() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert lint_threads() == []

    asyncio.run(main())
