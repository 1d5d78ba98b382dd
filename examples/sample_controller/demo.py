"""The README's demo: the Foo controller on a local control plane, start to finish.

1. start etcd + kube-apiserver (building them the first time),
2. install the Foo CRD,
3. run the controller (a kubectrl Manager) in this process,
4. apply ``artifacts/example-foo.yaml`` and show what ``kubectl`` would show,
5. scale the Foo to 2 and at once to 3 (usually while the controller still syncs the first change)
   and show the Deployment follow,
6. ask for a Deployment name that someone else's Deployment already has: the controller leaves
   it alone, records a Warning ``ErrResourceExists`` and retries with backoff (its log shows one
   line per retry, never a traceback),
7. shut everything down.

Run: ``nox -s demo`` or ``python examples/sample_controller/demo.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml
from api import CRD_PATH, Foo
from kubernetes.client.models import V1Deployment, V1ObjectMeta, V1PodSpec
from main import ARTIFACTS, build_manager, parse_args

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import NotFoundError

T = TypeVar("T")
NAMESPACE = "default"


def say(text: str = "") -> None:
    print(text, flush=True)  # noqa: T201 - the demo talks to a person


def age(created: datetime.datetime | None) -> str:
    if created is None:
        return ""
    seconds = int((datetime.datetime.now(datetime.timezone.utc) - created).total_seconds())
    return f"{max(seconds, 0)}s"


def table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def blank_if_none(value: object) -> str:
    """A table cell: ``""`` for a field that is not set, as kubectl shows it."""
    return "" if value is None else str(value)


async def wait_for(what: str, probe: Callable[[], Awaitable[T | None]], timeout: float = 60) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = await probe()
        except NotFoundError:
            value = None
        if value:
            return value
        await asyncio.sleep(0.1)
    raise TimeoutError(f"the demo timed out waiting for {what}")


async def show(client: AsyncClient) -> None:
    # Typed reads: list(Foo) gives Foo models, list(V1Deployment) the kubernetes package's.
    foos = (await client.list(Foo, namespace=NAMESPACE)).items
    say("$ kubectl get foos")
    rows = [["NAME", "DEPLOYMENT", "REPLICAS", "AVAILABLE", "AGE"]]
    for foo in foos:
        spec, status = foo.spec, foo.status
        rows.append(
            [
                foo.metadata.name or "",
                (spec.deployment_name if spec else None) or "",
                blank_if_none(spec.replicas if spec else None),
                blank_if_none(status.available_replicas if status else None),
                age(foo.metadata.creation_timestamp),
            ]
        )
    say(table(rows))
    say()
    say("$ kubectl get deployments -o wide")
    rows = [["NAME", "READY", "AVAILABLE", "CONTAINERS", "IMAGES", "SELECTOR", "OWNER"]]
    for dep in (await client.list(V1Deployment, namespace=NAMESPACE)).items:
        # The model says metadata and the pod spec may be absent; a stored Deployment has both.
        meta, pod = (
            dep.metadata or V1ObjectMeta(),
            dep.spec.template.spec or V1PodSpec(containers=[]),
        )
        ready = (dep.status.ready_replicas if dep.status else None) or 0
        available = (dep.status.available_replicas if dep.status else None) or 0
        owner = next(iter(meta.owner_references or []), None)
        containers = pod.containers
        selector = dep.spec.selector.match_labels or {}
        rows.append(
            [
                meta.name or "",
                f"{ready}/{dep.spec.replicas}",
                str(available),
                ",".join(c.name for c in containers),
                ",".join(c.image or "" for c in containers),
                ",".join(f"{k}={v}" for k, v in sorted(selector.items())),
                f"{owner.kind}/{owner.name}" if owner else "/",
            ]
        )
    say(table(rows))
    say()
    say("$ kubectl get events --field-selector involvedObject.kind=Foo")
    rows = [["TYPE", "REASON", "OBJECT", "COUNT", "MESSAGE"]]
    events = await client.list(
        ("v1", "Event"), namespace=NAMESPACE, field_selector="involvedObject.kind=Foo"
    )
    for event in events["items"]:
        rows.append(
            [
                event["type"],
                event["reason"],
                f"foo/{event['involvedObject']['name']}",
                str(event.get("count", 1)),
                event["message"],
            ]
        )
    say(table(rows))
    say()


async def someone_elses_deployment(client: AsyncClient) -> None:
    """A Foo asks for a Deployment name that a Deployment it does not control already has."""
    say("# someone else's Deployment is called 'taken'; a Foo asks for that name")
    say("$ kubectl create deployment taken --image=busybox")
    await client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "taken", "namespace": NAMESPACE},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "taken"}},
                "template": {
                    "metadata": {"labels": {"app": "taken"}},
                    "spec": {"containers": [{"name": "busybox", "image": "busybox"}]},
                },
            },
        }
    )
    say("deployment.apps/taken created")
    say("$ kubectl apply -f intruder-foo.yaml   # spec.deploymentName: taken")
    await client.create(
        {
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "metadata": {"name": "intruder", "namespace": NAMESPACE},
            "spec": {"deploymentName": "taken", "replicas": 2},
        }
    )
    say("foo.samplecontroller.k8s.io/intruder created")
    say()

    async def warned() -> bool:
        events = await client.list(
            ("v1", "Event"),
            namespace=NAMESPACE,
            field_selector="involvedObject.name=intruder,reason=ErrResourceExists",
        )
        return any(event.get("count", 1) >= 2 for event in events["items"])

    await wait_for("the controller to warn about 'taken' (twice)", warned)
    await show(client)
    say("$ kubectl delete foo intruder")
    await client.delete(Foo, "intruder", namespace=NAMESPACE)
    say('foo.samplecontroller.k8s.io "intruder" deleted')
    say()


async def run_demo(kubeconfig: Path) -> None:
    # No /metrics: the demo shows none, and a busy port 8080 must not stop it.
    args = parse_args(["--kubeconfig", str(kubeconfig), "--metrics-bind-address", "0"])
    manager = build_manager(args)
    runner = asyncio.create_task(manager.start())
    async with AsyncClient(load_kubeconfig(kubeconfig)) as client:
        try:
            example = yaml.safe_load((ARTIFACTS / "example-foo.yaml").read_text())
            say("$ kubectl apply -f examples/sample_controller/artifacts/example-foo.yaml")
            example["metadata"]["namespace"] = NAMESPACE
            await client.create(example)
            say("foo.samplecontroller.k8s.io/example-foo created")
            say()

            async def synced() -> bool:
                foo = await client.get(Foo, "example-foo", namespace=NAMESPACE)
                return foo.status is not None and foo.status.available_replicas is not None

            await wait_for("the controller to sync example-foo", synced)
            await show(client)

            # Two edits back to back: the second usually lands while the controller syncs the first.
            for replicas in (2, 3):
                say(
                    "$ kubectl patch foo example-foo --type merge "
                    f'-p \'{{"spec":{{"replicas":{replicas}}}}}\''
                )
                await client.patch(
                    Foo, "example-foo", {"spec": {"replicas": replicas}}, namespace=NAMESPACE
                )
                say("foo.samplecontroller.k8s.io/example-foo patched")
            say()

            async def scaled() -> bool:
                dep = await client.get(V1Deployment, "example-foo", namespace=NAMESPACE)
                return dep.spec is not None and dep.spec.replicas == 3

            await wait_for("the Deployment to scale to 3", scaled)
            await show(client)
            await someone_elses_deployment(client)
        finally:
            manager.stop()
            await runner


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="show the controller's logs")
    args = parser.parse_args()
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    say("# starting a local control plane (etcd + kube-apiserver)")
    with ControlPlane() as control_plane:
        pids, work_dir = control_plane.pids, control_plane.work_dir
        say(f"# kube-apiserver at {control_plane.server}")
        control_plane.install_crds([CRD_PATH])
        say("# installed CRD foos.samplecontroller.k8s.io; starting the Foo controller")
        say()
        asyncio.run(run_demo(control_plane.kubeconfig.path))
        say("# controller stopped; stopping the control plane")
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
