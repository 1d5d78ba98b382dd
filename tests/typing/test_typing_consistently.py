"""Type-checked by tests/typing/test_mypy_passes.py: ``consistently`` infers its predicate's result.

As for ``eventually``, an async predicate gives its awaited result, not ``Never``.
"""

from __future__ import annotations

from typing_extensions import assert_type

from kubectrl._internal.clock import FakeClock
from kubectrl.testing._helpers import consistently


async def check_consistently() -> None:
    async def ready() -> bool:
        return True

    def count() -> int:
        return 3

    assert_type(await consistently(ready), bool)
    assert_type(await consistently(count, 1.0, interval=0.1, clock=FakeClock()), int)
    assert_type(await consistently(lambda: "x", describe="x"), str)
