"""An :class:`~kubectrl.apiserver.APIServer` admission rule judges the object as it will be
stored, as kube-apiserver's admission does.

Upstream order (k8s.io/apiserver): the handler decodes the body (for a custom resource the
decoder prunes unknown fields and applies the schema's defaults), updates managedFields and runs
mutating admission; ``pkg/registry/generic/registry/store.go`` ``Create`` then calls
``rest.BeforeCreate`` (``pkg/registry/rest/create.go``: ``PrepareForCreate``, the system
metadata ``uid`` and ``creationTimestamp``, the generated name, ``Validate``, ``Canonicalize``)
and only then ``createValidation``, the validating admission (``pkg/admission``), with a copy of
that object; ``Update`` likewise after ``rest.BeforeUpdate`` (``rest/update.go``), ``Delete``
with the stored object after the preconditions. So a rule sees the defaulted values, no pruned
field, the uid, creationTimestamp and generation of the object written; and what it is given
is a copy.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from kubectrl.apiserver import AdmissionAttributes, AdmissionError, APIServer
from kubectrl.apiserver._router import Reply, Request
from kubectrl.resources import CustomResource


class WidgetSpec(BaseModel):
    replicas: int = 3
    size: str = "small"


class Widget(CustomResource, group="example.com", version="v1", kind="Widget"):
    spec: WidgetSpec = Field(default_factory=WidgetSpec)


WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"


class Recorder:
    """An admission rule that keeps what it was given (and refuses names starting with no-)."""

    def __init__(self) -> None:
        self.seen: list[AdmissionAttributes] = []

    def __call__(self, request: AdmissionAttributes) -> None:
        self.seen.append(request)
        if request.name.startswith("no-"):
            raise AdmissionError("not this one")


@pytest.fixture
def server() -> tuple[APIServer, Recorder]:
    server = APIServer([Widget], auth=None, compaction_interval=None)
    recorder = Recorder()
    server.admission(Widget, operations=("CREATE", "UPDATE", "DELETE"))(recorder)
    return server, recorder


def _send(
    server: APIServer,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    **params: str,
) -> Reply:
    raw = b"" if body is None else json.dumps(body).encode()
    headers = {"content-type": content_type}
    answer = server.core.handle(Request(method, path, params=params, headers=headers, body=raw))
    assert isinstance(answer, Reply)
    return answer


def _widget(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": spec,
    }


def _without_rv(obj: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["metadata"].pop("resourceVersion", None)
    return dict(out)


def test_a_create_rule_sees_the_defaulted_pruned_object_with_its_uid(
    server: tuple[APIServer, Recorder],
) -> None:
    """The defect of issue 36: the rule saw the request body (``spec: {}`` and a field the
    server prunes, no uid); store.go runs validating admission after ``rest.BeforeCreate``."""
    api, rules = server
    created = _send(api, "POST", WIDGETS, _widget("a", {"colour": "blue"}))
    assert created.code == 201, created.body
    (request,) = rules.seen
    assert request.operation == "CREATE"
    assert request.name == "a"
    assert request.old_object is None
    obj = request.object
    assert obj is not None
    assert obj["spec"] == {"replicas": 3, "size": "small"}  # defaulted, "colour" pruned
    meta = obj["metadata"]
    assert meta["uid"] == created.body["metadata"]["uid"]
    assert meta["creationTimestamp"] == created.body["metadata"]["creationTimestamp"]
    assert meta["generation"] == 1
    assert meta["namespace"] == "default"
    assert meta["managedFields"] == created.body["metadata"]["managedFields"]
    # everything but the resourceVersion the storage gives it
    assert _without_rv(obj) == _without_rv(created.body)


def test_a_generated_name_is_the_name_judged(server: tuple[APIServer, Recorder]) -> None:
    """``rest.BeforeCreate`` generates the name before validation and admission see it."""
    api, rules = server
    body = _widget("", {})
    body["metadata"] = {"generateName": "no-"}
    refused = _send(api, "POST", WIDGETS, body)
    assert refused.code == 403
    (request,) = rules.seen
    assert request.name.startswith("no-")
    assert len(request.name) == len("no-") + 5
    assert request.object is not None
    assert request.object["metadata"]["name"] == request.name
    assert api.core.storage.range(("example.com", "widgets")) == {}


_APPLIED = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "spec": {"size": "l", "colour": "red"},
}


@pytest.mark.parametrize(
    ("method", "content_type", "body", "spec"),
    [
        (
            "PUT",
            "application/json",
            _widget("a", {"colour": "red"}),
            {"replicas": 3, "size": "small"},
        ),
        (
            "PATCH",
            "application/merge-patch+json",
            {"spec": {"replicas": None, "colour": "red"}},
            {"replicas": 3, "size": "small"},
        ),
        ("PATCH", "application/apply-patch+yaml", _APPLIED, {"replicas": 5, "size": "l"}),
    ],
    ids=["update", "merge-patch", "apply"],
)
def test_an_update_rule_sees_the_new_object_as_stored_and_the_old_one(
    server: tuple[APIServer, Recorder],
    method: str,
    content_type: str,
    body: dict[str, Any],
    spec: dict[str, Any],
) -> None:
    """``rest.BeforeUpdate`` (``PrepareForUpdate``, validation) comes before
    ``updateValidation``: the rule sees the defaults, no pruned field, the uid and
    creationTimestamp kept from the stored object."""
    api, rules = server
    created = _send(api, "POST", WIDGETS, _widget("a", {"replicas": 5}))
    assert created.code == 201
    if method == "PUT":
        rv = created.body["metadata"]["resourceVersion"]
        body = {**body, "metadata": {**body["metadata"], "resourceVersion": rv}}
    applying = content_type.startswith("application/apply")
    params = {"fieldManager": "test", "force": "true"} if applying else {}
    updated = _send(api, method, f"{WIDGETS}/a", body, content_type, **params)
    assert updated.code == 200, updated.body
    request = rules.seen[-1]
    assert request.operation == "UPDATE"
    assert request.object is not None
    assert request.old_object is not None
    assert request.object["spec"] == spec  # defaulted, "colour" pruned
    assert request.object["metadata"]["uid"] == created.body["metadata"]["uid"]
    assert request.object["metadata"]["generation"] == 2
    assert _without_rv(request.object) == _without_rv(updated.body)
    assert request.old_object == created.body


def test_a_delete_rule_sees_the_stored_object(server: tuple[APIServer, Recorder]) -> None:
    """store.go ``Delete`` calls ``deleteValidation`` with the stored object."""
    api, rules = server
    created = _send(api, "POST", WIDGETS, _widget("a", {}))
    deleted = _send(api, "DELETE", f"{WIDGETS}/a", dryRun="All")
    assert deleted.code == 200
    request = rules.seen[-1]
    assert request.operation == "DELETE"
    assert request.object is None
    assert request.old_object == created.body
    assert request.dry_run is True


def test_what_a_rule_changes_is_not_stored(server: tuple[APIServer, Recorder]) -> None:
    """Validating admission gets a copy (store.go: ``obj.DeepCopyObject()``)."""
    api, _ = server

    @api.admission(Widget)
    def meddle(request: AdmissionAttributes) -> None:
        if request.object is not None:
            request.object["spec"]["replicas"] = 99

    created = _send(api, "POST", WIDGETS, _widget("a", {}))
    assert created.code == 201
    assert created.body["spec"]["replicas"] == 3
    stored = api.core.storage.get(("example.com", "widgets"), ("default", "a"))
    assert stored is not None
    assert stored["spec"]["replicas"] == 3


def test_a_refused_write_stores_nothing_and_says_why(server: tuple[APIServer, Recorder]) -> None:
    api, _ = server
    refused = _send(api, "POST", WIDGETS, _widget("no-thanks", {}))
    assert refused.code == 403
    assert refused.body["message"] == 'widgets.example.com "no-thanks" is forbidden: not this one'
    assert api.core.storage.range(("example.com", "widgets")) == {}
