"""JSON decoding of API responses and watch lines, with ``orjson`` when it is installed.

``pip install kubectrl[speedups]`` installs ``orjson``: it decodes faster and keeps one copy of
each repeated object key (``"metadata"``, ``"name"``...) for the whole process, so a cache of
thousands of objects takes less memory. Without it the standard library decodes. The results are
the same for everything an API server sends (its integers fit in 64 bits; ``orjson`` would turn a
larger one into a float): whatever ``orjson`` refuses (``NaN``, invalid bytes) goes to
:func:`json.loads`, which then decodes it or raises its own error.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

__all__ = ["loads"]

_orjson: Any
try:
    _orjson = importlib.import_module("orjson")
except ImportError:  # the optional speedup is not installed
    _orjson = None


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode one JSON document (``orjson`` first when installed, else ``json``).

    Example::

        >>> loads(b'{"kind": "Pod", "spec": {"replicas": 2}}')["spec"]["replicas"]
        2
        >>> loads(b'{"ratio": NaN}')["ratio"]  # orjson refuses NaN; json decodes it
        nan
    """
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # json.loads decodes what orjson refuses, or raises its own error
    if isinstance(data, memoryview):
        data = data.tobytes()
    return json.loads(data)
