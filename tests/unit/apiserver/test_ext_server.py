"""The extension API server on loopback (no aggregator, no authentication): kubectrl's client
and plain HTTP against the wardle sample's kinds."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubectrl.apiserver import APIServer, SQLiteStorage, SubresourceRequest
from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.envtest._certs import CertificateAuthority
from kubectrl.errors import ForbiddenError

sys.path.insert(0, str(Path(__file__).parents[3] / "examples" / "sample_apiserver"))
from wardle import Fischer, Flunder, wardle_server

G = "/apis/wardle.example.com/v1alpha1"
FLUNDERS = f"{G}/namespaces/default/flunders"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


class Served:
    def __init__(self, server: APIServer, ca: bytes) -> None:
        self.server = server
        self.base = f"https://127.0.0.1:{server.port}"
        self.config = ClientConfig(server=self.base, ca_data=ca, rate_limit=None)

    def http(self) -> httpx.AsyncClient:
        return self.config.async_httpx_client()


async def _start(tmp_path: Path, server: APIServer) -> Served:
    ca = CertificateAuthority()
    pair = ca.issue("wardle", ip_addresses=("127.0.0.1",), server=True)
    (tmp_path / "tls.crt").write_bytes(pair.cert_pem)
    (tmp_path / "tls.key").write_bytes(pair.key_pem)
    await server.start(
        host="127.0.0.1",
        port=0,
        cert_file=str(tmp_path / "tls.crt"),
        key_file=str(tmp_path / "tls.key"),
    )
    return Served(server, ca.cert_pem)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    server = wardle_server(auth=None)

    @server.subresource(Flunder, "echo")
    async def echo(request: SubresourceRequest) -> dict[str, Any]:
        return {"name": request.name, "reference": request.object["spec"]["reference"]}

    @server.subresource(Flunder, "count")
    async def count(request: SubresourceRequest) -> AsyncIterator[bytes]:
        async def lines() -> AsyncIterator[bytes]:
            for i in range(int(request.params.get("to", "3"))):
                yield f"{request.name} {i}\n".encode()

        return lines()

    running = await _start(tmp_path, server)
    yield running
    await server.stop()


def flunder(name: str, reference: str = "", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "wardle.example.com/v1alpha1",
        "kind": "Flunder",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"reference": reference},
    }


async def test_discovery_legacy_and_aggregated(served: Served) -> None:
    async with served.http() as http:
        groups = (await http.get("/apis")).json()
        assert [g["name"] for g in groups["groups"]] == ["wardle.example.com"]
        resources = (await http.get(G)).json()["resources"]
        assert {r["name"]: r["namespaced"] for r in resources} == {
            "fischers": False,
            "flunders": True,
            "flunders/status": True,
        }
        accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        answer = await http.get("/apis", headers={"Accept": accept})
        assert answer.headers["content-type"] == accept
        (group,) = answer.json()["items"]
        (version,) = group["versions"]
        by_name = {r["resource"]: r for r in version["resources"]}
        assert by_name["fischers"]["scope"] == "Cluster"
        assert by_name["flunders"]["responseKind"]["kind"] == "Flunder"
        assert {s["subresource"] for s in by_name["flunders"]["subresources"]} == {
            "status",
            "echo",
            "count",
        }
        # Nothing built-in is served.
        assert (await http.get("/api/v1/namespaces/default/configmaps")).status_code == 404
        assert (await http.get("/healthz")).text == "ok"


async def test_openapi_v2_and_v3_describe_the_kinds(served: Served) -> None:
    async with served.http() as http:
        v2 = (await http.get("/openapi/v2")).json()
        flunder_def = v2["definitions"]["com.example.wardle.v1alpha1.Flunder"]
        assert flunder_def["x-kubernetes-group-version-kind"] == [
            {"group": "wardle.example.com", "version": "v1alpha1", "kind": "Flunder"}
        ]
        assert flunder_def["properties"]["spec"]["properties"]["referenceType"]["enum"] == [
            "Flunder",
            "Fischer",
        ]
        assert f"{FLUNDERS.replace('default', '{namespace}')}/{{name}}" in v2["paths"]
        index = (await http.get("/openapi/v3")).json()["paths"]
        url = index["apis/wardle.example.com/v1alpha1"]["serverRelativeURL"]
        v3 = (await http.get(url)).json()
        schemas = v3["components"]["schemas"]
        assert "disallowedFlunders" in schemas["com.example.wardle.v1alpha1.Fischer"]["properties"]
        assert (await http.get("/openapi/v3/apis/other/v1")).status_code == 404


async def test_crud_patch_apply_and_selectors_through_the_client(served: Served) -> None:
    async with AsyncClient(served.config) as client:
        created = await client.create(flunder("a", "x", tier="one"))
        assert created["metadata"]["resourceVersion"] == "1"
        await client.create(flunder("b", "y", tier="two"))
        got = await client.get(("wardle.example.com/v1alpha1", "Flunder"), "a", namespace="default")
        assert got["spec"] == {"reference": "x"}
        merged = await client.patch(
            ("wardle.example.com/v1alpha1", "Flunder"),
            "a",
            {"spec": {"referenceType": "Fischer"}},
            namespace="default",
        )
        assert merged["spec"] == {"reference": "x", "referenceType": "Fischer"}
        selected = await client.list(
            ("wardle.example.com/v1alpha1", "Flunder"),
            namespace="default",
            label_selector="tier=two",
        )
        assert [o["metadata"]["name"] for o in selected["items"]] == ["b"]
        applied = await client.apply(flunder("c", "z"), field_manager="test")
        assert applied["metadata"]["managedFields"][0]["manager"] == "test"
    async with served.http() as http:
        bad = await http.post(FLUNDERS, json={**flunder("d"), "spec": {"referenceType": "Nope"}})
        assert bad.status_code == 422
        page = (await http.get(FLUNDERS, params={"limit": "2"})).json()
        assert len(page["items"]) == 2
        assert page["metadata"]["continue"]
        rest = (
            await http.get(
                FLUNDERS, params={"limit": "2", "continue": page["metadata"]["continue"]}
            )
        ).json()
        assert [o["metadata"]["name"] for o in rest["items"]] == ["c"]
        status = await http.put(
            f"{FLUNDERS}/a/status", json={**merged, "status": {}, "spec": {"reference": "ignored"}}
        )
        assert status.status_code == 200
        assert status.json()["spec"]["reference"] == "x"  # a status write keeps the spec
        gone = await http.delete(FLUNDERS, params={"labelSelector": "tier=one"})
        assert [o["metadata"]["name"] for o in gone.json()["items"]] == ["a"]
        assert (await http.get(f"{FLUNDERS}/a")).status_code == 404


async def test_admission_refuses_a_disallowed_name(served: Served) -> None:
    async with AsyncClient(served.config) as client:
        await client.create(
            {
                "apiVersion": "wardle.example.com/v1alpha1",
                "kind": "Fischer",
                "metadata": {"name": "f"},
                "disallowedFlunders": ["banned"],
            }
        )
        with pytest.raises(ForbiddenError, match="this name may not be used"):
            await client.create(flunder("banned"))
        with pytest.raises(ForbiddenError):  # server-side apply creates through admission too
            await client.apply(flunder("banned"), field_manager="test")
        assert (await client.create(flunder("allowed")))["metadata"]["name"] == "allowed"


async def test_table_output_for_get_list_and_watch(served: Served) -> None:
    async with served.http() as http:
        await http.post(FLUNDERS, json=flunder("a", "x"))
        listed = (await http.get(FLUNDERS, headers={"Accept": TABLE})).json()
        assert listed["kind"] == "Table"
        assert [c["name"] for c in listed["columnDefinitions"]] == [
            "Name",
            "Reference",
            "Type",
            "Age",
        ]
        assert listed["rows"][0]["cells"][:3] == ["a", "x", None]
        assert listed["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
        one = (await http.get(f"{FLUNDERS}/a", headers={"Accept": TABLE})).json()
        assert one["rows"][0]["cells"][0] == "a"
        rv = listed["metadata"]["resourceVersion"]
        async with http.stream(
            "GET", FLUNDERS, params={"watch": "1", "resourceVersion": rv}, headers={"Accept": TABLE}
        ) as stream:
            await http.post(FLUNDERS, json=flunder("b", "y"))
            line = await anext(stream.aiter_lines())
        event = json.loads(line)
        assert event["type"] == "ADDED"
        assert event["object"]["kind"] == "Table"
        assert event["object"]["rows"][0]["cells"][:2] == ["b", "y"]


async def test_custom_subresources_answer_and_stream(served: Served) -> None:
    async with served.http() as http:
        await http.post(FLUNDERS, json=flunder("a", "x"))
        assert (await http.get(f"{FLUNDERS}/a/echo")).json() == {"name": "a", "reference": "x"}
        streamed = await http.get(f"{FLUNDERS}/a/count", params={"to": "3"})
        assert streamed.text == "a 0\na 1\na 2\n"
        assert (await http.get(f"{FLUNDERS}/missing/echo")).status_code == 404
        assert (await http.get(f"{FLUNDERS}/a/nothing")).status_code == 404


async def test_a_watch_resumes_across_a_restart_with_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "wardle.db"
    first = await _start(tmp_path, wardle_server(auth=None, storage=SQLiteStorage(db)))
    async with first.http() as http:
        rv = (await http.post(FLUNDERS, json=flunder("a", "x"))).json()["metadata"][
            "resourceVersion"
        ]
        await http.post(FLUNDERS, json=flunder("b"))
    await first.server.stop()
    storage = first.server.core.storage
    assert isinstance(storage, SQLiteStorage)
    storage.close()

    again = await _start(tmp_path, wardle_server(auth=None, storage=SQLiteStorage(db)))
    async with (
        again.http() as http,
        http.stream("GET", FLUNDERS, params={"watch": "1", "resourceVersion": rv}) as stream,
    ):
        lines = stream.aiter_lines()
        replayed = json.loads(await anext(lines))
        await http.delete(f"{FLUNDERS}/a")
        live = json.loads(await asyncio.wait_for(anext(lines), 10))
    assert (replayed["type"], replayed["object"]["metadata"]["name"]) == ("ADDED", "b")
    assert (live["type"], live["object"]["metadata"]["name"]) == ("DELETED", "a")
    assert int(live["object"]["metadata"]["resourceVersion"]) == 3
    await again.server.stop()


def test_declarations_are_checked() -> None:
    with pytest.raises(ValueError, match="at least one"):
        APIServer([], auth=None)
    with pytest.raises(TypeError, match="CustomResource subclasses"):
        APIServer([dict], auth=None)  # type: ignore[list-item]
    server = APIServer([Fischer], auth=None)
    with pytest.raises(ValueError, match="not one of the kinds"):
        server.subresource(Flunder, "x")
    with pytest.raises(ValueError, match="reserved"):
        server.subresource(Fischer, "status")
    with pytest.raises(ValueError, match="operations"):
        server.admission(Fischer, operations=("CONNECT",))


async def test_without_a_certificate_the_server_signs_its_own() -> None:
    server = APIServer([Fischer], auth=None)
    with pytest.raises(ValueError, match="both cert_file and key_file"):
        await server.start(host="127.0.0.1", port=0, cert_file="tls.crt")
    await server.start(host="127.0.0.1", port=0)
    try:
        config = ClientConfig(
            server=f"https://127.0.0.1:{server.port}", ca_data=server.certificate_pem
        )
        async with AsyncClient(config) as client:
            listed = await client.list(("wardle.example.com/v1alpha1", "Fischer"))
        assert listed["items"] == []
    finally:
        await server.stop()


async def test_field_validation_warns_or_refuses_unknown_fields(served: Served) -> None:
    body = {**flunder("a"), "spec": {"reference": "x", "colour": "blue"}}
    async with served.http() as http:
        strict = await http.post(FLUNDERS, json=body, params={"fieldValidation": "Strict"})
        assert strict.status_code == 400
        assert "colour" in strict.json()["message"]
        warned = await http.post(FLUNDERS, json=body)
        assert warned.status_code == 201
        assert warned.headers.get_list("warning") == ['299 - "unknown field \\"spec.colour\\""']
        assert "colour" not in warned.json()["spec"]
