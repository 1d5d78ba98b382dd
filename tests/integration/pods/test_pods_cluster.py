"""Pods' streaming subresources on the local cluster, side by side with the real kubectl.

kwok plays the kubelet (see :class:`kubectrl.envtest.LocalCluster`): an exec runs the command on
this host, logs read a CRI-format file named by a ``Logs`` object, a port-forward reaches an
address named by a ``PortForward`` object. The same pod is asked through ``kubectl`` and through
kubectrl, and both answers are compared. One cluster (the session's ``kubectrl_cluster``) and one
pod (module scope) serve every test here.

Protocol references: k8s.io/apimachinery/pkg/util/httpstream/wsstream/conn.go (channel framing),
client-go tools/remotecommand/v4.go and v5.go (the error channel's Status, closing stdin),
k8s.io/kubelet/pkg/cri/streaming/portforward/websocket.go (the port prefix per channel).
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import json
import logging
import re
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.client._fast_transport import FastTransport
from kubectrl.envtest import LocalCluster, find_binaries
from kubectrl.envtest._cluster import cri_log_line
from kubectrl.errors import (
    APIConnectionError,
    BadRequestError,
    ForbiddenError,
    InternalError,
    InvalidError,
    NotFoundError,
    TooManyRequestsError,
)

pytestmark = pytest.mark.integration

DEADLINE = 120.0
POD = "box"


def _wait(what: str, probe: Any, timeout: float = DEADLINE) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.1)


class Kubectl:
    def __init__(self, cluster: LocalCluster) -> None:
        binary = find_binaries(build=False, kubectl=True).kubectl
        assert binary is not None
        self.argv = [str(binary), f"--kubeconfig={cluster.kubeconfig.path}"]

    def __call__(
        self, *args: str, input: bytes | None = None, namespace: str | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        ns = [f"--namespace={namespace}"] if namespace else []
        return subprocess.run(
            [*self.argv, *ns, *args], input=input, capture_output=True, timeout=DEADLINE
        )


@pytest.fixture(scope="module")
def pod_namespace(kubectrl_cluster: LocalCluster) -> Iterator[str]:
    """A namespace with one Running pod ``box`` (containers ``main`` and ``side``)."""
    ns = f"pods-{int(time.time() * 1000) % 10**8}"
    with kubectrl_cluster.http_client() as http:
        assert http.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).status_code == 201
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": POD, "namespace": ns, "labels": {"app": "box"}},
            "spec": {
                "containers": [
                    {"name": "main", "image": "busybox"},
                    {"name": "side", "image": "busybox"},
                ]
            },
        }
        created = http.post(f"/api/v1/namespaces/{ns}/pods", json=pod)
        assert created.status_code == 201, created.text

        def running() -> bool:
            got = http.get(f"/api/v1/namespaces/{ns}/pods/{POD}").json()
            return bool(got.get("status", {}).get("phase") == "Running")

        _wait("the pod to run", running)
    try:
        yield ns
    finally:
        with kubectrl_cluster.http_client() as http:
            http.delete(f"/api/v1/namespaces/{ns}")


@pytest.fixture(scope="module")
def kubectl(kubectrl_cluster: LocalCluster) -> Kubectl:
    return Kubectl(kubectrl_cluster)


@pytest.fixture
async def client(kubectrl_cluster: LocalCluster) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(load_kubeconfig(kubectrl_cluster.kubeconfig.path)) as c:
        yield c


def _apply(kubectl: Kubectl, obj: dict[str, Any]) -> None:
    done = kubectl("apply", "-f", "-", input=json.dumps(obj).encode())
    assert done.returncode == 0, done.stderr


def _kwok_object(kind: str, ns: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": POD, "namespace": ns},
        "spec": spec,
    }


# ---------------------------------------------------------------------------------------- exec


async def test_exec_stdout_and_stderr_apart_same_as_kubectl(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str
) -> None:
    command = ["sh", "-c", "echo out; echo err >&2"]
    theirs = kubectl("exec", POD, "-c", "main", "--", *command, namespace=pod_namespace)
    ours = await client.pods.exec(POD, command, namespace=pod_namespace, container="main")
    assert theirs.returncode == 0
    assert (ours.stdout, ours.stderr, ours.exit_code) == (theirs.stdout, theirs.stderr, 0)
    assert ours.stdout == b"out\n"
    assert ours.stderr == b"err\n"


async def test_exec_stdin_round_trip(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str
) -> None:
    # kwok does not pass the end of stdin on to the command: it reads a known length.
    data = b"0123456789" * 100
    command = ["head", "-c", str(len(data))]
    theirs = kubectl("exec", "-i", POD, "-c", "main", "--", *command, input=data,
                     namespace=pod_namespace)  # fmt: skip
    ours = await client.pods.exec(
        POD, command, namespace=pod_namespace, container="main", stdin=data
    )
    assert theirs.returncode == 0, theirs.stderr
    assert ours.stdout == theirs.stdout == data
    assert ours.ok


async def test_exec_ten_mib_through_stdout_intact(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str
) -> None:
    size = 10 * 1024 * 1024
    command = ["sh", "-c", f"yes 0123456789abcdef | head -c {size}"]
    theirs = kubectl("exec", POD, "-c", "main", "--", *command, namespace=pod_namespace)
    ours = await client.pods.exec(POD, command, namespace=pod_namespace, container="main")
    assert len(ours.stdout) == size
    assert hashlib.sha256(ours.stdout).digest() == hashlib.sha256(theirs.stdout).digest()
    assert ours.stdout == (b"0123456789abcdef\n" * (size // 17 + 1))[:size]


async def test_exec_failures_are_the_servers_same_as_kubectl(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str
) -> None:
    # kwok reports a command's failure (a non-zero exit, a missing executable) as an internal
    # error Status, not as NonZeroExitCode: kubectl and kubectrl both surface its message.
    for command, needle in (
        (["sh", "-c", "echo err >&2; exit 3"], "exit status 3"),
        (["no-such-command-kubectrl"], 'exec: "no-such-command-kubectrl"'),
    ):
        theirs = kubectl("exec", POD, "-c", "main", "--", *command, namespace=pod_namespace)
        assert theirs.returncode == 1
        assert needle.encode() in theirs.stderr
        with pytest.raises(InternalError) as caught:
            await client.pods.exec(POD, command, namespace=pod_namespace, container="main")
        assert needle in str(caught.value)
        assert f"pods/exec {pod_namespace}/{POD}" in str(caught.value)


async def test_exec_missing_container_and_pod_name_them(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str
) -> None:
    theirs = kubectl("exec", POD, "-c", "nope", "--", "true", namespace=pod_namespace)
    assert theirs.returncode == 1
    with pytest.raises(BadRequestError) as caught:
        await client.pods.exec(POD, ["true"], namespace=pod_namespace, container="nope")
    message = str(caught.value)
    assert "container nope is not valid for pod box" in message
    assert "container nope is not valid for pod box" in theirs.stderr.decode()
    assert "pods/exec" in message

    with pytest.raises(NotFoundError) as missing:
        await client.pods.exec("ghost", ["true"], namespace=pod_namespace)
    assert 'pods "ghost" not found' in str(missing.value)
    assert f"pods/exec {pod_namespace}/ghost" in str(missing.value)


async def test_exec_forbidden_by_rbac_names_pod_and_subresource(
    kubectrl_cluster: LocalCluster, pod_namespace: str
) -> None:
    user = kubectrl_cluster.add_user("pods-exec-nobody")
    async with AsyncClient(load_kubeconfig(user.path)) as denied:
        with pytest.raises(ForbiddenError) as caught:
            await denied.pods.exec(POD, ["true"], namespace=pod_namespace)
    message = str(caught.value)
    assert f"pods/exec {pod_namespace}/{POD}" in message
    assert "forbidden" in message


async def test_open_exec_session_streams_and_waits(client: AsyncClient, pod_namespace: str) -> None:
    async with client.pods.open_exec(
        POD, ["sh", "-c", "echo one; echo two >&2"], namespace=pod_namespace, container="side"
    ) as session:
        assert session.protocol in ("v5.channel.k8s.io", "v4.channel.k8s.io")
        assert await session.stdout.readline() == b"one\n"
        assert await session.stderr.read() == b"two\n"
        assert await session.wait() == 0


# ---------------------------------------------------------------------------------------- logs


async def test_logs_same_as_kubectl_and_follow_sees_new_lines(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str, tmp_path: Path
) -> None:
    log_file = tmp_path / "main.log"
    log_file.write_text(cri_log_line("first") + cri_log_line("second", stream="stderr"))
    _apply(kubectl, _kwok_object("Logs", pod_namespace, {"logs": [{"logsFile": str(log_file)}]}))

    def kubectl_logs() -> subprocess.CompletedProcess[bytes] | None:
        done = kubectl("logs", POD, "-c", "main", namespace=pod_namespace)
        return done if done.returncode == 0 else None

    theirs = _wait("kwok to read the Logs object", kubectl_logs)
    ours = await client.pods.log(POD, namespace=pod_namespace, container="main")
    assert ours.encode() == theirs.stdout == b"first\nsecond\n"

    lines = client.pods.log_stream(POD, namespace=pod_namespace, container="main")
    seen = [await anext(lines), await anext(lines)]
    with log_file.open("a") as f:
        f.write(cri_log_line("third"))
    seen.append(await asyncio.wait_for(anext(lines), DEADLINE))
    assert seen == ["first", "second", "third"]

    # Cancelling the consumer closes the connection: no task and no socket left behind.
    tasks_before = len(asyncio.all_tasks())
    consumer = asyncio.ensure_future(anext(lines))
    await asyncio.sleep(0)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    await lines.aclose()  # type: ignore[attr-defined]
    assert len(asyncio.all_tasks()) <= tasks_before
    # No request of the watch pool is in flight any more (its transport counts active ones).
    transport = client._watch_pool()
    assert isinstance(transport, FastTransport)
    assert transport.in_use() == 0


async def test_logs_of_missing_pod_and_container_name_them(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str
) -> None:
    with pytest.raises(NotFoundError) as missing:
        await client.pods.log("ghost", namespace=pod_namespace)
    assert 'pods "ghost" not found' in str(missing.value)
    theirs = kubectl("logs", POD, "-c", "nope", namespace=pod_namespace)
    with pytest.raises(BadRequestError) as bad:
        await client.pods.log(POD, namespace=pod_namespace, container="nope")
    assert "container nope is not valid for pod box" in str(bad.value)
    assert "container nope is not valid for pod box" in theirs.stderr.decode()


# -------------------------------------------------------------------------------- port-forward


@pytest.fixture
async def echo_server() -> AsyncIterator[int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


async def _round_trip(host: str, port: int, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(payload)
        await writer.drain()
        return await asyncio.wait_for(reader.readexactly(len(payload)), DEADLINE)
    finally:
        writer.close()


async def test_port_forward_twenty_concurrent_connections_and_kubectl(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str, echo_server: int
) -> None:
    _apply(
        kubectl,
        _kwok_object(
            "PortForward",
            pod_namespace,
            {
                "forwards": [
                    {"ports": [8080], "target": {"port": echo_server, "address": "127.0.0.1"}}
                ]
            },
        ),
    )
    async with client.pods.port_forward(POD, 8080, namespace=pod_namespace) as forward:
        host, port = forward.address

        async def probe() -> bytes | None:
            try:
                return await _round_trip(host, port, b"ping")
            except (OSError, asyncio.IncompleteReadError):
                return None

        deadline = time.monotonic() + DEADLINE
        while await probe() != b"ping":  # kwok reads the PortForward object
            assert time.monotonic() < deadline, forward.errors
            await asyncio.sleep(0.2)
        payloads = [f"connection {i} ".encode() * (100 + i) for i in range(20)]
        answers = await asyncio.gather(*(_round_trip(host, port, p) for p in payloads))
        assert answers == payloads

    proc = await asyncio.create_subprocess_exec(
        *kubectl.argv,
        f"--namespace={pod_namespace}",
        "port-forward",
        f"pod/{POD}",
        ":8080",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), DEADLINE)
        match = re.search(rb"Forwarding from 127\.0\.0\.1:(\d+)", line)
        assert match, line
        assert await _round_trip("127.0.0.1", int(match.group(1)), b"same bytes") == b"same bytes"
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 30)


async def test_port_forward_error_stream_surfaces(client: AsyncClient, pod_namespace: str) -> None:
    # Port 9 is not configured in the pod's PortForward: kwok answers on the error channel.
    async with client.pods.port_forward(POD, 9, namespace=pod_namespace) as forward:
        reader, writer = await asyncio.open_connection(*forward.address)
        writer.write(b"x")
        assert await asyncio.wait_for(reader.read(), DEADLINE) == b""
        writer.close()
    assert forward.errors, "the error channel's text is kept"


# ------------------------------------------------------------------------------------ eviction


async def test_eviction_blocked_by_budget_is_a_typed_429(
    client: AsyncClient, pod_namespace: str
) -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep-box", "namespace": pod_namespace},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "box"}}},
    }
    await client.create(pdb)
    try:
        with pytest.raises(TooManyRequestsError) as caught:
            await client.pods.evict(POD, namespace=pod_namespace)
        assert "disruption budget" in caught.value.server_message
        assert "pods/eviction" in str(caught.value)
    finally:
        await client.delete(("policy/v1", "PodDisruptionBudget"), "keep-box",
                            namespace=pod_namespace)  # fmt: skip


async def test_dry_run_create_leaves_nothing(client: AsyncClient, pod_namespace: str) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "dry", "namespace": pod_namespace}}  # fmt: skip
    answered = await client.create(cm, dry_run=True)
    assert answered["metadata"]["name"] == "dry"
    with pytest.raises(NotFoundError):
        await client.get(("v1", "ConfigMap"), "dry", namespace=pod_namespace)


async def test_connection_refused_names_the_subresource(pod_namespace: str) -> None:
    from kubectrl.client import ClientConfig

    config = ClientConfig(server="https://127.0.0.1:1", insecure_skip_tls_verify=True)
    async with AsyncClient(config) as nowhere:
        with pytest.raises(APIConnectionError) as caught:
            await nowhere.pods.exec(POD, ["true"], namespace=pod_namespace)
    assert f"pods/exec {pod_namespace}/{POD}" in str(caught.value)


# ------------------------------------------------------------------------- logs: the options


async def test_log_bytes_since_time_and_a_partial_last_line_same_as_kubectl(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str, tmp_path: Path
) -> None:
    log_file = tmp_path / "partial.log"
    log_file.write_text(
        cri_log_line("old", timestamp="2020-01-01T00:00:00.000000000Z")
        + cri_log_line("new", timestamp="2030-01-01T00:00:00.000000000Z")
        + "2030-01-01T00:00:01.000000000Z stdout P half a li\n"
    )
    _apply(kubectl, _kwok_object("Logs", pod_namespace, {"logs": [{"logsFile": str(log_file)}]}))

    def kubectl_logs() -> subprocess.CompletedProcess[bytes] | None:
        done = kubectl("logs", POD, "-c", "main", namespace=pod_namespace)
        return done if done.returncode == 0 and b"old" in done.stdout else None

    theirs = _wait("kwok to read the new Logs object", kubectl_logs)
    ours = await client.pods.log(POD, namespace=pod_namespace, container="main", encoding=None)
    assert ours == theirs.stdout
    assert ours.endswith(b"half a li")  # the partial last line, without a line end
    text = await client.pods.log({"metadata": {"name": POD, "namespace": pod_namespace}},
                                 container="main")  # fmt: skip
    assert text.encode() == ours

    since = kubectl("logs", POD, "-c", "main", "--since-time=2025-01-01T00:00:00Z",
                    namespace=pod_namespace)  # fmt: skip
    assert since.returncode == 0, since.stderr
    moment = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    ours_since = await client.pods.log(
        POD, namespace=pod_namespace, container="main", since_time=moment, encoding=None
    )
    assert ours_since == since.stdout
    assert b"old" not in ours_since
    assert ours_since.startswith(b"new\n")


async def test_log_of_a_pod_not_scheduled_yet_is_empty_as_kubectl_shows(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str
) -> None:
    # No node matches the selector: the pod stays Pending, no kubelet has its container. The
    # apiserver answers an empty log (it has no node to ask); a kubelet asked about a container
    # not started yet answers 400 'container "c" in pod "p" is waiting to start', which kwok
    # does not reproduce.
    pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pending", "namespace": pod_namespace},
        "spec": {
            "nodeSelector": {"kubectrl.test/nowhere": "true"},
            "containers": [{"name": "main", "image": "busybox"}],
        },
    }
    await client.create(pending)
    theirs = kubectl("logs", "pending", "-c", "main", namespace=pod_namespace)
    assert (theirs.returncode, theirs.stdout) == (0, b"")
    empty = await client.pods.log("pending", namespace=pod_namespace, container="main")
    assert empty == ""
    raw = await client.pods.log("pending", namespace=pod_namespace, container="main", encoding=None)
    assert raw == b""
    with pytest.raises(BadRequestError) as caught:
        await client.pods.log("pending", namespace=pod_namespace, container="nope")
    assert "container nope is not valid for pod pending" in str(caught.value)
    assert f"pods/log {pod_namespace}/pending" in str(caught.value)


# ------------------------------------------------- tokens, proxy, ephemeral containers, warnings


async def test_create_token_for_a_service_account(client: AsyncClient, pod_namespace: str) -> None:
    await client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                         "metadata": {"name": "builder", "namespace": pod_namespace}})  # fmt: skip
    before = datetime.datetime.now(datetime.timezone.utc)
    token = await client.create_token(
        "builder", namespace=pod_namespace, audiences=["vault"], expiration_seconds=3600
    )
    assert token.audiences == ("vault",)
    assert token.token.count(".") == 2  # a JWT
    assert token.token not in repr(token)
    lifetime = (token.expiration - before).total_seconds()
    assert 3500 < lifetime <= 3601
    review = await client.create(
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token.token, "audiences": ["vault"]},
        }
    )
    assert review["status"]["authenticated"] is True
    assert review["status"]["user"]["username"] == (
        f"system:serviceaccount:{pod_namespace}:builder"
    )
    with pytest.raises(NotFoundError, match='serviceaccounts "ghost" not found'):
        await client.create_token("ghost", namespace=pod_namespace)
    with pytest.raises(InvalidError, match="may not specify a duration less than 10 minutes"):
        await client.create_token("builder", namespace=pod_namespace, expiration_seconds=60)


async def test_proxy_returns_the_response_as_kubectl_sees_it(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str
) -> None:
    await client.create({"apiVersion": "v1", "kind": "Service",
                         "metadata": {"name": "lonely", "namespace": pod_namespace},
                         "spec": {"selector": {"app": "nobody"},
                                  "ports": [{"name": "http", "port": 80}]}})  # fmt: skip
    path = f"/api/v1/namespaces/{pod_namespace}/services/lonely:http/proxy/healthz"

    def endpoints_settled() -> subprocess.CompletedProcess[bytes] | None:
        done = kubectl("get", "--raw", path)
        return done if b"no endpoints available" in done.stderr else None

    theirs = _wait("the service's empty endpoints", endpoints_settled)
    response = await client.proxy_service(
        "lonely", "/healthz", namespace=pod_namespace, port="http"
    )
    assert response.status_code == 503
    assert response.json()["message"] == 'no endpoints available for service "lonely"'
    assert response.json()["message"].encode() in theirs.stderr
    missing = await client.pods.proxy("ghost", "/", namespace=pod_namespace, port=80)
    assert missing.status_code == 404
    assert missing.json()["message"] == 'pods "ghost" not found'


async def test_ephemeral_container_added_as_kubectl_debug_does(
    client: AsyncClient, kubectl: Kubectl, pod_namespace: str
) -> None:
    dry = await client.pods.add_ephemeral_container(
        POD, {"name": "dry", "image": "busybox"}, namespace=pod_namespace, dry_run=True
    )
    assert [c["name"] for c in dry["spec"]["ephemeralContainers"]] == ["dry"]
    pod = await client.pods.add_ephemeral_container(
        POD,
        {"name": "debug", "image": "busybox", "targetContainerName": "main"},
        namespace=pod_namespace,
    )
    assert [c["name"] for c in pod["spec"]["ephemeralContainers"]] == ["debug"]
    seen = kubectl("get", "pod", POD, "-o", "jsonpath={.spec.ephemeralContainers[*].name}",
                   namespace=pod_namespace)  # fmt: skip
    assert seen.stdout == b"debug"
    with pytest.raises(NotFoundError, match='pods "ghost" not found'):
        await client.pods.add_ephemeral_container("ghost", {"name": "x", "image": "y"},
                                             namespace=pod_namespace)  # fmt: skip


async def test_a_deprecated_apis_warning_is_logged_once(
    kubectrl_cluster: LocalCluster, caplog: pytest.LogCaptureFixture, monkeypatch: Any
) -> None:
    from kubectrl.client import _warnings

    # The process-wide default, fresh: what a new process starts with.
    monkeypatch.setattr(
        _warnings, "DEFAULT_WARNING_HANDLER",
        _warnings.DeduplicateWarnings(_warnings.WarningLogger()),
    )  # fmt: skip
    async with AsyncClient(load_kubeconfig(kubectrl_cluster.kubeconfig.path)) as c:
        with caplog.at_level(logging.WARNING, logger="kubectrl.client.warnings"):
            for _ in range(3):
                await c.list(("v1", "ComponentStatus"))
    texts = [r.getMessage() for r in caplog.records if r.name == "kubectrl.client.warnings"]
    assert texts == ["server warning: v1 ComponentStatus is deprecated in v1.19+"]


# ------------------------------------------------ bad configuration, a connection cut mid-stream


async def test_a_kubeconfig_with_the_wrong_ca_names_pod_subresource_and_cause(
    kubectrl_cluster: LocalCluster, pod_namespace: str, tmp_path: Path
) -> None:
    import base64

    from kubectrl.envtest._certs import CertificateAuthority

    data = json.loads(json.dumps(dict(kubectrl_cluster.kubeconfig.data)))
    other = CertificateAuthority("not-the-clusters-ca").cert_pem
    for cluster in data["clusters"]:
        cluster["cluster"]["certificate-authority-data"] = base64.b64encode(other).decode()
    path = tmp_path / "wrong-ca.kubeconfig"
    path.write_text(json.dumps(data))
    async with AsyncClient(load_kubeconfig(path)) as wrong:
        with pytest.raises(APIConnectionError) as caught:
            await wrong.pods.exec(POD, ["true"], namespace=pod_namespace, container="main")
    message = str(caught.value)
    assert f"pods/exec {pod_namespace}/{POD}" in message
    assert "CERTIFICATE_VERIFY_FAILED" in message


@pytest.fixture
def chaos(kubectrl_cluster: LocalCluster, tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    from tests.faults.chaos_proxy import ChaosProxy

    with ChaosProxy(kubectrl_cluster.kubeconfig) as proxy:
        yield proxy, proxy.kubeconfig(tmp_path / "chaos.kubeconfig")


class _Relay:
    """A loopback TCP relay to the apiserver (TLS passes through it end to end) that can cut
    every connection: the WebSocket upgrade is not parsed, just carried."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.base_events.Server | None = None

    async def start(self) -> int:
        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            except OSError:
                pass
            finally:
                writer.close()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
            self.writers += [writer, up_writer]
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

        self.server = await asyncio.start_server(handle, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    def cut(self) -> int:
        for writer in self.writers:
            writer.transport.abort()
        cut, self.writers = len(self.writers), []
        return cut

    async def close(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()


async def test_exec_cut_mid_stream_names_pod_subresource_and_cause(
    kubectrl_cluster: LocalCluster, pod_namespace: str
) -> None:
    from urllib.parse import urlparse

    config = load_kubeconfig(kubectrl_cluster.kubeconfig.path)
    server = urlparse(config.server)
    relay = _Relay(server.hostname or "127.0.0.1", server.port or 443)
    port = await relay.start()
    relayed = config.with_options(server=f"https://{server.hostname}:{port}")
    try:
        async with AsyncClient(relayed) as client:
            session = await client.pods.open_exec(
                POD, ["sh", "-c", "echo started; sleep 60"], namespace=pod_namespace,
                container="main",
            )  # fmt: skip
            async with session:
                line = await asyncio.wait_for(session.stdout.readline(), DEADLINE)
                assert line == b"started\n"
                assert relay.cut() >= 2
                with pytest.raises(APIConnectionError) as caught:
                    await asyncio.wait_for(session.wait(), DEADLINE)
    finally:
        await relay.close()
    message = str(caught.value)
    assert f"pods/exec {pod_namespace}/{POD}" in message
    assert "ended before the command's exit status arrived" in message


async def test_followed_log_cut_mid_stream_names_pod_subresource_and_cause(
    chaos: tuple[Any, Path], pod_namespace: str, kubectl: Kubectl, tmp_path: Path
) -> None:
    proxy, path = chaos
    log_file = tmp_path / "cut.log"
    log_file.write_text(cri_log_line("before the cut"))
    _apply(kubectl, _kwok_object("Logs", pod_namespace, {"logs": [{"logsFile": str(log_file)}]}))
    async with AsyncClient(load_kubeconfig(path)) as client:

        async def first_line() -> str | None:
            lines = client.pods.log_stream(POD, namespace=pod_namespace, container="main")
            try:
                line = await asyncio.wait_for(anext(lines), DEADLINE)
            finally:
                await lines.aclose()  # type: ignore[attr-defined]
            return line if line == "before the cut" else None

        deadline = time.monotonic() + DEADLINE
        while await first_line() is None:  # kwok reads the new Logs object
            assert time.monotonic() < deadline
        lines = client.pods.log_stream(POD, namespace=pod_namespace, container="main")
        assert await asyncio.wait_for(anext(lines), DEADLINE) == "before the cut"
        assert proxy.cut() >= 1
        with pytest.raises(APIConnectionError) as caught:
            await asyncio.wait_for(anext(lines), DEADLINE)
    message = str(caught.value)
    assert f"pods/log {pod_namespace}/{POD} (container main)" in message
    assert "broke off" in message
