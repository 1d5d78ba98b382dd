"""A CustomResourceDefinition's structural schemas as a module of pydantic models."""

from __future__ import annotations

import ast
import dataclasses
import keyword
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from pydantic.alias_generators import to_camel, to_snake

from kubectrl import crd as _crd
from kubectrl import errors as _errors
from kubectrl import resources as _resources
from kubectrl.models import _render as r

__all__ = ["ModelGenerationError", "from_crd", "module_name"]


class ModelGenerationError(_errors.KubectrlError, ValueError):
    """The input is not a CustomResourceDefinition models can be generated from (not a CRD, no
    versions, a version without a schema, an unknown ``version``, a malformed or oversized
    schema); the message names the CRD and the field."""


# Bounds on a CRD read from a file or given as a value: how deep its JSON nests and how many JSON
# values it holds. The corpus (tests/data/crds, modelled on widely used operators' CRDs) nests at
# most 20 levels and its largest CRD has 7,020 values (generated in about 90 ms, so ~13 us a
# value); a CRD must fit in one kube-apiserver request (3 MiB) and one etcd object (1.5 MiB by
# default), which holds a few hundred thousand values at most. Deeper or larger is refused.
MAX_DEPTH = 128
MAX_NODES = 200_000
# The longest part of a class name taken from one property name (class names concatenate the
# names on the path, so a long name would be repeated in every class below it).
_MAX_HINT = 64
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NOT_IDENTIFIER_CHAR = re.compile(r"[^A-Za-z0-9_]")


_MISSING: Any = object()

# Names the generated module imports or uses as types: a field or class with such a name would
# shadow them in the class body.
_RESERVED = frozenset(
    {
        "Annotated", "Any", "ConfigDict", "CustomResource", "EmbeddedResource", "Field",
        "Format", "IntOrString", "IntOrStringMarker", "ListType", "Literal", "MapType",
        "Nullable", "ObjectMeta", "PreserveUnknownFields", "PrinterColumn", "Quantity",
        "ResourceModel", "Rule", "Scale", "bool", "dict", "float", "int", "list", "rules", "str",
    }
)  # fmt: skip
_MODEL_ATTRIBUTES = frozenset(dir(_resources.CustomResource))
_TOP_LEVEL = ("apiVersion", "kind", "metadata")
_TOP_LEVEL_FIELDS = ("api_version", "kind", "metadata")
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
_STRUCTURE = frozenset({"type", "properties", "items", "additionalProperties", "required"})
_EXTRA_KEYS = _crd._EXTRA_KEYS
# Keys of an object node that belong to the field using its model, not to the model.
_USE_SITE = frozenset(
    {
        "default",
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-map-type",
    }
)


def module_name(definition: Mapping[str, Any]) -> str:
    """The module a CRD's models are written to: ``<plural>_<group>`` as an identifier.

    Example::

        >>> module_name(
        ...     {"spec": {"group": "cert-manager.io", "names": {"plural": "issuers"},
        ...               "versions": []}}
        ... )
        'issuers_cert_manager_io'
    """
    spec = _spec(definition)
    name = f"{spec['names']['plural']}_{spec['group']}"
    # ASCII only: the name is a file name and a module name, never a path (no `/`, no `..`).
    return _NOT_IDENTIFIER_CHAR.sub("_", name).lower()


def _spec(definition: Mapping[str, Any]) -> Mapping[str, Any]:
    if not isinstance(definition, Mapping) or definition.get("kind") not in (
        "CustomResourceDefinition",
        None,
    ):
        kind = definition.get("kind") if isinstance(definition, Mapping) else type(definition)
        raise ModelGenerationError(f"expected a CustomResourceDefinition, got {kind!r}")
    spec = definition.get("spec")
    if not isinstance(spec, Mapping) or not all(k in spec for k in ("group", "names", "versions")):
        raise ModelGenerationError(
            "a CustomResourceDefinition needs spec.group, spec.names and spec.versions"
        )
    names = spec["names"]
    where = _crd_name(definition)
    for field, value in (
        ("spec.group", spec["group"]),
        ("spec.names.plural", names.get("plural") if isinstance(names, Mapping) else None),
    ):
        if not isinstance(value, str) or not value:
            raise ModelGenerationError(f"{where}: {field} must be a non-empty string")
    if not isinstance(spec["versions"], list):
        raise ModelGenerationError(f"{where}: spec.versions must be a list")
    return spec


def _crd_name(definition: Mapping[str, Any]) -> str:
    """The CRD's name for messages (escaped: it is untrusted text)."""
    metadata = definition.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        spec = definition.get("spec")
        names = spec.get("names") if isinstance(spec, Mapping) else None
        plural = names.get("plural") if isinstance(names, Mapping) else None
        group = spec.get("group") if isinstance(spec, Mapping) else None
        name = f"{plural}.{group}" if plural or group else "the CustomResourceDefinition"
    return _shown(name)


def _shown(value: Any) -> str:
    """Untrusted text as a message or a comment shows it: on one line, nothing invisible."""
    return r.comment(value) if isinstance(value, str) else repr(value)


def _camel_class(text: str) -> str:
    words = re.split(r"[^0-9a-zA-Z]+", unicodedata.normalize("NFKC", text))
    return "".join(w[:1].upper() + w[1:] for w in words if w)[:_MAX_HINT]


def _check_json(definition: Mapping[str, Any], where: str) -> None:
    """Refuse what is not JSON (NaN, infinities, non-string keys, YAML dates or bytes), nests
    deeper than MAX_DEPTH (a cycle does) or holds more than MAX_NODES values, naming the field.

    Iterative, so a deep or cyclic value cannot exhaust the stack; linear in the values walked.
    """
    stack: list[tuple[Any, tuple[Any, ...]]] = [(definition, ())]
    count = 0
    while stack:
        value, path = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise ModelGenerationError(
                f"{where}: more than {MAX_NODES} JSON values; refusing a CRD this large "
                "(a kube-apiserver request holds 3 MiB)"
            )
        if len(path) > MAX_DEPTH:
            raise ModelGenerationError(
                f"{where}: {_path_text(path[:8])}...: nested deeper than {MAX_DEPTH} levels "
                "(or a cycle); refusing it"
            )
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise ModelGenerationError(
                        f"{where}: {_path_text(path)}: key {_shown(key)} is not a string "
                        "(JSON keys are strings: quote it)"
                    )
                stack.append((item, (*path, key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, index)) for index, item in enumerate(value))
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise ModelGenerationError(
                    f"{where}: {_path_text(path)}: {value!r} is not a JSON number"
                )
        elif not (value is None or isinstance(value, (str, int, bool))):
            raise ModelGenerationError(
                f"{where}: {_path_text(path)}: {type(value).__name__} {_shown(value)} is not a "
                "JSON value (quote it to make it a string)"
            )


def _path_text(path: Sequence[Any]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out or "(the document)"


@dataclasses.dataclass
class _Typed:
    """One schema node as Python: the type, its Annotated markers, what goes in ``Field()``."""

    base: r.Expr
    markers: list[r.Expr] = dataclasses.field(default_factory=list)
    constraints: dict[str, r.Expr] = dataclasses.field(default_factory=dict)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    default: Any = _MISSING
    literal_default: bool = True  # the default can be the field's Python default
    nullable: bool = False
    comments: list[str] = dataclasses.field(default_factory=list)

    def annotation(self, module: _Module, *, with_default_extra: bool = False) -> r.Expr:
        markers = list(self.markers)
        kwargs = dict(self.constraints)
        extra = dict(self.extra)
        if with_default_extra and self.default is not _MISSING:
            extra["default"] = self.default
        if extra:
            kwargs["json_schema_extra"] = r.literal(extra)
        if kwargs:
            markers.insert(0, r.call(module.use("pydantic", "Field"), **kwargs))
        if self.nullable:
            markers.append(r.call(module.use("kubectrl.resources", "Nullable")))
        if not markers:
            return self.base
        return r.subscript(module.use("typing", "Annotated"), self.base, *markers)


@dataclasses.dataclass
class _FieldOut:
    name: str
    wire: str
    annotation: r.Expr
    default: r.Expr | None
    doc: str
    comments: list[str]


@dataclasses.dataclass
class _ClassOut:
    name: str
    bases: list[r.Item]
    doc: str
    rules: list[r.Expr] = dataclasses.field(default_factory=list)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    fields: list[_FieldOut] = dataclasses.field(default_factory=list)
    comments: list[str] = dataclasses.field(default_factory=list)


class _Module:
    def __init__(self) -> None:
        self.imports: dict[str, set[str]] = {}
        self.classes: list[_ClassOut] = []
        self.class_names: set[str] = set()
        self._next_class: dict[str, int] = {}

    def use(self, module: str, name: str) -> str:
        self.imports.setdefault(module, set()).add(name)
        return name

    def class_name(self, wanted: str) -> str:
        """A new class name from ``wanted`` (ASCII letters and digits): ``M`` before a digit,
        ``Model`` after a keyword (``None``) or a name the module uses, then ``2``, ``3``...
        until unused. The number to try next is kept per name, so n classes wanting one name
        take O(n) checks, not O(n^2)."""
        name = wanted if wanted and not wanted[0].isdigit() else f"M{wanted}"
        if name in _RESERVED or keyword.iskeyword(name):
            name += "Model"
        candidate = name
        if candidate in self.class_names:
            n = self._next_class.get(name, 2)
            while f"{name}{n}" in self.class_names:
                n += 1
            self._next_class[name] = n + 1
            candidate = f"{name}{n}"
        self.class_names.add(candidate)
        return candidate


class _FieldNames:
    """The attribute names of one class's fields, unique, found in linear time."""

    def __init__(self, wires: Sequence[str]) -> None:
        self.wires = frozenset(wires)
        self.used: set[str] = set()
        self._next: dict[str, int] = {}

    def _free(self, name: str, wire: str) -> bool:
        return not (
            # Hard keywords only: soft keywords (match, case, type, _) are valid attribute names,
            # and 3.12 made `type` one, so checking them made the output depend on the version.
            keyword.iskeyword(name)
            or name in _RESERVED
            or name in _MODEL_ATTRIBUTES
            or name in self.used
            # Models accept a field by its Python name too, so `foo_bar` for `fooBar` would
            # also read the property `foo_bar`.
            or (name in self.wires and name != wire)
        )

    def unique(self, base: str, wire: str) -> str:
        """``base``, else ``base_``, else ``base_2``, ``base_3``...: the first that is free. The
        number to try next is kept per base (a number taken once stays taken), so the checks
        are O(1) amortized per name: 8,000 names with one base make about 24,000, not 32 million
        as appending ``_`` until free did (with names 8,000 characters long)."""
        for candidate in (base, f"{base}_"):
            if self._free(candidate, wire):
                self.used.add(candidate)
                return candidate
        n = self._next.get(base, 2)
        while not self._free(f"{base}_{n}", wire):
            n += 1
        self._next[base] = n + 1
        self.used.add(f"{base}_{n}")
        return f"{base}_{n}"


class _Generator:
    def __init__(self, module: _Module, crd_name: str) -> None:
        self.module = module
        self.crd_name = crd_name
        #: Where the generator is (the version, the schema path): what an error names.
        self.version = ""
        self.where = ""

    def fail(self, problem: str, path: str | None = None) -> ModelGenerationError:
        where = self.where if path is None else path
        place = f"version {_shown(self.version)}: " if self.version else ""
        if where:
            place += f"{_shown(where)}: "
        return ModelGenerationError(f"{self.crd_name}: {place}{problem}")

    # --- nodes -----------------------------------------------------------------------------

    def node(self, schema: Mapping[str, Any], path: str, hint: str) -> _Typed:
        """The Python type of one schema node (never drops it: what it cannot express becomes
        ``Any``, kept by the server as preserve-unknown-fields, with a comment saying why)."""
        outer, self.where = self.where, path
        typed = self._node(schema, path, hint)
        self.where = outer  # not restored on an error: the error names the innermost node
        return typed

    def _node(self, schema: Mapping[str, Any], path: str, hint: str) -> _Typed:
        if isinstance(schema, Mapping):
            malformed = _malformed(schema)
            if malformed is not None:
                raise self.fail(malformed, path or "openAPIV3Schema")
        problem = self._inexpressible(schema)
        if problem is not None:
            return self._fallback(path, problem)
        rest = dict(schema)
        if rest.get("x-kubernetes-int-or-string"):
            typed = self._int_or_string(rest)
        elif "type" not in rest:
            rest.pop("x-kubernetes-preserve-unknown-fields", None)
            typed = _Typed(r.Atom(self.module.use("typing", "Any")))
        elif rest["type"] == "object":
            typed = self._object(rest, path, hint)
        elif rest["type"] == "array":
            items = self.node(rest.pop("items"), f"{path}[]", f"{hint}Item")
            typed = _Typed(r.subscript("list", self._item_annotation(items)))
            typed.comments.extend(items.comments)
            typed.literal_default = items.literal_default or rest.get("default") == []
            self._list_markers(rest, typed)
        else:
            typed = self._scalar(rest)
        rest.pop("type", None)
        self._common(rest, typed)
        return typed

    def _inexpressible(self, schema: Any) -> str | None:
        if not isinstance(schema, Mapping):
            return f"a schema node must be an object, not {schema!r}"
        known = _STRUCTURE | _EXTRA_KEYS | {"description"}
        unknown = sorted(k for k in schema if k not in known)
        if unknown:
            return f"{', '.join(unknown)} have no model construct"
        kind = schema.get("type")
        if schema.get("x-kubernetes-int-or-string"):
            if schema.get("anyOf") != [{"type": "integer"}, {"type": "string"}]:
                return "int-or-string without anyOf [integer, string]"
            if kind is not None:
                return "int-or-string with a type"
            return None
        if kind is None:
            if set(schema) & {"properties", "items", "additionalProperties"}:
                return "properties or items without a type"
            if not schema.get("x-kubernetes-preserve-unknown-fields"):
                return "no type and no x-kubernetes-preserve-unknown-fields"
            return None
        if kind not in ("object", "array", *_SCALARS):
            return f"type {kind!r}"
        if kind == "array" and not isinstance(schema.get("items"), Mapping):
            return "an array without a single items schema"
        if kind == "object":
            additional = schema.get("additionalProperties")
            if additional is not None and not isinstance(additional, Mapping):
                return f"additionalProperties: {additional!r}"
            if additional is not None and "properties" in schema:
                return "both properties and additionalProperties"
            if (
                schema.get("x-kubernetes-embedded-resource")
                and "properties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")
            ):
                return "an embedded resource without properties or preserve-unknown-fields"
        elif set(schema) & {"properties", "additionalProperties"}:
            return f"properties on a {kind}"
        if "enum" in schema and None in (schema.get("enum") or []):
            return "null in an enum"
        return None

    def _fallback(self, path: str, problem: str) -> _Typed:
        typed = _Typed(r.Atom(self.module.use("typing", "Any")))
        typed.literal_default = False
        typed.comments.append(
            f"{path}: {problem}; kept as any JSON (x-kubernetes-preserve-unknown-fields)"
        )
        return typed

    def _int_or_string(self, rest: dict[str, Any]) -> _Typed:
        rest.pop("x-kubernetes-int-or-string")
        rest.pop("anyOf")
        pattern = rest.pop("pattern", None)
        if pattern is None:
            return _Typed(r.Atom(self.module.use("kubectrl.resources", "IntOrString")))
        if pattern == _resources.QUANTITY_PATTERN:
            return _Typed(r.Atom(self.module.use("kubectrl.resources", "Quantity")))
        field = self.module.use("pydantic", "Field")
        text = r.subscript(
            self.module.use("typing", "Annotated"),
            r.Atom("str"),
            r.call(field, pattern=r.string(pattern)),
        )
        union = r.Union((r.Atom("int"), text))
        return _Typed(
            r.subscript(
                self.module.use("typing", "Annotated"),
                union,
                r.call(self.module.use("kubectrl.resources", "IntOrStringMarker")),
            )
        )

    def _scalar(self, rest: dict[str, Any]) -> _Typed:
        kind = rest["type"]
        python = _SCALARS[kind]
        enum = rest.get("enum")
        value_type = {"string": str, "integer": int, "boolean": bool}.get(kind)
        if (
            isinstance(enum, list)
            and enum
            and value_type is not None
            and all(type(v) is value_type for v in enum)
        ):
            rest.pop("enum")
            literal = self.module.use("typing", "Literal")
            typed = _Typed(r.subscript(literal, *(r.literal(v) for v in enum)))
        else:
            typed = _Typed(r.Atom(python))
        if kind in ("integer", "number"):
            self._bounds(rest, typed)
        if kind == "string":
            for key, arg in (("minLength", "min_length"), ("maxLength", "max_length")):
                if key in rest:
                    typed.constraints[arg] = r.literal(rest.pop(key))
            if "pattern" in rest:
                typed.constraints["pattern"] = r.string(rest.pop("pattern"))
        return typed

    def _bounds(self, rest: dict[str, Any], typed: _Typed) -> None:
        for key, flag, inclusive, exclusive in (
            ("minimum", "exclusiveMinimum", "ge", "gt"),
            ("maximum", "exclusiveMaximum", "le", "lt"),
        ):
            if key not in rest:
                continue
            if rest.get(flag) is True:
                typed.constraints[exclusive] = r.literal(rest.pop(key))
                rest.pop(flag)
            else:
                typed.constraints[inclusive] = r.literal(rest.pop(key))
        if "multipleOf" in rest:
            typed.constraints["multiple_of"] = r.literal(rest.pop("multipleOf"))

    def _list_markers(self, rest: dict[str, Any], typed: _Typed) -> None:
        for key, arg in (("minItems", "min_length"), ("maxItems", "max_length")):
            if key in rest:
                typed.constraints[arg] = r.literal(rest.pop(key))
        list_type = rest.get("x-kubernetes-list-type")
        keys = rest.get("x-kubernetes-list-map-keys")
        if list_type in ("atomic", "set") and keys is None:
            rest.pop("x-kubernetes-list-type")
            name = self.module.use("kubectrl.resources", "ListType")
            typed.markers.append(r.call(name, r.string(list_type)))
        elif list_type == "map" and isinstance(keys, list) and keys:
            rest.pop("x-kubernetes-list-type")
            rest.pop("x-kubernetes-list-map-keys")
            name = self.module.use("kubectrl.resources", "ListType")
            key_tuple = r.tuple_of([r.string(k) for k in keys])
            typed.markers.append(r.call(name, r.string("map"), keys=key_tuple))

    def _object(self, rest: dict[str, Any], path: str, hint: str) -> _Typed:
        if "properties" in rest:
            typed = _Typed(r.Atom(self._class(rest, path, hint)))
            typed.literal_default = False
            return typed
        if "additionalProperties" in rest:
            value = self.node(rest.pop("additionalProperties"), f"{path}{{}}", f"{hint}Value")
            if _flat_any(value):
                # dict[str, Any] would be any JSON object, not a map of any JSON values.
                marker = self.module.use("kubectrl.resources", "PreserveUnknownFields")
                value.markers.append(r.call(marker))
            typed = _Typed(r.subscript("dict", r.Atom("str"), self._item_annotation(value)))
            typed.comments.extend(value.comments)
            typed.literal_default = value.literal_default or rest.get("default") == {}
        elif rest.get("x-kubernetes-preserve-unknown-fields"):
            rest.pop("x-kubernetes-preserve-unknown-fields")
            typed = _Typed(
                r.subscript("dict", r.Atom("str"), r.Atom(self.module.use("typing", "Any")))
            )
        else:
            # {type: object} alone: an object whose content the server prunes; a model without
            # fields (unknown fields are still kept on the Python side).
            typed = _Typed(r.Atom(self._class(rest, path, hint)))
            typed.literal_default = False
            return typed
        for key, arg in (("minProperties", "min_length"), ("maxProperties", "max_length")):
            if key in rest:
                typed.constraints[arg] = r.literal(rest.pop(key))
        return typed

    def _common(self, rest: dict[str, Any], typed: _Typed) -> None:
        """Markers any node can carry; what is left goes to ``json_schema_extra``."""
        rest.pop("description", None)  # the field's or the model's docstring
        if "default" in rest:
            typed.default = rest.pop("default")
        if rest.pop("nullable", None) is True:
            typed.nullable = True
        if "format" in rest:
            name = self.module.use("kubectrl.resources", "Format")
            typed.markers.append(r.call(name, r.string(rest.pop("format"))))
        for key, marker in (
            ("x-kubernetes-preserve-unknown-fields", "PreserveUnknownFields"),
            ("x-kubernetes-embedded-resource", "EmbeddedResource"),
        ):
            if rest.get(key) is True:
                rest.pop(key)
                typed.markers.append(r.call(self.module.use("kubectrl.resources", marker)))
        if rest.get("x-kubernetes-map-type") in ("atomic", "granular"):
            name = self.module.use("kubectrl.resources", "MapType")
            typed.markers.append(r.call(name, r.string(rest.pop("x-kubernetes-map-type"))))
        for rule in rest.pop("x-kubernetes-validations", None) or []:
            typed.markers.append(self._rule(rule))
        typed.extra.update(rest)

    def _rule(self, rule: Mapping[str, Any]) -> r.Expr:
        kwargs: dict[str, r.Expr] = {}
        for key, arg in (
            ("message", "message"),
            ("messageExpression", "message_expression"),
            ("fieldPath", "field_path"),
            ("reason", "reason"),
        ):
            if rule.get(key):
                kwargs[arg] = r.string(rule[key])
        if rule.get("optionalOldSelf"):
            kwargs["optional_old_self"] = r.Atom("True")
        return r.call(
            self.module.use("kubectrl.resources", "Rule"), r.string(rule["rule"]), **kwargs
        )

    def _item_annotation(self, typed: _Typed) -> r.Expr:
        if typed.default is not _MISSING:
            typed.extra["default"] = typed.default
            typed.default = _MISSING
        annotation = typed.annotation(self.module)
        if typed.nullable:
            return r.Union((annotation, r.Atom("None")))
        return annotation

    # --- classes ---------------------------------------------------------------------------

    def _class(self, rest: dict[str, Any], path: str, hint: str) -> str:
        """A ResourceModel for an object node; the node's own rules and extras go on the class,
        its other markers on the field that uses it."""
        name = self.module.class_name(hint)
        base = r.Atom(self.module.use("kubectrl.resources", "ResourceModel"))
        out = _ClassOut(name, [base], str(rest.get("description", "") or ""))
        self._fill(out, rest, path, hint=name, skip=())
        self.module.classes.append(out)
        return name

    def _fill(
        self,
        out: _ClassOut,
        rest: dict[str, Any],
        path: str,
        *,
        hint: str,
        skip: Sequence[str],
        use_site: bool = True,
    ) -> None:
        properties: Mapping[str, Any] = rest.pop("properties", {}) or {}
        required = set(rest.pop("required", ()) or ())
        names = _FieldNames(list(properties))
        # The top level's apiVersion, kind and metadata are CustomResource's fields: a property
        # whose snake_case is one of their names gets another name.
        names.used.update(_TOP_LEVEL_FIELDS if skip else ())
        for wire, prop in properties.items():
            if wire in skip:
                continue
            field_path = f"{path}.{wire}" if path else wire
            typed = self.node(prop, field_path, f"{hint}{_camel_class(wire)}")
            out.fields.append(self._field(wire, prop, typed, wire in required, names))
        for rule in rest.pop("x-kubernetes-validations", None) or []:
            out.rules.append(self._rule(rule))
        keep = {"type", "description"} | (_USE_SITE if use_site else set())
        extra = {k: v for k, v in rest.items() if k not in keep}
        out.extra.update(extra)
        for key in extra:
            rest.pop(key)

    def _field(
        self,
        wire: str,
        prop: Mapping[str, Any],
        typed: _Typed,
        required: bool,
        names: _FieldNames,
    ) -> _FieldOut:
        name, alias = _python_name(wire, names)
        default: r.Expr | None = None
        literal_default = typed.default is not _MISSING and typed.literal_default and not required
        annotation = typed.annotation(
            self.module, with_default_extra=typed.default is not _MISSING and not literal_default
        )
        if typed.nullable or not (required or literal_default):
            annotation = r.Union((annotation, r.Atom("None")))
        value: r.Expr | None = None
        if literal_default:
            value = r.literal(typed.default)
        elif not required:
            value = r.Atom("None")
        if alias is not None:
            kwargs: dict[str, r.Expr] = {}
            if value is not None:
                kwargs["default"] = value
            kwargs["alias"] = r.string(alias)
            default = r.call(self.module.use("pydantic", "Field"), **kwargs)
        else:
            default = value
        doc = prop.get("description", "") if isinstance(prop, Mapping) else ""
        return _FieldOut(name, wire, annotation, default, str(doc or ""), typed.comments)

    # --- the custom resource ---------------------------------------------------------------

    def resource(
        self,
        definition: Mapping[str, Any],
        version: Mapping[str, Any],
        class_name: str,
        all_versions: int,
    ) -> None:
        spec = definition["spec"]
        names = spec["names"]
        self.version, self.where = "", ""
        schema = version.get("schema")
        schema = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
        if not isinstance(schema, Mapping):
            raise self.fail(f"version {version.get('name')!r} has no schema.openAPIV3Schema")
        self.version = version["name"]
        malformed = _malformed(schema)
        if malformed is not None:
            raise self.fail(malformed, "openAPIV3Schema")
        name = self.module.class_name(class_name)
        kind = names["kind"]
        bases: list[r.Item] = [r.Atom(self.module.use("kubectrl.resources", "CustomResource"))]
        args: dict[str, r.Expr] = {
            "group": r.string(spec["group"]),
            "version": r.string(version["name"]),
            "kind": r.string(kind),
            "plural": r.string(names["plural"]),
        }
        if names.get("singular") and names["singular"] != kind.lower():
            args["singular"] = r.string(names["singular"])
        if spec.get("scope", "Namespaced") != "Namespaced":
            args["scope"] = r.string(spec["scope"])
        for key, arg in (("shortNames", "short_names"), ("categories", "categories")):
            if names.get(key):
                args[arg] = r.tuple_of([r.string(v) for v in names[key]])
        columns = version.get("additionalPrinterColumns") or []
        if columns:
            args["printer_columns"] = r.tuple_of([self._column(c) for c in columns])
        subresources = version.get("subresources") or {}
        args["status_subresource"] = r.Atom(repr("status" in subresources))
        if "scale" in subresources:
            args["scale"] = self._scale(subresources["scale"])
        if not version.get("served", True):
            args["served"] = r.Atom("False")
        if version.get("storage") or all_versions > 1:
            args["storage"] = r.Atom(repr(bool(version.get("storage"))))
        if version.get("deprecated"):
            args["deprecated"] = r.Atom("True")
            if version.get("deprecationWarning"):
                args["deprecation_warning"] = r.string(version["deprecationWarning"])
        metadata = definition.get("metadata") or {}
        for key, arg in (("annotations", "crd_annotations"), ("labels", "crd_labels")):
            if metadata.get(key):
                args[arg] = r.literal(dict(sorted(metadata[key].items())))
        selectable = version.get("selectableFields") or []
        if selectable:
            args["selectable_fields"] = r.tuple_of([r.string(s["jsonPath"]) for s in selectable])
        rest = dict(schema)
        properties = rest.get("properties") or {}
        declared = tuple(top for top in _TOP_LEVEL if top in properties)
        if declared != _TOP_LEVEL:
            # A schema that leaves apiVersion, kind or metadata to the server (Istio's).
            args["meta_properties"] = r.tuple_of([r.string(top) for top in declared])
        bases.extend((f"{key}=", value) for key, value in args.items())
        out = _ClassOut(name, bases, str(schema.get("description", "") or ""))
        for top in declared:
            wanted = {"type": "object" if top == "metadata" else "string"}
            if {k: v for k, v in properties[top].items() if k != "description"} != wanted:
                out.comments.append(
                    f"{top}: the CRD's schema for {top} is the server's own; the model keeps "
                    + ("ObjectMeta" if top == "metadata" else "a string")
                )
        required = list(rest.get("required") or ())
        # A required apiVersion, kind or metadata (Argo Workflows' `required: [metadata, spec]`)
        # is the base class's field again without a default.
        out.fields.extend(self._required_top(top) for top in _TOP_LEVEL if top in required)
        if required:
            rest["required"] = [q for q in required if q not in _TOP_LEVEL]
        rest.pop("type", None)
        self._fill(out, rest, "", hint=name, skip=_TOP_LEVEL, use_site=False)
        if names.get("listKind", f"{kind}List") != f"{kind}List":
            out.comments.append(
                f"listKind {names['listKind']!r}: the CRD generator writes {kind}List"
            )
        self.module.classes.append(out)

    def _required_top(self, wire: str) -> _FieldOut:
        """The field of a required apiVersion, kind or metadata: CustomResource's own, with no
        default (apiVersion and kind are still filled from the class)."""
        if wire == "metadata":
            annotation = r.Atom(self.module.use("kubectrl.resources", "ObjectMeta"))
            return _FieldOut("metadata", wire, annotation, None, "", [])
        if wire == "kind":
            return _FieldOut("kind", wire, r.Atom("str"), None, "", [])
        alias = r.call(self.module.use("pydantic", "Field"), alias=r.string(wire))
        return _FieldOut("api_version", wire, r.Atom("str"), alias, "", [])

    def _column(self, column: Mapping[str, Any]) -> r.Expr:
        kwargs: dict[str, r.Expr] = {}
        for key in ("description", "format"):
            if column.get(key):
                kwargs[key] = r.string(column[key])
        if column.get("priority"):
            kwargs["priority"] = r.literal(column["priority"])
        return r.call(
            self.module.use("kubectrl.resources", "PrinterColumn"),
            r.string(column["name"]),
            r.string(column["type"]),
            r.string(column["jsonPath"]),
            **kwargs,
        )

    def _scale(self, scale: Mapping[str, Any]) -> r.Expr:
        kwargs: dict[str, r.Expr] = {
            "spec_replicas_path": r.string(scale.get("specReplicasPath", "")),
            "status_replicas_path": r.string(scale.get("statusReplicasPath", "")),
        }
        if scale.get("labelSelectorPath"):
            kwargs["label_selector_path"] = r.string(scale["labelSelectorPath"])
        return r.call(self.module.use("kubectrl.resources", "Scale"), **kwargs)


_NUMBERS = ("minimum", "maximum", "multipleOf")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
_FLAGS = (
    "exclusiveMinimum",
    "exclusiveMaximum",
    "nullable",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
)
_TEXTS = ("type", "format", "pattern", "description", "x-kubernetes-list-type")
_RULE_TEXTS = ("rule", "message", "messageExpression", "fieldPath", "reason")


def _malformed(schema: Mapping[str, Any]) -> str | None:
    """What in a schema node the generator reads is not the JSON type the API defines (the
    kube-apiserver refuses such a CRD; the generator says so rather than guess), or ``None``."""
    for key in _TEXTS:
        if key in schema and not isinstance(schema[key], str):
            return f"{key} must be a string, not {_shown(schema[key])}"
    for key in _NUMBERS:
        value = schema.get(key)
        if key in schema and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return f"{key} must be a number, not {_shown(value)}"
    for key in _COUNTS:
        value = schema.get(key)
        if key in schema and (isinstance(value, bool) or not isinstance(value, int)):
            return f"{key} must be an integer, not {_shown(value)}"
    for key in _FLAGS:
        if key in schema and not isinstance(schema[key], bool):
            return f"{key} must be true or false, not {_shown(schema[key])}"
    if "properties" in schema and not isinstance(schema["properties"], Mapping):
        return "properties must be an object"
    for key in ("required", "x-kubernetes-list-map-keys"):
        value = schema.get(key)
        if key in schema and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            return f"{key} must be a list of strings"
    if "enum" in schema and not isinstance(schema["enum"], list):
        return "enum must be a list"
    rules = schema.get("x-kubernetes-validations")
    if "x-kubernetes-validations" in schema and not (
        isinstance(rules, list)
        and all(
            isinstance(rule, Mapping)
            and isinstance(rule.get("rule"), str)
            and all(isinstance(rule.get(k, ""), str) for k in _RULE_TEXTS)
            and isinstance(rule.get("optionalOldSelf", False), bool)
            for rule in rules
        )
    ):
        return "x-kubernetes-validations must be a list of {rule: string, ...}"
    return None


def _flat_any(typed: _Typed) -> bool:
    """Whether a node is a bare ``Any`` (no markers, constraints or extras)."""
    return (
        typed.base == r.Atom("Any")
        and not typed.markers
        and not typed.constraints
        and not typed.extra
        and not typed.nullable
    )


def _python_name(wire: str, names: _FieldNames) -> tuple[str, str | None]:
    """The attribute name of a property and the alias it needs (``None``: the automatic
    camelCase of the name is the property name, unambiguously).

    The name is ASCII: Python reads identifiers after NFKC normalisation, so a fullwidth
    ``replicas`` (U+FF52...) written as an attribute *is* ``replicas`` (it replaced that field)
    and a mathematical-bold ``model_config`` (U+1D426...) is ``model_config``. The property name
    is normalised first (so the fullwidth ``replicas`` becomes ``replicas_``, aliased), anything
    left that is not an ASCII letter, digit or ``_`` becomes ``_``, and the JSON name stays exact
    in ``alias=``.
    The name is never a keyword, a name the module uses, a pydantic attribute (``model_*``,
    ``copy``, ``dict``...), another field's name or another property's wire name."""
    name = to_snake(unicodedata.normalize("NFKC", wire))
    name = _NOT_IDENTIFIER_CHAR.sub("_", name).strip("_") or "field"
    if name[0].isdigit():
        name = f"f_{name}"
    if name.startswith("model_"):
        name = f"x_{name}"
    name = names.unique(name, wire)
    automatic = to_camel(name)
    ambiguous = _crd._ambiguous_initialism(name) is not None
    if automatic == wire and not (ambiguous and automatic != name):
        return name, None
    return name, wire


def from_crd(definition: Mapping[str, Any], *, version: str | None = None) -> str:
    """The Python module (source text) of a CRD's models.

    One :class:`~kubectrl.resources.CustomResource` subclass per version (named after the kind,
    plus the version when there are several), with the version's group, kind, plural, scope,
    short names, categories, printer columns, subresources and selectable fields, and a
    :class:`~kubectrl.resources.ResourceModel` per object node of its schema; descriptions are
    docstrings. ``kubectrl.crd.generate`` of the classes gives back the CRD (modulo key order and
    descriptions). ``version`` keeps one version only.

    Example::

        >>> text = from_crd({
        ...     "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        ...     "spec": {"group": "example.com", "scope": "Namespaced",
        ...              "names": {"kind": "Gizmo", "plural": "gizmos"},
        ...              "versions": [{"name": "v1", "served": True, "storage": True,
        ...                            "schema": {"openAPIV3Schema": {"type": "object"}}}]}})
        >>> "class Gizmo(" in text
        True
    """
    spec = _spec(definition)
    where = _crd_name(definition)
    _check_json(definition, where)
    if not isinstance(spec["names"].get("kind"), str) or not spec["names"]["kind"]:
        raise ModelGenerationError(f"{where}: spec.names.kind must be a non-empty string")
    versions = spec["versions"]
    for index, entry in enumerate(versions):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise ModelGenerationError(f"{where}: spec.versions[{index}] has no name")
    if not versions:
        raise ModelGenerationError(f"{where}: the CustomResourceDefinition has no versions")
    if version is not None:
        chosen = [v for v in versions if v.get("name") == version]
        if not chosen:
            known = ", ".join(_shown(v["name"]) for v in versions)
            raise ModelGenerationError(f"no version {version!r} in the CRD (it has {known})")
        versions = chosen
    module = _Module()
    generator = _Generator(module, where)
    kind = _camel_class(spec["names"]["kind"])
    try:
        for entry in versions:
            name = kind if len(versions) == 1 else f"{kind}{_camel_class(entry['name'])}"
            generator.resource(definition, entry, name, len(versions))
        crd_name = (definition.get("metadata") or {}).get("name") or (
            f"{spec['names']['plural']}.{spec['group']}"
        )
        notes: list[str] = []
        strategy = (spec.get("conversion") or {}).get("strategy", "None")
        if strategy != "None":
            notes.append(
                f"The CRD converts versions with strategy {strategy}: pass its spec.conversion "
                "to kubectrl.crd.generate(..., conversion=...) to write the same CRD back."
            )
        text = _module_text(module, str(crd_name), notes)
    except ModelGenerationError:
        raise
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        # A CRD the kube-apiserver would refuse, in a way no check above names: still an error
        # naming the CRD and the field, not a traceback.
        problem = f"cannot generate models: {type(exc).__name__}: {_shown(str(exc))}"
        raise generator.fail(problem) from exc
    _verify(text, module, where)
    return text


_IMPORT_ORDER = ("typing", "pydantic", "kubectrl.resources")
#: The line of a generated module's docstring that says the generator wrote it: ``--out`` only
#: overwrites a file whose docstring has it.
MARKER = "Generated by ``python -m kubectrl models``; do not edit: regenerate from the CRD."


def written_by_generator(path: str | Path) -> bool:
    """Whether the file at ``path`` is a module the generator wrote (its docstring has the
    :data:`MARKER` line); ``False`` for anything else, including a file that does not parse."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return False
    doc = ast.get_docstring(tree, clean=False)
    return doc is not None and MARKER in doc.splitlines()


def _module_text(module: _Module, crd_name: str, notes: list[str]) -> str:
    out: list[str] = []
    doc = f"Models of the CustomResourceDefinition {crd_name}.\n\n{MARKER}"
    if notes:
        doc += "\n\n" + "\n".join(notes)
    out.extend(r.docstring(doc, 0))
    out.append("")
    rules_used = any(c.rules for c in module.classes)
    if rules_used:
        module.use("kubectrl.resources", "rules")
    if any(c.extra for c in module.classes):
        module.use("pydantic", "ConfigDict")
    groups = [
        ("typing",),
        ("pydantic",),
        ("kubectrl.resources",),
    ]
    for group in groups:
        for name in group:
            if name not in module.imports:
                continue
            # isort's order: CONSTANTS, Classes, functions.
            names = sorted(
                module.imports[name],
                key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n),
            )
            head = f"from {name} import "
            statement = head + ", ".join(names)
            if len(statement) <= r.LINE_LENGTH:
                out.append(statement)
            else:
                out.append(head + "(")
                out.extend(f"{r.INDENT}{n}," for n in names)
                out.append(")")
            out.append("")
    for cls in module.classes:
        out.append("")
        out.extend(_class_lines(cls))
        out.append("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


# What a generated module's expressions may be made of: literals, the names it imports or defines,
# calls of the imported names, subscripts, `A | B` and `-1`. No attribute access, no lambda, no
# comprehension, no operator but `|` and unary `-`.
_EXPRESSION_NODES = (
    ast.Constant, ast.Name, ast.Call, ast.keyword, ast.Subscript, ast.Tuple, ast.List, ast.Dict,
    ast.BinOp, ast.BitOr, ast.UnaryOp, ast.USub, ast.Load,
)  # fmt: skip
_BUILTIN_TYPES = frozenset({"bool", "dict", "float", "int", "list", "str", "None"})


def _verify(text: str, module: _Module, crd: str) -> None:
    """Refuse a module that is not exactly what the generator meant to write: it must parse,
    hold the docstring, the imports and the classes and nothing else at the top level, each
    class its docstring, ``model_config`` when it has one, and its fields (with their
    docstrings) and nothing else, under the names intended (Python reads names NFKC-normalised:
    a name that changes on normalisation does not match), with expressions made only of
    literals, those names and calls of the imported names. Escaping makes this hold; the check
    makes sure of it, so a CRD can never put code in its models."""

    def refuse(problem: str, cls: _ClassOut | None = None, field: str | None = None) -> NoReturn:
        place = ""
        if cls is not None:
            place = f" in class {cls.name}"
            if field is not None:
                place += f" at the field for property {field!r}"
        raise ModelGenerationError(
            f"{crd}: refusing the generated module{place}: {problem} (a generator bug or a "
            "CRD written to inject code)"
        )

    try:
        tree = ast.parse(text.encode("utf-8"))
    except (SyntaxError, ValueError, UnicodeError) as exc:
        refuse(f"it does not parse ({type(exc).__name__}: {_shown(str(exc))})")
    imported = {name for names in module.imports.values() for name in names}
    classes = {cls.name for cls in module.classes}
    known = imported | classes | _BUILTIN_TYPES

    def check_expression(expr: ast.AST, cls: _ClassOut | None, field: str | None) -> None:
        for node in ast.walk(expr):
            if not isinstance(node, _EXPRESSION_NODES):
                refuse(f"unexpected {type(node).__name__} in an expression", cls, field)
            if isinstance(node, ast.Name) and node.id not in known:
                refuse(f"unknown name {_shown(node.id)}", cls, field)
            if isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name) and node.func.id in imported
            ):
                refuse("a call of something the module does not import", cls, field)
            if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.BitOr):
                refuse("an operator other than |", cls, field)
            if isinstance(node, ast.keyword) and node.arg is None:
                refuse("a ** argument", cls, field)

    def is_docstring(stmt: ast.stmt) -> bool:
        return (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        )

    body = list(tree.body)
    if body and is_docstring(body[0]):
        body.pop(0)
    imports = [s for s in body if isinstance(s, ast.ImportFrom)]
    wanted_imports = {name: sorted(names) for name, names in module.imports.items()}
    found_imports = {
        s.module or "": sorted(a.name for a in s.names if a.asname is None and s.level == 0)
        for s in imports
    }
    if body[: len(imports)] != imports or found_imports != wanted_imports:
        refuse("its imports are not the generator's")
    definitions = body[len(imports) :]
    if len(definitions) != len(module.classes):
        refuse("the top level holds other statements than the classes")
    for stmt, cls in zip(definitions, module.classes, strict=True):
        if not isinstance(stmt, ast.ClassDef) or stmt.name != cls.name:
            refuse("the top level holds other statements than the classes", cls)
        _verify_class(stmt, cls, refuse, check_expression, is_docstring)


def _verify_class(
    stmt: ast.ClassDef,
    cls: _ClassOut,
    refuse: Callable[..., NoReturn],
    check_expression: Callable[[ast.AST, _ClassOut | None, str | None], None],
    is_docstring: Callable[[ast.stmt], bool],
) -> None:
    decorators = ["rules"] if cls.rules else []
    found = [
        d.func.id
        for d in stmt.decorator_list
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Name)
    ]
    if found != decorators or len(stmt.decorator_list) != len(decorators):
        refuse("its decorators are not the generator's", cls)
    for expr in [*stmt.decorator_list, *stmt.bases, *stmt.keywords]:
        check_expression(expr, cls, None)
    body = list(stmt.body)
    if body and is_docstring(body[0]):
        body.pop(0)
    if cls.extra:
        config = body.pop(0) if body else None
        if not (
            isinstance(config, ast.Assign)
            and len(config.targets) == 1
            and isinstance(config.targets[0], ast.Name)
            and config.targets[0].id == "model_config"
        ):
            refuse("model_config is not where the generator puts it", cls)
        check_expression(config.value, cls, None)
    fields = iter(cls.fields)
    if not cls.fields and len(body) == 1 and isinstance(body[0], ast.Pass):
        return
    expected = next(fields, None)
    for index, item in enumerate(body):
        wire = expected.wire if expected is not None else None
        if isinstance(item, ast.AnnAssign) and expected is not None:
            target = item.target
            if not (isinstance(target, ast.Name) and target.id == expected.name and item.simple):
                refuse("a field's name is not the one intended", cls, wire)
            check_expression(item.annotation, cls, wire)
            if item.value is not None:
                check_expression(item.value, cls, wire)
            expected = next(fields, None)
        elif not (is_docstring(item) and index > 0 and isinstance(body[index - 1], ast.AnnAssign)):
            refuse(f"an unexpected {type(item).__name__} statement", cls, wire)
    if expected is not None:
        refuse("a field is missing", cls, expected.wire)


def _class_lines(cls: _ClassOut) -> list[str]:
    # Comments carry schema text (property names, unknown keys): escaped onto one line.
    out: list[str] = [f"# {r.comment(c)}" for c in cls.comments]
    if cls.rules:
        out.extend(_prefixed("@", r.call("rules", *cls.rules), 0, ""))
    header = r.Group(f"class {cls.name}", "(", ")", tuple(cls.bases))
    out.extend(_prefixed("", header, 0, ":"))
    body: list[str] = []
    if cls.doc.strip():
        body.extend(r.docstring(cls.doc, 1))
        body.append("")
    if cls.extra:
        config = r.call("ConfigDict", json_schema_extra=r.literal(cls.extra))
        body.extend(_prefixed(f"{r.INDENT}model_config = ", config, 1, ""))
        body.append("")
    for field in cls.fields:
        body.extend(f"{r.INDENT}# {r.comment(c)}" for c in field.comments)
        body.extend(_field_lines(field))
        if field.doc.strip():
            body.extend(r.docstring(field.doc, 1))
    while body and body[-1] == "":
        body.pop()
    if not body:
        body = [f"{r.INDENT}pass"]
    out.extend(body)
    return out


def _prefixed(prefix: str, expr: r.Item, indent: int, suffix: str) -> list[str]:
    laid = r.lines(expr, indent, len(prefix), len(suffix))
    laid[0] = prefix + laid[0]
    laid[-1] += suffix
    return laid


def _field_lines(field: _FieldOut) -> list[str]:
    head = f"{r.INDENT}{field.name}: "
    tail = "" if field.default is None else " = " + r.flat(field.default)
    one = head + r.flat(field.annotation) + tail
    if len(one) <= r.LINE_LENGTH:
        return [one]
    if field.default is not None and len(head + r.flat(field.annotation) + " = ") < r.LINE_LENGTH:
        # ruff splits the right-hand side first when the annotation fits.
        value = r.lines(field.default, 1, len(head + r.flat(field.annotation) + " = "), 0)
        if len(value) > 1:
            value[0] = head + r.flat(field.annotation) + " = " + value[0]
            return value
    if isinstance(field.annotation, r.Union):
        # ruff parenthesizes a long union and splits it at its operators.
        inner = r.flat(field.annotation)
        pad = r.INDENT * 2
        if len(pad + inner) <= r.LINE_LENGTH:
            return [head + "(", pad + inner, f"{r.INDENT}){tail}"]
        out = [head + "("]
        for index, member in enumerate(field.annotation.members):
            sep = "" if index == 0 else "| "
            laid = r.lines(member, 2, len(pad + sep), 0)
            out.append(pad + sep + laid[0])
            out.extend(laid[1:])
        out.append(f"{r.INDENT}){tail}")
        return out
    return _prefixed(head, field.annotation, 1, tail)
