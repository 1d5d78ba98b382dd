"""mypy --strict passes on tests/typing: the assert_type checks there hold.

The files in this directory are checked statically, not run; this test runs the check so that a
plain ``pytest`` catches a regression in the client's (or cache's) overloads too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_strict_accepts_the_typing_tests() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "tests/typing"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


CONFORMS = """
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubectrl.client._interfaces import Reader
from kubectrl.client._types import KindRef
from kubectrl.labels import LabelSelectorLike


class Impl:
    async def _get(
        self,
        resource: KindRef,
        name: str,
        *,
        {namespace}: str | None = None,
        subresource: str = "",
        resource_version: str | None = None,
    ) -> Any: ...

    async def _list(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        matching_fields: Mapping[str, str] | None = None,
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> Any: ...


if TYPE_CHECKING:

    class _ImplConforms(Reader):
        get = Impl._get
        list = Impl._list
"""


def test_mypy_refuses_an_implementation_that_does_not_fit_its_protocol(tmp_path: Path) -> None:
    # The clients bind private implementations to the protocol's names and let mypy check the
    # assignments in a `_<Class>Conforms` class; this proves such a check fails on a misspelled
    # keyword (and passes on the right one).
    for spelling, fits in (("namespace", True), ("namspace", False)):
        snippet = tmp_path / f"conforms_{spelling}.py"
        snippet.write_text(CONFORMS.replace("{namespace}", spelling))
        result = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(snippet)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        output = result.stdout + result.stderr
        if fits:
            assert result.returncode == 0, output
        else:
            assert result.returncode == 1, output
            assert 'base class "Reader" defined the type as overloaded function' in output, output
