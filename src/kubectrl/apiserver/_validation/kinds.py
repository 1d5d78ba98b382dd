"""Validation of the built-in kinds controllers write, a subset of ``pkg/apis/*/validation``.

The checks a controller is likely to hit, with the field paths and cause types of the real
server: pod specs (``pkg/apis/core/validation/validation.go`` ``ValidatePodSpec``: containers
required, their names DNS labels and unique, images required, ports in range, the enumerated
policies), pod templates of workloads (``restartPolicy: Always``; a Job's ``OnFailure`` or
``Never``) and their counts (``pkg/apis/apps/validation``, ``pkg/apis/batch/validation``: no
negative replicas, parallelism, completions or backoffLimit; a CronJob's schedule), Services
(ports required and in range), PersistentVolumeClaims (access modes and a storage request),
Ingresses (hosts, path types, backends; ``pkg/apis/networking/validation``), RBAC rules and
bindings (``pkg/apis/rbac/validation``), Leases (``pkg/apis/coordination/validation``) and
ConfigMap/Secret keys. What is not checked here is listed in the docs' known differences.
Each kind's strategy (:mod:`kubectrl.apiserver._strategies`) runs its check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from kubectrl.apiserver._schema.quantity import parse_quantity

__all__ = [
    "Check",
    "cluster_role",
    "cluster_role_binding",
    "config_map",
    "cron_job",
    "ingress",
    "job",
    "lease",
    "pod",
    "pod_spec",
    "pvc",
    "role",
    "role_binding",
    "secret",
    "service",
    "validate_kind",
    "workload",
]

Cause = tuple[str, str, str]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+\Z")
_PORT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
_RBAC = "rbac.authorization.k8s.io"


class _Causes(list[Cause]):
    def required(self, field: str, detail: str = "") -> None:
        self.append(
            ("FieldValueRequired", field, "Required value" + (f": {detail}" if detail else ""))
        )

    def invalid(self, field: str, value: Any, detail: str) -> None:
        self.append(("FieldValueInvalid", field, f"Invalid value: {_show(value)}: {detail}"))

    def not_supported(self, field: str, value: Any, supported: tuple[str, ...]) -> None:
        allowed = ", ".join(json.dumps(s) for s in supported)
        self.append(
            (
                "FieldValueNotSupported",
                field,
                f"Unsupported value: {_show(value)}: supported values: {allowed}",
            )
        )

    def duplicate(self, field: str, value: Any) -> None:
        self.append(("FieldValueDuplicate", field, f"Duplicate value: {_show(value)}"))

    def enum(self, field: str, value: Any, supported: tuple[str, ...]) -> None:
        if value is not None and value not in supported:
            self.not_supported(field, value, supported)

    def non_negative(self, field: str, value: Any) -> None:
        if isinstance(value, int) and value < 0:
            self.invalid(field, value, "must be greater than or equal to 0")

    def port(self, field: str, value: Any) -> None:
        if isinstance(value, int) and not 1 <= value <= 65535:
            self.invalid(field, value, "must be between 1 and 65535, inclusive")


#: A kind's check: adds the causes it finds in an object.
Check = Callable[[Mapping[str, Any], _Causes], None]


def _show(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else json.dumps(value, default=str)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _containers(out: _Causes, spec: Mapping[str, Any], path: str) -> None:
    seen: set[str] = set()
    containers = _list(spec.get("containers"))
    if not containers:
        out.required(f"{path}.containers")
    for field in ("initContainers", "containers"):
        for index, container in enumerate(_list(spec.get(field))):
            here = f"{path}.{field}[{index}]"
            container = _map(container)
            name = container.get("name") or ""
            if not name:
                out.required(f"{here}.name")
            elif not _DNS_LABEL.match(name) or len(name) > 63:
                out.invalid(f"{here}.name", name, _LABEL_MSG)
            elif name in seen:
                out.duplicate(f"{here}.name", name)
            seen.add(name)
            if not container.get("image"):
                out.required(f"{here}.image")
            out.enum(
                f"{here}.imagePullPolicy",
                container.get("imagePullPolicy"),
                ("Always", "IfNotPresent", "Never"),
            )
            out.enum(
                f"{here}.terminationMessagePolicy",
                container.get("terminationMessagePolicy"),
                ("File", "FallbackToLogsOnError"),
            )
            port_names: set[str] = set()
            for number, port in enumerate(_list(container.get("ports"))):
                port = _map(port)
                where = f"{here}.ports[{number}]"
                port_name = port.get("name")
                if port_name:
                    if len(port_name) > 15 or not _PORT_NAME.match(port_name):
                        out.invalid(
                            f"{where}.name", port_name, "must be no more than 15 characters"
                        )
                    elif port_name in port_names:
                        out.duplicate(f"{where}.name", port_name)
                    port_names.add(port_name)
                out.port(f"{where}.containerPort", port.get("containerPort", 0))
                if port.get("hostPort"):
                    out.port(f"{where}.hostPort", port.get("hostPort"))
                out.enum(f"{where}.protocol", port.get("protocol"), ("SCTP", "TCP", "UDP"))


def pod_spec(out: _Causes, spec: Any, path: str, restart: tuple[str, ...] | None = None) -> None:
    """Validate a pod spec at ``path``; ``restart``: the restart policies its owner allows."""
    if not isinstance(spec, Mapping):
        spec = {}  # a missing spec is validated as the empty one (its zero value)
    _containers(out, spec, path)
    policy = spec.get("restartPolicy")
    if restart == ("OnFailure", "Never"):
        if policy != "":  # the pod spec's own check; an empty one is the Job's required
            out.enum(f"{path}.restartPolicy", policy, ("Always", "OnFailure", "Never"))
        if policy not in restart:
            out.required(f"{path}.restartPolicy", 'valid values: "OnFailure", "Never"')
    else:
        out.enum(f"{path}.restartPolicy", policy, restart or ("Always", "OnFailure", "Never"))
    out.enum(
        f"{path}.dnsPolicy",
        spec.get("dnsPolicy"),
        ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"),
    )
    grace = spec.get("terminationGracePeriodSeconds")
    out.non_negative(f"{path}.terminationGracePeriodSeconds", grace)
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and deadline <= 0:
        out.invalid(
            f"{path}.activeDeadlineSeconds", deadline, "must be between 1 and 2147483647, inclusive"
        )


def _template(out: _Causes, spec: Mapping[str, Any], path: str, restart: tuple[str, ...]) -> None:
    template = _map(spec.get("template"))  # a missing template is its zero value
    pod_spec(out, template.get("spec"), f"{path}.template.spec", restart)


def pod(obj: Mapping[str, Any], out: _Causes) -> None:
    pod_spec(out, obj.get("spec"), "spec")


def workload(obj: Mapping[str, Any], out: _Causes) -> None:
    spec = _map(obj.get("spec"))
    out.non_negative("spec.replicas", spec.get("replicas"))
    out.non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    out.non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    _template(out, spec, "spec", ("Always",))


def _job_spec(out: _Causes, spec: Mapping[str, Any], path: str) -> None:
    for field in ("parallelism", "completions", "backoffLimit"):
        out.non_negative(f"{path}.{field}", spec.get(field))
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and deadline <= 0:
        out.invalid(f"{path}.activeDeadlineSeconds", deadline, "must be greater than or equal to 1")
    out.enum(f"{path}.completionMode", spec.get("completionMode"), ("NonIndexed", "Indexed"))
    _template(out, spec, path, ("OnFailure", "Never"))


_JOB_LABELS = (
    ("controller-uid", "uid"),
    ("job-name", "name"),
    ("batch.kubernetes.io/controller-uid", "uid"),
    ("batch.kubernetes.io/job-name", "name"),
)


def job(obj: Mapping[str, Any], out: _Causes) -> None:
    spec = _map(obj.get("spec"))
    if spec.get("manualSelector") is not True and spec.get("selector") is not None:
        # validateGeneratedSelector: the generated labels are on the pod template
        meta = _map(obj.get("metadata"))
        labels = _map(_map(_map(spec.get("template")).get("metadata")).get("labels"))
        for key, source in _JOB_LABELS:
            expected = str(meta.get(source) or "")
            where = f"spec.template.metadata.labels[{key}]"
            if key not in labels:
                out.required(where, expected)
            elif labels[key] != expected:
                out.invalid(where, labels[key], f"must be '{expected}'")
        match = _map(_map(spec.get("selector")).get("matchLabels"))
        if set(match) - {"batch.kubernetes.io/controller-uid"}:
            out.invalid("spec.selector", spec.get("selector"), "`selector` not auto-generated")
    _job_spec(out, spec, "spec")
    selector = spec.get("selector")
    if selector is None:
        out.required("spec.selector")  # and it selects nothing: the labels cannot match
    labels = _map(_map(_map(spec.get("template")).get("metadata")).get("labels"))
    from kubectrl import labels as _labels

    try:
        matches = selector is not None and _labels.parse(dict(selector)).matches(
            {str(k): str(v) for k, v in labels.items()}
        )
    except (ValueError, TypeError):
        matches = False
    if not matches:
        out.invalid(
            "spec.template.metadata.labels",
            dict(labels) or None,
            "`selector` does not match template `labels`",
        )


def cron_job(obj: Mapping[str, Any], out: _Causes) -> None:
    spec = _map(obj.get("spec"))
    name = str(_map(obj.get("metadata")).get("name") or "")
    if len(name) > 52:
        out.invalid("metadata.name", name, "must be no more than 52 characters")
    schedule = spec.get("schedule")
    if not schedule:
        out.required("spec.schedule")
    elif not str(schedule).startswith("@"):
        fields = str(schedule).split()
        if str(schedule).startswith(("TZ=", "CRON_TZ=")):
            out.invalid(
                "spec.schedule",
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            )
        elif len(fields) != 5:
            out.invalid(
                "spec.schedule",
                schedule,
                f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]",
            )
    out.enum(
        "spec.concurrencyPolicy", spec.get("concurrencyPolicy"), ("Allow", "Forbid", "Replace")
    )
    for field in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        out.non_negative(f"spec.{field}", spec.get(field))
    job = _map(spec.get("jobTemplate")).get("spec")
    _job_spec(out, _map(job), "spec.jobTemplate.spec")


def _port_name_errors(name: str) -> list[str]:
    """``IsValidPortName`` (``k8s.io/apimachinery/pkg/util/validation``): an IANA service name."""
    errors: list[str] = []
    if not 1 <= len(name) <= 15:
        errors.append("must be no more than 15 characters")
    if not re.fullmatch(r"[-a-z0-9]+", name):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in name:
        errors.append("must not contain consecutive hyphens")
    if not re.search(r"[a-z]", name):
        errors.append("must contain at least one letter (a-z)")
    if name.startswith("-") or name.endswith("-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def service(obj: Mapping[str, Any], out: _Causes) -> None:
    spec = _map(obj.get("spec"))
    kind = spec.get("type", "ClusterIP")
    out.enum("spec.type", kind, ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"))
    ports = _list(spec.get("ports"))
    if not ports and kind != "ExternalName" and spec.get("clusterIP") != "None":
        out.required("spec.ports")
    names: set[str] = set()
    for index, port in enumerate(ports):
        port = _map(port)
        where = f"spec.ports[{index}]"
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            out.required(f"{where}.name")
        elif name:
            if name in names:
                out.duplicate(f"{where}.name", name)
            names.add(name)
        out.port(f"{where}.port", port.get("port", 0))
        out.enum(f"{where}.protocol", port.get("protocol"), ("SCTP", "TCP", "UDP"))
        target = port.get("targetPort")
        if isinstance(target, int):
            out.port(f"{where}.targetPort", target)
        elif isinstance(target, str):
            for error in _port_name_errors(target):  # ValidatePortNumOrName
                out.invalid(f"{where}.targetPort", target, error)


def pvc(obj: Mapping[str, Any], out: _Causes) -> None:
    spec = _map(obj.get("spec"))
    modes = _list(spec.get("accessModes"))
    if not modes:
        out.required("spec.accessModes", "at least 1 access mode is required")
    for mode in modes:
        out.enum(
            "spec.accessModes",
            mode,
            ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"),
        )
    requests = _map(_map(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        out.required("spec.resources[storage]")
    else:
        size = parse_quantity(requests["storage"])
        if size is not None and size <= 0:
            out.invalid("spec.resources[storage]", requests["storage"], "must be greater than zero")
    out.enum("spec.volumeMode", spec.get("volumeMode"), ("Block", "Filesystem"))


def _backend(out: _Causes, backend: Any, path: str) -> None:
    backend = _map(backend)
    service = backend.get("service")
    if service is None and backend.get("resource") is None:
        out.invalid(path, None, "one backend must be specified")
        return
    if service is not None:  # validateIngressBackend
        service = _map(service)
        name = str(service.get("name") or "")
        if not name:
            out.required(f"{path}.service.name")
        else:  # ValidateServiceName: an RFC 1123 label (since v1.34), dots named apart
            for detail in _service_name_errors(name):
                out.invalid(f"{path}.service.name", name, detail)
        port = _map(service.get("port"))
        port_name, number = str(port.get("name") or ""), port.get("number") or 0
        if port_name and number:
            out.invalid(path, "", "cannot set both port name & port number")
        elif port_name:
            for error in _port_name_errors(port_name):
                out.invalid(f"{path}.service.port.name", port_name, error)
        elif number:
            out.port(f"{path}.service.port.number", number)
        else:
            out.required(path, "port name or number is required")


def ingress(obj: Mapping[str, Any], out: _Causes) -> None:
    spec = _map(obj.get("spec"))
    rules = _list(spec.get("rules"))
    if spec.get("defaultBackend") is None and not rules:
        out.invalid("spec", None, "either `defaultBackend` or `rules` must be specified")
    if spec.get("defaultBackend") is not None:
        _backend(out, spec["defaultBackend"], "spec.defaultBackend")
    for index, rule in enumerate(rules):
        rule = _map(rule)
        where = f"spec.rules[{index}]"
        host = rule.get("host")
        if host:
            bare = host[2:] if host.startswith("*.") else host
            if not _DNS_SUBDOMAIN.match(bare):
                out.invalid(f"{where}.host", host, _SUBDOMAIN_MSG)
        http = rule.get("http")
        if http is None:
            continue
        paths = _list(_map(http).get("paths"))
        if not paths:
            out.required(f"{where}.http.paths")
        for number, item in enumerate(paths):
            item = _map(item)
            at = f"{where}.http.paths[{number}]"
            path_type = item.get("pathType")
            if path_type is None:  # validateHTTPIngressPath stops there
                out.required(f"{at}.pathType", "pathType must be specified")
                continue
            out.enum(f"{at}.pathType", path_type, ("Exact", "ImplementationSpecific", "Prefix"))
            if path_type in ("Exact", "Prefix") and not str(item.get("path", "")).startswith("/"):
                out.invalid(f"{at}.path", item.get("path", ""), "must be an absolute path")
            _backend(out, item.get("backend"), f"{at}.backend")


def _rules(obj: Mapping[str, Any], out: _Causes, cluster: bool) -> None:
    for index, rule in enumerate(_list(obj.get("rules"))):
        rule = _map(rule)
        where = f"rules[{index}]"
        if not rule.get("verbs"):
            out.required(f"{where}.verbs", "verbs must contain at least one value")
        urls = rule.get("nonResourceURLs")
        if urls:
            if not cluster:
                out.invalid(
                    f"{where}.nonResourceURLs",
                    urls,
                    "namespaced rules cannot apply to non-resource URLs",
                )
            if rule.get("apiGroups") or rule.get("resources"):
                out.invalid(
                    f"{where}.nonResourceURLs",
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            continue
        if not rule.get("apiGroups"):
            out.required(f"{where}.apiGroups", "resource rules must supply at least one api group")
        if not rule.get("resources"):
            out.required(f"{where}.resources", "resource rules must supply at least one resource")


def role(obj: Mapping[str, Any], out: _Causes) -> None:
    _rules(obj, out, cluster=False)


def cluster_role(obj: Mapping[str, Any], out: _Causes) -> None:
    if obj.get("aggregationRule") is None:
        _rules(obj, out, cluster=True)


def _service_name_errors(name: str) -> list[str]:
    if "." in name:
        return ["must not contain dots"]
    if len(name) > 63:
        return ["must be no more than 63 characters"]
    return [] if _DNS_LABEL.match(name) else [_LABEL_MSG]


def _path_segment_errors(name: str) -> list[str]:
    """``path.IsValidPathSegmentName`` (the names of RBAC objects)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def _binding(obj: Mapping[str, Any], out: _Causes, cluster: bool) -> None:
    ref = _map(obj.get("roleRef"))
    if ref.get("apiGroup") and ref["apiGroup"] != _RBAC:
        out.not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), (_RBAC,))
    kinds = ("ClusterRole",) if cluster else ("Role", "ClusterRole")
    if ref.get("kind", "") not in kinds:
        out.not_supported("roleRef.kind", ref.get("kind", ""), kinds)
    if not ref.get("name"):
        out.required("roleRef.name")
    else:
        for error in _path_segment_errors(str(ref["name"])):  # ValidateRBACName
            out.invalid("roleRef.name", ref["name"], error)
    for index, subject in enumerate(_list(obj.get("subjects"))):
        subject = _map(subject)
        where = f"subjects[{index}]"
        kind = subject.get("kind", "")
        name = str(subject.get("name") or "")
        if not name:
            out.required(f"{where}.name")
        if kind == "ServiceAccount":
            if name and (len(name) > 253 or not _DNS_SUBDOMAIN.match(name)):
                detail = (
                    "must be no more than 253 characters" if len(name) > 253 else _SUBDOMAIN_MSG
                )
                out.invalid(f"{where}.name", name, detail)  # ValidateServiceAccountName
            if subject.get("apiGroup"):
                out.not_supported(f"{where}.apiGroup", subject["apiGroup"], ("",))
            if cluster and not subject.get("namespace"):
                out.required(f"{where}.namespace")
        elif kind in ("User", "Group"):
            if subject.get("apiGroup") != _RBAC:
                out.not_supported(f"{where}.apiGroup", subject.get("apiGroup", ""), (_RBAC,))
        else:
            out.not_supported(f"{where}.kind", kind, ("ServiceAccount", "User", "Group"))


def role_binding(obj: Mapping[str, Any], out: _Causes) -> None:
    _binding(obj, out, cluster=False)


def cluster_role_binding(obj: Mapping[str, Any], out: _Causes) -> None:
    _binding(obj, out, cluster=True)


def lease(obj: Mapping[str, Any], out: _Causes) -> None:
    spec = _map(obj.get("spec"))
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        out.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0")
    out.non_negative("spec.leaseTransitions", spec.get("leaseTransitions"))


def _data_keys(obj: Mapping[str, Any], out: _Causes, fields: tuple[str, ...]) -> None:
    seen: set[str] = set()
    for field in fields:
        for key in _map(obj.get(field)):
            where = f"{field}[{key}]"
            if len(key) > 253:
                out.invalid(where, key, "must be no more than 253 characters")
            elif not _CONFIG_KEY.match(key):
                out.invalid(where, key, _CONFIG_KEY_MSG)
            elif key in (".", ".."):
                out.invalid(where, key, f"must not be '{key}'")
            elif key in seen:
                out.invalid(where, key, "duplicate of key present in data")
            seen.add(key)


def config_map(obj: Mapping[str, Any], out: _Causes) -> None:
    _data_keys(obj, out, ("data", "binaryData"))


def secret(obj: Mapping[str, Any], out: _Causes) -> None:
    _data_keys(obj, out, ("data",))


def validate_kind(check: Check, obj: Mapping[str, Any]) -> list[Cause]:
    """The causes ``check`` (one of this module's kind checks) finds in ``obj``."""
    out = _Causes()
    check(obj, out)
    return list(out)
