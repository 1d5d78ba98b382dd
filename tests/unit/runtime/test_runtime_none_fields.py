"""A reconcile that trips over an unset optional field: the logged error names the field.

A model that keeps a Go CRD's optional fields has ``X | None = None`` (kubectrl.models.from_crd
writes every field not in ``required`` so, as controller-gen's ``omitempty`` pointers are). Go
reads an unset ``*int32`` through a helper or gets its zero value from a non-pointer field and
settles; Python raises ``TypeError: '<' not supported between instances of 'NoneType' and 'int'``
and the controller requeues the key with backoff, forever. The error is the same; what changes
is the log: controller-runtime's "Reconciler error" (pkg/internal/controller/controller.go
``reconcileHandler``) here also says which model field was None and what Go would have read.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.resources import CustomResource, ResourceModel
from kubectrl.runtime import Controller, Request

R = Request("ns", "a")


class WidgetTemplate(ResourceModel):
    image: str | None = None


class WidgetSpec(ResourceModel):
    replicas: int | None = None
    paused: bool | None = None
    template: WidgetTemplate | None = None


class Widget(CustomResource, group="example.com", version="v1", kind="Widget"):
    spec: WidgetSpec | None = None


async def eventually(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        await asyncio.sleep(0.001)


async def reconcile_error(reconcile: Callable[[Request], Any], caplog: Any) -> logging.LogRecord:
    controller = Controller("widgets", reconcile, clock=FakeClock())
    await controller.start()
    try:
        with caplog.at_level(logging.ERROR, "kubectrl.runtime.controller"):
            controller.enqueue(R)
            await eventually(lambda: controller.queue.num_requeues(R) == 1)
    finally:
        await controller.stop()
    [record] = [r for r in caplog.records if r.getMessage().startswith("Reconciler error")]
    return record


def widget() -> Widget:
    return Widget.model_validate({"metadata": {"name": "a"}, "spec": {}})


async def test_a_comparison_with_an_unset_int_names_the_field(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def reconcile(request: Request) -> None:
        w = widget()
        if w.spec is not None and w.spec.replicas < 3:  # type: ignore[operator]
            return

    record = await reconcile_error(reconcile, caplog)
    message = record.getMessage()
    assert "'<' not supported between instances of 'NoneType' and 'int'" in message
    assert "Widget.spec.replicas is None" in message, message
    assert "(unset on the object)" in message, message
    assert "zero value 0" in message, message
    assert "w.spec.replicas or 0" in message, message
    assert getattr(record, "none_field", None) == "Widget.spec.replicas"


async def test_an_attribute_of_an_unset_model_names_the_field(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def reconcile(request: Request) -> None:  # a sync reconcile runs in a thread: same log
        w = widget()
        assert w.spec is not None
        print(w.spec.template.image)  # type: ignore[union-attr]

    record = await reconcile_error(reconcile, caplog)
    message = record.getMessage()
    assert "'NoneType' object has no attribute 'image'" in message
    assert "Widget.spec.template is None" in message, message
    assert "WidgetTemplate()" in message, message
    assert getattr(record, "none_field", None) == "Widget.spec.template"


async def test_the_field_is_found_through_self_and_a_helper_frame(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Reconciler:
        def __init__(self) -> None:
            self.widget = widget()

        def wanted(self, spec: WidgetSpec) -> int:
            return spec.replicas + 1  # type: ignore[operator]

        async def __call__(self, request: Request) -> None:
            assert self.widget.spec is not None
            self.wanted(self.widget.spec)

    record = await reconcile_error(Reconciler(), caplog)
    message = record.getMessage()
    assert "unsupported operand type(s) for +: 'NoneType' and 'int'" in message
    assert "WidgetSpec.replicas is None" in message, message
    assert "spec.replicas or 0" in message, message


async def test_an_error_that_is_not_about_none_is_left_as_it_is(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def reconcile(request: Request) -> None:
        w = widget()
        assert w.spec is not None
        w.spec.replicas = 2
        raise TypeError(f"wanted {w.spec.replicas} of something else")

    record = await reconcile_error(reconcile, caplog)
    assert "is None" not in record.getMessage()
    assert getattr(record, "none_field", None) is None


async def test_a_none_that_is_no_model_field_is_not_blamed_on_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def reconcile(request: Request) -> None:
        w = widget()
        limit = None
        assert w.spec is not None
        w.spec.replicas = 1
        if w.spec.replicas < limit:  # type: ignore[operator]
            return

    record = await reconcile_error(reconcile, caplog)
    assert "is None" not in record.getMessage()
    assert getattr(record, "none_field", None) is None


async def test_an_expression_over_several_lines_is_read_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def reconcile(request: Request) -> None:
        w = widget()
        assert w.spec is not None
        total = (
            1 + w.spec.replicas  # type: ignore[operator]
        )
        print(total)

    record = await reconcile_error(reconcile, caplog)
    assert getattr(record, "none_field", None) == "Widget.spec.replicas", record.getMessage()
