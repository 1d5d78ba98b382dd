"""Cluster mode: the control plane plus controller-manager, scheduler and kwok's simulated nodes."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from kubectrl.envtest._binaries import Binaries, find_binaries
from kubectrl.envtest._control_plane import ControlPlane, _free_ports, _Process
from kubectrl.envtest._errors import ControlPlaneError

__all__ = ["KWOK_NODE_ANNOTATION", "LocalCluster"]

#: The annotation kwok's own tooling puts on the nodes it simulates; ours carry it too.
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
_POD_CIDR = "10.244.0.0/16"  # kwok's default (10.0.0.0/24) is the apiserver's service range
_NODE_IP = "10.200.0.1"

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

    Caveats: nothing runs in the Pods (no logs, exec or port-forward); Services get cluster IPs
    but no endpoints are reachable; Jobs' Pods run forever.

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
            kwargs: as for :class:`ControlPlane` (``binaries``, ``build``, ``start_timeout``...).
        """
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
        return find_binaries(build=self._build, log=self._log, cluster=True)

    def _admission_flags(self) -> list[str]:
        return []  # the apiserver's defaults, as in a real cluster

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
        stages.write_text(_STAGES)
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
            *self._kwok_args,
        ]

        def healthy() -> bool:
            response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2.0)
            return response.status_code == 200

        self._start_component("kwok", argv, healthy, f"/healthz on 127.0.0.1:{port}")

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


def _schedulable(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions", [])
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    taints = node.get("spec", {}).get("taints", [])
    blocked = any(t.get("effect") in ("NoSchedule", "NoExecute") for t in taints)
    return ready and not blocked and not node.get("spec", {}).get("unschedulable", False)
