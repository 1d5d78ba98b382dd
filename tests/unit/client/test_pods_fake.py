"""Pods' subresources on the FakeAPI: logs set by the test, exec answered by a handler, eviction
checked against PodDisruptionBudgets; and the channel protocol's pieces (client-go
tools/remotecommand/v4.go for the exit code's place in the error channel's Status)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubectrl.client import AsyncClient, BlockingClient
from kubectrl.client._pods import MOVED_TO_PODS, pod_target
from kubectrl.client._remotecommand import exit_code_of
from kubectrl.client.pods import BlockingPods, Pods
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
    assert await client.pods.log("db-0", namespace="default", container="main") == "a\nb\nc\n"
    tail = await client.pods.log("db-0", namespace="default", container="main", tail_lines=1)
    assert tail == "c\n"
    lines = [
        line async for line in client.pods.log_stream("db-0", namespace="default", container="main")
    ]
    assert lines == ["a", "b", "c"]
    with pytest.raises(BadRequestError, match="container nope is not valid for pod db-0"):
        await client.pods.log("db-0", namespace="default", container="nope")
    with pytest.raises(BadRequestError, match="a container name must be specified"):
        await client.pods.log("db-0", namespace="default")
    with pytest.raises(NotFoundError, match='pods "ghost" not found'):
        await client.pods.log("ghost", namespace="default")


async def test_exec_with_a_handler(api: FakeAPI, client: AsyncClient) -> None:
    calls: list[ExecCall] = []

    def handler(call: ExecCall) -> tuple[bytes, bytes, int]:
        calls.append(call)
        return call.stdin.upper(), b"warned\n", 3 if call.command[0] == "fail" else 0

    api.pods.on_exec(handler)
    done = await client.pods.exec(POD, ["cat"], container="main", stdin=b"abc")
    assert (done.stdout, done.stderr, done.exit_code, done.ok) == (b"ABC", b"warned\n", 0, True)
    failed = await client.pods.exec("db-0", ["fail"], namespace="default", container="side")
    assert failed.exit_code == 3
    assert failed.status["reason"] == "NonZeroExitCode"
    assert [(c.container, c.command) for c in calls] == [("main", ["cat"]), ("side", ["fail"])]
    with pytest.raises(BadRequestError, match="container nope is not valid") as caught:
        await client.pods.exec("db-0", ["x"], namespace="default", container="nope")
    assert "pods/exec default/db-0" in str(caught.value)
    with pytest.raises(NotFoundError, match='pods "ghost" not found'):
        await client.pods.exec("ghost", ["x"], namespace="default", container="main")
    with pytest.raises(TypeError, match="list of arguments"):
        await client.pods.exec("db-0", "ls -l", namespace="default")  # type: ignore[arg-type]


async def test_exec_session_streams(api: FakeAPI, client: AsyncClient) -> None:
    api.pods.on_exec(lambda call: (b"one\ntwo\n", b"", 0))
    async with client.pods.open_exec("db-0", ["x"], namespace="default", container="main") as s:
        assert await s.stdout.readline() == b"one\n"
        assert await s.stdout.readline() == b"two\n"
        assert await s.wait() == 0


async def test_exec_without_handler_and_attach_are_unsupported(client: AsyncClient) -> None:
    with pytest.raises(UnsupportedFeatureError, match="on_exec"):
        await client.pods.exec("db-0", ["x"], namespace="default", container="main")
    with pytest.raises(UnsupportedFeatureError, match=r"pods/attach|WebSocket to attach"):
        await client.pods.attach("db-0", namespace="default", container="main")


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
        await client.pods.evict("db-0", namespace="default")
    assert "disruption budget" in caught.value.server_message
    assert "pods/eviction default/db-0" in str(caught.value)
    await client.pods.evict("free", namespace="default", dry_run=True)
    assert sorted(p["metadata"]["name"] for p in api.objects("Pod")) == ["db-0", "free"]
    await client.pods.evict("free", namespace="default")
    assert [p["metadata"]["name"] for p in api.objects("Pod")] == ["db-0"]


def test_blocking_exec_and_session(api: FakeAPI) -> None:
    api.pods.on_exec(lambda call: (b"out", b"err", 0))
    with BlockingClient(api.config()) as client:
        done = client.pods.exec("db-0", ["x"], namespace="default", container="main")
        assert (done.stdout, done.stderr) == (b"out", b"err")
        with client.pods.open_exec("db-0", ["x"], namespace="default", container="main") as s:
            assert s.read_stdout() == b"out"
            assert s.read_stderr() == b"err"
            assert s.wait() == 0


async def test_logs_as_bytes_and_a_partial_last_line(api: FakeAPI, client: AsyncClient) -> None:
    api.pods.set_log("default", "db-0", b"one\r\ntwo\n\xffpart", container="main")
    raw = await client.pods.log(POD, container="main", encoding=None)
    assert raw == b"one\r\ntwo\n\xffpart"
    assert await client.pods.log(POD, container="main") == "one\r\ntwo\n\ufffdpart"
    assert (
        await client.pods.log(POD, container="main", encoding="latin-1") == "one\r\ntwo\n\xffpart"
    )
    chunks = [line async for line in client.pods.log_stream(POD, container="main", encoding=None)]
    assert chunks == [b"one\r\n", b"two\n", b"\xffpart"]
    texts = [line async for line in client.pods.log_stream("db-0", container="main")]
    assert texts == ["one", "two", "\ufffdpart"]
    latin = [
        line async for line in client.pods.log_stream(POD, container="main", encoding="cp1252")
    ]
    assert latin == ["one", "two", "\xffpart"]
    assert await client.pods.log(POD, container="main", tail_lines=1, encoding=None) == b"\xffpart"
    assert await client.pods.log(POD, container="main", limit_bytes=3, encoding=None) == b"one"


async def test_log_options_checked_before_sending(client: AsyncClient) -> None:
    import datetime

    with pytest.raises(ValueError, match="since_seconds or since_time, not both"):
        await client.pods.log(POD, since_seconds=5, since_time="2026-01-01T00:00:00Z")
    with pytest.raises(ValueError, match="has no time zone"):
        await client.pods.log(POD, since_time=datetime.datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="tail_lines must be a non-negative integer"):
        await client.pods.log(POD, tail_lines=-1)


async def test_an_unknown_log_option_or_encoding_is_refused_before_sending(
    client: AsyncClient,
) -> None:
    # mypy refuses these too (tests/typing/test_typing_pods.py); at run time they fail by name.
    options: dict[str, Any] = {"contaner": "main"}
    with pytest.raises(TypeError, match=r"log\(\) got an unexpected keyword argument 'contaner' "
                       r"\(did you mean 'container'\?\)"):  # fmt: skip
        await client.pods.log(POD, **options)
    with pytest.raises(TypeError, match="limit_bytes is an option of log"):
        await _drain(client.pods.log_stream(POD, limit_bytes=3))  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="'no-such-codec' does not decode bytes to text"):
        await client.pods.log(POD, encoding="no-such-codec")
    with pytest.raises(ValueError, match="'rot13' does not decode bytes to text"):
        await client.pods.log(POD, encoding="rot13")
    with pytest.raises(ValueError, match="'utf-16' does not write a line end as one byte"):
        await _drain(client.pods.log_stream(POD, encoding="utf-16"))


async def test_fake_refuses_log_options_it_cannot_honour(client: AsyncClient) -> None:
    import datetime

    moment = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    with pytest.raises(UnsupportedFeatureError, match="pods/log with sinceTime"):
        await client.pods.log(POD, container="main", since_time=moment)
    with pytest.raises(UnsupportedFeatureError, match="pods/log with timestamps"):
        await client.pods.log(POD, container="main", timestamps=True)


def test_blocking_log_text_and_bytes(api: FakeAPI) -> None:
    api.pods.set_log("default", "db-0", "a\nb", container="side")
    with BlockingClient(api.config()) as client:
        assert isinstance(client.pods, BlockingPods)
        assert client.pods.log("db-0", container="side") == "a\nb"
        assert client.pods.log("db-0", container="side", encoding=None) == b"a\nb"
        assert list(client.pods.log_stream("db-0", container="side")) == ["a", "b"]
        lines = client.pods.log_stream("db-0", container="side", encoding=None)
        assert list(lines) == [b"a\n", b"b"]


@pytest.mark.parametrize(("old", "new"), sorted(MOVED_TO_PODS.items()))
async def test_a_removed_pod_method_names_its_new_call(
    api: FakeAPI, client: AsyncClient, old: str, new: str
) -> None:
    with pytest.raises(AttributeError, match=re.escape(f"use client.{new}")) as caught:
        getattr(client, old)
    assert caught.value.name == old
    assert not hasattr(client, old)
    blocking_client = BlockingClient(api.config())
    try:
        with pytest.raises(AttributeError, match=re.escape(f"use client.{new}")):
            getattr(blocking_client, old)
    finally:
        blocking_client.close()
    # the new call exists, on both clients
    verb = new.removeprefix("pods.").partition("(")[0]
    assert callable(getattr(client.pods, verb))
    assert callable(getattr(BlockingPods, verb))


def test_other_missing_attributes_keep_python_s_message(client: AsyncClient) -> None:
    with pytest.raises(AttributeError, match=r"^'AsyncClient' object has no attribute 'lst'$"):
        client.lst  # type: ignore[attr-defined]  # noqa: B018


def test_the_pods_are_one_object_with_every_pod_verb(client: AsyncClient) -> None:
    verbs = {name for name in dir(Pods) if not name.startswith("_")}
    assert verbs == {
        "log",
        "log_stream",
        "exec",
        "open_exec",
        "attach",
        "port_forward",
        "evict",
        "add_ephemeral_container",
        "proxy",
    }
    assert {name for name in dir(BlockingPods) if not name.startswith("_")} == verbs
    assert isinstance(client.pods, Pods)
    assert repr(client.pods) == f"Pods({client!r})"
    # none of them is left on the clients, nor any of their former names
    for cls in (AsyncClient, BlockingClient):
        assert not (verbs | set(MOVED_TO_PODS)) & set(dir(cls)), cls


async def _drain(lines: AsyncIterator[Any]) -> None:
    async for _ in lines:
        pass
