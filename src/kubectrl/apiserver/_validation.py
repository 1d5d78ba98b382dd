"""The built-in validation the API core applies (a subset of ``pkg/apis/*/validation``).

Every kind: label keys and values (``apimachinery/pkg/api/validation/objectmeta.go``,
``util/validation``), annotations, finalizers and owner references
(:mod:`~kubectrl.apiserver._metadata`); the built-in kinds' own fields:
:mod:`~kubectrl.apiserver._builtin_validation`. ConfigMaps and Secrets: ``immutable: true``
freezes data and the flag.
Workloads (Deployment, ReplicaSet, StatefulSet, DaemonSet): ``spec.selector`` is required, must
match the template's labels and cannot change; a Job's selector cannot change either. Names:
RFC 1123 labels for namespaces, subdomains for the rest; custom resources: their CRD schema.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver import _schema
from kubectrl.apiserver._builtin_quantity import parse_quantity
from kubectrl.apiserver._builtin_types import object_meta_problem
from kubectrl.apiserver._builtin_validation import validate_kind
from kubectrl.apiserver._defaults import defaults
from kubectrl.apiserver._metadata import (
    annotation_causes,
    kube_finalizer_names,
    qualified_name_errors,
    validate_metadata,
    validate_metadata_update,
)
from kubectrl.apiserver._resources import ResourceInfo
from kubectrl.apiserver._status import bad_request, invalid

__all__ = ["ephemeral_containers_update", "validate", "validate_custom", "validate_name"]

Cause = tuple[str, str, str]

_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_IMMUTABLE_DATA = {("", "configmaps"): ("data", "binaryData"), ("", "secrets"): ("data",)}
_WORKLOADS = {
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
}


def _quote(value: str) -> str:
    return json.dumps(value)


def _labels(labels: Any, field: str = "metadata.labels") -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(labels, Mapping):
        return causes
    for key, value in labels.items():
        causes.extend(
            ("FieldValueInvalid", field, f"Invalid value: {_quote(str(key))}: {error}")
            for error in qualified_name_errors(str(key))
        )
        text = "" if value is None else str(value)
        if len(text) > 63:
            causes.append(
                (
                    "FieldValueInvalid",
                    field,
                    f"Invalid value: {_quote(text)}: must be no more than 63 bytes",
                )
            )
        elif not _VALUE.match(text):
            causes.append(
                ("FieldValueInvalid", field, f"Invalid value: {_quote(text)}: {_VALUE_MSG}")
            )
    return causes


def _go_selector(selector: Any) -> str:
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


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    from kubectrl import labels as _labels_mod

    try:
        return _labels_mod.parse(dict(selector)).matches(
            {str(k): str(v) for k, v in labels.items()}
        )
    except (ValueError, TypeError):
        return False


# How often an update validates the new metadata (``staging/src/k8s.io/apiserver/pkg/registry/
# rest/update.go`` ``BeforeUpdate``): once with ``ValidateObjectMetaAccessor`` and once with
# ``ValidateObjectMetaAccessorUpdate`` (both generic), then by the kind's strategy: with
# ``ValidateObjectMetaUpdate`` alone (_META_ONCE) or also ``ValidateObjectMeta`` (_META_TWICE).
# Each pass reports its causes again, as the real server's answer does. On a create the
# strategy's ``ValidateObjectMeta`` alone reports (the generic pass runs only when it passed).
_META_ONCE = {
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("batch", "cronjobs"),
    ("", "services"),
    ("coordination.k8s.io", "leases"),
}
_META_TWICE = {
    ("", "configmaps"),
    ("", "secrets"),
    ("", "serviceaccounts"),
    ("", "pods"),
    ("", "persistentvolumeclaims"),
    ("batch", "jobs"),
    ("networking.k8s.io", "ingresses"),
    ("rbac.authorization.k8s.io", "roles"),
    ("rbac.authorization.k8s.io", "rolebindings"),
}
# Kinds validated with apimachinery's ValidateObjectMeta, without the core finalizer-name check.
_GENERIC_META = {("coordination.k8s.io", "leases")}


def _metadata_update(info: ResourceInfo, meta: Mapping[str, Any], kube: bool) -> list[Cause]:
    """The metadata causes an update reports besides the strategy's ``ValidateObjectMeta``."""
    labels = meta.get("labels")
    update = [*_labels(labels), *validate_metadata_update(meta)]
    # generic ValidateObjectMetaAccessorUpdate, and the strategy's ValidateObjectMetaUpdate (the
    # generic ValidateObjectMetaAccessor and the strategy's finalizer names are the create's)
    causes = [*update, *update]
    if info.key in _META_TWICE and kube:  # the strategy's ValidateObjectMeta comes on top
        causes.extend(kube_finalizer_names(meta))
        causes.extend(_labels(labels))
        causes.extend(validate_metadata(meta, kube_finalizers=False))
    return causes


def _template_meta(template: Any, path: str) -> list[Cause]:
    """A pod template's labels and annotations (``ValidatePodTemplateSpec``: at
    ``<template>.labels`` and ``<template>.annotations``)."""
    meta = (template if isinstance(template, Mapping) else {}).get("metadata")
    if not isinstance(meta, Mapping):
        return []
    return [
        *_labels(meta.get("labels"), f"{path}.labels"),
        *annotation_causes(meta, f"{path}.annotations"),
    ]


def _workload_selector(resource: str, spec: Mapping[str, Any]) -> list[Cause]:
    """A workload's selector against its template's labels, as ``pkg/apis/apps/validation``:
    a missing selector is required (but a DaemonSet's) and selects nothing, so the template's
    labels never match it; an empty one is invalid and selects everything (the match is then not
    checked, but a DaemonSet's); one that does not parse leaves the template unchecked."""
    causes: list[Cause] = []
    selector = spec.get("selector")
    template = spec.get("template")
    raw_labels = ((template if isinstance(template, Mapping) else {}).get("metadata") or {}).get(
        "labels"
    )
    template_labels: Mapping[str, Any] = raw_labels if isinstance(raw_labels, Mapping) else {}
    singular = resource[:-1]
    if selector is None and resource != "daemonsets":
        causes.append(("FieldValueRequired", "spec.selector", "Required value"))
    empty = isinstance(selector, Mapping) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    )
    if empty:
        causes.append(
            (
                "FieldValueInvalid",
                "spec.selector",
                f"Invalid value: {_go_selector(selector)}: empty selector is invalid for "
                f"{singular}",
            )
        )
    match_labels = selector.get("matchLabels") if isinstance(selector, Mapping) else None
    bad = _labels(match_labels, "spec.selector.matchLabels")
    if bad:  # ValidateLabelSelector; LabelSelectorAsSelector fails: no template check
        causes.extend(bad)
        if resource != "daemonsets":
            detail = "" if resource == "statefulsets" else ": invalid label selector"
            causes.append(
                (
                    "FieldValueInvalid",
                    "spec.selector",
                    f"Invalid value: {_go_selector(selector)}{detail}",
                )
            )
        return causes
    if resource != "daemonsets":  # the template is validated once the selector parsed
        causes.extend(_template_meta(template, "spec.template"))
        if resource == "statefulsets":  # ValidatePodTemplateSpecForStatefulSet, then the spec's
            causes.extend(_template_meta(template, "spec.template"))
    if empty and resource != "daemonsets":  # selects everything: nothing to match
        return causes
    matches = selector is not None and (
        empty
        or _selector_matches(selector if isinstance(selector, Mapping) else {}, template_labels)
    )
    if not matches:
        shown = ", ".join(
            f"{_quote(k)}:{_quote(str(v))}" for k, v in sorted(template_labels.items())
        )
        value = (
            f"map[string]string{{{shown}}}"
            if raw_labels is not None
            else ("map[string]string(nil)")
        )
        causes.append(
            (
                "FieldValueInvalid",
                "spec.template.metadata.labels",
                f"Invalid value: {value}: `selector` does not match template `labels`",
            )
        )
    return causes


def validate(
    info: ResourceInfo, new: Mapping[str, Any], old: Mapping[str, Any] | None
) -> list[Cause]:
    """The causes (type, field, message) this write violates; empty when it is valid."""
    meta = new.get("metadata") or {}
    kube = info.key not in _GENERIC_META
    causes = _labels(meta.get("labels"))
    causes.extend(validate_metadata(meta, kube_finalizers=kube))
    if old is not None and not info.crd and info.key in _META_ONCE | _META_TWICE:
        causes.extend(_metadata_update(info, meta, kube))
    if not info.crd:
        causes.extend(validate_kind(info.key, new))
    fields = _IMMUTABLE_DATA.get(info.key)
    if fields and old is not None and old.get("immutable") is True:
        for field in fields:
            if new.get(field) != old.get(field):
                causes.append(
                    (
                        "FieldValueForbidden",
                        field,
                        "Forbidden: field is immutable when `immutable` is set",
                    )
                )
        if new.get("immutable") is not True:
            causes.append(
                (
                    "FieldValueForbidden",
                    "immutable",
                    "Forbidden: field is immutable when `immutable` is set",
                )
            )
    raw_spec = new.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    if info.key == ("", "services"):  # ValidateService: the selector's keys and values
        causes.extend(_labels(spec.get("selector"), "spec.selector"))
    if info.key in (("apps", "daemonsets"), ("batch", "jobs")):
        causes.extend(_template_meta(spec.get("template"), "spec.template"))
    elif info.key == ("batch", "cronjobs"):
        job = spec.get("jobTemplate")
        job_spec = (job if isinstance(job, Mapping) else {}).get("spec")
        template = (job_spec if isinstance(job_spec, Mapping) else {}).get("template")
        causes.extend(_template_meta(template, "spec.jobTemplate.spec.template"))
    if info.key in _WORKLOADS:
        causes.extend(_workload_selector(info.key[1], spec))
    if info.key == ("apps", "statefulsets") and old is not None:
        causes.extend(_stateful_set_update(spec, old))
    elif (info.key in _WORKLOADS or info.key == ("batch", "jobs")) and old is not None:
        old_spec = old.get("spec") or {}
        if (
            spec.get("selector") != old_spec.get("selector")
            and old_spec.get("selector") is not None
        ):
            causes.append(
                (
                    "FieldValueInvalid",
                    "spec.selector",
                    f"Invalid value: {_go_selector(spec.get('selector'))}: field is immutable",
                )
            )
    if info.key == ("batch", "jobs") and old is not None:
        causes.extend(_job_update(new, old))
    binding = info.key[1] in ("rolebindings", "clusterrolebindings")
    # ValidateRoleBindingUpdate: the role a binding grants cannot change
    if binding and old is not None and not _go_equal(new.get("roleRef"), old.get("roleRef")):
        shown = json.dumps(new.get("roleRef"), sort_keys=True)
        causes.append(
            ("FieldValueInvalid", "roleRef", f"Invalid value: {shown}: cannot change roleRef")
        )
    if info.key == ("", "pods") and old is not None:
        causes.extend(_pod_update(new, old))
    if info.key == ("", "persistentvolumeclaims") and old is not None:
        causes.extend(_pvc_update(new, old))
    return causes


def _pod_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidatePodUpdate`` (``pkg/apis/core/validation``): containers cannot be added or
    removed (then nothing else is checked); besides the images, ``activeDeadlineSeconds``,
    ``terminationGracePeriodSeconds`` and added tolerations, the spec is immutable."""
    raw_spec, raw_old = new.get("spec"), old.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    old_spec: Mapping[str, Any] = raw_old if isinstance(raw_old, Mapping) else {}
    raw, raw_old_containers = spec.get("containers"), old_spec.get("containers")
    containers: list[Any] = raw if isinstance(raw, list) else []
    old_containers: list[Any] = raw_old_containers if isinstance(raw_old_containers, list) else []
    if len(containers) != len(old_containers):
        return [
            (
                "FieldValueForbidden",
                "spec.containers",
                "Forbidden: pod updates may not add or remove containers",
            )
        ]
    causes: list[Cause] = []
    for field in ("containers", "initContainers"):  # ValidateContainerUpdates
        items = spec.get(field)
        for index, item in enumerate(items if isinstance(items, list) else ()):
            if not (item if isinstance(item, Mapping) else {}).get("image"):
                causes.append(
                    ("FieldValueRequired", f"spec.{field}[{index}].image", "Required value")
                )
    munged = copy.deepcopy(dict(spec))
    for field in ("containers", "initContainers"):
        news, olds = munged.get(field), old_spec.get(field)
        if isinstance(news, list) and isinstance(olds, list) and len(news) == len(olds):
            for item, was in zip(news, olds, strict=True):
                if isinstance(item, dict) and isinstance(was, Mapping) and "image" in was:
                    item["image"] = was["image"]
    for field in ("activeDeadlineSeconds", "terminationGracePeriodSeconds", "tolerations"):
        if field in old_spec:
            munged[field] = old_spec[field]
        else:
            munged.pop(field, None)
    if _go_equal(munged, old_spec):
        return causes
    return [
        *causes,
        (
            "FieldValueForbidden",
            "spec",
            "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
            "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
            "`spec.tolerations` (only additions to existing tolerations),"
            "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
            "negative)",
        ),
    ]


def _pvc_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidatePersistentVolumeClaimUpdate`` (``pkg/apis/core/validation``) for a claim that is
    not bound (the fake binds none): the spec is immutable (``volumeName`` may be set once), and
    the storage request cannot go below ``status.capacity`` (none: any shrink)."""
    causes: list[Cause] = []
    raw_spec, raw_old = new.get("spec"), old.get("spec")
    spec = dict(raw_spec) if isinstance(raw_spec, Mapping) else {}
    old_spec = dict(raw_old) if isinstance(raw_old, Mapping) else {}
    if not old_spec.get("volumeName"):
        old_spec.pop("volumeName", None)
        spec.pop("volumeName", None)
    if not _go_equal(spec, old_spec):
        causes.append(
            (
                "FieldValueForbidden",
                "spec",
                "Forbidden: spec is immutable after creation except resources.requests and "
                "volumeAttributesClassName for bound claims",
            )
        )

    def storage(value: Mapping[str, Any]) -> Any:
        return ((value.get("resources") or {}).get("requests") or {}).get("storage")

    new_size, old_size = (
        parse_quantity(storage(spec) or "0"),
        parse_quantity(storage(old_spec) or "0"),
    )
    if new_size is not None and old_size is not None and new_size < old_size and new_size <= 0:
        causes.append(
            (
                "FieldValueForbidden",
                "spec.resources.requests.storage",
                "Forbidden: field can not be less than status.capacity",
            )
        )
    return causes


def _without_zero(value: Any) -> Any:
    if isinstance(value, Mapping):
        kept = {k: _without_zero(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", 0, False, {}, [])}
    if isinstance(value, list):
        return [_without_zero(v) for v in value]
    return value


def _go_equal(a: Any, b: Any) -> bool:
    """Equal as Go structs (``apiequality.Semantic.DeepEqual``): a field left out is its zero
    value (the new object is compared before its zero values are written)."""
    return bool(_without_zero(a) == _without_zero(b))


_STATEFUL_SET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


def _stateful_set_update(spec: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateStatefulSetUpdate`` (``pkg/apis/apps/validation``): only some fields of the spec
    may change (the selector among the others, so no separate immutable-selector cause)."""
    raw_old = old.get("spec")
    old_spec: Mapping[str, Any] = raw_old if isinstance(raw_old, Mapping) else {}
    new_rest = {k: v for k, v in spec.items() if k not in _STATEFUL_SET_MUTABLE}
    old_rest = {k: v for k, v in old_spec.items() if k not in _STATEFUL_SET_MUTABLE}
    if _go_equal(new_rest, old_rest):
        return []
    return [
        (
            "FieldValueForbidden",
            "spec",
            "Forbidden: updates to statefulset spec for fields other than 'replicas', "
            "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
            "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        )
    ]


def _job_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateJobUpdate`` (``pkg/apis/batch/validation``): the spec is validated again
    (``ValidateJobSpecUpdate`` runs ``ValidateJobSpec``), and the template and completion mode are
    immutable (a suspended Job's scheduling directives excepted, not modelled here)."""
    causes = [
        c
        for c in validate_kind(("batch", "jobs"), new)
        if c[1].startswith("spec.") and not c[1].startswith("spec.template.metadata.labels[")
    ]
    raw_spec, raw_old = new.get("spec"), old.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    old_spec: Mapping[str, Any] = raw_old if isinstance(raw_old, Mapping) else {}
    for field in ("template", "completionMode"):
        if not _go_equal(spec.get(field), old_spec.get(field)):
            shown = json.dumps(spec.get(field), sort_keys=True)
            causes.append(
                (
                    "FieldValueInvalid",
                    f"spec.{field}",
                    f"Invalid value: {shown}: field is immutable",
                )
            )
    return causes


def validate_name(info: ResourceInfo, name: str, obj: dict[str, Any]) -> None:
    """Raise 422 Invalid for a missing or malformed name (with the object's other errors)."""
    if not name:
        raise invalid(
            info.kind,
            info.group,
            "",
            [
                (
                    "FieldValueRequired",
                    "metadata.name",
                    "Required value: name or generateName is required",
                )
            ],
        )
    # Namespaces are RFC 1123 labels, the rest (Services too, since v1.34) subdomains.
    pattern, message, limit = _DNS_SUBDOMAIN, _SUBDOMAIN_MSG, 253
    if info.key == ("", "namespaces"):
        pattern, message, limit = _DNS_LABEL, _LABEL_MSG, 63
    if len(name) > limit:
        message = f"must be no more than {limit} characters"
    if not pattern.match(name) or len(name) > limit:
        cause = ("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {message}')
        probe = copy.deepcopy(obj)  # the other metadata errors come in the same answer
        defaults(info, probe)
        raise invalid(info.kind, info.group, name, [cause, *validate(info, probe, None)])


# The Container fields an ephemeral container may not set, in Container's declaration order
# (pkg/apis/core/validation: validateFieldAllowList over allowedEphemeralContainerFields).
_NOT_FOR_EPHEMERAL = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)


def ephemeral_containers_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidatePodEphemeralContainersUpdate`` (``pkg/apis/core/validation``): ephemeral
    containers are added, never changed or removed; each has a DNS-label name new in the pod, an
    image, none of the fields that would make it part of the pod's service (ports, resources,
    probes, lifecycle...), and a ``targetContainerName`` naming one of the pod's containers."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    ephemeral = [c for c in spec.get("ephemeralContainers") or () if isinstance(c, Mapping)]
    before = {
        c.get("name"): c
        for c in old_spec.get("ephemeralContainers") or ()
        if isinstance(c, Mapping)
    }
    regular = [
        c.get("name")
        for field in ("containers", "initContainers")
        for c in spec.get(field) or ()
        if isinstance(c, Mapping)
    ]
    causes: list[Cause] = []
    seen = set(regular)
    for index, container in enumerate(ephemeral):
        path, name = f"spec.ephemeralContainers[{index}]", container.get("name")
        if not isinstance(name, str) or not name:
            causes.append(("FieldValueRequired", f"{path}.name", "Required value"))
        elif len(name) > 63 or not _DNS_LABEL.match(name):
            detail = "must be no more than 63 characters" if len(name) > 63 else _LABEL_MSG
            causes.append(
                ("FieldValueInvalid", f"{path}.name", f"Invalid value: {_quote(name)}: {detail}")
            )
        if isinstance(name, str) and name in seen:
            causes.append(
                ("FieldValueDuplicate", f"{path}.name", f"Duplicate value: {_quote(name)}")
            )
        seen.add(name)
        if not container.get("image"):
            causes.append(("FieldValueRequired", f"{path}.image", "Required value"))
        for field in _NOT_FOR_EPHEMERAL:
            if container.get(field):
                message = "Forbidden: cannot be set for an Ephemeral Container"
                causes.append(("FieldValueForbidden", f"{path}.{field}", message))
        target = container.get("targetContainerName")
        if target and target not in regular:
            causes.append(
                (
                    "FieldValueNotFound",
                    f"{path}.targetContainerName",
                    f"Not found: {_quote(str(target))}",
                )
            )
    now = {c.get("name"): c for c in ephemeral}
    for name, was in before.items():
        if name not in now:
            message = f'Forbidden: existing ephemeral containers "{name}" may not be removed\n'
            causes.append(("FieldValueForbidden", "spec.ephemeralContainers", message))
        elif not _go_equal(now[name], was):
            diff = "".join(
                difflib.unified_diff(
                    json.dumps(was, indent=1, sort_keys=True).splitlines(keepends=True),
                    json.dumps(now[name], indent=1, sort_keys=True).splitlines(keepends=True),
                    n=2,
                )
            )
            message = f'Forbidden: existing ephemeral containers "{name}" may not be changed\n'
            causes.append(("FieldValueForbidden", "spec.ephemeralContainers", message + diff))
    return causes


def _path_segment(value: str, *, prefix: bool) -> list[str]:
    """``ValidatePathSegmentName`` (k8s.io/apimachinery/pkg/api/validation/path/name.go)."""
    if not prefix and value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


def _embedded_object_meta(meta: Mapping[str, Any], path: str) -> list[Cause]:
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
        if not _DNS_LABEL.match(namespace):
            bad("namespace", namespace, _LABEL_MSG)
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        bad("generation", generation, "must be greater than or equal to 0")
    causes += _labels(meta.get("labels"), f"{path}.labels")
    for kind, field, message in validate_metadata(meta, kube_finalizers=False):
        causes.append((kind, path + field.removeprefix("metadata"), message))
    return causes


def validate_custom(
    info: ResourceInfo,
    version: str,
    obj: dict[str, Any],
    name: str,
    old: dict[str, Any] | None = None,
) -> None:
    """Prune, default and validate a custom object with its CRD's schema at ``version``
    (``old``: the stored object of an update, for ratcheting and CEL transition rules).

    On an update whose content differs from the stored one only as Go's types see it (``3.0``
    sent for a stored ``3``), the generation moves: the custom resource strategy compares the
    decoded object, a float, with the stored integer (``PrepareForUpdate``).
    """
    decoded: list[Any] = []
    try:
        errors = _schema.process(
            info.schemas.get(version),
            obj,
            old,
            decoded,
            embedded_meta=_embedded_object_meta,
            decode_meta=object_meta_problem,
        )
    except _schema.EmbeddedDecodeError as err:
        raise bad_request(
            f'{info.kind} in version "{version}" cannot be handled as a {info.kind}: {err}'
        ) from None
    if errors:
        raise invalid(info.kind, info.group, name, errors)
    if old is None or not decoded or not info.generation:
        return

    def content(value: Mapping[str, Any]) -> str:
        skipped = {"metadata", "status"} if info.status else {"metadata"}
        return json.dumps({k: v for k, v in value.items() if k not in skipped}, sort_keys=True)

    if content(decoded[0]) != content(old) and content(obj) == content(old):
        meta = obj.setdefault("metadata", {})
        meta["generation"] = int((old.get("metadata") or {}).get("generation") or 0) + 1
