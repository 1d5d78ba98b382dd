"""Kinds named by classes: the group/version/kind (and, when known, plural and scope) of a model.

A kind can be named three ways anywhere kubectrl takes one: a ``("apps/v1", "Deployment")``
tuple, a :class:`~kubectrl.objects.GroupVersionKind` / ``GroupVersionResource``, or a **model
class** — a ``kubernetes.client.models`` class such as ``V1Deployment`` or a user's
:class:`~kubectrl.resources.CustomResource` subclass. This module answers, for a class, which kind
it stands for (:func:`kind_info`).

A class says what it stands for through a ``__kubectrl_kind__`` class attribute holding a
:class:`KindInfo` (custom resources set it from their class arguments); the ``kubernetes``
package's built-in models are looked up in a table (``kubectrl._builtin_kinds``) kept equal to
the pinned Kubernetes version's discovery by an integration test. A table and not derivation from
the class name: ``V1Deployment`` says the version and the kind but not the group (``apps``), the
plural or the scope, and a few classes carry a group prefix (``CoreV1Event``, ``EventsV1Event``).
The table is regenerated from a live server with ``python -m kubectrl.client._kind_table
KUBECONFIG``.

:func:`to_dict` and :func:`from_dict` convert between model instances and the API's JSON dicts
for any pydantic model (built-in or custom). Fields the model does not know (a newer server, a
newer CRD version) are remembered per instance by :func:`from_dict` and written back by
:func:`to_dict`, so an update through a model never drops them.

Example::

    >>> info = KindInfo(group="apps", version="v1", kind="Deployment", plural="deployments",
    ...                 namespaced=True)
    >>> info.api_version, info.gvk
    ('apps/v1', GroupVersionKind(group='apps', version='v1', kind='Deployment'))
"""

from __future__ import annotations

import copy as _copy
import dataclasses
import datetime as _dt
import enum as _enum
import types as _types
import typing as _typing
import weakref as _weakref
from collections.abc import Mapping as _Mapping
from typing import Any, TypeVar

from kubectrl import _builtin_kinds
from kubectrl import errors as _errors
from kubectrl import objects as _objects

__all__ = [
    "KindInfo",
    "adopt_unknown_fields",
    "from_dict",
    "is_model_class",
    "kind_info",
    "to_dict",
]

_M = TypeVar("_M")


@dataclasses.dataclass(frozen=True)
class KindInfo:
    """What a model class stands for: group, version, kind, and plural + scope when known.

    ``plural`` is ``""`` and ``namespaced`` ``None`` when only discovery can tell.
    """

    group: str
    version: str
    kind: str
    plural: str = ""
    namespaced: bool | None = None

    @property
    def api_version(self) -> str:
        """``group/version`` (``v1`` for the core group)."""
        return _objects.join_api_version(self.group, self.version)

    @property
    def gvk(self) -> _objects.GroupVersionKind:
        """The :class:`~kubectrl.objects.GroupVersionKind`."""
        return _objects.GroupVersionKind(self.group, self.version, self.kind)

    @property
    def gvr(self) -> _objects.GroupVersionResource | None:
        """The :class:`~kubectrl.objects.GroupVersionResource`, when the plural is known."""
        if not self.plural:
            return None
        return _objects.GroupVersionResource(self.group, self.version, self.plural)


def is_model_class(value: Any) -> bool:
    """Whether ``value`` is a class kubectrl can name a kind by (a pydantic model class)."""
    if not isinstance(value, type):
        return False
    return any(
        base.__name__ == "BaseModel" and base.__module__.startswith("pydantic")
        for base in value.__mro__
    )


def kind_info(cls: type[Any]) -> KindInfo:
    """The :class:`KindInfo` of a model class; ``TypeError`` naming the class when it has none.

    A ``kubernetes.client.models`` class is looked up by name in the built-in table (and must
    really come from that package: a user's class that happens to be called ``V1Deployment`` is
    not taken for it).

    Example::

        >>> from kubernetes.client.models import V1Deployment
        >>> info = kind_info(V1Deployment)
        >>> info.api_version, info.kind, info.plural, info.namespaced
        ('apps/v1', 'Deployment', 'deployments', True)

        >>> class Widget:
        ...     __kubectrl_kind__ = KindInfo("example.com", "v1", "Widget", "widgets", True)
        >>> kind_info(Widget).api_version
        'example.com/v1'
    """
    info = getattr(cls, "__kubectrl_kind__", None)
    if isinstance(info, KindInfo):
        return info
    builtin = _builtin_kind(cls)
    if builtin is not None:
        return builtin
    raise TypeError(
        f"{getattr(cls, '__qualname__', cls)!r} does not name a Kubernetes kind: expected a "
        "kubernetes.client.models class or a kubectrl.resources.CustomResource subclass"
    )


_BUILTIN_CACHE: dict[str, KindInfo] = {}
_MODELS_PACKAGE = "kubernetes.client.models"


def _builtin_kind(cls: Any) -> KindInfo | None:
    name = getattr(cls, "__name__", None)
    module = getattr(cls, "__module__", None) or ""
    if not isinstance(name, str):
        return None
    # By name AND by origin: a user's class named V1Deployment is not the built-in one.
    if module != _MODELS_PACKAGE and not module.startswith(_MODELS_PACKAGE + "."):
        return None
    info = _BUILTIN_CACHE.get(name)
    if info is None:
        row = _builtin_kinds.BUILTIN_KINDS.get(name)
        if row is None:
            return None
        info = KindInfo(*row)
        _BUILTIN_CACHE[name] = info
    return info


# ---------------------------------------------------------------------------- conversion
#
# Reading: the server's dict is pruned of keys the model does not know (the kubernetes models
# are ``extra="forbid"``; a plain pydantic model would silently drop them), then validated in one
# ``model_validate`` call so that error locations are full paths. Pruning copies only the dicts
# that actually hold unknown keys, so the common case allocates nothing extra. The unknown keys
# are remembered against the instance they belong to (by identity, in a side table whose entries
# die with the top-level instance) and written back by ``to_dict`` when that same sub-instance
# is still in the same place: a replaced or moved sub-object does not inherit them.


@dataclasses.dataclass(frozen=True)
class _Plan:
    # Keys the model accepts on input, and for keys holding models, how to descend.
    known: frozenset[str]
    # key -> (field name, shape, model class); shape is "one", "list" or "dict".
    nested: dict[str, tuple[str, str, type[Any]]]
    keeps_extra: bool
    # key -> field name, for every key in ``known`` (used by _from_dict_partial).
    names: dict[str, str] = dataclasses.field(default_factory=dict)


_PLANS: dict[type[Any], _Plan] = {}


def _model_of(annotation: Any) -> tuple[str, type[Any]] | None:
    """``("one"|"list"|"dict", model)`` when ``annotation`` holds pydantic models in one shape."""
    origin = _typing.get_origin(annotation)
    args = _typing.get_args(annotation)
    if origin is _typing.Union or (origin is not None and origin is _union_type()):
        members = [a for a in args if a is not type(None)]
        return _model_of(members[0]) if len(members) == 1 else None
    if origin is _typing.Annotated:
        return _model_of(args[0])
    # get_origin() gives list/dict for typing.List/Dict too (the kubernetes models use those).
    if origin is list:
        if args and is_model_class(args[0]):
            return ("list", args[0])
        return None
    if origin is dict:
        if len(args) == 2 and is_model_class(args[1]):
            return ("dict", args[1])
        return None
    if is_model_class(annotation):
        return ("one", annotation)
    return None


def _union_type() -> Any:
    return getattr(_types, "UnionType", None)


def _plan(cls: type[Any]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is not None:
        return plan
    known: set[str] = set()
    nested: dict[str, tuple[str, str, type[Any]]] = {}
    names: dict[str, str] = {}
    config = getattr(cls, "model_config", {}) or {}
    by_name = bool(config.get("validate_by_name") or config.get("populate_by_name"))
    for field_name, info in cls.model_fields.items():
        keys: list[str] = []
        if info.alias:
            keys.append(info.alias)
        choices = info.validation_alias
        if isinstance(choices, str):
            keys.append(choices)
        elif choices is not None and hasattr(choices, "choices"):
            keys.extend(c for c in choices.choices if isinstance(c, str))
        if by_name or not keys:
            keys.append(field_name)
        known.update(keys)
        names.update(dict.fromkeys(keys, field_name))
        shape = _model_of(info.annotation)
        if shape is not None:
            for key in keys:
                nested[key] = (field_name, shape[0], shape[1])
    plan = _Plan(frozenset(known), nested, config.get("extra") == "allow", names)
    _PLANS[cls] = plan
    return plan


_FORBIDS: dict[type[Any], bool] = {}


def _forbids_everywhere(cls: type[Any]) -> bool:
    """Whether ``cls`` and every model reachable through its fields have ``extra="forbid"``."""
    known = _FORBIDS.get(cls)
    if known is not None:
        return known
    _FORBIDS[cls] = True  # provisional, for recursive models
    config = getattr(cls, "model_config", {}) or {}
    result = config.get("extra") == "forbid" and all(
        _forbids_everywhere(model) for _, _, model in _plan(cls).nested.values()
    )
    _FORBIDS[cls] = result
    return result


# One unknown-key record: where the sub-instance sits (field names / indices / keys from the
# top-level instance), where its dict sits in the JSON (aliases), the sub-instance, its unknowns.
_Record = tuple[tuple[Any, ...], tuple[Any, ...], Any, dict[str, Any]]
_Found = list[tuple[tuple[Any, ...], tuple[Any, ...], dict[str, Any]]]
_UNKNOWN: dict[int, tuple[_weakref.ref[Any], list[_Record]]] = {}


def _prune(
    cls: type[Any],
    data: dict[str, Any],
    path: tuple[Any, ...],
    json_path: tuple[Any, ...],
    found: _Found,
) -> dict[str, Any]:
    plan = _plan(cls)
    out = data
    if not plan.keeps_extra:
        unknown = [key for key in data if key not in plan.known]
        if unknown:
            found.append((path, json_path, {key: data[key] for key in unknown}))
            out = {key: value for key, value in data.items() if key in plan.known}
    for key, (field_name, shape, model) in plan.nested.items():
        value = out.get(key)
        if value is None:
            continue
        new: Any = value
        if shape == "one" and isinstance(value, dict):
            new = _prune(model, value, (*path, field_name), (*json_path, key), found)
        elif shape == "list" and isinstance(value, list):
            items = [
                _prune(model, item, (*path, field_name, i), (*json_path, key, i), found)
                if isinstance(item, dict)
                else item
                for i, item in enumerate(value)
            ]
            if any(a is not b for a, b in zip(items, value, strict=True)):
                new = items
        elif shape == "dict" and isinstance(value, dict):
            entries = {
                k: _prune(model, v, (*path, field_name, k), (*json_path, key, k), found)
                if isinstance(v, dict)
                else v
                for k, v in value.items()
            }
            if any(entries[k] is not value[k] for k in value):
                new = entries
        if new is not value:
            if out is data:
                out = dict(data)
            out[key] = new
    return out


def _step(node: Any, part: Any) -> Any:
    if isinstance(part, int) and isinstance(node, list):
        return node[part] if part < len(node) else None
    if isinstance(node, dict):
        return node.get(part)
    return getattr(node, part, None)


def _forget(key: int) -> Any:
    table = _UNKNOWN  # bound now: module globals may be gone when the callback runs at exit

    def callback(_: object) -> None:
        table.pop(key, None)

    return callback


def _format_loc(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def from_dict(cls: type[_M], data: _Mapping[str, Any]) -> _M:
    """Build a ``cls`` instance from the API's JSON dict (camelCase keys).

    Keys the model does not know are kept aside and written back by :func:`to_dict` for this
    instance. Raises :class:`~kubectrl.errors.ModelValidationError` naming the kind, the object
    and the fields when ``data`` does not validate; ``data`` is never modified.

    Example::

        >>> from kubernetes.client.models import V1ConfigMap
        >>> cm = from_dict(V1ConfigMap, {"apiVersion": "v1", "kind": "ConfigMap",
        ...                              "metadata": {"name": "x", "namespace": "a"},
        ...                              "data": {"k": "v"}, "futureField": 1})
        >>> cm.data, cm.metadata.name
        ({'k': 'v'}, 'x')
        >>> to_dict(cm)["futureField"]
        1
    """
    if cls not in _PLANS and not is_model_class(cls):
        raise TypeError(f"from_dict needs a pydantic model class, got {cls!r}")
    if not isinstance(data, dict):
        if not isinstance(data, _Mapping):
            raise TypeError(
                f"from_dict({cls.__name__}, ...) needs a dict, got {type(data).__name__}"
            )
        data = dict(data)
    found: _Found = []
    instance: Any = None
    if _forbids_everywhere(cls):
        # Fast path: where every model refuses unknown keys, a dict that validates as is had
        # none, and pydantic's own walk is several times cheaper than pruning in Python.
        try:
            instance = cls.model_validate(data)  # type: ignore[attr-defined]
        except Exception as err:  # pydantic.ValidationError, imported lazily
            if getattr(err, "errors", None) is None:
                raise
    if instance is None:
        pruned = _prune(cls, data, (), (), found)
        try:
            instance = cls.model_validate(pruned)  # type: ignore[attr-defined]
        except Exception as err:  # pydantic.ValidationError, imported lazily
            errors = getattr(err, "errors", None)
            if errors is None:
                raise
            raise _validation_error(cls, data, errors()) from None
    _keep_wire_times(instance, data, 0)
    _remember_unknown(instance, found)
    return _typing.cast(_M, instance)


def _remember_unknown(instance: Any, found: _Found) -> None:
    """Record the unknown keys ``_prune`` found against the instance built from the pruned dict."""
    if not found:
        return
    records: list[_Record] = []
    for path, json_path, unknown in found:
        node: Any = instance
        for part in path:
            node = _step(node, part)
        if node is not None:
            records.append((path, json_path, node, _copy.deepcopy(unknown)))
    if records:
        key = id(instance)
        _UNKNOWN[key] = (_weakref.ref(instance, _forget(key)), records)


def _from_dict_partial(cls: type[_M], data: _Mapping[str, Any]) -> _M:
    """:func:`from_dict` for a part of an object (an apply configuration): only the keys of
    ``data`` are set, and a required field ``data`` leaves out stays unset (absent, as pydantic's
    ``model_construct`` leaves it) instead of failing validation.

    Each value is validated against its field's type (constraints included; the model's own
    validators, which may need the fields left out, do not run); sub-models are built the same
    way, so ``model_fields_set`` at every level is exactly the keys ``data`` has there. Unknown
    keys and datetimes' text are kept as :func:`from_dict` keeps them. Raises
    :class:`~kubectrl.errors.ModelValidationError` when a value does not validate.
    """
    if not isinstance(data, dict):
        data = dict(data)
    found: _Found = []
    pruned = _prune(cls, data, (), (), found)
    errors: list[dict[str, Any]] = []
    instance = _construct(cls, pruned, (), 0, errors)
    if errors:
        raise _validation_error(cls, data, errors)
    _keep_wire_times(instance, data, 0)
    _remember_unknown(instance, found)
    return _typing.cast(_M, instance)


_ADAPTERS: dict[tuple[type[Any], str], Any] = {}


def _field_adapter(cls: type[Any], name: str) -> Any:
    """A pydantic ``TypeAdapter`` of field ``name`` of ``cls``: its type and constraints."""
    adapter = _ADAPTERS.get((cls, name))
    if adapter is None:
        from pydantic import TypeAdapter

        info = cls.model_fields[name]
        annotation: Any = info.annotation
        if info.metadata:
            args = (annotation, *info.metadata)
            annotation = _typing.Annotated[args]
        adapter = _ADAPTERS[(cls, name)] = TypeAdapter(annotation)
    return adapter


def _construct(
    cls: type[Any],
    data: dict[str, Any],
    loc: tuple[Any, ...],
    depth: int,
    errors: list[dict[str, Any]],
) -> Any:
    plan = _plan(cls)
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        name = plan.names.get(key)
        if name is None:
            extra[key] = value  # pruning left only what a model with extra="allow" keeps
            continue
        nested = plan.nested.get(key)
        if nested is not None and value is not None and depth < _MAX_DEPTH:
            _, shape, model = nested
            if shape == "one" and isinstance(value, dict):
                values[name] = _construct(model, value, (*loc, key), depth + 1, errors)
                continue
            if (
                shape == "list"
                and isinstance(value, list)
                and all(isinstance(item, dict) for item in value)
            ):
                values[name] = [
                    _construct(model, item, (*loc, key, i), depth + 1, errors)
                    for i, item in enumerate(value)
                ]
                continue
            if (
                shape == "dict"
                and isinstance(value, dict)
                and all(isinstance(item, dict) for item in value.values())
            ):
                values[name] = {
                    k: _construct(model, item, (*loc, key, k), depth + 1, errors)
                    for k, item in value.items()
                }
                continue
        try:
            values[name] = _field_adapter(cls, name).validate_python(value)
        except Exception as err:  # pydantic.ValidationError, imported lazily
            found = getattr(err, "errors", None)
            if found is None:
                raise
            errors.extend({**e, "loc": (*loc, key, *e.get("loc", ()))} for e in found())
    instance = cls.model_construct(**values)
    if extra:
        kept = getattr(instance, "__pydantic_extra__", None)
        if isinstance(kept, dict):
            kept.update(extra)
    return instance


def adopt_unknown_fields(target: Any, source: Any) -> None:
    """Make ``target`` write back the unknown server fields recorded for ``source``.

    For code that moves a freshly read instance's fields into an instance the caller holds
    (``target.__dict__.update(source.__dict__)``, as ``create_or_update`` does), so that a later
    :func:`to_dict` of ``target`` still carries the fields its model does not know. The records
    follow the nested instances by identity, so they apply only where ``target`` holds the very
    sub-objects ``source`` had.

    Example::

        >>> from kubernetes.client.models import V1ConfigMap
        >>> read = from_dict(V1ConfigMap, {"metadata": {"name": "x"}, "futureField": 1})
        >>> mine = V1ConfigMap()
        >>> mine.__dict__.update(read.__dict__)
        >>> adopt_unknown_fields(mine, read)
        >>> to_dict(mine)["futureField"]
        1
    """
    entry = _UNKNOWN.get(id(source))
    key = id(target)
    if entry is None or entry[0]() is not source:
        _UNKNOWN.pop(key, None)
        return
    records = [
        (path, json_path, target if node is source else node, unknown)
        for path, json_path, node, unknown in entry[1]
    ]
    _UNKNOWN[key] = (_weakref.ref(target, _forget(key)), records)


def _validation_error(
    cls: type[Any], data: _Mapping[str, Any], errors: list[dict[str, Any]]
) -> _errors.ModelValidationError:
    meta = data.get("metadata")
    meta = meta if isinstance(meta, _Mapping) else {}
    kind = data.get("kind")
    if not isinstance(kind, str) or not kind:
        try:
            kind = kind_info(cls).kind
        except TypeError:
            kind = ""
    problems = [(_format_loc(tuple(e.get("loc", ()))), str(e.get("msg", ""))) for e in errors]
    return _errors.ModelValidationError(
        kind=kind,
        namespace=meta.get("namespace") or None,
        name=meta.get("name") or None,
        model=cls.__name__,
        problems=problems,
    )


class _WireTime(_dt.datetime):
    """A datetime read from the API that remembers its text (``wire``), to write it back as is.

    Go writes ``metav1.Time`` with whole seconds and ``MicroTime`` with six fractional digits,
    and a custom resource keeps whatever RFC 3339 text it was given (``.5Z``, ``+00:00``);
    Python's formatting of the same instant differs, so an unchanged typed read -> write would
    change the object (a new resourceVersion, a watch event). A value computed from it (by
    arithmetic or ``replace``) carries no text and is formatted afresh.
    """

    __slots__ = ("wire",)

    wire: str

    def __reduce_ex__(self, protocol: Any) -> Any:
        state = getattr(self, "wire", None)
        moment = _dt.datetime(
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.microsecond,
            self.tzinfo,
            fold=self.fold,
        )
        return (_wire_time, (moment, state))


def _wire_time(moment: _dt.datetime, wire: str | None) -> _dt.datetime:
    value = _WireTime(
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second,
        moment.microsecond,
        moment.tzinfo,
        fold=moment.fold,
    )
    if wire is not None:
        value.wire = wire
    return value


_MAX_DEPTH = 64


#: Types whose values never hold a datetime: the walk of :func:`_keep_wire_times` skips them.
_TIMELESS: frozenset[Any] = frozenset({str, int, float, bool, bytes, type(None)})
#: Per model class, the ``(field name, wire name)`` of the fields that may hold a datetime.
_TIME_FIELDS: dict[type, tuple[tuple[str, str], ...] | None] = {}


def _may_hold_time(annotation: Any, visiting: set[type]) -> bool:
    """Whether a value of ``annotation`` can hold a datetime (anything unrecognized can)."""
    if annotation in _TIMELESS:
        return False
    origin = _typing.get_origin(annotation)
    if origin is _typing.Literal:
        return False
    if origin is _typing.Annotated:
        return _may_hold_time(_typing.get_args(annotation)[0], visiting)
    if origin is not None:
        if origin not in (list, dict, tuple, set, frozenset, _typing.Union, _types.UnionType):
            return True
        return any(
            arg is not Ellipsis and _may_hold_time(arg, visiting)
            for arg in _typing.get_args(annotation)
        )
    if not isinstance(annotation, type):
        return True  # Any, a TypeVar, a forward reference
    if issubclass(annotation, (str, int, float, bytes, _enum.Enum)):
        return False
    fields = getattr(annotation, "model_fields", None)
    if not isinstance(fields, dict):
        return True
    if annotation in visiting:
        return False  # decided by the other fields of the cycle
    visiting.add(annotation)
    try:
        return any(
            _may_hold_time(getattr(info, "annotation", Any), visiting) for info in fields.values()
        )
    finally:
        visiting.discard(annotation)


def _time_fields(cls: type) -> tuple[tuple[str, str], ...] | None:
    """The fields of model class ``cls`` that may hold datetimes, with their wire names."""
    try:
        return _TIME_FIELDS[cls]
    except KeyError:
        pass
    fields = getattr(cls, "model_fields", None)
    plan: tuple[tuple[str, str], ...] | None = None
    if isinstance(fields, dict):
        plan = tuple(
            (
                name,
                getattr(info, "serialization_alias", None) or getattr(info, "alias", None) or name,
            )
            for name, info in fields.items()
            if _may_hold_time(getattr(info, "annotation", Any), {cls})
        )
    _TIME_FIELDS[cls] = plan
    return plan


def _keep_wire_times(node: Any, raw: Any, depth: int) -> None:
    """Give the datetimes of a freshly validated ``node`` the text they were read from.

    Only the fields whose type may hold a datetime are visited (:func:`_time_fields`, computed
    once per model class), and scalar values are not descended into.
    """
    if depth > _MAX_DEPTH or (type(raw) is not dict and not isinstance(raw, _Mapping)):
        return
    values = getattr(node, "__dict__", None)
    if not isinstance(values, dict):
        return
    plan = _time_fields(type(node))
    if plan is None:
        return
    timeless = _TIMELESS
    for name, alias in plan:
        value = values.get(name)
        if value is None or type(value) in timeless:
            continue
        text = raw.get(alias, raw.get(name))
        if isinstance(value, _dt.datetime):
            if isinstance(text, str):
                values[name] = _wire_time(value, text)
        elif isinstance(value, list) and isinstance(text, list):
            for index, (item, item_raw) in enumerate(zip(value, text, strict=False)):
                if type(item) in timeless:
                    continue
                if isinstance(item, _dt.datetime):
                    if isinstance(item_raw, str):
                        value[index] = _wire_time(item, item_raw)
                else:
                    _keep_wire_times(item, item_raw, depth + 1)
        elif isinstance(value, dict) and isinstance(text, _Mapping):
            for key, item in value.items():
                if type(item) in timeless:
                    continue
                if isinstance(item, _dt.datetime):
                    if isinstance(text.get(key), str):
                        value[key] = _wire_time(item, text[key])
                else:
                    _keep_wire_times(item, text.get(key), depth + 1)
        else:
            _keep_wire_times(value, text, depth + 1)


def _rfc3339(value: _dt.datetime) -> str:
    wire = getattr(value, "wire", None)
    if isinstance(wire, str):
        return wire
    # metav1.Time / MicroTime: RFC 3339 in UTC with a "Z". A naive datetime is taken as UTC
    # (the API server rejects a timestamp without an offset).
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    value = value.astimezone(_dt.timezone.utc)
    text = value.replace(tzinfo=None).isoformat()
    return text + "Z"


_PLAIN: frozenset[Any] = frozenset({str, int, float, bool, type(None)})


def _jsonable(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:  # the common containers first, without isinstance's subclass checks
        plain = _PLAIN
        return {
            k if type(k) is str else str(k): v if type(v) in plain else _jsonable(v)
            for k, v in value.items()
        }
    if kind is list:
        plain = _PLAIN
        return [v if type(v) in plain else _jsonable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, _dt.datetime):
        return _rfc3339(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _enum.Enum):
        return _jsonable(value.value)
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)


def to_dict(obj: Any) -> dict[str, Any]:
    """The API's JSON dict for a model instance: camelCase keys, ``None`` fields left out.

    Datetimes read by :func:`from_dict` are written back as the text they were read from
    (byte for byte, so an unchanged object is unchanged); other datetimes become RFC 3339
    strings in UTC; ``apiVersion``/``kind`` are filled from the class
    (:func:`kind_info`) when unset; keys the server sent that the model does not know (see
    :func:`from_dict`) come back where their sub-object still is. A mapping is returned as a
    plain dict (copied only if it is not one).

    Example::

        >>> from kubernetes.client.models import V1ConfigMap, V1ObjectMeta
        >>> to_dict(V1ConfigMap(metadata=V1ObjectMeta(name="x"), data={"k": "v"}))
        {'apiVersion': 'v1', 'kind': 'ConfigMap', 'data': {'k': 'v'}, 'metadata': {'name': 'x'}}
    """
    return _to_dict(obj, None)


def _to_dict(obj: Any, include: Any) -> dict[str, Any]:
    """:func:`to_dict` of the fields in ``include`` only (pydantic's ``include``: field names, a
    nested mapping for sub-models and list indices; ``None``: every field): server-side apply's
    body. ``apiVersion``/``kind`` are filled from the class as ever."""
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, _Mapping):
        return dict(obj)
    cls = type(obj)
    if not is_model_class(cls):
        raise TypeError(f"to_dict needs a pydantic model instance or a dict, got {cls.__name__}")
    dumped = _jsonable(
        obj.model_dump(by_alias=True, exclude_none=True, mode="python", include=include)
    )
    entry = _UNKNOWN.get(id(obj))
    if entry is not None and entry[0]() is obj:
        for path, json_path, node, unknown in entry[1]:
            current: Any = obj
            for part in path:
                current = _step(current, part)
            if current is not node:
                continue  # replaced or moved: its unknown keys do not belong here any more
            target: Any = dumped
            for part in json_path:
                target = _step(target, part)
            if isinstance(target, dict):
                for key, value in unknown.items():
                    target.setdefault(key, _copy.deepcopy(value))
    try:
        info: KindInfo | None = kind_info(cls)
    except TypeError:
        info = None
    if info is not None and ("apiVersion" not in dumped or "kind" not in dumped):
        head: dict[str, Any] = {"apiVersion": info.api_version, "kind": info.kind}
        head.update(dumped)
        return head
    return _typing.cast("dict[str, Any]", dumped)
