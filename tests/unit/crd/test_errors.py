"""What a CRD cannot express is refused with an error naming the model and the field.

controller-tools refuses the same things in pkg/crd/schema.go (e.g. "unsupported AST kind",
recursive types only through $ref which a structural schema forbids) and pkg/crd/flatten.go.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import Field

from kubectrl import crd
from kubectrl.crd import UnsupportedModelError
from kubectrl.errors import KubectrlError
from kubectrl.resources import (
    CustomResource,
    EmbeddedResource,
    ListType,
    MapType,
    ResourceModel,
)


def holder(spec_model: type[ResourceModel]) -> type[CustomResource]:
    class Holder(CustomResource, group="example.com", version="v1", kind="Holder"):
        spec: spec_model  # type: ignore[valid-type]

    return Holder


def spec_with(annotation: Any) -> type[ResourceModel]:
    return type("BadSpec", (ResourceModel,), {"__annotations__": {"value": annotation}})


class Node(ResourceModel):
    children: list[Node] = Field(default_factory=list)


class A(ResourceModel):
    b: Optional[B] = None  # noqa: UP045 (spelled the old way on purpose)


class B(ResourceModel):
    a: A | None = None


class Left(ResourceModel):
    x: int = 0


class Right(ResourceModel):
    y: str = ""


class Keyed(ResourceModel):
    name: str | None = None
    port: int


@pytest.mark.parametrize(
    ("annotation", "where", "advice"),
    [
        (int | str, "Holder.spec.value", "IntOrString"),
        (Left | Right, "Holder.spec.value", "optional field per variant"),
        (set[Left], "Holder.spec.value", "ListType('map'"),
        (tuple[int, str], "Holder.spec.value", "use a model with named fields"),
        (bytes, "Holder.spec.value", "has no CRD schema"),
        (dict[int, str], "Holder.spec.value", "map keys must be str"),
        (list[list[bytes]], "Holder.spec.value[][]", "has no CRD schema"),
        (dict[str, complex], "Holder.spec.value{}", "has no CRD schema"),
        (Literal["a", 1], "Holder.spec.value", "enum values of mixed"),
        (Annotated[int, Field(pattern="^a$")], "Holder.spec.value", "pattern applies to str"),
        (Annotated[int, Field(max_length=3)], "Holder.spec.value", "applies to str, list or dict"),
        (Annotated[str, ListType("set")], "Holder.spec.value", "ListType applies to list"),
        (
            Annotated[str, MapType("atomic")],
            "Holder.spec.value",
            "MapType applies to model or dict",
        ),
        (Annotated[str, EmbeddedResource()], "Holder.spec.value", "EmbeddedResource applies"),
        (
            Annotated[list[Keyed], ListType("map", keys=("nope",))],
            "Holder.spec.value",
            "list map key 'nope' is not a field",
        ),
        (
            Annotated[list[Keyed], ListType("map", keys=("name",))],
            "Holder.spec.value",
            "list map key 'name' must be a required field or have a default",
        ),
    ],
    ids=repr,
)
def test_unsupported_field_types_name_model_field_and_advice(
    annotation: Any, where: str, advice: str
) -> None:
    with pytest.raises(UnsupportedModelError) as caught:
        crd.generate(holder(spec_with(annotation)))
    message = str(caught.value)
    assert message.startswith(f"{where} (field BadSpec.value): "), message
    assert advice in message


def test_recursive_types_are_refused_with_the_cycle() -> None:
    with pytest.raises(
        UnsupportedModelError,
        match=r"^Holder\.spec\.children\[\] \(field Node\.children\): recursive type "
        r"\(Node -> Node\)",
    ):
        crd.generate(holder(Node))
    with pytest.raises(
        UnsupportedModelError,
        match=r"^Holder\.spec\.b\.a \(field B\.a\): recursive type \(A -> B -> A\)",
    ):
        crd.generate(holder(A))


def test_the_error_is_a_kubectrl_error_and_a_value_error() -> None:
    assert issubclass(UnsupportedModelError, KubectrlError)
    assert issubclass(UnsupportedModelError, ValueError)


class V1(CustomResource, group="example.com", version="v1", kind="Thing"):
    pass


class V2(CustomResource, group="example.com", version="v2", kind="Thing"):
    pass


class V1Stored(CustomResource, group="example.com", version="v1", kind="Thing", storage=True):
    pass


class V2Stored(CustomResource, group="example.com", version="v2", kind="Thing", storage=True):
    pass


class Other(CustomResource, group="example.com", version="v2", kind="Other"):
    pass


class OtherGroup(CustomResource, group="other.example.com", version="v2", kind="Thing"):
    pass


@pytest.mark.parametrize(
    ("models", "storage", "message"),
    [
        ((), None, "at least one CustomResource model"),
        ((V1, V2), None, "V1, V2: no storage version; declare storage=True on one model"),
        ((V1Stored, V2Stored), None, "several versions declare storage=True (v1, v2)"),
        ((V1, V1Stored), None, "each model must declare a different version"),
        ((V1, Other), None, "Other: kind 'Other' differs from V1's 'Thing'"),
        ((V1, OtherGroup), None, "OtherGroup: group 'other.example.com' differs"),
        ((V1, V2), "v9", "storage version 'v9' is not one of V1, V2"),
        ((ResourceModel,), None, "is not a CustomResource subclass"),
        ((int,), None, "is not a CustomResource subclass"),
    ],
)
def test_model_sets_a_crd_cannot_be_made_of(
    models: tuple[Any, ...], storage: str | None, message: str
) -> None:
    with pytest.raises(UnsupportedModelError) as caught:
        crd.generate(*models, storage=storage)
    assert message in str(caught.value)


def test_an_unresolvable_forward_reference_is_named() -> None:
    class Holder(CustomResource, group="example.com", version="v1", kind="Holder"):
        spec: NoSuchSpec  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(UnsupportedModelError, match=r"^Holder: Holder is not fully defined"):
        crd.generate(Holder)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"group": "example.com", "kind": "X"}, "give group, version and kind together"),
        ({"group": "g", "version": "v1", "kind": "X", "scope": "Global"}, "scope must be"),
        ({"group": "g", "version": "v1", "kind": "X", "short_names": "x"}, "not a string"),
        ({"group": "g", "version": "v1", "kind": "X", "plurl": "xs"}, "plurl"),
    ],
)
def test_bad_declarations_fail_at_class_creation(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        type("Bad", (CustomResource,), {}, **kwargs)
