"""``python -m kubectrl.envtest``: a local control plane from the shell.

Commands::

    start       start etcd + kube-apiserver in the background, print the kubeconfig path
                (``--cluster``: a whole LocalCluster, with controller-manager, scheduler and
                ``--nodes`` kwok nodes)
    stop        stop the one started by ``start``
    env         print ``export KUBECONFIG=...`` for it (``--kubeconfig``: the path only)
    kubectl     run the pinned kubectl against it: ``python -m kubectrl.envtest kubectl get pods``
    status      say whether it runs, and where
    binaries    find or build every binary (``--plain``: etcd and kube-apiserver only), print
                where each one is
    demo        start one, show it answering (version, RBAC, a ConfigMap), stop it

``start`` runs the control plane in a detached ``serve`` process that owns it; ``stop`` sends
that process SIGTERM, and it stops the control plane before exiting. The state of the running
one is kept in ``<cache>/run/envtest.json``; ``kubectl`` reads the kubeconfig from there (or from
``$KUBECONFIG`` when nothing was started).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kubectrl.envtest._binaries import ALL_SPECS, KUBECTL, cache_dir, find_binaries, find_binary
from kubectrl.envtest._cluster import LocalCluster
from kubectrl.envtest._control_plane import ControlPlane
from kubectrl.envtest._errors import ControlPlaneError


def _state_file() -> Path:
    return cache_dir() / "run" / "envtest.json"


def _read_state() -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads(_state_file().read_text())
    except (OSError, ValueError):
        return None
    if state.get("pid") and _alive(int(state["pid"])):
        return state
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return True


def _say(message: str) -> None:
    print(message, flush=True)  # noqa: T201 - this is a CLI


def cmd_binaries(args: argparse.Namespace) -> int:
    every = not args.plain
    binaries = find_binaries(build=not args.no_build, cluster=every, kubectl=every)
    width = max(len(spec.name) for spec in ALL_SPECS) + 1
    for spec in ALL_SPECS:
        path = binaries.get(spec.name)
        where = (
            f"{path}  ({binaries.sources[spec.name]})" if path else "not found (cluster mode only)"
        )
        _say(f"{spec.name + ':':<{width}} {where}")
    return 0


def cmd_kubectl(args: argparse.Namespace) -> int:
    """Run the pinned kubectl with the running control plane's admin kubeconfig."""
    kubectl, _ = find_binary(KUBECTL)  # only kubectl: etcd and the apiserver are not needed
    env = dict(os.environ)
    if state := _read_state():
        env["KUBECONFIG"] = state["kubeconfig"]
    elif not env.get("KUBECONFIG"):
        print(  # noqa: T201 - this is a CLI
            "kubectrl.envtest kubectl: no control plane is running and KUBECONFIG is not set; "
            "start one with: python -m kubectrl.envtest start --cluster",
            file=sys.stderr,
        )
        return 1
    return subprocess.run([str(kubectl), *args.kubectl_args], env=env).returncode


def cmd_serve(args: argparse.Namespace) -> int:
    """The detached owner of a control plane started by ``start``."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    state_file = Path(args.state_file)
    cp = (
        LocalCluster(nodes=args.nodes, start_timeout=args.timeout)
        if args.cluster
        else ControlPlane(start_timeout=args.timeout)
    )
    with cp:
        state = {
            "pid": os.getpid(),
            "mode": "cluster" if args.cluster else "plain",
            "kubeconfig": str(cp.kubeconfig.path),
            "server": cp.server,
            "etcd": cp.etcd_endpoint,
            "work_dir": str(cp.work_dir),
            "pids": cp.pids,
        }
        tmp = state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(state_file)
        while not stop.wait(1.0):
            if not cp.running:
                _say("kubectrl.envtest: a control-plane process exited:\n" + cp.logs())
                break
    with contextlib.suppress(FileNotFoundError):
        state_file.unlink()
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    if state := _read_state():
        _say(f"already running (pid {state['pid']}); kubeconfig: {state['kubeconfig']}")
        return 0
    # Build or find the binaries here, in the foreground, so a long first build shows progress.
    binaries = find_binaries(cluster=args.cluster, kubectl=args.cluster)
    state_file = _state_file()
    state_file.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        state_file.unlink()
    log_path = state_file.with_name("serve.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubectrl.envtest",
                "serve",
                "--state-file",
                str(state_file),
                "--timeout",
                str(args.timeout),
                *(["--cluster", "--nodes", str(args.nodes)] if args.cluster else []),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + args.timeout + 30
    while time.monotonic() < deadline:
        if state_file.exists():
            state = json.loads(state_file.read_text())
            _say(f"kube-apiserver: {state['server']}")
            _say(f"kubeconfig:     {state['kubeconfig']}")
            if binaries.kubectl is not None:
                _say(f"kubectl:        {binaries.kubectl}")
            _say(f"\n  export KUBECONFIG={state['kubeconfig']}\n")
            _say("Run kubectl with: python -m kubectrl.envtest kubectl get nodes")
            _say("Stop it with: python -m kubectrl.envtest stop")
            return 0
        if proc.poll() is not None:
            _say(f"the control plane failed to start:\n{log_path.read_text(errors='replace')}")
            return 1
        time.sleep(0.2)
    proc.terminate()
    _say(f"the control plane did not start in time; see {log_path}")
    return 1


def cmd_stop(args: argparse.Namespace) -> int:
    state = _read_state()
    if state is None:
        _say("no control plane started by `python -m kubectrl.envtest start` is running")
        return 0
    pid = int(state["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        _say(f"pid {pid} did not exit within 60s")
        return 1
    _say("stopped")
    return 0


def cmd_env(args: argparse.Namespace) -> int:
    state = _read_state()
    if state is None:
        print(  # noqa: T201 - this is a CLI
            "no control plane is running; start one with: python -m kubectrl.envtest start",
            file=sys.stderr,
        )
        return 1
    if args.kubeconfig:
        _say(state["kubeconfig"])
        return 0
    _say(f"export KUBECONFIG={state['kubeconfig']}")
    with contextlib.suppress(ControlPlaneError):
        kubectl, _ = find_binary(KUBECTL, build=False)
        _say(f'export PATH="{kubectl.parent}:$PATH"')
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    state = _read_state()
    if state is None:
        _say("not running")
        return 1
    _say(json.dumps(state, indent=2))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    binaries = find_binaries()
    _say(f"etcd:           {binaries.etcd} ({binaries.etcd_source})")
    _say(f"kube-apiserver: {binaries.kube_apiserver} ({binaries.kube_apiserver_source})")
    started = time.monotonic()
    with ControlPlane(binaries=binaries, start_timeout=args.timeout) as cp:
        pids, work_dir = cp.pids, cp.work_dir
        _say(f"control plane ready at {cp.server} in {time.monotonic() - started:.1f}s")
        _say(f"admin kubeconfig: {cp.kubeconfig.path}")
        with cp.http_client() as http:
            version = http.get("/version").json()
            _say(f"server version: {version['gitVersion']} ({version['goVersion']})")
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}
            http.post("/api/v1/namespaces", json=namespace).raise_for_status()
            configmap = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "hello"},
                "data": {"greeting": "hello from kubectrl"},
            }
            created = http.post("/api/v1/namespaces/demo/configmaps", json=configmap)
            created.raise_for_status()
            rv = created.json()["metadata"]["resourceVersion"]
            _say(f"created ConfigMap demo/hello (resourceVersion {rv})")
        alice = cp.add_user("alice", groups=["demo-users"])
        with cp.http_client(alice) as http:
            denied = http.get("/api/v1/namespaces/demo/configmaps")
            _say(
                f"user alice without RBAC bindings: HTTP {denied.status_code} "
                f"({denied.json().get('reason')})"
            )
    left = [f"{name} (pid {pid})" for name, pid in pids.items() if _alive(pid)]
    if work_dir.exists():
        left.append(str(work_dir))
    if left:
        _say(f"stopped, but left behind: {', '.join(left)}")
        return 1
    _say("stopped; no process or directory left behind")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kubectrl.envtest",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, func, help_text in (
        ("start", cmd_start, "start a control plane in the background"),
        ("stop", cmd_stop, "stop the control plane started by `start`"),
        ("env", cmd_env, "print `export KUBECONFIG=... PATH=...` for the running control plane"),
        ("kubectl", cmd_kubectl, "run the pinned kubectl against the running control plane"),
        ("status", cmd_status, "show the running control plane"),
        ("binaries", cmd_binaries, "find or build etcd and kube-apiserver"),
        ("demo", cmd_demo, "start a control plane, show it working, stop it"),
        ("serve", cmd_serve, argparse.SUPPRESS),
    ):
        command = sub.add_parser(name, help=help_text)
        command.set_defaults(func=func)
        if name in ("start", "serve", "demo"):
            command.add_argument(
                "--timeout",
                type=float,
                default=60.0,
                help="seconds to wait for readiness (default 60)",
            )
        if name in ("start", "serve"):
            command.add_argument(
                "--cluster",
                action="store_true",
                help="a LocalCluster: also controller-manager, scheduler and kwok nodes",
            )
            command.add_argument(
                "--nodes", type=int, default=3, help="kwok nodes in cluster mode (default 3)"
            )
        if name == "serve":
            command.add_argument("--state-file", required=True)
        if name == "kubectl":
            command.add_argument("kubectl_args", nargs="*", help="kubectl's arguments")
        if name == "env":
            command.add_argument(
                "--kubeconfig", action="store_true", help="print only the kubeconfig path"
            )
        if name == "binaries":
            command.add_argument(
                "--no-build", action="store_true", help="fail instead of building with `go build`"
            )
            command.add_argument(
                "--plain",
                action="store_true",
                help="only etcd and kube-apiserver (what plain mode needs)",
            )
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["kubectl"]:
        # Everything after `kubectl` is kubectl's, flags included (argparse would eat them).
        args = argparse.Namespace(func=cmd_kubectl, kubectl_args=argv[1:])
    else:
        args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
    except ControlPlaneError as exc:
        print(f"kubectrl.envtest: {exc}", file=sys.stderr)  # noqa: T201
        return 1
    return result


if __name__ == "__main__":
    sys.exit(main())
