"""Decoding with and without the optional orjson gives the same objects and the same errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectrl.client import _pipeline
from kubectrl.client._watch_decoder import WatchDecoder
from kubectrl.errors import MalformedStreamError

DOCUMENTS = [
    b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"\\u00e9"}}}',
    b'{"n": 9223372036854775807, "f": 1.5, "l": [true, null, "s"], "dup": 1, "dup": 2}',
    b'{"ratio": NaN}',
]


@pytest.fixture(params=["orjson", "json"])
def decoder_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "json":
        monkeypatch.setattr(_pipeline, "_orjson", None)
    elif _pipeline._orjson is None:
        pytest.skip("orjson is not installed (pip install kubectrl[speedups])")
    return str(request.param)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_loads_matches_the_standard_library(decoder_kind: str, document: bytes) -> None:
    expected: Any = json.loads(document)
    got = _pipeline.loads(document)
    assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_a_bad_watch_line_reports_the_same_error(decoder_kind: str) -> None:
    decoder = WatchDecoder(resource="configmaps")
    with pytest.raises(MalformedStreamError, match=r"line is not JSON \(Expecting value\)"):
        list(decoder.feed(b'{"type": "ADDED", "object": }\n'))
    with pytest.raises(MalformedStreamError, match="undecodable bytes"):
        list(WatchDecoder().feed(b'{"type": "ADDED", "object": {"a": "\xff"}}\n'))
