"""EventRecorder keeps its promise: a bad event is recorded as well as it can be or dropped, never
raised into the reconcile that reported it."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.events import NORMAL, EventRecorder

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}}


class Collect:
    """Stands in for the broadcaster: keeps what the recorder hands over."""

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.events: list[dict[str, Any]] = []

    def unique_name_suffix(self) -> str:
        return str(len(self.events))

    def action(self, event: dict[str, Any]) -> bool:
        self.events.append(event)
        return True


def recorder() -> tuple[EventRecorder, Collect]:
    sink = Collect()
    return EventRecorder(sink, component="ctrl"), sink


def messages(sink: Collect) -> list[str]:
    return [e["message"] for e in sink.events]


def format_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "message_format", None) is not None]


def test_a_verb_of_the_wrong_type_shows_the_argument_instead_of_raising(
    caplog: pytest.LogCaptureFixture,
) -> None:
    r, sink = recorder()
    with caplog.at_level(logging.WARNING, logger="kubectrl.events"):
        r.eventf(CM, NORMAL, "R", "%d replicas", "many")
    assert messages(sink) == ["%!d(str=many) replicas"]
    (record,) = format_warnings(caplog)
    assert record.levelno == logging.WARNING
    assert record.message_format == "%d replicas"  # type: ignore[attr-defined]
    assert record.reason == "R"  # type: ignore[attr-defined]
    assert "%d replicas" in record.getMessage()


@pytest.mark.parametrize(
    ("message_format", "args", "expected"),
    [
        ("%s and %s", ("a",), "a and %!s(MISSING)"),
        ("%s", ("a", "b", 3), "a%!(EXTRA str=b, int=3)"),
        ("%z %s", (1, "x"), "%!z(int=1) x"),
        ("100%", (1,), "100%!(NOVERB)%!(EXTRA int=1)"),
        ("%*d|%.*f|%s", ("w", 5, "p", 1.5, "x"), "%!(BADWIDTH)5|%!(BADPREC)1.500000|x"),
        ("%(name)s is %(age)d", ({"name": "ann", "age": "old"},), "ann is %!d(str=old)"),
        ("%(nope)s", ({"name": "ann"},), "%!s(MISSING 'nope')"),
        ("%d%%", ("x",), "%!d(str=x)%"),
    ],
)
def test_each_problem_is_shown_where_it_is(
    message_format: str, args: tuple[object, ...], expected: str
) -> None:
    r, sink = recorder()
    r.eventf(CM, NORMAL, "R", message_format, *args)
    assert messages(sink) == [expected]


def test_an_argument_whose_str_raises_is_named_by_its_type() -> None:
    class Grumpy:
        def __str__(self) -> str:
            raise ValueError("no")

        __repr__ = __str__

    r, sink = recorder()
    r.eventf(CM, NORMAL, "R", "got %s", Grumpy())
    assert messages(sink) == ["got %!s(Grumpy=<str() raised ValueError>)"]


def test_good_formats_are_python_percent_formatting() -> None:
    r, sink = recorder()
    r.eventf(CM, NORMAL, "R", "%05.1f|%-3d|%%|%r|%x", 3.14159, 7, "q", 255)
    r.eventf(CM, NORMAL, "R", "%(name)s has %(n)d", {"name": "web", "n": 3})
    r.eventf(CM, NORMAL, "R", "no arguments, so 100% as written")
    assert messages(sink) == [
        "003.1|7  |%|'q'|ff",
        "web has 3",
        "no arguments, so 100% as written",
    ]


def test_a_bad_format_is_logged_once_not_per_event(caplog: pytest.LogCaptureFixture) -> None:
    r, sink = recorder()
    with caplog.at_level(logging.WARNING, logger="kubectrl.events"):
        for _ in range(3):
            r.eventf(CM, NORMAL, "R", "%d", "many")
        r.eventf(CM, NORMAL, "R", "%d and %d", 1)
    assert len(sink.events) == 4  # every event is still recorded
    assert [w.message_format for w in format_warnings(caplog)] == [  # type: ignore[attr-defined]
        "%d",
        "%d and %d",
    ]


def test_an_object_that_is_neither_a_dict_nor_a_model_is_dropped_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    r, sink = recorder()
    with caplog.at_level(logging.ERROR, logger="kubectrl.events"):
        r.event(42, NORMAL, "R", "m")  # type: ignore[arg-type]
        r.event({"kind": "ConfigMap", "metadata": "not a mapping"}, NORMAL, "R", "m")
    assert sink.events == []
    assert len([rec for rec in caplog.records if rec.levelno == logging.ERROR]) == 2
