"""CRDs installed after the client exists, RBAC, server-side apply, conflicts, concurrency."""

from __future__ import annotations

import asyncio
import copy
import logging
from pathlib import Path

import pytest
from client_helpers import configmap, write_widget_crd

from kubectrl.client import AsyncClient, Backoff, ClientConfig, EventType, load_kubeconfig
from kubectrl.errors import ConflictError, ForbiddenError, NotFoundError
from kubectrl.objects import GroupVersionResource

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")


async def test_crd_installed_after_client_creation_every_verb(
    client: AsyncClient, namespace: str, control_plane, tmp_path: Path
) -> None:
    path, group = write_widget_crd(tmp_path)
    kind = (f"{group}/v1", "Widget")
    # Discovery has cached the group as absent-or-unknown before the CRD exists.
    with pytest.raises(Exception, match="Widget"):
        await client.resource(kind)
    await asyncio.to_thread(control_plane.install_crds, [path])

    widget = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": namespace, "labels": {"tier": "a"}},
        "spec": {"replicas": 1, "color": "red"},
    }
    created = await client.create(copy.deepcopy(widget))  # ``widget`` is reused for w2
    assert created["spec"]["color"] == "red"
    res = await client.resource(GroupVersionResource(group, "v1", "wd"))  # short name works too
    assert res.kind == "Widget"
    assert {"status", "scale"} <= res.subresources

    listed = await client.list(kind, namespace=namespace, label_selector="tier=a")
    rv = listed["metadata"]["resourceVersion"]
    assert [i["metadata"]["name"] for i in listed["items"]] == ["w1"]

    async with client.watch(kind, namespace=namespace, resource_version=rv) as stream:
        got = await client.get(kind, "w1", namespace=namespace)
        got["spec"]["color"] = "blue"
        await client.update(got)
        await client.patch(kind, "w1", {"spec": {"size": "L"}}, namespace=namespace)
        await client.patch(
            kind,
            "w1",
            [{"op": "replace", "path": "/spec/color", "value": "green"}],
            namespace=namespace,
            patch_type="json",
        )
        applied = await client.apply(
            {
                "apiVersion": f"{group}/v1",
                "kind": "Widget",
                "metadata": {"name": "w1", "namespace": namespace},
                "spec": {"color": "green"},
            },
            field_manager="painter",
        )
        assert applied["spec"] == {"replicas": 1, "color": "green", "size": "L"}

        status = await client.status().patch(
            kind,
            "w1",
            {"status": {"phase": "Ready", "replicas": 1}},
            namespace=namespace,
        )
        assert status["status"]["phase"] == "Ready"
        current = await client.get(kind, "w1", namespace=namespace)
        current["status"]["phase"] = "Done"
        assert (await client.status().update(current))["status"]["phase"] == "Done"

        scale = await client.get(kind, "w1", namespace=namespace, subresource="scale")
        assert scale["spec"]["replicas"] == 1
        assert (await client.scale(kind, "w1", 5, namespace=namespace))["spec"]["replicas"] == 5

        await client.delete(kind, "w1", namespace=namespace)

        types: list[EventType] = []

        async def read() -> None:
            async for event in stream:
                if event.type is not EventType.BOOKMARK:
                    types.append(event.type)
                if event.type is EventType.DELETED:
                    return

        await asyncio.wait_for(read(), 30)
    assert types[-1] is EventType.DELETED
    assert types.count(EventType.MODIFIED) >= 6

    await client.create({**widget, "metadata": {**widget["metadata"], "name": "w2"}})
    await client.delete_collection(kind, namespace=namespace, label_selector="tier=a")
    with pytest.raises(NotFoundError):
        await client.get(kind, "w2", namespace=namespace)


async def test_forbidden_names_user_verb_and_resource(control_plane, namespace: str) -> None:
    alice = control_plane.add_user("alice", groups=["dev"])
    async with AsyncClient(load_kubeconfig(alice.path)) as client:
        with pytest.raises(ForbiddenError) as info:
            await client.list(CM, namespace=namespace)
    message = str(info.value)
    assert 'User "alice"' in message
    assert 'cannot list resource "configmaps"' in message
    assert namespace in message
    assert info.value.code == 403


async def test_server_side_apply_conflict_unless_forced(
    client: AsyncClient, namespace: str
) -> None:
    def desired(value: str) -> dict:
        return configmap("ssa", namespace, {"owner": value})

    await client.apply(desired("alpha"), field_manager="alpha")
    await client.apply(desired("alpha"), field_manager="alpha")  # idempotent for its owner
    with pytest.raises(ConflictError) as info:
        await client.apply(desired("beta"), field_manager="beta")
    assert "alpha" in str(info.value)  # the server names the current owner
    assert info.value.causes  # one cause per conflicting field
    forced = await client.apply(desired("beta"), field_manager="beta", force=True)
    assert forced["data"] == {"owner": "beta"}
    managers = {m["manager"] for m in forced["metadata"]["managedFields"]}
    assert "beta" in managers


async def test_retry_on_conflict_two_writers_reach_exactly_100(
    client: AsyncClient, namespace: str
) -> None:
    counter = configmap("counter", namespace)
    counter["metadata"]["annotations"] = {"example.com/count": "0"}
    await client.create(counter)
    conflicts = 0

    async def bump() -> None:
        nonlocal conflicts
        cm = await client.get(CM, "counter", namespace=namespace)
        annotations = cm["metadata"]["annotations"]
        annotations["example.com/count"] = str(int(annotations["example.com/count"]) + 1)
        try:
            await client.update(cm)
        except ConflictError:
            conflicts += 1
            raise

    # Two writers on one loop run in lockstep: the loser of each race sleeps while the winner
    # goes on writing, so client-go's DefaultRetry (5 steps of 10 ms) is routinely exhausted
    # here, in Go as in Python. A full-jitter backoff with more steps breaks the lockstep.
    backoff = Backoff(steps=60, duration=0.005, factor=1.5, jitter=1.0, cap=0.1)

    async def writer() -> None:
        for _ in range(50):
            await client.retry_on_conflict(bump, backoff=backoff)

    await asyncio.gather(writer(), writer())
    final = await client.get(CM, "counter", namespace=namespace)
    assert final["metadata"]["annotations"]["example.com/count"] == "100"
    assert conflicts > 0  # the writers really did collide


async def test_50_watches_do_not_starve_ordinary_requests(
    client_config: ClientConfig, namespace: str
) -> None:
    # A small ordinary pool makes starvation certain if watches shared it.
    config = client_config.with_options(max_connections=5, rate_limit=None)
    async with AsyncClient(config) as client:
        rv = (await client.list(CM, namespace=namespace))["metadata"]["resourceVersion"]
        streams = [client.watch(CM, namespace=namespace, resource_version=rv) for _ in range(50)]
        await asyncio.wait_for(asyncio.gather(*(s.__aenter__() for s in streams)), 60)
        try:
            created = await asyncio.wait_for(
                asyncio.gather(*(client.create(configmap(f"c{i}", namespace)) for i in range(20))),
                60,
            )
            assert len(created) == 20
            listed = await asyncio.wait_for(client.list(CM, namespace=namespace), 30)
            assert len([i for i in listed["items"] if i["metadata"]["name"].startswith("c")]) == 20

            async def first_added(stream) -> str:
                async for event in stream:
                    if event.type is EventType.ADDED:
                        return event.object["metadata"]["name"]
                raise AssertionError("watch ended")

            names = await asyncio.wait_for(asyncio.gather(*(first_added(s) for s in streams)), 60)
            assert all(n.startswith("c") for n in names)
        finally:
            await asyncio.gather(*(s.close() for s in streams))


async def test_no_secret_material_in_logs(
    control_plane,
    kubeconfig: Path,
    namespace: str,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.DEBUG)
    admin = load_kubeconfig(kubeconfig)
    async with AsyncClient(admin) as client:
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "robot", "namespace": namespace},
            }
        )
        token_response = await client._send(  # serviceaccounts/token is a create-only subresource
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/robot/token",
            verb="create",
            body={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 600},
            },
        )
        token = token_response.json()["status"]["token"]

    import yaml

    data = dict(control_plane.kubeconfig.data)
    data["users"] = [{"name": "robot", "user": {"token": token}}]
    data["contexts"] = [
        {"name": "robot", "context": {"cluster": data["clusters"][0]["name"], "user": "robot"}}
    ]
    data["current-context"] = "robot"
    path = tmp_path / "robot.kubeconfig"
    path.write_text(yaml.safe_dump(data))
    async with AsyncClient(load_kubeconfig(path)) as robot:
        with pytest.raises(ForbiddenError) as info:
            await robot.list(CM, namespace=namespace)
        assert "system:serviceaccount" in str(info.value)
        assert token not in str(info.value)
        assert token not in repr(robot.config)
    async with AsyncClient(admin) as client:  # client-certificate authentication
        await client.list(CM, namespace=namespace)

    key_pem = control_plane.kubeconfig.key_file.read_text()
    key_body = "".join(key_pem.strip().splitlines()[1:-1])
    logs = caplog.text
    assert logs  # something was logged (httpx/kubectrl request lines)
    assert token not in logs
    assert key_body[:40] not in logs
    user = control_plane.kubeconfig.data["users"][0]["user"]
    assert user["client-key-data"][:40] not in logs
