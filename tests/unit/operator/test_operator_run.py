"""An operator written as kopf users write one: ``operator = Operator()`` at the top of a file,
attached to a manager later by ``operator.run()``, ``python -m kubectrl operator run FILE``
(kopf's ``kopf run``) or a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectrl.__main__ import _UsageError, main, operators_of
from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.operator import Operator
from kubectrl.testing import FakeAPI, eventually, run_manager

from .conftest import CM, configmap, new_manager

FILE = """
from kubectrl.operator import Operator

operator = Operator()
created = []

@operator.on_create(("v1", "ConfigMap"))
def create_fn(name, **_):
    created.append(name)
    return {"message": "hello world"}
"""


def test_an_operator_without_a_manager_says_how_to_attach_it() -> None:
    operator = Operator()
    assert not operator.attached
    with pytest.raises(RuntimeError, match=r"operator.attach\(manager\)"):
        _ = operator.manager


async def test_a_files_operator_runs_once_attached(
    tmp_path: Path, api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    path = tmp_path / "example.py"
    path.write_text(FILE)
    (operator,) = operators_of([str(path)])
    manager = new_manager(api, clock)
    operator.attach(manager)
    with pytest.raises(RuntimeError, match="already attached"):
        operator.attach(manager)
    async with run_manager(manager):
        await client.create(configmap("first"))

        async def handled() -> bool:
            cm = await client.get(CM, "first", namespace="default")
            return bool(cm.get("metadata", {}).get("annotations"))

        await eventually(handled, clock=clock)


def test_a_file_without_an_operator_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "nothing.py"
    path.write_text("x = 1\n")
    with pytest.raises(_UsageError, match=r"nothing.py: defines no Operator"):
        operators_of([str(path)])


def test_the_command_names_a_file_it_cannot_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.py"
    path.write_text("def (:\n")
    assert main(["operator", "run", str(path)]) == 2
    assert "broken.py: cannot run it: SyntaxError" in capsys.readouterr().err
