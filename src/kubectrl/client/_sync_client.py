"""The blocking facade: :class:`Client` has :class:`AsyncClient`'s methods, names and behaviour.

It runs one :class:`AsyncClient` on a private event loop in a daemon thread (a "portal") and
waits for each call's result, so both APIs share one implementation: same errors, retries, rate
limit and watch semantics. Blocking calls may come from any number of threads at once.

Caveats: do not call a :class:`Client` from inside a coroutine running on an event loop you care
about (it blocks that loop); use :class:`AsyncClient` there.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from types import TracebackType
from typing import Any, TypeVar

from kubectrl._clock import Clock
from kubectrl.client._async_client import AsyncClient, PatchType, Preconditions, ResourceRef
from kubectrl.client._config import ClientConfig
from kubectrl.client._discovery import APIResource
from kubectrl.client._retry import DEFAULT_RETRY, Backoff, retry_on_conflict_blocking
from kubectrl.client._watch import WatchStream
from kubectrl.client._watch_decoder import WatchEvent

__all__ = ["Client", "SyncWatchStream"]

T = TypeVar("T")
_UNSET: Any = object()


class _Portal:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="kubectrl-client", daemon=True
        )
        self.thread.start()
        self.closed = False

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("a blocking kubectrl Client was called from its own loop thread")
        if self.closed:
            coro.close()
            raise RuntimeError("this Client is closed")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def stop(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class _SyncIterator(Iterator[T]):
    def __init__(self, portal: _Portal, agen: AsyncIterator[T]) -> None:
        self._portal = portal
        self._agen = agen
        self._done = False

    def __iter__(self) -> _SyncIterator[T]:
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        try:
            return self._portal.call(_anext(self._agen))
        except StopAsyncIteration:
            self._done = True
            raise StopIteration from None

    def close(self) -> None:
        """Stop early and release the underlying request."""
        if not self._done:
            self._done = True
            aclose = getattr(self._agen, "aclose", None)
            if aclose is not None:
                self._portal.call(aclose())


async def _anext(agen: AsyncIterator[T]) -> T:
    return await agen.__anext__()


class SyncWatchStream(Iterator[WatchEvent]):
    """Blocking twin of :class:`WatchStream`: an iterator and a context manager.

    Example::

        with client.watch(("v1", "ConfigMap"), namespace="ns", resource_version=rv) as events:
            for event in events:
                print(event.type)
    """

    def __init__(self, portal: _Portal, stream: WatchStream) -> None:
        self._portal = portal
        self._stream = stream

    @property
    def resource_version(self) -> str:
        """The last resourceVersion seen (bookmarks included)."""
        return self._stream.resource_version

    def __enter__(self) -> SyncWatchStream:
        self._portal.call(self._stream.__aenter__())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self) -> SyncWatchStream:
        return self

    def __next__(self) -> WatchEvent:
        try:
            return self._portal.call(_anext(self._stream))
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Stop watching and release the connection."""
        if not self._portal.closed:
            self._portal.call(self._stream.close())


class Client:
    """Blocking Kubernetes client with the same methods as :class:`AsyncClient`.

    Iterators (``list_pages``, ``list_items``, ``watch``, ``follow_pod_log``) become plain
    iterators. Close it (or use ``with``) to stop its loop thread and connections.

    Example::

        with Client(load_kubeconfig()) as client:
            ns = client.get(("v1", "Namespace"), "default")
            for event in client.watch(("v1", "Pod"), namespace="default", timeout_seconds=5):
                print(event.type, event.object["metadata"]["name"])
    """

    def __init__(self, config: ClientConfig | None = None, *, clock: Clock | None = None) -> None:
        self._portal = _Portal()

        async def make() -> AsyncClient:
            return AsyncClient(config, clock=clock)

        try:
            self._async = self._portal.call(make())
        except BaseException:
            self._portal.stop()
            raise
        self.config = self._async.config

    @property
    def async_client(self) -> AsyncClient:
        """The underlying :class:`AsyncClient` (lives on this client's private loop)."""
        return self._async

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close connections and stop the loop thread. Idempotent."""
        if self._portal.closed:
            return
        try:
            self._portal.call(self._async.aclose())
        finally:
            self._portal.stop()

    def __repr__(self) -> str:
        return f"Client(server={self.config.server!r}, source={self.config.source!r})"

    def resource(self, resource: ResourceRef) -> APIResource:
        """See :meth:`AsyncClient.resource`."""
        return self._portal.call(self._async.resource(resource))

    def get(
        self,
        resource: ResourceRef,
        name: str,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.get`."""
        return self._portal.call(
            self._async.get(
                resource,
                name,
                namespace=namespace,
                subresource=subresource,
                resource_version=resource_version,
            )
        )

    def list(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.list`."""
        return self._portal.call(
            self._async.list(
                resource,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                resource_version=resource_version,
                resource_version_match=resource_version_match,
                timeout_seconds=timeout_seconds,
                metadata_only=metadata_only,
            )
        )

    def list_pages(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """See :meth:`AsyncClient.list_pages`."""
        return _SyncIterator(
            self._portal,
            self._async.list_pages(
                resource,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                continue_=continue_,
                resource_version=resource_version,
                resource_version_match=resource_version_match,
                timeout_seconds=timeout_seconds,
                metadata_only=metadata_only,
            ),
        )

    def list_items(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = 500,
    ) -> Iterator[dict[str, Any]]:
        """See :meth:`AsyncClient.list_items`."""
        return _SyncIterator(
            self._portal,
            self._async.list_items(
                resource,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
            ),
        )

    def watch(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        allow_watch_bookmarks: bool = True,
        send_initial_events: bool | None = None,
        timeout_seconds: int | None = None,
        stall_timeout: float | None = _UNSET,
        metadata_only: bool = False,
    ) -> SyncWatchStream:
        """See :meth:`AsyncClient.watch`."""
        kwargs: dict[str, Any] = {}
        if stall_timeout is not _UNSET:
            kwargs["stall_timeout"] = stall_timeout
        stream = self._async.watch(
            resource,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version=resource_version,
            resource_version_match=resource_version_match,
            allow_watch_bookmarks=allow_watch_bookmarks,
            send_initial_events=send_initial_events,
            timeout_seconds=timeout_seconds,
            metadata_only=metadata_only,
            **kwargs,
        )
        return SyncWatchStream(self._portal, stream)

    def create(
        self,
        obj: Mapping[str, Any] | Any,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.create`."""
        return self._portal.call(
            self._async.create(
                obj, namespace=namespace, field_manager=field_manager, dry_run=dry_run
            )
        )

    def update(
        self,
        obj: Mapping[str, Any] | Any,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource: ResourceRef | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.update`."""
        return self._portal.call(
            self._async.update(
                obj,
                namespace=namespace,
                subresource=subresource,
                resource=resource,
                field_manager=field_manager,
                dry_run=dry_run,
            )
        )

    def update_status(
        self, obj: Mapping[str, Any] | Any, *, namespace: str | None = None
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.update_status`."""
        return self._portal.call(self._async.update_status(obj, namespace=namespace))

    def patch(
        self,
        resource: ResourceRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        subresource: str = "",
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.patch`."""
        return self._portal.call(
            self._async.patch(
                resource,
                name,
                patch,
                namespace=namespace,
                patch_type=patch_type,
                subresource=subresource,
                field_manager=field_manager,
                force=force,
                dry_run=dry_run,
            )
        )

    def apply(
        self,
        obj: Mapping[str, Any] | Any,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        subresource: str = "",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.apply`."""
        return self._portal.call(
            self._async.apply(
                obj,
                field_manager=field_manager,
                force=force,
                namespace=namespace,
                subresource=subresource,
                dry_run=dry_run,
            )
        )

    def scale(
        self, resource: ResourceRef, name: str, replicas: int, *, namespace: str | None = None
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.scale`."""
        return self._portal.call(self._async.scale(resource, name, replicas, namespace=namespace))

    def delete(
        self,
        resource: ResourceRef,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Preconditions | Mapping[str, str] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.delete`."""
        return self._portal.call(
            self._async.delete(
                resource,
                name,
                namespace=namespace,
                propagation_policy=propagation_policy,
                grace_period_seconds=grace_period_seconds,
                preconditions=preconditions,
                dry_run=dry_run,
            )
        )

    def delete_collection(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """See :meth:`AsyncClient.delete_collection`."""
        return self._portal.call(
            self._async.delete_collection(
                resource,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                propagation_policy=propagation_policy,
                grace_period_seconds=grace_period_seconds,
                dry_run=dry_run,
            )
        )

    def pod_log(
        self,
        name: str,
        *,
        namespace: str,
        container: str | None = None,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        timestamps: bool = False,
        previous: bool = False,
        limit_bytes: int | None = None,
        insecure_skip_tls_verify_backend: bool = False,
    ) -> str:
        """See :meth:`AsyncClient.pod_log`."""
        return self._portal.call(
            self._async.pod_log(
                name,
                namespace=namespace,
                container=container,
                tail_lines=tail_lines,
                since_seconds=since_seconds,
                timestamps=timestamps,
                previous=previous,
                limit_bytes=limit_bytes,
                insecure_skip_tls_verify_backend=insecure_skip_tls_verify_backend,
            )
        )

    def follow_pod_log(
        self,
        name: str,
        *,
        namespace: str,
        container: str | None = None,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        timestamps: bool = False,
        previous: bool = False,
        insecure_skip_tls_verify_backend: bool = False,
    ) -> Iterator[str]:
        """See :meth:`AsyncClient.follow_pod_log`."""
        return _SyncIterator(
            self._portal,
            self._async.follow_pod_log(
                name,
                namespace=namespace,
                container=container,
                tail_lines=tail_lines,
                since_seconds=since_seconds,
                timestamps=timestamps,
                previous=previous,
                insecure_skip_tls_verify_backend=insecure_skip_tls_verify_backend,
            ),
        )

    def retry_on_conflict(self, fn: Callable[[], T], *, backoff: Backoff = DEFAULT_RETRY) -> T:
        """Blocking :func:`retry_on_conflict`: call ``fn`` again while it raises Conflict.

        Example::

            client.retry_on_conflict(lambda: bump_counter(client))
        """
        return retry_on_conflict_blocking(fn, backoff=backoff)

    def server_version(self) -> dict[str, Any]:
        """See :meth:`AsyncClient.server_version`."""
        return self._portal.call(self._async.server_version())
