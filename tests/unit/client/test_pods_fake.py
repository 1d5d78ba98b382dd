"""Pods' subresources on the FakeAPI: logs set by the test, exec answered by a handler, eviction
checked against PodDisruptionBudgets; and the channel protocol's pieces (client-go
tools/remotecommand/v4.go for the exit code's place in the error channel's Status)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kubectrl.client import AsyncClient, BlockingClient
from kubectrl.client._pods import exit_code_of, pod_target
from kubectrl.errors import (
    BadRequestError,
    NotFoundError,
    TooManyRequestsError,
    UnsupportedFeatureError,
)
from kubectrl.testing import FakeAPI
from kubectrl.testing._fake_pods import ExecCall

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "db-0", "namespace": "default", "labels": {"app": "db"}},
    "spec": {"containers": [{"name": "main", "image": "x"}, {"name": "side", "image": "y"}]},
}


@pytest.fixture
def api() -> FakeAPI:
    fake = FakeAPI()
    fake.seed(POD)
    return fake


@pytest.fixture
async def client(api: FakeAPI) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(api.config()) as c:
        yield c


def test_exit_code_of_the_error_channels_status() -> None:
    assert exit_code_of({"status": "Success"}) == 0
    failure = {
        "status": "Failure",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": "42"}]},
    }
    assert exit_code_of(failure) == 42
    assert exit_code_of({"status": "Failure", "reason": "InternalError"}) is None


def test_pod_target_takes_a_name_or_an_object() -> None:
    assert pod_target("web", None, "dflt") == ("dflt", "web")
    assert pod_target("web", "ns", "dflt") == ("ns", "web")
    assert pod_target(POD, None, "dflt") == ("default", "db-0")
    with pytest.raises(ValueError, match=r"metadata\.name"):
        pod_target({"metadata": {}}, None, "dflt")
    with pytest.raises(TypeError, match="a pod is a name or a Pod object"):
        pod_target(3, None, "dflt")


async def test_logs_per_container(api: FakeAPI, client: AsyncClient) -> None:
    api.pods.set_log("default", "db-0", "a\nb\nc\n", container="main")
    assert await client.pod_log("db-0", namespace="default", container="main") == "a\nb\nc\n"
    tail = await client.pod_log("db-0", namespace="default", container="main", tail_lines=1)
    assert tail == "c\n"
    lines = [
        line async for line in client.follow_pod_log("db-0", namespace="default", container="main")
    ]
    assert lines == ["a", "b", "c"]
    with pytest.raises(BadRequestError, match="container nope is not valid for pod db-0"):
        await client.pod_log("db-0", namespace="default", container="nope")
    with pytest.raises(BadRequestError, match="a container name must be specified"):
        await client.pod_log("db-0", namespace="default")
    with pytest.raises(NotFoundError, match='pods "ghost" not found'):
        await client.pod_log("ghost", namespace="default")


async def test_exec_with_a_handler(api: FakeAPI, client: AsyncClient) -> None:
    calls: list[ExecCall] = []

    def handler(call: ExecCall) -> tuple[bytes, bytes, int]:
        calls.append(call)
        return call.stdin.upper(), b"warned\n", 3 if call.command[0] == "fail" else 0

    api.pods.on_exec(handler)
    done = await client.exec(POD, ["cat"], container="main", stdin=b"abc")
    assert (done.stdout, done.stderr, done.exit_code, done.ok) == (b"ABC", b"warned\n", 0, True)
    failed = await client.exec("db-0", ["fail"], namespace="default", container="side")
    assert failed.exit_code == 3
    assert failed.status["reason"] == "NonZeroExitCode"
    assert [(c.container, c.command) for c in calls] == [("main", ["cat"]), ("side", ["fail"])]
    with pytest.raises(BadRequestError, match="container nope is not valid") as caught:
        await client.exec("db-0", ["x"], namespace="default", container="nope")
    assert "pods/exec default/db-0" in str(caught.value)
    with pytest.raises(NotFoundError, match='pods "ghost" not found'):
        await client.exec("ghost", ["x"], namespace="default", container="main")
    with pytest.raises(TypeError, match="list of arguments"):
        await client.exec("db-0", "ls -l", namespace="default")  # type: ignore[arg-type]


async def test_exec_session_streams(api: FakeAPI, client: AsyncClient) -> None:
    api.pods.on_exec(lambda call: (b"one\ntwo\n", b"", 0))
    async with client.open_exec("db-0", ["x"], namespace="default", container="main") as s:
        assert await s.stdout.readline() == b"one\n"
        assert await s.stdout.readline() == b"two\n"
        assert await s.wait() == 0


async def test_exec_without_handler_and_attach_are_unsupported(client: AsyncClient) -> None:
    with pytest.raises(UnsupportedFeatureError, match="on_exec"):
        await client.exec("db-0", ["x"], namespace="default", container="main")
    with pytest.raises(UnsupportedFeatureError, match=r"pods/attach|WebSocket to attach"):
        await client.attach("db-0", namespace="default", container="main")


async def test_eviction_checks_budgets(api: FakeAPI, client: AsyncClient) -> None:
    # The fake does not store PodDisruptionBudgets: the test declares them to its pods.
    api.pods.add_disruption_budget(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "keep", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
        }
    )
    api.seed({**POD, "metadata": {"name": "free", "namespace": "default"}})
    with pytest.raises(TooManyRequestsError) as caught:
        await client.evict("db-0", namespace="default")
    assert "disruption budget" in caught.value.server_message
    assert "pods/eviction default/db-0" in str(caught.value)
    await client.evict("free", namespace="default", dry_run=True)
    assert sorted(p["metadata"]["name"] for p in api.objects("Pod")) == ["db-0", "free"]
    await client.evict("free", namespace="default")
    assert [p["metadata"]["name"] for p in api.objects("Pod")] == ["db-0"]


def test_blocking_exec_and_session(api: FakeAPI) -> None:
    api.pods.on_exec(lambda call: (b"out", b"err", 0))
    with BlockingClient(api.config()) as client:
        done = client.exec("db-0", ["x"], namespace="default", container="main")
        assert (done.stdout, done.stderr) == (b"out", b"err")
        with client.open_exec("db-0", ["x"], namespace="default", container="main") as s:
            assert s.read_stdout() == b"out"
            assert s.read_stderr() == b"err"
            assert s.wait() == 0


async def test_logs_as_bytes_and_a_partial_last_line(api: FakeAPI, client: AsyncClient) -> None:
    api.pods.set_log("default", "db-0", b"one\r\ntwo\n\xffpart", container="main")
    raw = await client.pod_log_bytes(POD, container="main")
    assert raw == b"one\r\ntwo\n\xffpart"
    assert await client.pod_log(POD, container="main") == "one\r\ntwo\n\ufffdpart"
    chunks = [line async for line in client.follow_pod_log_bytes(POD, container="main")]
    assert chunks == [b"one\r\n", b"two\n", b"\xffpart"]
    texts = [line async for line in client.follow_pod_log("db-0", container="main")]
    assert texts == ["one", "two", "\ufffdpart"]
    assert await client.pod_log_bytes(POD, container="main", tail_lines=1) == b"\xffpart"
    assert await client.pod_log_bytes(POD, container="main", limit_bytes=3) == b"one"


async def test_log_options_checked_before_sending(client: AsyncClient) -> None:
    import datetime

    with pytest.raises(ValueError, match="since_seconds or since_time, not both"):
        await client.pod_log(POD, since_seconds=5, since_time="2026-01-01T00:00:00Z")
    with pytest.raises(ValueError, match="has no time zone"):
        await client.pod_log(POD, since_time=datetime.datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="tail_lines must be a non-negative integer"):
        await client.pod_log(POD, tail_lines=-1)


async def test_fake_refuses_log_options_it_cannot_honour(client: AsyncClient) -> None:
    import datetime

    moment = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    with pytest.raises(UnsupportedFeatureError, match="pods/log with sinceTime"):
        await client.pod_log(POD, container="main", since_time=moment)
    with pytest.raises(UnsupportedFeatureError, match="pods/log with timestamps"):
        await client.pod_log(POD, container="main", timestamps=True)


def test_blocking_log_bytes(api: FakeAPI) -> None:
    api.pods.set_log("default", "db-0", "a\nb", container="side")
    with BlockingClient(api.config()) as client:
        assert client.pod_log_bytes("db-0", container="side") == b"a\nb"
        assert list(client.follow_pod_log_bytes("db-0", container="side")) == [b"a\n", b"b"]
