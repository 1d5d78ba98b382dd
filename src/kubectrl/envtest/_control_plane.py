"""The local control plane: a real etcd and kube-apiserver on loopback."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

import httpx

from kubectrl.envtest._binaries import (
    Binaries,
    find_binaries,
    gates_for,
    minor_key,
    normalize_version,
    requested_version,
)
from kubectrl.envtest._certs import CertificateAuthority, service_account_key_pem
from kubectrl.envtest._errors import ControlPlaneError

__all__ = ["ControlPlane", "Kubeconfig"]

#: Names the apiserver's serving certificate is valid for (in-cluster names included, so a
#: kubeconfig that says ``https://kubernetes.default.svc`` through a port-forward still verifies).
_SERVING_DNS = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
_SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"  # as controller-runtime's envtest
_SERVICE_CLUSTER_IP = "10.0.0.1"
_LOG_TAIL_LINES = 25
#: The common name of kube-apiserver's front-proxy client certificate (the allowed name).
FRONT_PROXY_CLIENT = "front-proxy-client"
_Self = TypeVar("_Self", bound="ControlPlane")


@dataclasses.dataclass(frozen=True)
class Kubeconfig:
    """A kubeconfig for one user of the control plane, as a file and in memory.

    ``data`` is the parsed kubeconfig (certificates embedded as ``*-data``); ``path`` is the same
    content on disk. ``ca_file``, ``cert_file`` and ``key_file`` are the PEM files it embeds, for
    tools that want files.
    """

    path: Path
    data: Mapping[str, Any] = dataclasses.field(repr=False)
    user: str
    groups: tuple[str, ...]
    server: str
    ca_file: Path
    cert_file: Path
    key_file: Path = dataclasses.field(repr=False)

    def ssl_context(self) -> ssl.SSLContext:
        """A TLS context that verifies the apiserver and presents this user's certificate."""
        context = ssl.create_default_context(cafile=str(self.ca_file))
        context.load_cert_chain(str(self.cert_file), str(self.key_file))
        return context


def _free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports (all held open together so none repeats)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    kept = text.strip().splitlines()[-lines:]
    return "\n".join(kept) if kept else "(empty log)"


class _Process:
    """One control-plane binary, running in its own process group, logging to a file."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> int:
        with open(self.log_path, "ab") as log:
            self.popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group; see _watchdog for who reaps it
            )
        return self.popen.pid

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def exited(self) -> int | None:
        return self.popen.poll() if self.popen else None

    def stop(self, timeout: float) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=timeout)
        # Anything the binary forked into its group goes with it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)

    def tail(self) -> str:
        return _tail(self.log_path)


class _Watchdog:
    """The owner's end of the pipe to :mod:`kubectrl.envtest._watchdog`."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "kubectrl.envtest._watchdog"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        if self._proc.stdin is None:  # stdin=PIPE always makes one; say so if it ever did not
            self._proc.kill()
            raise ControlPlaneError("envtest watchdog: started without a stdin pipe")
        self._pipe: IO[bytes] = self._proc.stdin

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _send(self, line: str) -> None:
        self._pipe.write(line.encode() + b"\n")
        self._pipe.flush()

    def watch_group(self, pgid: int) -> None:
        self._send(f"pgid {pgid}")

    def watch_path(self, path: Path) -> None:
        self._send(f"path {path}")

    def release(self) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):
            self._send("release")
            self._pipe.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class ControlPlane:
    """A real etcd and kube-apiserver on free loopback ports, for tests and demos.

    Guarantees:
        * The apiserver serves HTTPS with a certificate from a throw-away CA, authorizes with
          RBAC, and has service-account issuing and signing keys; ``kubeconfig`` is an admin in
          ``system:masters``.
        * :meth:`start` returns only when ``/readyz`` answers 200 (RBAC bootstrap done); if it
          fails, everything started is stopped and the error carries the last log lines of etcd
          and kube-apiserver.
        * :meth:`stop` leaves no process and no temporary directory behind. If the owning Python
          process dies without calling it, a watchdog process does the same cleanup.

    Caveats:
        * Only etcd and kube-apiserver run: no controller-manager (namespaces stay
          ``Terminating`` after deletion, Deployments get no ReplicaSets) and no scheduler, as in
          controller-runtime's envtest.
        * The ``ServiceAccount`` admission plugin is off, so Pods need no service account.

    Example::

        with ControlPlane() as cp:
            with cp.http_client() as http:
                print(http.get("/version").json()["gitVersion"])
    """

    def __init__(
        self,
        *,
        binaries: Binaries | None = None,
        build: bool = True,
        start_timeout: float = 60.0,
        stop_timeout: float = 20.0,
        apiserver_args: Sequence[str] = (),
        etcd_args: Sequence[str] = (),
        work_dir: Path | None = None,
        log: Callable[[str], None] | None = None,
        feature_gates: Mapping[str, bool] | None = None,
        version: str | None = None,
    ) -> None:
        """Configure (but do not start) a control plane.

        Args:
            binaries: explicit binaries; by default resolved with
                :func:`kubectrl.envtest.find_binaries` (building them if ``build``).
            start_timeout: seconds to wait for etcd and then the apiserver to become ready
                (controller-runtime uses 20 s; a cold apiserver on 2 cores needs more).
            stop_timeout: seconds each process gets after SIGTERM before SIGKILL.
            apiserver_args / etcd_args: extra flags, appended (a later flag wins).
            work_dir: where data, certificates, logs and kubeconfigs go; a new temporary
                directory (removed on stop) by default. A given directory is kept.
            feature_gates: kube-apiserver feature gates (``--feature-gates``), e.g.
                ``{"ShardedListAndWatch": True}`` for sharded lists and watches (KEP-5866,
                alpha in v1.36); none by default here, that one on by default in
                :class:`~kubectrl.envtest.LocalCluster`. A gate the chosen version lacks is
                an error.
            version: the Kubernetes release, ``"1.35"``, ``"1.36"`` or ``"1.37"`` (``"1.37.x"``
                and ``"v1.37.2"`` too, as ``setup-envtest use`` takes them); by default
                ``$KUBECTRL_ENVTEST_K8S_VERSION``, else ``kubectrl.envtest.DEFAULT_VERSION``.
                When a version was asked for (here or in that variable), :meth:`start` refuses
                an apiserver whose ``/version`` is another minor (a ``TEST_ASSET_*`` or
                ``KUBEBUILDER_ASSETS`` binary of another release).
        """
        self.version = normalize_version(version)
        self._version_asked = version is not None or requested_version() is not None
        self.feature_gates = gates_for(self.version, _check_gates(feature_gates or {}))
        #: The apiserver's ``/version`` ``gitVersion`` once started (``"v1.37.2"``).
        self.server_version = ""
        self._binaries = binaries
        self._build = build
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self._apiserver_args = list(apiserver_args)
        self._etcd_args = list(etcd_args)
        self._given_work_dir = work_dir
        self._log = log
        self._work_dir: Path | None = None
        self._owns_work_dir = False
        self._ca: CertificateAuthority | None = None
        self._etcd: _Process | None = None
        self._apiserver: _Process | None = None
        #: Processes started after the apiserver (cluster mode), in start order.
        self._components: dict[str, _Process] = {}
        self._watchdog: _Watchdog | None = None
        self._kubeconfig: Kubeconfig | None = None
        self._users: dict[str, Kubeconfig] = {}
        self._server = ""
        self._etcd_endpoint = ""

    # -- properties ---------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether every process is up (as far as the OS knows)."""
        procs = (self._etcd, self._apiserver, *self._components.values())
        return all(p is not None and p.exited() is None for p in procs)

    @property
    def kubeconfig(self) -> Kubeconfig:
        """The admin kubeconfig (user ``admin`` in group ``system:masters``)."""
        if self._kubeconfig is None:
            raise ControlPlaneError("the control plane is not started")
        return self._kubeconfig

    @property
    def server(self) -> str:
        """The apiserver's URL, ``https://127.0.0.1:<port>``."""
        self._require_started()
        return self._server

    @property
    def etcd_endpoint(self) -> str:
        """etcd's client URL (plain HTTP on loopback), e.g. for its v3 JSON gateway."""
        self._require_started()
        return self._etcd_endpoint

    @property
    def work_dir(self) -> Path:
        """Data, certificates, logs and kubeconfigs live here."""
        if self._work_dir is None:
            raise ControlPlaneError("the control plane is not started")
        return self._work_dir

    @property
    def pids(self) -> dict[str, int]:
        """Process ids of etcd, kube-apiserver, the other components (if any) and the watchdog."""
        found: dict[str, int] = {}
        procs = [("etcd", self._etcd), ("kube-apiserver", self._apiserver)]
        procs += list(self._components.items())
        for name, proc in procs:
            if proc is not None and proc.pid is not None:
                found[name] = proc.pid
        if self._watchdog is not None:
            found["watchdog"] = self._watchdog.pid
        return found

    def _require_started(self) -> _Process:
        """The running kube-apiserver; ``ControlPlaneError`` before :meth:`start`."""
        if self._apiserver is None:
            raise ControlPlaneError("the control plane is not started")
        return self._apiserver

    # -- lifecycle ----------------------------------------------------------------------------

    def __enter__(self: _Self) -> _Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self: _Self) -> _Self:
        """Start etcd, then kube-apiserver; return when the apiserver is ready."""
        if self._apiserver is not None:
            raise ControlPlaneError("the control plane is already started")
        binaries = self._binaries or self._find_binaries()
        try:
            self._prepare_work_dir()
            self._start_etcd(binaries)
            self._start_apiserver(binaries)
            self._start_components(binaries)
        except BaseException:
            self.stop()
            raise
        return self

    def _find_binaries(self) -> Binaries:
        return find_binaries(build=self._build, log=self._log, version=self.version)

    def _start_components(self, binaries: Binaries) -> None:
        """Start what runs after the apiserver (nothing in plain mode)."""

    def stop(self) -> None:
        """Stop kube-apiserver, then etcd; remove the temporary directory. Idempotent."""
        for proc in (*reversed(self._components.values()), self._apiserver, self._etcd):
            if proc is not None:
                proc.stop(self.stop_timeout)
        self._components = {}
        if self._work_dir is not None and self._owns_work_dir:
            shutil.rmtree(self._work_dir, ignore_errors=True)
        if self._watchdog is not None:
            self._watchdog.release()
        self._apiserver = self._etcd = None
        self._watchdog = None
        self._work_dir = None
        self._kubeconfig = None
        self._users.clear()

    def logs(self, lines: int = _LOG_TAIL_LINES) -> str:
        """The last ``lines`` of each process's log (etcd, kube-apiserver, then the others)."""
        parts = []
        for proc in (self._etcd, self._apiserver, *self._components.values()):
            if proc is not None:
                parts.append(
                    f"--- {proc.name} ({proc.log_path}) ---\n{_tail(proc.log_path, lines)}"
                )
        return "\n".join(parts)

    def _prepare_work_dir(self) -> None:
        if self._given_work_dir is not None:
            self._work_dir = self._given_work_dir
            self._work_dir.mkdir(parents=True, exist_ok=True)
        else:
            self._work_dir = Path(tempfile.mkdtemp(prefix="kubectrl-envtest-"))
            self._owns_work_dir = True
        self._watchdog = _Watchdog()
        if self._owns_work_dir:
            self._watchdog.watch_path(self._work_dir)
        for sub in ("etcd-data", "pki", "users"):
            (self._work_dir / sub).mkdir(exist_ok=True)

    def _spawn(self, name: str, argv: Sequence[str]) -> _Process:
        watchdog = self._watchdog
        if watchdog is None:
            raise ControlPlaneError(f"cannot start {name}: the control plane is not started")
        proc = _Process(name, argv, self.work_dir / f"{name}.log")
        pid = proc.start()
        watchdog.watch_group(pid)  # the process leads its own group: pgid == pid
        return proc

    def _wait(self, proc: _Process, what: str, probe: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self.start_timeout
        last_error = ""
        while time.monotonic() < deadline:
            code = proc.exited()
            if code is not None:
                raise ControlPlaneError(
                    f"{proc.name} exited with code {code} before {what}.\n"
                    + self._failure_logs(proc)
                )
            try:
                if probe():
                    return
            except (httpx.HTTPError, OSError) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
            time.sleep(0.1)
        raise ControlPlaneError(
            f"{proc.name} did not become ready ({what}) within {self.start_timeout:.0f}s"
            + (f"; last probe error: {last_error}" if last_error else "")
            + "\n"
            + self._failure_logs(proc)
        )

    def _failure_logs(self, proc: _Process) -> str:
        """Logs for an error about ``proc``: its own tail first, then the others'."""
        if proc in (self._etcd, self._apiserver):
            return self.logs()
        parts = [f"--- {proc.name} ({proc.log_path}) ---\n{proc.tail()}"]
        for other in (self._etcd, self._apiserver, *self._components.values()):
            if other is not None and other is not proc:
                parts.append(
                    f"--- {other.name} ({other.log_path}) ---\n{_tail(other.log_path, 10)}"
                )
        return "\n".join(parts)

    def _start_etcd(self, binaries: Binaries) -> None:
        client_port, peer_port = _free_ports(2)
        client = f"http://127.0.0.1:{client_port}"
        peer = f"http://127.0.0.1:{peer_port}"
        argv = [
            str(binaries.etcd),
            "--name=envtest",
            f"--data-dir={self.work_dir / 'etcd-data'}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=envtest={peer}",
            # Throw-away data: durability buys nothing and fsync dominates on slow disks.
            "--unsafe-no-fsync=true",
            "--log-level=warn",
            *self._etcd_args,
        ]
        self._etcd = self._spawn("etcd", argv)
        self._etcd_endpoint = client

        def healthy() -> bool:
            response = httpx.get(f"{client}/health", timeout=2.0)
            return response.status_code == 200 and response.json().get("health") == "true"

        self._wait(self._etcd, "etcd /health", healthy)

    def _start_apiserver(self, binaries: Binaries) -> None:
        pki = self.work_dir / "pki"
        self._ca = CertificateAuthority()
        (pki / "ca.crt").write_bytes(self._ca.cert_pem)
        serving = self._ca.issue(
            "kube-apiserver",
            dns_names=_SERVING_DNS,
            ip_addresses=("127.0.0.1", _SERVICE_CLUSTER_IP),
            server=True,
        )
        _write_private(pki / "apiserver.crt", serving.cert_pem)
        _write_private(pki / "apiserver.key", serving.key_pem)
        sa_private, sa_public = service_account_key_pem()
        _write_private(pki / "sa.key", sa_private)
        (pki / "sa.pub").write_bytes(sa_public)
        # The aggregation layer: a CA of its own for the front proxy (kube-apiserver's client
        # certificate when it proxies to an extension API server, which trusts X-Remote-*
        # headers only from a certificate of this CA with an allowed name).
        front_proxy = CertificateAuthority("kubectrl-envtest-front-proxy-ca")
        (pki / "front-proxy-ca.crt").write_bytes(front_proxy.cert_pem)
        proxy_client = front_proxy.issue(FRONT_PROXY_CLIENT)
        _write_private(pki / "front-proxy-client.crt", proxy_client.cert_pem)
        _write_private(pki / "front-proxy-client.key", proxy_client.key_pem)

        (port,) = _free_ports(1)
        self._server = f"https://127.0.0.1:{port}"
        argv = [
            str(binaries.kube_apiserver),
            f"--etcd-servers={self._etcd_endpoint}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={pki}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-cluster-ip-range={_SERVICE_CLUSTER_IP_RANGE}",
            f"--requestheader-client-ca-file={pki / 'front-proxy-ca.crt'}",
            f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={pki / 'front-proxy-client.crt'}",
            f"--proxy-client-key-file={pki / 'front-proxy-client.key'}",
            # No kube-proxy: the aggregator dials an APIService's endpoint addresses itself.
            "--enable-aggregator-routing=true",
            *self._admission_flags(),
            "--allow-privileged=true",
            *_gate_flags(self.feature_gates),
            *_version_flags(self.version),
            *self._apiserver_args,
        ]
        self._apiserver = self._spawn("kube-apiserver", argv)
        self._kubeconfig = self._write_kubeconfig("admin", ("system:masters",), admin=True)
        self._wait_apiserver_ready()

    def _admission_flags(self) -> list[str]:
        # Without a controller-manager nobody creates the "default" ServiceAccount, and the
        # ServiceAccount admission plugin would refuse every Pod.
        return ["--disable-admission-plugins=ServiceAccount"]

    def _wait_apiserver_ready(self) -> None:
        apiserver = self._require_started()
        admin = self.kubeconfig

        def ready() -> bool:
            with httpx.Client(base_url=self._server, verify=admin.ssl_context(), timeout=5) as c:
                return c.get("/readyz").status_code == 200

        self._wait(apiserver, "/readyz", ready)
        with httpx.Client(base_url=self._server, verify=admin.ssl_context(), timeout=5) as c:
            self.server_version = str(c.get("/version").json().get("gitVersion", ""))
        served = ".".join(self.server_version.lstrip("v").split(".")[:2])
        if self._version_asked and served != self.version:
            raise ControlPlaneError(
                f"asked for Kubernetes {self.version}, but the kube-apiserver started says "
                f"{self.server_version or 'no gitVersion'} at /version; point TEST_ASSET_* / "
                f"KUBEBUILDER_ASSETS at {self.version} binaries, or ask for {served}"
            )

    def restart_apiserver(self, *, grace: float = 5.0) -> None:
        """Stop kube-apiserver and start it again on the same port, certificates and etcd.

        Returns when ``/readyz`` answers 200 again. Open watches and connections are cut, as
        they are when a real apiserver rolls; kubeconfigs stay valid. For tests of how clients
        and informers survive a server restart.

        The old process gets SIGTERM and ``grace`` seconds (default 5) before SIGKILL: with
        watches open, kube-apiserver drains them for longer than a test wants to wait (over
        20 s measured), and a client must survive either ending.
        """
        old = self._require_started()
        old.stop(min(grace, self.stop_timeout))
        self._apiserver = self._spawn(old.name, old.argv)
        try:
            self._wait_apiserver_ready()
        except ControlPlaneError:
            self.stop()
            raise

    # -- users and kubeconfigs ----------------------------------------------------------------

    def _write_kubeconfig(
        self, user: str, groups: Iterable[str], *, admin: bool = False
    ) -> Kubeconfig:
        ca = self._ca
        if ca is None:
            raise ControlPlaneError(f"cannot write a kubeconfig for {user}: the CA is not made yet")
        groups = tuple(groups)
        pair = ca.issue(user, organizations=groups)
        # The admin's files live apart from add_user's, so a user named "admin" cannot clash.
        work_dir = self.work_dir
        files_dir = work_dir / ("pki" if admin else "users")
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in user)
        cert_file = files_dir / f"{safe}.crt"
        key_file = files_dir / f"{safe}.key"
        _write_private(cert_file, pair.cert_pem)
        _write_private(key_file, pair.key_pem)

        def b64(data: bytes) -> str:
            return base64.b64encode(data).decode()

        data: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "envtest",
                    "cluster": {
                        "server": self._server,
                        "certificate-authority-data": b64(ca.cert_pem),
                    },
                }
            ],
            "users": [
                {
                    "name": user,
                    "user": {
                        "client-certificate-data": b64(pair.cert_pem),
                        "client-key-data": b64(pair.key_pem),
                    },
                }
            ],
            "contexts": [
                {"name": f"envtest-{safe}", "context": {"cluster": "envtest", "user": user}}
            ],
            "current-context": f"envtest-{safe}",
            "preferences": {},
        }
        path = work_dir / ("kubeconfig" if admin else f"users/{safe}.kubeconfig")
        # JSON is YAML: every kubeconfig loader reads it, and it needs no YAML writer.
        _write_private(path, json.dumps(data, indent=2).encode())
        return Kubeconfig(
            path=path,
            data=data,
            user=user,
            groups=groups,
            server=self._server,
            ca_file=work_dir / "pki" / "ca.crt",
            cert_file=cert_file,
            key_file=key_file,
        )

    def add_user(self, name: str, groups: Sequence[str] = ()) -> Kubeconfig:
        """A kubeconfig for a new user ``name`` in ``groups`` (no RBAC bindings are made).

        Example::

            alice = cp.add_user("alice", groups=["dev"])
            # alice gets 403 until a RoleBinding grants her something
        """
        self._require_started()
        if not name:
            raise ValueError("add_user: the user name must not be empty")
        if isinstance(groups, str):
            raise TypeError("add_user: groups must be a sequence of group names, not a string")
        kubeconfig = self._write_kubeconfig(name, groups)
        self._users[name] = kubeconfig
        return kubeconfig

    def http_client(self, kubeconfig: Kubeconfig | None = None, **kwargs: Any) -> httpx.Client:
        """A blocking ``httpx.Client`` for the apiserver as ``kubeconfig``'s user (admin default).

        For tests and tools that talk to the API directly; kubectrl's own client is the richer
        way. Extra keyword arguments go to ``httpx.Client``.
        """
        self._require_started()
        user = kubeconfig or self.kubeconfig
        kwargs.setdefault("timeout", 30.0)
        return httpx.Client(base_url=self._server, verify=user.ssl_context(), **kwargs)

    # -- aggregated API servers ---------------------------------------------------------------

    def register_api_service(
        self,
        group: str,
        version: str,
        *,
        ca_bundle: bytes,
        address: str,
        port: int,
        namespace: str = "default",
        service_name: str = "",
        wait: bool = True,
        timeout: float = 60.0,
    ) -> dict[str, Any]:
        """Register an extension API server listening on ``address:port`` for
        ``group/version`` (a Service, its EndpointSlice and an ``APIService`` with
        ``ca_bundle``); returns the APIService, once ``Available=True`` if ``wait``.

        The aggregator dials ``address`` itself (``--enable-aggregator-routing``), and refuses
        a loopback address: serve on another address (the extension API server docs show a
        network namespace of the test's own). The server's certificate must name
        ``<service>.<namespace>.svc`` (``service_name`` is ``<first label of group>-apiserver``
        by default). With ``wait``, it also waits until kube-apiserver's OpenAPI lists the
        group/version (``kubectl explain`` reads it).
        """
        from kubectrl.envtest._aggregation import register_api_service

        self._require_started()
        with self.http_client() as http:
            return register_api_service(
                http,
                group,
                version,
                ca_bundle=ca_bundle,
                address=address,
                port=port,
                namespace=namespace,
                service_name=service_name,
                wait=wait,
                timeout=timeout,
            )

    def wait_api_service(
        self, group: str, version: str, *, available: bool = True, timeout: float = 60.0
    ) -> dict[str, Any]:
        """Wait until the APIService of ``group/version`` is ``Available`` (or, with
        ``available=False``, not); returns its ``Available`` condition."""
        from kubectrl.envtest._aggregation import wait_api_service

        self._require_started()
        with self.http_client() as http:
            return wait_api_service(
                http, f"{version}.{group}", available=available, timeout=timeout
            )

    # -- CRDs ---------------------------------------------------------------------------------

    def install_crds(
        self, paths: Iterable[str | os.PathLike[str]], *, timeout: float = 10.0
    ) -> list[dict[str, Any]]:
        """Create (or update) the CRDs in the given YAML/JSON files or directories.

        Returns when every CRD is ``Established`` and each of its served versions appears in
        discovery (controller-runtime polls every 100 ms for up to 10 s; so do we). A file with
        no CRD in it is an error, as is a CRD the server rejects (the message names the file).
        """
        from kubectrl.envtest._crds import install_crds

        self._require_started()
        with self.http_client() as http:
            return install_crds(http, paths, timeout=timeout)


def _check_gates(gates: Mapping[str, bool]) -> dict[str, bool]:
    checked: dict[str, bool] = {}
    for name, value in gates.items():
        if not isinstance(name, str) or not name.isidentifier() or name[:1].islower():
            raise ValueError(
                f"feature gate name {name!r}: expected a gate such as 'ShardedListAndWatch'"
            )
        if not isinstance(value, bool):
            raise ValueError(f"feature gate {name}: value must be True or False, not {value!r}")
        checked[name] = value
    return checked


def _version_flags(version: str) -> list[str]:
    """kube-apiserver flags one Kubernetes minor needs and another refuses or lacks."""
    if minor_key(version) >= (1, 37):
        # kube-apiserver 1.37 checks --advertise-address against the endpoint reconciler at
        # start and exits: "cannot use public IP 127.0.0.1 with endpoint reconciler: ... may not
        # be in the loopback range" (k8s.io/kubernetes pkg/apis/core/validation
        # ValidateNonSpecialIP). Loopback is all envtest has, so the `kubernetes` Service's
        # endpoints are not maintained on 1.37 (1.35 and 1.36 keep the lease reconciler).
        return ["--endpoint-reconciler-type=none"]
    return []


def _gate_flags(gates: Mapping[str, bool]) -> list[str]:
    if not gates:
        return []
    return [
        "--feature-gates=" + ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))
    ]


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
