"""Validation of ``metadata`` as the apiserver does it for every kind.

``k8s.io/apimachinery/pkg/api/validation/objectmeta.go`` (``ValidateObjectMeta``): annotation
keys are qualified names (checked lower-cased) and all annotations together at most 256 KiB;
finalizers are qualified names, and one without a ``/`` must be a standard one (``kubernetes``,
``orphan``, ``foregroundDeletion``), not both ``orphan`` and ``foregroundDeletion``; owner
references name their apiVersion (with a version), kind, name and uid, and at most one is the
controller. Qualified names: ``k8s.io/apimachinery/pkg/util/validation/validation.go``
(``IsQualifiedName``). Label keys and values are checked by
:mod:`kubectrl.apiserver._validation.objects`; value types (strings) by the decoder
(:mod:`kubectrl.apiserver._schema.gotypes`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "annotation_causes",
    "kube_finalizer_names",
    "qualified_name_errors",
    "validate_metadata",
    "validate_metadata_update",
]

Cause = tuple[str, str, str]

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
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
_STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}
_ANNOTATIONS_LIMIT = 256 * 1024


def qualified_name_errors(value: str) -> list[str]:
    """What ``IsQualifiedName`` says of ``value`` (empty when it is one).

    Example::

        >>> qualified_name_errors("example.com/ok")
        []
        >>> qualified_name_errors("a/b/c")[0][:28]
        'a valid label key must consi'
    """
    parts = value.split("/")
    if len(parts) == 1:
        name, prefix = parts[0], ""
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
    else:
        return [_KEY_MSG]
    errors: list[str] = []
    if prefix:
        if len(prefix) > 253:
            errors.append("prefix part must be no more than 253 characters")
        elif not _PREFIX.match(prefix):
            errors.append(_PREFIX_MSG)
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _NAME.match(name):  # checked apart: an empty name gets both messages
        errors.append(_NAME_MSG)
    return errors


def _invalid(field: str, value: Any, detail: str) -> Cause:
    return ("FieldValueInvalid", field, f"Invalid value: {json.dumps(value)}: {detail}")


def validate_metadata(meta: Mapping[str, Any], *, kube_finalizers: bool = True) -> list[Cause]:
    """The causes of ``metadata`` (annotations, finalizers, owner references); empty when valid.

    ``kube_finalizers``: also the core API's check that a finalizer without a ``/`` is a
    standard one (``pkg/apis/core/validation`` ``validateKubeFinalizerName``; kinds validated
    with apimachinery's ``ValidateObjectMeta`` alone, such as Leases, do not have it).
    """
    causes = _annotations(meta)
    finalizers = meta.get("finalizers")
    if isinstance(finalizers, list):
        for finalizer in finalizers:
            text = str(finalizer)
            errors = qualified_name_errors(text)
            causes.extend(_invalid("metadata.finalizers", text, error) for error in errors)
        if kube_finalizers:
            causes.extend(kube_finalizer_names(meta))
        if "orphan" in finalizers and "foregroundDeletion" in finalizers:
            causes.append(
                _invalid(
                    "metadata.finalizers",
                    "foregroundDeletion",
                    "finalizer foregroundDeletion and orphan cannot be both set",
                )
            )
    causes.extend(_owner_references(meta.get("ownerReferences")))
    return causes


def annotation_causes(meta: Mapping[str, Any], field: str) -> list[Cause]:
    """The causes of ``meta``'s annotations, reported at ``field`` (``ValidateAnnotations``)."""
    return _annotations(meta, field)


def validate_metadata_update(meta: Mapping[str, Any]) -> list[Cause]:
    """What apimachinery's ``ValidateObjectMetaAccessorUpdate`` checks again of the new
    ``metadata`` on an update (annotations, owner references; label keys and values are
    :mod:`kubectrl.apiserver._validation.objects`'s)."""
    return _annotations(meta) + _owner_references(meta.get("ownerReferences"))


def kube_finalizer_names(meta: Mapping[str, Any]) -> list[Cause]:
    """A finalizer without ``/`` that is not a standard one (``validateKubeFinalizerName``)."""
    causes: list[Cause] = []
    finalizers = meta.get("finalizers")
    for index, finalizer in enumerate(finalizers if isinstance(finalizers, list) else ()):
        text = str(finalizer)
        if "/" not in text and text not in _STANDARD_FINALIZERS:
            causes.append(
                _invalid(
                    f"metadata.finalizers[{index}]",
                    text,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return causes


def _annotations(meta: Mapping[str, Any], field: str = "metadata.annotations") -> list[Cause]:
    causes: list[Cause] = []
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping):
        size = 0
        for key, value in annotations.items():
            causes.extend(
                _invalid(field, key, error) for error in qualified_name_errors(str(key).lower())
            )
            size += len(str(key)) + len(str(value))
        if size > _ANNOTATIONS_LIMIT:
            causes.append(
                (
                    "FieldValueTooLong",
                    field,
                    f"Too long: may not be more than {_ANNOTATIONS_LIMIT} bytes",
                )
            )
    return causes


def _owner_references(refs: Any) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(refs, list):
        return causes
    controllers = 0
    for ref in refs:
        if not isinstance(ref, Mapping):
            continue
        api_version = str(ref.get("apiVersion") or "")
        version = api_version.rsplit("/", 1)[-1]
        if not version:
            causes.append(
                _invalid(
                    "metadata.ownerReferences.apiVersion", api_version, "version must not be empty"
                )
            )
        if not ref.get("kind"):
            causes.append(_invalid("metadata.ownerReferences.kind", "", "kind must not be empty"))
        if not ref.get("name"):
            causes.append(_invalid("metadata.ownerReferences.name", "", "name must not be empty"))
        if not ref.get("uid"):
            causes.append(_invalid("metadata.ownerReferences.uid", "", "uid must not be empty"))
        if ref.get("controller") is True:
            controllers += 1
    if controllers > 1:
        causes.append(
            _invalid(
                "metadata.ownerReferences",
                refs,
                "Only one reference can have Controller set to true",
            )
        )
    return causes
