"""Label and annotation filters on change handlers, as kopf's (``kopf/_core/intents/filters.py``
and ``docs/filters.rst``: a value must equal, ``kopf.PRESENT``/``kopf.ABSENT``, or a callback of
the value) and as the daemons' filters spell them here: a string equals, ``True`` (or ``None``)
means present, ``False`` absent, a callable is called with the value (``None`` when missing)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.operator import Operator
from kubectrl.testing import FakeAPI, eventually, run_manager

from .conftest import CM, new_manager


async def test_labels_and_annotations_filter_by_value_presence_absence_and_callable(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    ran: list[str] = []

    filters: dict[str, dict[str, Any]] = {
        "label equal": {"labels": {"app": "web"}},
        "label other": {"labels": {"app": "db"}},
        "label present": {"labels": {"app": True}},
        "label present (None)": {"labels": {"app": None}},
        "label absent": {"labels": {"tier": False}},
        "label not absent": {"labels": {"app": False}},
        "label callable": {"labels": {"app": lambda v: v is not None and v.startswith("w")}},
        "annotation equal": {"annotations": {"note": "hi"}},
        "annotation present": {"annotations": {"note": True}},
        "annotation missing": {"annotations": {"other": True}},
        "annotation absent": {"annotations": {"other": False}},
        "annotation callable": {"annotations": {"other": lambda v: v is None}},
        "both": {"labels": {"app": "web"}, "annotations": {"note": "bye"}},
    }
    for handler_id, options in filters.items():

        def handler(handler_id: str = handler_id, **_: Any) -> None:
            ran.append(handler_id)

        operator.on_create(CM, id=handler_id, **options)(handler)

    async with run_manager(manager):
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "a",
                    "namespace": "default",
                    "labels": {"app": "web"},
                    "annotations": {"note": "hi"},
                },
            }
        )

        async def handled() -> bool:
            obj = await client.get(CM, "a", namespace="default")
            annotations = obj["metadata"].get("annotations", {})
            return "operator.kubectrl.io/last-handled-configuration" in annotations

        await eventually(handled, clock=clock)
    assert sorted(ran) == sorted(
        [
            "label equal",
            "label present",
            "label present (None)",
            "label absent",
            "label callable",
            "annotation equal",
            "annotation present",
            "annotation absent",
            "annotation callable",
        ]
    )


def test_a_bad_filter_is_refused_naming_it() -> None:
    operator = Operator()
    with pytest.raises(TypeError, match=r"annotations\['note'\] must be a string, True"):
        operator.on_update(CM, annotations={"note": 1})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="labels must be a mapping"):
        operator.on_create(CM, labels=["app"])  # type: ignore[arg-type]
