"""Predicates, event handlers, Request/Result and controllerutil's pure helpers."""

from __future__ import annotations

import datetime
import logging
from typing import Any

import pytest

from kubectrl.client import merge_patch_diff
from kubectrl.runtime import Request, Result
from kubectrl.runtime._handler import as_event_handler
from kubectrl.runtime._predicate import matches
from kubectrl.runtime.controllerutil import (
    AlreadyOwnedError,
    add_finalizer,
    contains_finalizer,
    has_controller_reference,
    remove_finalizer,
    set_controller_reference,
    set_owner_reference,
)
from kubectrl.runtime.handler import (
    CreateEvent,
    DeleteEvent,
    GenericEvent,
    UpdateEvent,
    enqueue_request_for_object,
    enqueue_request_for_owner,
    enqueue_requests_from_map_func,
)
from kubectrl.runtime.predicate import (
    PredicateFuncs,
    and_,
    annotations_changed,
    generation_changed,
    label_selector,
    labels_changed,
    not_,
    or_,
    resource_version_changed,
)


def obj(name: str = "a", ns: str = "ns", **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, **meta}}


def test_request_and_result() -> None:
    assert str(Request("ns", "a")) == "ns/a"
    assert Request.from_key("ns/a") == Request("ns", "a")
    assert hash(Request("ns", "a")) == hash(Request("ns", "a"))
    assert Result().is_zero()
    assert Result(requeue_after=datetime.timedelta(seconds=90)).requeue_after == 90.0
    with pytest.raises(ValueError, match=">= 0"):
        Result(requeue_after=-1)


@pytest.mark.parametrize(
    ("predicate", "field", "old", "new"),
    [
        (generation_changed, "generation", 1, 2),
        (labels_changed, "labels", {"a": "1"}, {"a": "2"}),
        (annotations_changed, "annotations", {"a": "1"}, {}),
        (resource_version_changed, "resourceVersion", "1", "2"),
    ],
)
def test_change_predicates_filter_updates_only(
    predicate: Any, field: str, old: Any, new: Any
) -> None:
    before, after = obj(**{field: old}), obj(**{field: new})
    assert predicate.update(UpdateEvent(before, after))
    assert not predicate.update(UpdateEvent(before, obj(**{field: old})))
    assert predicate.create(CreateEvent(before))
    assert predicate.delete(DeleteEvent(before))
    assert predicate.generic(GenericEvent(before))


def test_generation_changed_skips_status_only_updates() -> None:
    old = {**obj(generation=3, resourceVersion="10"), "status": {"ready": False}}
    new = {**obj(generation=3, resourceVersion="11"), "status": {"ready": True}}
    assert not generation_changed.update(UpdateEvent(old, new))
    assert resource_version_changed.update(UpdateEvent(old, new))


def test_label_selector() -> None:
    p = label_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "back"]},
                {"key": "skip", "operator": "DoesNotExist"},
            ],
        }
    )
    assert p.create(CreateEvent(obj(labels={"app": "web", "tier": "front"})))
    assert not p.create(CreateEvent(obj(labels={"app": "web", "tier": "db"})))
    assert not p.create(CreateEvent(obj(labels={"app": "web", "tier": "front", "skip": "1"})))
    assert not p.delete(DeleteEvent(obj()))
    assert p.update(UpdateEvent(obj(), obj(labels={"app": "web", "tier": "back"})))
    assert label_selector({}).generic(GenericEvent(obj()))
    assert label_selector({"app": "web"}).generic(GenericEvent(obj(labels={"app": "web"})))
    with pytest.raises(ValueError, match="operator"):
        label_selector({"matchExpressions": [{"key": "a", "operator": "Gt"}]})
    # Every form kubectrl.labels takes, e.g. the string form a client sends.
    by_string = label_selector("app=web,!canary")
    assert by_string.create(CreateEvent(obj(labels={"app": "web"})))
    assert not by_string.create(CreateEvent(obj(labels={"app": "web", "canary": "1"})))


def test_and_or_not_and_plain_functions() -> None:
    yes, no = (lambda e: True), (lambda e: False)
    event = GenericEvent(obj())
    assert matches(and_(yes, yes), event)
    assert not matches(and_(yes, no), event)
    assert matches(or_(no, yes), event)
    assert not matches(or_(), event)
    assert matches(and_(), event)
    assert matches(not_(no), event)
    only_create = PredicateFuncs(update=no, delete=no, generic=no)
    assert matches(only_create, CreateEvent(obj()))
    assert not matches(only_create, event)
    combined = and_(generation_changed, not_(labels_changed))
    assert matches(combined, UpdateEvent(obj(generation=1), obj(generation=2)))


def test_enqueue_for_object() -> None:
    h = enqueue_request_for_object()
    assert h.requests(CreateEvent(obj("a"))) == [Request("ns", "a")]
    assert h.requests(UpdateEvent(obj("a"), obj("a"))) == [Request("ns", "a")]
    assert h.requests(DeleteEvent(obj("a", ns=""))) == [Request("", "a")]
    assert h.requests(GenericEvent({"metadata": {}})) == []
    seen: list[Request] = []
    h.handle(CreateEvent(obj("b")), seen.append)
    assert seen == [Request("ns", "b")]


def ref(kind: str, name: str, api: str = "samplecontroller.k8s.io/v1alpha1", **kw: Any) -> dict:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": f"uid-{name}", **kw}


def test_enqueue_for_owner_matches_group_and_kind_controller_only() -> None:
    owned = obj(
        "dep",
        ownerReferences=[
            ref("Foo", "foo-1", controller=True),
            ref("Foo", "foo-2"),
            ref("Bar", "bar", controller=True, api="other.io/v1"),
        ],
    )
    h = enqueue_request_for_owner("samplecontroller.k8s.io/v1alpha1", "Foo", namespaced=True)
    assert h.requests(CreateEvent(owned)) == [Request("ns", "foo-1")]
    # Any version of the group matches; a group name works too.
    h2 = enqueue_request_for_owner(
        "samplecontroller.k8s.io", "Foo", controller_only=False, namespaced=True
    )
    assert h2.requests(CreateEvent(owned)) == [Request("ns", "foo-1"), Request("ns", "foo-2")]
    core_owner = enqueue_request_for_owner("v1", "Foo", namespaced=True)
    assert core_owner.requests(CreateEvent(owned)) == []
    core = obj("p", ownerReferences=[ref("ConfigMap", "cm", api="v1", controller=True)])
    cm_owner = enqueue_request_for_owner("v1", "ConfigMap", namespaced=True)
    assert cm_owner.requests(CreateEvent(core)) == [Request("ns", "cm")]
    # A change of owner enqueues both the old and the new owner.
    moved = obj("dep", ownerReferences=[ref("Foo", "foo-9", controller=True)])
    assert h.requests(UpdateEvent(owned, moved)) == [Request("ns", "foo-1"), Request("ns", "foo-9")]


async def test_owner_scope_comes_from_discovery_and_cluster_scoped_owners_have_no_namespace() -> (
    None
):
    """controller-runtime's EnqueueRequestForOwner (pkg/handler/enqueue_owner.go) asks the
    RESTMapper for the owner's scope and leaves the namespace empty for a root-scoped owner.
    The server's real answer is checked in tests/integration/runtime; here, the handler's use
    of whatever discovery says."""
    asked: list[tuple[str, str]] = []

    class Scope:
        namespaced = False

    async def resolve(ref: tuple[str, str]) -> Scope:
        asked.append(ref)
        return Scope()

    h = enqueue_request_for_owner("rbac.authorization.k8s.io/v1", "ClusterRole")
    in_a = obj(
        "x",
        ns="a",
        ownerReferences=[
            ref("ClusterRole", "t1", api="rbac.authorization.k8s.io/v1", controller=True)
        ],
    )
    in_b = obj(
        "x",
        ns="b",
        ownerReferences=[
            ref("ClusterRole", "t1", api="rbac.authorization.k8s.io/v1", controller=True)
        ],
    )
    with pytest.raises(RuntimeError, match="scope of owner kind ClusterRole is unknown"):
        h.requests(CreateEvent(in_a))  # never guess a key
    await h.resolve_scope(resolve)
    await h.resolve_scope(resolve)  # resolved once
    assert asked == [("rbac.authorization.k8s.io/v1", "ClusterRole")]
    assert h.requests(CreateEvent(in_a)) == [Request("", "t1")]
    assert h.requests(CreateEvent(in_b)) == [Request("", "t1")]
    # A cluster-scoped owned object can only have cluster-scoped owners: no lookup needed.
    cluster_owned = obj("pv", ns="", ownerReferences=[ref("Foo", "f", controller=True)])
    assert enqueue_request_for_owner("samplecontroller.k8s.io", "Foo").requests(
        CreateEvent(cluster_owned)
    ) == [Request("", "f")]
    # A bare non-core group cannot be looked up: say so.
    with pytest.raises(ValueError, match="apiVersion"):
        await enqueue_request_for_owner("samplecontroller.k8s.io", "Foo").resolve_scope(resolve)


def test_map_func_and_plain_function_handlers() -> None:
    def by_label(o: Any) -> list[Request]:
        target = o["metadata"].get("labels", {}).get("for")
        return [Request("ns", target)] if target else []

    h = enqueue_requests_from_map_func(by_label)
    assert h.requests(UpdateEvent(obj(labels={"for": "x"}), obj(labels={"for": "y"}))) == [
        Request("ns", "x"),
        Request("ns", "y"),
    ]
    plain = as_event_handler(by_label)
    seen: list[Request] = []
    plain.handle(CreateEvent(obj(labels={"for": "z"})), seen.append)
    assert seen == [Request("ns", "z")]


OWNER = {
    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
    "kind": "Foo",
    "metadata": {"name": "foo", "namespace": "ns", "uid": "u-foo"},
}


def test_set_controller_reference() -> None:
    dep = obj("dep")
    set_controller_reference(OWNER, dep)
    set_controller_reference(OWNER, dep)  # idempotent
    assert dep["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "name": "foo",
            "uid": "u-foo",
            "blockOwnerDeletion": True,
            "controller": True,
        }
    ]
    assert has_controller_reference(dep)
    other = {**OWNER, "metadata": {**OWNER["metadata"], "name": "foo-2", "uid": "u2"}}
    with pytest.raises(AlreadyOwnedError, match="already owned"):
        set_controller_reference(other, dep)
    with pytest.raises(ValueError, match="cross-namespace"):
        set_controller_reference(OWNER, obj("x", ns="elsewhere"))
    with pytest.raises(ValueError, match="cluster-scoped"):
        set_controller_reference(OWNER, {"metadata": {"name": "node"}})
    with pytest.raises(ValueError, match="uid"):
        set_controller_reference({**OWNER, "metadata": {"name": "n"}}, obj())
    # A cluster-scoped owner may own namespaced objects.
    cluster_owner = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "uid": "1"}}
    set_owner_reference(cluster_owner, dep)
    assert len(dep["metadata"]["ownerReferences"]) == 2


def test_set_owner_reference_keeps_controller_flags() -> None:
    dep = obj("dep")
    set_owner_reference(OWNER, dep)
    assert "controller" not in dep["metadata"]["ownerReferences"][0]
    set_controller_reference(OWNER, dep)
    set_owner_reference(OWNER, dep)
    (only,) = dep["metadata"]["ownerReferences"]
    assert only["controller"] is True


def test_finalizers() -> None:
    o: dict[str, Any] = {"metadata": {}}
    assert add_finalizer(o, "x/y")
    assert not add_finalizer(o, "x/y")
    assert contains_finalizer(o, "x/y")
    assert remove_finalizer(o, "x/y")
    assert not remove_finalizer(o, "x/y")
    assert not contains_finalizer(o, "x/y")


def test_merge_patch_diff() -> None:
    assert merge_patch_diff({"a": 1}, {"a": 1}) == {}
    assert merge_patch_diff({"a": [1]}, {"a": [1, 2]}) == {"a": [1, 2]}
    assert merge_patch_diff({"a": {"b": 1}}, {}) == {"a": None}
    assert merge_patch_diff({}, {"a": {"b": 1}}) == {"a": {"b": 1}}


def test_dispatch_logs_a_failing_handler_with_the_object_and_the_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from kubectrl.runtime._source import dispatch

    handler = enqueue_request_for_owner("rbac.authorization.k8s.io/v1", "ClusterRole")
    owned = obj("x", ns="a", ownerReferences=[ref("ClusterRole", "t1", controller=True)])
    seen: list[Request] = []
    with caplog.at_level(logging.ERROR, "kubectrl.runtime.source"):
        dispatch(CreateEvent(owned), handler, [], seen.append)
    assert seen == []
    [record] = caplog.records
    text = record.getMessage()
    assert "CreateEvent of a/x" in text
    assert "scope of owner kind ClusterRole is unknown" in text
