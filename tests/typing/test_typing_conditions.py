"""Type-checked by tests/typing/test_mypy_passes.py: the condition helpers keep the list's type.

A list of :class:`~kubectrl.conditions.Condition`, of ``V1Condition`` or of dicts gives back its
own kind of condition, and a new condition of another kind is a type error.
"""

from __future__ import annotations

import datetime
from typing import Any

from kubernetes.client.models import V1Condition
from typing_extensions import assert_type

from kubectrl._internal.clock import FakeClock
from kubectrl.conditions import (
    Condition,
    find_status_condition,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def check_models(conditions: list[Condition], v1: list[V1Condition]) -> None:
    ready = Condition(
        type="Ready", status="True", reason="Up", message="", last_transition_time=NOW
    )
    assert_type(set_status_condition(conditions, ready, now=FakeClock()), bool)
    assert_type(find_status_condition(conditions, "Ready"), Condition | None)
    assert_type(find_status_condition(v1, "Ready"), V1Condition | None)
    assert_type(remove_status_condition(v1, "Ready"), bool)
    assert_type(is_status_condition_true(conditions, "Ready"), bool)
    set_status_condition(conditions, {"type": "Ready"})  # type: ignore[misc]


def check_dicts(obj: dict[str, Any], conditions: list[dict[str, Any]]) -> None:
    assert_type(set_status_condition(conditions, {"type": "Ready", "status": "True"}), bool)
    assert_type(find_status_condition(conditions, "Ready"), dict[str, Any] | None)
    set_status_condition(obj["status"]["conditions"], {"type": "Ready", "status": "True"}, now=NOW)
    assert_type(is_status_condition_true(obj["status"]["conditions"], "Ready"), bool)
