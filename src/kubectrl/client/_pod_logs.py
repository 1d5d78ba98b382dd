"""Pods' logs (``pods/log``): read whole, or followed line by line, as text or bytes.

The apiserver proxies ``GET /api/v1/namespaces/NS/pods/NAME/log`` to the kubelet; its options
are ``corev1.PodLogOptions`` (``container``, ``follow``, ``tailLines``, ``sinceSeconds`` or
``sinceTime``, ``timestamps``, ``previous``, ``limitBytes``, ``insecureSkipTLSVerifyBackend``).
The server answers a pod that does not exist with 404, a container the pod does not have and a
container not started yet with 400 (``container "c" in pod "p" is waiting to start: ...``):
each raised as the typed :class:`~kubectrl.errors.APIError` naming the pod.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from kubectrl.client._paths import check_container, pod_path
from kubectrl.client._pods import PodRef, pod_target
from kubectrl.errors import APIConnectionError

if TYPE_CHECKING:
    from kubectrl.client._config import ClientConfig

__all__ = ["PodLogs", "log_params", "rfc3339"]


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


def log_params(
    *,
    container: str | None,
    follow: bool,
    tail_lines: int | None,
    since_seconds: int | None,
    since_time: datetime.datetime | str | None,
    timestamps: bool,
    previous: bool,
    limit_bytes: int | None,
    insecure_skip_tls_verify_backend: bool,
) -> dict[str, str]:
    """The query of a ``pods/log`` request (``PodLogOptions``); ``ValueError`` for options the
    server would refuse (both ``since_seconds`` and ``since_time``, negative counts)."""
    if since_seconds is not None and since_time is not None:
        raise ValueError("give since_seconds or since_time, not both (the server takes one)")
    for label, value in (
        ("tail_lines", tail_lines),
        ("since_seconds", since_seconds),
        ("limit_bytes", limit_bytes),
    ):
        if value is not None and (isinstance(value, bool) or value < 0):
            raise ValueError(f"{label} must be a non-negative integer, got {value!r}")
    if since_seconds is not None and since_seconds < 1:
        raise ValueError(f"since_seconds must be at least 1, got {since_seconds}")
    params: dict[str, Any] = {
        "insecureSkipTLSVerifyBackend": insecure_skip_tls_verify_backend or None,
        "container": check_container(container, verb="get", resource="pods/log"),
        "follow": follow or None,
        "tailLines": tail_lines,
        "sinceSeconds": since_seconds,
        "sinceTime": rfc3339(since_time) if since_time is not None else None,
        "timestamps": timestamps or None,
        "previous": previous or None,
        "limitBytes": limit_bytes,
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


class PodLogs:
    """The pods' log verbs of :class:`~kubectrl.client.AsyncClient` (a base class of it):
    ``pod_log``, ``pod_log_bytes``, ``follow_pod_log``, ``follow_pod_log_bytes``."""

    if TYPE_CHECKING:
        config: ClientConfig

        async def _send(
            self,
            method: str,
            path: str,
            *,
            verb: str,
            label: str = "",
            namespace: str | None = None,
            name: str | None = None,
            params: Mapping[str, Any] | None = None,
            body: Any = ...,
            content_type: str = "application/json",
            idempotent: bool | None = None,
            accept: str | None = None,
            raw_content: bytes | None = None,
            extra_headers: Mapping[str, str] | None = None,
            retry: bool = True,
            check_status: bool = True,
        ) -> httpx.Response: ...

        async def _open_stream(
            self,
            path: str,
            params: Mapping[str, str],
            *,
            verb: str,
            label: str,
            namespace: str | None,
            name: str | None = None,
            read_timeout: float | None,
            accept: str | None = None,
        ) -> httpx.Response: ...

    async def _read_log(
        self, pod: PodRef, namespace: str | None, options: dict[str, Any]
    ) -> httpx.Response:
        ns, name = pod_target(pod, namespace, self.config.namespace)
        return await self._send(
            "GET",
            pod_path(ns, name, "log", verb="get"),
            verb="get",
            label="pods/log",
            namespace=ns,
            name=name,
            params=log_params(follow=False, **options),
            accept="*/*",
        )

    async def pod_log(
        self,
        pod: PodRef,
        *,
        namespace: str | None = None,
        container: str | None = None,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        since_time: datetime.datetime | str | None = None,
        timestamps: bool = False,
        previous: bool = False,
        limit_bytes: int | None = None,
        insecure_skip_tls_verify_backend: bool = False,
    ) -> str:
        """Read a pod's log (``pods/log``) as text (UTF-8, undecodable bytes replaced), without
        following. Use :meth:`pod_log_bytes` for the bytes as the container wrote them.

        ``pod`` is a name (``namespace=`` or the config's namespace) or a Pod object.
        ``since_seconds`` or ``since_time`` (an aware datetime or an RFC 3339 string, not both)
        start the log later; ``insecure_skip_tls_verify_backend`` asks the apiserver not to
        verify the kubelet's serving certificate. A pod that does not exist is a
        :class:`~kubectrl.errors.NotFoundError`; a container the pod does not have, or one not
        started yet, a :class:`~kubectrl.errors.BadRequestError` whose message names both.

        Example::

            text = await client.pod_log("web-0", namespace="ns", tail_lines=100)
        """
        response = await self._read_log(
            pod,
            namespace,
            dict(
                container=container,
                tail_lines=tail_lines,
                since_seconds=since_seconds,
                since_time=since_time,
                timestamps=timestamps,
                previous=previous,
                limit_bytes=limit_bytes,
                insecure_skip_tls_verify_backend=insecure_skip_tls_verify_backend,
            ),
        )
        return response.content.decode("utf-8", errors="replace")

    async def pod_log_bytes(
        self,
        pod: PodRef,
        *,
        namespace: str | None = None,
        container: str | None = None,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        since_time: datetime.datetime | str | None = None,
        timestamps: bool = False,
        previous: bool = False,
        limit_bytes: int | None = None,
        insecure_skip_tls_verify_backend: bool = False,
    ) -> bytes:
        """:meth:`pod_log` as the bytes the container wrote (``kubectl logs`` output).

        Example::

            raw = await client.pod_log_bytes("web-0", namespace="ns", limit_bytes=1 << 20)
        """
        response = await self._read_log(
            pod,
            namespace,
            dict(
                container=container,
                tail_lines=tail_lines,
                since_seconds=since_seconds,
                since_time=since_time,
                timestamps=timestamps,
                previous=previous,
                limit_bytes=limit_bytes,
                insecure_skip_tls_verify_backend=insecure_skip_tls_verify_backend,
            ),
        )
        return response.content

    async def follow_pod_log_bytes(
        self,
        pod: PodRef,
        *,
        namespace: str | None = None,
        container: str | None = None,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        since_time: datetime.datetime | str | None = None,
        timestamps: bool = False,
        previous: bool = False,
        insecure_skip_tls_verify_backend: bool = False,
    ) -> AsyncIterator[bytes]:
        """Follow a pod's log (``pods/log?follow=true``), yielding each line as bytes with its
        ``\\n`` as it arrives; when the stream ends mid-line (the container stopped, the server
        closed) the partial last line comes without one. Ends when the server ends the stream;
        stopping the iteration (``break``, cancellation, ``aclose()``) closes the connection.
        A connection cut mid-stream raises :class:`~kubectrl.errors.APIConnectionError` naming
        the pod, ``pods/log`` and the cause. Uses the watch pool (no read timeout).

        Example::

            async for line in client.follow_pod_log_bytes("web-0", namespace="ns"):
                sys.stdout.buffer.write(line)
        """
        ns, name = pod_target(pod, namespace, self.config.namespace)
        response = await self._open_stream(
            pod_path(ns, name, "log", verb="get"),
            log_params(
                container=container,
                follow=True,
                tail_lines=tail_lines,
                since_seconds=since_seconds,
                since_time=since_time,
                timestamps=timestamps,
                previous=previous,
                limit_bytes=None,
                insecure_skip_tls_verify_backend=insecure_skip_tls_verify_backend,
            ),
            verb="get",
            label="pods/log",
            namespace=ns,
            name=name,
            read_timeout=None,
            accept="*/*",
        )
        try:
            async for line in split_lines(response.aiter_bytes()):
                yield line
        except httpx.TransportError as err:
            what = f"pods/log {ns}/{name}" + (f" (container {container})" if container else "")
            raise APIConnectionError(
                f"the log stream of {what} broke off: {type(err).__name__}: {err}",
                verb="get",
                resource=what,
            ) from err
        finally:
            await response.aclose()

    async def follow_pod_log(
        self,
        pod: PodRef,
        *,
        namespace: str | None = None,
        container: str | None = None,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        since_time: datetime.datetime | str | None = None,
        timestamps: bool = False,
        previous: bool = False,
        insecure_skip_tls_verify_backend: bool = False,
    ) -> AsyncIterator[str]:
        """Follow a pod's log, yielding its lines as text without the line end (``\\n`` or
        ``\\r\\n``; undecodable bytes replaced), a partial last line included; see
        :meth:`follow_pod_log_bytes`.

        Example::

            async for line in client.follow_pod_log("web-0", namespace="ns"):
                print(line)
        """
        lines = self.follow_pod_log_bytes(
            pod,
            namespace=namespace,
            container=container,
            tail_lines=tail_lines,
            since_seconds=since_seconds,
            since_time=since_time,
            timestamps=timestamps,
            previous=previous,
            insecure_skip_tls_verify_backend=insecure_skip_tls_verify_backend,
        )
        try:
            async for line in lines:
                text = line.decode("utf-8", errors="replace")
                if text.endswith("\n"):
                    text = text[:-2] if text.endswith("\r\n") else text[:-1]
                yield text
        finally:
            await lines.aclose()  # type: ignore[attr-defined]


for _verb in ("pod_log", "pod_log_bytes", "follow_pod_log", "follow_pod_log_bytes"):
    getattr(PodLogs, _verb).__qualname__ = f"AsyncClient.{_verb}"
