"""How :meth:`Manager.run` ends the process: signal handlers and the shutdown watchdog.

The first SIGTERM/SIGINT asks for a graceful stop; a second exits at once with status 1
(:class:`SignalHandlers`). A sync (``def``) reconcile runs in a thread nothing can interrupt,
so a process whose graceful period ended with one still running, or whose shutdown as a whole
is not done :data:`SHUTDOWN_MARGIN` s after it (:class:`ShutdownWatchdog`), logs the
controllers that hold it and exits with status 1 (:func:`exit_stuck`). ``Manager.start`` (the
async form) never exits the process: only ``run`` installs these.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import NoReturn

__all__ = [
    "SHUTDOWN_MARGIN",
    "ShutdownWatchdog",
    "SignalHandlers",
    "exit_stuck",
    "stuck_controllers",
]

log = logging.getLogger("kubectrl.runtime.manager")

#: How long past the graceful shutdown period :meth:`Manager.run` waits for the rest of the
#: shutdown (caches, servers, the lease release) before it exits the process regardless.
SHUTDOWN_MARGIN = 15.0

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class SignalHandlers:
    """SIGTERM/SIGINT on a loop: the first calls ``on_first``, a second exits with status 1.

    Example::

        handlers = SignalHandlers(manager.stop)
        handlers.install(loop)
        ...
        handlers.remove(loop)
    """

    def __init__(self, on_first: Callable[[], None]) -> None:
        self._on_first = on_first
        self.received = 0

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in _SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._on_signal, sig)

    def remove(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in _SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)

    def _on_signal(self, sig: signal.Signals) -> None:
        self.received += 1
        if self.received > 1:
            log.error("second signal received; exiting at once", extra={"signal": sig.name})
            os._exit(1)
        log.info("signal received; shutting down gracefully", extra={"signal": sig.name})
        self._on_first()


def stuck_controllers(runnables: Iterable[tuple[str, object]]) -> list[str]:
    """Names of the ``(name, runnable)`` pairs with a reconcile still running
    (``Controller.in_flight``)."""
    stuck = set()
    for name, runnable in runnables:
        try:
            # Read from the shutdown watchdog's thread too: a set resized meanwhile is
            # retried on the next look, never fatal.
            running = getattr(runnable, "in_flight", ())
        except RuntimeError:
            running = ("?",)
        if running:
            stuck.add(name)
    return sorted(stuck)


def exit_stuck(stuck: list[str], when: str, graceful_shutdown_timeout: float) -> NoReturn:
    """Log one error naming the stuck controllers, flush the logs, ``os._exit(1)``."""
    log.error(
        "%s with sync reconciles still running in controller(s) %s; exiting with status 1",
        when,
        ", ".join(stuck) or "(unknown)",
        extra={"controllers": stuck, "graceful_shutdown_timeout": graceful_shutdown_timeout},
    )
    for handler in logging.getLogger().handlers + log.handlers:
        with contextlib.suppress(Exception):
            handler.flush()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(1)


class ShutdownWatchdog:
    """A daemon thread that ends the process if the shutdown is not done in time.

    :meth:`arm` starts it: unless :meth:`done` is called within ``seconds`` (real time: the
    event loop may be the thing that is stuck), it calls :func:`exit_stuck` with what
    ``stuck()`` names then.
    """

    def __init__(self, stuck: Callable[[], list[str]], graceful_shutdown_timeout: float) -> None:
        self._stuck = stuck
        self._graceful_shutdown_timeout = graceful_shutdown_timeout
        self._done = threading.Event()

    def arm(self, seconds: float) -> None:
        def watch() -> None:
            if not self._done.wait(seconds):
                exit_stuck(
                    self._stuck(),
                    f"the shutdown did not finish within {seconds:g} s",
                    self._graceful_shutdown_timeout,
                )

        threading.Thread(target=watch, name="kubectrl-shutdown-watchdog", daemon=True).start()

    def done(self) -> None:
        """The shutdown finished: the watchdog exits nothing."""
        self._done.set()
