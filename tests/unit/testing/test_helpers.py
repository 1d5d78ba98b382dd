"""kubectrl.testing's helpers: ``eventually`` and ``run_manager`` with a Manager on a FakeClock.

The Manager tests need no API server: a controller without sources gets its keys by hand, so
what is proven is only that requeues and backoff wait on the manager's clock.
"""

from __future__ import annotations

import ast
import asyncio
import itertools
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.client import ClientConfig
from kubectrl.errors import NotFoundError
from kubectrl.runtime import (
    Builder,
    Controller,
    Manager,
    ManagerError,
    ManagerOptions,
    Request,
    Result,
)
from kubectrl.testing import FakeAPI, eventually, run_manager

KEY = Request("default", "web")


# ---------------------------------------------------------------------------------- eventually


async def test_eventually_returns_the_first_truthy_value() -> None:
    values = iter([None, 0, [], {"ready": True}])
    assert await eventually(lambda: next(values), 1.0, interval=0.001) == {"ready": True}


async def test_eventually_awaits_an_async_predicate() -> None:
    calls = 0

    async def ready() -> bool:
        nonlocal calls
        calls += 1
        return calls == 3

    assert await eventually(ready, 1.0, interval=0.001) is True
    assert calls == 3


async def test_eventually_shows_the_last_value_and_the_description_on_timeout() -> None:
    replicas = iter(range(1000))

    def three_replicas() -> dict[str, int] | None:
        status = {"replicas": min(next(replicas), 1)}
        return status if status["replicas"] == 3 else None

    with pytest.raises(AssertionError) as info:
        await eventually(three_replicas, 0.02)
    assert "three_replicas still false after 0.02 s" in str(info.value)
    assert str(info.value).endswith("last value: None")

    status = {"replicas": 1}

    def replicas_if_three() -> int:
        return status["replicas"] if status["replicas"] == 3 else 0

    with pytest.raises(AssertionError, match=r"eventually: 3 replicas still false .*value: 0$"):
        await eventually(replicas_if_three, 0.01, describe="3 replicas")


async def test_eventually_shortens_a_large_last_value() -> None:
    big = {"items": [0] * 10_000, "ready": False}
    with pytest.raises(AssertionError) as info:
        await eventually(lambda: big["ready"] or (big if False else []), 0.01)
    assert str(info.value).endswith("last value: []")
    with pytest.raises(AssertionError) as info:
        await eventually(lambda: _Falsy(big), 0.01)
    assert len(str(info.value)) < 1000


class _Falsy:
    """A falsy value with a long repr."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"_Falsy({self.value!r})"


async def test_eventually_retries_through_exceptions_and_reports_the_last_one() -> None:
    with pytest.raises(AssertionError) as info:
        await eventually(lambda: _raise(NotFoundError('configmaps "x" not found')), 0.02)
    message = str(info.value)
    assert "last raised: NotFoundError: " in message
    assert message.endswith('configmaps "x" not found')
    assert isinstance(info.value.__cause__, NotFoundError)

    def check() -> bool:
        assert 1 == 2, "one is not two"
        return True

    with pytest.raises(AssertionError, match=r"eventually: .*check.*last raised: AssertionError"):
        await eventually(check, 0.01)


async def test_eventually_names_the_predicate_by_default() -> None:
    def deployment_is_ready() -> bool:
        return False

    with pytest.raises(AssertionError, match=r"eventually: .*deployment_is_ready still false"):
        await eventually(deployment_is_ready, 0.01)


async def test_eventually_with_a_fake_clock_moves_it_until_the_predicate_holds() -> None:
    clock = FakeClock()
    start = clock.now()
    woke = asyncio.ensure_future(clock.sleep(30))
    await eventually(woke.done, 60, interval=1.0, clock=clock)
    assert 30 <= clock.now() - start <= 31

    with pytest.raises(AssertionError, match="still false after 5 s"):
        await eventually(lambda: False, 5, interval=1.0, clock=clock)
    assert clock.now() - start == pytest.approx(36, abs=1.01)


async def test_eventually_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="timeout must be >= 0, got -1"):
        await eventually(lambda: True, -1)
    with pytest.raises(ValueError, match="interval must be > 0, got 0"):
        await eventually(lambda: True, interval=0)


def _raise(err: Exception) -> Any:
    raise err


# ---------------------------------------------------------------------------------- run_manager


def fake_clock_manager() -> tuple[Manager, FakeClock]:
    clock = FakeClock()
    # No request reaches this server: the controllers below have no sources.
    config = ClientConfig(server="https://manager-without-server.invalid")
    options = ManagerOptions(metrics_bind_address="0")
    return Manager(config, options=options, clock=clock), clock


async def idle(controller: Controller) -> None:
    """Wait until the controller has no reconcile running and nothing ready in its queue."""

    def settled() -> bool:
        stats = controller.queue.statistics()
        return stats.processing == 0 and stats.length == 0 and not controller.in_flight

    await eventually(settled, describe=f"controller {controller.name} idle")


async def test_requeue_after_runs_again_when_the_fake_clock_reaches_it_and_not_before() -> None:
    manager, clock = fake_clock_manager()
    calls: list[float] = []

    async def reconcile(request: Request) -> Result:
        calls.append(clock.now())
        return Result(requeue_after=30)

    controller = Controller("requeuer", reconcile, clock=manager.clock)
    manager.add(controller)
    async with run_manager(manager):
        controller.queue.add(KEY)
        await eventually(lambda: len(calls) == 1, describe="the first reconcile")
        await idle(controller)
        assert controller.queue.statistics().waiting == 1  # the requeue, waiting for its time

        clock.advance(29.999)
        await idle(controller)
        assert len(calls) == 1
        assert controller.queue.statistics().waiting == 1

        clock.advance(0.001)
        await eventually(lambda: len(calls) == 2, describe="the requeued reconcile")
    assert calls[1] - calls[0] == pytest.approx(30)


async def test_failure_backoff_5_then_10_ms_is_driven_by_the_fake_clock() -> None:
    """The controller default is client-go's DefaultControllerRateLimiter
    (k8s.io/client-go/util/workqueue/default_rate_limiters.go: 5 ms * 2^failures, max of a
    10 qps bucket); every wait is on the manager's FakeClock, checked on both sides."""
    manager, clock = fake_clock_manager()
    calls: list[float] = []

    async def reconcile(request: Request) -> None:
        calls.append(clock.now())
        if len(calls) <= 3:
            raise RuntimeError(f"failure {len(calls)}")

    controller = Controller("failing", reconcile, clock=manager.clock)
    manager.add(controller)
    async with run_manager(manager):
        controller.queue.add(KEY)
        await eventually(lambda: len(calls) == 1, describe="the first reconcile")
        # default_controller_rate_limiter: 5 ms per key, doubling on each failure.
        for failures, delay in enumerate((0.005, 0.010, 0.020), start=1):
            await idle(controller)
            assert len(calls) == failures
            assert controller.queue.num_requeues(KEY) == failures
            clock.set(calls[-1] + delay * 0.9)
            await idle(controller)
            assert len(calls) == failures, f"retried before {delay} s"
            assert controller.queue.statistics().waiting == 1
            clock.set(calls[-1] + delay)
            await eventually(lambda n=failures: len(calls) == n + 1, describe=f"retry {failures}")
        await idle(controller)
        assert controller.queue.num_requeues(KEY) == 0  # the success forgot the key
    gaps = [round(later - earlier, 6) for earlier, later in itertools.pairwise(calls)]
    assert gaps == [0.005, 0.010, 0.020]


async def test_run_manager_raises_what_the_manager_raised_on_exit() -> None:
    manager, _ = fake_clock_manager()

    async def broken() -> None:
        raise RuntimeError("boom")

    manager.add(broken, need_leader_election=False)
    with pytest.raises(ManagerError, match=r"runnable .*broken failed: RuntimeError: boom"):
        async with run_manager(manager):
            await eventually(lambda: manager._failure is not None, describe="the failure")


async def test_run_manager_reports_the_body_error_and_stops_the_manager() -> None:
    manager, _ = fake_clock_manager()
    stopped = threading.Event()

    async def until_cancelled() -> None:
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            stopped.set()

    manager.add(until_cancelled, need_leader_election=False)

    async def body() -> None:
        async with run_manager(manager) as running:
            assert running is manager
            assert manager.is_leader()
            raise KeyError("from the body")

    with pytest.raises(KeyError, match="from the body"):
        await body()
    assert stopped.is_set()


async def test_run_manager_names_what_it_still_waits_for() -> None:
    # A watched kind the server does not serve: the cache never syncs (its retries wait on the
    # manager's FakeClock, which nobody moves), and run_manager says so at its deadline.
    clock = FakeClock()
    api = FakeAPI(clock=clock)
    manager = Manager(api.config(), options=ManagerOptions(metrics_bind_address="0"), clock=clock)

    async def reconcile(request: Request) -> None:
        raise AssertionError("never called")

    Builder(manager).for_(("example.com/v1", "Widget")).complete(reconcile)
    with pytest.raises(AssertionError, match="still waiting for its caches to sync: ") as info:
        async with run_manager(manager, timeout=0.05):
            pass
    assert "Kind=Widget" in str(info.value)
    assert "last error: no kind 'Widget' in example.com/v1" in str(info.value)


async def test_manager_clock_reaches_the_informers_and_the_event_broadcaster() -> None:
    manager, clock = fake_clock_manager()
    assert manager.clock is clock
    assert manager.informer_factory.clock is clock
    manager.event_recorder("tests")
    assert manager._broadcasters["events.k8s.io/v1"].clock is clock


# ------------------------------------------------------- the docs' known-differences table
#
# docs/testing.md lists what FakeAPI does not do as the real apiserver does. The table is
# generated from the contract suite's marks (tests/contract: known_difference, fake_only,
# fake_xfail), so it cannot drift from what the suite proves. After changing a mark, rewrite it:
#
#     python tests/unit/testing/test_helpers.py

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = ROOT / "tests" / "contract"
TESTING_DOC = ROOT / "docs" / "testing.md"
TABLE_BEGIN = (
    "<!-- known-differences:begin (generated from the tests/contract marks by "
    "tests/unit/testing/test_helpers.py) -->"
)
TABLE_END = "<!-- known-differences:end -->"
#: Each mark, as the table's "what it means" column says it.
MARK_MEANING = {
    "known_difference": "the fake does not implement it: it raises `UnsupportedFeatureError`",
    "fake_xfail": "a fake bug still open: the case is expected to fail on the fake",
    "fake_only": "the test environment cannot show it; checked on the fake only",
}


def contract_marks() -> list[tuple[str, str, str]]:
    """``(mark, reason, "module::case")`` for every difference mark in the contract suite."""
    found: list[tuple[str, str, str]] = []
    for path in contract_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        module_marks = [
            mark
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
            for mark in _marks_in(node.value)
        ]
        for scope, cases in _cases(tree):
            for case in cases:
                for mark, reason in module_marks + scope + _decorator_marks(case):
                    found.append((mark, reason, f"{path.stem}::{case.name}"))
    return sorted(set(found))


def contract_files() -> list[Path]:
    """The contract suite's test modules: those git tracks, in a checkout (a module still being
    written is not documented yet); every ``test_*.py`` otherwise."""
    found = sorted(CONTRACT.glob("test_*.py"))
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--", "tests/contract"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return found
    tracked = {ROOT / name for name in listed}
    return [path for path in found if path in tracked] if tracked else found


def _cases(tree: ast.Module) -> Iterator[tuple[list[tuple[str, str]], list[ast.AST]]]:
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, functions) and node.name.startswith("test_"):
            yield [], [node]
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            methods = [
                item
                for item in node.body
                if isinstance(item, functions) and item.name.startswith("test_")
            ]
            yield _decorator_marks(node), methods


def _decorator_marks(node: ast.AST) -> list[tuple[str, str]]:
    decorators = getattr(node, "decorator_list", [])
    return [mark for decorator in decorators for mark in _marks_in(decorator)]


def _marks_in(expr: ast.expr) -> list[tuple[str, str]]:
    if isinstance(expr, (ast.List, ast.Tuple)):
        return [mark for item in expr.elts for mark in _marks_in(item)]
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in MARK_MEANING
        and expr.args
        and isinstance(expr.args[0], ast.Constant)
        and isinstance(expr.args[0].value, str)
    ):
        return [(expr.func.attr, expr.args[0].value)]
    return []


def known_differences_table() -> str:
    """The markdown table docs/testing.md carries between its markers."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for mark, reason, case in contract_marks():
        by_reason.setdefault((mark, reason), []).append(case)
    order = list(MARK_MEANING)  # the fake's own gaps first, the test environment's last
    lines = ["| Difference | What it means | Contract cases |", "|---|---|---|"]
    ordered = sorted(by_reason.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1]))
    for (mark, reason), cases in ordered:
        names = ", ".join(f"`{case}`" for case in cases)
        lines.append(f"| {reason} | {MARK_MEANING[mark]} | {names} |")
    if len(lines) == 2:
        lines.append("| (none: every contract case passes on both targets) | | |")
    return "\n".join(lines)


def documented_table(text: str) -> str:
    if TABLE_BEGIN not in text or TABLE_END not in text:
        raise AssertionError(f"{TESTING_DOC}: the markers {TABLE_BEGIN} / {TABLE_END} are missing")
    return text.split(TABLE_BEGIN, 1)[1].split(TABLE_END, 1)[0].strip()


def write_known_differences_table() -> None:
    text = TESTING_DOC.read_text(encoding="utf-8")
    documented_table(text)
    before, rest = text.split(TABLE_BEGIN, 1)
    after = rest.split(TABLE_END, 1)[1]
    table = known_differences_table()
    TESTING_DOC.write_text(f"{before}{TABLE_BEGIN}\n{table}\n{TABLE_END}{after}", encoding="utf-8")


def test_the_docs_known_differences_table_is_the_contract_suites_marks() -> None:
    documented = documented_table(TESTING_DOC.read_text(encoding="utf-8"))
    expected = known_differences_table()
    assert documented == expected, (
        "docs/testing.md's known-differences table differs from the contract suite's marks; "
        f"rewrite it with: python tests/unit/testing/test_helpers.py\n\nexpected:\n{expected}"
    )


def test_contract_marks_are_read_from_decorators_classes_and_pytestmark() -> None:
    source = """
import pytest
pytestmark = [pytest.mark.fake_only("no GC")]

@pytest.mark.known_difference("no SSA lists")
async def test_a(target): ...

@pytest.mark.fake_xfail("bug")
class TestB:
    def test_c(self): ...
    def helper(self): ...
"""
    tree = ast.parse(source)
    marks = [
        (mark, case.name)
        for scope, cases in _cases(tree)
        for case in cases
        for mark, _ in scope + _decorator_marks(case)
    ]
    assert marks == [("known_difference", "test_a"), ("fake_xfail", "test_c")]
    assigns = [node for node in tree.body if isinstance(node, ast.Assign)]
    module = [mark for node in assigns for mark in _marks_in(node.value)]
    assert module == [("fake_only", "no GC")]


if __name__ == "__main__":
    write_known_differences_table()
    print(f"{TESTING_DOC}: known-differences table rewritten")
