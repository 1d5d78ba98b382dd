"""kopf's examples (github.com/nolar/kopf, ``examples/NN-*/example.py``) ported to
``kubectrl.operator`` in ``examples/kopf/``: each port is no longer than kopf's example, and does
on FakeAPI what kopf's example (and its ``test_example_NN.py`` or the ``E2E_*`` marks that
``tests/e2e/test_examples.py`` reads) says it does."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import io
import logging
import re
import sys
import tokenize
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubectrl.__main__ import operators_of
from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.testing import FakeAPI, eventually, run_manager
from kubectrl.webhook import AdmissionRequest, webhook_configurations

PORTS = Path(__file__).resolve().parents[3] / "examples" / "kopf"
KEX = ("kopf.dev/v1", "KopfExample")
POD = ("v1", "Pod")

#: Code lines of kopf's own examples (nolar/kopf at 60d02aef, ``examples/NN-*/example.py``),
#: counted by :func:`code_lines`: lines holding a token that is not a comment, a blank or a
#: docstring (a multi-line string counts every line it spans).
KOPF_CODE_LINES = {
    "01": 6, "02": 28, "03": 23, "04": 11, "05": 26, "06": 5, "07": 8, "08": 10, "09": 5,
    "10": 34, "11": 57, "12": 81, "13": 68, "14": 27, "15": 8, "16": 27, "17": 49, "99": 75,
}  # fmt: skip


def code_lines(source: str) -> int:
    """Lines of ``source`` that hold code: not blank, not comment-only, not a docstring."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    lines: set[int] = set()
    layout = {
        tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
        tokenize.ENDMARKER, tokenize.ENCODING,
    }  # fmt: skip
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in layout:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docstrings)


def test_code_lines_skips_docstrings_comments_and_blanks() -> None:
    source = (
        '"""Doc\nstring."""\n\n# comment\nx = """a\nb"""  # two lines\n\n'
        'def f():\n    """D."""\n    return 1\n'
    )
    assert code_lines(source) == 4  # x = (2 lines), def, return


def port_paths() -> list[Path]:
    return sorted(PORTS.glob("ex*.py"))


@pytest.mark.parametrize("path", port_paths(), ids=lambda p: p.stem)
def test_each_port_is_no_longer_than_kopfs_example(path: Path) -> None:
    number = path.stem[2:4]
    assert code_lines(path.read_text()) <= KOPF_CODE_LINES[number]


def test_the_docs_page_gives_the_counts() -> None:
    """docs/guides/kopf-examples.md: one row per port, with kopf's count and the port's."""
    page = (PORTS.parents[1] / "docs" / "guides" / "kopf-examples.md").read_text()
    rows = re.findall(r"^\| \[(ex\d\d_\w+)\.py\]\([^)]*\) \| (\d+) \| (\d+) \|", page, re.M)
    assert sorted(stem for stem, _, _ in rows) == [p.stem for p in port_paths()]
    for stem, kopf, ours in rows:
        assert (int(kopf), int(ours)) == (
            KOPF_CODE_LINES[stem[2:4]],
            code_lines((PORTS / f"{stem}.py").read_text()),
        ), stem


@pytest.mark.parametrize("path", port_paths(), ids=lambda p: p.stem)
def test_each_port_runs_as_operator_run_loads_it(path: Path) -> None:
    """``python -m kubectrl operator run FILE`` finds the one unattached operator of each."""
    (operator,) = operators_of([str(path)])
    assert not operator.attached


def load(stem: str) -> ModuleType:
    """Import ``examples/kopf/<stem>.py`` afresh (its own ``operator``, its own globals)."""
    name = f"kopf_port_{stem}"
    spec = importlib.util.spec_from_file_location(name, PORTS / f"{stem}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def api() -> FakeAPI:
    fake = FakeAPI()
    fake.install_crd(PORTS / "crd.yaml")
    return fake


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def client(api: FakeAPI) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(api.config()) as c:
        yield c


def new_manager(api: FakeAPI, clock: FakeClock) -> Manager:
    return Manager(api.config(), options=ManagerOptions(metrics_bind_address="0"), clock=clock)


@asynccontextmanager
async def running(module: ModuleType, api: FakeAPI, clock: FakeClock) -> AsyncIterator[Manager]:
    """The port's operator attached to a new manager on ``api``, running."""
    manager = new_manager(api, clock)
    module.operator.attach(manager)
    async with run_manager(manager):
        yield manager


def kopf_example(name: str = "kopf-example-1", **spec: Any) -> dict[str, Any]:
    """kopf's ``examples/obj.yaml``: a label, an annotation, a spec with a field and items."""
    return {
        "apiVersion": "kopf.dev/v1",
        "kind": "KopfExample",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"somelabel": "somevalue"},
            "annotations": {"someannotation": "somevalue"},
        },
        "spec": {"duration": "1m", "field": "value", "items": ["item1", "item2"], **spec},
    }


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records]


def logged(caplog: pytest.LogCaptureFixture, text: str) -> Callable[[], bool]:
    def check() -> bool:
        return any(text in m for m in messages(caplog))

    check.__name__ = f"logged {text!r}"
    return check


async def handled(
    client: AsyncClient, name: str = "kopf-example-1", *, status: bool = False
) -> dict[str, Any]:
    """The object once the operator stored its last handled state (every handler done) and,
    with ``status``, the handlers' results (a write of the status subresource of its own)."""
    obj = await client.get(KEX, name, namespace="default")
    annotations = obj["metadata"].get("annotations") or {}
    assert "operator.kubectrl.io/last-handled-configuration" in annotations
    assert "operator.kubectrl.io/progress" not in annotations
    assert not status or obj.get("status")
    return obj


async def test_01_minimal_stores_the_return_value_in_the_status(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 01-minimal: ``return {'message': 'hello world'}  # will be the new status``."""
    caplog.set_level(logging.INFO)
    async with running(load("ex01_minimal"), api, clock):
        await client.create(kopf_example())
        obj = await eventually(lambda: handled(client, status=True), clock=clock)
    assert obj["status"]["create_fn"] == {"message": "hello world"}
    assert any(
        "[default/kopf-example-1] And here we are! Creating: {" in m for m in messages(caplog)
    )


async def test_02_children_creates_an_owned_pod_and_records_its_uid(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    """kopf's 02-children: a Pod adopted by the object (owner reference, namespace, labels),
    its uid in the status."""
    async with running(load("ex02_children"), api, clock):
        await client.create(kopf_example(field="the-field"))
        obj = await eventually(lambda: handled(client, status=True), clock=clock)
    (uid,) = obj["status"]["create_fn"]["children"]
    pods = (await client.list(POD, namespace="default"))["items"]
    (pod,) = [p for p in pods if p["metadata"]["uid"] == uid]
    ref = pod["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "KopfExample", "kopf-example-1", obj["metadata"]["uid"], True,
    )  # fmt: skip
    assert pod["metadata"]["name"].startswith("kopf-example-1-")
    assert pod["metadata"]["labels"] == {"somelabel": "somevalue"}
    container = pod["spec"]["containers"][0]
    assert container["env"] == [{"name": "FIELD", "value": "the-field"}]
    assert "sleep 1m" in container["args"][0]


async def test_03_exceptions_retry_temporary_errors_and_fail_permanent_ones(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 03-exceptions (its ``E2E_SUCCESS_COUNTS``/``E2E_FAILURE_COUNTS``): one handler
    succeeds after three temporary errors, three fail (at once, or after 3 tries)."""
    caplog.set_level(logging.INFO)
    module = load("ex03_exceptions")
    async with running(module, api, clock):
        await client.create(kopf_example())
        await eventually(lambda: handled(client), 30, clock=clock, interval=0.5)
    log = messages(caplog)

    def count(handler: str, how: str) -> int:
        return sum(f"handler {handler} failed {how}" in m for m in log)

    assert count("instant_failure_with_only_a_message", "permanently") == 1
    assert count("eventual_success_with_a_few_messages", "temporarily") == 3
    assert count("eventual_failure_with_tracebacks", "with an exception") == 3
    assert count("instant_failure_with_traceback", "with an exception") == 1


async def test_04_events_posts_four_events_about_the_object(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    """kopf's 04-events: ``kopf.event``, ``info``, ``warn`` and ``exception`` each post an
    Event about the object (``exception`` with the exception's text)."""
    async with running(load("ex04_events"), api, clock):
        await client.create(kopf_example())

        async def events() -> list[dict[str, Any]]:
            found = (await client.list(("v1", "Event"), namespace="default"))["items"]
            ours = [e for e in found if e["involvedObject"]["name"] == "kopf-example-1"]
            assert sum(e.get("count", 1) for e in ours) == 4
            return ours

        found = await eventually(events, clock=clock)
    assert sorted((e["type"], e["reason"], e["message"], e.get("count", 1)) for e in found) == [
        ("Normal", "SomeReason", "Some message", 2),  # event() and info(): one Event, count 2
        ("Warning", "SomeReason", "Some exception: RuntimeError: Exception text.", 1),
        ("Warning", "SomeReason", "Some message", 1),
    ]
    assert all(e["involvedObject"]["kind"] == "KopfExample" for e in found)


async def test_05_handlers_run_per_cause(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 05-handlers: both create handlers on creation (and the field handler, ``None ->
    value``), the update and field handlers on a change, both delete handlers on deletion,
    both resume handlers when a new operator run finds the object."""
    caplog.set_level(logging.INFO)
    async with running(load("ex05_handlers"), api, clock):
        await client.create(kopf_example())
        await eventually(lambda: handled(client), clock=clock)
        assert [m for m in messages(caplog) if "CREATED" in m or "FIELD" in m] == [
            "[default/kopf-example-1] CREATED 1st",
            "[default/kopf-example-1] CREATED 2nd",
            "[default/kopf-example-1] FIELD CHANGED: None -> value",
        ]
        await client.patch(
            KEX, "kopf-example-1", {"spec": {"field": "changed"}}, namespace="default"
        )
        await eventually(logged(caplog, "FIELD CHANGED: value -> changed"), clock=clock)
        await eventually(logged(caplog, "] UPDATED"), clock=clock)
    assert not any("RESUMED" in m for m in messages(caplog))
    async with running(load("ex05_handlers"), api, clock):
        await eventually(logged(caplog, "RESUMED 2nd"), clock=clock)
        assert logged(caplog, "RESUMED 1st")()
        await client.delete(KEX, "kopf-example-1", namespace="default")
        await eventually(logged(caplog, "DELETED 2nd"), clock=clock)
        assert logged(caplog, "DELETED 1st")()

        async def gone() -> bool:
            found = await client.list(KEX, namespace="default")
            return not found["items"]

        await eventually(gone, clock=clock)
    assert sum("CREATED 1st" in m for m in messages(caplog)) == 1
    assert sum("] UPDATED" in m for m in messages(caplog)) == 1


async def test_07_subhandlers_handle_each_item_once(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 07-subhandlers: one sub-handler per ``spec.items`` entry, each run once."""
    caplog.set_level(logging.INFO)
    async with running(load("ex07_subhandlers"), api, clock):
        await client.create(kopf_example())
        await eventually(lambda: handled(client), clock=clock)
    assert [m for m in messages(caplog) if "=== Handling" in m] == [
        "[default/kopf-example-1] === Handling creation for item1. ===",
        "[default/kopf-example-1] === Handling creation for item2. ===",
    ]


async def test_08_events_reach_every_event_handler_despite_errors(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 08-events (``E2E_SUCCESS_COUNTS = {'normal_event_fn': 2}``): the raw events of a
    creation and a deletion reach the second handler although the first one raises."""
    caplog.set_level(logging.INFO)
    async with running(load("ex08_events"), api, clock):
        await client.create(kopf_example())
        await eventually(logged(caplog, "Event received: {'type': 'ADDED'"), clock=clock)
        await client.delete(KEX, "kopf-example-1", namespace="default")
        await eventually(logged(caplog, "Event received: {'type': 'DELETED'"), clock=clock)
    assert sum("Event received" in m for m in messages(caplog)) == 2
    errors = [r for r in caplog.records if "handler event_fn_with_error failed" in r.getMessage()]
    assert len(errors) == 2
    assert all(r.exc_info and str(r.exc_info[1]) == "Oops!" for r in errors)


async def test_06_peering_only_the_leader_handles_and_a_standby_takes_over(
    api: FakeAPI, client: AsyncClient
) -> None:
    """kopf's 06-peering (one operator active among replicas, ``kopf/_core/engines/peering.py``)
    is the manager's leader election: the standby runs no controller until the leader stops.
    Two replicas on the real clock (lease 2 s), waits are conditions with deadlines."""

    def replica(identity: str) -> tuple[Manager, ModuleType]:
        options = ManagerOptions(
            metrics_bind_address="0",
            leader_election=True,
            leader_election_id="kopf-example-06",
            leader_election_namespace="default",
            identity=identity,
            lease_duration=2.0,
            renew_deadline=1.5,
            retry_period=0.2,
        )
        module = load("ex06_peering")
        manager = Manager(api.config(), options=options)
        module.operator.attach(manager)
        return manager, module

    (first, one), (second, two) = replica("one"), replica("two")
    leading = asyncio.ensure_future(first.start())
    following: asyncio.Future[None] | None = None
    try:
        await eventually(lambda: bool(one.operator.controllers), 10, describe="one leads")
        following = asyncio.ensure_future(second.start())
        await client.create(kopf_example())
        await eventually(lambda: handled(client), 10)
        assert two.operator.controllers == {}  # the standby runs no controller
        first.stop()  # a graceful stop releases the Lease
        await asyncio.wait_for(leading, 30)
        await eventually(lambda: bool(two.operator.controllers), 20, describe="two takes over")
    finally:
        for task in (leading, following):
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in (leading, following) if t), return_exceptions=True)


async def test_09_testing_an_operator_while_it_runs(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 09-testing (``test_example_09.py``: KopfRunner, create and delete the object, the
    handler's log line is in the output): here ``run_manager`` on FakeAPI."""
    caplog.set_level(logging.INFO)
    async with running(load("ex09_testing"), api, clock):
        await client.create(kopf_example())
        await eventually(lambda: handled(client), clock=clock)
        await client.delete(KEX, "kopf-example-1", namespace="default")
    assert "[default/kopf-example-1] Something was logged here." in messages(caplog)


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "the-only-one", "image": "busybox"}]},
    }


async def test_10_builtins_kills_pods_after_30s_unless_deleted_first(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 10-builtins (``test_example_10.py``: "Pod killing happens in 30s." on creation,
    "Pod killing is cancelled!" on deletion); and a pod left alone is deleted 30 s later."""
    caplog.set_level(logging.INFO)
    module = load("ex10_builtins")
    async with running(module, api, clock):
        await client.create(pod("doomed"))
        await client.create(pod("spared"))
        await eventually(logged(caplog, "[default/spared] === Pod killing happens in 30s."))
        await eventually(logged(caplog, "[default/doomed] === Pod killing happens in 30s."))
        await client.delete(POD, "spared", namespace="default")
        await eventually(logged(caplog, "[default/spared] === Pod killing is cancelled!"))
        assert not logged(caplog, "Pod killing happens NOW!")()
        clock.advance(30)
        await eventually(logged(caplog, "[default/doomed] === Pod killing happens NOW!"))

        async def no_pods() -> bool:
            return not (await client.list(POD, namespace="default"))["items"]

        await eventually(no_pods, clock=clock)
        await eventually(lambda: module.tasks == {"default": {}})
    assert not logged(caplog, "[default/doomed] === Pod killing is cancelled!")()


async def test_11_filtering_runs_only_the_handlers_whose_filters_match(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 11-filtering-handlers (``test_example_11.py``: which log lines appear for
    ``obj.yaml`` created, then ``spec.field`` patched to ``changed``)."""
    caplog.set_level(logging.INFO)
    async with running(load("ex11_filtering_handlers"), api, clock):
        await client.create(kopf_example())
        await eventually(lambda: handled(client), clock=clock)
        await client.patch(
            KEX, "kopf-example-1", {"spec": {"field": "changed"}}, namespace="default"
        )
        await eventually(logged(caplog, "Field change is satisfied."), clock=clock)
    log = messages(caplog)
    prefix = "[default/kopf-example-1] "
    for line in (
        "Label is matching.", "Label is present.", "Label is absent.",
        "Label callback matching.", "Annotation is matching.", "Annotation is present.",
        "Annotation is absent.", "Filter satisfied.", "Field value is satisfied.",
        "Field presence is satisfied.", "Field change is satisfied.",
    ):  # fmt: skip
        assert log.count(prefix + line) == 1, line
    for line in (
        "Annotation callback mismatch.", "Filter not satisfied.", "Field value is not satisfied.",
        "Field presence is not satisfied.",
    ):  # fmt: skip
        assert prefix + line not in log, line


async def test_12_embedded_runs_the_operator_in_a_thread_of_the_app(
    api: FakeAPI, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 12-embedded: the app starts the operator in a thread, waits until it is ready,
    creates and deletes objects (each greeted and bidden good bye), then stops it gracefully."""
    caplog.set_level(logging.INFO)
    module = load("ex12_embedded")
    await asyncio.wait_for(asyncio.to_thread(module.main, 2, api.config()), 60)
    greetings = [m for m in messages(caplog) if "Hello" in m or "Good bye" in m]
    assert greetings == [
        "[default/kopf-example-0] Hello, kopf-example-0!",
        "[default/kopf-example-0] Good bye, kopf-example-0!",
        "[default/kopf-example-1] Hello, kopf-example-1!",
        "[default/kopf-example-1] Good bye, kopf-example-1!",
    ]
    assert api.objects("kopfexamples.kopf.dev") == []


async def test_13_hooks_startup_retries_probes_and_cleanup(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 13-hooks (``E2E_SUCCESS_COUNTS``: each startup hook and the cleanup once; the
    retried one after three temporary errors): one background task per pod, counted by the
    probes, asked to stop on cleanup."""
    caplog.set_level(logging.INFO)
    module = load("ex13_hooks")
    await client.create(pod("web-1"))
    await client.create(pod("web-2"))
    async with running(module, api, clock):
        await eventually(logged(caplog, "Starting retried..."), 10, clock=clock, interval=0.5)
        probes = await eventually(module.operator.probe, clock=clock)

        async def both() -> dict[str, Any]:
            found = await module.operator.probe()
            assert found["tasks_count"] == 2
            return found

        probes = await eventually(both, clock=clock)
        assert probes["monitored_objects"] == {"default": ["web-1", "web-2"]}
        served = logged(caplog, "Served by the background task.")
        await eventually(served, 30, clock=clock, interval=1)  # each sleeps 1 to 10 s
    log = messages(caplog)
    assert sum("startup hook startup_fn_retried" in m and "temporarily" in m for m in log) == 3
    assert log.count("Initialising the task-lock...") == 1
    assert log.count("Cleaning up...") == 1
    assert "All pod-tasks are requested to stop..." in log
    clock.advance(10)  # every task's last sleep ends; each sees its flag and finishes
    await eventually(lambda: not module.TASKS)
    assert sum("Serving is finished by request." in m for m in log + messages(caplog)) >= 2


async def test_16_indexing_feeds_probes_and_a_timer(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    """kopf's 16-indexing: two pod indexes, passed by name to the probes (how many pods, their
    names) and to a 5 s timer that writes the running pods into the status."""
    module = load("ex16_indexing")
    for name, phase in (("web-1", "Running"), ("web-2", "Pending")):
        await client.create(
            {**pod(name), "metadata": {**pod(name)["metadata"], "labels": {"app": name}}}
        )
        await client.status().patch(POD, name, {"status": {"phase": phase}}, namespace="default")
    async with running(module, api, clock):

        async def probed() -> dict[str, Any]:
            found = await module.operator.probe()
            assert found["pod_count"] == 2
            return found

        assert sorted((await eventually(probed, clock=clock))["pod_names"]) == ["web-1", "web-2"]
        assert module.operator.indexes()["by_label"][("app", "web-1")] == ("web-1",)
        await client.create(kopf_example())

        async def running_pods() -> list[str]:
            obj = await client.get(KEX, "kopf-example-1", namespace="default")
            return list(obj.get("status", {}).get("running-pods", []))

        assert await eventually(running_pods, 30, clock=clock, interval=1) == ["default::web-1"]


def review(
    operation: str = "CREATE",
    *,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    sub_resource: str = "",
    dry_run: bool = False,
) -> AdmissionRequest:
    obj = {
        "apiVersion": "kopf.dev/v1",
        "kind": "KopfExample",
        "metadata": {"name": "kex", "namespace": "default", "labels": labels or {}},
        "spec": spec if spec is not None else {"field": "value"},
        "status": status or {},
    }
    return AdmissionRequest.from_dict(
        {
            "uid": "u1",
            "operation": operation,
            "name": "kex",
            "namespace": "default",
            "kind": {"group": "kopf.dev", "version": "v1", "kind": "KopfExample"},
            "resource": {"group": "kopf.dev", "version": "v1", "resource": "kopfexamples"},
            "subResource": sub_resource,
            "userInfo": {"username": "alice"},
            "object": obj,
            "oldObject": obj if operation == "UPDATE" else None,
            "dryRun": dry_run,
        }
    )


async def test_17_admission_validates_and_mutates_through_the_webhook_server(
    api: FakeAPI, clock: FakeClock
) -> None:
    """kopf's 17-admission (``docs/admission.rst``): validators warn or refuse (with their
    code; not on a dry run where they say so), a subresource validator sees the status
    subresource, the label-filtered mutator injects ``spec.injected``; the handlers are served
    by the manager's webhook server and listed in its manifests."""
    module = load("ex17_admission")
    manager = new_manager(api, clock)
    module.operator.attach(manager)
    paths = module.operator.admission_paths()
    handlers = {r.type: r.handler for r in manager.webhook_server.registrations}
    assert set(paths) == {(KEX, "validating"), (KEX, "mutating")}
    validate, mutate = handlers["validating"], handlers["mutating"]
    (mutating, validating) = webhook_configurations(
        manager.webhook_server, service_name="kex", service_namespace="default"
    )
    assert validating["webhooks"][0]["rules"][0]["resources"] == ["kopfexamples"]
    assert mutating["webhooks"][0]["name"] == "mkopfexample-v1.operator.kubectrl.io"

    fine = await validate.handle(review(status={"field": "value"}))
    assert (fine.is_allowed, fine.warnings) == (True, ["Accessing as user: alice"])
    unmatched = await validate.handle(review())
    assert unmatched.is_allowed
    assert unmatched.warnings[1] == "Also update status.field to match spec.field: 'value' != None"

    wrong = await validate.handle(review("UPDATE", spec={"field": "wrong"}))
    assert (wrong.is_allowed, wrong.code) == (False, 403)
    assert wrong.message == "Meh! I don't like it. Change the field."
    assert (await validate.handle(review(spec={"field": "wrong"}, dry_run=True))).is_allowed
    lazy = await validate.handle(review(spec={"field": "not-allowed"}))
    assert (lazy.is_allowed, lazy.code, lazy.message) == (
        False, 555, "I'm too lazy anyway. Go away!",
    )  # fmt: skip
    status = await validate.handle(review("UPDATE", status={"field": "x"}, sub_resource="status"))
    assert (status.is_allowed, status.message) == (
        False, "status.field MUST be equal to spec.field!",
    )  # fmt: skip

    labelled = await mutate.handle(review(labels={"somelabel": "somevalue"}))
    assert labelled.patch == [{"op": "add", "path": "/spec/injected", "value": 123}]
    assert (await mutate.handle(review())).patch is None


async def test_14_daemons_fail_three_times_then_ping_and_stop_on_deletion(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 14-daemons: both daemons fail three times (``TemporaryError(delay=1)``, the
    sync one writing "Failed N times." into the status), then ping every 5 s (the marks
    ``E2E_CREATION_STOP_WORDS``: "=> Ping from"); deleting the object stops both, the async one
    by cancellation after its ``cancellation_backoff`` (kopf ``docs/daemons.rst``)."""
    module = load("ex14_daemons")
    caplog.set_level(logging.INFO, "kubectrl.operator")
    seen: list[str] = []
    async with running(module, api, clock):
        await client.create(kopf_example())

        async def pinged() -> bool:
            obj = await client.get(KEX, "kopf-example-1", namespace="default")
            seen.append(obj.get("status", {}).get("message", ""))
            lines = messages(caplog)
            return any("=> Ping from a sync daemon" in m and "retry=3" in m for m in lines) and any(
                "=> Ping from an async daemon" in m for m in lines
            )

        await eventually(pinged, 30, clock=clock, interval=0.5)
        assert "Failed 3 times." in seen
        daemons = module.operator._daemons
        assert len(daemons.running()) == 2
        await client.delete(KEX, "kopf-example-1", namespace="default")
        await eventually(lambda: not daemons.running(), 30, clock=clock, interval=0.5)
    assert any("cancelling it" in m and "background_async" in m for m in messages(caplog))


async def test_15_timers_wait_for_the_object_to_be_idle(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 15-timers: the sync timer (idle 5 s, every 2 s) and the async one (idle 10 s,
    every 4 s) ping only once the object has been left alone that long, and a change puts them
    back to waiting (kopf ``docs/timers.rst``, Idling)."""
    module = load("ex15_timers")
    caplog.set_level(logging.INFO, "kubectrl.operator")

    def pings(kind: str, field: str = "") -> int:
        text = f"Ping from {kind} timer: field={field!r}" if field else f"Ping from {kind} timer"
        return sum(text in m for m in messages(caplog))

    async with running(module, api, clock):
        await client.create(kopf_example())
        start = clock.now()
        await eventually(lambda: pings("a sync") > 0, 30, clock=clock, interval=0.5)
        assert clock.now() - start >= 5
        assert pings("an async") == 0  # idle 10 s: not yet
        await eventually(lambda: pings("an async") > 0, 30, clock=clock, interval=0.5)
        assert clock.now() - start >= 10
        await client.patch(
            KEX, "kopf-example-1", {"spec": {"field": "changed"}}, namespace="default"
        )
        changed = clock.now()
        # A tick due before the operator's watch delivered the change still sees the old,
        # idle object (kopf measures idleness from the change it has seen), so the wait is for
        # the first ping of the changed spec.
        await eventually(lambda: pings("a sync", "changed") > 0, 30, clock=clock, interval=0.5)
        assert clock.now() - changed >= 5


async def test_99_all_at_once(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 99-all-at-once, its ``E2E_SUCCESS_COUNTS``: the startup hooks (one retried three
    times), ``create_1`` (Events), ``create_2`` (fails once, then succeeds), ``create_pod`` (a
    child Pod, adopted and labelled, whose raw events are seen), an update and a field change,
    ``delete`` and ``cleanup_fn`` each run to success."""
    module = load("ex99_all_at_once")
    caplog.set_level(logging.INFO)
    async with running(module, api, clock):
        await eventually(logged(caplog, "Starting retried..."), 30, clock=clock, interval=0.5)
        await client.create(kopf_example(lst=[1]))

        async def both_jobs() -> dict[str, Any]:
            status = (await handled(client, status=True))["status"]
            assert status["create_1"] == {"job1-status": 100}
            assert status["create_2"] == {"job2-status": 100}
            return status

        await eventually(both_jobs, 120, clock=clock, interval=1)  # create_2 retries after 60 s
        (child,) = (await client.list(POD, namespace="default"))["items"]
        assert child["metadata"]["labels"]["application"] == "kopf-example-10"
        assert child["metadata"]["ownerReferences"][0]["name"] == "kopf-example-1"
        await eventually(logged(caplog, "This pod is special for us."), clock=clock)
        events = (await client.list(("v1", "Event"), namespace="default"))["items"]
        assert {e["reason"] for e in events} >= {"AnyReason", "SomeReason"}
        change = {"spec": {"lst": [1, 2]}}
        await client.patch(KEX, "kopf-example-1", change, namespace="default")
        await eventually(logged(caplog, "Handling the FIELD = [1] -> [1, 2]"), clock=clock)
        await client.delete(KEX, "kopf-example-1", namespace="default")
        await eventually(lambda: gone(client), clock=clock)
    assert any("Cleaning up in 3s..." in m for m in messages(caplog))


async def gone(client: AsyncClient) -> bool:
    from kubectrl.errors import NotFoundError

    try:
        await client.get(KEX, "kopf-example-1", namespace="default")
    except NotFoundError:
        return True
    return False
