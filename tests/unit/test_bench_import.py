"""benchmarks/bench_import.py reads ``python -X importtime`` output right: time is charged to the
package a module belongs to when another package imports it, nested imports of the same package
are not counted twice."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_import.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_import", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Post-order, as CPython writes it: a module's line comes after its own imports' lines.
IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       100 |        100 |       h11._util
import time:       200 |        300 |     h11
import time:        50 |         50 |       httpx._types
import time:       400 |        750 |     httpx
import time:        30 |         30 |   typing
import time:        20 |        800 |   kubectrl.client
import time:        10 |        810 | kubectrl
import time:         5 |          5 | json
"""


def test_time_is_charged_to_each_package_entered_from_another() -> None:
    by_package = load().by_package(IMPORTTIME)
    assert by_package == {
        "kubectrl": 810,
        "httpx": 750,
        "h11": 300,
        "typing": 30,
        "json": 5,
    }
