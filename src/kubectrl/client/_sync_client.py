"""The blocking facade: :class:`Client` has :class:`AsyncClient`'s methods, names and behaviour.

It runs one :class:`AsyncClient` on a private event loop in a daemon thread and waits for each
call's result, so both APIs share one implementation: same errors, retries, rate limit and watch
semantics. Its verbs are derived from :class:`AsyncClient`'s (:mod:`kubectrl.client._blocking`),
so each verb's parameters are declared once. Blocking calls may come from any number of threads
at once.

Caveats: do not call a :class:`Client` from inside a coroutine running on an event loop you care
about (it blocks that loop); use :class:`AsyncClient` there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from kubectrl._clock import Clock
from kubectrl.client._async_client import (
    AsyncClient,
    KindRef,
    ModelList,
    PatchType,
    ResourceRef,
)
from kubectrl.client._blocking import (
    BlockingFacade,
    Portal,
    blocking,
    blocking_iterator,
    blocking_wrapped,
)
from kubectrl.client._config import ClientConfig
from kubectrl.client._retry import DEFAULT_RETRY, Backoff, retry_on_conflict_blocking
from kubectrl.client._watch import WatchStream
from kubectrl.client._watch_decoder import WatchEvent
from kubectrl.labels import LabelSelectorLike

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["Client", "SyncWatchStream"]

T = TypeVar("T")
M = TypeVar("M", bound="BaseModel")


async def _next_event(stream: WatchStream) -> WatchEvent:
    return await stream.__anext__()


class SyncWatchStream(Iterator[WatchEvent]):
    """Blocking twin of :class:`WatchStream`: an iterator and a context manager.

    Example::

        with client.watch(("v1", "ConfigMap"), namespace="ns", resource_version=rv) as events:
            for event in events:
                print(event.type)
    """

    def __init__(self, portal: Portal, stream: WatchStream) -> None:
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
            return self._portal.call(_next_event(self._stream))
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Stop watching and release the connection."""
        if not self._portal.closed:
            self._portal.call(self._stream.close())


class Client(BlockingFacade):
    """Blocking Kubernetes client with the same methods as :class:`AsyncClient`.

    Each verb is :class:`AsyncClient`'s, run on a private loop thread: same parameters, defaults,
    errors and docstrings. Iterators (``list_pages``, ``list_items``, ``watch``,
    ``follow_pod_log``) become plain iterators. Close it (or use ``with``) to stop its loop
    thread and connections.

    Example::

        with Client(load_kubeconfig()) as client:
            ns = client.get(("v1", "Namespace"), "default")
            for event in client.watch(("v1", "Pod"), namespace="default", timeout_seconds=5):
                print(event.type, event.object["metadata"]["name"])
    """

    def __init__(self, config: ClientConfig | None = None, *, clock: Clock | None = None) -> None:
        self._portal = Portal()

        async def make() -> AsyncClient:
            return AsyncClient(config, clock=clock)

        try:
            self._target: AsyncClient = self._portal.call(make())
        except BaseException:
            self._portal.stop()
            raise
        self.config = self._target.config

    @property
    def async_client(self) -> AsyncClient:
        """The underlying :class:`AsyncClient` (lives on this client's private loop)."""
        return self._target

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
            self._portal.call(self._target.aclose())
        finally:
            self._portal.stop()

    def __repr__(self) -> str:
        return f"Client(server={self.config.server!r}, source={self.config.source!r})"

    resource = blocking(AsyncClient.resource)
    watch = blocking_wrapped(AsyncClient.watch, SyncWatchStream, returns="SyncWatchStream")
    scale = blocking(AsyncClient.scale)
    delete = blocking(AsyncClient.delete)
    delete_collection = blocking(AsyncClient.delete_collection)
    pod_log = blocking(AsyncClient.pod_log)
    follow_pod_log = blocking_iterator(AsyncClient.follow_pod_log)
    server_version = blocking(AsyncClient.server_version)

    # The typed verbs: at run time each is derived from AsyncClient's (one implementation, its
    # signature and docstring). ParamSpec cannot carry @overload through that derivation, so for
    # the type checker the overloads are spelled out here: a model class in -> an instance of it
    # out, a tuple/GVK/GVR or a dict -> dicts. tests/typing checks these against real use.
    if TYPE_CHECKING:

        @overload
        def get(
            self,
            resource: type[M],
            name: str,
            *,
            namespace: str | None = None,
            subresource: str = "",
            resource_version: str | None = None,
        ) -> M: ...
        @overload
        def get(
            self,
            resource: ResourceRef,
            name: str,
            *,
            namespace: str | None = None,
            subresource: str = "",
            resource_version: str | None = None,
        ) -> dict[str, Any]: ...
        def get(self, resource: KindRef, name: str, **kwargs: Any) -> Any: ...
        @overload
        def list(
            self,
            resource: type[M],
            *,
            namespace: str | None = None,
            label_selector: LabelSelectorLike = None,
            field_selector: str | None = None,
            limit: int | None = None,
            resource_version: str | None = None,
            resource_version_match: str | None = None,
            timeout_seconds: int | None = None,
            metadata_only: bool = False,
        ) -> ModelList[M]: ...
        @overload
        def list(
            self,
            resource: ResourceRef,
            *,
            namespace: str | None = None,
            label_selector: LabelSelectorLike = None,
            field_selector: str | None = None,
            limit: int | None = None,
            resource_version: str | None = None,
            resource_version_match: str | None = None,
            timeout_seconds: int | None = None,
            metadata_only: bool = False,
        ) -> dict[str, Any]: ...
        def list(self, resource: KindRef, **kwargs: Any) -> Any: ...
        @overload
        def list_pages(
            self,
            resource: type[M],
            *,
            namespace: str | None = None,
            label_selector: LabelSelectorLike = None,
            field_selector: str | None = None,
            limit: int | None = None,
            continue_: str | None = None,
            resource_version: str | None = None,
            resource_version_match: str | None = None,
            timeout_seconds: int | None = None,
            metadata_only: bool = False,
        ) -> Iterator[ModelList[M]]: ...
        @overload
        def list_pages(
            self,
            resource: ResourceRef,
            *,
            namespace: str | None = None,
            label_selector: LabelSelectorLike = None,
            field_selector: str | None = None,
            limit: int | None = None,
            continue_: str | None = None,
            resource_version: str | None = None,
            resource_version_match: str | None = None,
            timeout_seconds: int | None = None,
            metadata_only: bool = False,
        ) -> Iterator[dict[str, Any]]: ...
        def list_pages(self, resource: KindRef, **kwargs: Any) -> Any: ...
        @overload
        def list_items(
            self,
            resource: type[M],
            *,
            namespace: str | None = None,
            label_selector: LabelSelectorLike = None,
            field_selector: str | None = None,
            limit: int | None = 500,
        ) -> Iterator[M]: ...
        @overload
        def list_items(
            self,
            resource: ResourceRef,
            *,
            namespace: str | None = None,
            label_selector: LabelSelectorLike = None,
            field_selector: str | None = None,
            limit: int | None = 500,
        ) -> Iterator[dict[str, Any]]: ...
        def list_items(self, resource: KindRef, **kwargs: Any) -> Any: ...
        @overload
        def create(
            self,
            obj: M,
            *,
            namespace: str | None = None,
            field_manager: str | None = None,
            dry_run: bool = False,
        ) -> M: ...
        @overload
        def create(
            self,
            obj: Mapping[str, Any],
            *,
            namespace: str | None = None,
            field_manager: str | None = None,
            dry_run: bool = False,
        ) -> dict[str, Any]: ...
        def create(self, obj: Any, **kwargs: Any) -> Any: ...
        @overload
        def update(
            self,
            obj: M,
            *,
            namespace: str | None = None,
            subresource: str = "",
            resource: KindRef | None = None,
            field_manager: str | None = None,
            dry_run: bool = False,
        ) -> M: ...
        @overload
        def update(
            self,
            obj: Mapping[str, Any],
            *,
            namespace: str | None = None,
            subresource: str = "",
            resource: KindRef | None = None,
            field_manager: str | None = None,
            dry_run: bool = False,
        ) -> dict[str, Any]: ...
        def update(self, obj: Any, **kwargs: Any) -> Any: ...
        @overload
        def update_status(self, obj: M, *, namespace: str | None = None) -> M: ...
        @overload
        def update_status(
            self, obj: Mapping[str, Any], *, namespace: str | None = None
        ) -> dict[str, Any]: ...
        def update_status(self, obj: Any, **kwargs: Any) -> Any: ...
        @overload
        def patch(
            self,
            resource: type[M],
            name: str,
            patch: Any,
            *,
            namespace: str | None = None,
            patch_type: PatchType | str = PatchType.MERGE,
            subresource: str = "",
            field_manager: str | None = None,
            force: bool | None = None,
            dry_run: bool = False,
        ) -> M: ...
        @overload
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
        ) -> dict[str, Any]: ...
        def patch(self, resource: KindRef, name: str, patch: Any, **kwargs: Any) -> Any: ...
        @overload
        def apply(
            self,
            obj: M,
            *,
            field_manager: str,
            force: bool = False,
            namespace: str | None = None,
            subresource: str = "",
            dry_run: bool = False,
        ) -> M: ...
        @overload
        def apply(
            self,
            obj: Mapping[str, Any],
            *,
            field_manager: str,
            force: bool = False,
            namespace: str | None = None,
            subresource: str = "",
            dry_run: bool = False,
        ) -> dict[str, Any]: ...
        def apply(self, obj: Any, **kwargs: Any) -> Any: ...
    else:
        get = blocking(AsyncClient.get)
        list = blocking(AsyncClient.list)
        list_pages = blocking_iterator(AsyncClient.list_pages)
        list_items = blocking_iterator(AsyncClient.list_items)
        create = blocking(AsyncClient.create)
        update = blocking(AsyncClient.update)
        update_status = blocking(AsyncClient.update_status)
        patch = blocking(AsyncClient.patch)
        apply = blocking(AsyncClient.apply)

    def retry_on_conflict(self, fn: Callable[[], T], *, backoff: Backoff = DEFAULT_RETRY) -> T:
        """Blocking :func:`retry_on_conflict`: call ``fn`` again while it raises Conflict.

        Example::

            client.retry_on_conflict(lambda: bump_counter(client))
        """
        return retry_on_conflict_blocking(fn, backoff=backoff)
