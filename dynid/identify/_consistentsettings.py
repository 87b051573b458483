"""Checks of a physically consistent estimator's settings, before anything is solved."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._files import excerpt
from ..errors import DataError

__all__ = ["check_settings"]


def _check_interval(name: str, bounds, unit: str) -> None:
    """Raise unless ``bounds`` is (lower, upper) with finite 0 ≤ lower ≤ upper."""
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise DataError(f"{name}: expected (lower, upper) in {unit}, found "
                        f"{excerpt(bounds)}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 <= lo <= hi):
        raise DataError(f"{name}: expected finite bounds 0 ≤ lower ≤ upper in {unit}, found "
                        f"({lo}, {hi})")


def check_settings(est, solvers: tuple[str, ...]) -> None:
    """Raise :class:`~dynid.errors.DataError` naming the first setting of the
    :class:`~dynid.identify.consistent.PhysicallyConsistent` ``est`` that is out of its
    range or that contradicts another."""
    if est.weighting not in ("wls", "ols", "gauss-markov"):
        raise DataError(f"weighting: expected 'wls', 'ols' or 'gauss-markov', found "
                        f"{excerpt(est.weighting)}")
    if est.weighting != "wls":
        for name in ("sigma", "noise_covariance", "wls_iterations"):
            value = getattr(est, name)
            if value is not None and not (isinstance(value, str) and value == "auto"):
                raise DataError(f"{name}: applies to weighting='wls', found "
                                f"weighting={est.weighting!r}; drop one of them")
    if est.regularization not in (None, "euclidean", "entropic"):
        raise DataError(f"regularization: expected None, 'euclidean' or 'entropic', found "
                        f"{est.regularization!r}")
    if est.solver not in solvers:
        raise DataError(f"solver: expected one of {solvers}, found {est.solver!r}")
    for name, value in (("epsilon", est.epsilon), ("weight", est.weight),
                        ("com_margin", est.com_margin)):
        if not (np.isfinite(value) and (value > 0 if name == "epsilon" else value >= 0)):
            want = "> 0" if name == "epsilon" else "≥ 0"
            raise DataError(f"{name}: expected a finite value {want}, found {value}")
    if isinstance(est.mass_bounds, int | float) and not 0 <= est.mass_bounds < 1:
        raise DataError(f"mass_bounds: expected a fraction r in [0, 1) for (1 ± r)·prior, "
                        f"found {est.mass_bounds}")
    if isinstance(est.mass_bounds, Mapping):
        for link, bounds in est.mass_bounds.items():
            _check_interval(f"mass_bounds[{link!r}]", bounds, "kg")
    if est.total_mass is not None:
        _check_interval("total_mass", est.total_mass, "kg")
    if est.covariance not in ("auto", "regularized", "bootstrap", "unconstrained",
                               "conditional"):
        raise DataError(f"covariance: expected 'auto', 'regularized', 'bootstrap', "
                        f"'unconstrained' or 'conditional', found "
                        f"{excerpt(est.covariance)}")
    if est.covariance == "regularized" and est.regularization is None:
        raise DataError("covariance='regularized': applies to a regularized fit, found "
                        "regularization=None; e.g. PhysicallyConsistent("
                        "regularization='euclidean', weight=1.0, covariance='regularized')")
    if not (isinstance(est.draws, int) and 2 <= est.draws <= 100_000):
        raise DataError(f"draws: expected an integer between 2 and 100000, found "
                        f"{excerpt(est.draws)}")
