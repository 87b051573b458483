"""The report's tables: prediction errors, parameters with their uncertainty, consistency
checks, condition numbers and the residual's whiteness, as HTML (:mod:`.html`).

A parameter is flagged as poorly determined when its relative standard deviation
``100 σ / |θ|`` exceeds :data:`POOR` %; a standard parameter that no base parameter contains
has no effect on the output, and its value is its prior.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..identify.residuals import Whiteness
from ..identify.result import IdentificationResult
from ..identify.validation import Validation
from .conditioning import Conditioning
from .consistency import Consistency
from .html import Cell, table

__all__ = [
    "POOR",
    "base_table",
    "bound_table",
    "conditioning_table",
    "error_table",
    "link_table",
    "standard_table",
    "training_table",
    "whiteness_table",
]

#: Relative standard deviation (%) above which a parameter is called poorly determined.
POOR = 10.0


def _verdict(ok: bool, good: str, bad: str) -> Cell:
    return Cell(good if ok else bad, css="good" if ok else "bad")


def error_table(validations: Mapping[tuple[str, str], Validation]) -> str:
    """RMSE and relative error per output of each recording, keyed by (data set, label), and
    per recording overall: the relative error ``‖Ŷ − Y‖_F / ‖Y‖_F`` and, when every output
    has the same unit, the RMSE over every output."""
    rows, totals = [], []
    for (kind, label), val in validations.items():
        for j, name in enumerate(val.names):
            rows.append([kind, label, name, val.units[j], Cell(val.rmse[j]),
                         Cell(val.relative_error[j])])
        same = len(set(val.units)) == 1
        overall = float(np.sqrt(np.mean(val.error ** 2))) if same else None
        totals.append(len(rows))
        rows.append([kind, label, "overall", val.units[0] if same else "mixed",
                     Cell(overall) if same else Cell("—"), Cell(val.overall_relative_error)])
    return table(["data", "recording", "output", "unit", "RMSE", "relative error %"], rows,
                 id="errors", totals=totals)


def training_table(result: IdentificationResult, units: tuple[str, ...]) -> str:
    """The fit's own RMSE per output, over the rows it used."""
    names = result.output_names or tuple(f"output {j + 1}" for j in
                                         range(len(result.training_rmse)))
    rows = [[name, unit, Cell(r)] for name, unit, r in
            zip(names, units, result.training_rmse, strict=True)]
    return table(["output", "unit", "RMSE"], rows, id="training-rmse")


def _flag(relative: float) -> Cell:
    if not np.isfinite(relative):
        return Cell("σ undefined (zero estimate)", css="bad")
    return Cell("poorly determined", css="bad") if relative > POOR else Cell("")


def base_table(result: IdentificationResult) -> str:
    """Base parameters: value, σ, relative σ and a flag."""
    u = result.uncertainty()
    rows = [[name, Cell(v, 6), Cell(s, 3), Cell(r, 3),
             Cell("left out: fixed") if s == 0 else _flag(r)]
            for name, v, s, r in zip(u.names, u.values, u.std, u.relative_std, strict=True)]
    return table(["base parameter", "value", "σ", "σ/|θ| %", "note"], rows, id="base")


def standard_table(result: IdentificationResult, priors: np.ndarray) -> str:
    """Standard parameters: unit, value, σ of the identifiable part, relative σ, prior and a
    flag."""
    u = result.standard_uncertainty()
    unused = ~np.any(result.base_matrix != 0, axis=0)
    rows = []
    for i, name in enumerate(result.names):
        note = Cell("no effect on the output: prior value") if unused[i] else \
            _flag(u.relative_std[i])
        rows.append([name, result.units[i], Cell(u.values[i], 6), Cell(u.std[i], 3),
                     Cell(u.relative_std[i], 3), Cell(priors[i], 6), note])
    return table(["parameter", "unit", "value", "σ", "σ/|θ| %", "prior", "note"], rows,
                 id="standard")


def link_table(checks: Consistency) -> str:
    """Per link: mass, centre of mass and the eigenvalues of its pseudo-inertia."""
    rows = [[c.name, Cell(c.mass), *[Cell(x) for x in c.com],
             *[Cell(x, 4) for x in c.eigenvalues],
             _verdict(c.physical, "physical", "not physical")] for c in checks.links]
    return table(["link", "mass kg", "com x m", "com y m", "com z m", "λ1", "λ2", "λ3", "λ4",
                  "pseudo-inertia"], rows, id="links")


def bound_table(checks: Consistency) -> str:
    """Per bounded parameter outside the links: value, bounds and whether it is within."""
    rows = [[b.name, b.unit, Cell(b.value), Cell(b.lower), Cell(b.upper),
             _verdict(b.within, "within", "outside")] for b in checks.bounds]
    return table(["parameter", "unit", "value", "lower", "upper", "bounds"], rows,
                 id="bounds")


def conditioning_table(c: Conditioning) -> str:
    rows = [["base regressor, column-scaled", Cell(c.scaled)],
            ["base regressor, raw", Cell(c.raw)],
            ["correlation matrix of the base estimate", Cell(c.correlation)],
            ["regressor rows", Cell(c.rows)], ["samples", Cell(c.samples)]]
    return table(["condition number", "value"], rows, id="conditioning")


def whiteness_table(white: Whiteness) -> str:
    """Per output: lag-1 autocorrelation, Ljung–Box statistic and p-value, σ factor."""
    rows = [[name, Cell(white.autocorrelation[0, j], 3), Cell(white.statistic[j]),
             Cell(white.p_value[j], 3), Cell(white.sigma_factor[j], 3),
             _verdict(not white.coloured[j], "white", "coloured")]
            for j, name in enumerate(white.names)]
    return table(["output", "lag-1 ρ", "Ljung–Box Q", "p", "σ factor", "residual"], rows,
                 id="whiteness")
