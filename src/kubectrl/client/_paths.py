"""Kept for what imports from here: the checked builder of request paths is part of
:mod:`kubectrl.client._discovery` (where a request goes: discovery, APIResource, paths)."""

from __future__ import annotations

from kubectrl.client._discovery import (
    COLLECTION,
    check_container,
    check_proxy_path,
    check_request,
    check_segment,
    describe,
    discovery_path,
    namespaced_path,
    pod_path,
    resource_path,
    segment_problems,
)

__all__ = [
    "COLLECTION",
    "check_container",
    "check_proxy_path",
    "check_request",
    "check_segment",
    "describe",
    "discovery_path",
    "namespaced_path",
    "pod_path",
    "resource_path",
    "segment_problems",
]
