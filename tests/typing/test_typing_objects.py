"""Type-checked by tests/typing/test_mypy_passes.py: ``get_reference`` answers in the object's kind.

A dict gives a dict of strings, a model a ``V1ObjectReference``.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client.models import V1ConfigMap, V1ObjectReference
from typing_extensions import assert_type

from kubectrl.objects import get_reference


def check_get_reference(obj: dict[str, Any], config_map: V1ConfigMap) -> None:
    assert_type(get_reference(obj), dict[str, str])
    assert_type(get_reference(config_map, field_path="data"), V1ObjectReference)
    get_reference("web")  # type: ignore[call-overload]
