"""Finite differences whose accuracy is known, for checking analytic derivatives.

A central difference with one fixed small step mixes two errors: truncation, which shrinks with
the step, and rounding of the function values divided by the step, which grows as it shrinks.
A tolerance tuned to one machine's rounding then fails on another BLAS. Here the steps are
fractions of the length over which the function varies (``scale``), large enough that rounding
stays far below what is checked, and truncation is removed by Richardson extrapolation:

    D(h)  = (f(x + h d) − f(x − h d)) / 2h            = f′ + c₂h² + c₄h⁴ + …
    R(h)  = (4 D(h/2) − D(h)) / 3                     = f′ − c₄h⁴/4 + …

``R(h/2)`` has a truncation error of a fifteenth of ``R(h) − R(h/2)``; its rounding error is at
most ``6η/h`` for function values rounded by at most ``η`` (the absolute weights of ``R(h/2)``
sum to ``6/h``), and the difference ``R(h) − R(h/2)`` holds at most ``9η/h`` of rounding. So
``|R(h/2) − f′| ≤ |R(h) − R(h/2)| + 7η/h``: an error bound measured at the point, not assumed.
``η`` is ``rounding`` times the largest magnitude of any entry of the function over the points
evaluated (an entry near zero may be the difference of large terms, and as rounded as they
are); the default 1e-12 allows a loss of four digits to the conditioning of long computations
(factorizations, condition numbers), far more than one BLAS differs from another.

The estimate is taken on a ladder of steps ``h = STEP·scale/2^k``, k = 0 … 5, and at each entry
the one with the smallest bound is kept: long steps where the function is smooth (rounding
matters least), shorter ones where a long step reaches a kink (the extreme of a column moving to
another sample, a Coulomb sign), which shows as a large difference of the extrapolations.

:func:`assert_derivative` compares against the estimate with twice the bound, and first checks
that the bound is below ``resolution`` of the derivative's size, so that a check that passes
still rules out an error of that relative size (a derivative off by 1e-4 fails with the
default 1e-5).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Longest step as a fraction of the function's length scale: about ε^(1/5), which balances
#: the h⁴ truncation left after one extrapolation against rounding divided by h.
STEP = 1e-3
#: Steps on the ladder, each half the one before.
LEVELS = 6


@dataclass(frozen=True)
class Derivative:
    """A finite-difference estimate and a bound of its error (elementwise, same shape)."""

    value: np.ndarray
    error: np.ndarray


def derivative(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, direction: np.ndarray,
               *, scale: float = 1.0, rounding: float = 1e-12) -> Derivative:
    """Directional derivative of ``f`` at ``x`` along ``direction``, extrapolated, with its
    error bound.

    Parameters
    ----------
    f
        Function of an array shaped like ``x``, returning a scalar or an array.
    x, direction
        Point and direction (same shape; the direction need not be normalized).
    scale
        Length, in multiples of ``direction``, over which ``f`` varies by its own size; the
        longest step is ``STEP * scale``.
    rounding
        Relative rounding assumed for the values of ``f``.
    """
    x = np.asarray(x, dtype=float)
    d = np.asarray(direction, dtype=float)
    steps = STEP * scale / 2.0 ** np.arange(LEVELS)
    pairs = [(np.asarray(f(x + h * d), dtype=float), np.asarray(f(x - h * d), dtype=float))
             for h in steps]
    eta = rounding * np.max(np.abs(np.array(pairs)))
    central = [(plus - minus) / (2 * h) for (plus, minus), h in zip(pairs, steps, strict=True)]
    # R(h_k) from the steps h_k and h_k/2; R(h_{k+1}) is kept with its bound from R(h_k).
    extrapolated = [(4 * fine - coarse) / 3 for coarse, fine in itertools.pairwise(central)]
    candidates = [(fine, np.abs(coarse - fine) + 7 * eta / h) for h, (coarse, fine)
                  in zip(steps, itertools.pairwise(extrapolated), strict=False)]
    value, error = candidates[0]
    for fine, bound in candidates[1:]:
        better = bound < error
        value, error = np.where(better, fine, value), np.where(better, bound, error)
    return Derivative(value, error)


def assert_derivative(analytic, estimate: Derivative, *, accuracy: float = 0.0,
                      resolution: float = 1e-5, size: float | None = None,
                      what: str = "derivative") -> None:
    """Assert that ``analytic`` agrees with a finite-difference ``estimate`` within twice its
    error bound, after asserting that the bound resolves ``resolution`` of the derivative's
    size (else the check could not tell a wrong derivative from a right one).

    Parameters
    ----------
    analytic, estimate
        The derivative to check and its finite-difference estimate.
    accuracy
        Relative accuracy of ``analytic`` itself, of the size (0 for a derivative exact up to
        rounding), added to the tolerance.
    resolution
        Smallest relative error of the size that the check must be able to see.
    size
        Magnitude of the derivative: by default the largest of ``analytic`` and ``estimate``;
        give the magnitude of the whole Jacobian when checking a part that may vanish.
    """
    analytic = np.asarray(analytic, dtype=float)
    if size is None:
        size = max(np.abs(estimate.value).max(), np.abs(analytic).max())
    tol = 2 * estimate.error + accuracy * size
    assert np.all(tol <= resolution * size), (
        f"{what}: finite differences too inaccurate to check it: tolerance {tol.max():.3g} "
        f"against {resolution:g} of its size {size:.3g}; give a shorter length scale")
    miss = np.abs(analytic - estimate.value)
    assert np.all(miss <= tol), (
        f"{what}: analytic {analytic} against finite differences {estimate.value}: "
        f"differences {miss} exceed the tolerance {tol}")


def sum_rounding(magnitude, terms: int):
    """Largest difference between two evaluations, each in its own order (as different BLAS
    kernels or filter implementations sum), of sums of ``terms`` products whose absolute
    values add up to ``magnitude``: twice Higham's bound ``γ_n = n u / (1 − n u)`` of one
    evaluation, with ``u`` taken as ε (twice the unit roundoff). Unlike a relative tolerance
    it holds for sums that cancel to nearly zero."""
    eps = np.finfo(float).eps
    return 2 * terms * eps / (1 - terms * eps) * np.asarray(magnitude, dtype=float)
