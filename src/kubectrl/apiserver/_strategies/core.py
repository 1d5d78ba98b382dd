"""The strategies of the core group's kinds (``pkg/registry/core/<resource>/strategy.go``).

Namespaces, Pods (with the ``ephemeralcontainers`` subresource), Services, ConfigMaps,
Secrets, ServiceAccounts, Events (``v1`` and ``events.k8s.io``), Nodes and
PersistentVolumeClaims: their defaults (``pkg/apis/core/v1/defaults.go``), what admission plugins
and registries add (``Priority``, ``DefaultTolerationSeconds``,
``StorageObjectInUseProtection``, a Service's cluster IPs), and their validation
(``pkg/apis/core/validation``: the fields by
:mod:`~kubectrl.apiserver._validation.kinds`, updates here).
"""

from __future__ import annotations

import base64
import copy
import difflib
import json
import random
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._schema.quantity import parse_quantity
from kubectrl.apiserver._strategies.base import Cause, Strategy
from kubectrl.apiserver._strategies.podspec import pod_defaults, qos_class
from kubectrl.apiserver._validation import kinds
from kubectrl.apiserver._validation.kinds import validate_kind
from kubectrl.apiserver._validation.metadata import qualified_name_errors
from kubectrl.apiserver._validation.objects import (
    DNS_LABEL,
    LABEL_MSG,
    go_equal,
    label_causes,
    quote,
)

__all__ = [
    "ConfigMaps",
    "Events",
    "EventsV1",
    "Namespaces",
    "Nodes",
    "PersistentVolumeClaims",
    "Pods",
    "Secrets",
    "ServiceAccounts",
    "Services",
]


class Namespaces(Strategy):
    """Namespaces: RFC 1123 label names, the ``kubernetes`` finalizer and the
    ``kubernetes.io/metadata.name`` label; deleting one terminates it."""

    resource = ("", "namespaces")
    status = True
    short_names = ("ns",)
    field_labels = frozenset({"status.phase"})
    name_is_label = True
    terminates = True

    def default(self, obj: dict[str, Any]) -> None:
        meta = obj.setdefault("metadata", {})
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        status = obj.setdefault("status", {})
        status.setdefault("phase", "Active")


_NOT_READY_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
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


class Pods(Strategy):
    """Pods: defaults, the Pending status and QoS class, the ``Priority`` and
    ``DefaultTolerationSeconds`` admission plugins, ``ValidatePodUpdate``, the
    ``ephemeralcontainers`` subresource; deleted gracefully (grace period 0), the deleted pod
    answered."""

    resource = ("", "pods")
    status = True
    generation = True
    short_names = ("po",)
    field_labels = frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        }
    )
    subresources = ("ephemeralcontainers",)
    update_metadata_passes = 2
    return_deleted_object = True
    graceful_delete = True

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        pod_defaults(spec)
        if isinstance(spec, dict):
            spec.setdefault("enableServiceLinks", True)
        status = obj.setdefault("status", {})
        if not status:
            status.update({"phase": "Pending", "qosClass": qos_class(spec)})

    def allocate(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        tolerations = spec.setdefault("tolerations", [])
        for taint in _NOT_READY_TAINTS:
            if not any(t.get("key") == taint for t in tolerations if isinstance(t, dict)):
                tolerations.append(
                    {
                        "key": taint,
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                )

    def allocate_update(self, new: dict[str, Any], old: Mapping[str, Any]) -> None:
        """The priority and preemption policy the ``Priority`` plugin set on create stay
        (``plugin/pkg/admission/priority``); the ``DefaultTolerationSeconds`` tolerations come
        again."""
        spec, old_spec = new.get("spec"), old.get("spec")
        if not isinstance(spec, dict) or not isinstance(old_spec, Mapping):
            return
        for field in ("priority", "preemptionPolicy"):
            if spec.get(field) is None and field in old_spec:
                spec[field] = copy.deepcopy(old_spec[field])
        self.allocate(new)

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        causes = validate_kind(kinds.pod, obj)
        if old is not None:
            causes.extend(_pod_update(obj, old))
        return causes

    def merge_subresource(
        self, sub: str, old: Mapping[str, Any], body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The pod as stored, with the body's ephemeral containers."""
        new = copy.deepcopy(dict(old))
        spec = new.setdefault("spec", {})
        given = (body.get("spec") or {}).get("ephemeralContainers")
        if given:
            spec["ephemeralContainers"] = copy.deepcopy(given)
        else:
            spec.pop("ephemeralContainers", None)
        return new

    def validate_subresource(
        self, sub: str, new: dict[str, Any], old: Mapping[str, Any]
    ) -> tuple[list[Cause], dict[str, Any]]:
        """``ValidatePodEphemeralContainersUpdate``; then the pod with its stored ephemeral
        containers (the rest of the pod is the stored one)."""
        causes = _ephemeral_containers_update(new, old)
        rest = copy.deepcopy(new)
        rest["spec"].pop("ephemeralContainers", None)
        if "ephemeralContainers" in old.get("spec", {}):
            rest["spec"]["ephemeralContainers"] = old["spec"]["ephemeralContainers"]
        return causes, rest


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
    if go_equal(munged, old_spec):
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


def _ephemeral_containers_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
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
        elif len(name) > 63 or not DNS_LABEL.match(name):
            detail = "must be no more than 63 characters" if len(name) > 63 else LABEL_MSG
            causes.append(
                ("FieldValueInvalid", f"{path}.name", f"Invalid value: {quote(name)}: {detail}")
            )
        if isinstance(name, str) and name in seen:
            causes.append(
                ("FieldValueDuplicate", f"{path}.name", f"Duplicate value: {quote(name)}")
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
                    f"Not found: {quote(str(target))}",
                )
            )
    now = {c.get("name"): c for c in ephemeral}
    for name, was in before.items():
        if name not in now:
            message = f'Forbidden: existing ephemeral containers "{name}" may not be removed\n'
            causes.append(("FieldValueForbidden", "spec.ephemeralContainers", message))
        elif not go_equal(now[name], was):
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


class Services(Strategy):
    """Services: defaults, cluster IPs allocated on create and kept by an update that leaves
    them out (``pkg/registry/core/service/storage`` ``patchAllocatedValues``), the selector's
    labels validated (``ValidateService``)."""

    resource = ("", "services")
    status = True
    short_names = ("svc",)
    update_metadata_passes = 1

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        kind = spec.setdefault("type", "ClusterIP")
        if kind != "ExternalName":
            spec.setdefault("sessionAffinity", "None")
            spec.setdefault("internalTrafficPolicy", "Cluster")
            for port in spec.get("ports") or ():
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")
                    if port.get("targetPort") in (None, 0, ""):  # zero as int or as string
                        port["targetPort"] = port.get("port") or 0
        status = obj.setdefault("status", {})
        status.setdefault("loadBalancer", {})

    def allocate(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict) or spec.get("type", "ClusterIP") == "ExternalName":
            return
        if "clusterIP" not in spec:
            spec["clusterIP"] = f"10.0.{random.randint(0, 255)}.{random.randint(1, 254)}"  # noqa: S311
        if spec["clusterIP"] != "None":
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")

    def allocate_update(self, new: dict[str, Any], old: Mapping[str, Any]) -> None:
        spec, old_spec = new.get("spec"), old.get("spec")
        if not isinstance(spec, dict) or not isinstance(old_spec, Mapping):
            return
        for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if not spec.get(field) and field in old_spec:
                spec[field] = copy.deepcopy(old_spec[field])

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        raw_spec = obj.get("spec")
        spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
        return [
            *validate_kind(kinds.service, obj),
            *label_causes(spec.get("selector"), "spec.selector"),
        ]


def _immutable_data(
    new: Mapping[str, Any], old: Mapping[str, Any] | None, fields: tuple[str, ...]
) -> list[Cause]:
    """``immutable: true`` freezes ``fields`` and the flag."""
    causes: list[Cause] = []
    if old is None or old.get("immutable") is not True:
        return causes
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
    return causes


class ConfigMaps(Strategy):
    """ConfigMaps: data keys; ``immutable: true`` freezes ``data`` and ``binaryData``."""

    resource = ("", "configmaps")
    short_names = ("cm",)
    update_metadata_passes = 2

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        return [
            *validate_kind(kinds.config_map, obj),
            *_immutable_data(obj, old, ("data", "binaryData")),
        ]


class Secrets(Strategy):
    """Secrets: ``stringData`` written into ``data``, the ``Opaque`` type; ``immutable: true``
    freezes ``data``."""

    resource = ("", "secrets")
    field_labels = frozenset({"type"})
    update_metadata_passes = 2

    def default(self, obj: dict[str, Any]) -> None:
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict):
            data = obj.setdefault("data", {})
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
        obj.setdefault("type", "Opaque")

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        return [*validate_kind(kinds.secret, obj), *_immutable_data(obj, old, ("data",))]


class ServiceAccounts(Strategy):
    """ServiceAccounts: nothing of their own."""

    resource = ("", "serviceaccounts")
    short_names = ("sa",)
    update_metadata_passes = 2


#: Time fields without omitempty: encoding/json writes a zero metav1.Time as null.
_EVENT_NULL_TIMES = ("firstTimestamp", "lastTimestamp", "eventTime")


# pkg/apis/core/validation/events.go
_EVENT_LIMITS = (("reportingInstance", 128), ("action", 128), ("reason", 128))
_NOTE_LIMIT = 1024


def _legacy_event_causes(obj: Mapping[str, Any], involved: str, message: str) -> list[Cause]:
    """``legacyValidateEvent``: what every Event must pass, through either API. An Event with
    an ``eventTime`` (a "new" Event) needs its reporting controller and instance, action and
    reason; one without (client-go's ``tools/record``) only a namespace matching its object's.
    ``involved`` and ``message`` are the names this API version gives those fields."""
    causes: list[Cause] = []
    metadata = obj.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "")
    ref = obj.get(involved)
    ref_namespace = str(ref.get("namespace") or "") if isinstance(ref, Mapping) else ""
    mismatch = (
        "FieldValueInvalid",
        "involvedObject.namespace",
        f"Invalid value: {quote(ref_namespace)}: does not match event.namespace",
    )
    if not obj.get("eventTime"):
        if (not ref_namespace and namespace not in ("", "default")) or (
            ref_namespace and namespace != ref_namespace
        ):
            causes.append(mismatch)
        return causes
    if not ref_namespace and namespace not in ("default", "kube-system"):
        causes.append(mismatch)
    controller = str(obj.get("reportingController") or "")
    if not controller:
        causes.append(("FieldValueRequired", "reportingController", "Required value"))
    causes.extend(
        ("FieldValueInvalid", "reportingController", f"Invalid value: {quote(controller)}: {msg}")
        for msg in qualified_name_errors(controller)
    )
    for field, limit in _EVENT_LIMITS:
        value = str(obj.get(field) or "")
        if not value:
            causes.append(("FieldValueRequired", field, "Required value"))
        elif len(value) > limit:
            causes.append(
                (
                    "FieldValueInvalid",
                    field,
                    f'Invalid value: "": can have at most {limit} characters',
                )
            )
    if len(str(obj.get(message) or "")) > _NOTE_LIMIT:
        causes.append(
            (
                "FieldValueInvalid",
                "message",
                f'Invalid value: "": can have at most {_NOTE_LIMIT} characters',
            )
        )
    return causes


def _series_causes(obj: Mapping[str, Any]) -> list[Cause]:
    series = obj.get("series")
    if not isinstance(series, Mapping):
        return []
    causes: list[Cause] = []
    count = series.get("count")
    if not isinstance(count, int) or count < 2:
        causes.append(
            ("FieldValueInvalid", "series.count", 'Invalid value: "": should be at least 2')
        )
    if not series.get("lastObservedTime"):
        causes.append(("FieldValueRequired", "series.lastObservedTime", "Required value"))
    return causes


def _strict_event_causes(obj: Mapping[str, Any]) -> list[Cause]:
    """What ``ValidateEventCreate`` adds for events.k8s.io/v1: the series, ``eventTime``, a
    ``type`` of Normal or Warning, and none of the deprecated core/v1 fields."""
    causes = _series_causes(obj)
    if not obj.get("eventTime"):
        causes.append(("FieldValueRequired", "eventTime", "Required value"))
    event_type = obj.get("type")
    if event_type not in ("Normal", "Warning"):
        causes.append(
            (
                "FieldValueInvalid",
                "type",
                f'Invalid value: "": has invalid value: {event_type or ""}',
            )
        )
    for field, internal in (
        ("deprecatedFirstTimestamp", "firstTimestamp"),
        ("deprecatedLastTimestamp", "lastTimestamp"),
        ("deprecatedCount", "count"),
    ):
        if obj.get(field):
            causes.append(("FieldValueInvalid", internal, 'Invalid value: "": needs to be unset'))
    source = obj.get("deprecatedSource")
    if isinstance(source, Mapping) and (source.get("component") or source.get("host")):
        causes.append(("FieldValueInvalid", "source", 'Invalid value: "": needs to be unset'))
    return causes


class Events(Strategy):
    """Events of ``v1``: their field selectors, null for the times they leave out, and the
    legacy checks of pkg/apis/core/validation/events.go (a ``type`` is not checked)."""

    resource = ("", "events")
    short_names = ("ev",)
    field_labels = frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    )

    def canonicalize(self, obj: dict[str, Any]) -> None:
        for key in _EVENT_NULL_TIMES:
            obj.setdefault(key, None)

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        return _legacy_event_causes(obj, "involvedObject", "message")


class EventsV1(Strategy):
    """Events of ``events.k8s.io``, validated strictly on create (pkg/apis/core/validation/
    events.go ``ValidateEventCreate``); an update passes the legacy checks and, when it
    changes the series, the series checks."""

    resource = ("events.k8s.io", "events")
    short_names = ("ev",)

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        causes = _legacy_event_causes(obj, "regarding", "note")
        if old is None:
            return [*causes, *_strict_event_causes(obj)]
        if obj.get("series") != old.get("series"):
            causes.extend(_series_causes(obj))
        return causes


class Nodes(Strategy):
    """Nodes: nothing of their own but the ``spec.unschedulable`` field selector."""

    resource = ("", "nodes")
    status = True
    short_names = ("no",)
    field_labels = frozenset({"spec.unschedulable"})


class PersistentVolumeClaims(Strategy):
    """PersistentVolumeClaims: the Pending phase, the ``kubernetes.io/pvc-protection``
    finalizer (the ``StorageObjectInUseProtection`` admission plugin), ``ValidatePersistent
    VolumeClaimUpdate``."""

    resource = ("", "persistentvolumeclaims")
    status = True
    short_names = ("pvc",)
    update_metadata_passes = 2

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("volumeMode", "Filesystem")
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("phase", "Pending")

    def allocate(self, obj: dict[str, Any]) -> None:
        if not isinstance(obj.get("spec"), dict):
            return
        finalizers = obj.setdefault("metadata", {}).setdefault("finalizers", [])
        if isinstance(finalizers, list) and "kubernetes.io/pvc-protection" not in finalizers:
            finalizers.append("kubernetes.io/pvc-protection")

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        causes = validate_kind(kinds.pvc, obj)
        if old is not None:
            causes.extend(_pvc_update(obj, old))
        return causes


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
    if not go_equal(spec, old_spec):
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
