"""The site works with no network: diagrams are drawn when it is built (docs/_hooks/diagrams.py)
and no page loads anything from another host (docs/_hooks/offline.py, which fails the strict
build otherwise). These check the two hooks' parts and mkdocs.yml; `nox -s docs` builds the site
with them."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from docs_blocks import DOCS, ROOT, pages

_MERMAID = re.compile(r"^```mermaid\n(.*?)^```", re.S | re.M)
_NAME = re.compile(r"\bkubectrl(?:\.\w+)+")


def hook(name: str) -> ModuleType:
    path = DOCS / "_hooks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def config() -> dict[str, object]:
    loaded = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_mkdocs_draws_mermaid_at_build_time_and_loads_nothing_remote() -> None:
    mkdocs = config()
    assert "docs/_hooks/diagrams.py" in mkdocs["hooks"]
    assert "docs/_hooks/offline.py" in mkdocs["hooks"]
    assert mkdocs["theme"]["font"] is False  # no Google Fonts
    (superfences,) = [
        e["pymdownx.superfences"]
        for e in mkdocs["markdown_extensions"]
        if isinstance(e, dict) and "pymdownx.superfences" in e
    ]
    (fence,) = [f for f in superfences["custom_fences"] if f["name"] == "mermaid"]
    # not `mermaid`: mkdocs-material would fetch Mermaid's script to draw a pre.mermaid
    assert fence["class"] != "mermaid"
    assert "format" not in fence  # the hook's on_config sets it
    for key in ("extra_javascript", "extra_css"):
        remote = [u for u in mkdocs.get(key, []) if "//" in str(u)]
        assert remote == [], f"{key} loads from another host: {remote}"


def test_the_docs_group_has_the_renderer() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    docs_group = text.split("\ndocs = [", 1)[1].split("\n]", 1)[0]
    assert '"mmdr' in docs_group


MATERIAL_HEAD = """\
<link rel="canonical" href="https://kubectrl.github.io/kubectrl/">
<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>
<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">
<link rel="stylesheet" href="assets/stylesheets/main.css">
<script src="assets/javascripts/bundle.min.js"></script>
<script src='//cdn.example.com/x.js'></script>
<img alt="logo" src="https://example.com/logo.png">
<a href="https://github.com/kubectrl/kubectrl">a link is fine</a>
<style>@import url("https://example.com/a.css");</style>
<pre class="mermaid"><code>flowchart TD</code></pre>
"""


def test_offline_finds_what_a_page_would_fetch_and_not_its_links() -> None:
    offline = hook("offline")
    assert offline.remote_loads(MATERIAL_HEAD) == [
        "<link> https://fonts.gstatic.com",
        "<link> https://fonts.googleapis.com/css?family=Roboto",
        "<script> //cdn.example.com/x.js",
        "<img> https://example.com/logo.png",
        "CSS https://example.com/a.css",
        "a pre.mermaid block (mkdocs-material would load Mermaid from a CDN)",
    ]
    page = '<div class="diagram"><svg xmlns="http://www.w3.org/2000/svg"></svg></div>'
    assert offline.remote_loads(page) == []


def test_each_drawing_has_ids_of_its_own() -> None:
    diagrams = hook("diagrams")
    svg = (
        '<svg id="m" style="max-width:800.5px"><style>#m{fill:#28253D}#m .e{color:#fff}</style>'
        '<marker id="m-end"/><path marker-end="url(#m-end)" filter="url(#shadow)"/>'
        '<use href="#m-end"/><text>issue #m</text></svg>'
    )
    scoped = diagrams.scope_ids(svg, "d1")
    assert re.findall(r'id="([^"]+)"', scoped) == ["d1-m", "d1-m-end"]
    assert "#d1-m{fill:#28253D}#d1-m .e{color:#fff}" in scoped  # colors are not ids
    assert 'url(#d1-m-end)" filter="url(#shadow)"' in scoped  # no such id: left alone
    assert 'href="#d1-m-end"' in scoped
    assert 'style="min-width:600px;max-width:800.5px"' in diagrams.min_width(scoped)


def diagrams_in_docs() -> list[tuple[Path, str]]:
    return [
        (page, source)
        for page in pages()
        for source in _MERMAID.findall(page.read_text(encoding="utf-8"))
    ]


def test_the_docs_have_diagrams() -> None:
    assert len(diagrams_in_docs()) >= 2


@pytest.mark.parametrize(
    "source", [s for _, s in diagrams_in_docs()], ids=lambda s: s.splitlines()[1].strip()[:40]
)
def test_each_diagram_is_drawn_with_every_name_it_gives(source: str) -> None:
    pytest.importorskip("mmdr", reason="the docs group's renderer (nox -s docs draws with it)")
    diagrams = hook("diagrams")
    svg = diagrams.draw(source)
    assert svg.startswith("<svg")
    assert "foreignObject" not in svg  # text as SVG text: the drawing needs no HTML or script
    text = " ".join(re.findall(r">([^<>]+)<", svg))
    missing = sorted({n for n in _NAME.findall(source) if n not in text})
    assert missing == [], f"names of the diagram not drawn: {missing}"
