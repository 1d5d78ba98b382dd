"""The marks the known-differences table is generated from are well formed."""

from __future__ import annotations

from contract_marks import KINDS, collect, markdown_table


def test_every_mark_has_a_one_line_reason() -> None:
    marks = collect()
    assert {m.kind for m in marks} >= {"known_difference", "fake_only"}
    for mark in marks:
        assert mark.reason.strip(), mark
        assert "\n" not in mark.reason, mark
        assert "|" not in mark.reason, mark  # it goes into a Markdown table cell
        assert len(mark.reason) <= 100, mark


def test_table_lists_each_mark_once() -> None:
    marks = collect()
    table = markdown_table(marks).splitlines()
    assert table[0] == "| Behaviour | Difference | Contract case |"
    assert len(table) == 2 + len(marks)
    assert all(KINDS[m.kind] in line for m, line in zip(marks, table[2:], strict=True))
