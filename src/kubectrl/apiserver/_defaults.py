"""Defaulting of the built-in kinds controllers write, and what admission adds on create.

As ``pkg/apis/{core,apps,batch,rbac}/v1/defaults.go`` (``SetDefaults_*``) and the create
strategies of ``pkg/registry`` (a Job's generated selector and labels, a DaemonSet's template
generation, a PVC's phase) do it for Namespace, Pod, Service, Secret, Deployment, ReplicaSet,
StatefulSet, DaemonSet, Job, CronJob, PersistentVolumeClaim, RoleBinding and
ClusterRoleBinding; the fields without ``omitempty`` are written by
:func:`kubectrl.apiserver._builtin_types.encode`. Custom resources are defaulted from their CRD
schema (:func:`kubectrl.apiserver._resources.apply_defaults`).
"""

from __future__ import annotations

import base64
import copy
import random
import re
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._resources import ResourceInfo

__all__ = ["allocate", "defaults", "pod_defaults", "prepare_create"]

_RBAC = "rbac.authorization.k8s.io"
_JOB_UID = "batch.kubernetes.io/controller-uid"


def defaults(info: ResourceInfo, obj: dict[str, Any]) -> None:
    """The few built-in defaults the core applies (the real server applies many more)."""
    if info.key == ("", "namespaces"):
        meta = obj.setdefault("metadata", {})
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        status = obj.setdefault("status", {})
        status.setdefault("phase", "Active")
    elif info.key == ("apps", "deployments"):
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            strategy.setdefault("type", "RollingUpdate")
            strategy.setdefault("rollingUpdate", {}).setdefault("maxUnavailable", "25%")
            strategy["rollingUpdate"].setdefault("maxSurge", "25%")
        pod_defaults((spec.get("template") or {}).get("spec"))
    elif info.key == ("", "pods"):
        spec = obj.get("spec")
        pod_defaults(spec)
        if isinstance(spec, dict):
            spec.setdefault("enableServiceLinks", True)
        status = obj.setdefault("status", {})
        if not status:
            status.update({"phase": "Pending", "qosClass": _qos_class(spec)})
    elif info.key == ("", "services"):
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
    elif info.key in _WORKLOAD_DEFAULTS:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            _WORKLOAD_DEFAULTS[info.key](spec)
            template = spec.get("template")
            pod_defaults(template.get("spec") if isinstance(template, dict) else None)
        if info.key == ("batch", "jobs") and (obj.get("metadata") or {}).get("uid"):
            _job_labels(obj)  # on create: after the selector's labels (prepare_create)
    elif info.key == ("batch", "cronjobs"):
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("concurrencyPolicy", "Allow")
            spec.setdefault("suspend", False)
            spec.setdefault("successfulJobsHistoryLimit", 3)
            spec.setdefault("failedJobsHistoryLimit", 1)
            job = (spec.get("jobTemplate") or {}).get("spec")
            template = job.get("template") if isinstance(job, dict) else None
            pod_defaults(template.get("spec") if isinstance(template, dict) else None)
    elif info.key == ("", "persistentvolumeclaims"):
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("volumeMode", "Filesystem")
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("phase", "Pending")
    elif info.key in ((_RBAC, "rolebindings"), (_RBAC, "clusterrolebindings")):
        role_ref = obj.get("roleRef")
        if role_ref is None:
            role_ref = obj["roleRef"] = {}  # a struct: null is the zero one
        if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
            role_ref["apiGroup"] = _RBAC  # SetDefaults_RoleBinding
        for subject in obj.get("subjects") or ():
            # SetDefaults_Subject: users and groups are RBAC's.
            if (
                isinstance(subject, dict)
                and not subject.get("apiGroup")
                and subject.get("kind") in ("User", "Group")
            ):
                subject["apiGroup"] = _RBAC
    elif info.key == ("", "secrets"):
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict):
            data = obj.setdefault("data", {})
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
        obj.setdefault("type", "Opaque")


def allocate(info: ResourceInfo, obj: dict[str, Any]) -> None:
    """What admission plugins and registries add on create (no field manager owns it)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if info.key == ("", "persistentvolumeclaims"):
        # The StorageObjectInUseProtection admission plugin.
        finalizers = obj.setdefault("metadata", {}).setdefault("finalizers", [])
        if isinstance(finalizers, list) and "kubernetes.io/pvc-protection" not in finalizers:
            finalizers.append("kubernetes.io/pvc-protection")
    elif info.key == ("", "pods"):
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        tolerations = spec.setdefault("tolerations", [])
        for taint in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
            if not any(t.get("key") == taint for t in tolerations if isinstance(t, dict)):
                tolerations.append(
                    {
                        "key": taint,
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                )
    elif info.key == ("", "services") and spec.get("type", "ClusterIP") != "ExternalName":
        if "clusterIP" not in spec:
            spec["clusterIP"] = f"10.0.{random.randint(0, 255)}.{random.randint(1, 254)}"  # noqa: S311
        if spec["clusterIP"] != "None":
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")


def allocate_update(info: ResourceInfo, new: dict[str, Any], old: Mapping[str, Any]) -> None:
    """What admission plugins and registries keep or add on an update.

    A Pod keeps the priority and preemption policy the ``Priority`` plugin set on create
    (``plugin/pkg/admission/priority``) and gets the ``DefaultTolerationSeconds`` tolerations
    again; a Service keeps its allocated cluster IPs and IP families when the update leaves them
    out (``pkg/registry/core/service/storage`` ``patchAllocatedValues``).
    """
    spec, old_spec = new.get("spec"), old.get("spec")
    if not isinstance(spec, dict) or not isinstance(old_spec, Mapping):
        return
    if info.key == ("", "pods"):
        for field in ("priority", "preemptionPolicy"):
            if spec.get(field) is None and field in old_spec:
                spec[field] = copy.deepcopy(old_spec[field])
        allocate(info, new)
    elif info.key == ("", "services"):
        for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if not spec.get(field) and field in old_spec:
                spec[field] = copy.deepcopy(old_spec[field])


def _qos_class(spec: Any) -> str:
    containers = (spec or {}).get("containers") or [] if isinstance(spec, dict) else []
    resources = [c.get("resources") or {} for c in containers if isinstance(c, dict)]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all(
        all((r.get("limits") or {}).get(k) for k in ("cpu", "memory"))
        and all(
            (r.get("requests") or {}).get(k, v) == v for k, v in (r.get("limits") or {}).items()
        )
        for r in resources
    )
    return "Guaranteed" if guaranteed else "Burstable"


_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_LABEL}(?:\.{_LABEL})*(?::[0-9]+)?"
_PATH = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"^(?P<name>(?:{_DOMAIN}/)?{_PATH}(?:/{_PATH})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$"
)


def _image_tag(image: str) -> str:
    """The tag ``parsers.ParseImageName`` finds in an image reference (``latest`` when there is
    neither tag nor digest; ``""`` for what does not parse as a reference, docker's grammar in
    ``github.com/distribution/reference``), which ``SetDefaults_Container`` reads."""
    found = _REFERENCE.match(image)
    if found is None or len(found["name"]) > 255:
        return ""
    if found["tag"]:
        return found["tag"]
    return "" if found["digest"] else "latest"


def pod_defaults(spec: Any) -> None:
    """The defaults of a pod spec (a workload's template too)."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    every = [spec.get(f) or () for f in ("containers", "initContainers", "ephemeralContainers")]
    for container in [c for group in every if isinstance(group, list) for c in group]:
        if not isinstance(container, dict):
            continue
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        tag = _image_tag(str(container.get("image") or ""))
        container.setdefault("imagePullPolicy", "Always" if tag == "latest" else "IfNotPresent")
        container.setdefault("resources", {})
        for port in container.get("ports") or ():
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")


def _replica_set(spec: dict[str, Any]) -> None:
    spec.setdefault("replicas", 1)


def _stateful_set(spec: dict[str, Any]) -> None:
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(policy, dict):
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")


def _daemon_set(spec: dict[str, Any]) -> None:
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", 1)
                rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)


def _job(spec: dict[str, Any]) -> None:
    # pkg/apis/batch/v1/defaults.go SetDefaults_Job.
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    failure = spec.get("podFailurePolicy")
    if isinstance(failure, dict):
        for rule in failure.get("rules") or ():
            for pattern in (
                (rule or {}).get("onPodConditions") or () if isinstance(rule, dict) else ()
            ):
                if isinstance(pattern, dict):
                    pattern.setdefault("status", "True")
    spec.setdefault(
        "podReplacementPolicy", "Failed" if failure is not None else "TerminatingOrFailed"
    )
    spec.setdefault("manualSelector", False)


_WORKLOAD_DEFAULTS = {
    ("apps", "replicasets"): _replica_set,
    ("apps", "statefulsets"): _stateful_set,
    ("apps", "daemonsets"): _daemon_set,
    ("batch", "jobs"): _job,
}


def _job_labels(obj: dict[str, Any]) -> None:
    """A Job without labels gets its pod template's (SetDefaults_Job)."""
    meta = obj.get("metadata")
    template = (
        (obj.get("spec") or {}).get("template") if isinstance(obj.get("spec"), dict) else None
    )
    labels = (
        ((template or {}).get("metadata") or {}).get("labels")
        if isinstance(template, dict)
        else None
    )
    if isinstance(meta, dict) and not meta.get("labels") and isinstance(labels, dict) and labels:
        meta["labels"] = dict(labels)


def prepare_create(info: ResourceInfo, obj: dict[str, Any]) -> None:
    """What a create strategy adds once the object has its uid (``PrepareForCreate``).

    A Job without ``manualSelector: true`` gets a selector on its uid and its pod template
    the labels the Job controller finds its pods by (``pkg/registry/batch/job/strategy.go``
    ``generateSelector``); a DaemonSet its template generation annotation
    (``pkg/registry/apps/daemonset/strategy.go``).
    """
    meta = obj.get("metadata") or {}
    if info.key == ("batch", "jobs") and obj.get("spec") is None:
        obj["spec"] = {}  # a struct, not a pointer: a null spec is the zero one
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if info.key == ("batch", "jobs") and spec.get("manualSelector") is not True:
        uid, name = str(meta.get("uid", "")), str(meta.get("name", ""))
        if spec.get("template") is None:
            spec["template"] = {}  # a struct too
        template = spec.get("template")
        if isinstance(template, dict):
            template_meta = template.setdefault("metadata", {})
            if isinstance(template_meta, dict):
                labels = template_meta.get("labels")
                labels = dict(labels) if isinstance(labels, dict) else {}
                labels.update(
                    {
                        _JOB_UID: uid,
                        "batch.kubernetes.io/job-name": name,
                        "controller-uid": uid,
                        "job-name": name,
                    }
                )
                template_meta["labels"] = dict(sorted(labels.items()))
        selector = spec.get("selector")
        if selector is None:
            spec["selector"] = {"matchLabels": {_JOB_UID: uid}}
        elif isinstance(selector, dict):
            match = selector.get("matchLabels")
            match = dict(match) if isinstance(match, dict) else {}
            match[_JOB_UID] = uid
            selector["matchLabels"] = match
    if info.key == ("batch", "jobs"):
        _job_labels(obj)
    elif info.key == ("apps", "daemonsets"):
        annotations = obj.setdefault("metadata", {}).setdefault("annotations", {})
        if isinstance(annotations, dict):
            annotations["deprecated.daemonset.template.generation"] = "1"


_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def prepare_update(info: ResourceInfo, new: dict[str, Any], old: Mapping[str, Any]) -> None:
    """What an update strategy does to a built-in object (``PrepareForUpdate``).

    A Deployment whose annotations change gets a new generation.

    A DaemonSet keeps its template generation (the request's annotation is not read), bumped when
    the pod template changes (``pkg/registry/apps/daemonset/strategy.go``; ``apps/v1`` writes the
    internal ``spec.templateGeneration`` as the ``deprecated.daemonset.template.generation``
    annotation, ``pkg/apis/apps/v1/conversion.go``).
    """
    old_meta = old.get("metadata") or {}
    if info.key == ("apps", "deployments"):
        # annotation changes bump the generation: they are copied to the ReplicaSets
        # (pkg/registry/apps/deployment/strategy.go)
        meta = new.setdefault("metadata", {})
        if (meta.get("annotations") or {}) != (old_meta.get("annotations") or {}):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1
        return
    if info.key != ("apps", "daemonsets"):
        return
    try:
        generation = int(str((old_meta.get("annotations") or {}).get(_TEMPLATE_GENERATION, "0")))
    except ValueError:
        generation = 0
    old_spec, new_spec = old.get("spec"), new.get("spec")
    old_template = old_spec.get("template") if isinstance(old_spec, Mapping) else None
    new_template = new_spec.get("template") if isinstance(new_spec, Mapping) else None
    if old_template != new_template:
        generation += 1
    meta = new.setdefault("metadata", {})
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    annotations[_TEMPLATE_GENERATION] = str(generation)
