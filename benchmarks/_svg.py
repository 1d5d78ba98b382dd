"""The benchmarks' charts as standalone SVG text (no plotting dependency).

- :func:`line_chart`, for the scaling sweep: x is the object count, y a cost per object, one line
  (with its points marked) per program. Axes start at zero, so a flat line is linear scaling and
  a rising one is a cost per object that grows with the cache.
- :func:`bar_chart`: one horizontal bar per program, the median with a min-max whisker.
- :func:`grouped_bar_chart`, for the API-server tables: a group of bars per row of a table
  (``create 4``, ``get 32``...), one bar per program in each group, the value above each bar.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from xml.sax.saxutils import escape

__all__ = ["bar_chart", "grouped_bar_chart", "line_chart", "nice_ceiling"]

#: Line colours, in series order (distinct under the common colour-vision deficiencies).
PALETTE = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"]

WIDTH, HEIGHT = 720, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 180, 40, 50


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5 or 5 times a power of ten that is >= ``value`` (> 0).

    >>> nice_ceiling(37), nice_ceiling(0.8), nice_ceiling(250)
    (50, 1, 250)
    """
    if value <= 0:
        raise ValueError(f"nice_ceiling: the value must be positive, got {value!r}")
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value * (1 - 1e-9):
            result = step * power
            return int(result) if result == int(result) else result
    raise AssertionError("unreachable: 10 * power >= value")  # pragma: no cover


def _fmt(value: float) -> str:
    if value >= 1000 and value % 1000 == 0:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def _document(width: float, height: float, title: str, *, x: float, size: int) -> list[str]:
    """The opening of a chart: the SVG element, its title, a white background, the heading."""
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{x}" y="22" font-size="{size}" font-weight="bold">{escape(title)}</text>',
    ]


def _y_grid(
    y_max: float, plot_w: float, sy: Callable[[float], float], label: Callable[[float], str]
) -> list[str]:
    """Six horizontal grid lines from 0 to ``y_max``, each with its value on the left."""
    lines = []
    for i in range(6):
        y = y_max * i / 5
        lines.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" '
            f'stroke="#ddd"/>'
            f'<text x="{LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{label(y)}</text>'
        )
    return lines


def line_chart(
    title: str,
    x_label: str,
    y_label: str,
    series: Mapping[str, Sequence[tuple[float, float]]],
) -> str:
    """An SVG document: one line per entry of ``series`` (name -> (x, y) points).

    >>> svg = line_chart("t", "objects", "us", {"a": [(10_000, 36.0), (50_000, 40.0)]})
    >>> svg.startswith("<svg") and "<polyline" in svg and ">a</text>" in svg
    True
    """
    points = [p for values in series.values() for p in values]
    if not points:
        raise ValueError(f"line_chart {title!r}: no points to draw")
    x_max = nice_ceiling(max(x for x, _ in points))
    y_max = nice_ceiling(max(y for _, y in points) * 1.05)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x: float) -> float:
        return LEFT + plot_w * x / x_max

    def sy(y: float) -> float:
        return TOP + plot_h * (1 - y / y_max)

    out = _document(WIDTH, HEIGHT, title, x=LEFT, size=15)
    out.extend(_y_grid(y_max, plot_w, sy, _fmt))
    xs = sorted({x for x, _ in points})
    for x in [0.0, *xs]:
        out.append(
            f'<line x1="{sx(x):.1f}" x2="{sx(x):.1f}" y1="{TOP + plot_h}" y2="{TOP + plot_h + 4}" '
            f'stroke="#333"/>'
            f'<text x="{sx(x):.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{_fmt(x)}</text>'
        )
    out.append(
        f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" '
        f'stroke="#333"/><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + plot_h}" '
        f'stroke="#333"/>'
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 10}" text-anchor="middle">'
        f"{escape(x_label)}</text>"
        f'<text transform="translate(16 {TOP + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        f"{escape(y_label)}</text>"
    )
    for index, (name, values) in enumerate(series.items()):
        colour = PALETTE[index % len(PALETTE)]
        ordered = sorted(values)
        if ordered:
            coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in ordered)
            out.append(
                f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
            out.extend(
                f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}">'
                f"<title>{escape(name)}: {_fmt(x)} objects, {y:.1f}</title></circle>"
                for x, y in ordered
            )
        legend_y = TOP + 10 + 20 * index
        out.append(
            f'<line x1="{WIDTH - RIGHT + 15}" x2="{WIDTH - RIGHT + 35}" y1="{legend_y}" '
            f'y2="{legend_y}" stroke="{colour}" stroke-width="2"/>'
            f'<text x="{WIDTH - RIGHT + 40}" y="{legend_y + 4}">{escape(name)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def bar_chart(
    title: str,
    unit: str,
    bars: Mapping[str, tuple[float, float, float]],
    *,
    note: str = "",
) -> str:
    """An SVG document: one horizontal bar per entry of ``bars`` (name -> (median, low, high)),
    the bar at the median and a whisker from ``low`` to ``high`` (the spread over rounds);
    ``note`` is a line under the title (the load the figures were taken at).

    >>> svg = bar_chart("CPU per event", "µs", {"kubectrl": (17.0, 16.5, 18.0)}, note="load 0.1")
    >>> svg.startswith("<svg") and svg.count("<rect") == 2 and ">load 0.1</text>" in svg
    True
    """
    if not bars:
        raise ValueError(f"bar_chart {title!r}: no bars to draw")
    top = TOP + (18 if note else 0)
    row = 34
    height = top + row * len(bars) + BOTTOM
    left, right = 150, 110
    plot_w = WIDTH - left - right
    x_max = nice_ceiling(max(max(m, hi) for m, _, hi in bars.values()) * 1.05 or 1.0)

    def sx(x: float) -> float:
        return left + plot_w * max(x, 0.0) / x_max

    out = _document(WIDTH, height, title, x=10, size=15)
    if note:
        out.append(f'<text x="10" y="40" fill="#555">{escape(note)}</text>')
    bottom = top + row * len(bars)
    for i in range(6):
        x = x_max * i / 5
        out.append(
            f'<line x1="{sx(x):.1f}" x2="{sx(x):.1f}" y1="{top}" y2="{bottom}" stroke="#ddd"/>'
            f'<text x="{sx(x):.1f}" y="{bottom + 16}" text-anchor="middle">{_fmt(x)}</text>'
        )
    out.append(
        f'<text x="{left + plot_w / 2}" y="{bottom + 36}" text-anchor="middle">'
        f"{escape(unit)} (bar: median; whisker: min-max)</text>"
    )
    for index, (name, (median, low, high)) in enumerate(bars.items()):
        colour = PALETTE[index % len(PALETTE)]
        y = top + row * index + 6
        mid = y + (row - 12) / 2
        out.append(
            f'<text x="{left - 8}" y="{mid + 4:.1f}" text-anchor="end">{escape(name)}</text>'
            f'<rect x="{left}" y="{y}" width="{sx(median) - left:.1f}" height="{row - 12}" '
            f'fill="{colour}"><title>{escape(name)}: {median:g} {escape(unit)} '
            f"({low:g}-{high:g})</title></rect>"
            f'<line x1="{sx(low):.1f}" x2="{sx(high):.1f}" y1="{mid:.1f}" y2="{mid:.1f}" '
            f'stroke="#222" stroke-width="1.5"/>'
            f'<text x="{sx(max(median, high)) + 6:.1f}" y="{mid + 4:.1f}">{median:.3g}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _value(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def grouped_bar_chart(
    title: str,
    y_label: str,
    groups: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
) -> str:
    """An SVG document: for each of ``groups``, one vertical bar per entry of ``series``
    (name -> one value per group; ``None`` draws no bar); the y axis starts at zero.

    >>> svg = grouped_bar_chart("t", "µs", ["get 4", "get 32"], {"a": [1.0, 2.0], "b": [3.0, None]})
    >>> svg.startswith("<svg") and svg.count("<rect") == 1 + 3 + 2
    True
    """
    values = [v for vs in series.values() for v in vs if v is not None]
    if not values:
        raise ValueError(f"grouped_bar_chart {title!r}: no values to draw")
    for name, vs in series.items():
        if len(vs) != len(groups):
            raise ValueError(
                f"grouped_bar_chart {title!r}: {name!r} has {len(vs)} values for "
                f"{len(groups)} groups"
            )
    group_width, height, right = 90, 400, 170
    y_max = nice_ceiling(max(values) * 1.1) if max(values) > 0 else 1.0
    plot_w = group_width * len(groups)
    plot_h = height - TOP - BOTTOM - 10
    width = LEFT + plot_w + right
    bar_w = (group_width - 16) / max(len(series), 1)

    def sy(y: float) -> float:
        return TOP + plot_h * (1 - y / y_max)

    out = _document(width, height, title, x=LEFT, size=14)
    out.extend(_y_grid(y_max, plot_w, sy, _value))
    out.append(
        f'<text x="16" y="{TOP + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {TOP + plot_h / 2:.1f})">{escape(y_label)}</text>'
    )
    for g, group in enumerate(groups):
        x0 = LEFT + g * group_width + 8
        for s, vs in enumerate(series.values()):
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
                f'text-anchor="middle">{_value(value)}</text>'
            )
        out.append(
            f'<text x="{x0 + (group_width - 16) / 2:.1f}" y="{TOP + plot_h + 18}" '
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
