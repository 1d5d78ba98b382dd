"""A default the field's own constraints refuse is refused by the generator, naming the field.

The API server validates every ``default`` of a CRD against the schema it sits in and refuses the
CRD at install (k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting/validation.go,
from pkg/apis/apiextensions/validation/validation.go); pydantic does not validate defaults, so
without this check ``Field(ge=1)`` with ``= 0`` generated ``minimum: 1`` beside ``default: 0``
and failed only at install (tests/integration/crd/test_default_violates_schema.py shows both
servers refusing that CRD).
"""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from kubectrl import crd
from kubectrl.crd import UnsupportedModelError
from kubectrl.resources import CustomResource, ResourceModel


def _generate(spec_model: type[ResourceModel]) -> dict[str, Any]:
    class Widget(CustomResource, group="example.com", version="v1", kind="Widget"):
        spec: spec_model  # type: ignore[valid-type]

    return crd.generate(Widget)


class BelowMinimum(ResourceModel):
    size: Annotated[int, Field(ge=1)] = 0


class TooLong(ResourceModel):
    name: Annotated[str, Field(max_length=3)] = "four"


class NotInEnum(ResourceModel):
    mode: Literal["Fast", "Slow"] = "Medium"  # type: ignore[assignment]


class Item(ResourceModel):
    weight: Annotated[int, Field(le=10)] = 1


class FactoryBreaksNested(ResourceModel):
    items: list[Item] = Field(default_factory=lambda: [Item.model_construct(weight=11)])


class OptionalBelowMinimum(ResourceModel):
    replicas: Annotated[int, Field(ge=1)] | None = 0


@pytest.mark.parametrize(
    ("model", "field", "problem"),
    [
        (BelowMinimum, "Widget.spec.size (field BelowMinimum.size)", "greater than or equal to 1"),
        (TooLong, "Widget.spec.name (field TooLong.name)", "at most 3 characters"),
        (NotInEnum, "Widget.spec.mode (field NotInEnum.mode)", "'Fast' or 'Slow'"),
        (FactoryBreaksNested, "Widget.spec.items", "less than or equal to 10"),
        (OptionalBelowMinimum, "Widget.spec.replicas", "greater than or equal to 1"),
    ],
)
def test_a_default_the_field_refuses_is_refused_naming_the_field(
    model: type[ResourceModel], field: str, problem: str
) -> None:
    with pytest.raises(UnsupportedModelError) as caught:
        _generate(model)
    message = str(caught.value)
    assert message.startswith(field), message
    assert problem in message, message
    assert "refuses such a CRD at install" in message, message


class Fitting(ResourceModel):
    size: Annotated[int, Field(ge=1)] = 1
    name: Annotated[str, Field(max_length=3)] = "abc"
    mode: Literal["Fast", "Slow"] = "Slow"
    items: list[Item] = Field(default_factory=lambda: [Item(weight=10)])
    since: datetime.datetime = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    replicas: Annotated[int, Field(ge=1)] | None = None


def test_defaults_that_fit_are_written() -> None:
    spec = _generate(Fitting)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][
        "spec"
    ]["properties"]
    assert spec["size"] == {"type": "integer", "minimum": 1, "default": 1}
    assert spec["name"]["default"] == "abc"
    assert spec["mode"]["default"] == "Slow"
    assert spec["items"]["default"] == [{"weight": 10}]
    assert spec["since"]["default"] == "2026-01-01T00:00:00Z"
    assert "default" not in spec["replicas"]
