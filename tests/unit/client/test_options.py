"""The verbs' options: one typed bundle per verb family, refused by name when misspelt.

mypy refuses a misspelt option statically (tests/typing/test_typing_interfaces.py); these tests
show the same at run time, for code that is not type-checked: Python refuses an unexpected
keyword argument with a ``TypeError``, and so does every client verb for an unexpected option,
before anything is sent. Also: each option is declared once (a bundle's piece), the client's
``field_owner`` is the field manager of a write that names none (controller-runtime's
``client.WithFieldOwner``, pkg/client/fieldowner.go), and ``force`` outside an apply is refused
(the apiserver answers 422 "force flag may only be set for apply", staging/src/k8s.io/apiserver/
pkg/endpoints/handlers/patch.go).
"""

from __future__ import annotations

import ast
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_objects import deployment, fake_api

from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, BlockingClient, ClientConfig
from kubectrl.client import _options as options_module
from kubectrl.runtime import CachedClient
from kubectrl.testing import FakeAPI

CM = ("v1", "ConfigMap")
CLIENT_SRC = Path(options_module.__file__).parent

Call = Callable[[Any], Awaitable[Any]]


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}}


class Counting(httpx.AsyncBaseTransport):
    """The fake's transport, counting what reaches it."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.sent: list[str] = []
        self.queries: list[dict[str, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(f"{request.method} {request.url.path}")
        self.queries.append(dict(request.url.params))
        return await self.inner.handle_async_request(request)


def counted(fake: FakeAPI, **overrides: Any) -> tuple[ClientConfig, Counting]:
    counting = Counting(fake.transport)
    return fake.config(transport=counting, **overrides), counting


MISSPELT: dict[str, Call] = {
    "get": lambda c: c.get(CM, "a", namspace="ns"),
    "list": lambda c: c.list(CM, label_selectr="a=b"),
    "list_pages": lambda c: c.list_pages(CM, limt=5).__anext__(),
    "create": lambda c: c.create(configmap("a"), dryrun=True),
    "update": lambda c: c.update(configmap("a"), subresource="status"),
    "patch": lambda c: c.patch(CM, "a", {}, namespace="ns", subresource="status"),
    "apply": lambda c: c.apply(configmap("a"), field_manager="t", forse=True),
    "patch_merge_from": lambda c: c.patch_merge_from(configmap("a"), configmap("a"), lock=True),
    "delete": lambda c: c.delete(CM, "a", namespace="ns", propagation="Foreground"),
    "delete_collection": lambda c: c.delete_collection(CM, namespace="ns", selector="a"),
    "status().update": lambda c: c.status().update(configmap("a"), namspace="ns"),
    "status().patch": lambda c: c.status().patch(CM, "a", {}, subresource="scale"),
    "subresource().patch": lambda c: c.subresource("scale").patch(CM, "a", {}, dry=True),
}


@pytest.mark.parametrize("verb", MISSPELT)
async def test_a_misspelt_option_is_a_type_error_naming_it_before_anything_is_sent(
    verb: str,
) -> None:
    config, counting = counted(fake_api())
    async with AsyncClient(config) as client:
        with pytest.raises(TypeError, match=r"got an unexpected option '\w+'; it takes "):
            await MISSPELT[verb](client)
    assert counting.sent == []


def test_the_watch_refuses_a_misspelt_option_when_it_is_opened() -> None:
    with BlockingClient(FakeAPI().config()) as client, pytest.raises(TypeError, match="bookmarks"):
        client.watch(CM, bookmarks=True)


async def test_the_cached_client_refuses_a_misspelt_option_by_name() -> None:
    async with AsyncClient(FakeAPI().config()) as api:
        cached = CachedClient(api, InformerFactory(api))
        with pytest.raises(TypeError, match="'namspace'"):
            await cached.get(CM, "a", namspace="ns")
        with pytest.raises(TypeError, match="'field_selectr'"):
            await cached.list(CM, field_selectr="a=b")


async def test_the_client_field_owner_manages_writes_that_name_no_manager() -> None:
    config, counting = counted(fake_api(), field_owner="owner-x")
    async with AsyncClient(config) as client:
        await client.create(configmap("a"))
        await client.update(configmap("a"))
        await client.patch(CM, "a", {"data": {"k": "v"}}, namespace="ns", field_manager="other")
        await client.apply(configmap("b"))  # no field_manager: the owner applies
        web = await client.create(deployment("web"), field_manager="creator")
        await client.status().update(web, dry_run=True)
    assert [query for query in counting.queries if "fieldManager" in query] == [
        {"fieldManager": "owner-x"},
        {"fieldManager": "owner-x"},
        {"fieldManager": "other"},
        {"fieldManager": "owner-x"},
        {"fieldManager": "creator"},
        {"fieldManager": "owner-x", "dryRun": "All"},
    ]


async def test_an_apply_without_any_manager_says_how_to_name_one() -> None:
    config, counting = counted(fake_api())
    async with AsyncClient(config) as client:
        with pytest.raises(ValueError, match=r"field_manager= or set ClientConfig.field_owner"):
            await client.apply(configmap("a"))
    assert counting.sent == []


async def test_force_outside_an_apply_is_refused_before_sending() -> None:
    config, counting = counted(fake_api())
    async with AsyncClient(config) as client:
        with pytest.raises(ValueError, match="force=True is for server-side apply"):
            await client.patch(CM, "a", {}, namespace="ns", force=True)
    assert counting.sent == []


def test_the_query_parameters_of_options() -> None:
    assert options_module.query_params(
        {
            "namespace": "ns",
            "label_selector": {"app": "web"},
            "matching_fields": {"metadata.name": "a,b"},
            "limit": 5,
            "continue_": "tok",
            "dry_run": True,
            "field_validation": "Strict",
            "force": False,
        },
        field_manager="owner",
    ) == {
        "labelSelector": "app=web",
        "limit": 5,
        "continue": "tok",
        "dryRun": "All",
        "fieldValidation": "Strict",
        "force": None,
        "fieldManager": "owner",
        "fieldSelector": r"metadata.name=a\,b",
    }
    with pytest.raises(ValueError, match="field_validation must be one of"):
        options_module.query_params({"field_validation": "strict"})


def _declared_options() -> dict[str, list[str]]:
    # option name -> the TypedDicts of _options.py that declare it
    tree = ast.parse((CLIENT_SRC / "_options.py").read_text())
    declared: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    declared.setdefault(item.target.id, []).append(node.name)
    return declared


def test_each_option_is_declared_once() -> None:
    declared = _declared_options()
    assert "field_validation" in declared
    assert {name: where for name, where in declared.items() if len(where) > 1} == {}


INTERFACE_MODULES = [
    CLIENT_SRC / "_interfaces.py",
    CLIENT_SRC / "_interfaces_blocking.py",
    CLIENT_SRC / "_subresource.py",
    CLIENT_SRC.parent / "runtime" / "_cache_client.py",
]


@pytest.mark.parametrize("path", INTERFACE_MODULES, ids=[p.name for p in INTERFACE_MODULES])
def test_no_verb_spells_an_option_as_its_own_parameter(path: Path) -> None:
    # The verbs take their bundle (``**options: Unpack[...]``); a verb's parameter named like
    # an option would be a second declaration of it.
    options = set(_declared_options())
    spelled = [
        f"{node.name}({arg.arg})"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.args.kwarg is not None  # a verb: it takes a bundle
        for arg in (*node.args.args, *node.args.kwonlyargs)
        if arg.arg in options
    ]
    assert spelled == []
