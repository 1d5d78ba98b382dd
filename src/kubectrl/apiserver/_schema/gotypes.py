"""Built-in objects as Go types: decoded into their struct and encoded back, as the apiserver does.

The apiserver decodes a built-in object's JSON into its Go type (``k8s.io/api``) and encodes
that back when it stores and serves it; this module does the same over the OpenAPI definitions
the served release's API server publishes (``kubectrl/_builtin_schemas-v1.<minor>.json.gz``):

* :func:`decode`: a value of the wrong JSON type is a 400 ``<Kind> in version "v1" cannot be
  handled as a <Kind>: json: cannot unmarshal ...`` (``encoding/json``), as are an integer out of
  its ``int32``/``int64`` range, a fraction for an integer, ``data`` of a Secret that is not
  base64 (``[]byte``), a ``Time``/``MicroTime`` that does not parse (``metav1.Time``
  ``UnmarshalJSON``: RFC 3339; ``MicroTime``: exactly six fractional digits) and a ``Quantity``
  that does not parse; unknown fields are dropped (``fieldValidation`` ``Ignore``/``Warn``),
  ``null`` is the field's zero value and times are rewritten as Go writes them (``Time``: whole
  seconds in UTC, ``MicroTime``: microseconds in UTC).
* :func:`encode`: what ``encoding/json`` writes for the fields without ``omitempty`` (the
  definitions' implicit zero ``default`` values: ``""``, ``0``, ``false``, ``{}``) and the
  declarative ``+default`` markers, at every level of the object.

Custom resources and CustomResourceDefinitions are not built-in types here (their schemas are
their own); kinds without a published definition pass through unchanged.
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime
import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from kubectrl import _builtin_schemas
from kubectrl.apiserver._resources import versions
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._schema.quantity import canonical_quantity
from kubectrl.apiserver._status import StatusError, bad_request, invalid

__all__ = [
    "decode",
    "decode_patched",
    "definition_of",
    "encode",
    "object_meta_problem",
    "with_repeated_keys",
]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_TIME = _META + "Time"
_MICRO_TIME = _META + "MicroTime"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_ANY = {
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    _META + "FieldsV1",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
}
_QUANTITY_RE = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)
_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
# Slices and maps without omitempty (k8s.io/api): encoding/json writes them even when nil (null)
# or empty; the definitions do not say it.
_NOT_OMITEMPTY = {
    ("Role", "rules"),
    ("ClusterRole", "rules"),
    ("PolicyRule", "verbs"),
    ("PodSpec", "containers"),
    ("HTTPIngressRuleValue", "paths"),
}
# Optional strings that are pointers (*string): an empty one is written, not left out.
_STRING_POINTERS = {
    ("PersistentVolumeClaimSpec", "storageClassName"),
    ("PersistentVolumeClaimSpec", "volumeAttributesClassName"),
    ("IngressSpec", "ingressClassName"),
    ("ServiceSpec", "loadBalancerClass"),
    ("JobSpec", "managedBy"),
    ("PodSpec", "hostnameOverride"),
    ("SecurityContext", "procMount"),
    ("CronJobSpec", "timeZone"),
    ("LeaseSpec", "holderIdentity"),
    ("LeaseSpec", "strategy"),
    ("LeaseSpec", "preferredHolder"),
}


def _definitions() -> Mapping[str, Any]:
    """The definitions of the release being served (:func:`versions.current`)."""
    return _builtin_schemas.definitions(versions.current())


def _definition_name(group: str, version: str, kind: str) -> str | None:
    return _definition_name_at(versions.current(), group, version, kind)


@functools.cache
def _definition_name_at(minor: str, group: str, version: str, kind: str) -> str | None:
    token = "core" if not group else group.split(".")[0]
    wanted = f".{token}.{version}.{kind}"
    for name in _builtin_schemas.definitions(minor):
        if name.startswith("io.k8s.api.") and name.endswith(wanted):
            return name
    return None


def definition_of(info: ResourceInfo, version: str) -> str | None:
    """The OpenAPI definition name of a built-in resource's kind at ``version``, or ``None``.

    Example::

        >>> from kubectrl.apiserver._resources.info import ResourceInfo
        >>> definition_of(ResourceInfo("batch", ["v1"], "jobs", "Job", True), "v1")
        'io.k8s.api.batch.v1.Job'
    """
    if info.crd or not info.typed:  # a CRD's schemas are data of its own
        return None
    return _definition_name(info.group, version, info.kind)


class _DecodeError(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _go_type(schema: Mapping[str, Any]) -> str:
    ref = schema.get("$ref")
    if ref:
        return "v1." + str(ref).rsplit(".", 1)[-1]
    kind = schema.get("type")
    if kind == "integer":
        return str(schema.get("format") or "int64")
    if kind == "number":
        return "float64"
    if kind == "boolean":
        return "bool"
    if kind == "array":
        return "[]" + _go_type(schema.get("items") or {})
    if kind == "object" and "additionalProperties" in schema:
        return "map[string]" + _go_type(schema["additionalProperties"] or {})
    if schema.get("format") == "byte":
        return "[]uint8"
    return "string" if kind == "string" else "struct"


class _Decoder:
    def __init__(self, struct: str) -> None:
        self.struct = struct  # the Go struct the current field belongs to

    def fail(self, value: Any, path: str, schema: Mapping[str, Any]) -> _DecodeError:
        go_type = _go_type(schema)
        if path.rsplit(".", 1)[-1] == "uid" and go_type == "string":
            go_type = "types.UID"  # a named string type the OpenAPI schema does not show
        return _DecodeError(
            f"json: cannot unmarshal {_json_type(value)} into Go struct field "
            f"{self.struct}.{path} of type {go_type}"
        )

    def value(self, schema: Mapping[str, Any], value: Any, path: str) -> Any:
        ref = schema.get("$ref")
        if ref:
            return self.reference(str(ref), value, path, schema)
        if value is None:
            return None
        kind = schema.get("type")
        if kind == "object" or "properties" in schema or "additionalProperties" in schema:
            if not isinstance(value, dict):
                raise self.fail(value, path, schema)
            if "properties" in schema:
                return self.fields(schema, value, path)
            items = schema.get("additionalProperties")
            if not isinstance(items, Mapping):
                return value
            out = {}
            for key, item in value.items():
                decoded = self.value(items, item, path)
                if items.get("$ref") == _QUANTITY and decoded is not None:
                    # a ResourceList: rounded up to 1m (SetDefaults_ResourceList)
                    decoded = canonical_quantity(_quantity_text(item), milli=True) or decoded
                out[key] = _zero(items) if decoded is None else decoded
            return out
        if kind == "array":
            if not isinstance(value, list):
                raise self.fail(value, path, schema)
            items = schema.get("items") or {}
            decoded_items = [self.value(items, item, path) for item in value]
            return [_zero(items) if item is None else item for item in decoded_items]
        if kind == "string":
            if not isinstance(value, str):
                raise self.fail(value, path, schema)
            if schema.get("format") == "byte":
                _base64(value)
            return value
        if kind == "integer":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(value, path, schema)
            low, high = _RANGES.get(str(schema.get("format") or "int64"), _RANGES["int64"])
            if isinstance(value, float) or not low <= value <= high:
                raise _DecodeError(
                    f"json: cannot unmarshal number {_number_text(value)} into Go struct field "
                    f"{self.struct}.{path} of type {_go_type(schema)}"
                )
            return value
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(value, path, schema)
            return value
        if kind == "boolean":
            if not isinstance(value, bool):
                raise self.fail(value, path, schema)
            return value
        return value

    def reference(self, ref: str, value: Any, path: str, schema: Mapping[str, Any]) -> Any:
        if ref in _ANY:
            return value
        if value is None:
            return None
        if ref == _TIME:
            if not isinstance(value, str):
                raise self.fail(value, path, schema)
            return _time(value, micro=False)
        if ref == _MICRO_TIME:
            if not isinstance(value, str):
                raise self.fail(value, path, schema)
            return _time(value, micro=True)
        if ref == _INT_OR_STRING:
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise _DecodeError(
                    f"json: cannot unmarshal {_json_type(value)} into Go struct field "
                    f"{self.struct}.{path} of type intstr.IntOrString"
                )
            if isinstance(value, int) and not _RANGES["int32"][0] <= value <= _RANGES["int32"][1]:
                raise _DecodeError(
                    f"json: cannot unmarshal number {value} into Go value of type int32"
                )
            return value
        if ref == _QUANTITY:
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise _DecodeError("quantities must match the regular expression")
            text = _quantity_text(value)
            if not _QUANTITY_RE.match(text):
                raise _DecodeError("quantities must match the regular expression")
            canonical = canonical_quantity(text)
            if canonical is None:
                raise _DecodeError("quantities must match the regular expression")
            return canonical
        definition = _definitions().get(ref)
        if definition is None:
            return value
        inner = _Decoder(ref.rsplit(".", 1)[-1])
        if "properties" in definition:
            if not isinstance(value, dict):
                raise self.fail(value, path, schema)
            return inner.fields(definition, value, path)
        return self.value(definition, value, path)

    def fields(self, schema: Mapping[str, Any], value: Mapping[str, Any], path: str) -> Any:
        properties: Mapping[str, Any] = schema["properties"]
        required = schema.get("required") or ()
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = properties.get(key)
            if sub is None:
                continue  # unknown field: dropped (fieldValidation Ignore / Warn)
            decoded = self.value(sub, item, f"{path}.{key}" if path else key)
            written = (self.struct, key) in _NOT_OMITEMPTY
            if (decoded is None or decoded in ({}, [])) and written and _collection(sub):
                out[key] = None  # a nil (or empty) slice or map without omitempty: null
                continue
            if decoded is None:
                continue
            if decoded in ({}, []) and _collection(sub) and key not in required and not written:
                continue  # an empty slice or map of an omitempty field is not written
            if (
                decoded == ""
                and sub.get("type") == "string"
                and "default" not in sub
                and (self.struct, key) not in _STRING_POINTERS
            ):
                continue  # nor an empty string of one (the definitions default the others)
            out[key] = decoded
        for struct, key in _NOT_OMITEMPTY:
            if struct == self.struct and key not in out and key in properties:
                out[key] = None  # left out: nil, written as null
        return out


def _collection(schema: Mapping[str, Any]) -> bool:
    if schema.get("$ref"):
        return False
    return schema.get("type") == "array" or "additionalProperties" in schema


def _zero(schema: Mapping[str, Any]) -> Any:
    """A null item of a list or map: the zero value of its Go type."""
    ref = schema.get("$ref")
    if ref == _QUANTITY:
        return "0"  # a null Quantity is the zero one
    if ref and "properties" in (_definitions().get(str(ref)) or {}):
        return {}  # a struct
    kind = schema.get("type")
    return {"string": "", "integer": 0, "number": 0, "boolean": False}.get(str(kind))


def _quantity_text(value: Any) -> str:
    """A quantity given as a JSON number is read as its text (``Quantity.UnmarshalJSON``)."""
    return value if isinstance(value, str) else json.dumps(value)


def _number_text(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return f"{value:.1f}"
    return json.dumps(value)


def _base64(value: str) -> None:
    try:
        base64.b64decode(value.encode(), validate=True)
    except (binascii.Error, ValueError):
        position = next(
            (
                i
                for i, ch in enumerate(value)
                if not (ch.isascii() and (ch.isalnum() or ch in "+/="))
            ),
            len(value) - len(value) % 4,
        )
        raise _DecodeError(f"illegal base64 data at input byte {position}") from None


def _time(value: str, *, micro: bool) -> str:
    found = _RFC3339.match(value)
    layout = "2006-01-02T15:04:05.000000Z07:00" if micro else "2006-01-02T15:04:05Z07:00"
    if found is None or (micro and len(found.group(7) or "") != 7):
        raise _DecodeError(f'parsing time "{value}" as "{layout}": cannot parse "{value}"')
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    fraction = (found.group(7) or ".0")[1:]
    offset = found.group(8)
    try:
        tz = datetime.timezone.utc
        if offset not in ("Z", "z"):
            sign = 1 if offset[0] == "+" else -1
            tz = datetime.timezone(
                sign * datetime.timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))
            )
        moment = datetime.datetime(
            year, month, day, hour, minute, second, int(fraction[:6].ljust(6, "0")), tzinfo=tz
        ).astimezone(datetime.timezone.utc)
    except ValueError:
        raise _DecodeError(f'parsing time "{value}": out of range') from None
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def decode(info: ResourceInfo, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` decoded as its Go type (a new dict), or 400 as the apiserver's decoder answers."""
    name = definition_of(info, version)
    if name is None:
        return obj
    definition = _definitions()[name]
    try:
        decoded: dict[str, Any] = _Decoder(info.kind).fields(definition, obj, "")
    except _DecodeError as err:
        raise bad_request(
            f'{info.kind} in version "{version}" cannot be handled as a {info.kind}: {err.detail}'
        ) from None
    except RecursionError:
        raise StatusError.make(400, "the object is nested too deeply") from None
    for key in ("apiVersion", "kind"):
        if key in obj:
            decoded[key] = obj[key]
    if obj.get("spec") is None and "spec" in definition.get("properties", {}):
        decoded["spec"] = {}  # every kind's spec is a struct, not a pointer: its zero value
    return decoded


_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as its ``(key, value)`` pairs, a repeated key kept."""


def with_repeated_keys(info: ResourceInfo, version: str, raw: bytes) -> Any:
    """The body ``raw`` of a built-in object as Go's ``encoding/json`` reads a key given twice:
    decoded into the same field, so two objects for a struct field merge (field by field, down
    to nested structs) and two for a map field add up (an entry given again replaces its
    value); any other value replaces the earlier one. ``None``: not a built-in kind, or not
    JSON (the caller keeps its own decoding).

    Example::

        >>> from kubectrl.apiserver._resources.info import ResourceInfo
        >>> info = ResourceInfo("", ["v1"], "configmaps", "ConfigMap", True)
        >>> with_repeated_keys(info, "v1", b'{"data": {"a": "1"}, "data": {"b": "2"}}')
        {'data': {'a': '1', 'b': '2'}}
    """
    name = definition_of(info, version)
    if name is None:
        return None
    try:
        tree = json.loads(raw, object_pairs_hook=_Pairs)
    except ValueError:
        return None
    return _merged(tree, {"$ref": name})


def _resolved(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if ref and str(ref) not in _ANY:
        return _definitions().get(str(ref)) or {}
    return schema


def _merged(value: Any, schema: Mapping[str, Any]) -> Any:
    if isinstance(value, list) and not isinstance(value, _Pairs):
        items = _resolved(schema).get("items") or {}
        return [_merged(item, items) for item in value]
    if not isinstance(value, _Pairs):
        return value
    s = _resolved(schema)
    props, extra = s.get("properties"), s.get("additionalProperties")
    if isinstance(extra, Mapping):  # a map: each entry decoded afresh, the last one stays
        return {key: _merged(item, extra) for key, item in dict(value).items()}
    if not isinstance(props, Mapping) or schema.get("$ref") in _ANY:
        return {key: _merged(item, {}) for key, item in dict(value).items()}
    joined: dict[str, Any] = {}
    for key, item in value:
        earlier = joined.get(key)
        sub = _resolved(props.get(key) or {})
        into = isinstance(sub.get("properties"), Mapping) or isinstance(
            sub.get("additionalProperties"), Mapping
        )
        if into and isinstance(earlier, _Pairs) and isinstance(item, _Pairs):
            joined[key] = _Pairs(earlier + item)  # decoded into the same struct or map
        else:
            joined[key] = item
    return {key: _merged(item, props.get(key) or {}) for key, item in joined.items()}


def object_meta_problem(value: Any) -> str | None:
    """Why ``value`` does not decode as Go's ``ObjectMeta`` (``encoding/json``'s message), or
    ``None`` when it does: what the apiserver says of an embedded resource's ``metadata``.

    Example::

        >>> object_meta_problem({"name": 5})
        'json: cannot unmarshal number into Go struct field ObjectMeta.name of type string'
        >>> object_meta_problem({"name": "ok"}) is None
        True
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"json: cannot unmarshal {_json_type(value)} into Go value of type v1.ObjectMeta"
    try:
        _Decoder("ObjectMeta").fields(_definitions()[_OBJECT_META], value, "")
    except _DecodeError as err:
        return err.detail
    return None


def decode_patched(info: ResourceInfo, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    """A patched object decoded as its Go type, or 422 as the apiserver's patch handler answers
    when the patched JSON does not decode (``apiserver pkg/endpoints/handlers/patch.go``: an
    ``Invalid`` error with one cause at ``patch``, no kind or name)."""
    try:
        return decode(info, version, obj)
    except StatusError as err:
        if err.code != 400:
            raise
        detail = str(err.body.get("message", "")).split(f"as a {info.kind}: ", 1)[-1]
        text = json.dumps(obj, separators=(",", ":"))
        raise invalid(
            "",
            "",
            "",
            [("FieldValueInvalid", "patch", f"Invalid value: {json.dumps(text)}: {detail}")],
        ) from None


def encode(info: ResourceInfo, version: str, obj: dict[str, Any]) -> None:
    """Add what ``encoding/json`` writes for the fields of ``obj`` left at their zero value."""
    name = definition_of(info, version)
    if name is None:
        return
    _fill(_definitions()[name], obj)


def _fill(schema: Mapping[str, Any], value: Any) -> None:
    ref = schema.get("$ref")
    if ref:
        definition = _definitions().get(str(ref))
        if definition is None or str(ref) in _ANY:
            return
        schema = definition
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for key, sub in properties.items():
                if key not in value and "default" in sub:
                    value[key] = copy.deepcopy(sub["default"])
                if key in value:
                    _fill(sub, value[key])
            return
        items = schema.get("additionalProperties")
        if isinstance(items, Mapping):
            for item in value.values():
                _fill(items, item)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in value:
                _fill(items, item)
