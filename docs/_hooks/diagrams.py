"""MkDocs hook: each ```` ```mermaid ```` block is drawn as an SVG when the site is built.

The page then holds the drawing itself: no script draws it in the browser, nothing is fetched
from another host, and a reader offline (or without JavaScript) sees the diagram, not its
source. The Markdown keeps the Mermaid source, which GitHub draws too and which the tests read
(tests/docs/test_architecture.py checks every name drawn against the code).

The drawing is made by mmdr (the ``docs`` dependency group): a Mermaid renderer compiled from
Rust and shipped as wheels, with no browser, Node.js or network. A diagram it cannot draw fails
the build: MkDocs names the page, the renderer what it could not read.

mkdocs.yml declares the fence (``pymdownx.superfences``' ``custom_fences``: name ``mermaid``,
class ``diagram``, not ``mermaid``: mkdocs-material would load Mermaid's script from a CDN to draw
a ``pre.mermaid``); this hook's ``on_config`` gives it its format. Each SVG's ids (and the
references to them: its CSS, markers and filters) get a prefix of their own, so that two
drawings on one page do not share an id. A drawing is scaled down to the page's width, but not
below three quarters of its size (its text would be too small to read): a wider one scrolls.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any

FENCE = "mermaid"

_ID = re.compile(r'\bid="([^"]+)"')
_MAX_WIDTH = re.compile(r"^(<svg\b[^>]*?\bstyle=\"[^\"]*?)max-width:\s*([\d.]+)px")
#: The smallest scale a drawing is shown at.
MIN_SCALE = 0.75
_REFERENCE = re.compile(r"#([A-Za-z_][\w-]*)")


def _error(message: str) -> Exception:
    """An error that fails the build: pymdownx.superfences passes this one on (it takes any other
    error of a fence's format for "leave the block as it is"), and MkDocs reports it. Imported
    here: the tests use this module's helpers without MkDocs."""
    from pymdownx.superfences import SuperFencesException

    return SuperFencesException(message)


def on_config(config: Any) -> Any:
    fences = config["mdx_configs"].get("pymdownx.superfences", {}).get("custom_fences", [])
    ours = [fence for fence in fences if fence.get("name") == FENCE]
    if not ours:
        raise _error(
            f"docs/_hooks/diagrams.py: mkdocs.yml declares no `{FENCE}` custom fence of "
            "pymdownx.superfences"
        )
    for fence in ours:
        fence["format"] = format_diagram
    return config


def format_diagram(
    source: str, language: str, class_name: str, options: Any, md: Any, **kwargs: Any
) -> str:
    """pymdownx.superfences' formatter: the block's drawing, inline."""
    try:
        svg = draw(source)
    except (ValueError, RuntimeError) as err:
        first = source.strip().splitlines()[0] if source.strip() else ""
        raise _error(f"a ```{FENCE} block ({first!r}...) cannot be drawn: {err}") from err
    return f'<div class="{class_name}" style="overflow-x: auto">{svg}</div>'


@functools.lru_cache(maxsize=64)
def draw(source: str) -> str:
    """The SVG of one Mermaid diagram, its ids made unique to it."""
    try:
        import mmdr  # imported here, so that the hook loads without it (pages without diagrams)
    except ImportError as err:
        raise _error(
            "docs/_hooks/diagrams.py draws ```mermaid blocks with mmdr: install pyproject.toml's "
            "docs dependency group (nox -s docs does)"
        ) from err
    svg = mmdr.render(source).svg()
    prefix = "diagram-" + hashlib.sha256(source.encode()).hexdigest()[:8]
    return min_width(scope_ids(svg, prefix))


def min_width(svg: str) -> str:
    """``svg`` (which mmdr sizes ``width="100%"`` up to its own width) with a minimum width."""

    def widths(match: re.Match[str]) -> str:
        width = float(match.group(2))
        return f"{match.group(1)}min-width:{width * MIN_SCALE:.0f}px;max-width:{width}px"

    return _MAX_WIDTH.sub(widths, svg.lstrip(), count=1)


def scope_ids(svg: str, prefix: str) -> str:
    """``svg`` with each id ``X`` renamed ``prefix-X``, and each ``#X`` that refers to it."""
    ids = set(_ID.findall(svg))

    def reference(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"#{prefix}-{name}" if name in ids else match.group(0)

    svg = _REFERENCE.sub(reference, svg)
    return _ID.sub(lambda match: f'id="{prefix}-{match.group(1)}"', svg)
