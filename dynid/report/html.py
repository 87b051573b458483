"""The report's page: escaped text, tables, embedded figures and sections, in one HTML file.

Everything the page shows is built here from plain values, so that every piece of text goes
through :func:`html.escape` once and the page needs nothing outside itself: the style sheet
is inline and figures are PNG images embedded as ``data:`` URIs.

Numbers in tables carry their full value in a ``data-value`` attribute (``repr`` of the float)
next to the rounded text a reader sees, so a script can read the report back exactly::

    <td class="num" data-value="0.012345678901234">0.01235</td>
"""

from __future__ import annotations

import base64
import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

__all__ = ["Cell", "Section", "figure", "page", "paragraph", "table", "text"]

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       max-width: 1100px; margin: 0 auto; padding: 1em 2em 4em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 2px solid #ccd; padding-bottom: 0.15em;
     margin-top: 2em; }
h3 { font-size: 1.05em; margin: 1.4em 0 0.4em; }
nav ol { columns: 3; padding-left: 1.2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.92em; }
th, td { border-bottom: 1px solid #dde; padding: 0.2em 0.7em; text-align: left;
         vertical-align: top; }
th { background: #f2f3f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.total td { font-weight: 600; border-top: 1px solid #99a; }
td.bad, span.bad { color: #b00020; font-weight: 600; }
td.good, span.good { color: #1b6e20; }
figure { margin: 0.8em 0 1.4em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
p.note { color: #555; font-size: 0.92em; }
code { background: #f4f4f4; padding: 0 0.2em; }
"""


def text(value: object) -> str:
    """``value`` as escaped HTML text."""
    return escape(str(value), quote=True)


def number(value: float, digits: int = 4) -> str:
    """A number as a reader sees it: ``digits`` significant digits, ``inf`` and ``nan`` as
    words."""
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}g}".replace("-", "−")


@dataclass(frozen=True)
class Cell:
    """A table cell: text, or a number shown to ``digits`` significant digits with its exact
    value in ``data-value``; ``css`` is its class (``num`` is added for numbers)."""

    value: object
    digits: int = 4
    css: str = ""

    def html(self) -> str:
        value = self.value
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            cls = f' class="{text(self.css)}"' if self.css else ""
            return f"<td{cls}>{text('' if value is None else value)}</td>"
        cls = " ".join(c for c in ("num", self.css) if c)
        integral = isinstance(value, numbers.Integral)
        shown = str(int(value)) if integral else number(value, self.digits)
        return f'<td class="{text(cls)}" data-value="{float(value)!r}">{text(shown)}</td>'


def _cell(value: object) -> str:
    return value.html() if isinstance(value, Cell) else Cell(value).html()


def table(columns: Sequence[str], rows: Iterable[Sequence[object]], *, id: str,
          caption: str | None = None, totals: Iterable[int] = ()) -> str:
    """A table: a header of ``columns``, then one row per item of ``rows`` (values or
    :class:`Cell`); the rows whose index is in ``totals`` are emphasized."""
    totals = set(totals)
    head = "".join(f"<th>{text(c)}</th>" for c in columns)
    body = []
    for k, row in enumerate(rows):
        if len(row) != len(columns):
            raise ValueError(f"table {id}: row {k} has {len(row)} cells for "
                             f"{len(columns)} columns")
        cls = ' class="total"' if k in totals else ""
        body.append(f"<tr{cls}>" + "".join(_cell(v) for v in row) + "</tr>")
    cap = f"<caption>{text(caption)}</caption>" if caption else ""
    return (f'<table id="{text(id)}">{cap}<thead><tr>{head}</tr></thead><tbody>'
            + "\n".join(body) + "</tbody></table>")


def figure(png: bytes, *, alt: str, caption: str, id: str) -> str:
    """A PNG image embedded in the page, with its caption."""
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure id="{text(id)}"><img src="data:image/png;base64,{data}" '
            f'alt="{text(alt)}"><figcaption>{text(caption)}</figcaption></figure>')


def paragraph(content: str, *, note: bool = False, escaped: bool = False) -> str:
    """A paragraph of text (``escaped``: ``content`` is HTML already)."""
    cls = ' class="note"' if note else ""
    return f"<p{cls}>{content if escaped else text(content)}</p>"


def heading(title: str) -> str:
    """A heading inside a section."""
    return f"<h3>{text(title)}</h3>"


@dataclass(frozen=True)
class Section:
    """One section of the report: its anchor ``id``, its title and its HTML body."""

    id: str
    title: str
    body: str

    def html(self) -> str:
        return (f'<section id="{text(self.id)}"><h2>{text(self.title)}</h2>\n{self.body}\n'
                "</section>")


def page(title: str, sections: Sequence[Section], *, subtitle: str = "") -> str:
    """The whole document: title, a table of contents, then the sections."""
    toc = "".join(f'<li><a href="#{text(s.id)}">{text(s.title)}</a></li>' for s in sections)
    sub = paragraph(subtitle, note=True) if subtitle else ""
    body = "\n".join(s.html() for s in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{text(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<h1>{text(title)}</h1>\n{sub}\n<nav><ol>{toc}</ol></nav>\n{body}\n"
            "</body>\n</html>\n")
