"""``python -m kubectrl.envtest``: a local control plane from the shell.

Commands::

    start       start etcd + kube-apiserver in the background, print the kubeconfig path
                (``--cluster``: a whole LocalCluster, with controller-manager, scheduler and
                ``--nodes`` kwok nodes)
    stop        stop the one started by ``start``
    env         print ``export KUBECONFIG=...`` for it (``--kubeconfig``: the path only)
    kubectl     run the pinned kubectl against it: ``python -m kubectrl.envtest kubectl get pods``
                (``kubectl --name NAME ARGS...`` for another one than this shell's)
    status      say whether it runs, and where
    binaries    find or build every binary (``--plain``: etcd and kube-apiserver only), print
                where each one is
    demo        start one, show it answering (version, RBAC, a ConfigMap), stop it

``start`` runs the control plane in a detached ``serve`` process that owns it; ``stop`` sends
that process SIGTERM, and it stops the control plane before exiting.

Each control plane has a name, so two shells each start and stop their own: ``--name NAME``
(every command takes it), else ``$KUBECTRL_ENVTEST_NAME``, else ``shell-<pid of the calling
shell>``. Its state is kept in ``<cache>/run/<name>/state.json``; ``kubectl``, ``env``,
``status`` and ``stop`` read the one of that name (``kubectl`` uses ``$KUBECONFIG`` when none
is running). ``env`` also prints ``export KUBECTRL_ENVTEST_NAME=<name>``, which pins the name
in the shell that evaluates it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubectrl.envtest._binaries import (
    ALL_SPECS,
    KUBECTL,
    BinarySpec,
    cache_dir,
    find_binaries,
    find_binary,
    specs_for,
)
from kubectrl.envtest._cluster import LocalCluster
from kubectrl.envtest._control_plane import ControlPlane
from kubectrl.envtest._errors import ControlPlaneError

#: The environment variable naming the control plane of this shell (``env`` prints it).
NAME_ENV = "KUBECTRL_ENVTEST_NAME"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


def _run_dir() -> Path:
    return cache_dir() / "run"


def default_name(environ: Mapping[str, str] | None = None, parent_pid: int | None = None) -> str:
    """The name of this shell's control plane: ``$KUBECTRL_ENVTEST_NAME``, else per shell.

    Example::

        >>> default_name({"KUBECTRL_ENVTEST_NAME": "demo"}, 42), default_name({}, 42)
        ('demo', 'shell-42')
    """
    environ = os.environ if environ is None else environ
    if explicit := environ.get(NAME_ENV):
        return explicit
    return f"shell-{os.getppid() if parent_pid is None else parent_pid}"


def _check_name(name: str, source: str) -> str:
    if not _NAME.match(name):
        raise ControlPlaneError(
            f"control plane name {name!r} ({source}): expected letters, digits, '_', '.' or "
            "'-', starting with a letter or digit, at most 63 characters"
        )
    return name


def _name(args: argparse.Namespace) -> str:
    explicit = getattr(args, "name", None)
    if explicit:
        return _check_name(explicit, "--name")
    name = default_name()
    return _check_name(name, f"${NAME_ENV}" if os.environ.get(NAME_ENV) else "default")


def _state_file(name: str) -> Path:
    return _run_dir() / name / "state.json"


def _read_state(name: str) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads(_state_file(name).read_text())
    except (OSError, ValueError):
        return None
    if state.get("pid") and _alive(int(state["pid"])):
        return state
    return None


def running() -> dict[str, dict[str, Any]]:
    """Every running control plane started by ``start``: name -> its state."""
    found: dict[str, dict[str, Any]] = {}
    try:
        entries = sorted(_run_dir().iterdir())
    except OSError:
        return found
    for entry in entries:
        if entry.is_dir() and (state := _read_state(entry.name)):
            found[entry.name] = state
    return found


def _others(name: str) -> str:
    """A hint naming the control planes running under other names."""
    others = [other for other in running() if other != name]
    if not others:
        return ""
    return f" (running under other names: {', '.join(others)}; pick one with --name)"


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


def _kubectl_spec() -> BinarySpec:
    """kubectl of the chosen Kubernetes version (``KUBECTRL_ENVTEST_K8S_VERSION``)."""
    (spec,) = [spec for spec in specs_for(None) if spec.name == KUBECTL.name]
    return spec


def cmd_kubectl(args: argparse.Namespace) -> int:
    """Run the pinned kubectl with the running control plane's admin kubeconfig."""
    kubectl, _ = find_binary(_kubectl_spec())  # only kubectl: etcd and the apiserver are not needed
    env = dict(os.environ)
    name = _name(args)
    if state := _read_state(name):
        env["KUBECONFIG"] = state["kubeconfig"]
    elif not env.get("KUBECONFIG"):
        print(  # noqa: T201 - this is a CLI
            f"kubectrl.envtest kubectl: no control plane named {name!r} is running and "
            f"KUBECONFIG is not set{_others(name)}; start one with: "
            "python -m kubectrl.envtest start --cluster",
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
            "name": state_file.parent.name,
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
    name = _name(args)
    if state := _read_state(name):
        _say(
            f"{name!r} is already running (pid {state['pid']}); kubeconfig: "
            f"{state['kubeconfig']}; another one needs another --name"
        )
        return 0
    # Build or find the binaries here, in the foreground, so a long first build shows progress.
    binaries = find_binaries(cluster=args.cluster, kubectl=args.cluster)
    state_file = _state_file(name)
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
            _say(f"name:           {name}")
            _say(f"\n  export KUBECONFIG={state['kubeconfig']} {NAME_ENV}={name}\n")
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
    name = _name(args)
    state = _read_state(name)
    if state is None:
        _say(
            f"no control plane named {name!r} started by `python -m kubectrl.envtest start` "
            f"is running{_others(name)}"
        )
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
    name = _name(args)
    state = _read_state(name)
    if state is None:
        print(  # noqa: T201 - this is a CLI
            f"no control plane named {name!r} is running{_others(name)}; start one with: "
            "python -m kubectrl.envtest start",
            file=sys.stderr,
        )
        return 1
    if args.kubeconfig:
        _say(state["kubeconfig"])
        return 0
    _say(f"export KUBECONFIG={state['kubeconfig']}")
    _say(f"export {NAME_ENV}={name}")
    with contextlib.suppress(ControlPlaneError):
        kubectl, _ = find_binary(_kubectl_spec(), build=False)
        _say(f'export PATH="{kubectl.parent}:$PATH"')
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    name = _name(args)
    state = _read_state(name)
    if state is None:
        _say(f"{name!r} is not running{_others(name)}")
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
        ("stop", cmd_stop, "stop the control plane started by `start` (of --name)"),
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
        if name in ("start", "stop", "env", "status"):
            command.add_argument(
                "--name",
                default="",
                help=f"which control plane (default: ${NAME_ENV}, else one per calling shell)",
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
        # Everything after `kubectl` is kubectl's, flags included (argparse would eat them),
        # except a leading `--name NAME` / `--name=NAME`, which picks the control plane.
        rest, name = list(argv[1:]), ""
        if rest[:1] == ["--name"] and len(rest) > 1:
            name, rest = rest[1], rest[2:]
        elif rest and rest[0].startswith("--name="):
            name, rest = rest[0].partition("=")[2], rest[1:]
        args = argparse.Namespace(func=cmd_kubectl, kubectl_args=rest, name=name)
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
