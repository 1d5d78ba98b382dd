"""CustomResourceDefinitions generated from :class:`~kubectrl.resources.CustomResource` models.

:func:`generate` builds an ``apiextensions.k8s.io/v1`` CRD with a *structural* OpenAPI v3 schema
per version (what controller-tools' ``controller-gen crd`` does for Go types): no ``$ref``, no
``anyOf`` for optionals (optional means "not in ``required``"), ``nullable`` only where the
:class:`~kubectrl.resources.Nullable` marker asks for it, ``metadata`` left to the server, every
object typed with its properties. :func:`to_yaml` writes it with a stable key order so a committed
file can be compared with the generator's output. ``python -m kubectrl crd module:Foo`` is the CLI.

What a CRD schema cannot say is refused with :class:`UnsupportedModelError`, naming the model and
the field and what to use instead.

Example::

    >>> from typing import Annotated
    >>> from pydantic import Field
    >>> from kubectrl.resources import CustomResource, ResourceModel
    >>> class WidgetSpec(ResourceModel):
    ...     size: Annotated[int, Field(ge=1)] = 1
    >>> class Widget(CustomResource, group="example.com", version="v1", kind="Widget"):
    ...     spec: WidgetSpec
    >>> crd = generate(Widget)
    >>> crd["metadata"]["name"]
    'widgets.example.com'
    >>> crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    {'type': 'object', 'properties': {'size': {'type': 'integer', 'minimum': 1, 'default': 1}}}
"""

import copy
import dataclasses
import datetime
import enum
import json
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, Union

import annotated_types
import yaml
from pydantic import (
    AliasChoices,
    AliasGenerator,
    AliasPath,
    BaseModel,
    TypeAdapter,
    ValidationError,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from kubectrl import _builtin_schemas
from kubectrl import errors as _errors
from kubectrl import resources as _resources
from kubectrl.resources import IntOrStringMarker

__all__ = ["UnsupportedModelError", "generate", "schema", "to_yaml"]


class UnsupportedModelError(_errors.KubectrlError, ValueError):
    """A model (or the set of models given) cannot be expressed as a CRD.

    The message names the model and the field (``Foo.spec.items[]``) and says what to use
    instead.
    """


_MISSING: Any = PydanticUndefined


@dataclasses.dataclass
class _Walk:
    """Where the walk is: the top model (for messages) and the models being expanded."""

    root: str
    stack: list[type[BaseModel]] = dataclasses.field(default_factory=list)
    field: str = ""  # "Model.field" of the field being expanded, named in messages
    builtin_descriptions: bool = False
    embedded_object_meta: bool = False

    def fail(self, path: str, problem: str) -> UnsupportedModelError:
        where = f"{self.root}.{path}" if path else self.root
        if path and self.field:
            where += f" (field {self.field})"
        return UnsupportedModelError(f"{where}: {problem}")


def _name(cls: type[Any]) -> str:
    # A class defined in a function is named as written, without "<locals>".
    return cls.__qualname__.rsplit("<locals>.", 1)[-1]


def _unwrap(annotation: Any, metadata: list[Any]) -> Any:
    """Strip ``Annotated`` layers, collecting their metadata (outermost first)."""
    while typing.get_origin(annotation) is typing.Annotated:
        args = typing.get_args(annotation)
        annotation = args[0]
        metadata.extend(args[1:])
    return annotation


@dataclasses.dataclass(frozen=True)
class _Extra:
    """The ``json_schema_extra`` of a ``Field()`` inside a type (``list[Annotated[X, ...]]``)."""

    extra: Any


def _flatten(metadata: Sequence[Any]) -> Iterator[Any]:
    for item in metadata:
        if isinstance(item, FieldInfo):
            yield from _flatten(item.metadata)
            if item.json_schema_extra is not None:
                yield _Extra(item.json_schema_extra)
        elif isinstance(item, annotated_types.GroupedMetadata):
            yield from _flatten(list(item))
        else:
            yield item


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (Union, types.UnionType)


_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
}

_INSTEAD_OF_UNION = (
    "a CRD schema has no untagged unions; for models use a discriminated union "
    "(Field(discriminator=...), a Literal tag field in each model) or one model with an optional "
    "field per variant; IntOrString for int | str, float | str for a number or a string"
)

# ``float | str``: a structural schema has no typed union but int-or-string, and the server cannot
# compile a CEL rule on an untyped node, so the node keeps any JSON value; the model checks it.
_NUMBER_OR_STRING: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}

# Keys of a CRD's JSONSchemaProps that Field(json_schema_extra=...) may add to a field's schema.
# What the model's types already say (type, properties, items, additionalProperties, required,
# description) and what CRDs forbid ($ref, definitions, uniqueItems, ...) are refused.
_EXTRA_KEYS = frozenset(
    {
        "allOf", "anyOf", "oneOf", "not", "enum", "default", "example", "externalDocs", "title",
        "format", "nullable", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "multipleOf", "minLength", "maxLength", "pattern", "minItems", "maxItems",
        "minProperties", "maxProperties", "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string", "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-validations",
    }
)  # fmt: skip


def _apply_extra(walk: _Walk, path: str, schema: dict[str, Any], extra: Any) -> None:
    """Put a ``json_schema_extra`` into ``schema``: every key is emitted or refused."""
    if extra is None:
        return
    if not isinstance(extra, Mapping):
        raise walk.fail(
            path,
            f"json_schema_extra must be a dict of CRD schema keys, not {type(extra).__name__} "
            "(a callable cannot be rendered into a CRD)",
        )
    for key, value in extra.items():
        if key not in _EXTRA_KEYS:
            raise walk.fail(
                path,
                f"json_schema_extra key {key!r} is not something a CRD schema can take here; "
                f"allowed: {', '.join(sorted(_EXTRA_KEYS))} (types, properties and required come "
                "from the model itself)",
            )
        value = copy.deepcopy(value)
        if key == "x-kubernetes-validations" and isinstance(value, list):
            schema[key] = schema.get(key, []) + value
        elif key in schema and schema[key] != value:
            raise walk.fail(
                path,
                f"json_schema_extra sets {key!r} to {value!r}, but the field's type and "
                f"constraints already make it {schema[key]!r}",
            )
        else:
            schema[key] = value


def _int_or_string(walk: _Walk, path: str, members: Sequence[Any]) -> dict[str, Any]:
    """controller-tools' known type for IntOrString (pkg/crd/known_types.go); a pattern on the
    ``str`` member (a Quantity's) is the node's pattern."""
    schema: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    for member in members:
        inner: list[Any] = []
        if _unwrap(member, inner) is str:
            for item in _flatten(inner):
                if getattr(item, "pattern", None) is not None:
                    schema["pattern"] = str(item.pattern)
    schema["x-kubernetes-int-or-string"] = True
    return schema


def _tagged_union(
    walk: _Walk, path: str, members: Sequence[Any], discriminator: str
) -> dict[str, Any]:
    """A discriminated union of models: one object with every variant's properties (a structural
    schema has one set of properties per node) and a ``oneOf`` that, per value of the tag,
    requires what that variant requires."""
    variants: list[tuple[str, dict[str, Any]]] = []
    for member in members:
        model = _unwrap(member, [])
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise walk.fail(path, f"a discriminated union holds models only, not {member!r}")
        variants.append((_name(model), _model_schema(walk, path, model)))
    properties: dict[str, Any] = {}
    tags: list[Any] = []
    one_of: list[dict[str, Any]] = []
    for name, variant in variants:
        tag_schema = variant.get("properties", {}).get(discriminator)
        if tag_schema is None or "enum" not in tag_schema:
            raise walk.fail(
                path, f"{name} has no Literal field {discriminator!r} to tell the variants apart"
            )
        if discriminator not in variant.get("required", ()):
            raise walk.fail(path, f"{name}.{discriminator}: the tag must be a required field")
        for prop, prop_schema in variant.get("properties", {}).items():
            if prop == discriminator:
                continue
            if prop in properties and _strip_descriptions(properties[prop]) != _strip_descriptions(
                prop_schema
            ):
                raise walk.fail(
                    path,
                    f"{name}.{prop} has another schema than the same field of an earlier "
                    "variant; the variants of a CRD union share one schema per field name",
                )
            properties.setdefault(prop, prop_schema)
        tags.extend(t for t in tag_schema["enum"] if t not in tags)
        entry: dict[str, Any] = {"properties": {discriminator: {"enum": list(tag_schema["enum"])}}}
        entry["required"] = list(variant["required"])
        one_of.append(entry)
    tag_type = variants[0][1]["properties"][discriminator]["type"]
    return {
        "type": "object",
        "properties": {discriminator: {"type": tag_type, "enum": tags}, **properties},
        "required": [discriminator],
        "oneOf": one_of,
    }


def _strip_descriptions(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_descriptions(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [_strip_descriptions(v) for v in schema]
    return schema


def _enum_schema(walk: _Walk, path: str, values: Sequence[Any]) -> dict[str, Any]:
    kinds = {type(v) for v in values}
    if kinds <= {str}:
        return {"type": "string", "enum": list(values)}
    if kinds <= {int}:
        return {"type": "integer", "enum": list(values)}
    if kinds <= {int, float}:
        return {"type": "number", "enum": list(values)}
    if kinds <= {bool}:
        return {"type": "boolean", "enum": list(values)}
    raise walk.fail(path, f"enum values of mixed or unsupported types {values!r}; use one type")


def _type_schema(walk: _Walk, path: str, annotation: Any, metadata: list[Any]) -> dict[str, Any]:
    """The schema of one type; ``metadata`` gathers Annotated metadata found on the way."""
    annotation = _unwrap(annotation, metadata)
    if _is_union(annotation):
        members = [m for m in typing.get_args(annotation) if m is not type(None)]
        flat = list(_flatten(metadata))
        if any(isinstance(m, IntOrStringMarker) for m in flat):
            return _int_or_string(walk, path, members)
        discriminators = [
            m.discriminator
            for m in metadata
            if isinstance(m, FieldInfo) and isinstance(m.discriminator, str)
        ]
        if discriminators and len(members) > 1:
            return _tagged_union(walk, path, members, discriminators[-1])
        if len(members) == 2 and {_unwrap(m, []) for m in members} == {float, str}:
            return copy.deepcopy(_NUMBER_OR_STRING)
        if len(members) != 1:
            raise walk.fail(path, f"union {annotation!r}: {_INSTEAD_OF_UNION}")
        # Optional[X]: optionality is "not required", not a schema of its own.
        return _type_schema(walk, path, members[0], metadata)
    origin = typing.get_origin(annotation)
    if annotation is Any:
        return {"x-kubernetes-preserve-unknown-fields": True}
    if annotation in _SCALARS:
        return dict(_SCALARS[annotation])
    if origin is Literal:
        return _enum_schema(walk, path, typing.get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_schema(walk, path, [member.value for member in annotation])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation.__module__.startswith("kubernetes."):
            return _builtin_schema(walk, path, annotation)
        return _model_schema(walk, path, annotation)
    args = typing.get_args(annotation)
    if origin in (list, Sequence) or (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        return {"type": "array", "items": _schema_of(walk, f"{path}[]", args[0], [])}
    if origin in (set, frozenset):
        items = _schema_of(walk, f"{path}[]", args[0], [])
        if items.get("type") not in ("string", "integer", "number", "boolean"):
            raise walk.fail(
                path,
                "a set holds scalars only (a CRD list-type 'set'); for objects use a list with "
                "ListType('map', keys=(...))",
            )
        return {"type": "array", "items": items, "x-kubernetes-list-type": "set"}
    if origin is tuple:
        raise walk.fail(
            path, "fixed-length tuples have no CRD schema; use a model with named fields"
        )
    if origin in (dict, Mapping):
        key, value = args
        if _unwrap(key, []) is not str:
            raise walk.fail(path, f"map keys must be str (JSON object keys), not {key!r}")
        if value is Any:
            # dict[str, Any] is any JSON object; dict[str, Annotated[Any, ...]] is a map whose
            # values are any JSON (additionalProperties: {x-kubernetes-preserve-unknown-fields}).
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return {
            "type": "object",
            "additionalProperties": _schema_of(walk, f"{path}{{}}", value, []),
        }
    if annotation in (dict, list):
        raise walk.fail(path, f"bare {annotation.__name__}: give the item type")
    raise walk.fail(
        path,
        f"type {getattr(annotation, '__name__', annotation)!r} has no CRD schema; use str, int, "
        "float, bool, datetime, a Literal or Enum, a ResourceModel, list[X], dict[str, X] or Any",
    )


def _schema_of(walk: _Walk, path: str, annotation: Any, metadata: list[Any]) -> dict[str, Any]:
    """The schema of a type with its constraints and markers applied."""
    metadata = list(metadata)
    schema = _type_schema(walk, path, annotation, metadata)
    _apply_metadata(walk, path, schema, metadata)
    return schema


def _apply_metadata(walk: _Walk, path: str, schema: dict[str, Any], metadata: list[Any]) -> None:
    """Apply constraints and markers to ``schema`` (controller-tools pkg/crd/markers)."""
    kind = schema.get("type")
    validations: list[dict[str, str]] = []
    for item in _flatten(metadata):
        if isinstance(item, annotated_types.Ge):
            schema["minimum"] = item.ge
        elif isinstance(item, annotated_types.Gt):
            # OpenAPI v3.0 (what CRDs speak): exclusiveMinimum is a flag on minimum.
            schema["minimum"] = item.gt
            schema["exclusiveMinimum"] = True
        elif isinstance(item, annotated_types.Le):
            schema["maximum"] = item.le
        elif isinstance(item, annotated_types.Lt):
            schema["maximum"] = item.lt
            schema["exclusiveMaximum"] = True
        elif isinstance(item, annotated_types.MultipleOf):
            schema["multipleOf"] = item.multiple_of
        elif isinstance(item, (annotated_types.MinLen, annotated_types.MaxLen)):
            bound = "min" if isinstance(item, annotated_types.MinLen) else "max"
            value = item.min_length if isinstance(item, annotated_types.MinLen) else item.max_length
            noun = {"string": "Length", "array": "Items", "object": "Properties"}.get(kind or "")
            if noun is None:
                raise walk.fail(path, f"{bound}_length applies to str, list or dict fields only")
            schema[f"{bound}{noun}"] = value
        elif getattr(item, "pattern", None) is not None:
            if kind != "string":
                raise walk.fail(
                    path,
                    "pattern applies to str fields only (for an int-or-string such as a Quantity, "
                    "put it on the str member: see kubectrl.resources.Quantity)",
                )
            schema["pattern"] = str(item.pattern)
        elif isinstance(item, _resources.Format):
            schema["format"] = item.format
        elif isinstance(item, _resources.Nullable):
            schema["nullable"] = True
        elif isinstance(item, _resources.PreserveUnknownFields):
            schema["x-kubernetes-preserve-unknown-fields"] = True
        elif isinstance(item, _resources.EmbeddedResource):
            if kind != "object":
                raise walk.fail(path, "EmbeddedResource applies to a model or dict field only")
            schema.pop("additionalProperties", None)
            schema["x-kubernetes-embedded-resource"] = True
            if "properties" not in schema:
                schema["x-kubernetes-preserve-unknown-fields"] = True
        elif isinstance(item, _resources.ListType):
            if kind != "array":
                raise walk.fail(path, "ListType applies to list fields only")
            schema["x-kubernetes-list-type"] = item.type
            if item.keys:
                _check_map_keys(walk, path, schema, item.keys)
                schema["x-kubernetes-list-map-keys"] = list(item.keys)
        elif isinstance(item, _resources.MapType):
            if kind != "object":
                raise walk.fail(path, "MapType applies to model or dict fields only")
            schema["x-kubernetes-map-type"] = item.type
        elif isinstance(item, _resources.Rule):
            validations.append(item.to_schema())
        elif isinstance(item, _Extra):
            _apply_extra(walk, path, schema, item.extra)
    if validations:
        schema["x-kubernetes-validations"] = (
            schema.get("x-kubernetes-validations", []) + validations
        )


def _check_map_keys(walk: _Walk, path: str, schema: dict[str, Any], keys: Sequence[str]) -> None:
    items = schema["items"]
    required = set(items.get("required", ()))
    defaulted = {k for k, v in items.get("properties", {}).items() if "default" in v}
    for key in keys:
        if key not in items.get("properties", {}):
            raise walk.fail(path, f"list map key {key!r} is not a field of the item model")
        if key not in required and key not in defaulted:
            # The server requires map keys to be required or defaulted.
            raise walk.fail(
                path, f"list map key {key!r} must be a required field or have a default"
            )


def _field_schema(walk: _Walk, path: str, field: FieldInfo) -> dict[str, Any]:
    metadata = list(field.metadata)
    if field.discriminator is not None:
        if not isinstance(field.discriminator, str):
            raise walk.fail(
                path, "a callable discriminator has no CRD schema; name a Literal field"
            )
        metadata.append(FieldInfo(discriminator=field.discriminator))
    schema = _schema_of(walk, path, field.annotation, metadata)
    extra = field.json_schema_extra
    if isinstance(extra, Mapping) and "default" in extra and not field.is_required():
        default = field.get_default(call_default_factory=True)
        if default is not None:
            raise walk.fail(
                path, "a default both in json_schema_extra and on the field: give one of them"
            )
    _apply_extra(walk, path, schema, extra)
    if field.description:
        # The field's own description wins over its model's docstring.
        schema.pop("description", None)
        schema = {"description": field.description.strip(), **schema}
    default = field.get_default(call_default_factory=True) if not field.is_required() else _MISSING
    if default is not _MISSING and default is not None:
        try:
            value = TypeAdapter[Any](typing.cast(Any, field.annotation)).dump_python(
                default, mode="json", by_alias=True, exclude_none=True
            )
        except Exception as exc:  # pydantic raises several types for an unserialisable default
            raise walk.fail(path, f"default {default!r} cannot be serialised: {exc}") from exc
        schema["default"] = value
    if "default" in schema:
        _check_default(walk, path, field, schema["default"])
    return schema


def _check_default(walk: _Walk, path: str, field: FieldInfo, value: Any) -> None:
    """Refuse a default the field's own type and constraints refuse.

    The API server validates each ``default`` of a CRD against the schema it sits in and
    refuses the CRD otherwise (apiextensions-apiserver pkg/apiserver/schema/defaulting/
    validation.go); pydantic does not validate defaults, so ``Field(ge=1)`` with ``= 0`` is
    caught here, naming the field, rather than at install. The check is the model's own
    validation of the default as JSON: ``Rule`` (CEL) expressions are not evaluated here.
    """
    annotation: Any = field.annotation
    if field.metadata:
        arguments = (annotation, *field.metadata)
        annotation = typing.cast(Any, typing.Annotated)[arguments]
    try:
        TypeAdapter[Any](annotation).validate_json(json.dumps(value))
    except ValidationError as exc:
        problems = "; ".join(
            (".".join(str(p) for p in error["loc"]) + ": " if error["loc"] else "") + error["msg"]
            for error in exc.errors()
        )
        raise walk.fail(
            path,
            f"default {value!r} breaks the field's own constraints ({problems}); the API server "
            "refuses such a CRD at install: give a default the field accepts",
        ) from None


def _builtin_schema(walk: _Walk, path: str, model: type[BaseModel]) -> dict[str, Any]:
    """A ``kubernetes`` model: the pinned API server's published schema, as controller-gen
    renders the Go type (not a walk of the Python class, whose types are looser than the API's)."""
    name = _builtin_schemas.definition_name(model)
    if name is None:
        raise walk.fail(
            path,
            f"{model.__name__} is not a type the pinned API server "
            f"{_builtin_schemas.server_version()} publishes in its OpenAPI (the kubernetes package "
            "may be newer); use Annotated[dict[str, Any], PreserveUnknownFields()]",
        )
    try:
        return _builtin_schemas.crd_schema(
            name,
            descriptions=walk.builtin_descriptions,
            embedded_object_meta=walk.embedded_object_meta,
        )
    except _builtin_schemas.BuiltinSchemaError as exc:
        where = ".".join(p for p in (path, exc.path) if p).replace(".[]", "[]")
        raise walk.fail(where, f"{model.__name__}: {exc.problem}") from exc


def _validation_names(model: type[BaseModel], name: str, field: FieldInfo) -> set[str]:
    """The keys pydantic reads this field from when validating a dict."""
    names: set[str] = set()
    alias = field.validation_alias if field.validation_alias is not None else field.alias
    if isinstance(alias, str):
        names.add(alias)
    elif isinstance(alias, AliasChoices):
        names.update(c for c in alias.choices if isinstance(c, str))
        names.update(
            c.path[0]
            for c in alias.choices
            if isinstance(c, AliasPath) and len(c.path) == 1 and isinstance(c.path[0], str)
        )
    elif isinstance(alias, AliasPath) and len(alias.path) == 1 and isinstance(alias.path[0], str):
        names.add(alias.path[0])
    config = model.model_config
    by_name = config.get("validate_by_name") or config.get("populate_by_name")
    if alias is None or by_name:
        names.add(name)
    return names


#: Words Go writes in capitals inside a camelCase name (golint's common initialisms and the ones
#: Kubernetes APIs use): ``is_ca`` becomes ``isCa`` automatically, but a Go type says ``isCA``.
INITIALISMS = frozenset(
    {
        "acl", "api", "ascii", "ca", "cidr", "cpu", "css", "dns", "eof", "fqdn", "gid", "guid",
        "html", "http", "https", "id", "ip", "ipv4", "ipv6", "json", "lhs", "oidc", "qps", "ram",
        "rhs", "rpc", "sla", "smtp", "sql", "ssh", "tcp", "tls", "ttl", "udp", "ui", "uid",
        "uri", "url", "utf8", "uuid", "vm", "xml", "xmpp", "xsrf", "xss",
    }
)  # fmt: skip


def _ambiguous_initialism(name: str) -> str | None:
    """The first word after the first of a snake_case ``name`` that Go would write as an
    initialism (so the automatic camelCase of ``name`` is a guess), or ``None``."""
    words = name.strip("_").split("_")
    return next((w for w in words[1:] if w.lower() in INITIALISMS), None)


def _wire_name(walk: _Walk, path: str, model: type[BaseModel], name: str, field: FieldInfo) -> str:
    """The property name: what the model serializes the field as (``by_alias=True``), which
    must also be a name validation reads it back from.

    A name made by the alias generator from a snake_case name with an initialism in it
    (``is_ca``: ``isCa`` or ``isCA``?) is refused: a wrong guess is a field the server prunes."""
    # an alias may be "" (a CRD property named ""): only None means no alias
    wire = field.serialization_alias if field.serialization_alias is not None else field.alias
    # alias_priority 2 is an alias the user wrote; 1 (or none) is the alias generator's.
    automatic = (field.alias_priority or 1) < 2
    if wire is None:
        generator = model.model_config.get("alias_generator")
        if isinstance(generator, AliasGenerator):
            made = generator.serialization_alias or generator.alias
            wire = made(name) if made is not None else None
        elif callable(generator):
            wire = generator(name)
    word = _ambiguous_initialism(name)
    if automatic and wire is not None and wire != name and word is not None:
        upper = wire.replace(word[0].upper() + word[1:].lower(), word.upper(), 1)
        raise walk.fail(
            path,
            f"the automatic camelCase of {name!r} is {wire!r}, but {word!r} is an initialism Go "
            f"writes {word.upper()!r} ({upper!r}); say which the CRD uses with "
            f"Field(alias={upper!r}) or Field(alias={wire!r})",
        )
    if wire is None:
        wire = name
    accepted = _validation_names(model, name, field)
    if wire not in accepted:
        raise walk.fail(
            path,
            f"the field is written as {wire!r} but read back only from "
            f"{', '.join(repr(a) for a in sorted(accepted))}: what the server stores would not "
            f"validate into the field; give it Field(alias={wire!r}) (or validation_alias)",
        )
    return wire


def _model_schema(walk: _Walk, path: str, model: type[BaseModel]) -> dict[str, Any]:
    if model in walk.stack:
        cycle = walk.stack[walk.stack.index(model) :]
        chain = " -> ".join(m.__name__ for m in [*cycle, model])
        raise walk.fail(
            path,
            f"recursive type ({chain}): a CRD schema cannot refer to itself; bound the depth with "
            "separate models or mark the field Annotated[dict[str, Any], PreserveUnknownFields()]",
        )
    if not model.__pydantic_complete__:
        # A forward reference (a class defined after the one naming it) is resolved here.
        try:
            model.model_rebuild(raise_errors=True)
        except Exception as exc:  # pydantic's PydanticUndefinedAnnotation and NameError
            raise walk.fail(path, f"{model.__name__} is not fully defined: {exc}") from exc
    walk.stack.append(model)
    try:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, field in model.model_fields.items():
            outer, walk.field = walk.field, f"{_name(model)}.{name}"
            field_path = f"{path}.{name}" if path else name
            wire = _wire_name(walk, field_path, model, name, field)
            properties[wire] = _field_schema(walk, field_path, field)
            walk.field = outer
            if field.is_required():
                required.append(wire)
    finally:
        walk.stack.pop()
    schema: dict[str, Any] = {}
    doc = model.__dict__.get("__doc__")
    if doc and model not in (_resources.CustomResource,):
        schema["description"] = _clean_doc(doc)
    schema["type"] = "object"
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    own_rules: tuple[_resources.Rule, ...] = getattr(model, "__kubectrl_rules__", ())
    if own_rules:
        schema["x-kubernetes-validations"] = [r.to_schema() for r in own_rules]
    if model not in (_resources.ResourceModel, _resources.CustomResource):
        _apply_extra(walk, path, schema, model.model_config.get("json_schema_extra"))
    return schema


def _clean_doc(doc: str) -> str:
    import inspect

    return inspect.cleandoc(doc)


_TYPE_META_DESCRIPTIONS = {
    "apiVersion": "APIVersion defines the versioned schema of this representation of an object.",
    "kind": "Kind is a string value representing the REST resource this object represents.",
}


def schema(
    model: type[_resources.CustomResource],
    *,
    builtin_descriptions: bool = False,
    embedded_object_meta: bool = False,
) -> dict[str, Any]:
    """The structural ``openAPIV3Schema`` of one custom resource model.

    A field typed with a ``kubernetes`` model (``V1PodTemplateSpec``, ``list[V1Condition]``) gets
    the schema controller-gen writes for the Go type, from the pinned API server's OpenAPI.
    ``builtin_descriptions`` keeps the built-in types' own descriptions (off by default: a pod
    template's are about 300 KB, over what ``kubectl apply`` can store); ``embedded_object_meta``
    is controller-gen's ``generateEmbeddedObjectMeta``: an embedded ``ObjectMeta`` (a template's
    ``metadata``) keeps ``name``, ``namespace``, ``labels``, ``annotations`` and ``finalizers``
    instead of being ``{type: object}``, whose content the server prunes.

    Example::

        >>> from kubectrl.resources import CustomResource
        >>> class Empty(CustomResource, group="example.com", version="v1", kind="Empty"):
        ...     '''An object with nothing in it.'''
        >>> schema(Empty)["properties"]["metadata"]
        {'type': 'object'}
    """
    declaration = _declaration(model)
    walk = _Walk(
        _name(model),
        builtin_descriptions=builtin_descriptions,
        embedded_object_meta=embedded_object_meta,
    )
    top = _model_schema(walk, "", model)
    properties = top.setdefault("properties", {})
    # apiVersion/kind are plain strings and metadata is the server's (controller-tools does the
    # same): a schema for metadata may only restrict name and generateName. The model says which
    # of them the schema declares (all three by default; none in a schema like Istio's) and
    # which are required (a field without a default, like Argo Workflows' metadata).
    for wire in ("apiVersion", "kind", "metadata"):
        if wire not in declaration.meta_properties:
            properties.pop(wire, None)
        elif wire == "metadata":
            properties[wire] = {"type": "object"}
        else:
            properties[wire] = {"description": _TYPE_META_DESCRIPTIONS[wire], "type": "string"}
    if not properties:
        del top["properties"]
    return top


def _declaration(model: Any) -> _resources.ResourceDeclaration:
    declaration = getattr(model, "__kubectrl_resource__", None)
    if not (
        isinstance(model, type)
        and issubclass(model, _resources.CustomResource)
        and isinstance(declaration, _resources.ResourceDeclaration)
    ):
        raise UnsupportedModelError(
            f"{getattr(model, '__qualname__', model)!r} is not a CustomResource subclass declaring "
            "group, version and kind"
        )
    return declaration


def generate(
    *models: type[_resources.CustomResource],
    storage: type[_resources.CustomResource] | str | None = None,
    conversion: Mapping[str, Any] | None = None,
    builtin_descriptions: bool = False,
    embedded_object_meta: bool = False,
) -> dict[str, Any]:
    """The ``apiextensions.k8s.io/v1`` CRD for one kind, one version per model.

    All models must declare the same group, kind, plural and scope and different versions.
    Exactly one version is stored: ``storage`` (a model or a version name) if given, else the one
    model declaring ``storage=True``, else the only model. Short names and categories are the
    union over the models, in order.

    ``conversion`` is the CRD's ``spec.conversion`` (default ``{"strategy": "None"}`` when there
    are several versions), e.g. :func:`kubectrl.webhook.conversion_stanza` for a conversion
    webhook.

    ``builtin_descriptions`` and ``embedded_object_meta`` are :func:`schema`'s.
    """
    if not models:
        raise UnsupportedModelError("generate() needs at least one CustomResource model")
    declarations = [_declaration(m) for m in models]
    first = declarations[0]
    names = ", ".join(_name(m) for m in models)
    for model, decl in zip(models, declarations, strict=True):
        for attr in ("group", "kind", "plural", "scope"):
            if getattr(decl, attr) != getattr(first, attr):
                raise UnsupportedModelError(
                    f"{_name(model)}: {attr} {getattr(decl, attr)!r} differs from "
                    f"{_name(models[0])}'s {getattr(first, attr)!r}; one CRD serves one kind"
                )
    versions = [d.version for d in declarations]
    if len(set(versions)) != len(versions):
        raise UnsupportedModelError(f"{names}: each model must declare a different version")
    stored = _storage_version(models, declarations, storage)
    entries = []
    for model, decl in zip(models, declarations, strict=True):
        entry: dict[str, Any] = {"name": decl.version, "served": decl.served}
        entry["storage"] = decl.version == stored
        if decl.deprecated:
            entry["deprecated"] = True
            if decl.deprecation_warning:
                entry["deprecationWarning"] = decl.deprecation_warning
        entry["schema"] = {
            "openAPIV3Schema": schema(
                model,
                builtin_descriptions=builtin_descriptions,
                embedded_object_meta=embedded_object_meta,
            )
        }
        subresources: dict[str, Any] = {}
        has_status = "status" in model.model_fields
        if decl.status_subresource or (decl.status_subresource is None and has_status):
            subresources["status"] = {}
        if decl.scale is not None:
            subresources["scale"] = decl.scale.to_schema()
        if subresources:
            entry["subresources"] = subresources
        if decl.printer_columns:
            entry["additionalPrinterColumns"] = [c.to_schema() for c in decl.printer_columns]
        if decl.selectable_fields:
            entry["selectableFields"] = [{"jsonPath": p} for p in decl.selectable_fields]
        entries.append(entry)
    # Newest first is kubectl's display order, but the CRD keeps the order given: deterministic.
    names_block: dict[str, Any] = {
        "kind": first.kind,
        "listKind": f"{first.kind}List",
        "plural": first.plural,
        "singular": first.singular,
    }
    short_names = _union(d.short_names for d in declarations)
    categories = _union(d.categories for d in declarations)
    if short_names:
        names_block["shortNames"] = short_names
    if categories:
        names_block["categories"] = categories
    spec: dict[str, Any] = {
        "group": first.group,
        "names": names_block,
        "scope": first.scope,
        "versions": entries,
    }
    if conversion is not None:
        spec["conversion"] = copy.deepcopy(dict(conversion))
    elif len(entries) > 1:
        spec["conversion"] = {"strategy": "None"}
    metadata: dict[str, Any] = {"name": f"{first.plural}.{first.group}"}
    for field, key in (("crd_annotations", "annotations"), ("crd_labels", "labels")):
        merged: dict[str, str] = {}
        for decl in declarations:
            merged.update(getattr(decl, field))
        if merged:
            metadata[key] = dict(sorted(merged.items()))
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": spec,
    }


def _union(groups: Iterator[tuple[str, ...]]) -> list[str]:
    out: list[str] = []
    for group in groups:
        out.extend(name for name in group if name not in out)
    return out


def _storage_version(
    models: Sequence[type[_resources.CustomResource]],
    declarations: Sequence[_resources.ResourceDeclaration],
    storage: type[_resources.CustomResource] | str | None,
) -> str:
    names = ", ".join(_name(m) for m in models)
    if storage is not None:
        wanted = storage if isinstance(storage, str) else _declaration(storage).version
        if wanted not in [d.version for d in declarations]:
            raise UnsupportedModelError(f"storage version {wanted!r} is not one of {names}")
        return wanted
    marked = [d.version for d in declarations if d.storage]
    if len(marked) == 1:
        return marked[0]
    if len(marked) > 1:
        raise UnsupportedModelError(
            f"{names}: several versions declare storage=True ({', '.join(marked)}); "
            "exactly one version is stored"
        )
    if len(declarations) == 1 and declarations[0].storage is None:
        return declarations[0].version
    raise UnsupportedModelError(
        f"{names}: no storage version; declare storage=True on one model or pass "
        "generate(..., storage=Model)"
    )


def to_yaml(crd: Mapping[str, Any]) -> str:
    """The CRD as YAML, keys in the order :func:`generate` builds them (deterministic).

    Example::

        >>> print(to_yaml({"apiVersion": "apiextensions.k8s.io/v1", "kind": "X"}), end="")
        apiVersion: apiextensions.k8s.io/v1
        kind: X
    """
    return yaml.safe_dump(dict(crd), sort_keys=False, default_flow_style=False, width=100)
