"""No exception but an APIError or UnsupportedFeatureError escapes a client call to the fake,
whatever the body: JSON values of any shape (patches), and valid objects with a value of any
shape at any level (create, update, every patch type) of several kinds. What addresses the
request (apiVersion, kind, name, namespace) stays valid: the client refuses to build a request
without them before any is sent."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectrl.client import BlockingClient
from kubectrl.errors import APIError, UnsupportedFeatureError
from kubectrl.testing import FakeAPI

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
# A patch is an object or a list (JSON patch): the client refuses other values as arguments.
_PATCHES = st.dictionaries(st.text(max_size=8), _JSON, max_size=4) | st.lists(_JSON, max_size=4)
_VALID: dict[str, dict[str, Any]] = {
    "Pod": {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x", "namespace": "d", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]},
    },
    "Job": {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "x", "namespace": "d"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}
            }
        },
    },
    "Deployment": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x", "namespace": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    },
    "ConfigMap": {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "d", "finalizers": ["a.io/b"]},
        "data": {"k": "v"},
    },
}
_KINDS = {
    "Pod": ("v1", "Pod"),
    "Job": ("batch/v1", "Job"),
    "Deployment": ("apps/v1", "Deployment"),
    "ConfigMap": ("v1", "ConfigMap"),
}


_ADDRESS = {
    ("apiVersion",),
    ("kind",),
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "namespace"),
}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(sorted(_VALID)))
    obj = copy.deepcopy(_VALID[kind])
    for _ in range(draw(st.integers(1, 3))):
        # What addresses the request stays (the client needs it to build the URL).
        paths = [p for p in _paths(obj) if p not in _ADDRESS]
        path = draw(st.sampled_from(paths))
        node: Any = obj
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = draw(_JSON)
    return kind, obj


def _call(action: Any) -> None:
    with contextlib.suppress(APIError, UnsupportedFeatureError):
        action()


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(case=_mutated(), raw=_PATCHES, how=st.sampled_from(["merge", "json", "strategic", "apply"]))
def test_no_stray_exception_escapes_a_write(
    case: tuple[str, dict[str, Any]], raw: Any, how: str
) -> None:
    kind, body = case
    api = FakeAPI()
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}})
    api.seed(copy.deepcopy(_VALID[kind]))
    with BlockingClient(api.config()) as c:
        fresh = copy.deepcopy(body)
        if isinstance(fresh.get("metadata"), dict):
            fresh["metadata"]["name"] = "y"
        _call(lambda: c.create(fresh))
        _call(lambda: c.update(copy.deepcopy(body)))
        _call(
            lambda: c.patch(
                _KINDS[kind], "x", raw, namespace="d", patch_type=how, field_manager="m"
            )
        )
        _call(
            lambda: c.patch(
                _KINDS[kind],
                "x",
                body,
                namespace="d",
                patch_type=how,
                field_manager="m",
                force=True if how == "apply" else None,
            )
        )
