"""Server-side apply: the body an apply sends (:func:`apply_body`), and what a manager applied
(:func:`extract`).

An apply tells the server "these are the fields I manage, with these values": every field in the
body becomes the field manager's, and with ``force=True`` its value wins over another manager's.
So a body must hold only the fields the caller means. A dict is sent as is. A model instance
sends the fields the caller set (pydantic's ``model_fields_set``, at every level), never a
default the class filled in: ``Foo(spec=FooSpec(deployment_name="web"))`` does not claim
``spec.replicas`` because ``FooSpec`` defaults it to 1. That is what client-go's apply
configurations (``k8s.io/client-go/applyconfigurations``, all-pointer structs) get by
construction.

:func:`extract` is client-go's ``Extract<Kind>`` (``ExtractDeployment``, ...), built on
``k8s.io/apimachinery/pkg/util/managedfields``' ``ExtractInto``: from an object as read, the apply
configuration a manager owns, decoded from its ``metadata.managedFields`` entry (``fieldsV1``,
structured-merge-diff's ``fieldpath`` set: ``sigs.k8s.io/structured-merge-diff/fieldpath``,
``serialize.go`` and ``serialize-pe.go``; the extraction is ``typed/remove.go``'s
``ExtractItems``).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar, overload

from kubectrl import kinds as _kinds
from kubectrl.client._models import to_dict

__all__ = ["apply_body", "extract"]

_T = TypeVar("_T")

#: How deep a ``fieldsV1`` set may nest (path elements from the object's root). A real object's
#: deepest field (a CRD's nested ``openAPIV3Schema``) is a few dozen levels down.
MAX_FIELDS_DEPTH = 100
#: How many path elements one ``fieldsV1`` set may hold. The smallest element (``"f:a":{}``) is
#: 9 bytes and etcd stores at most ~1.5 MiB per object: ~170 000 elements.
MAX_FIELDS_ELEMENTS = 250_000
#: The longest path element key, in characters (a ``k:`` list key or a ``v:`` set value is JSON).
MAX_KEY_LENGTH = 16 * 1024
#: How deep a model may nest for :func:`apply_body`.
_MAX_MODEL_DEPTH = 256


# ---------------------------------------------------------------------------------- apply_body


def apply_body(obj: Mapping[str, Any] | Any) -> dict[str, Any]:
    """The body an apply of ``obj`` sends.

    A dict is sent as is (another ``Mapping`` as a dict copy). A model instance sends only the
    fields the caller set, at every level (pydantic's ``model_fields_set``, through sub-models
    and lists and dicts of them), in :func:`kubectrl.kinds.to_dict`'s JSON form (camelCase,
    ``None`` left out, datetimes as RFC 3339, unknown server fields kept), with ``apiVersion``
    and ``kind`` from the class when the instance does not set them. A field left unset but
    changed in place (``foo.metadata.name = "x"`` when ``metadata`` is the class's default
    ``ObjectMeta()``, an ``append`` to a defaulted list) counts as set: it differs from the
    default. An object read from the server (:func:`kubectrl.kinds.from_dict`) has every field
    it was read with set: use :func:`extract` for the part one manager owns.

    Example::

        >>> from kubectrl.resources import CustomResource, ObjectMeta, ResourceModel
        >>> class FooSpec(ResourceModel):
        ...     deployment_name: str
        ...     replicas: int = 1
        >>> class Foo(CustomResource, group="example.com", version="v1", kind="Foo"):
        ...     spec: FooSpec
        >>> apply_body(Foo(metadata=ObjectMeta(name="a"), spec=FooSpec(deployment_name="web")))
        {'apiVersion': 'example.com/v1', 'kind': 'Foo', 'metadata': {'name': 'a'}, 'spec': {'deploymentName': 'web'}}
    """  # noqa: E501
    if isinstance(obj, Mapping) or not _kinds.is_model_class(type(obj)):
        return to_dict(obj)  # a dict as is; TypeError for anything else
    result = _kinds._to_dict(obj, _include(obj, 0))
    if "kind" not in result or "apiVersion" not in result:
        raise ValueError(
            f"{type(obj).__name__} instance needs api_version and kind set "
            "(e.g. api_version='v1', kind='ConfigMap') to find its resource"
        )
    return result


_SCALARS: frozenset[type] = frozenset({str, int, float, bool, bytes, type(None)})
_NO_DEFAULT = object()
_DEFAULTS: dict[tuple[type, str], Any] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}
_MODEL_TYPES: dict[type, bool] = {}


def _is_model(value: Any) -> bool:
    kind = type(value)
    known = _MODEL_TYPES.get(kind)
    if known is None:
        known = _MODEL_TYPES[kind] = _kinds.is_model_class(kind)
    return known


def _include(model: Any, depth: int) -> dict[Any, Any]:
    """pydantic's ``include`` for the fields of ``model`` the caller set, at every level."""
    if depth > _MAX_MODEL_DEPTH:
        raise ValueError(f"apply: {type(model).__name__} nests deeper than {_MAX_MODEL_DEPTH}")
    cls = type(model)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(cls.model_fields)
    values = model.__dict__
    chosen = model.__pydantic_fields_set__
    scalars = _SCALARS
    tree: dict[Any, Any] = {}
    for name in names:
        value = values.get(name)
        if value is None:
            continue
        plain = type(value) in scalars
        if name not in chosen and (plain or not _changed(cls, name, value)):
            continue
        tree[name] = True if plain else _include_value(value, depth + 1)
    extra = getattr(model, "__pydantic_extra__", None)
    if extra:
        tree.update(dict.fromkeys(extra, True))
    return tree


def _include_value(value: Any, depth: int) -> Any:
    if type(value) in _SCALARS:
        return True
    if _is_model(value):
        return _include(value, depth)
    if isinstance(value, (list, tuple)):
        if any(_is_model(item) for item in value):
            return {i: _include_value(item, depth + 1) for i, item in enumerate(value)}
        return True
    if isinstance(value, dict):
        if any(_is_model(item) for item in value.values()):
            return {k: _include_value(item, depth + 1) for k, item in value.items()}
        return True
    return True


def _changed(cls: type, name: str, value: Any) -> bool:
    """Whether an unset field's (mutable) value differs from the field's default: changed in
    place by the caller, so set after all."""
    key = (cls, name)
    default = _DEFAULTS.get(key, _NO_DEFAULT)
    if default is _NO_DEFAULT:
        info = cls.model_fields[name]  # type: ignore[attr-defined]
        try:
            default = info.get_default(call_default_factory=True, validated_data={})
        except Exception:  # a factory that needs other fields: count the value as set
            return True
        _DEFAULTS[key] = default
    try:
        return bool(value != default)
    except Exception:
        return True


# --------------------------------------------------------------------------------- extract


class ManagedFieldsError(ValueError):
    """A ``metadata.managedFields`` entry :func:`extract` cannot read, with the object, the
    manager and the place in ``fieldsV1`` at fault."""


@overload
def extract(
    obj: Mapping[str, Any], field_manager: str, *, subresource: str = ""
) -> dict[str, Any]: ...


@overload
def extract(obj: _T, field_manager: str, *, subresource: str = "") -> _T: ...


def extract(obj: Any, field_manager: str, *, subresource: str = "") -> Any:
    """The apply configuration ``field_manager`` owns in ``obj``: client-go's ``Extract<Kind>``.

    ``obj`` is an object as read from the server (a dict or a model instance). Its
    ``metadata.managedFields`` entry for ``field_manager`` with ``operation: Apply`` (and the
    given ``subresource``, ``""`` for the main resource; ``"status"``, ``"scale"``) says which
    fields the manager applied; the result holds those fields of ``obj`` with their current
    values, plus ``apiVersion``, ``kind``, ``metadata.name`` and ``metadata.namespace``. A dict
    gives a dict; a model instance an instance of the same class whose set fields are exactly
    the extracted ones (required fields the manager does not own stay unset), so applying it
    sends exactly them. No entry for the manager: only the names.

    A field owned as a whole (a leaf of the set: a scalar, an atomic list or map such as a label
    selector) is taken whole. Associative list items (``k:{"name":"web"}``) are matched on
    their key fields, set items (``v:"x"``) on their value, both with JSON equality. A
    ``fieldsV1`` that is malformed (a key without its ``f:``/``k:``/``v:``/``i:`` form, ``k:``
    JSON that does not parse or names no field, a non-object), nests deeper than
    :data:`MAX_FIELDS_DEPTH` or holds more than :data:`MAX_FIELDS_ELEMENTS` elements raises
    :class:`ManagedFieldsError` (a ``ValueError``) naming the object and the manager; an element
    of a type structured-merge-diff does not know is skipped, as it does.

    Example::

        >>> live = {"apiVersion": "v1", "kind": "ConfigMap",
        ...         "metadata": {"name": "x", "namespace": "ns", "resourceVersion": "7",
        ...                      "managedFields": [{"manager": "me", "operation": "Apply",
        ...                                         "fieldsType": "FieldsV1",
        ...                                         "fieldsV1": {"f:data": {"f:a": {}}}}]},
        ...         "data": {"a": "1", "b": "2"}}
        >>> extract(live, "me")
        {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'x', 'namespace': 'ns'}, 'data': {'a': '1'}}
    """  # noqa: E501
    if not isinstance(field_manager, str) or not field_manager:
        raise ValueError("extract needs a field manager name")
    if isinstance(obj, Mapping):
        return _extract_dict(obj, field_manager, subresource=subresource)
    cls = type(obj)
    if not _kinds.is_model_class(cls):
        raise TypeError(f"extract needs a dict or a model instance, got {cls.__name__}")
    extracted = _extract_dict(_kinds.to_dict(obj), field_manager, subresource=subresource)
    return _kinds._from_dict_partial(cls, extracted)


def _extract_dict(
    obj: Mapping[str, Any], field_manager: str, *, subresource: str = ""
) -> dict[str, Any]:
    """:func:`extract` of a dict (a new dict; ``obj`` is not changed and shares nothing)."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    where = _Where(obj, meta, field_manager)
    result: dict[str, Any] = {}
    for key in ("apiVersion", "kind"):
        if key in obj:
            result[key] = copy.deepcopy(obj[key])
    names: dict[str, Any] = {}
    for key in ("name", "namespace"):
        if meta.get(key) not in (None, ""):
            names[key] = meta[key]
    owned = _owned_set(meta, field_manager, subresource, where)
    body: Any = _MISSING if owned is None else _extract(obj, owned)
    if isinstance(body, dict):
        body.pop("apiVersion", None)
        body.pop("kind", None)
        extracted_meta = body.pop("metadata", None)
        if isinstance(extracted_meta, dict):
            names.update({k: v for k, v in extracted_meta.items() if k not in names})
    if names:
        result["metadata"] = names
    if isinstance(body, dict):
        result.update(body)
    return result


class _Where:
    """Names the object and the manager in errors."""

    def __init__(self, obj: Mapping[str, Any], meta: Mapping[str, Any], manager: str) -> None:
        kind = obj.get("kind")
        name = meta.get("name")
        namespace = meta.get("namespace")
        label = str(kind) if isinstance(kind, str) and kind else "object"
        if isinstance(name, str) and name:
            ref = f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name
            label += f" {ref}"
        self.label = label
        self.manager = manager
        self.elements = 0

    def error(self, path: list[str], problem: str) -> ManagedFieldsError:
        place = "".join(f"[{key!r}]" for key in path)
        at = f" at fieldsV1{place}" if path else ""
        return ManagedFieldsError(
            f"{self.label}: managedFields of manager {self.manager!r}{at}: {problem}"
        )


class _Node:
    """One node of a ``fieldsV1`` set: whether the path itself is owned, and its children."""

    __slots__ = ("children", "member")

    def __init__(self) -> None:
        self.member = False
        self.children: dict[tuple[Any, ...], _Node] = {}

    @property
    def leaf(self) -> bool:
        # structured-merge-diff's Set.Leaves(): a member that also has children is not a leaf.
        return not self.children

    def merge(self, other: _Node) -> None:
        self.member = self.member or other.member
        for element, child in other.children.items():
            mine = self.children.get(element)
            if mine is None:
                self.children[element] = child
            else:
                mine.merge(child)


def _owned_set(
    meta: Mapping[str, Any], manager: str, subresource: str, where: _Where
) -> _Node | None:
    entries = meta.get("managedFields")
    if entries is None:
        return None
    if not isinstance(entries, list):
        raise where.error([], f"metadata.managedFields is a {type(entries).__name__}, not a list")
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise where.error([], f"managedFields[{index}] is a {type(entry).__name__}")
        if entry.get("manager") != manager or entry.get("operation") != "Apply":
            continue
        if (entry.get("subresource") or "") != subresource:
            continue
        # The first matching entry, as ExtractInto's findManagedFields (the server keeps one).
        fields_type = entry.get("fieldsType")
        if fields_type not in (None, "FieldsV1"):
            raise where.error([], f"fieldsType {fields_type!r} is not FieldsV1")
        raw = entry.get("fieldsV1")
        if raw is None:
            return _Node()
        return _parse(raw, [], 0, where)
    return None


_INDEX = re.compile(r"[+-]?[0-9]{1,18}")


def _parse(raw: Any, path: list[str], depth: int, where: _Where) -> _Node:
    """A ``fieldsV1`` JSON object as a set (structured-merge-diff's ``readIterV1``)."""
    if not isinstance(raw, Mapping):
        raise where.error(path, f"expected a JSON object, got {type(raw).__name__}")
    if depth >= MAX_FIELDS_DEPTH:
        raise where.error(path, f"nested deeper than {MAX_FIELDS_DEPTH} levels")
    node = _Node()
    for key, value in raw.items():
        where.elements += 1
        if where.elements > MAX_FIELDS_ELEMENTS:
            raise where.error(path, f"more than {MAX_FIELDS_ELEMENTS} path elements")
        if not isinstance(key, str):
            raise where.error(path, f"key {key!r} is not a string")
        if key == ".":
            node.member = True
            continue
        element = _path_element(key, path, where)
        if element is None:
            continue  # a type a later version may know: dropped, as structured-merge-diff does
        path.append(key)
        child = _parse(value, path, depth + 1, where)
        path.pop()
        known = node.children.get(element)
        if known is None:
            node.children[element] = child
        else:
            known.merge(child)
    if not node.children:
        node.member = True
    return node


def _path_element(key: str, path: list[str], where: _Where) -> tuple[Any, ...] | None:
    """``f:name``, ``k:{json}``, ``v:json``, ``i:n`` (``serialize-pe.go``); ``None`` for a type
    structured-merge-diff does not know."""
    if len(key) < 2:
        raise where.error(path, f"malformed key {key!r}: a key is at least 2 characters")
    if key[1] != ":":
        raise where.error(path, f"malformed key {key[:80]!r}: no ':' after its type letter")
    if len(key) > MAX_KEY_LENGTH:
        raise where.error(path, f"key {key[:40]!r}... is longer than {MAX_KEY_LENGTH} characters")
    kind, body = key[0], key[2:]
    if kind == "f":
        return ("f", body)
    if kind == "v":
        return ("v", _canon(_json(body, key, path, where), key, path, where))
    if kind == "k":
        fields = _json(body, key, path, where)
        if not isinstance(fields, dict) or not fields:
            raise where.error(path, f"malformed key {key[:80]!r}: k: needs a JSON object of keys")
        return ("k", tuple(sorted((n, _canon(v, key, path, where)) for n, v in fields.items())))
    if kind == "i":
        if not _INDEX.fullmatch(body):
            raise where.error(path, f"malformed key {key[:80]!r}: i: needs an integer")
        return ("i", int(body))
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json(text: str, key: str, path: list[str], where: _Where) -> Any:
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as err:
        problem = str(err).splitlines()[0][:120] if str(err) else type(err).__name__
        raise where.error(path, f"malformed key {key[:80]!r}: {problem}") from None


class _TooDeepError(Exception):
    pass


def _canon(value: Any, key: str, path: list[str], where: _Where) -> Any:
    try:
        return _canonical(value, 0)
    except _TooDeepError:
        raise where.error(path, f"key {key[:80]!r}: value nested too deep") from None


def _canonical(value: Any, depth: int) -> Any:
    """A hashable form of a JSON value with JSON's equality (``1 == 1.0``, ``true != 1``)."""
    if depth > MAX_FIELDS_DEPTH:
        raise _TooDeepError
    if value is None:
        return ("z",)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int):
        return ("n", value)
    if isinstance(value, float):
        return ("n", int(value)) if value.is_integer() else ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, (list, tuple)):
        return ("l", tuple(_canonical(item, depth + 1) for item in value))
    if isinstance(value, Mapping):
        return ("m", tuple(sorted((str(k), _canonical(v, depth + 1)) for k, v in value.items())))
    return ("o", repr(value))


class _Missing:
    pass


_MISSING: Any = _Missing()


def _extract(value: Any, node: _Node) -> Any:
    """The parts of ``value`` under ``node``'s leaves (``ExtractItems`` of ``typed/remove.go``);
    ``_MISSING`` when none is there."""
    if isinstance(value, Mapping):
        fields = {e[1]: child for e, child in node.children.items() if e[0] == "f"}
        out: dict[str, Any] = {}
        if fields:
            for name, item in value.items():
                child = fields.get(name)
                if child is None:
                    continue
                got = copy.deepcopy(item) if child.leaf else _extract(item, child)
                if got is not _MISSING:
                    out[name] = got
        return out if out else _MISSING
    if isinstance(value, list):
        return _extract_list(value, node)
    return _MISSING


def _extract_list(items: list[Any], node: _Node) -> Any:
    by_index: dict[int, _Node] = {}
    by_value: dict[Any, _Node] = {}
    by_key: dict[tuple[str, ...], dict[tuple[Any, ...], _Node]] = {}
    for element, sub in node.children.items():
        if element[0] == "i":
            by_index[element[1]] = sub
        elif element[0] == "v":
            by_value[element[1]] = sub
        elif element[0] == "k":
            names = tuple(n for n, _ in element[1])
            by_key.setdefault(names, {})[tuple(v for _, v in element[1])] = sub
    if not (by_index or by_value or by_key):
        return _MISSING
    out: list[Any] = []
    for index, item in enumerate(items):
        child: _Node | None = by_index.get(index)
        if child is None and by_value:
            try:
                child = by_value.get(_canonical(item, 0))
            except _TooDeepError:
                child = None
        if child is None and by_key and isinstance(item, Mapping):
            for names, table in by_key.items():
                if all(n in item for n in names):
                    try:
                        child = table.get(tuple(_canonical(item[n], 0) for n in names))
                    except _TooDeepError:
                        child = None
                    if child is not None:
                        break
        if child is None:
            continue
        got = copy.deepcopy(item) if child.leaf else _extract(item, child)
        if got is not _MISSING:
            out.append(got)
    return out if out else _MISSING
