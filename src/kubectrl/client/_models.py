"""Interop with typed models: ``kubernetes.client.models`` classes and pydantic custom resources.

Objects travel as plain dicts unless a verb is given a model class. Inputs may also be model
instances (``V1ConfigMap(...)``); they are serialized to the API's camelCase JSON by
:func:`kubectrl.kinds.to_dict`. :func:`to_model` turns a dict into a model when you did not ask
the client for one (it imports the ``kubernetes`` package).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectrl import kinds as _kinds
from kubectrl.objects import split_api_version

__all__ = ["is_model", "model_name_for", "to_dict", "to_model"]


def is_model(obj: object) -> bool:
    """True for a ``kubernetes.client`` model instance (checked without importing the package)."""
    return (
        hasattr(obj, "openapi_types")
        and hasattr(obj, "attribute_map")
        and not isinstance(obj, type)
    )


def to_dict(obj: Mapping[str, Any] | Any) -> dict[str, Any]:
    """The JSON-ready dict for ``obj``: a dict as is (not copied), a model serialized.

    Models (``kubernetes.client.models`` classes and any pydantic model) go through
    :func:`kubectrl.kinds.to_dict`: camelCase keys, ``None`` left out, ``apiVersion``/``kind``
    from the class, unknown server fields kept. Raises ``TypeError`` for anything else.

    Example::

        >>> to_dict({"apiVersion": "v1", "kind": "ConfigMap"})["kind"]
        'ConfigMap'
    """
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, Mapping):
        return dict(obj)
    if _kinds.is_model_class(type(obj)):
        result = _kinds.to_dict(obj)
        if "kind" not in result or "apiVersion" not in result:
            # Nothing names its kind: the class has no KindInfo and the instance sets neither.
            raise ValueError(
                f"{type(obj).__name__} instance needs api_version and kind set "
                "(e.g. api_version='v1', kind='ConfigMap') to find its resource"
            )
        return result
    raise TypeError(f"expected a dict or a model instance, got {type(obj).__name__}")


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
    """Turn an object dict into a model (:func:`kubectrl.kinds.from_dict`).

    ``model`` is a class, a ``kubernetes.client`` class name, or ``None`` to derive it from
    ``apiVersion``/``kind``. Raises ``LookupError`` when the package has no such model (CRDs have
    none: pass your own class) and :class:`~kubectrl.errors.ModelValidationError` when ``obj``
    does not validate.

    Example::

        cm = to_model(await client.get(("v1", "ConfigMap"), "x", namespace="ns"))
        print(cm.metadata.name)
    """
    if isinstance(model, type):
        return _kinds.from_dict(model, obj)
    import kubernetes.client

    if model is None:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise LookupError("object has no apiVersion/kind: pass model= explicitly")
        model = model_name_for(api_version, kind)
    cls = getattr(kubernetes.client, model, None)
    if not isinstance(cls, type):
        raise LookupError(f"kubernetes.client has no model {model!r}")
    return _kinds.from_dict(cls, obj)
