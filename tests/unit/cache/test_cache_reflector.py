"""The reflector loop: paging, expired continue tokens, bookmarks (fake list-watch, no server)."""

from __future__ import annotations

import importlib
from typing import Any, get_origin

from cache_fakes import FakeServer, cm, eventually

from kubectrl._internal.clock import FakeClock
from kubectrl.cache import Informer, ListOptions, ReflectorOptions
from kubectrl.errors import ExpiredError

LIST_ONLY = ReflectorOptions(streaming_list=False)


class PagingServer(FakeServer):
    """Serves 5 objects in pages of 2; the first continue request can be made to expire."""

    def __init__(self, *, expire_continue: bool = False) -> None:
        super().__init__([cm(f"o{i}", i + 1) for i in range(5)], rv=50)
        self.expire_continue = expire_continue

    async def list_page(self, options: ListOptions) -> dict[str, Any]:
        self.lists.append(options)
        items = list(self.objects.values())
        if options.limit is None:
            return {"metadata": {"resourceVersion": str(self.rv)}, "items": items}
        start = int(options.continue_ or 0)
        if start and self.expire_continue:
            self.expire_continue = False
            raise ExpiredError("The provided continue parameter is too old")
        page = items[start : start + 2]
        more = start + 2 < len(items)
        meta = {"resourceVersion": str(self.rv), "continue": str(start + 2) if more else ""}
        return {"metadata": meta, "items": page}


async def test_paginated_list_follows_continue_tokens() -> None:
    server = PagingServer()
    informer = Informer(server, reflector_options=LIST_ONLY)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        assert len(informer.indexer) == 5
        watch = await server.next_watch(1)
        assert watch.options.resource_version == "50"
    assert [o.continue_ for o in server.lists] == [None, "2", "4"]
    assert informer.reflector.state.paginated_result


async def test_expired_continue_token_does_one_full_list() -> None:
    server = PagingServer(expire_continue=True)
    informer = Informer(server, reflector_options=LIST_ONLY)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        assert len(informer.indexer) == 5
    full = server.lists[-1]
    assert (full.resource_version, full.limit, full.continue_) == ("", None, None)
    assert len(server.lists) == 3  # page 1, expired page 2, one full list


async def test_bookmarks_advance_the_resource_version_for_the_next_watch() -> None:
    server = FakeServer([cm("a", 1)], rv=10)
    informer = Informer(server, reflector_options=LIST_ONLY)
    async with informer:
        watch = await server.next_watch(1)
        watch.bookmark(99)
        watch.end()
        watch2 = await server.next_watch(2)
    assert watch2.options.resource_version == "99"
    assert len(server.lists) == 1  # a clean end re-watches without a relist


async def test_refused_watch_backs_off_on_the_clock_then_rewatches() -> None:
    from kubectrl.errors import APIConnectionError

    server = FakeServer([cm("a", 1)], rv=10)
    server.watch_errors = [APIConnectionError("refused", connect_failed=True)]
    clock = FakeClock()
    errors: list[BaseException] = []
    informer = Informer(
        server,
        reflector_options=LIST_ONLY,
        clock=clock,
        on_watch_error=lambda _r, err: errors.append(err),
    )
    async with informer:
        await eventually(lambda: clock.sleepers() == 1)
        deadline = clock.next_deadline()
        assert deadline is not None
        assert 0.8 <= deadline - clock.now() <= 1.6
        clock.advance(deadline - clock.now())
        await server.next_watch(1)
    assert len(server.lists) == 1
    assert [type(e).__name__ for e in errors] == ["APIConnectionError"]


def test_public_api_is_sorted_and_complete() -> None:
    module = importlib.import_module("kubectrl.cache")
    exported = list(module.__all__)
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n))  # isort style
    for name in exported:
        obj = getattr(module, name)
        # A generic alias such as Callable[..., X] passes isinstance(obj, type) on Python 3.10.
        if hasattr(obj, "__module__") and isinstance(obj, type) and get_origin(obj) is None:
            assert obj.__module__ == "kubectrl.cache", name
