"""Pods' subresources on both servers, where the fake serves them: logs (the fake's text set by
the test, kwok's log file on the local cluster), exec (the fake's handler, kwok running the
command), eviction against a PodDisruptionBudget; and what the fake refuses
(``UnsupportedFeatureError``): TokenRequest, the proxy subresources, ephemeral containers.

The real parametrisation runs on the local cluster (``needs_cluster``): a kubelet (kwok) and
the disruption controller are needed.
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import Target, unique

from kubectrl.envtest import cri_log_line
from kubectrl.errors import BadRequestError, NotFoundError, TooManyRequestsError
from kubectrl.testing import eventually

pytestmark = pytest.mark.needs_cluster("a kubelet (kwok) and the disruption controller")


async def _running_pod(target: Target, labels: dict[str, str] | None = None) -> str:
    name = unique("pod")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": target.namespace, "labels": labels or {}},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }
    if target.api is not None:
        pod["status"] = {"phase": "Running"}
        target.api.seed(pod)
        return name
    await target.client.create(pod)

    async def running() -> bool:
        got = await target.client.get(("v1", "Pod"), name, namespace=target.namespace)
        return bool(got.get("status", {}).get("phase") == "Running")

    await eventually(running, 120, describe=f"pod {name} runs")
    return name


async def test_log_text_and_errors(target: Target, tmp_path: Any) -> None:
    name = await _running_pod(target)
    if target.api is not None:
        target.api.pods.set_log(target.namespace, name, "first\nsecond\n", container="main")
    else:
        log_file = tmp_path / "main.log"
        log_file.write_text(cri_log_line("first") + cri_log_line("second"))
        await target.client.create(
            {
                "apiVersion": "kwok.x-k8s.io/v1alpha1",
                "kind": "Logs",
                "metadata": {"name": name, "namespace": target.namespace},
                "spec": {"logs": [{"logsFile": str(log_file)}]},
            }
        )

    async def logged() -> bool:
        text = await target.client.pods.log(name, namespace=target.namespace, container="main")
        return text == "first\nsecond\n"

    await eventually(logged, 120, describe="the log is served")
    tail = await target.client.pods.log(
        name, namespace=target.namespace, container="main", tail_lines=1, encoding=None
    )
    assert tail == b"second\n"
    with pytest.raises(BadRequestError) as bad:
        await target.client.pods.log(name, namespace=target.namespace, container="nope")
    assert bad.value.server_message.startswith(f"container nope is not valid for pod {name}")
    with pytest.raises(NotFoundError, match='pods "ghost" not found'):
        await target.client.pods.log("ghost", namespace=target.namespace)


async def test_exec_output_and_missing_container(target: Target) -> None:
    name = await _running_pod(target)
    if target.api is not None:
        target.api.pods.on_exec(lambda call: (b"out\n", b"err\n", 0))
    result = await target.client.pods.exec(
        name, ["sh", "-c", "echo out; echo err >&2"], namespace=target.namespace, container="main"
    )
    assert (result.stdout, result.stderr, result.exit_code) == (b"out\n", b"err\n", 0)
    with pytest.raises(BadRequestError) as bad:
        await target.client.pods.exec(name, ["true"], namespace=target.namespace, container="nope")
    assert f"container nope is not valid for pod {name}" in bad.value.server_message


async def test_eviction_against_a_budget_that_allows_none(target: Target) -> None:
    app = unique("app")
    name = await _running_pod(target, {"app": app})
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": f"keep-{app}", "namespace": target.namespace},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": app}}},
    }
    if target.api is not None:
        target.api.pods.add_disruption_budget(pdb)
    else:
        await target.client.create(pdb)
    with pytest.raises(TooManyRequestsError) as caught:
        await target.client.pods.evict(name, namespace=target.namespace)
    assert "disruption budget" in caught.value.server_message
    await target.client.get(("v1", "Pod"), name, namespace=target.namespace)  # still there


@pytest.mark.known_difference("services/proxy: FakeAPI has no network to proxy to")
async def test_service_proxy_without_endpoints(target: Target) -> None:
    svc = unique("svc")
    await target.client.create({"apiVersion": "v1", "kind": "Service",
                                "metadata": {"name": svc, "namespace": target.namespace},
                                "spec": {"selector": {"app": "nobody"},
                                         "ports": [{"port": 80}]}})  # fmt: skip

    async def unavailable() -> bool:
        response = await target.client.proxy_service(svc, "/", namespace=target.namespace)
        return response.status_code == 503

    if not await unavailable():  # the endpoints controller has not caught up yet
        await eventually(unavailable, 120, describe="the service proxy answers 503")


async def test_ephemeral_container(target: Target) -> None:
    name = await _running_pod(target)
    pod = await target.client.pods.add_ephemeral_container(
        name, {"name": "debug", "image": "busybox"}, namespace=target.namespace
    )
    assert [c["name"] for c in pod["spec"]["ephemeralContainers"]] == ["debug"]
