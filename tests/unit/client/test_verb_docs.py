"""Each verb is documented once, on its protocol declaration, and every client shows that text:
``help(AsyncClient.get)``, the blocking twins derived from it, and the protocols themselves
(which mkdocstrings renders in the API reference)."""

from __future__ import annotations

import ast
import inspect
import pydoc
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient, BlockingClient, _interfaces
from kubectrl.client._documented import documented_by
from kubectrl.client.interfaces import Pager, Reader, Writer

VERBS = {
    "get": Reader.get,
    "list": Reader.list,
    "list_pages": Pager.list_pages,
    "list_items": Pager.list_items,
    "create": Writer.create,
    "update": Writer.update,
    "patch": Writer.patch,
    "apply": Writer.apply,
    "patch_merge_from": Writer.patch_merge_from,
    "delete": Writer.delete,
    "delete_collection": Writer.delete_collection,
}


def test_every_protocol_method_has_a_docstring() -> None:
    tree = ast.parse(Path(_interfaces.__file__).read_text())
    missing = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                overload = any(ast.unparse(d) == "overload" for d in node.decorator_list)
                if not overload and ast.get_docstring(node) is None:
                    missing.append(f"{cls.name}.{node.name}")
    assert missing == []


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_async_and_blocking_clients_show_the_protocol_docstring(verb: str) -> None:
    protocol_doc = inspect.getdoc(VERBS[verb])
    assert protocol_doc
    assert inspect.getdoc(getattr(AsyncClient, verb)) == protocol_doc
    first_line = protocol_doc.splitlines()[0]
    assert first_line in (inspect.getdoc(getattr(BlockingClient, verb)) or "")
    assert f"{verb}(" in pydoc.render_doc(getattr(AsyncClient, verb), renderer=pydoc.plaintext)


def test_documented_by_refuses_an_undocumented_declaration() -> None:
    def undocumented() -> None:
        pass

    with pytest.raises(TypeError, match="undocumented has no docstring"):
        documented_by(undocumented)(lambda: None)
