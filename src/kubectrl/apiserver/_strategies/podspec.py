"""The defaults of a pod spec, a Pod's and a workload's pod template's alike.

``pkg/apis/core/v1/defaults.go``: ``SetDefaults_PodSpec``, ``SetDefaults_Container`` (the image
pull policy from the image's tag), ``SetDefaults_ContainerPort``; and the QoS class a Pod's
status gets (``pkg/apis/core/helper/qos``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["pod_defaults", "qos_class"]

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


def qos_class(spec: Any) -> str:
    """A pod's QoS class: BestEffort without requests or limits, Guaranteed when every
    container's limits set cpu and memory and its requests equal them, else Burstable."""
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
