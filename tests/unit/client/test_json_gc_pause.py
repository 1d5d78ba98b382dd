"""Large documents are decoded with the cyclic garbage collector paused, and the collector is
left as it was found (enabled again, or still disabled when the caller had disabled it)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import pytest

from kubectrl.client import _pipeline


def big_list(count: int) -> bytes:
    items = ",".join(f'{{"metadata":{{"name":"cm-{i}"}},"data":{{"k":"v"}}}}' for i in range(count))
    return f'{{"kind":"ConfigMapList","items":[{items}]}}'.encode()


BIG = big_list(8000)
SMALL = b'{"kind":"ConfigMap","metadata":{"name":"a"}}'


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Whether the collector was enabled at each decode."""
    enabled: list[bool] = []
    decode = _pipeline._decode

    def spy(data: Any) -> Any:
        enabled.append(gc.isenabled())
        return decode(data)

    monkeypatch.setattr(_pipeline, "_decode", spy)
    was_enabled = gc.isenabled()
    yield enabled
    (gc.enable if was_enabled else gc.disable)()


def test_a_large_document_is_decoded_with_the_collector_paused(seen: list[bool]) -> None:
    assert len(BIG) >= _pipeline.GC_PAUSE_BYTES
    gc.enable()
    decoded = _pipeline.loads(BIG)
    assert seen == [False]
    assert gc.isenabled()
    assert len(decoded["items"]) == 8000
    assert decoded["items"][-1]["metadata"]["name"] == "cm-7999"


def test_a_small_document_is_decoded_with_the_collector_running(seen: list[bool]) -> None:
    gc.enable()
    assert _pipeline.loads(SMALL)["metadata"]["name"] == "a"
    assert seen == [True]


def test_the_collector_is_enabled_again_when_the_decode_raises(seen: list[bool]) -> None:
    gc.enable()
    with pytest.raises(json.JSONDecodeError, match="line 1 column"):
        _pipeline.loads(BIG[:-1])  # cut: not JSON
    assert seen  # the decoder ran, paused...
    assert not any(seen)
    assert gc.isenabled()  # ...and the collector runs again


def test_a_collector_the_caller_disabled_stays_disabled(seen: list[bool]) -> None:
    gc.disable()
    _pipeline.loads(BIG)
    assert not gc.isenabled()
