"""How the outputs are weighted: noise levels given by the user, or estimated from the
residuals and iterated until they settle.

Weighted least squares weighs each output (joint) by ``1/σ_j``. The σ can be

* given: a standard deviation per output (``sigma=``, in the output's unit), or the full
  output noise covariance of one sample (``noise_covariance=``, n × n), checked by
  :func:`check_sigma` and :func:`check_noise_covariance`;
* estimated from the residuals (:func:`iterate`): a first pass weighted by the OLS residuals,
  then each pass weighted by the residuals of the previous one, until every σ changes by less
  than a relative tolerance. On an arm whose joints carry torques of very different sizes the
  OLS residual of a quiet joint holds the noise of the loud ones; each pass removes more of it.

Iterating makes the weights depend on the fit itself: an output weighted heavily takes a
larger share ``h_j`` of the fit's leverage (:meth:`~dynid.identify.system.JointSystem.leverage`)
and leaves a residual smaller than its noise by that share. So its σ is estimated with its own
degrees of freedom, ``σ_j² = e_jᵀ e_j / (N − h_j)``, unbiased at the fixed point; shared
equally, the quiet outputs' σ would come out too small and the loud ones' too large, and the
iteration would push further in that direction.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._files import excerpt, read_text
from ..errors import DataError, DynidWarning
from .system import JointSystem

__all__ = ["MAX_ITERATIONS", "TOLERANCE", "Weighting", "check_iterations",
           "check_noise_covariance", "check_sigma", "given", "iterate", "read_numbers"]

#: Default relative change of every σ below which the iteration has settled.
TOLERANCE = 1e-3
#: Default bound on the weighted passes of the iteration.
MAX_ITERATIONS = 50


@dataclass(frozen=True)
class Weighting:
    """The output covariance (n, n) that weighted an estimate, and where it came from.

    Attributes
    ----------
    covariance
        The weighting ``V`` (n, n): each output weighed by ``V⁻¹``.
    source
        ``"residuals"`` (iterated from the residuals), ``"given"`` (by the user), ``"ols"``
        (one pooled σ) or ``"gauss-markov"`` (a full covariance, see
        :class:`~dynid.identify.estimators.GaussMarkov`).
    iterations
        Weighted passes (for ``"residuals"``).
    settled
        Whether the last pass changed every σ by less than ``tolerance``.
    change
        The largest relative change of a σ in the last pass.
    tolerance
        The tolerance the change was held to.

    Examples
    --------
    Each output's σ (in its unit), where they came from and how many passes they took:

    >>> w = WLS().fit(data).weighting_                  # doctest: +SKIP
    >>> w.source, w.iterations, w.settled               # doctest: +SKIP
    ('residuals', 4, True)
    >>> w.sigma                                         # doctest: +SKIP
    array([0.22 , 0.186, 0.205, 0.196, 0.215, 0.172, 0.158])
    """

    covariance: np.ndarray
    source: str
    iterations: int | None = None
    settled: bool | None = None
    change: float | None = None
    tolerance: float | None = None

    @property
    def sigma(self) -> np.ndarray:
        """Each output's σ (n,) in its unit."""
        return np.sqrt(np.diag(self.covariance))

    def to_json(self) -> dict:
        out = {"source": self.source, "sigma": self.sigma.tolist()}
        if self.iterations is not None:
            out.update(iterations=self.iterations, settled=self.settled, change=self.change,
                       tolerance=self.tolerance)
        return out


def iterate(system: JointSystem, start: np.ndarray, names: Sequence[str], *,
            iterations: int | str = "auto", tolerance: float = TOLERANCE,
            max_iterations: int = MAX_ITERATIONS) -> Weighting:
    """The weighting of each output by its noise level estimated from the residuals.

    Parameters
    ----------
    system
        The compressed system.
    start
        The diagonal covariance (n, n) weighting the first pass (from the OLS residuals).
    names
        Output names, for messages.
    iterations
        ``"auto"``: repeat until every σ changes by less than ``tolerance`` (relative), at
        most ``max_iterations`` passes, with a :class:`~dynid.errors.DynidWarning` naming the
        outputs that did not settle; an integer k: exactly k weighted passes (1: the single
        pass weighted by ``start``).

    Examples
    --------
    >>> weighting = iterate(system, start, ["joint1", "joint2"])  # doctest: +SKIP
    >>> weighting.sigma, weighting.iterations                     # doctest: +SKIP
    (array([0.21, 0.018]), 4)
    """
    limit = max_iterations if iterations == "auto" else iterations
    V = np.asarray(start, dtype=float)
    passes = 0
    while True:
        theta = system.system(covariance=V).solve()
        passes += 1
        new = np.diag(system.residual_covariance(theta, weighting=V))
        quiet = np.flatnonzero(new <= 0)
        if len(quiet):
            raise DataError(f"weighted least squares: the residual of {names[quiet[0]]} is zero "
                            f"after {passes} weighted pass(es), so it cannot be weighted; give "
                            "its noise level (sigma=) or use OLS")
        change = np.abs(np.sqrt(new / np.diag(V)) - 1)
        if passes >= limit or (iterations == "auto" and change.max() < tolerance):
            break
        V = np.diag(new)
    settled = bool(change.max() < tolerance)
    if iterations == "auto" and not settled:
        moving = ", ".join(f"{names[j]} (σ {np.sqrt(V[j, j]):.4g} → {np.sqrt(new[j]):.4g})"
                           for j in np.flatnonzero(change >= tolerance))
        warnings.warn(f"weighted least squares: the noise level of {moving} did not settle "
                      f"within {passes} weighted pass{'es' if passes > 1 else ''} (relative "
                      f"change {change.max():.2g}, "
                      f"tolerance {tolerance:g}); the estimate is weighted by the last σ. "
                      "Allow more passes (max_iterations=) or take the single pass "
                      "(iterations=1)", DynidWarning, stacklevel=6)
    return Weighting(V, "residuals", passes, settled, float(change.max()), tolerance)


def check_iterations(iterations: object, tolerance: object, max_iterations: object, *,
                     name: str = "iterations") -> None:
    """Raise :class:`~dynid.errors.DataError` unless the iteration settings are valid
    (``name``: how messages call ``iterations``)."""
    if not (isinstance(iterations, str) and iterations == "auto") and \
            not _count(iterations, 1, 1000):
        raise DataError(f"{name}: expected 'auto' or an integer between 1 and 1000, found "
                        f"{excerpt(iterations)}; e.g. {name}='auto' (until the σ settle) "
                        f"or {name}=1 (one pass weighted by the OLS residuals)")
    if not (isinstance(tolerance, int | float) and not isinstance(tolerance, bool)
            and 0 < tolerance < 1):
        raise DataError(f"tolerance: expected a relative change of σ in (0, 1), found "
                        f"{excerpt(tolerance)}; e.g. tolerance=1e-3")
    if not _count(max_iterations, 1, 1000):
        raise DataError(f"max_iterations: expected an integer between 1 and 1000, found "
                        f"{excerpt(max_iterations)}; e.g. max_iterations=50")


def _count(value: object, low: int, high: int) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool) and \
        low <= value <= high


def _array(value: object, name: str, expected: str, example: str) -> np.ndarray:
    """``value`` as a float array, or a :class:`DataError` saying what was expected."""
    if value is None or isinstance(value, str | bytes | Mapping):
        raise DataError(f"{name}: expected {expected}, found {excerpt(value)}; e.g. {example}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise DataError(f"{name}: expected {expected}, found {excerpt(value)}; e.g. "
                        f"{example}") from None


def check_sigma(sigma: object, names: Sequence[str], *, name: str = "sigma",
                example: str | None = None) -> np.ndarray:
    """The noise standard deviation of each output (n,), checked: one finite σ > 0 per output
    named in ``names``, in the output's unit. ``name`` and ``example`` are how messages
    call the argument and show a right one."""
    n = len(names)
    example = example or f"{name}=[{', '.join(['0.1'] * n)}]"
    expected = f"one noise σ > 0 per output ({', '.join(names)}), in the output's unit"
    values = _array(sigma, name, expected, example)
    if values.shape != (n,):
        found = f"{len(values)} values" if values.ndim == 1 else f"shape {values.shape}"
        raise DataError(f"{name}: expected {expected}: {n} values, found {found} "
                        f"({excerpt(sigma)}); e.g. {example}")
    for j, s in enumerate(values):
        if not (np.isfinite(s) and s > 0):
            raise DataError(f"{name}[{j}] ({names[j]}): expected a finite σ > 0, found {s:g}; "
                            f"e.g. {example}")
    return values


def check_noise_covariance(covariance: object, names: Sequence[str], *,
                           name: str = "noise_covariance", example: str | None = None
                           ) -> np.ndarray:
    """The output noise covariance (n, n) of one sample, checked: finite, symmetric and
    positive definite, over the outputs named in ``names``."""
    n = len(names)
    example = example or f"{name}=np.diag([{', '.join(['0.1'] * n)}]) ** 2"
    expected = f"the ({n}, {n}) covariance of the outputs' noise ({', '.join(names)})"
    S = _array(covariance, name, expected, example)
    if S.shape != (n, n):
        raise DataError(f"{name}: expected {expected}, found shape {S.shape}; e.g. {example}")
    bad = np.argwhere(~np.isfinite(S))
    if len(bad):
        i, k = bad[0]
        raise DataError(f"{name}[{i}][{k}]: expected a finite number, found {S[i, k]:g}; e.g. "
                        f"{example}")
    for j in range(n):
        if not S[j, j] > 0:
            raise DataError(f"{name}[{j}][{j}] ({names[j]}): expected a variance > 0, found "
                            f"{S[j, j]:g}; e.g. {example}")
    asym = np.abs(S - S.T)
    if asym.max() > 1e-10 * np.abs(S).max():
        i, k = np.unravel_index(np.argmax(asym), S.shape)
        raise DataError(f"{name}: expected a symmetric matrix, found {name}[{i}][{k}] = "
                        f"{S[i, k]:g} but {name}[{k}][{i}] = {S[k, i]:g}; e.g. {example}")
    d = np.sqrt(np.diag(S))
    w = np.linalg.eigvalsh(S / np.outer(d, d))
    if w[0] <= 1e-12:
        corr = np.abs(S / np.outer(d, d) - np.eye(n))
        i, k = np.unravel_index(np.argmax(corr), S.shape)
        raise DataError(f"{name}: expected a positive definite covariance, found a singular or "
                        f"indefinite one (smallest eigenvalue of its correlation matrix "
                        f"{w[0]:.3g}; {names[i]} and {names[k]} correlate by "
                        f"{S[i, k] / (d[i] * d[k]):.3g}); correlations must be below 1 in "
                        f"size and the matrix must be a covariance; e.g. {example}")
    return S


def given(sigma: object, noise_covariance: object, names: Sequence[str], *,
          iterations: object = "auto", labels: tuple[str, str, str] | None = None,
          examples: tuple[str, str] | None = None) -> np.ndarray | None:
    """The output covariance (n, n) the user gives (``sigma`` or ``noise_covariance``),
    checked, or ``None`` when neither is given. ``labels`` name the three settings in
    messages (default: their argument names), ``examples`` show right ones."""
    s_name, c_name, i_name = labels or ("sigma", "noise_covariance", "iterations")
    s_example, c_example = examples or (None, None)
    if sigma is not None and noise_covariance is not None:
        raise DataError(f"{s_name} and {c_name}: give one of them (σ per output, or their "
                        "full covariance), not both")
    if sigma is None and noise_covariance is None:
        return None
    if iterations != "auto":
        what = s_name if sigma is not None else c_name
        raise DataError(f"{i_name}: the weights are given ({what}), so there is nothing to "
                        f"iterate; drop {i_name} or {what}")
    if sigma is not None:
        return np.diag(check_sigma(sigma, names, name=s_name, example=s_example) ** 2)
    return check_noise_covariance(noise_covariance, names, name=c_name, example=c_example)


def read_numbers(source: str | Path, what: str) -> np.ndarray:
    """The rows of numbers (r, c) of a text file (commas or blanks between them, ``#``
    comments). Errors name ``what``, the file, its line and column."""
    path = Path(source)
    text = read_text(path, what, DataError, max_bytes=2**20)
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        items = line.split("#", 1)[0].replace(",", " ").split()
        if not items:
            continue
        row = []
        for column, item in enumerate(items, start=1):
            try:
                row.append(float(item))
            except ValueError:
                raise DataError(f"{what} {excerpt(str(path), 200)}: line {number}, column "
                                f"{column}: expected a number, found {excerpt(item)}"
                                ) from None
        if rows and len(row) != len(rows[0]):
            raise DataError(f"{what} {excerpt(str(path), 200)}: line {number}: expected "
                            f"{len(rows[0])} numbers like the first row, found {len(row)}")
        rows.append(row)
    if not rows:
        raise DataError(f"{what} {excerpt(str(path), 200)}: no numbers in the file")
    return np.array(rows)
