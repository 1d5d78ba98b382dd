"""The validation every kind gets, and the helpers the strategies validate their kinds with.

Every kind: label keys and values (``apimachinery/pkg/api/validation/objectmeta.go``,
``util/validation``), annotations, finalizers and owner references
(:mod:`~kubectrl.apiserver._validation.metadata`), passed as often as the real server's
answer reports them (:func:`validate_object_meta`); names: RFC 1123 subdomains, or labels
where the strategy says so (:func:`name_causes`). What a kind checks of its own fields is its
strategy's (:mod:`kubectrl.apiserver._strategies`, with
:mod:`~kubectrl.apiserver._validation.kinds`); custom resources: their CRD schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._validation.metadata import (
    annotation_causes,
    kube_finalizer_names,
    qualified_name_errors,
    validate_metadata,
    validate_metadata_update,
)

__all__ = [
    "DNS_LABEL",
    "LABEL_MSG",
    "embedded_object_meta",
    "go_equal",
    "go_selector",
    "immutable_selector",
    "label_causes",
    "name_causes",
    "quote",
    "selector_matches",
    "template_meta",
    "validate_object_meta",
]

Cause = tuple[str, str, str]

_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
#: An RFC 1123 label.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
#: What is said of a value that is no RFC 1123 label.
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def quote(value: str) -> str:
    """A string as Go's ``%q`` shows it in a cause."""
    return json.dumps(value)


def label_causes(labels: Any, field: str = "metadata.labels") -> list[Cause]:
    """The causes of a map of labels at ``field``: keys qualified names, values label values."""
    causes: list[Cause] = []
    if not isinstance(labels, Mapping):
        return causes
    for key, value in labels.items():
        causes.extend(
            ("FieldValueInvalid", field, f"Invalid value: {quote(str(key))}: {error}")
            for error in qualified_name_errors(str(key))
        )
        text = "" if value is None else str(value)
        if len(text) > 63:
            causes.append(
                (
                    "FieldValueInvalid",
                    field,
                    f"Invalid value: {quote(text)}: must be no more than 63 bytes",
                )
            )
        elif not _VALUE.match(text):
            causes.append(
                ("FieldValueInvalid", field, f"Invalid value: {quote(text)}: {_VALUE_MSG}")
            )
    return causes


def go_selector(selector: Any) -> str:
    """A selector in a cause's message: JSON of the Go struct (its fields in declaration order,
    map keys sorted, empty ones left out), ``null`` for none."""
    if not isinstance(selector, Mapping):
        return "null"
    out: dict[str, Any] = {}
    if selector.get("matchLabels"):
        out["matchLabels"] = dict(sorted(dict(selector["matchLabels"]).items()))
    if selector.get("matchExpressions"):
        out["matchExpressions"] = selector["matchExpressions"]
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False)


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Whether a label selector (a ``LabelSelector`` object) selects ``labels``."""
    from kubectrl import labels as _labels_mod

    try:
        return _labels_mod.parse(dict(selector)).matches(
            {str(k): str(v) for k, v in labels.items()}
        )
    except (ValueError, TypeError):
        return False


def _metadata_update(meta: Mapping[str, Any], kube: bool, twice: bool) -> list[Cause]:
    """The metadata causes an update reports besides the strategy's ``ValidateObjectMeta``."""
    labels = meta.get("labels")
    update = [*label_causes(labels), *validate_metadata_update(meta)]
    # generic ValidateObjectMetaAccessorUpdate, and the strategy's ValidateObjectMetaUpdate (the
    # generic ValidateObjectMetaAccessor and the strategy's finalizer names are the create's)
    causes = [*update, *update]
    if twice and kube:  # the strategy's ValidateObjectMeta comes on top
        causes.extend(kube_finalizer_names(meta))
        causes.extend(label_causes(labels))
        causes.extend(validate_metadata(meta, kube_finalizers=False))
    return causes


def validate_object_meta(
    obj: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    *,
    kube_finalizers: bool,
    update_passes: int,
) -> list[Cause]:
    """The causes of an object's metadata (``old``: the stored object of an update).

    How often an update validates the new metadata (``staging/src/k8s.io/apiserver/pkg/
    registry/rest/update.go`` ``BeforeUpdate``): once with ``ValidateObjectMetaAccessor`` and
    once with ``ValidateObjectMetaAccessorUpdate`` (both generic), then by the kind's strategy:
    with ``ValidateObjectMetaUpdate`` alone (``update_passes`` 1) or also ``ValidateObjectMeta``
    (2). Each pass reports its causes again, as the real server's answer does. On a create the
    strategy's ``ValidateObjectMeta`` alone reports (the generic pass runs only when it
    passed). ``kube_finalizers``: the core API's finalizer names are checked (not by
    apimachinery's ``ValidateObjectMeta``).
    """
    meta = obj.get("metadata") or {}
    causes = label_causes(meta.get("labels"))
    causes.extend(validate_metadata(meta, kube_finalizers=kube_finalizers))
    if old is not None and update_passes:
        causes.extend(_metadata_update(meta, kube_finalizers, twice=update_passes == 2))
    return causes


def template_meta(template: Any, path: str) -> list[Cause]:
    """A pod template's labels and annotations (``ValidatePodTemplateSpec``: at
    ``<template>.labels`` and ``<template>.annotations``)."""
    meta = (template if isinstance(template, Mapping) else {}).get("metadata")
    if not isinstance(meta, Mapping):
        return []
    return [
        *label_causes(meta.get("labels"), f"{path}.labels"),
        *annotation_causes(meta, f"{path}.annotations"),
    ]


def _without_zero(value: Any) -> Any:
    if isinstance(value, Mapping):
        kept = {k: _without_zero(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", 0, False, {}, [])}
    if isinstance(value, list):
        return [_without_zero(v) for v in value]
    return value


def go_equal(a: Any, b: Any) -> bool:
    """Equal as Go structs (``apiequality.Semantic.DeepEqual``): a field left out is its zero
    value (the new object is compared before its zero values are written)."""
    return bool(_without_zero(a) == _without_zero(b))


def name_causes(name: str, *, label: bool) -> list[Cause]:
    """The causes of an object's name: missing, or not an RFC 1123 subdomain (``label``: not
    an RFC 1123 label, as a namespace's)."""
    if not name:
        return [
            (
                "FieldValueRequired",
                "metadata.name",
                "Required value: name or generateName is required",
            )
        ]
    pattern, message, limit = _DNS_SUBDOMAIN, _SUBDOMAIN_MSG, 253
    if label:
        pattern, message, limit = DNS_LABEL, LABEL_MSG, 63
    if len(name) > limit:
        message = f"must be no more than {limit} characters"
    if not pattern.match(name) or len(name) > limit:
        return [("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {message}')]
    return []


def immutable_selector(spec: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """A workload's or Job's ``spec.selector`` cannot change once set."""
    old_spec = old.get("spec") or {}
    if spec.get("selector") != old_spec.get("selector") and old_spec.get("selector") is not None:
        return [
            (
                "FieldValueInvalid",
                "spec.selector",
                f"Invalid value: {go_selector(spec.get('selector'))}: field is immutable",
            )
        ]
    return []


def _path_segment(value: str, *, prefix: bool) -> list[str]:
    """``ValidatePathSegmentName`` (k8s.io/apimachinery/pkg/api/validation/path/name.go)."""
    if not prefix and value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


def embedded_object_meta(meta: Mapping[str, Any], path: str) -> list[Cause]:
    """An embedded resource's ``metadata`` as ``schema/objectmeta`` validates it: apimachinery's
    ``ValidateObjectMeta`` with path-segment names (an empty name counts as set), a namespace
    checked only when given, no check of the core API's finalizer names."""
    causes: list[Cause] = []

    def bad(field: str, value: Any, message: str) -> None:
        causes.append(
            (
                "FieldValueInvalid",
                f"{path}.{field}",
                f"Invalid value: {json.dumps(value)}: {message}",
            )
        )

    generate = meta.get("generateName")
    if isinstance(generate, str) and generate:
        for message in _path_segment(generate, prefix=True):
            bad("generateName", generate, message)
    name = meta.get("name")
    if isinstance(name, str) and name:
        for message in _path_segment(name, prefix=False):
            bad("name", name, message)
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace:
        if len(namespace) > 63:
            bad("namespace", namespace, "must be no more than 63 characters")
        if not DNS_LABEL.match(namespace):
            bad("namespace", namespace, LABEL_MSG)
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        bad("generation", generation, "must be greater than or equal to 0")
    causes += label_causes(meta.get("labels"), f"{path}.labels")
    for kind, field, message in validate_metadata(meta, kube_finalizers=False):
        causes.append((kind, path + field.removeprefix("metadata"), message))
    return causes
