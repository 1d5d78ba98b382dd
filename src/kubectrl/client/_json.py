"""JSON decoding of API responses and watch lines, with ``orjson`` when it is installed.

``pip install kubectrl[speedups]`` installs ``orjson``: it decodes faster and keeps one copy of
each repeated object key (``"metadata"``, ``"name"``...) for the whole process, so a cache of
thousands of objects takes less memory. Without it the standard library decodes. The results are
the same for everything an API server sends (its integers fit in 64 bits; ``orjson`` would turn a
larger one into a float): whatever ``orjson`` refuses (``NaN``, invalid bytes) goes to
:func:`json.loads`, which then decodes it or raises its own error.

A large document (:data:`GC_PAUSE_BYTES` or more: a list response, typically an informer's
initial list) is decoded with the cyclic garbage collector paused. Decoding allocates one tracked
container per JSON object and array, and every few hundred allocations the collector runs; its
full collections walk the whole heap, the part of the list decoded so far included, so their cost
per decoded object grew with the list (measured: 8 us per ConfigMap of GC at 10,000 ConfigMaps,
19 us at 50,000 and 100,000, against 5 us for the decoding itself). A decoded document holds no
reference cycles, so a collection during the decode cannot free anything it allocated.
"""

from __future__ import annotations

import gc
import importlib
import json
from typing import Any

__all__ = ["GC_PAUSE_BYTES", "loads"]

#: Documents of at least this many bytes are decoded with the cyclic garbage collector paused.
GC_PAUSE_BYTES = 256 * 1024

_orjson: Any
try:
    _orjson = importlib.import_module("orjson")
except ImportError:  # the optional speedup is not installed
    _orjson = None


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode one JSON document (``orjson`` first when installed, else ``json``).

    Documents of :data:`GC_PAUSE_BYTES` or more are decoded with the cyclic garbage collector
    paused (and left as it was found: a caller that disabled it keeps it disabled).

    Example::

        >>> loads(b'{"kind": "Pod", "spec": {"replicas": 2}}')["spec"]["replicas"]
        2
        >>> loads(b'{"ratio": NaN}')["ratio"]  # orjson refuses NaN; json decodes it
        nan
    """
    if len(data) < GC_PAUSE_BYTES or not gc.isenabled():
        return _decode(data)
    gc.disable()
    try:
        return _decode(data)
    finally:
        gc.enable()


def _decode(data: bytes | bytearray | memoryview | str) -> Any:
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # json.loads decodes what orjson refuses, or raises its own error
    if isinstance(data, memoryview):
        data = data.tobytes()
    return json.loads(data)
