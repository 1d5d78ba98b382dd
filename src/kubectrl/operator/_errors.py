"""What a handler raises to steer its retries (kopf's ``PermanentError``/``TemporaryError``).

Semantics follow kopf's ``kopf/_core/actions/execution.py``: a :class:`PermanentError` ends the
handler for this change (never retried); a :class:`TemporaryError` retries it after ``delay``
seconds; any other exception retries it after the handler's ``backoff``. Like
:class:`~kubectrl.runtime.TerminalError`, they are signals raised *by* user code, outside the
``KubectrlError`` tree, so that an ``except KubectrlError`` inside a handler does not swallow
them. The operator raises
:class:`HandlerTimeoutError` and :class:`HandlerRetriesError` itself (recorded as the handler's
failure) when a handler's ``timeout`` or ``retries`` are used up.
"""

from __future__ import annotations

__all__ = ["HandlerRetriesError", "HandlerTimeoutError", "PermanentError", "TemporaryError"]


class PermanentError(Exception):
    """The handler failed for good on this change: not retried; its failure is recorded.

    Example::

        if spec.get("size") is None:
            raise PermanentError("spec.size is required")
    """


class TemporaryError(Exception):
    """The handler failed for now: retried after ``delay`` seconds (default 60).

    Example::

        raise TemporaryError("the database is not ready yet", delay=10)
    """

    def __init__(self, message: str = "", *, delay: float = 60.0) -> None:
        if not delay >= 0 or delay == float("inf"):
            raise ValueError(f"TemporaryError: delay must be a finite number >= 0, not {delay!r}")
        super().__init__(message)
        self.delay = float(delay)


class HandlerTimeoutError(PermanentError):
    """The handler was still failing ``timeout`` seconds after its first try (its failure).

    Example: ``@operator.on_create(kind, timeout=600)``.
    """


class HandlerRetriesError(PermanentError):
    """The handler failed ``retries`` times (its failure).

    Example: ``@operator.on_create(kind, retries=3)``.
    """
