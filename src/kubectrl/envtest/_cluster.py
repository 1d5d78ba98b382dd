"""Cluster mode: the control plane plus controller-manager, scheduler and kwok's simulated nodes."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from kubectrl.envtest._binaries import (
    GATES_SINCE,
    Binaries,
    find_binaries,
    minor_key,
    normalize_version,
)
from kubectrl.envtest._control_plane import ControlPlane, _free_ports, _Process, _write_private
from kubectrl.envtest._errors import ControlPlaneError

__all__ = ["KWOK_DEBUG_KINDS", "KWOK_NODE_ANNOTATION", "LocalCluster", "cri_log_line"]

#: The annotation kwok's own tooling puts on the nodes it simulates; ours carry it too.
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
_POD_CIDR = "10.244.0.0/16"  # kwok's default (10.0.0.0/24) is the apiserver's service range
# The nodes' address is loopback: kube-apiserver reaches kwok's kubelet API there (logs, exec,
# attach, port-forward), verifying kwok's serving certificate against the envtest CA.
_NODE_IP = "127.0.0.1"

#: kwok's per-pod debugging resources (config.kwok.x-k8s.io's kwok.x-k8s.io/v1alpha1 kinds) the
#: cluster serves as CRDs: a test creates ``Logs``/``Exec``/``Attach``/``PortForward`` objects
#: named after a pod, in its namespace, and kwok answers that pod's subresource with them.
KWOK_DEBUG_KINDS = ("Logs", "Exec", "Attach", "PortForward")

# Every pod of the cluster can be exec'ed into unless an Exec object says otherwise: the command
# runs on this host (kwok's "local" exec), in kwok's working directory.
_DEFAULT_EXEC = """\
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: kubectrl-local-exec
spec:
  execs:
  - local: {}
"""

# kwok moves objects through "stages"; these are kubectrl's own, the smallest set that makes a
# cluster behave: nodes become Ready, a scheduled Pod becomes Running and Ready at once, and a
# Pod being deleted is removed (what the kubelet confirms on a real node).
_STAGES = """\
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kubectrl-node-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - type: {{ .type | Quote }}
        status: {{ .status | Quote }}
        reason: {{ .reason | Quote }}
        message: {{ .message | Quote }}
        lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      addresses:
      - type: InternalIP
        address: {{ NodeIP | Quote }}
      - type: Hostname
        address: {{ .metadata.name | Quote }}
      daemonEndpoints:
        kubeletEndpoint:
          Port: {{ NodePort }}
      allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
      capacity: {cpu: "32", memory: 256Gi, pods: "110"}
      nodeInfo:
        architecture: amd64
        operatingSystem: linux
        kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
        kubeProxyVersion: {{ printf "kwok-%s" Version | Quote }}
        containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
        kernelVersion: {{ printf "kwok-%s" Version | Quote }}
        osImage: kwok
        bootID: ""
        machineID: ""
        systemUUID: ""
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kubectrl-pod-running
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ['Pending']
  next:
    statusTemplate: |
      {{ $now := Now }}
      phase: Running
      startTime: {{ $now | Quote }}
      conditions:
      {{ range (list "PodScheduled" "Initialized" "ContainersReady" "Ready") }}
      - type: {{ . | Quote }}
        status: "True"
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      {{ range .spec.readinessGates }}
      - type: {{ .conditionType | Quote }}
        status: "True"
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        imageID: ""
        ready: true
        started: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      {{ with NodeIPsWith .spec.nodeName }}
      hostIP: {{ index . 0 | Quote }}
      hostIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      {{ $hostNetwork := or .spec.hostNetwork false }}
      {{ $uid := or .metadata.uid "" }}
      {{ $name := or .metadata.name "" }}
      {{ $namespace := or .metadata.namespace "" }}
      {{ with PodIPsWith .spec.nodeName $hostNetwork $uid $name $namespace }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: kubectrl-pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: Exists
  next:
    delete: true
"""


class LocalCluster(ControlPlane):
    """A local cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok.

    Everything :class:`ControlPlane` guarantees, plus what the other components do:

    * kube-controller-manager runs every default controller (``--controllers=*``) with a
      service-account credential per controller: Deployments get ReplicaSets and Pods, deleted
      owners take their dependents with them (garbage collector), a deleted namespace is emptied
      and removed, every namespace gets a ``default`` ServiceAccount and the
      ``kube-root-ca.crt`` ConfigMap;
    * the apiserver runs the admission plugins a real cluster has by default (NamespaceLifecycle,
      ServiceAccount, ...), unlike plain mode;
    * kube-scheduler places Pods on ``nodes`` simulated nodes (``kwok-node-0``...);
    * kwok plays every kubelet: nodes are Ready, a scheduled Pod becomes Running and Ready at
      once (no container runs: images are never pulled), a deleted Pod goes away.

    :meth:`start` returns when every component answers, every node is Ready and schedulable
    and the ``default`` ServiceAccount exists. A component that fails raises
    :class:`ControlPlaneError` naming it, with the last lines of its log. All processes are
    under the same watchdog as the control plane's: none outlives its owner.

    * kwok also serves the kubelet API behind ``pods/log``, ``pods/exec``, ``pods/attach`` and
      ``pods/portforward`` (the apiserver verifies its certificate against the envtest CA): an
      exec runs the command on this host, unless an ``Exec`` object (kwok.x-k8s.io/v1alpha1,
      named after the pod) says otherwise; logs and attach read the file a ``Logs``/``Attach``
      object names (in CRI log format: ``kubectrl.envtest.cri_log_line``); a
      ``PortForward`` object forwards a pod's ports to an address of this host. Nothing else
      runs in the Pods.

    Caveats: Services get cluster IPs but no endpoints are reachable; Jobs' Pods run forever;
    kwok reports a failing exec command as an internal error, not a non-zero exit code.

    Example::

        with LocalCluster(nodes=1) as cluster:
            with cluster.http_client() as http:
                nodes = http.get("/api/v1/nodes").json()["items"]
                assert [n["metadata"]["name"] for n in nodes] == ["kwok-node-0"]
    """

    def __init__(
        self,
        *,
        nodes: int = 3,
        controller_manager_args: Sequence[str] = (),
        scheduler_args: Sequence[str] = (),
        kwok_args: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        """Configure (but do not start) a cluster.

        Args:
            nodes: how many simulated nodes kwok manages (default 3).
            controller_manager_args / scheduler_args / kwok_args: extra flags, appended.
            kwargs: as for :class:`ControlPlane` (``binaries``, ``build``, ``start_timeout``...);
                ``feature_gates`` defaults to ``{"ShardedListAndWatch": True}`` here from
                Kubernetes 1.36 on (sharded lists and watches on, as the sharded managers use
                them; 1.35 has no such gate); pass ``{"ShardedListAndWatch": False}`` for a
                server without them.
        """
        if "feature_gates" not in kwargs:
            version = normalize_version(kwargs.get("version"))
            kwargs["feature_gates"] = {
                gate: True
                for gate, since in GATES_SINCE.items()
                if minor_key(version) >= minor_key(since)
            }
        super().__init__(**kwargs)
        if nodes < 1:
            raise ValueError(f"LocalCluster: nodes must be at least 1, not {nodes}")
        self.nodes = nodes
        self._controller_manager_args = list(controller_manager_args)
        self._scheduler_args = list(scheduler_args)
        self._kwok_args = list(kwok_args)

    @property
    def node_names(self) -> list[str]:
        """The simulated nodes' names."""
        return [f"kwok-node-{i}" for i in range(self.nodes)]

    def _find_binaries(self) -> Binaries:
        return find_binaries(build=self._build, log=self._log, cluster=True, version=self.version)

    def _admission_flags(self) -> list[str]:
        # The apiserver's default admission plugins, as in a real cluster; and the kubelet
        # side: the CA is made by now, so kwok's serving certificate (checked by the apiserver)
        # and the apiserver's kubelet client certificate are issued here, before it starts.
        ca = self._ca
        if ca is None:
            raise ControlPlaneError("the CA must exist before the kubelet certificates")
        pki = self.work_dir / "pki"
        serving = ca.issue("kwok-kubelet", ip_addresses=(_NODE_IP,), server=True)
        _write_private(pki / "kwok-kubelet.crt", serving.cert_pem)
        _write_private(pki / "kwok-kubelet.key", serving.key_pem)
        client = ca.issue("kube-apiserver-kubelet-client", organizations=("system:masters",))
        _write_private(pki / "apiserver-kubelet-client.crt", client.cert_pem)
        _write_private(pki / "apiserver-kubelet-client.key", client.key_pem)
        return [
            f"--kubelet-certificate-authority={pki / 'ca.crt'}",
            f"--kubelet-client-certificate={pki / 'apiserver-kubelet-client.crt'}",
            f"--kubelet-client-key={pki / 'apiserver-kubelet-client.key'}",
            "--kubelet-preferred-address-types=InternalIP",
        ]

    def _start_components(self, binaries: Binaries) -> None:
        controller_manager = binaries.kube_controller_manager
        scheduler = binaries.kube_scheduler
        kwok = binaries.kwok
        if controller_manager is None or scheduler is None or kwok is None:
            missing = [
                name
                for name in ("kube-controller-manager", "kube-scheduler", "kwok")
                if binaries.get(name) is None
            ]
            raise ControlPlaneError(
                f"LocalCluster needs {', '.join(missing)}; the given Binaries have none. Use "
                "find_binaries(cluster=True) or set TEST_ASSET_KUBE_CONTROLLER_MANAGER / "
                "TEST_ASSET_KUBE_SCHEDULER / TEST_ASSET_KWOK."
            )
        self._start_controller_manager(controller_manager)
        self._start_scheduler(scheduler)
        self._start_kwok(kwok)
        self._create_nodes()
        self._wait_settled()

    def _component_dir(self, name: str) -> Path:
        path = self.work_dir / name
        path.mkdir(exist_ok=True)
        return path

    def _start_component(
        self, name: str, argv: list[str], probe: Callable[[], bool], what: str
    ) -> _Process:
        proc = self._spawn(name, argv)
        self._components[name] = proc
        self._wait(proc, what, probe)
        return proc

    def _healthz_probe(self, port: int) -> Callable[[], bool]:
        def healthy() -> bool:
            # The component serves a self-signed certificate; /healthz is always allowed.
            url = f"https://127.0.0.1:{port}/healthz"
            response = httpx.get(url, verify=False, timeout=2.0)  # noqa: S501 - self-signed
            return response.status_code == 200

        return healthy

    def _start_controller_manager(self, binary: Path) -> None:
        home = self._component_dir("kube-controller-manager")
        user = self._write_kubeconfig("system:kube-controller-manager", ())
        (port,) = _free_ports(1)
        pki = self.work_dir / "pki"
        argv = [
            str(binary),
            f"--kubeconfig={user.path}",
            f"--authentication-kubeconfig={user.path}",
            f"--authorization-kubeconfig={user.path}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={home}",
            "--controllers=*",
            "--use-service-account-credentials=true",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            "--leader-elect=false",
            *self._controller_manager_args,
        ]
        self._start_component(
            "kube-controller-manager", argv, self._healthz_probe(port), "/healthz"
        )

    def _start_scheduler(self, binary: Path) -> None:
        home = self._component_dir("kube-scheduler")
        user = self._write_kubeconfig("system:kube-scheduler", ())
        (port,) = _free_ports(1)
        argv = [
            str(binary),
            f"--kubeconfig={user.path}",
            f"--authentication-kubeconfig={user.path}",
            f"--authorization-kubeconfig={user.path}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={home}",
            "--leader-elect=false",
            *self._scheduler_args,
        ]
        self._start_component("kube-scheduler", argv, self._healthz_probe(port), "/healthz")

    def _start_kwok(self, binary: Path) -> None:
        home = self._component_dir("kwok")
        stages = home / "stages.yaml"
        stages.write_text(_STAGES + _DEFAULT_EXEC)
        self._install_kwok_crds()
        pki = self.work_dir / "pki"
        # kwok writes node and pod status for every node: an admin, like a cluster's kubelets
        # together (and the NodeRestriction plugin is not on for it to pass).
        user = self._write_kubeconfig("kwok", ("system:masters",))
        (port,) = _free_ports(1)
        argv = [
            str(binary),
            f"--kubeconfig={user.path}",
            f"--config={stages}",
            "--manage-all-nodes=true",
            f"--cidr={_POD_CIDR}",
            f"--node-ip={_NODE_IP}",
            f"--server-address=127.0.0.1:{port}",
            f"--node-port={port}",
            f"--tls-cert-file={pki / 'kwok-kubelet.crt'}",
            f"--tls-private-key-file={pki / 'kwok-kubelet.key'}",
            f"--enable-crds={','.join(KWOK_DEBUG_KINDS)}",
            *self._kwok_args,
        ]

        def healthy() -> bool:
            response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2.0)
            return response.status_code == 200

        self._start_component("kwok", argv, healthy, f"/healthz on 127.0.0.1:{port}")

    def _install_kwok_crds(self) -> None:
        """Create the CRDs of kwok's per-pod debugging kinds; return when they are served."""
        with self.http_client() as http:
            for kind in KWOK_DEBUG_KINDS:
                response = http.post(
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                    content=json.dumps(_kwok_crd(kind)),
                    headers={"Content-Type": "application/json"},
                )
                if response.status_code not in (201, 409):
                    raise ControlPlaneError(
                        f"creating kwok's {kind} CRD: HTTP {response.status_code} {response.text}"
                    )
            deadline = time.monotonic() + self.start_timeout
            while time.monotonic() < deadline:
                served = http.get("/apis/kwok.x-k8s.io/v1alpha1")
                names = (
                    {r.get("kind") for r in served.json().get("resources", [])}
                    if served.status_code == 200
                    else set()
                )
                if names >= set(KWOK_DEBUG_KINDS):
                    return
                time.sleep(0.1)
        raise ControlPlaneError(
            f"kwok's CRDs ({', '.join(KWOK_DEBUG_KINDS)}) were not served within "
            f"{self.start_timeout:.0f}s"
        )

    def _create_nodes(self) -> None:
        with self.http_client() as http:
            for name in self.node_names:
                node = {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": name,
                        "annotations": {KWOK_NODE_ANNOTATION: "fake"},
                        "labels": {
                            "kubernetes.io/hostname": name,
                            "kubernetes.io/os": "linux",
                            "kubernetes.io/arch": "amd64",
                            "type": "kwok",
                        },
                    },
                }
                response = http.post("/api/v1/nodes", json=node)
                if response.status_code not in (201, 409):
                    raise ControlPlaneError(
                        f"creating node {name}: HTTP {response.status_code} {response.text}"
                    )

    def _wait_settled(self) -> None:
        """Until every node is Ready without a not-ready taint and ``default/default`` exists."""
        deadline = time.monotonic() + self.start_timeout
        state = "nothing checked yet"
        with self.http_client() as http:
            while time.monotonic() < deadline:
                for proc in self._components.values():
                    if (code := proc.exited()) is not None:
                        raise ControlPlaneError(
                            f"{proc.name} exited with code {code} while the cluster settled.\n"
                            + self._failure_logs(proc)
                        )
                nodes = http.get("/api/v1/nodes").json().get("items", [])
                ready = [n["metadata"]["name"] for n in nodes if _schedulable(n)]
                sa = http.get("/api/v1/namespaces/default/serviceaccounts/default")
                state = (
                    f"{len(ready)}/{self.nodes} nodes Ready and schedulable; "
                    f"default ServiceAccount: {'yes' if sa.status_code == 200 else 'not yet'}"
                )
                if len(ready) >= self.nodes and sa.status_code == 200:
                    return
                time.sleep(0.2)
        raise ControlPlaneError(
            f"the cluster did not settle within {self.start_timeout:.0f}s ({state}).\n"
            + self.logs()
        )


_KWOK_PLURALS = {
    "Logs": "logs",
    "Exec": "execs",
    "Attach": "attaches",
    "PortForward": "portforwards",
}


def _kwok_crd(kind: str) -> dict[str, Any]:
    # A schema that keeps every field: kwok validates the objects it reads, the CRD only has to
    # store them (kwok's own CRDs carry the full schema; nothing here depends on it).
    plural = _KWOK_PLURALS[kind]
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.kwok.x-k8s.io"},
        "spec": {
            "group": "kwok.x-k8s.io",
            "scope": "Namespaced",
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
            },
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


def cri_log_line(text: str, *, stream: str = "stdout", timestamp: str | None = None) -> str:
    """One line of a container log file in the CRI format kwok's ``Logs`` read (and a kubelet
    writes): ``<RFC 3339 time> <stream> F <text>\\n``. ``text`` must not contain a newline.

    Example::

        >>> cri_log_line("hello", timestamp="2024-01-02T03:04:05.000000006Z")
        '2024-01-02T03:04:05.000000006Z stdout F hello\\n'
    """
    if "\n" in text:
        raise ValueError(f"cri_log_line: one line at a time, got a newline in {text!r}")
    if stream not in ("stdout", "stderr"):
        raise ValueError(f"cri_log_line: stream must be 'stdout' or 'stderr', not {stream!r}")
    if timestamp is None:
        now = time.time()
        whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
        timestamp = f"{whole}.{int((now % 1) * 1e9):09d}Z"
    return f"{timestamp} {stream} F {text}\n"


def _schedulable(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions", [])
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    taints = node.get("spec", {}).get("taints", [])
    blocked = any(t.get("effect") in ("NoSchedule", "NoExecute") for t in taints)
    return ready and not blocked and not node.get("spec", {}).get("unschedulable", False)
