"""Defaulting: the few built-in defaults the core applies, and what admission adds on create.

The real apiserver defaults many more fields (``pkg/apis/*/v1/defaults.go``); these are the
ones controllers commonly read back. Custom resources are defaulted from their CRD schema
(:func:`kubectrl.apiserver._resources.apply_defaults`).
"""

from __future__ import annotations

import base64
import random
from typing import Any

from kubectrl.apiserver._resources import ResourceInfo

__all__ = ["allocate", "defaults", "pod_defaults"]


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
                    port.setdefault("targetPort", port.get("port"))
        status = obj.setdefault("status", {})
        status.setdefault("loadBalancer", {})
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
    if info.key == ("", "pods"):
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


def pod_defaults(spec: Any) -> None:
    """The defaults of a pod spec (a workload's template too)."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for container in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        if not isinstance(container, dict):
            continue
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        image = str(container.get("image", ""))
        tag = image.rsplit("/", 1)[-1]
        latest = ":" not in tag or tag.endswith(":latest")
        container.setdefault(
            "imagePullPolicy", "Always" if latest and "@" not in image else "IfNotPresent"
        )
        container.setdefault("resources", {})
        for port in container.get("ports") or ():
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
