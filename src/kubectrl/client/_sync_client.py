"""The blocking client: :class:`BlockingClient` has :class:`AsyncClient`'s methods, names and
behaviour.

It runs one :class:`AsyncClient` on a private event loop in a daemon thread and waits for each
call's result, so both APIs share one implementation: same errors, retries, rate limit and watch
semantics. Its verbs are derived from :class:`AsyncClient`'s (:mod:`kubectrl._internal.blocking`),
so there is one implementation of each verb; its typed signature is the blocking interface's
(:class:`~kubectrl.client.BlockingKubeClient`). Blocking calls may come from any number of
threads at once.

Caveats: do not call a :class:`BlockingClient` from inside a coroutine running on an event loop
you care about (it blocks that loop); use :class:`AsyncClient` there.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from kubectrl._internal.blocking import (
    BlockingFacade,
    Portal,
    blocking,
    blocking_iterator,
    blocking_wrapped,
)
from kubectrl._internal.clock import Clock
from kubectrl.client._async_client import AsyncClient
from kubectrl.client._config import ClientConfig
from kubectrl.client._interfaces_blocking import BlockingKubeClient, BlockingPager
from kubectrl.client._pods import MovedPodVerbs
from kubectrl.client._pods_blocking import BlockingPods
from kubectrl.client._retry import DEFAULT_RETRY, Backoff, retry_on_conflict_blocking
from kubectrl.client._subresource import (
    BlockingClientStatusWriter,
    BlockingClientSubResourceClient,
)
from kubectrl.client._types import WriteGuard, WriteObserver
from kubectrl.client._watch import WatchStream
from kubectrl.client._watch_decoder import WatchEvent

__all__ = ["BlockingClient", "BlockingWatchStream", "Client", "SyncWatchStream"]

T = TypeVar("T")


async def _next_event(stream: WatchStream) -> WatchEvent:
    return await stream.__anext__()


class BlockingWatchStream(Iterator[WatchEvent]):
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

    def __enter__(self) -> BlockingWatchStream:
        self._portal.call(self._stream.__aenter__())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self) -> BlockingWatchStream:
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


class BlockingClient(BlockingFacade, BlockingKubeClient, BlockingPager, MovedPodVerbs):
    """Blocking Kubernetes client with the same methods as :class:`AsyncClient`.

    Each verb is :class:`AsyncClient`'s, run on a private loop thread: same parameters, defaults,
    errors and docstrings. Iterators (``list_pages``, ``list_items``, ``watch``,
    ``pods.log_stream``) become plain iterators. Close it (or use ``with``) to stop its loop
    thread and connections.

    Example::

        with BlockingClient(load_kubeconfig()) as client:
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

    def __enter__(self) -> BlockingClient:
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
        return f"BlockingClient(server={self.config.server!r}, source={self.config.source!r})"

    def with_write_hooks(
        self, *, before: WriteGuard | None = None, after: WriteObserver | None = None
    ) -> BlockingClient:
        """A view of this client with write hooks (:meth:`AsyncClient.with_write_hooks`; ``after``
        is awaited on this client's loop); it shares this client's loop and connections: closing
        one closes both.

        Example::

            >>> from kubectrl.client import ClientConfig
            >>> def read_only(verb: str, what: str) -> None:
            ...     raise PermissionError(f"this tool does not {verb} {what}")
            >>> with BlockingClient(ClientConfig(server="https://127.0.0.1:9")) as client:
            ...     client.with_write_hooks(before=read_only).create({"apiVersion": "v1",
            ...         "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}})
            Traceback (most recent call last):
            ...
            PermissionError: this tool does not create ConfigMap (v1) ns/a
        """
        view = copy.copy(self)
        view._target = self._target.with_write_hooks(before=before, after=after)
        return view

    resource = blocking(AsyncClient.resource)
    watch = blocking_wrapped(AsyncClient.watch, BlockingWatchStream, returns="BlockingWatchStream")
    scale = blocking(AsyncClient.scale)
    delete = blocking(AsyncClient.delete)
    delete_collection = blocking(AsyncClient.delete_collection)
    server_version = blocking(AsyncClient.server_version)
    create_token = blocking(AsyncClient.create_token)
    proxy_service = blocking(AsyncClient.proxy_service)

    @property
    def pods(self) -> BlockingPods:
        """The blocking pod verbs (:class:`~kubectrl.client.BlockingPods`): those of
        :attr:`AsyncClient.pods`, run on this client's loop thread.

        Example::

            text = client.pods.log("web-0", namespace="ns", tail_lines=100)
        """
        return BlockingPods(self._portal, self._target.pods)

    def status(self) -> BlockingClientStatusWriter:
        """The blocking writer of the ``status`` subresource (:meth:`AsyncClient.status`).

        Example::

            foo.status = FooStatus(ready=True)
            foo = client.status().update(foo)
        """
        return BlockingClientStatusWriter(self._portal, self._target.status())

    def subresource(self, subresource: str) -> BlockingClientSubResourceClient:
        """A blocking client of ``subresource`` (:meth:`AsyncClient.subresource`).

        Example: ``client.subresource("scale").get(V1Deployment, "web", namespace="ns")``.
        """
        return BlockingClientSubResourceClient(self._portal, self._target.subresource(subresource))

    # Each typed verb is AsyncClient's implementation run on the loop thread (one
    # implementation). Its public signature is the blocking interface's overloads (ParamSpec
    # cannot carry overloads through the derivation); mypy checks each derived method against
    # them (_BlockingClientConforms below).
    _get = blocking(AsyncClient._get)
    _list = blocking(AsyncClient._list)
    _list_pages = blocking_iterator(AsyncClient._list_pages)
    _list_items = blocking_iterator(AsyncClient._list_items)
    _create = blocking(AsyncClient._create)
    _update = blocking(AsyncClient._update)
    _patch = blocking(AsyncClient._patch)
    _apply = blocking(AsyncClient._apply)
    _patch_merge_from = blocking(AsyncClient._patch_merge_from)

    if TYPE_CHECKING:
        get = BlockingKubeClient.get
        list = BlockingKubeClient.list
        list_pages = BlockingPager.list_pages
        list_items = BlockingPager.list_items
        create = BlockingKubeClient.create
        update = BlockingKubeClient.update
        patch = BlockingKubeClient.patch
        apply = BlockingKubeClient.apply
        patch_merge_from = BlockingKubeClient.patch_merge_from
    else:
        get = _get
        list = _list
        list_pages = _list_pages
        list_items = _list_items
        create = _create
        update = _update
        patch = _patch
        apply = _apply
        patch_merge_from = _patch_merge_from

    def retry_on_conflict(self, fn: Callable[[], T], *, backoff: Backoff = DEFAULT_RETRY) -> T:
        """Blocking :func:`retry_on_conflict`: call ``fn`` again while it raises Conflict.

        Example::

            client.retry_on_conflict(lambda: bump_counter(client))
        """
        return retry_on_conflict_blocking(fn, backoff=backoff)


#: The former names (``kubectrl.client`` keeps them as deprecated aliases).
Client = BlockingClient
SyncWatchStream = BlockingWatchStream


if TYPE_CHECKING:
    # Each derived verb must fit the blocking interface's overloads (mypy checks it here).

    class _BlockingClientConforms(BlockingKubeClient, BlockingPager):
        get = BlockingClient._get
        list = BlockingClient._list
        list_pages = BlockingClient._list_pages
        list_items = BlockingClient._list_items
        create = BlockingClient._create
        update = BlockingClient._update
        patch = BlockingClient._patch
        apply = BlockingClient._apply
        patch_merge_from = BlockingClient._patch_merge_from
