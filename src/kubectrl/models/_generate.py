"""A CustomResourceDefinition's structural schemas as a module of pydantic models."""

from __future__ import annotations

import dataclasses
import keyword
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic.alias_generators import to_camel, to_snake

from kubectrl import crd as _crd
from kubectrl import errors as _errors
from kubectrl import resources as _resources
from kubectrl.models import _render as r

__all__ = ["ModelGenerationError", "from_crd", "module_name"]


class ModelGenerationError(_errors.KubectrlError, ValueError):
    """The input is not a CustomResourceDefinition models can be generated from (not a CRD, no
    versions, a version without a schema, an unknown ``version``); the message names it."""


_MISSING: Any = object()

# Names the generated module imports or uses as types: a field or class with such a name would
# shadow them in the class body.
_RESERVED = frozenset(
    {
        "Annotated", "Any", "ConfigDict", "CustomResource", "EmbeddedResource", "Field",
        "Format", "IntOrString", "IntOrStringMarker", "ListType", "Literal", "MapType",
        "Nullable", "PreserveUnknownFields", "PrinterColumn", "Quantity", "ResourceModel",
        "Rule", "Scale", "bool", "dict", "float", "int", "list", "rules", "str",
    }
)  # fmt: skip
_MODEL_ATTRIBUTES = frozenset(dir(_resources.CustomResource))
_TOP_LEVEL = ("apiVersion", "kind", "metadata")
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
    return re.sub(r"\W", "_", name).lower()


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
    return spec


def _camel_class(text: str) -> str:
    words = re.split(r"[^0-9a-zA-Z]+", text)
    return "".join(w[:1].upper() + w[1:] for w in words if w)


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

    def use(self, module: str, name: str) -> str:
        self.imports.setdefault(module, set()).add(name)
        return name

    def class_name(self, wanted: str) -> str:
        name = wanted if wanted and not wanted[0].isdigit() else f"M{wanted}"
        if name in _RESERVED:
            name += "Model"
        candidate, n = name, 2
        while candidate in self.class_names:
            candidate, n = f"{name}{n}", n + 1
        self.class_names.add(candidate)
        return candidate


class _Generator:
    def __init__(self, module: _Module) -> None:
        self.module = module

    # --- nodes -----------------------------------------------------------------------------

    def node(self, schema: Mapping[str, Any], path: str, hint: str) -> _Typed:
        """The Python type of one schema node (never drops it: what it cannot express becomes
        ``Any``, kept by the server as preserve-unknown-fields, with a comment saying why)."""
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
        used: set[str] = set()
        for wire, prop in properties.items():
            if wire in skip:
                continue
            field_path = f"{path}.{wire}" if path else wire
            typed = self.node(prop, field_path, f"{hint}{_camel_class(wire)}")
            out.fields.append(
                self._field(wire, prop, typed, wire in required, used, set(properties))
            )
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
        used: set[str],
        wires: set[str],
    ) -> _FieldOut:
        name, alias = _python_name(wire, used, wires)
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
        return _FieldOut(name, annotation, default, str(doc or ""), typed.comments)

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
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, Mapping):
            raise ModelGenerationError(
                f"{definition.get('metadata', {}).get('name', '?')}: version "
                f"{version.get('name')!r} has no schema.openAPIV3Schema"
            )
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
        bases.extend((f"{key}=", value) for key, value in args.items())
        out = _ClassOut(name, bases, str(schema.get("description", "") or ""))
        rest = dict(schema)
        properties = rest.get("properties") or {}
        for top in _TOP_LEVEL:
            if top in properties and top == "metadata" and properties[top] != {"type": "object"}:
                out.comments.append(
                    "metadata: the CRD's schema for metadata is the server's own; "
                    "the model keeps ObjectMeta"
                )
        if rest.get("required"):
            rest["required"] = [q for q in rest["required"] if q not in _TOP_LEVEL]
        rest.pop("type", None)
        self._fill(out, rest, "", hint=name, skip=_TOP_LEVEL, use_site=False)
        if names.get("listKind", f"{kind}List") != f"{kind}List":
            out.comments.append(
                f"listKind {names['listKind']!r}: the CRD generator writes {kind}List"
            )
        self.module.classes.append(out)

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


def _flat_any(typed: _Typed) -> bool:
    """Whether a node is a bare ``Any`` (no markers, constraints or extras)."""
    return (
        typed.base == r.Atom("Any")
        and not typed.markers
        and not typed.constraints
        and not typed.extra
        and not typed.nullable
    )


def _python_name(wire: str, used: set[str], wires: set[str]) -> tuple[str, str | None]:
    """The attribute name of a property and the alias it needs (``None``: the automatic
    camelCase of the name is the property name, unambiguously).

    The name is never another property's wire name: models accept a field by its Python name
    too, so ``foo_bar`` for ``fooBar`` would also read the property ``foo_bar``."""
    name = to_snake(wire)
    name = re.sub(r"\W", "_", name).strip("_") or "field"
    if name[0].isdigit():
        name = f"f_{name}"
    if name.startswith("model_"):
        name = f"x_{name}"
    while (
        # Hard keywords only: soft keywords (match, case, type, _) are valid attribute names, and
        # 3.12 made `type` one, so checking them made the output depend on the Python version.
        keyword.iskeyword(name)
        or name in _RESERVED
        or name in _MODEL_ATTRIBUTES
        or name in used
        or (name in wires and name != wire)
    ):
        name += "_"
    used.add(name)
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
    versions = [v for v in spec["versions"] if isinstance(v, Mapping)]
    if not versions:
        raise ModelGenerationError("the CustomResourceDefinition has no versions")
    if version is not None:
        chosen = [v for v in versions if v.get("name") == version]
        if not chosen:
            known = ", ".join(str(v.get("name")) for v in versions)
            raise ModelGenerationError(f"no version {version!r} in the CRD (it has {known})")
        versions = chosen
    module = _Module()
    generator = _Generator(module)
    kind = _camel_class(spec["names"]["kind"])
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
            f"The CRD converts versions with strategy {strategy}: pass its spec.conversion to "
            "kubectrl.crd.generate(..., conversion=...) to write the same CRD back."
        )
    return _module_text(module, crd_name, notes)


_IMPORT_ORDER = ("typing", "pydantic", "kubectrl.resources")


def _module_text(module: _Module, crd_name: str, notes: list[str]) -> str:
    out: list[str] = []
    doc = (
        f"Models of the CustomResourceDefinition {crd_name}.\n\n"
        "Generated by ``python -m kubectrl models``; do not edit: regenerate from the CRD."
    )
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


def _class_lines(cls: _ClassOut) -> list[str]:
    out: list[str] = [f"# {c}" for c in cls.comments]
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
        body.extend(f"{r.INDENT}# {c}" for c in field.comments)
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
