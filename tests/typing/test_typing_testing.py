"""Type-checked by tests/typing/test_mypy_passes.py: ``eventually`` infers its predicate's result.

An async predicate used to be inferred as ``Never`` (mypy could not split ``T | Awaitable[T]``),
so callers had to annotate the variable they assigned the result to.
"""

from __future__ import annotations

from typing_extensions import assert_type

from kubectrl.testing import eventually


async def check_eventually() -> None:
    async def ready() -> bool:
        return True

    def count() -> int:
        return 3

    assert_type(await eventually(ready), bool)
    assert_type(await eventually(count), int)
    assert_type(await eventually(lambda: "x", 1.0, describe="x"), str)
