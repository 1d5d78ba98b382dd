"""docs/guides/migrating-kopf.md, row by row: every kubectrl name a row gives exists (the same
reader as the Go map's rows: tests/docs/test_go_map.py), and the page covers every decorator of
kopf a user can meet.

What the rows claim beyond their names is shown by the operator's tests
(tests/unit/operator/, tests/unit/examples/test_kopf_ports.py: kopf's own examples ported) and
by the page's runnable block (tests/docs/test_docs_blocks.py). kopf's decorators are listed from
``kopf/on.py`` and ``kopf/_core/intents/`` (nolar/kopf).
"""

from __future__ import annotations

import pytest
from docs_blocks import DOCS
from test_go_map import problems, rows

PAGE = DOCS / "guides" / "migrating-kopf.md"

#: kopf's decorators (``kopf.on.*``, ``kopf.daemon``, ``kopf.timer``, ``kopf.index``) and the
#: run options a user meets.
KOPF = (
    "kopf.on.create",
    "kopf.on.update",
    "kopf.on.delete",
    "kopf.on.resume",
    "kopf.on.field",
    "kopf.on.event",
    "kopf.on.startup",
    "kopf.on.cleanup",
    "kopf.on.probe",
    "kopf.on.login",
    "kopf.on.validate",
    "kopf.on.mutate",
    "kopf.daemon",
    "kopf.timer",
    "kopf.index",
    "kopf.register",
    "kopf.subhandler",
    "kopf.adopt",
    "kopf.PermanentError",
    "kopf.TemporaryError",
    "kopf.testing.KopfRunner",
    "kopf run",
    "--peering",
    "--liveness",
    "--namespace",
    "settings.persistence",
    "settings.batching",
    "settings.peering",
    "settings.admission",
    "settings.scanning",
    "settings.process",
    "settings.posting",
    "settings.watching",
    "settings.networking",
    "settings.execution",
)


#: Spans of the page that are not kubectrl names to import: the keyword arguments handlers
#: receive (kubectrl.operator passes kopf's names), object fields, and the domain of what an
#: operator stores on objects.
NOT_NAMES = {
    "diff",
    "old",
    "new",
    "stopped",
    "logger",
    "started",
    "runtime",
    "retry",
    "memo",
    "patch",
    "metadata",
    "reconcile(request)",
    "<name>.kubectrl.io",
    "<name>.kubectrl.io/finalizer",
}


def row_problems(cell: str) -> list[str]:
    # `<name>.kubectrl.io/...` reads as a dotted name ending in `kubectrl.io`: a domain here.
    return [
        p
        for p in problems(cell)
        if p.split(": ", 1)[0] not in NOT_NAMES and not p.startswith("kubectrl.io:")
    ]


def test_the_page_has_rows() -> None:
    assert len(rows(PAGE)) > 50


@pytest.mark.parametrize(("line", "cell"), rows(PAGE), ids=[f"line{n}" for n, _ in rows(PAGE)])
def test_every_name_of_the_row_exists(line: int, cell: str) -> None:
    assert row_problems(cell) == [], f"docs/guides/migrating-kopf.md:{line}"


def test_the_row_reader_still_finds_a_wrong_name() -> None:
    assert row_problems("`@operator.on_creat(kind)`, `PermanentEror`") != []


@pytest.mark.parametrize("name", KOPF)
def test_the_page_maps_what_a_kopf_user_meets(name: str) -> None:
    assert name in PAGE.read_text(encoding="utf-8"), name
