"""Log lines written inside a reconcile carry controller, namespace, name and reconcile id,
with no code from the reconciler, as controller-runtime's logger from the context does.

Upstream: controller-runtime pkg/internal/controller/controller.go (``reconcileHandler``: the
logger gets ``controller``, ``controllerGroup``, ``controllerKind``, the object's ``namespace``
and ``name`` and a ``reconcileID`` and is put in the context), pkg/log/log.go (``FromContext``).
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Iterator

import pytest

from kubectrl.client import AsyncClient
from kubectrl.runtime import Builder, Controller, Manager, Request
from kubectrl.runtime.log import FIELDS, installed, reconcile_fields, uninstall
from kubectrl.testing import FakeAPI, eventually, run_manager

R = Request("ns", "web")
FORMAT = "%(controller)s|%(namespace)s|%(object_name)s|%(reconcile_id)s|%(message)s"


class Lines(logging.Handler):
    """Formats each record as it arrives, as a real handler does."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter(FORMAT, defaults=dict.fromkeys(FIELDS, "-")))
        self.lines: list[str] = []
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.lines.append(self.format(record))


@pytest.fixture
def lines() -> Iterator[Lines]:
    handler = Lines()
    for name in ("user.reconciler", "kubectrl.runtime.controller"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    yield handler
    for name in ("user.reconciler", "kubectrl.runtime.controller"):
        logging.getLogger(name).removeHandler(handler)
    uninstall()


async def run_one(reconcile: object, lines: Lines, marker: str) -> list[str]:
    c = Controller("foos", reconcile)  # type: ignore[arg-type]
    await c.start()
    c.enqueue(R)
    await eventually(lambda: any(marker in line for line in lines.lines))
    await c.stop()
    return [line for line in lines.lines if line.endswith(marker)]


async def test_a_plain_logger_in_an_async_reconcile_carries_the_fields(lines: Lines) -> None:
    seen: list[dict[str, str]] = []

    async def reconcile(request: Request) -> None:
        seen.append(reconcile_fields())
        logging.getLogger("user.reconciler").info("creating deployment")

    (line,) = await run_one(reconcile, lines, "creating deployment")
    controller, namespace, name, reconcile_id, _ = line.split("|")
    assert (controller, namespace, name) == ("foos", "ns", "web")
    assert reconcile_id == seen[0]["reconcile_id"]
    assert len(reconcile_id) == 36  # a uuid, as controller-runtime's reconcileID
    # The controller's own "Reconciling" line has the same id.
    assert any(line.startswith(f"foos|ns|web|{reconcile_id}|Reconciling") for line in lines.lines)


async def test_a_def_reconciler_in_its_thread_carries_the_fields(lines: Lines) -> None:
    def reconcile(request: Request) -> None:
        logging.getLogger("user.reconciler").warning("in a thread")

    (line,) = await run_one(reconcile, lines, "in a thread")
    assert line.startswith("foos|ns|web|")


async def test_an_extra_of_ones_own_wins_and_does_not_raise(lines: Lines) -> None:
    async def reconcile(request: Request) -> None:
        logging.getLogger("user.reconciler").info("mine", extra={"reconcile_id": "my-id"})

    (line,) = await run_one(reconcile, lines, "mine")
    assert line == "foos|ns|web|my-id|mine"


async def test_records_outside_a_reconcile_get_nothing(lines: Lines) -> None:
    async def reconcile(request: Request) -> None:
        logging.getLogger("user.reconciler").info("inside")

    await run_one(reconcile, lines, "inside")
    assert installed()
    logging.getLogger("user.reconciler").info("outside")
    record = lines.records[-1]
    assert record.getMessage() == "outside"
    assert not hasattr(record, "reconcile_id")
    assert reconcile_fields() == {}


async def test_a_record_read_before_formatting_and_pickled_keeps_the_fields(
    lines: Lines,
) -> None:
    async def reconcile(request: Request) -> None:
        logging.getLogger("user.reconciler").info("pickled")

    await run_one(reconcile, lines, "pickled")
    (record,) = [r for r in lines.records if r.msg == "pickled"]
    copy = pickle.loads(pickle.dumps(record))  # a QueueHandler to another process
    assert type(copy) is logging.LogRecord
    assert (copy.controller, copy.object_name) == ("foos", "web")
    assert copy.reconcile_id == record.reconcile_id


async def test_uninstall_puts_the_previous_factory_back(lines: Lines) -> None:
    async def reconcile(request: Request) -> None:
        logging.getLogger("user.reconciler").info("first")

    await run_one(reconcile, lines, "first")
    uninstall()
    assert not installed()
    assert logging.getLogRecordFactory() is logging.LogRecord


async def test_a_builders_controller_adds_its_group_and_kind(lines: Lines) -> None:
    """controller-runtime's logger carries ``controllerGroup`` and ``controllerKind``, the
    ``For`` kind's (pkg/builder/controller.go sets them on the controller's logger)."""
    api = FakeAPI()
    manager = Manager(api.config())
    seen: list[dict[str, str]] = []

    async def reconcile(request: Request) -> None:
        seen.append(reconcile_fields())
        logging.getLogger("user.reconciler").info("deploying")

    Builder(manager).for_(("apps/v1", "Deployment")).complete(reconcile)
    async with run_manager(manager), AsyncClient(api.config()) as client:
        await client.create(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
                    },
                },
            }
        )
        await eventually(lambda: seen)
    assert (seen[0]["controller_group"], seen[0]["controller_kind"]) == ("apps", "Deployment")
    (record,) = [r for r in lines.records if r.msg == "deploying"][:1]
    record.getMessage()
    assert (record.controller_group, record.controller_kind) == ("apps", "Deployment")
    assert record.object_name == "web"
