"""Linting off the language server's message loop: debounced, one lint at a time, cancelled when superseded.

The message loop never lints. Each document (by key: its URI) has at most one lint pending or
running. A change schedules a lint after a short delay (the debounce: a burst of keystrokes
lints once); a request that needs the current findings (pull diagnostics, code actions, hover)
starts one at once. A lint started for text that has changed since is cancelled: the exception
``LintCancelled`` is raised inside the thread doing it, which stops the pure-Python analysis
at its next step, whatever it was doing (even a file that takes minutes to lint does not hold
the server: `shutdown` is answered at once, and closing a document stops its lint).

Lints run one at a time (the analysis keeps a little global state) on a thread of their own,
so a cancelled lint's thread unwinds on its own while the next lint waits for it to finish.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import threading
from typing import Any, Callable, Optional

logger = logging.getLogger(__name__)


SUPERSEDED = object()  # what the future of a lint that was cancelled holds (the future itself is not cancelled)


class LintCancelled(BaseException):
    """Raised inside a lint's thread when its result is no longer wanted (a BaseException, so the
    engine's ``except Exception`` guards do not swallow it)."""


def _raise_in(thread: threading.Thread) -> None:
    ident = thread.ident
    if ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(LintCancelled))


class _Job:
    def __init__(self, key: str, work: Callable[[], Any], future: "asyncio.Future[Any]", tag: Any) -> None:
        self.key, self.work, self.future, self.tag = key, work, future, tag
        self.thread: Optional[threading.Thread] = None
        self.cancelled = False
        self.running = False  # between the start and the end of `work`: where cancelling raises


class LintScheduler:
    """Runs lints for keys on worker threads, for one asyncio loop (the server's)."""

    def __init__(self, debounce: float = 0.05, after_each: Optional[Callable[[], None]] = None) -> None:
        self.debounce = debounce
        self.after_each = after_each  # run on the lint's thread after each lint, where no cancel can land
        self._jobs: dict[str, _Job] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._state = threading.Lock()  # guards `running`/`cancelled` against the raise
        self._one_at_a_time = threading.Lock()

    def schedule(self, key: str, work: Callable[[], Any], on_result: Callable[[Any], None],
                 delay: Optional[float] = None, tag: Any = None) -> None:
        """Lint later (after ``delay``, the debounce by default): ``work`` is called on a worker
        thread then, and ``on_result`` on the loop with what it returned (not when superseded)."""
        loop = asyncio.get_running_loop()
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

        def start() -> None:
            self._timers.pop(key, None)
            future = self.start(key, work, tag)
            future.add_done_callback(lambda done: on_result(done.result())
                                     if not done.cancelled() and done.exception() is None
                                     and done.result() is not SUPERSEDED else None)

        self._timers[key] = loop.call_later(self.debounce if delay is None else delay, start)

    def start(self, key: str, work: Callable[[], Any], tag: Any = None) -> "asyncio.Future[Any]":
        """Lint now, cancelling this key's pending or running lint; a future of what ``work`` returns
        (``SUPERSEDED`` when cancelled). ``tag`` names what is linted (see ``running``)."""
        loop = asyncio.get_running_loop()
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        self.cancel(key)
        future: asyncio.Future[Any] = loop.create_future()
        job = _Job(key, work, future, tag)
        self._jobs[key] = job
        job.thread = threading.Thread(target=self._run, args=(job, loop), name=f"viewlint-lint-{key}", daemon=True)
        job.thread.start()
        return future

    def running(self, key: str, tag: Any) -> Optional["asyncio.Future[Any]"]:
        """The future of this key's lint in progress when it lints ``tag`` (the same text), else None."""
        job = self._jobs.get(key)
        if job is None or job.future.done() or job.tag is None or job.tag != tag:
            return None
        return job.future

    def cancel(self, key: str) -> None:
        """Forget this key's pending lint and stop its running one."""
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        job = self._jobs.pop(key, None)
        if job is None:
            return
        with self._state:
            job.cancelled = True
            if job.running and job.thread is not None:
                _raise_in(job.thread)
                # A file too deep for the lint thread's stack is linted on a deep-stack thread of its
                # own (`viewlint.engine`); lints run one at a time, so any such thread is this lint's.
                for thread in threading.enumerate():
                    if thread.name == "viewlint-deep":
                        _raise_in(thread)
        if not job.future.done():
            job.future.set_result(SUPERSEDED)

    def cancel_all(self) -> None:
        for key in list({*self._jobs, *self._timers}):
            self.cancel(key)

    def _run(self, job: _Job, loop: asyncio.AbstractEventLoop) -> None:
        result: Any = None
        error: Optional[BaseException] = None
        try:
            with self._one_at_a_time:
                with self._state:
                    if job.cancelled:
                        return
                    job.running = True
                try:
                    result = job.work()
                finally:
                    with self._state:
                        job.running = False
                    if self.after_each is not None:
                        self.after_each()
        except LintCancelled:
            return
        except Exception as failure:  # noqa: BLE001 - handed to whoever awaits the lint
            logger.exception("lint of %s failed", job.key)
            error = failure
        try:
            loop.call_soon_threadsafe(self._deliver, job, result, error)
        except RuntimeError:  # the loop has closed: nobody is waiting
            pass

    def _deliver(self, job: _Job, result: Any, error: Optional[BaseException]) -> None:
        if self._jobs.get(job.key) is job:
            del self._jobs[job.key]
        if job.future.done() or job.cancelled:
            return
        if error is not None:
            job.future.set_exception(error)
        else:
            job.future.set_result(result)


async def outcome(future: "asyncio.Future[Any]") -> tuple[bool, Any]:
    """(True, the lint's result), or (False, None) when the lint was superseded; the request's own
    cancellation (``$/cancelRequest``, shutdown) propagates."""
    result = await asyncio.shield(future)
    return (False, None) if result is SUPERSEDED else (True, result)
