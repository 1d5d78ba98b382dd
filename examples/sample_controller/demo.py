"""The README's demo: the Foo controller on a local cluster, shown with the real kubectl.

1. start a :class:`~kubectrl.envtest.LocalCluster`: etcd, kube-apiserver, kube-controller-manager,
   kube-scheduler and kwok playing 3 nodes (the first run builds them from source and says how
   long that takes),
2. install the Foo CRD and run the Foo controller (a kubectrl Manager) in this process,
3. ``kubectl apply`` the example Foo: the controller makes a Deployment, the controller-manager a
   ReplicaSet and a Pod, the scheduler puts it on a node, kwok makes it Running; the Foo's
   AVAILABLE column reaches 1,
4. scale the Foo to 3: 3 Pods Running, AVAILABLE 3,
5. delete the Foo: the garbage collector removes its Deployment, ReplicaSet and Pods,
6. print the events, stop everything, check that nothing is left behind.

Every ``$ kubectl ...`` line is followed by that command's real output. Run: ``nox -s demo`` or
``python examples/sample_controller/demo.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api import CRD_PATH, Foo
from main import ARTIFACTS, build_manager, parse_args

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import BinaryNotFoundError, LocalCluster, find_binaries
from kubectrl.envtest._binaries import ALL_SPECS, BUILD_ESTIMATES
from kubectrl.errors import NotFoundError

NAMESPACE = "default"
#: The storage version, named in full: ``kubectl get foos`` alone would ask for the preferred
#: version, which may need the conversion webhook, and the demo runs no webhook server.
FOOS = "foos.v1alpha1.samplecontroller.k8s.io"
EXAMPLE = ARTIFACTS / "example-foo.yaml"
DEADLINE = 90.0


def say(text: str = "") -> None:
    print(text, flush=True)  # noqa: T201 - the demo talks to a person


class Kubectl:
    """The pinned kubectl, run against the cluster; each call echoes its command and output."""

    def __init__(self, binary: Path, kubeconfig: Path) -> None:
        self.binary = binary
        self.env = dict(os.environ, KUBECONFIG=str(kubeconfig))

    def __call__(self, *args: str, shown: str | None = None) -> str:
        say(f"$ kubectl {shown or ' '.join(args)}")
        proc = subprocess.run(
            [str(self.binary), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        out = (proc.stdout + proc.stderr).rstrip()
        say(out)
        say()
        if proc.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed (exit {proc.returncode})")
        return out


async def wait_for(what: str, probe: Callable[[], Awaitable[bool]]) -> None:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        try:
            if await probe():
                return
        except NotFoundError:
            pass
        await asyncio.sleep(0.2)
    raise TimeoutError(f"the demo timed out waiting for {what}")


def install_foo_crd(cluster: LocalCluster) -> None:
    """The shipped CRD, without its conversion webhook (the demo serves no webhooks).

    With a webhook that nobody serves, the garbage collector and the namespace controller, which
    read every resource at its preferred version, could not list Foos. The demo only uses the
    storage version, v1alpha1, so no conversion is ever needed.
    """
    crd = yaml.safe_load(CRD_PATH.read_text())
    crd["spec"]["conversion"] = {"strategy": "None"}
    path = cluster.work_dir / "foo-crd.yaml"
    path.write_text(yaml.safe_dump(crd))
    cluster.install_crds([path])


def foo_columns(cluster: LocalCluster) -> list[str]:
    """``kubectl get`` arguments for the Foos: the CRD's printer columns if it declares an
    AVAILABLE one, otherwise the same columns spelled out."""
    with cluster.http_client() as http:
        crd = http.get(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.samplecontroller.k8s.io"
        ).json()
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")
    columns = {c["jsonPath"] for c in version.get("additionalPrinterColumns", [])}
    if ".status.availableReplicas" in columns:
        return [FOOS]
    return [
        FOOS,
        "-o",
        "custom-columns=NAME:.metadata.name,DEPLOYMENT:.spec.deploymentName,"
        "REPLICAS:.spec.replicas,AVAILABLE:.status.availableReplicas",
    ]


async def run_demo(cluster: LocalCluster, kubectl: Kubectl) -> None:
    kubeconfig = cluster.kubeconfig.path
    # No /metrics: the demo shows none, and a busy port 8080 must not stop it.
    args = parse_args(["--kubeconfig", str(kubeconfig), "--metrics-bind-address", "0"])
    manager = build_manager(args)
    runner = asyncio.create_task(manager.start())
    get_foos = foo_columns(cluster)
    workloads = "deployments,replicasets,pods"

    async def run(*argv: str, shown: str | None = None) -> str:
        return await asyncio.to_thread(kubectl, *argv, shown=shown)

    async with AsyncClient(load_kubeconfig(kubeconfig)) as client:

        async def available(n: int) -> bool:
            foo = await client.get(Foo, "example-foo", namespace=NAMESPACE)
            return foo.status is not None and foo.status.available_replicas == n

        async def running_pods(n: int) -> bool:
            pods = await client.list(("v1", "Pod"), namespace=NAMESPACE)
            phases = [p.get("status", {}).get("phase") for p in pods["items"]]
            return phases.count("Running") == n and len(phases) == n

        try:
            await run("get", "nodes")
            await run("apply", "-f", str(EXAMPLE), shown=f"apply -f {EXAMPLE.relative_to(ROOT)}")
            await wait_for("example-foo's AVAILABLE to reach 1", lambda: available(1))
            await run("get", *get_foos)
            await run("get", workloads, "-o", "wide")

            patch = '{"spec":{"replicas":3}}'
            await run(
                "patch",
                FOOS,
                "example-foo",
                "--type",
                "merge",
                "-p",
                patch,
                shown=f"patch {FOOS} example-foo --type merge -p '{patch}'",
            )
            await wait_for("example-foo's AVAILABLE to reach 3", lambda: available(3))
            await wait_for("3 Running Pods", lambda: running_pods(3))
            await run("get", *get_foos)
            await run("get", workloads, "-o", "wide")

            await run("delete", FOOS, "example-foo")
            say("# the garbage collector removes the Foo's Deployment, ReplicaSet and Pods (for a")
            say("# resource added after it started, such as Foo, it may take up to 30 s to notice)")
            await wait_for("the garbage collector to remove the Pods", lambda: running_pods(0))

            async def collected() -> bool:
                deployments = await client.list(("apps/v1", "Deployment"), namespace=NAMESPACE)
                replicasets = await client.list(("apps/v1", "ReplicaSet"), namespace=NAMESPACE)
                return not deployments["items"] and not replicasets["items"]

            await wait_for("the garbage collector to remove the Deployment", collected)
            await run("get", workloads)
            await run(
                "get",
                "events",
                "--field-selector",
                "involvedObject.kind!=Node",
                "--sort-by",
                ".metadata.creationTimestamp",
            )
        finally:
            manager.stop()
            await runner


ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="show the controller's logs")
    parser.add_argument("--nodes", type=int, default=3, help="simulated nodes (default 3)")
    options = parser.parse_args()
    logging.basicConfig(
        level=logging.INFO if options.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        binaries = find_binaries(build=False, cluster=True, kubectl=True)
    except BinaryNotFoundError:  # a first run: something must be built
        modules = sorted({spec.gomod_dir for spec in ALL_SPECS})
        say(
            "# first run: building etcd, kube-apiserver, kube-controller-manager, kube-scheduler, "
            "kubectl and kwok from their pinned Go modules; on 2 cores with an empty Go cache: "
            + "; ".join(f"{m}: {BUILD_ESTIMATES[m]}" for m in modules)
            + ". Later runs start in seconds."
        )
        binaries = find_binaries(cluster=True, kubectl=True)
    assert binaries.kubectl is not None
    say(f"# starting a local cluster: control plane + {options.nodes} kwok nodes")
    started = time.monotonic()
    with LocalCluster(nodes=options.nodes, binaries=binaries) as cluster:
        pids, work_dir = cluster.pids, cluster.work_dir
        elapsed = time.monotonic() - started
        say(f"# cluster ready in {elapsed:.0f}s; kube-apiserver at {cluster.server}")
        install_foo_crd(cluster)
        say("# installed CRD foos.samplecontroller.k8s.io; starting the Foo controller")
        say()
        kubectl = Kubectl(binaries.kubectl, cluster.kubeconfig.path)
        asyncio.run(run_demo(cluster, kubectl))
        say("# controller stopped; stopping the cluster")
    left = [f"{name} (pid {pid})" for name, pid in pids.items() if running(pid)]
    left += [str(work_dir)] if work_dir.exists() else []
    if left:
        say(f"# stopped, but left behind: {', '.join(left)}")
        return 1
    say("# done: no process or temporary directory left behind")
    return 0


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return not stat.rsplit(") ", 1)[1].startswith("Z")


if __name__ == "__main__":
    sys.exit(main())
