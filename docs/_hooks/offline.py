"""MkDocs hook: every page works with no network.

A page of the built site must load nothing from another host: no script, stylesheet, font,
image or frame (links to other sites are fine: a reader follows them or not). Each such
reference is a warning, which fails the strict build (`nox -s docs`). Two known ways one comes
back: mkdocs-material loads Mermaid's script from a CDN for a ``pre.mermaid`` (the diagrams are
drawn at build time instead, docs/_hooks/diagrams.py), and its theme fonts from Google Fonts
unless ``theme.font`` is ``false``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

log = logging.getLogger("mkdocs.hooks.offline")

# An element that makes the browser fetch its URL when the page loads.
_TAG = re.compile(r"<(script|img|iframe|source|audio|video|embed|object|link)\b[^>]*>", re.I)
_URL = re.compile(r"""\b(?:src|href|data|srcset)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)""", re.I)
_REL = re.compile(r"""\brel\s*=\s*["']?([^"'>]+)""", re.I)
# A <link> whose target the browser loads (not canonical, alternate, ...: those are links).
_LOADED_REL = {"stylesheet", "preload", "modulepreload", "prefetch", "preconnect", "icon"}
_CSS_URL = re.compile(r"""(?:@import\s+|url\()\s*["']?((?:https?:)?//[^"')\s]+)""", re.I)
_MERMAID = re.compile(r"""<pre\b[^>]*\bclass\s*=\s*["'][^"']*\bmermaid\b""", re.I)


def remote_loads(html: str) -> list[str]:
    """What ``html`` makes a browser fetch from another host when it loads."""
    found = []
    for tag in _TAG.finditer(html):
        element = tag.group(0)
        if tag.group(1).lower() == "link":
            rel = _REL.search(element)
            if rel is None or not _LOADED_REL & set(rel.group(1).lower().split()):
                continue
        found += [f"<{tag.group(1)}> {url}" for url in _URL.findall(element)]
    found += [f"CSS {url}" for url in _CSS_URL.findall(html)]
    if _MERMAID.search(html):
        found.append("a pre.mermaid block (mkdocs-material would load Mermaid from a CDN)")
    return found


def on_post_page(output: str, page: Any, config: Any) -> str:
    for what in remote_loads(output):
        log.warning("%s loads %s: the page must work offline", page.file.src_uri, what)
    return output
