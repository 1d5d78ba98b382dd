"""The differential fuzzer for CRD structural schemas: hypothesis draws a schema (types, nested
objects, arrays and maps, int-or-string, nullable, defaults, enums, bounds, RE2 patterns,
formats, list types ``set``/``map``, preserve-unknown subtrees, embedded resources,
``allOf``/``anyOf``/``oneOf``/``not``, simple CEL rules) and values for it (valid ones and
near-misses); the CRD is created on the real kube-apiserver and on FakeAPI (both must accept or
refuse it alike), then each value is created as a custom object, and the first one is updated to
the next (ratcheting, CEL transition rules). Status codes, the causes' field paths and the stored
objects must agree.

The CI budget is small (``KUBECTRL_FUZZ_EXAMPLES``, 25 by default: each example installs a CRD
on the real server); a long run::

    KUBECTRL_FUZZ_EXAMPLES=2000 python -m pytest tests/contract/test_fuzz_schemas.py -p no:randomly

Upstream: apiextensions-apiserver pkg/apiserver/schema (pruning/algorithm.go,
defaulting/algorithm.go, defaulting/prunenulls.go, listtype/validation.go,
objectmeta/validation.go, cel/validation.go), pkg/apiserver/validation/validation.go,
pkg/apis/apiextensions/validation/validation.go (CRD admission) and kube-openapi
pkg/validation/validate (what each drawn keyword exercises).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import time
from typing import Any

import pytest
from contract_helpers import kubernetes_minor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.errors import APIError, NotFoundError, ResourceNotFoundError
from kubectrl.testing import FakeAPI

pytestmark = pytest.mark.integration

_EXAMPLES = int(os.environ.get("KUBECTRL_FUZZ_EXAMPLES", "25"))
# The CI budget draws the same examples every run (derandomized): a CI run checks the classes
# known so far and cannot fail on one found by chance; a long run (KUBECTRL_FUZZ_EXAMPLES set)
# draws new examples to find new classes.
_DERANDOMIZE = "KUBECTRL_FUZZ_EXAMPLES" not in os.environ
_CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")

# ------------------------------------------------------------------------------ schemas

_PATTERNS = ["^[a-z]+$", "^(?i)(abort|warn)?$", "^[0-9]{2,3}$", "^a.*z$", "^\\pL+$", "^[^/]+$"]
_FORMATS = [
    "date-time",
    "date",
    "uuid",
    "ipv4",
    "ipv6",
    "cidr",
    "hostname",
    "byte",
    "mac",
    "email",
    "uri",
    "duration",
]
_STRINGS = [
    "",
    "a",
    "abc",
    "abz",
    "ABORT",
    "warn",
    "12",
    "1234",
    "é",
    "a/b",
    "x" * 20,
    "2020-01-01T00:00:00Z",
    "2020-01-01",
    "2020-13-01",
    "550e8400-e29b-41d4-a716-446655440000",
    "1.2.3.4",
    "1.2.3.256",
    "::1",
    "10.0.0.0/8",
    "example.com",
    "-bad-",
    "aGVsbG8=",
    "00:1a:2b:3c:4d:5e",
    "a@b.c",
    "a@b",
    "Name <a@b.c>",
    "a..b@c.d",
    "http://x",
    "x:y",
    "/path",
    "rel/path",
    "5s",
    "1h2m",
    "1.5 hours",
    "P1D",
]
_NEAR = [None, "", "abc", 0, -1, 1, 3, 3.0, 2.5, 2**40, True, [], {}, ["a"], {"x": 1}]


def _leaf(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["string", "integer", "number", "boolean", "int-or-string"]))
    if kind == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    s: dict[str, Any] = {"type": kind}
    if kind == "string":
        extra = draw(st.sampled_from(["", "len", "pattern", "enum", "format", "cel"]))
        if extra == "len":
            s["maxLength"] = draw(st.integers(0, 4))
            if draw(st.booleans()):
                s["minLength"] = draw(st.integers(0, 2))
        elif extra == "pattern":
            s["pattern"] = draw(st.sampled_from(_PATTERNS))
        elif extra == "enum":
            s["enum"] = draw(st.lists(st.sampled_from(_STRINGS[:6]), min_size=1, max_size=3))
        elif extra == "format":
            s["format"] = draw(st.sampled_from(_FORMATS))
        elif extra == "cel":
            s["maxLength"] = 10
            s["x-kubernetes-validations"] = [
                draw(
                    st.sampled_from(
                        [
                            {"rule": "self.size() <= 3"},
                            {"rule": "self.startsWith('a')", "message": "must start with a"},
                            {"rule": "self == oldSelf", "message": "immutable"},
                        ]
                    )
                )
            ]
    elif kind in ("integer", "number"):
        extra = draw(st.sampled_from(["", "bounds", "multiple", "format", "cel"]))
        if extra == "bounds":
            if draw(st.booleans()):
                s["minimum"] = draw(st.integers(-2, 2))
                s["exclusiveMinimum"] = draw(st.booleans())
            if draw(st.booleans()):
                s["maximum"] = draw(st.integers(2, 5))
                s["exclusiveMaximum"] = draw(st.booleans())
        elif extra == "multiple":
            s["multipleOf"] = draw(st.sampled_from([2, 3]))
        elif extra == "format" and kind == "integer":
            s["format"] = draw(st.sampled_from(["int32", "int64"]))
        elif extra == "cel":
            s["x-kubernetes-validations"] = [
                draw(st.sampled_from([{"rule": "self >= 0"}, {"rule": "self < 10"}]))
            ]
    if draw(st.integers(0, 5)) == 0:
        s["nullable"] = True
    return s


def _composition(draw: st.DrawFn, s: dict[str, Any]) -> None:
    typ = s.get("type")
    subs = {
        "string": [{"maxLength": 2}, {"minLength": 1}, {"pattern": "^a"}],
        "integer": [{"minimum": 1}, {"maximum": 3}, {"multipleOf": 2}],
        "number": [{"minimum": 1}, {"maximum": 3}],
        "object": [{"required": ["p0"]}, {"required": ["p1"]}, {"maxProperties": 1}],
        "array": [{"maxItems": 1}, {"minItems": 1}],
    }.get(str(typ))
    if not subs:
        return
    which = draw(st.sampled_from(["", "", "allOf", "anyOf", "oneOf", "not"]))
    if which == "not":
        s["not"] = draw(st.sampled_from(subs))
    elif which:
        s[which] = draw(st.lists(st.sampled_from(subs), min_size=1, max_size=2, unique_by=str))


@st.composite
def schemas(draw: st.DrawFn, depth: int = 2) -> dict[str, Any]:
    """A structural schema (``depth``: how deep objects and arrays may nest)."""
    shape = draw(
        st.sampled_from(["leaf", "leaf", "object", "array", "map", "preserve", "embedded"])
    )
    if depth <= 0 or shape == "leaf":
        s = _leaf(draw)
    elif shape in ("object", "preserve", "embedded"):
        names = [f"p{i}" for i in range(draw(st.integers(1, 3)))]
        s = {"type": "object", "properties": {n: draw(schemas(depth=depth - 1)) for n in names}}
        if draw(st.booleans()):
            s["required"] = draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
        if shape == "preserve":
            s["x-kubernetes-preserve-unknown-fields"] = True
        elif shape == "embedded":
            s["x-kubernetes-embedded-resource"] = True
            s["x-kubernetes-preserve-unknown-fields"] = True
        if draw(st.integers(0, 3)) == 0:
            s["x-kubernetes-validations"] = [{"rule": "has(self.p0)", "message": "p0 is required"}]
    elif shape == "map":
        s = {"type": "object", "additionalProperties": _leaf(draw)}
        if draw(st.booleans()):
            s["maxProperties"] = draw(st.integers(0, 2))
    else:
        items = _leaf(draw) if draw(st.booleans()) else draw(schemas(depth=depth - 1))
        items.pop("nullable", None)
        s = {"type": "array", "items": items}
        listing = draw(st.sampled_from(["", "atomic", "set", "map"]))
        if listing == "set" and items.get("type") in ("string", "integer"):
            s["x-kubernetes-list-type"] = "set"
        elif listing == "map" and items.get("type") == "object":
            key = next(iter(items["properties"]))
            items["properties"][key] = {"type": "string"}
            items["required"] = sorted({*items.get("required", []), key})
            s["x-kubernetes-list-type"] = "map"
            s["x-kubernetes-list-map-keys"] = [key]
        if draw(st.booleans()):
            s["maxItems"] = draw(st.integers(0, 3))
    _composition(draw, s)
    if draw(st.integers(0, 4)) == 0:
        s["default"] = draw(values(s, depth=1))
    return s


def values(s: dict[str, Any], depth: int = 2) -> st.SearchStrategy[Any]:
    """Values for ``s``: mostly of its shape, sometimes a near-miss anywhere in it."""
    if not depth:
        return _shaped(s, depth)
    near, shaped = st.sampled_from(_NEAR), _shaped(s, depth)
    return st.integers(0, 3).flatmap(lambda i: near if i == 0 else shaped)  # 1 in 4 near


def _shaped(s: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    typ = s.get("type")
    if s.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(-3, 5), st.sampled_from(_STRINGS[:8]))
    if typ == "string":
        return st.sampled_from(_STRINGS + list(s.get("enum") or ()))
    if typ == "integer":
        return st.one_of(st.integers(-3, 12), st.sampled_from([2**31, 2**63 - 1]))
    if typ == "number":
        return st.one_of(st.integers(-3, 12), st.sampled_from([0.5, 2.5, 6.0]))
    if typ == "boolean":
        return st.booleans()
    if typ == "array":
        items = s["items"]
        return st.lists(values(items, depth - 1) if depth else _shaped(items, 0), max_size=3)
    if typ == "object":
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        if isinstance(extra, dict):
            return st.dictionaries(
                st.sampled_from(["a", "b", "c"]), values(extra, depth - 1), max_size=3
            )
        fields = {k: values(v, max(depth - 1, 0)) for k, v in props.items()}
        base = st.fixed_dictionaries({}, optional=fields)
        if s.get("x-kubernetes-embedded-resource"):
            meta = st.fixed_dictionaries(
                {},
                optional={
                    "apiVersion": st.sampled_from(["v1", "", "example.com/v1"]),
                    "kind": st.sampled_from(["Thing", ""]),
                    "metadata": st.sampled_from([{"name": "n"}, {"name": "n", "junk": 1}]),
                },
            )
            base = st.builds(lambda a, b: {**a, **b}, base, meta)
        unknown = st.sampled_from([{}, {}, {"zz": 1}])
        return st.builds(lambda a, b: {**a, **b}, base, unknown)
    return st.sampled_from(_NEAR)


@st.composite
def examples(draw: st.DrawFn) -> tuple[dict[str, Any], list[Any]]:
    """A schema and three values for it."""
    schema = draw(schemas())
    return schema, draw(st.lists(values(schema), min_size=3, max_size=3))


# ------------------------------------------------------------------------------ the servers


def _crd(group: str, schema: dict[str, Any]) -> dict[str, Any]:
    spec = {"type": "object", "properties": {"v": schema}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                }
            ],
        },
    }


def _error(err: APIError) -> tuple[Any, ...]:
    return (err.code, sorted(c.field for c in err.causes))


def _stored(obj: dict[str, Any]) -> str:
    out = copy.deepcopy(obj)
    for key in ("uid", "creationTimestamp", "resourceVersion", "managedFields", "namespace"):
        (out.get("metadata") or {}).pop(key, None)
    return json.dumps(out, sort_keys=True)


async def _served(client: AsyncClient, kind: tuple[str, str], namespace: str) -> None:
    """Wait (30 s at most) until the real server serves a new CRD's kind."""
    deadline = time.monotonic() + 30
    while True:
        try:
            await client.list(kind, namespace=namespace)
            return
        except (NotFoundError, ResourceNotFoundError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def _run(
    client: AsyncClient, real: bool, group: str, schema: dict[str, Any], vals: list[Any], ns: str
) -> list[Any]:
    """What one server answers: the CRD's creation, each value's, the update's."""
    out: list[Any] = []
    try:
        await client.create(_crd(group, schema))
    except APIError as err:
        return [("crd", *_error(err))]
    out.append("crd created")
    kind = (f"{group}/v1", "Thing")
    if real:
        await _served(client, kind, ns)
    first: dict[str, Any] | None = None
    for index, value in enumerate(vals):
        obj = {
            "apiVersion": kind[0],
            "kind": "Thing",
            "metadata": {"name": f"t{index}", "namespace": ns},
            "spec": {"v": copy.deepcopy(value)},
        }
        try:
            created = await client.create(obj)
            out.append(_stored(created))
            first = first or created
        except APIError as err:
            out.append(_error(err))
    if first is not None:
        for value in vals[1:]:
            body = copy.deepcopy(first)
            body["spec"] = {"v": copy.deepcopy(value)}
            try:
                out.append(_stored(await client.update(body, dry_run=True)))
            except APIError as err:
                out.append(_error(err))
    return out


def test_schema_near_misses_agree(kubectrl_control_plane: Any, real_module_namespace: str) -> None:
    """CRDs of drawn schemas and objects for them: the two servers agree."""
    config = load_kubeconfig(kubectrl_control_plane.kubeconfig.path).with_options(rate_limit=None)
    loop = asyncio.new_event_loop()
    real = AsyncClient(config)
    counter = iter(range(10**9))
    sent = [0]
    run_id = os.urandom(3).hex()

    @settings(
        max_examples=_EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        derandomize=_DERANDOMIZE,
    )
    @given(example=examples())
    def case(example: tuple[dict[str, Any], list[Any]]) -> None:
        sent[0] += 1
        schema, vals = example
        group = f"f{run_id}-{next(counter)}.fuzz.kubectrl.test"
        api = FakeAPI(version=kubernetes_minor())
        api.seed(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": real_module_namespace}}
        )

        async def both() -> tuple[list[Any], list[Any]]:
            async with AsyncClient(api.config()) as fake:
                got_fake = await _run(fake, False, group, schema, vals, real_module_namespace)
            try:
                got_real = await _run(real, True, group, schema, vals, real_module_namespace)
            finally:
                with contextlib.suppress(APIError):
                    await real.delete(_CRD, f"things.{group}")
            return got_real, got_fake

        got_real, got_fake = loop.run_until_complete(both())
        assert got_fake == got_real, (
            f"schema: {json.dumps(schema)}\nvalues: {json.dumps(vals)}\n"
            f"real: {got_real}\nfake: {got_fake}"
        )

    try:
        case()
    finally:
        print(f"{sent[0]} examples sent to both servers")  # shown with -s or on failure
        loop.run_until_complete(real.aclose())
        loop.close()
