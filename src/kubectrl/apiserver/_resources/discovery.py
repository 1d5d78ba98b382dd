"""Discovery documents: ``/version``, ``/api``, ``/apis``, ``/api/v1``, ``/apis/<g>[/<v>]``."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from kubectrl.apiserver._resources import versions
from kubectrl.apiserver._resources.registry import Registry
from kubectrl.apiserver._status import StatusError

__all__ = ["KUBERNETES_VERSION", "KUBERNETES_VERSIONS", "answer", "version_info"]

#: The Kubernetes releases a core can imitate: each supported minor and the patch release its
#: tables follow (``{"1.35": "v1.35.4", ...}``); ``APICore(version=...)`` and
#: ``FakeAPI(version=...)`` take one of the minors.
KUBERNETES_VERSIONS: Mapping[str, str] = MappingProxyType(dict(versions.RELEASES))

#: The Kubernetes release whose API a core imitates when none is chosen (its built-in tables:
#: kinds, strategies, defaults, validation, schemas); ``/version`` says the chosen one with a
#: ``-fake`` suffix.
KUBERNETES_VERSION = versions.RELEASES[versions.DEFAULT]


def version_info(minor: str) -> dict[str, str]:
    """The ``/version`` body of the core imitating Kubernetes ``minor``.

    Example::

        >>> version_info("1.36")["gitVersion"]
        'v1.36.3-fake'
    """
    release = versions.release(minor)
    return {
        "major": release.lstrip("v").split(".")[0],
        "minor": release.split(".")[1],
        "gitVersion": f"{release}-fake",
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "kubectrl",
        "platform": "python",
    }


def _groups(registry: Registry) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for info in registry.infos():
        versions = out.setdefault(info.group, [])
        for v in info.versions:
            if v not in versions:
                versions.append(v)
    return out


def answer(registry: Registry, parts: list[str]) -> dict[str, Any] | None:
    """The discovery body for a path (split on ``/``), or ``None`` when it is not discovery."""
    if parts == ["version"]:
        return version_info(versions.current())
    if parts == ["api"]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": "fake-apiserver:443"}
            ],
        }
    if parts == ["apis"]:
        groups = _groups(registry)
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [_group(g, v) for g, v in sorted(groups.items()) if g],
        }
    if len(parts) == 2 and parts[0] == "apis":
        # built only for a discovery path: every request asks here first (4% of FakeAPI's CPU)
        groups = _groups(registry)
        if parts[1] in groups:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group(parts[1], groups[parts[1]])}
    if len(parts) == 2 and parts[0] == "api":
        return _resource_list(registry, "", parts[1])
    if len(parts) == 3 and parts[0] == "apis":
        return _resource_list(registry, parts[1], parts[2])
    return None


def _group(group: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def _resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    infos = [i for i in registry.infos() if i.group == group and version in i.versions]
    if not infos:
        raise StatusError.make(404, "the server could not find the requested resource")
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": [
            entry
            for info in sorted(infos, key=lambda i: i.plural)
            for entry in info.discovery(version)
        ],
    }
