"""A real local control plane (etcd + kube-apiserver), or a whole local cluster, for tests.

The equivalent of controller-runtime's envtest. :class:`ControlPlane` starts etcd and
kube-apiserver on free loopback ports with generated certificates, RBAC authorization and
service-account keys; it hands out an admin kubeconfig, makes kubeconfigs for RBAC-less users
(:meth:`ControlPlane.add_user`), installs CRDs and waits until they are Established
(:meth:`ControlPlane.install_crds`), and stops without leaving a process or a directory behind,
even when the Python process that started it is killed.

:class:`LocalCluster` (cluster mode) adds kube-controller-manager (every default controller),
kube-scheduler and kwok simulating nodes, so Deployments get Pods that become Running and Ready,
garbage collection and namespace deletion happen, and ServiceAccounts work as in a real cluster.
:func:`start_control_planes` starts several control planes side by side (a multicluster test).

Binaries come from ``TEST_ASSET_<NAME>`` (``TEST_ASSET_KUBE_APISERVER``...),
``KUBEBUILDER_ASSETS``, ``PATH``, kubectrl's cache, or are built from the upstream Go modules
pinned in this package (:func:`find_binaries`).

A pytest plugin (registered by installing ``kubectrl[envtest]``) provides the fixtures
``kubectrl_control_plane`` (session), ``kubectrl_kubeconfig`` (session, the admin kubeconfig's
path), ``kubectrl_namespace`` (a fresh namespace per test), ``kubectrl_cluster`` (session, a
:class:`LocalCluster`) and ``kubectrl_control_planes`` (session, a function starting more named
control planes, kept for the session). ``python -m kubectrl.envtest
start [--cluster]|stop|env|kubectl`` gives a person a running API server (or cluster) and kubectl
from a shell.

Example::

    from kubectrl.envtest import ControlPlane

    with ControlPlane() as cp:
        with cp.http_client() as http:
            assert http.get("/readyz").status_code == 200
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.envtest._binaries import (
    DEFAULT_VERSION,
    SUPPORTED_VERSIONS,
    Binaries,
    cache_dir,
    find_binaries,
)
from kubectrl.envtest._cluster import KWOK_DEBUG_KINDS, LocalCluster, cri_log_line
from kubectrl.envtest._control_plane import ControlPlane, Kubeconfig
from kubectrl.envtest._errors import BinaryNotFoundError, ControlPlaneError
from kubectrl.envtest._several import start_control_planes
from kubectrl.envtest._webhooks import WebhookInstallOptions

__all__ = [
    "DEFAULT_VERSION",
    "KWOK_DEBUG_KINDS",
    "SUPPORTED_VERSIONS",
    "Binaries",
    "BinaryNotFoundError",
    "ControlPlane",
    "ControlPlaneError",
    "Kubeconfig",
    "LocalCluster",
    "WebhookInstallOptions",
    "cache_dir",
    "cri_log_line",
    "find_binaries",
    "start_control_planes",
]

_publish(__name__, globals(), __all__)
