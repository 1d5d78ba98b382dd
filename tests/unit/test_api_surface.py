"""The public API is what tests/unit/api_surface.txt says: a change to it shows up as a diff."""

from __future__ import annotations

import difflib

from .api_surface import SNAPSHOT, UPDATE_COMMAND, render


def test_the_public_api_matches_the_snapshot() -> None:
    expected = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    actual = render()
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"{SNAPSHOT.name} (committed)",
            tofile=f"{SNAPSHOT.name} (the code now)",
        )
    )
    assert not diff, (
        f"the public API changed; if that is deliberate, run `{UPDATE_COMMAND}` and commit "
        f"{SNAPSHOT.name}:\n{diff}"
    )


def test_the_surface_lists_every_public_module_and_name() -> None:
    text = render()
    assert "\nmodule kubectrl.client\n" in text
    assert "  class BlockingClient(" in text
    assert "  Manager = kubectrl.runtime.Manager\n" in text
    # Internals are not part of it.
    assert "HTTPServer" not in text
    assert "def step(" not in text
