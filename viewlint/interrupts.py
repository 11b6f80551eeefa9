"""Stopping cleanly: Ctrl-C and SIGTERM, worker processes, and writes that must not be cut short.

- In the main process SIGTERM raises ``Terminated`` as Ctrl-C raises KeyboardInterrupt, so
  ``finally`` blocks run; the command line exits 130 for SIGINT and 143 for SIGTERM.
- While a worker pool runs, the handler only records the signal and the thread waiting for
  results raises it (within ``POLL_SECONDS``): the pool forks its workers from that thread,
  and an exception raised by a handler that happens to run inside a fork hook would be lost.
- Worker processes ignore SIGINT (the terminal sends it to the whole process group; the
  main process decides), die on SIGTERM, and leave by themselves when the main process is
  gone, even killed with SIGKILL: they are never orphaned.
- ``signals_deferred`` holds SIGINT and SIGTERM while a fixed file is written.
- ``in_worker``: the command line lints even one file in a worker process, so that its main
  process only waits and honours a stop signal within ``POLL_SECONDS`` in every phase. In a
  single process a signal waits for the interpreter: libcst's parser holds it for seconds on
  deeply nested code (its cost is quadratic in the nesting), and an interpreter that exits while
  the deep-stack thread (``engine._on_deep_stack``) is inside that parser aborts (SIGABRT).
"""

from __future__ import annotations

import concurrent.futures
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
    "in_worker",
    "raise_if_stopped",
    "signals_deferred",
    "worker_pool",
]

# 128 + the signal number, as shells report a command a signal stopped.
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM

# How often a worker checks that the process that started it is still there, and how long
# the main process waits for a result before it looks for a stop signal.
PARENT_CHECK_SECONDS = 0.5
POLL_SECONDS = 0.2


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException, like KeyboardInterrupt, so no `except Exception` swallows it."""


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_received: list[int] = []  # stop signals received while `handle_stop_signals` is in effect
_main_pid: Optional[int] = None
_pool_running = False
_handling = 0  # how many `handle_stop_signals` blocks are open in the main thread


def _exception_for(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def _stop(signum: int, frame: Any) -> None:
    if os.getpid() != _main_pid:  # a worker just forked, before its own handlers are set
        os._exit(128 + signum)
    _received.append(signum)
    if not _pool_running:
        raise _exception_for(signum)


def raise_if_stopped() -> None:
    """Raise KeyboardInterrupt or ``Terminated`` for a stop signal already received."""
    if _received:
        raise _exception_for(_received[0])


@contextlib.contextmanager
def handle_stop_signals() -> Iterator[None]:
    """Within the block, SIGINT raises KeyboardInterrupt and SIGTERM raises ``Terminated`` in the
    main thread, unless the signal is ignored (a background job, `nohup`). Elsewhere: no change."""
    global _main_pid, _handling
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    _main_pid = os.getpid()
    previous = _install(_stop)
    _handling += 1
    try:
        yield
    finally:
        _handling -= 1
        _restore(previous)
        _received.clear()  # handled: the block raised for it, or its caller did


def in_worker(function: Callable[..., Any], *arguments: Any) -> Any:
    """``function(*arguments)`` in a worker process while ``handle_stop_signals`` is in effect in this (main)
    process, else here. The function and its arguments and result must pickle (a module-level function)."""
    if not _handling or os.getpid() != _main_pid or threading.current_thread() is not threading.main_thread():
        return function(*arguments)
    with worker_pool(1) as pool:
        return next(iter(pool.map(function, *([argument] for argument in arguments))))


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then deliver them: a write is never cut in half."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        held.append(signum)

    previous = _install(hold)
    try:
        yield
    finally:
        _restore(previous)
        for signum in dict.fromkeys(held):
            signal.raise_signal(signum)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(1)  # the main process is gone (killed, even with SIGKILL): nobody wants our results


def _start_worker(parent: int, initializer: Optional[Callable[[], None]]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the main process's handler, inherited through fork
    threading.Thread(target=_watch_parent, args=(parent,), name="viewlint-parent-watch", daemon=True).start()
    if initializer is not None:
        initializer()


class WorkerPool:
    """The pool ``worker_pool`` hands out: ``map`` as ProcessPoolExecutor's, raising a stop signal
    while it waits."""

    def __init__(self, executor: ProcessPoolExecutor) -> None:
        self._executor = executor

    def map(self, function: Callable[..., Any], *iterables: Iterable[Any]) -> Iterator[Any]:
        futures = [self._executor.submit(function, *arguments) for arguments in zip(*iterables)]
        for future in futures:
            while True:
                raise_if_stopped()
                try:
                    result = future.result(timeout=POLL_SECONDS)
                except concurrent.futures.TimeoutError:
                    continue
                break
            yield result


@contextlib.contextmanager
def worker_pool(jobs: int, initializer: Optional[Callable[[], None]] = None) -> Iterator[WorkerPool]:
    """A process pool whose workers never outlive the run.

    When the block raises (Ctrl-C, SIGTERM, a bug), queued work is cancelled and the workers
    are stopped at once, instead of waiting for them to finish their batches.
    """
    global _pool_running
    context = multiprocessing.get_context("fork") if hasattr(os, "fork") else multiprocessing.get_context()
    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start_worker,
                                   initargs=(os.getpid(), initializer))
    _pool_running = True
    try:
        yield WorkerPool(executor)
    except BaseException:
        _pool_running = False
        # The executor's manager thread sees the dead workers and closes its wake-up pipe; at exit
        # concurrent.futures writes to that pipe, unlocked, from the main thread. Let the thread finish
        # first, or the write can meet a pipe closed under it (EBADF, printed at exit). It is taken before
        # `shutdown`, which forgets it.
        manager = getattr(executor, "_executor_manager_thread", None)
        executor.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():  # viewlint runs one pool at a time: these are its workers
            child.terminate()
        for child in multiprocessing.active_children():
            child.join(5)
        if manager is not None:
            manager.join(5)
        raise
    finally:
        _pool_running = False
    executor.shutdown(wait=True)
    raise_if_stopped()  # a stop that came while the last results were collected


def _install(handler: Any) -> dict[int, Any]:
    """`handler` for each stop signal not ignored; the handlers it replaced."""
    return {signum: signal.signal(signum, handler) for signum in _STOP_SIGNALS
            if signal.getsignal(signum) is not signal.SIG_IGN}


def _restore(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)
