"""Grouped bar charts as standalone SVG text (no plotting dependency), for the API-server tables.

One chart: a group of bars per row of a table (``create 4``, ``get 32``...), one bar per program
in each group, the value written above each bar; the y axis starts at zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape

PALETTE = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00"]
HEIGHT = 400
LEFT, RIGHT, TOP, BOTTOM = 70, 170, 40, 60
GROUP_WIDTH = 90


def _nice(value: float) -> float:
    power = 1.0
    while power * 10 <= value:
        power *= 10
    while power > value and power > 1e-9:
        power /= 10
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power  # pragma: no cover


def _fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def bar_chart(
    title: str,
    y_label: str,
    groups: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
) -> str:
    """An SVG document: for each of ``groups``, one bar per entry of ``series`` (name -> one
    value per group; ``None`` draws no bar).

    >>> svg = bar_chart("t", "µs", ["get 4", "get 32"], {"a": [1.0, 2.0], "b": [3.0, None]})
    >>> svg.startswith("<svg") and svg.count("<rect") == 1 + 3 + 2
    True
    """
    values = [v for vs in series.values() for v in vs if v is not None]
    if not values:
        raise ValueError(f"bar_chart {title!r}: no values to draw")
    for name, vs in series.items():
        if len(vs) != len(groups):
            raise ValueError(
                f"bar_chart {title!r}: {name!r} has {len(vs)} values for {len(groups)} groups"
            )
    y_max = _nice(max(values) * 1.1) if max(values) > 0 else 1.0
    plot_w = GROUP_WIDTH * len(groups)
    plot_h = HEIGHT - TOP - BOTTOM
    width = LEFT + plot_w + RIGHT
    bar_w = (GROUP_WIDTH - 16) / max(len(series), 1)

    def sy(y: float) -> float:
        return TOP + plot_h * (1 - y / y_max)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
        f'viewBox="0 0 {width} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="22" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for i in range(6):
        y = y_max * i / 5
        out.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" '
            'stroke="#ddd"/>'
        )
        out.append(f'<text x="{LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{_fmt(y)}</text>')
    out.append(
        f'<text x="16" y="{TOP + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {TOP + plot_h / 2:.1f})">{escape(y_label)}</text>'
    )
    for g, group in enumerate(groups):
        x0 = LEFT + g * GROUP_WIDTH + 8
        for s, (_name, vs) in enumerate(series.items()):
            value = vs[g]
            if value is None:
                continue
            x = x0 + s * bar_w
            out.append(
                f'<rect x="{x:.1f}" y="{sy(value):.1f}" width="{bar_w - 2:.1f}" '
                f'height="{sy(0) - sy(value):.1f}" fill="{PALETTE[s % len(PALETTE)]}"/>'
            )
            out.append(
                f'<text x="{x + (bar_w - 2) / 2:.1f}" y="{sy(value) - 3:.1f}" font-size="9" '
                f'text-anchor="middle">{_fmt(value)}</text>'
            )
        out.append(
            f'<text x="{x0 + (GROUP_WIDTH - 16) / 2:.1f}" y="{TOP + plot_h + 18}" '
            f'text-anchor="middle">{escape(group)}</text>'
        )
    for s, name in enumerate(series):
        y = TOP + 10 + s * 20
        out.append(
            f'<rect x="{LEFT + plot_w + 16}" y="{y - 9}" width="12" height="12" '
            f'fill="{PALETTE[s % len(PALETTE)]}"/>'
        )
        out.append(f'<text x="{LEFT + plot_w + 34}" y="{y + 1}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
