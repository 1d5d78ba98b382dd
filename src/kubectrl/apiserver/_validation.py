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
import json
import re
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver import _schema
from kubectrl.apiserver._builtin_validation import validate_kind
from kubectrl.apiserver._defaults import defaults
from kubectrl.apiserver._metadata import validate_metadata
from kubectrl.apiserver._resources import ResourceInfo
from kubectrl.apiserver._status import invalid

__all__ = ["validate", "validate_custom", "validate_name"]

Cause = tuple[str, str, str]

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_PREFIX_MSG = (
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
    "'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_KEY_MSG = (
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
    "subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
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
        prefix, _, name = str(key).rpartition("/")
        if str(key).count("/") > 1:
            causes.append(
                ("FieldValueInvalid", field, f"Invalid value: {_quote(str(key))}: {_KEY_MSG}")
            )
        elif not name or len(name) > 63 or not _NAME.match(name):
            detail = (
                _NAME_MSG
                if name and len(name) <= 63
                else (
                    "name part must be no more than 63 characters"
                    if name
                    else "name part must be non-empty"
                )
            )
            causes.append(
                ("FieldValueInvalid", field, f"Invalid value: {_quote(str(key))}: {detail}")
            )
        elif prefix and (len(prefix) > 253 or not _PREFIX.match(prefix)):
            causes.append(
                ("FieldValueInvalid", field, f"Invalid value: {_quote(str(key))}: {_PREFIX_MSG}")
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
    labels = (selector or {}).get("matchLabels") or {}
    inner = ", ".join(f"{_quote(k)}:{_quote(str(v))}" for k, v in sorted(labels.items()))
    exprs = (selector or {}).get("matchExpressions")
    expr_text = (
        "[]v1.LabelSelectorRequirement(nil)" if not exprs else "[]v1.LabelSelectorRequirement{...}"
    )
    return (
        f"v1.LabelSelector{{MatchLabels:map[string]string{{{inner}}}, "
        f"MatchExpressions:{expr_text}}}"
    )


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    from kubectrl import labels as _labels_mod

    try:
        return _labels_mod.parse(dict(selector)).matches(
            {str(k): str(v) for k, v in labels.items()}
        )
    except (ValueError, TypeError):
        return False


def validate(
    info: ResourceInfo, new: Mapping[str, Any], old: Mapping[str, Any] | None
) -> list[Cause]:
    """The causes (type, field, message) this write violates; empty when it is valid."""
    meta = new.get("metadata") or {}
    causes = _labels(meta.get("labels"))
    causes.extend(validate_metadata(meta))
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
    if info.key in _WORKLOADS:
        selector = spec.get("selector")
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if not selector:
            causes.append(("FieldValueRequired", "spec.selector", "Required value"))
        elif not _selector_matches(selector, template_labels):
            shown = ", ".join(
                f"{_quote(k)}:{_quote(str(v))}" for k, v in sorted(template_labels.items())
            )
            causes.append(
                (
                    "FieldValueInvalid",
                    "spec.template.metadata.labels",
                    (
                        f"Invalid value: map[string]string{{{shown}}}: "
                        "`selector` does not match template `labels`"
                    ),
                )
            )
    if (info.key in _WORKLOADS or info.key == ("batch", "jobs")) and old is not None:
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


def validate_custom(
    info: ResourceInfo,
    version: str,
    obj: dict[str, Any],
    name: str,
    old: dict[str, Any] | None = None,
) -> None:
    """Prune, default and validate a custom object with its CRD's schema at ``version``
    (``old``: the stored object of an update, for ratcheting and CEL transition rules)."""
    errors = _schema.process(info.schemas.get(version), obj, old)
    if errors:
        raise invalid(info.kind, info.group, name, errors)
