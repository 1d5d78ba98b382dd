"""Pods' logs (``pods/log``): the options, the query and the line splitting of ``Pods.log`` and
``Pods.log_stream`` (:mod:`kubectrl.client._pods`).

The apiserver proxies ``GET /api/v1/namespaces/NS/pods/NAME/log`` to the kubelet; its options
are ``corev1.PodLogOptions`` (``container``, ``follow``, ``tailLines``, ``sinceSeconds`` or
``sinceTime``, ``timestamps``, ``previous``, ``limitBytes``, ``insecureSkipTLSVerifyBackend``).
The server answers a pod that does not exist with 404, a container the pod does not have and a
container not started yet with 400 (``container "c" in pod "p" is waiting to start: ...``):
each raised as the typed :class:`~kubectrl.errors.APIError` naming the pod.

The options are typed bundles (:class:`LogOptions`, :class:`LogStreamOptions`) that the two
calls take as keywords: mypy refuses a misspelt option or a wrong type, and at run time
:func:`check_log_options` refuses an unknown keyword by name before anything is sent.
"""

from __future__ import annotations

import datetime
import difflib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from typing_extensions import TypedDict

from kubectrl.client._paths import check_container

__all__ = [
    "LogOptions",
    "LogStreamOptions",
    "check_encoding",
    "check_log_options",
    "log_params",
    "rfc3339",
    "split_lines",
    "text_line",
]


class LogStreamOptions(TypedDict, total=False):
    """The options of ``pods.log_stream`` (``PodLogOptions`` with ``follow``).

    ``namespace`` (default: the config's, or the Pod object's); ``container`` (default: the
    pod's only or default container); ``tail_lines``: the last N lines only;
    ``since_seconds`` or ``since_time`` (an aware ``datetime`` or an RFC 3339 string; not both):
    start later; ``timestamps``: prefix each line with its RFC 3339 time; ``previous``: the
    previous, terminated instance of the container; ``insecure_skip_tls_verify_backend``: the
    apiserver does not verify the kubelet's serving certificate.
    """

    namespace: str | None
    container: str | None
    tail_lines: int | None
    since_seconds: int | None
    since_time: datetime.datetime | str | None
    timestamps: bool
    previous: bool
    insecure_skip_tls_verify_backend: bool


class LogOptions(LogStreamOptions, total=False):
    """The options of ``pods.log``: :class:`LogStreamOptions` and ``limit_bytes`` (stop after
    that many bytes of the log)."""

    limit_bytes: int | None


def _keys(bundle: type[Any]) -> frozenset[str]:
    return frozenset(bundle.__required_keys__) | frozenset(bundle.__optional_keys__)


_LOG_KEYS = _keys(LogOptions)
_STREAM_KEYS = _keys(LogStreamOptions)


def check_log_options(verb: str, options: Mapping[str, Any], *, stream: bool) -> None:
    """Refuse an option the call does not take, as Python refuses an unknown keyword
    (``TypeError`` naming it, the closest option, and the call's options).

    Example::

        >>> check_log_options("log", {"container": "app"}, stream=False)
        >>> check_log_options("log", {"contaner": "app"}, stream=False)
        Traceback (most recent call last):
        ...
        TypeError: log() got an unexpected keyword argument 'contaner' (did you mean 'container'?)
    """
    known = _STREAM_KEYS if stream else _LOG_KEYS
    for key in options:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else f"its options are {', '.join(sorted(known))}"
            )
            if key == "limit_bytes" and stream:
                hint = "limit_bytes is an option of log(), not of a followed log"
            raise TypeError(f"{verb}() got an unexpected keyword argument {key!r} ({hint})")


def check_encoding(encoding: str | None, *, lines: bool) -> None:
    """Refuse, before sending, an ``encoding`` that cannot decode text; for the lines of a
    followed log, also one that does not write ``"\\n"`` as the byte ``\\n`` (UTF-16, UTF-32:
    the lines are cut at that byte). ``None`` (bytes) is always fine.

    Example::

        >>> check_encoding("latin-1", lines=True)
        >>> check_encoding("utf-16", lines=True)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: encoding 'utf-16' does not write a line end as one byte ...
    """
    if encoding is None:
        return
    try:
        b"".decode(encoding)
        newline = "\n".encode(encoding)
    except LookupError as err:
        raise ValueError(f"encoding {encoding!r} does not decode bytes to text ({err})") from None
    if lines and newline != b"\n":
        raise ValueError(
            f"encoding {encoding!r} does not write a line end as one byte \\n (it writes "
            f"{newline!r}), and a followed log is cut into lines at that byte: follow it with "
            "encoding=None and decode the bytes"
        )


def rfc3339(moment: datetime.datetime | str) -> str:
    """``moment`` as the API's ``metav1.Time`` text (whole seconds, UTC, ``Z``); a string is
    sent as it is. A naive datetime raises ``ValueError`` (its zone would be a guess).

    Example::

        >>> rfc3339(datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc))
        '2026-01-02T03:04:05Z'
    """
    if isinstance(moment, str):
        return moment
    if not isinstance(moment, datetime.datetime):
        raise TypeError(f"since_time is a datetime or an RFC 3339 string, not {moment!r}")
    if moment.tzinfo is None:
        raise ValueError(
            f"since_time {moment.isoformat()} has no time zone (use an aware datetime)"
        )
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def log_params(options: Mapping[str, Any], *, follow: bool) -> dict[str, str]:
    """The query of a ``pods/log`` request (``PodLogOptions``) from :class:`LogOptions`;
    ``ValueError`` for options the server would refuse (both ``since_seconds`` and
    ``since_time``, negative counts), :class:`~kubectrl.errors.InvalidPathSegmentError` for a
    container that is not a name.

    Example::

        >>> log_params({"container": "app", "tail_lines": 10}, follow=True)
        {'container': 'app', 'follow': 'true', 'tailLines': '10'}
    """
    since_seconds = options.get("since_seconds")
    since_time = options.get("since_time")
    if since_seconds is not None and since_time is not None:
        raise ValueError("give since_seconds or since_time, not both (the server takes one)")
    for label in ("tail_lines", "since_seconds", "limit_bytes"):
        value = options.get(label)
        if value is not None and (isinstance(value, bool) or value < 0):
            raise ValueError(f"{label} must be a non-negative integer, got {value!r}")
    if since_seconds is not None and since_seconds < 1:
        raise ValueError(f"since_seconds must be at least 1, got {since_seconds}")
    params: dict[str, Any] = {
        "insecureSkipTLSVerifyBackend": options.get("insecure_skip_tls_verify_backend") or None,
        "container": check_container(options.get("container"), verb="get", resource="pods/log"),
        "follow": follow or None,
        "tailLines": options.get("tail_lines"),
        "sinceSeconds": since_seconds,
        "sinceTime": rfc3339(since_time) if since_time is not None else None,
        "timestamps": options.get("timestamps") or None,
        "previous": options.get("previous") or None,
        "limitBytes": options.get("limit_bytes"),
    }
    return {
        key: ("true" if value is True else str(value))
        for key, value in params.items()
        if value is not None
    }


async def split_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The lines of a byte stream, each with its ``\\n``; the last one without it if the stream
    ends mid-line (a partial last line is yielded, not dropped)."""
    pending = b""
    async for chunk in chunks:
        if not chunk:
            continue
        pending += chunk
        start = 0
        while True:
            end = pending.find(b"\n", start)
            if end < 0:
                break
            yield pending[start : end + 1]
            start = end + 1
        pending = pending[start:]
    if pending:
        yield pending


def text_line(line: bytes, encoding: str) -> str:
    """A log line as text without its line end (``\\n`` or ``\\r\\n``), undecodable bytes
    replaced.

    Example::

        >>> text_line(b"ready\\r\\n", "utf-8")
        'ready'
    """
    text = line.decode(encoding, errors="replace")
    if text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    return text
