"""Stopping cleanly: Ctrl-C and SIGTERM, worker processes, and writes that must not be cut short.

- SIGTERM raises ``Terminated`` in the main process, so ``finally`` blocks run as they do
  for Ctrl-C (KeyboardInterrupt); the command line exits 130 for SIGINT and 143 for SIGTERM.
  A stop that Python swallowed (a handler that ran inside a fork hook) is raised again
  between worker results and at the end of the command.
- Worker processes ignore SIGINT (the terminal sends it to the whole process group; the
  main process decides), die on SIGTERM, and leave by themselves when the main process is
  gone, even killed with SIGKILL: they are never orphaned.
- ``signals_deferred`` holds SIGINT and SIGTERM while a fixed file is written.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterable, Iterator, Optional

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "Terminated",
    "WorkerPool",
    "handle_stop_signals",
    "raise_if_stopped",
    "signals_deferred",
    "worker_pool",
]

# 128 + the signal number, as shells report a command a signal stopped.
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM

# How often a worker checks that the process that started it is still there.
PARENT_CHECK_SECONDS = 0.5


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException, like KeyboardInterrupt, so no `except Exception` swallows it."""


# Stop signals received while `handle_stop_signals` is in effect (in the main process).
_received: list[int] = []
_active = False


def _exception_for(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def _stop(signum: int, frame: Any) -> None:
    _received.append(signum)
    raise _exception_for(signum)


def raise_if_stopped() -> None:
    """Raise again for a stop signal already received. Python ignores an exception raised where
    nothing can catch it (a fork hook, a finaliser), and a signal handler can run there."""
    if _received:
        raise _exception_for(_received[0])


@contextlib.contextmanager
def handle_stop_signals() -> Iterator[None]:
    """Within the block, SIGINT raises KeyboardInterrupt and SIGTERM raises ``Terminated`` in the
    main thread, unless the signal is ignored (a background job, `nohup`). Elsewhere: no change."""
    global _active
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, _stop)
    _received.clear()
    _active = True
    try:
        yield
    finally:
        _active = False
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _before_fork() -> None:
    if _active and hasattr(signal, "pthread_sigmask"):  # no stop signal between the fork and the hooks
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def _after_fork_in_parent() -> None:
    if _active and hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def _after_fork_in_child() -> None:
    global _active
    if not _active:
        return
    _active = False
    _received.clear()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal sends Ctrl-C to the whole group: the main process decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the main process's handler
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then deliver them: a write is never cut in half."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        held.append(signum)

    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(held):
            signal.raise_signal(signum)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(1)  # the main process is gone (killed, even with SIGKILL): nobody wants our results


def _start_worker(parent: int, initializer: Optional[Callable[[], None]]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # also for workers that are not forked (spawn)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_watch_parent, args=(parent,), name="viewlint-parent-watch", daemon=True).start()
    if initializer is not None:
        initializer()


class WorkerPool:
    """The pool handed out by ``worker_pool``: ``map`` as ProcessPoolExecutor's, stopping between
    results when a stop signal was received."""

    def __init__(self, executor: ProcessPoolExecutor) -> None:
        self._executor = executor

    def map(self, function: Callable[..., Any], *iterables: Iterable[Any]) -> Iterator[Any]:
        for result in self._executor.map(function, *iterables):
            raise_if_stopped()
            yield result


@contextlib.contextmanager
def worker_pool(jobs: int, initializer: Optional[Callable[[], None]] = None) -> Iterator[WorkerPool]:
    """A process pool whose workers never outlive the run.

    When the block raises (Ctrl-C, SIGTERM, a bug), queued work is cancelled and the workers
    are stopped at once, instead of waiting for them to finish their batches.
    """
    context = multiprocessing.get_context("fork") if hasattr(os, "fork") else multiprocessing.get_context()
    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start_worker,
                                   initargs=(os.getpid(), initializer))
    try:
        yield WorkerPool(executor)
    except BaseException:
        executor.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():  # viewlint runs one pool at a time: these are its workers
            child.terminate()
        for child in multiprocessing.active_children():
            child.join(5)
        raise
    executor.shutdown(wait=True)
