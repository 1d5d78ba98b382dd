"""Interop with the ``kubernetes`` package's typed models (imported only when used).

Objects travel as plain dicts. Inputs may also be ``kubernetes.client`` model instances
(``V1ConfigMap(...)``); they are serialized to the API's camelCase JSON. :func:`to_model` is the
opt-in way back to a typed model, off the hot path (the official client's deserialization is slow:
kubernetes-client/python #1921).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kubectrl.objects import split_api_version

__all__ = ["is_model", "model_name_for", "to_dict", "to_model"]


def is_model(obj: object) -> bool:
    """True for a ``kubernetes.client`` model instance (checked without importing the package)."""
    return (
        hasattr(obj, "openapi_types")
        and hasattr(obj, "attribute_map")
        and not isinstance(obj, type)
    )


@functools.lru_cache(maxsize=1)
def _api_client() -> Any:
    from kubernetes.client import ApiClient

    return ApiClient()


def to_dict(obj: Mapping[str, Any] | Any) -> dict[str, Any]:
    """The JSON-ready dict for ``obj``: a dict as is (not copied), a model serialized.

    Raises ``TypeError`` for anything else.

    Example::

        >>> to_dict({"apiVersion": "v1", "kind": "ConfigMap"})["kind"]
        'ConfigMap'
    """
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, Mapping):
        return dict(obj)
    if is_model(obj):
        result = _api_client().sanitize_for_serialization(obj)
        if not isinstance(result, dict):  # pragma: no cover - models serialize to dicts
            raise TypeError(f"{type(obj).__name__} did not serialize to an object")
        if "kind" not in result or "apiVersion" not in result:
            # Models carry no API group, so we cannot guess apiVersion safely (apps/v1 vs v1).
            raise ValueError(
                f"{type(obj).__name__} instance needs api_version and kind set "
                "(e.g. api_version='v1', kind='ConfigMap') to find its resource"
            )
        return result
    raise TypeError(f"expected a dict or a kubernetes model instance, got {type(obj).__name__}")


def model_name_for(api_version: str, kind: str) -> str:
    """The ``kubernetes.client`` model class name for a type: ``("apps/v1", "Deployment")`` ->
    ``"V1Deployment"``.

    Example::

        >>> model_name_for("autoscaling/v2", "HorizontalPodAutoscaler")
        'V2HorizontalPodAutoscaler'
    """
    _, version = split_api_version(api_version)
    return version[:1].upper() + version[1:] + kind


def to_model(obj: Mapping[str, Any], model: type[Any] | str | None = None) -> Any:
    """Turn an object dict into a ``kubernetes.client`` model (opt-in, slow, imports the package).

    ``model`` is a class, a class name, or ``None`` to derive it from ``apiVersion``/``kind``.
    Raises ``LookupError`` when the package has no such model (CRDs have none).

    Example::

        cm = to_model(await client.get(("v1", "ConfigMap"), "x", namespace="ns"))
        print(cm.metadata.name)
    """
    import kubernetes.client

    if model is None:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise LookupError("object has no apiVersion/kind: pass model= explicitly")
        model = model_name_for(api_version, kind)
    name = model if isinstance(model, str) else model.__name__
    if not hasattr(kubernetes.client, name):
        raise LookupError(f"kubernetes.client has no model {name!r}")
    # The package offers no public "deserialize a dict" call; this is the one its
    # ApiClient.deserialize uses after decoding JSON.
    return _api_client()._ApiClient__deserialize(dict(obj), name)
