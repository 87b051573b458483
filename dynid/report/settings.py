"""The settings behind a result, as tables: the estimator's settings, the processing (and what
it did), the solver's details and the other diagnostics.

These are nested JSON-like values (what a result file holds). Each is shown as a two-column
table of flattened keys: a mapping's entries as ``key.sub``, a list of mappings as
``key[0].sub``, a list of numbers or names in one cell, so nothing in them is left out.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Mapping

import numpy as np

from ..identify.result import IdentificationResult
from .html import Cell, heading, paragraph, table, text

__all__ = ["flatten", "settings_html"]


def flatten(value: object, key: str = "") -> Iterator[tuple[str, object]]:
    """``(key, value)`` pairs of a nested value: mappings and lists of mappings are opened
    (``a.b``, ``a[0].b``); lists of plain values are joined into one text."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, Mapping):
        if not value:
            yield key, "{}"
        for k, v in value.items():
            yield from flatten(v, f"{key}.{k}" if key else str(k))
    elif isinstance(value, list | tuple) and any(isinstance(v, Mapping | list | tuple)
                                                 for v in value):
        for i, v in enumerate(value):
            yield from flatten(v, f"{key}[{i}]")
    elif isinstance(value, list | tuple):
        yield key, ", ".join(_plain(v) for v in value) if value else "[]"
    else:
        yield key, value


def _plain(value: object) -> str:
    if isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
        return f"{float(value):.6g}"
    return "None" if value is None else str(value)


def _cell(value: object) -> Cell:
    if value is None or isinstance(value, bool | np.bool_):
        return Cell(str(value))
    return Cell(value, 6)


def _table(data: Mapping, id: str) -> str:
    rows = [[key, _cell(value)] for key, value in flatten(data)]
    if not rows:
        return paragraph("none", note=True)
    return table(["setting", "value"], rows, id=id)


def settings_html(result: IdentificationResult) -> str:
    """The estimator, processing, solver and diagnostics tables of ``result`` (the whiteness
    test has its own section and is left out here)."""
    estimator = {"method": result.method, "covariance": result.covariance_method,
                 **result.settings}
    diagnostics = {k: v for k, v in result.diagnostics.items() if k != "whiteness"}
    parts = [heading("Estimator"), _table(estimator, "settings-estimator"),
             heading("Processing"),
             paragraph("<br>".join(text(line) for line in
                                   result.processing.summary().splitlines()), escaped=True),
             _table(result.processing.to_dict(), "settings-processing"),
             heading("Solver"), _table(result.solver, "settings-solver"),
             heading("Diagnostics"), _table(diagnostics, "settings-diagnostics")]
    return "\n".join(parts)
