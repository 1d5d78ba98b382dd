"""Server warnings: the ``Warning`` response header (client-go's ``rest.WarningHandler``).

The apiserver warns with ``Warning`` headers in the RFC 7234 format ``299 - "text"`` (code 299
"miscellaneous persistent warning", agent ``-``, the quoted text with ``\\"`` and ``\\\\``
escapes, an optional quoted date), one header per message: a deprecated API version
(``v1 ComponentStatus is deprecated in v1.19+``), an unknown field dropped by a write with
``fieldValidation=Warn`` (the server's default: ``unknown field "spec.colour"``), an admission
webhook's warnings. Every client response goes through the config's
:attr:`~kubectrl.client.ClientConfig.warning_handler` (only code 299 is a warning, as in
client-go); without one, :data:`DEFAULT_WARNING_HANDLER` logs each distinct message once per
process on the ``kubectrl.client.warnings`` logger.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol, runtime_checkable

from kubectrl._internal.warnings import parse_warning_header

__all__ = [
    "DEFAULT_WARNING_HANDLER",
    "DeduplicateWarnings",
    "NoWarnings",
    "WarningHandler",
    "WarningLogger",
    "WarningRecorder",
]

log = logging.getLogger("kubectrl.client.warnings")


@runtime_checkable
class WarningHandler(Protocol):
    """Receives the server's warnings (client-go's ``rest.WarningHandler``).

    ``handle_warning`` is called for each warning of each response, on the client's event loop:
    keep it quick and do not raise.

    Example::

        class Fail:
            def handle_warning(self, code: int, agent: str, text: str) -> None:
                raise SystemExit(f"server warning: {text}")
    """

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        """Handle one warning: its ``code`` (299), ``agent`` (``-``) and ``text``."""


class NoWarnings:
    """A :class:`WarningHandler` that drops every warning (client-go's ``rest.NoWarnings``).

    Example: ``config.with_options(warning_handler=NoWarnings())``.
    """

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        """Ignore the warning."""

    def __repr__(self) -> str:
        return "NoWarnings()"


class WarningLogger:
    """A :class:`WarningHandler` logging each warning at ``WARNING`` level on ``logger``
    (``kubectrl.client.warnings`` by default; client-go's ``rest.WarningLogger``), with the
    text in the record's ``warning`` attribute.

    Example: ``config.with_options(warning_handler=WarningLogger())`` logs every warning,
    repeats included.
    """

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.logger = logger or log

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        """Log ``text``."""
        self.logger.warning("server warning: %s", text, extra={"warning": text})

    def __repr__(self) -> str:
        return f"WarningLogger({self.logger.name!r})"


class DeduplicateWarnings:
    """A :class:`WarningHandler` passing each distinct warning text to ``handler`` once
    (client-go's ``WarningWriterOptions.Deduplicate``). Thread-safe.

    Example: ``DeduplicateWarnings(WarningLogger())`` is the default handler's behaviour.
    """

    def __init__(self, handler: WarningHandler) -> None:
        self.handler = handler
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        """Pass ``text`` on unless it was passed on before."""
        with self._lock:
            if text in self._seen:
                return
            self._seen.add(text)
        self.handler.handle_warning(code, agent, text)

    def __repr__(self) -> str:
        return f"DeduplicateWarnings({self.handler!r})"


class WarningRecorder:
    """A :class:`WarningHandler` keeping every warning text in :attr:`texts`, in order (tests,
    or a command line that prints them at the end).

    Example::

        recorder = WarningRecorder()
        async with AsyncClient(config.with_options(warning_handler=recorder)) as client:
            await client.create(obj)
        assert recorder.texts == []
    """

    def __init__(self) -> None:
        self.texts: list[str] = []

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        """Append ``text``."""
        self.texts.append(text)

    def __repr__(self) -> str:
        return f"WarningRecorder({len(self.texts)} warnings)"


#: The handler used when the config names none: each distinct text logged once per process.
DEFAULT_WARNING_HANDLER: WarningHandler = DeduplicateWarnings(WarningLogger())


def handle_warnings(handler: WarningHandler | None, values: list[str]) -> None:
    """Give each 299 warning of the header ``values`` to ``handler`` (or the default one);
    a malformed header is logged as such, not raised (the response itself is good)."""
    target = handler if handler is not None else DEFAULT_WARNING_HANDLER
    for value in values:
        try:
            parsed = parse_warning_header(value)
        except ValueError as err:
            log.warning("ignoring a malformed Warning header from the server: %s", err)
            continue
        for code, agent, text in parsed:
            if code == 299 and text:
                target.handle_warning(code, agent, text)
