"""The aggregation scenario, run inside a network namespace of its own (``unshare -n``).

Started by ``test_aggregation.py`` as ``unshare -n python scenario.py``: it brings ``lo`` up,
adds ``192.0.2.10/32`` (a documentation address, not loopback, so kube-apiserver accepts it as
an endpoint) to ``lo``, and runs etcd, kube-apiserver, the wardle sample server (its own
process, SQLite storage, bound on 192.0.2.10) and every client in that namespace: no packet
leaves it. It prints one JSON object on stdout: each check's name, whether it held and what was
seen. Checks go on after a failure (each one says what it saw).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "examples" / "sample_apiserver"
sys.path.insert(0, str(SAMPLE))

from wardle import Flunder  # noqa: E402

from kubectrl.cache import Informer, ListWatch  # noqa: E402
from kubectrl.client import AsyncClient, load_kubeconfig  # noqa: E402
from kubectrl.envtest import ControlPlane, find_binaries  # noqa: E402
from kubectrl.envtest._certs import CertificateAuthority  # noqa: E402
from kubectrl.runtime import Builder, Manager, ManagerOptions, Request  # noqa: E402

ADDRESS = "192.0.2.10"
PORT = 8443
GROUP, VERSION = "wardle.example.com", "v1alpha1"
FLUNDER = (f"{GROUP}/{VERSION}", "Flunder")
PATH = f"/apis/{GROUP}/{VERSION}/namespaces/default/flunders"
SEEN = "wardle.example.com/seen"

results: dict[str, dict[str, Any]] = {}


def record(name: str, ok: bool, detail: Any = "") -> None:
    results[name] = {"ok": bool(ok), "detail": str(detail)[-3000:]}


def flunder_yaml(name: str, reference: str, extra: str = "") -> str:
    return (
        f"apiVersion: {GROUP}/{VERSION}\nkind: Flunder\nmetadata:\n  name: {name}\n"
        f"  namespace: default\nspec:\n  reference: {reference}\n{extra}"
    )


async def until(check: Callable[[], Awaitable[bool]], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.2)
    return False


class Scenario:
    def __init__(self, cp: ControlPlane, work: Path) -> None:
        self.cp = cp
        self.work = work
        self.kubectl_path = str(find_binaries(build=False).kubectl)
        self.server: subprocess.Popen[bytes] | None = None
        self.ca = CertificateAuthority("wardle-ca")

    # ------------------------------------------------------------------ helpers

    async def kubectl(
        self, *args: str, stdin: str | None = None, kubeconfig: Path | None = None
    ) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            self.kubectl_path,
            f"--kubeconfig={kubeconfig or self.cp.kubeconfig.path}",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else b""), 60)
        return int(proc.returncode or 0), out.decode()

    def start_server(self) -> None:
        log = (self.work / "server.log").open("ab")
        self.server = subprocess.Popen(
            [
                sys.executable,
                str(SAMPLE),
                f"--kubeconfig={self.cp.kubeconfig.path}",
                f"--bind-address={ADDRESS}",
                f"--secure-port={PORT}",
                f"--cert-dir={self.work}",
                f"--db={self.work / 'wardle.db'}",
                "--verbose",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    async def wait_serving(self) -> None:
        context = self._context()

        async def up() -> bool:
            try:
                async with httpx.AsyncClient(verify=context, timeout=2) as http:
                    await http.get(f"https://{ADDRESS}:{PORT}/healthz")
            except httpx.HTTPError:
                return False
            return True

        if not await until(up, 30):
            raise RuntimeError("the wardle server did not start: " + self.server_log())

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
            self.server = None

    def server_log(self) -> str:
        return (self.work / "server.log").read_text(errors="replace")[-3000:]

    def _context(self) -> Any:
        import ssl

        return ssl.create_default_context(cadata=self.ca.cert_pem.decode())

    async def in_thread(self, fn: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn)

    # ------------------------------------------------------------------ the scenario

    async def run(self) -> None:
        service = "wardle-apiserver.default.svc"
        pair = self.ca.issue(service, dns_names=(service,), ip_addresses=(ADDRESS,), server=True)
        (self.work / "tls.crt").write_bytes(pair.cert_pem)
        (self.work / "tls.key").write_bytes(pair.key_pem)
        self.start_server()
        await self.wait_serving()
        try:
            await self.in_thread(
                lambda: self.cp.register_api_service(
                    GROUP,
                    VERSION,
                    ca_bundle=self.ca.cert_pem,
                    address=ADDRESS,
                    port=PORT,
                    service_name="wardle-apiserver",
                    timeout=120,
                )
            )
            record("apiservice_available", True)
        except Exception as err:
            record("apiservice_available", False, f"{err}\n{self.server_log()}")
            return
        for step in (
            self.kubectl_checks,
            self.watch_check,
            self.admission_check,
            self.rbac_checks,
            self.bypass_checks,
            self.informer_and_restart,
        ):
            try:
                await step()
            except Exception:
                record(f"{step.__name__}_crashed", False, traceback.format_exc())

    async def kubectl_checks(self) -> None:
        rc, out = await self.kubectl("get", "flunders")
        record("get_empty", rc == 0 and "No resources found" in out, out)
        rc, out = await self.kubectl("create", "-f", "-", stdin=flunder_yaml("alpha", "x"))
        record("create", rc == 0 and "created" in out, out)
        rc, out = await self.kubectl("apply", "-f", "-", stdin=flunder_yaml("beta", "one"))
        rc2, out2 = await self.kubectl("apply", "-f", "-", stdin=flunder_yaml("beta", "two"))
        rc3, ref = await self.kubectl("get", "flunder", "beta", "-o", "jsonpath={.spec.reference}")
        record(
            "apply",
            (rc, rc2, rc3) == (0, 0, 0)
            and "created" in out
            and "configured" in out2
            and ref == "two",
            out + out2 + ref,
        )
        rc, out = await self.kubectl(
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=ssa",
            "-f",
            "-",
            stdin=flunder_yaml("beta", "three"),
        )
        record("apply_server_side", rc == 0 and "serverside-applied" in out, out)
        rc, out = await self.kubectl(
            "apply", "-f", "-", stdin=flunder_yaml("beta", "four", "  bogus: 1\n")
        )
        record(
            "apply_field_validation",
            # Server-side field validation (the OpenAPI says the server does it), as kubectl
            # words the server's strict error.
            rc != 0 and 'unknown field "spec.bogus"' in out and "ValidationError" not in out,
            out,
        )
        rc, out = await self.kubectl(
            "patch",
            "flunder",
            "alpha",
            "--type=merge",
            "-p",
            '{"spec":{"referenceType":"Fischer"}}',
        )
        rc2, out2 = await self.kubectl(
            "patch",
            "flunder",
            "alpha",
            "--type=json",
            "-p",
            '[{"op":"replace","path":"/spec/reference","value":"y"}]',
        )
        rc3, got = await self.kubectl("get", "flunder", "alpha", "-o", "json")
        spec = json.loads(got).get("spec") if rc3 == 0 else None
        record(
            "patch",
            rc == 0 and rc2 == 0 and spec == {"reference": "y", "referenceType": "Fischer"},
            out + out2 + got,
        )
        rc, out = await self.kubectl("get", "flunders")
        header = out.splitlines()[0].split() if out else []
        record(
            "get_table",
            rc == 0 and header == ["NAME", "REFERENCE", "TYPE", "AGE"] and "alpha" in out,
            out,
        )
        rc, out = await self.kubectl("explain", "flunder.spec")
        record("explain", rc == 0 and "reference" in out and "referenceType" in out, out)
        rc, out = await self.kubectl("delete", "flunder", "beta")
        rc2, out2 = await self.kubectl("get", "flunder", "beta")
        record(
            "delete", rc == 0 and "deleted" in out and rc2 != 0 and "NotFound" in out2, out + out2
        )

    async def watch_check(self) -> None:
        proc = await asyncio.create_subprocess_exec(
            self.kubectl_path,
            f"--kubeconfig={self.cp.kubeconfig.path}",
            "get",
            "flunders",
            "-w",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        seen: list[str] = []

        async def read_until(word: str) -> bool:
            assert proc.stdout is not None
            while True:
                line = (await proc.stdout.readline()).decode()
                if not line:
                    return False
                seen.append(line)
                if line.split()[:1] == [word]:
                    return True

        try:
            initial = await asyncio.wait_for(read_until("alpha"), 30)
            await self.kubectl("create", "-f", "-", stdin=flunder_yaml("gamma", "z"))
            added = await asyncio.wait_for(read_until("gamma"), 30)
            await self.kubectl("delete", "flunder", "gamma")
        except asyncio.TimeoutError:
            initial = added = False
        finally:
            proc.kill()
            await proc.wait()
        record("get_watch", initial and added, "".join(seen))

    async def admission_check(self) -> None:
        fischer = (
            f"apiVersion: {GROUP}/{VERSION}\nkind: Fischer\nmetadata:\n  name: f\n"
            "disallowedFlunders: [banned]\n"
        )
        rc, out = await self.kubectl("create", "-f", "-", stdin=fischer)
        rc2, out2 = await self.kubectl("create", "-f", "-", stdin=flunder_yaml("banned", "x"))
        record(
            "admission",
            rc == 0 and rc2 != 0 and "forbidden" in out2 and "may not be used" in out2,
            out + out2,
        )

    async def rbac_checks(self) -> None:
        dave = self.cp.add_user("dave")

        def status() -> int:
            with self.cp.http_client(dave) as http:
                return http.get(PATH).status_code

        before = await self.in_thread(status)
        rc, out = await self.kubectl("get", "flunders", kubeconfig=dave.path)
        record(
            "rbac_denied",
            before == 403 and rc != 0 and "forbidden" in out.lower(),
            f"{before} {out}",
        )
        grant = (
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n"
            "  name: flunder-reader\n  namespace: default\nrules:\n"
            f"- apiGroups: [{GROUP}]\n  resources: [flunders]\n  verbs: [get, list, watch]\n"
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n"
            "  name: dave-reads-flunders\n  namespace: default\nroleRef:\n"
            "  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: flunder-reader\n"
            "subjects:\n- kind: User\n  name: dave\n  apiGroup: rbac.authorization.k8s.io\n"
        )
        await self.kubectl("apply", "-f", "-", stdin=grant)

        async def allowed() -> bool:
            return await self.in_thread(status) == 200

        ok = await until(allowed, 30)
        rc, out = await self.kubectl("get", "flunders", kubeconfig=dave.path)
        record("rbac_allowed", ok and rc == 0 and "alpha" in out, out)

    async def bypass_checks(self) -> None:
        url = f"https://{ADDRESS}:{PORT}{PATH}"
        forged = {"X-Remote-User": "system:admin", "X-Remote-Group": "system:masters"}
        async with httpx.AsyncClient(verify=self._context(), timeout=10) as http:
            no_cert = await http.get(url, headers=forged)
            bad_token = await http.get(url, headers={"Authorization": "Bearer nonsense"})
        record(
            "bypass_unauthorized",
            no_cert.status_code == 401 and bad_token.status_code == 401,
            f"{no_cert.status_code} {no_cert.text} / {bad_token.status_code}",
        )

    async def informer_and_restart(self) -> None:
        config = load_kubeconfig(str(self.cp.kubeconfig.path))
        async with AsyncClient(config) as client:
            await client.patch(
                FLUNDER, "alpha", {"metadata": {"labels": {"x": "1"}}}, namespace="default"
            )
            events: list[tuple[str, str, str]] = []
            resyncs: list[str] = []
            informer = Informer(ListWatch(client, FLUNDER, namespace="default"))

            def note(kind: str, obj: Any) -> None:
                meta = obj["metadata"]
                events.append((kind, meta["name"], meta["resourceVersion"]))

            informer.add_handler(
                on_add=lambda obj, initial: None if initial else note("ADDED", obj),
                # An update whose resourceVersion did not change is a relist's sync (the
                # informer re-delivers what it holds), not a change: counted apart.
                on_update=lambda old, new: (
                    resyncs.append(new["metadata"]["name"])
                    if old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]
                    else note("MODIFIED", new)
                ),
                on_delete=lambda obj: note("DELETED", getattr(obj, "obj", obj)),
            )
            informer.start()
            await informer.wait_for_cache_sync(timeout=30)
            start_rv = informer.reflector.last_sync_resource_version

            class Labeller:
                async def reconcile(self, request: Request) -> None:
                    try:
                        obj = await client.get(FLUNDER, request.name, namespace=request.namespace)
                    except Exception:
                        return
                    if (obj["metadata"].get("labels") or {}).get(SEEN) != "yes":
                        await client.patch(
                            FLUNDER,
                            request.name,
                            {"metadata": {"labels": {SEEN: "yes"}}},
                            namespace=request.namespace,
                        )

            manager = Manager(config, options=ManagerOptions(metrics_bind_address="0"))
            Builder(manager).for_(Flunder).complete(Labeller())
            running = asyncio.create_task(manager.start())

            async def converged() -> bool:
                items = (await client.list(FLUNDER, namespace="default"))["items"]
                return bool(items) and all(
                    (o["metadata"].get("labels") or {}).get(SEEN) == "yes" for o in items
                )

            record("controller_converges", await until(converged, 60))

            for value in ("1", "2", "3"):
                await client.patch(
                    FLUNDER, "alpha", {"spec": {"reference": f"r{value}"}}, namespace="default"
                )
            self.stop_server()
            try:
                down = await self.in_thread(
                    lambda: self.cp.wait_api_service(GROUP, VERSION, available=False, timeout=120)
                )
                record("apiservice_goes_unavailable", True, down)
            except Exception as err:
                record("apiservice_goes_unavailable", False, err)
            self.start_server()
            await self.wait_serving()
            try:
                up = await self.in_thread(
                    lambda: self.cp.wait_api_service(GROUP, VERSION, available=True, timeout=120)
                )
                record("apiservice_available_again", True, up)
            except Exception as err:
                record("apiservice_available_again", False, err)

            async def observed(rv: str) -> bool:
                return any(e[2] == rv for e in events)

            # Each write after the restart is seen before the next: whether the informer
            # re-watches from its resourceVersion or relists, no two writes of one object
            # can merge into one observation.
            async def patch_alpha() -> str:
                patched = await client.patch(
                    FLUNDER, "alpha", {"spec": {"reference": "r4"}}, namespace="default"
                )
                return str(patched["metadata"]["resourceVersion"])

            rv = await patch_alpha()
            await until(lambda: observed(rv), 60)
            created = await client.create(
                {
                    "apiVersion": f"{GROUP}/{VERSION}",
                    "kind": "Flunder",
                    "metadata": {"name": "delta", "namespace": "default"},
                    "spec": {"reference": "d"},
                }
            )
            await until(lambda: observed(created["metadata"]["resourceVersion"]), 60)
            record("controller_converges_after_restart", await until(converged, 60))
            await client.delete(FLUNDER, "delta", namespace="default")
            last = (await client.list(FLUNDER, namespace="default"))["metadata"]["resourceVersion"]

            async def caught_up() -> bool:
                return any(e[0] == "DELETED" and e[1] == "delta" for e in events)

            await until(caught_up, 60)
            # The truth: the server's own history since the informer's list, replayed.
            history: list[tuple[str, str, str]] = []
            async with (
                config.async_httpx_client(timeout=30) as http,
                http.stream(
                    "GET",
                    PATH,
                    params={"watch": "1", "resourceVersion": start_rv, "timeoutSeconds": "3"},
                ) as stream,
            ):
                async for line in stream.aiter_lines():
                    event = json.loads(line)
                    meta = event["object"]["metadata"]
                    history.append((event["type"], meta["name"], meta["resourceVersion"]))
                    if meta["resourceVersion"] == last:
                        break
            cached = sorted(
                (o["metadata"]["name"], o["metadata"]["resourceVersion"])
                for o in informer.lister.namespace("default").list()
            )
            listed = sorted(
                (o["metadata"]["name"], o["metadata"]["resourceVersion"])
                for o in (await client.list(FLUNDER, namespace="default"))["items"]
            )

            def by_object(seq: list[tuple[str, str, str]]) -> dict[str, list[tuple[str, str]]]:
                out: dict[str, list[tuple[str, str]]] = {}
                for kind, name, version in seq:
                    out.setdefault(name, []).append((kind, version))
                return out

            # Per object, the informer's observations are the server's changes, in order: none
            # lost, none invented (across objects, a relist may order them by name).
            record(
                "informer_resumes_exactly",
                by_object(events) == by_object(history) and cached == listed and len(history) >= 6,
                f"informer={events}\nhistory={history}\ncached={cached}\nlisted={listed}\n"
                f"syncs without a change: {resyncs}",
            )
            manager.stop()
            await asyncio.wait_for(running, 30)
            await informer.stop()


async def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="wardle-"))
    with ControlPlane() as cp:
        scenario = Scenario(cp, work)
        try:
            await scenario.run()
        finally:
            scenario.stop_server()
            if not all(r["ok"] for r in results.values()):
                record("server_log", True, scenario.server_log())


def setup_network() -> None:
    if os.environ.get("KUBECTRL_NETNS") != "1":
        raise SystemExit("run me with unshare -n (KUBECTRL_NETNS=1): I add an address to lo")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", f"{ADDRESS}/32", "dev", "lo"], check=True)


if __name__ == "__main__":
    setup_network()
    try:
        asyncio.run(main())
    except Exception:
        record("scenario_crashed", False, traceback.format_exc())
    print(json.dumps(results))
