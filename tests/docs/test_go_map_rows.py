"""docs/guides/go-map.md's rows for events, the context logger and the metrics say what the
code does: each row below is read from the page and its claim checked.

Upstream of the rows: controller-runtime pkg/internal/recorder (0.23: ``GetEventRecorder``
writes events.k8s.io/v1, ``GetEventRecorderFor`` core v1), client-go tools/events and
tools/record.
"""

from __future__ import annotations

import inspect
import logging

from docs_blocks import DOCS

from kubectrl.client import AsyncClient
from kubectrl.client.metrics import RestClientMetrics
from kubectrl.events import (
    CORE_V1,
    EVENTS_V1,
    ClientEventSink,
    EventBroadcaster,
    EventRecorder,
)
from kubectrl.runtime import Controller, Manager, Request
from kubectrl.runtime.log import FIELDS, uninstall
from kubectrl.testing import FakeAPI, eventually

PAGE = (DOCS / "guides" / "go-map.md").read_text(encoding="utf-8")


def row(go: str) -> str:
    """The page's row whose Go column starts with ``go``."""
    (found,) = [line for line in PAGE.splitlines() if line.startswith(f"| `{go}")]
    return found


def test_event_recorder_rows() -> None:
    assert "`manager.event_recorder(name)`" in row("mgr.GetEventRecorder(name)")
    assert '`manager.event_recorder(name, api="v1")`' in row("mgr.GetEventRecorderFor(name)")
    manager = Manager(FakeAPI().config())
    assert manager.event_recorder("foo").api == EVENTS_V1
    assert manager.event_recorder("foo", api="v1").api == CORE_V1


def test_eventf_row_takes_action_and_related_keywords() -> None:
    assert "action=action, related=related" in row("recorder.Eventf(")
    parameters = inspect.signature(EventRecorder.eventf).parameters
    assert parameters["action"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["related"].kind is inspect.Parameter.KEYWORD_ONLY


def test_broadcaster_rows() -> None:
    assert "api=EVENTS_V1" in row("events.NewBroadcaster(")
    assert "core v1, the default" in row("record.EventRecorder")
    client = AsyncClient(FakeAPI().config())
    assert EventBroadcaster(ClientEventSink(client)).api == CORE_V1
    tools_events = EventBroadcaster(ClientEventSink(client), api=EVENTS_V1)
    assert tools_events.new_recorder("foo").api == EVENTS_V1


async def test_log_from_context_row() -> None:
    """pkg/internal/controller/controller.go puts a logger with the reconcile's values in the
    context; here a plain logger's records made inside a reconcile carry them."""
    text = row("log.FromContext(ctx)")
    assert all(f"`{field}`" in text for field in FIELDS)
    fields = ["controller", "namespace", "object_name"]
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("go_map.reconciler")
    logger.addHandler(Keep())

    async def reconcile(request: Request) -> None:
        logger.warning("inside")

    controller = Controller("go-map", reconcile)
    await controller.start()
    controller.enqueue(Request("ns", "obj"))
    await eventually(lambda: records)
    await controller.stop()
    (record,) = records
    record.getMessage()
    assert {f: getattr(record, f) for f in fields} == {
        "controller": "go-map",
        "namespace": "ns",
        "object_name": "obj",
    }
    uninstall()


async def test_metrics_rows() -> None:
    """controller-runtime pkg/internal/controller/metrics (``ReconcileTimeouts``) and
    pkg/metrics/client_go_adapter.go (client-go's ``rest_client_*``): the rows' names are on a
    manager's registry."""
    assert "`..._reconcile_timeouts_total`" in row("ctrlmetrics")
    rest = row("k8s.io/client-go/tools/metrics")
    assert "`kubectrl.client.metrics.RestClientMetrics(registry)`" in rest
    api = FakeAPI()
    manager = Manager(api.config())
    registry = manager.registry
    assert registry is not None

    def nothing(request: Request) -> None:
        return None

    Controller("rows", nothing, registry=registry)
    timeouts = "controller_runtime_reconcile_timeouts_total"
    assert registry.get_sample_value(timeouts, {"controller": "rows"}) == 0
    await manager.api_reader.list(("v1", "ConfigMap"), namespace="default")
    host = {"host": "fake-apiserver"}
    assert registry.get_sample_value(
        "rest_client_requests_total", {"code": "200", "method": "GET", **host}
    )
    assert registry.get_sample_value(
        "rest_client_request_duration_seconds_count", {"verb": "GET", **host}
    )
    assert RestClientMetrics.__module__ == "kubectrl.client.metrics"
    assert manager._rest_metrics is not None
    manager._rest_metrics.close()
