"""The API-server side against Go: kubectrl's wardle server and ``k8s.io/sample-apiserver``.

Both serve ``wardle.example.com/v1alpha1`` Flunders over HTTPS on loopback, each in its own
process, and one client load is run against each: ``go/loadgen`` (Go, so the client's cost is
small and the same for both; a Python client would spend the two cores the servers need and
measure itself). Both delegate authentication and authorization to one local kube-apiserver
(envtest); the client presents envtest's admin certificate (group ``system:masters``), so
neither server asks kube-apiserver about a request (both allow that group without a
SubjectAccessReview, as ``--authorization-always-allow-groups`` defaults). HTTP/1.1 for both:
kubectrl's server speaks only HTTP/1.1, so the Go client is held to it for sample-apiserver.

What differs and is not hidden: sample-apiserver keeps objects in etcd (its own etcd process,
from envtest's binary) behind its watch cache, kubectrl's server in memory
(:class:`~kubectrl.apiserver.MemoryStorage`). The server's CPU is the server process's alone;
etcd's is reported beside it.

Phases, in order, each measured from the server's ``/proc/<pid>/stat`` (user + system CPU)
around it, latency from the client (p50, p99): create ``objects`` Flunders (half at 4 clients,
half at 32), then get, list (a page of ``limit``) and update at 4 and at 32 clients, then
``watchers`` watches of the namespace while ``watch_updates`` updates are made at 32 clients:
each watcher must receive every event (counted, and the lag from the write's start to the
event's arrival). Memory per stored object: the server's RSS after the creates minus its RSS
before them (warm), over the objects.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx

from kubectrl.envtest import ControlPlane, Kubeconfig, find_binaries

HERE = Path(__file__).resolve().parent
NAMESPACE = "bench"
GROUP_VERSION = "wardle.example.com/v1alpha1"
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much of each phase."""

    objects: int = 10_000
    gets: int = 5_000
    lists: int = 500
    limit: int = 100
    updates: int = 5_000
    watchers: int = 100
    watch_updates: int = 2_000
    watch_timeout: float = 120.0


SMOKE = Sizes(
    objects=40, gets=20, lists=8, limit=5, updates=20, watchers=3, watch_updates=10,
    watch_timeout=60.0,
)  # fmt: skip


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_bytes(pid: int) -> int:
    """Resident set size of process ``pid``."""
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_ready(url: str, kubeconfig: Kubeconfig, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until a list of Flunders with the client certificate answers 200, on a new
    connection each try, or raise with the server's last log lines.

    ``/readyz`` is not enough: sample-apiserver is ready before its client CA (from the
    ``extension-apiserver-authentication`` ConfigMap) is loaded, and until then a client's
    certificate is not asked for and its requests are anonymous (403)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # loopback, the server's self-signed certificate
    context.load_cert_chain(kubeconfig.cert_file, kubeconfig.key_file)
    deadline = time.monotonic() + 120
    last = ""
    while time.monotonic() < deadline and proc.poll() is None:
        with httpx.Client(verify=context, timeout=5) as http:
            try:
                answer = http.get(f"{url}/apis/{GROUP_VERSION}/namespaces/{NAMESPACE}/flunders")
                if answer.status_code == 200:
                    return
                last = f"{answer.status_code} {answer.text[:200]}"
            except httpx.HTTPError as error:
                last = repr(error)
        time.sleep(0.2)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    raise RuntimeError(f"{url} did not become ready (last answer: {last}); its log:\n{tail}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def kubectrl_server(
    cp: ControlPlane, work: Path, profile: Path | None = None
) -> Iterator[tuple[int, str, int | None]]:
    """(pid, url, None): the wardle example server, started and ready (under cProfile, its
    statistics written to ``profile`` when it stops, if given)."""
    log = work / "kubectrl-server.log"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "wardle_server.py"),
                str(cp.kubeconfig.path),
                *([str(profile)] if profile else []),
            ],
            stdout=subprocess.PIPE,
            stderr=out,
            env=env,
        )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        if not line.startswith("port "):
            raise RuntimeError(f"the kubectrl server did not start: {log.read_text()[-2000:]}")
        url = f"https://127.0.0.1:{int(line.split()[1])}"
        wait_ready(url, cp.kubeconfig, proc, log)
        yield proc.pid, url, None
    finally:
        _stop(proc)


@contextlib.contextmanager
def go_server(
    cp: ControlPlane, binary: Path, work: Path, extra_args: tuple[str, ...] = ()
) -> Iterator[tuple[int, str, int | None]]:
    """(pid, url, etcd pid): k8s.io/sample-apiserver and its own etcd, started and ready
    (``extra_args`` appended to its command line: ``("-v=1",)`` logs why a watch is ended)."""
    etcd_port, peer_port, port = free_port(), free_port(), free_port()
    etcd_log, log = work / "sample-etcd.log", work / "sample-apiserver.log"
    etcd_bin = find_binaries(build=False).etcd
    with etcd_log.open("wb") as out:
        etcd = subprocess.Popen(
            [
                str(etcd_bin),
                f"--data-dir={work / 'sample-etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    kubeconfig = str(cp.kubeconfig.path)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(binary),
                f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={work / 'sample-certs'}",
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                *extra_args,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"https://127.0.0.1:{port}"
        wait_ready(url, cp.kubeconfig, proc, log)
        yield proc.pid, url, etcd.pid
    finally:
        _stop(proc)
        _stop(etcd)


class LoadGen:
    """The Go load generator, one command at a time."""

    def __init__(self, binary: Path, url: str, kubeconfig: Kubeconfig) -> None:
        self.proc = subprocess.Popen(
            [
                str(binary),
                f"-server={url}",
                f"-cert={kubeconfig.cert_file}",
                f"-key={kubeconfig.key_file}",
                f"-namespace={NAMESPACE}",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def run(self, **command: Any) -> dict[str, Any]:
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        stdin.write(json.dumps(command).encode() + b"\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"the load generator ended (exit {self.proc.wait()}) on {command}")
        result: dict[str, Any] = json.loads(line)
        if "error" in result:
            raise RuntimeError(f"load generator, {command}: {result['error']}")
        return result

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.run_quit()
        _stop(self.proc)  # type: ignore[arg-type]

    def run_quit(self) -> None:
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        stdin.write(b'{"op":"quit"}\n')
        stdin.flush()
        self.proc.wait(10)


def measured(load: LoadGen, pid: int, etcd_pid: int | None, **command: Any) -> dict[str, Any]:
    """Run one command; its answer with the server's CPU per request (µs) and load average."""
    cpu0 = cpu_seconds(pid)
    etcd0 = cpu_seconds(etcd_pid) if etcd_pid else 0.0
    result = load.run(**command)
    cpu = cpu_seconds(pid) - cpu0
    requests = max(int(result["requests"]), 1)
    result.update(
        op=command["op"],
        clients=command.get("clients"),
        requests_per_second=result["requests"] / max(result["seconds"], 1e-9),
        server_cpu_seconds=cpu,
        cpu_per_request_us=cpu / requests * 1e6,
        load_average=os.getloadavg()[0],
    )
    if etcd_pid:
        etcd = cpu_seconds(etcd_pid) - etcd0
        result["etcd_cpu_per_request_us"] = etcd / requests * 1e6
    if result.get("errors"):
        raise RuntimeError(
            f"{command}: {result['errors']} requests failed: {result.get('first_error')}"
        )
    return result


def workload(pid: int, etcd_pid: int | None, load: LoadGen, sizes: Sizes) -> dict[str, Any]:
    """Every phase against one server."""
    phases: list[dict[str, Any]] = []
    load.run(op="list", clients=1, count=20, limit=1)  # warm: connections, caches, first paths
    rss_empty = rss_bytes(pid)
    half = sizes.objects // 2
    for clients, count, prefix in ((4, half, "c4"), (32, sizes.objects - half, "c32")):
        phases.append(
            measured(load, pid, etcd_pid, op="create", clients=clients, count=count, prefix=prefix)
        )
    rss_full = rss_bytes(pid)
    for op, count in (("get", sizes.gets), ("list", sizes.lists), ("update", sizes.updates)):
        for clients in (4, 32):
            phases.append(
                measured(
                    load, pid, etcd_pid, op=op, clients=clients, count=count, limit=sizes.limit
                )
            )
    watch = measured(
        load,
        pid,
        etcd_pid,
        op="watch",
        clients=32,
        count=sizes.watch_updates,
        watchers=sizes.watchers,
        timeout=sizes.watch_timeout,
    )
    return {
        "phases": phases,
        "watch": watch,
        "objects": sizes.objects,
        "rss_empty_bytes": rss_empty,
        "rss_full_bytes": rss_full,
        "memory_per_object_bytes": (rss_full - rss_empty) / max(sizes.objects, 1),
    }


def prepare(cp: ControlPlane) -> None:
    """The namespace, and kube-apiserver's ``extension-apiserver-authentication`` ConfigMap
    with its client CA: kube-apiserver writes it soon after it is ready, and kubectrl's
    ``DelegatingAuth`` reads it once, at start (sample-apiserver watches it)."""
    deadline = time.monotonic() + 60
    with cp.http_client() as http:
        while True:
            answer = http.get(
                "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
            )
            if answer.status_code == 200 and answer.json().get("data", {}).get("client-ca-file"):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"no extension-apiserver-authentication: {answer.text[:300]}")
            time.sleep(0.2)
        answer = http.post(
            "/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        )
        if answer.status_code not in (201, 409):
            raise RuntimeError(f"cannot create namespace {NAMESPACE}: {answer.text[:300]}")


def run(
    binaries: dict[str, Path],
    sizes: Sizes,
    servers: tuple[str, ...] = ("kubectrl", "go"),
    profile: Path | None = None,
    log_dir: Path | None = None,
    go_args: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The workload against each server in ``servers``; results by server. With ``profile``,
    kubectrl's server runs under cProfile (its figures then include the profiler's cost) and
    its statistics go to that file. With ``log_dir``, the servers' logs (and etcd's) are
    copied there (why a watch ended is in sample-apiserver's)."""
    results: dict[str, Any] = {}
    with ControlPlane() as cp, tempfile.TemporaryDirectory(prefix="kubectrl-bench-api-") as tmp:
        prepare(cp)
        for name in servers:
            work = Path(tmp) / name
            work.mkdir()
            started = (
                kubectrl_server(cp, work, profile)
                if name == "kubectrl"
                else go_server(cp, binaries["sample-apiserver"], work, go_args)
            )
            with started as (pid, url, etcd_pid):
                load = LoadGen(binaries["loadgen"], url, cp.kubeconfig)
                try:
                    results[name] = workload(pid, etcd_pid, load, sizes)
                finally:
                    load.close()
            if log_dir is not None:
                log_dir.mkdir(parents=True, exist_ok=True)
                for log in work.glob("*.log"):
                    shutil.copy(log, log_dir / log.name)
    return results
