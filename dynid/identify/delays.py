"""Delays between channels: the output and recorded velocities against the positions.

A drive's current loop, its velocity estimate and the bus add a constant delay between what
it reports and the positions sampled with it: the output (current or torque) and the
velocities show what happened ``d`` seconds earlier. A delay of a few samples is invisible
at sample resolution but biases identification: the output no longer matches the state it is
paired with (a phase error that grows with frequency), so inertia and viscous friction trade
off and the residual grows.

:class:`Delays` holds the delay of each channel (s; positive: the channel lags the
positions). :func:`compensate` advances the delayed channels, ``x(t + d)``, by a phase shift
of their spectrum (:func:`advance`: all-pass, so the output's noise is not filtered), and
drops the samples at the end (or start) where a shifted channel has no data.

Estimation (:func:`estimate_delays`) finds the lag ``m`` (whole samples) that minimizes the
residual ``J(m)`` of a least-squares fit of the channel at ``k + m`` by its reference at
``k``, first on a coarse grid over ± the search bound, then at every sample around its
minimum, and places the delay at the vertex of the parabola through the smallest residual and
its two neighbours (a fraction of a sample):

* the output: the reference is the base regressor of the processed states (positions
  low-passed and differentiated as the processing says), the fit is the identification's
  ordinary least squares over every output, and all lags of a grid are compressed in one
  pass (``[W  y_{m1} … y_{mK}]`` QR-compressed: ``J(m)`` is the squared norm of a column of
  the factor's last block, and memory does not grow with the samples). Rows near a velocity
  reversal are left out, where the Coulomb friction's sign flips: it flips at a sample in
  the model and between samples in the output, which would tie the fit to whole samples
  (the residual there grows with ``|m − d|``, not ``(m − d)²``); so are the ends, where the
  zero-phase low-pass has its transients;
* the recorded velocities: the reference is the derivative of the positions, both
  low-passed alike by the processing's zero-phase filter, one gain per joint, the residuals
  of the joints summed relative to each joint's velocity energy.

Every lag uses the same samples of the reference, so ``J`` changes with the lag only through
the fit. The estimate is the group delay of the channel at the motion's frequencies: a
first-order lag of time constant τ counts as a delay τ.

:class:`Delays` and the compensation are defined in :mod:`dynid.identify.compensation` and
importable from here; this module estimates the delays.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .._files import excerpt
from .._linalg import stack_triangular
from .._validate import is_number
from ..errors import DataError, DynidWarning
from .compensation import (
    MAX_SHARE,
    Delays,
    advance,
    check_delays,  # noqa: F401  (importable from here too)
    compensate,
    delay_setting,
)
from .exclusion import Exclusion
from .filters import TAPS_PER_FACTOR, differentiate, lowpass
from .recording import Recording

__all__ = ["MAX_SEARCH", "Delays", "advance", "compensate", "delay_setting",
           "estimate_delays"]

#: Default bound of the delay search, s: the lags tried are within ± this.
MAX_SEARCH = 0.05
# Samples per chunk of the output's fit.
_CHUNK = 1024
# Coarse lags searched on each side of zero, at most.
_COARSE = 10


# Estimation --------------------------------------------------------------------------------
def estimate_delays(robot, recordings: Recording | Sequence[Recording], processing=None, *,
                    base=None, bound: float = MAX_SEARCH) -> Delays:
    """Estimate the delays of the recorded velocities (when the recordings carry them) and
    of the output behind the positions (see the module docstring).

    Parameters
    ----------
    robot
        The model identified.
    recordings
        Raw recordings (one delay for all of them), at the same rate.
    processing
        How the states are derived for the output's fit (default: ``Processing()``);
        automatic settings are chosen without a fit (:meth:`Processing.resolve`). The fits
        are not decimated, so an automatic cutoff is lowered to at most twice the band that
        the chosen decimation keeps (``rate / decimate``): the low-pass then leaves the
        regressor about the band that identification keeps, not the differentiated noise
        above it.
    base
        The robot's base parameters (default: computed).
    bound
        Largest delay tried, s (at most a tenth of the shortest record). An estimate at the
        bound warns: the delay may be longer.

    Examples
    --------
    >>> delays = estimate_delays(robot, [rec1, rec2])
    >>> delays.output * 1e3                    # ms
    >>> IdentificationData(robot, [rec1, rec2], processing=Processing(delay=delays))
    """
    from ..models import Regressor, base_parameters
    from .data import check_recording
    from .processing import Processing

    recs = (recordings,) if isinstance(recordings, Recording) else tuple(recordings)
    recs = tuple(check_recording(robot, r, reorder=True) for r in recs)
    processing = Processing() if processing is None else processing
    rate = _common_rate(recs)
    M = _largest_lag(recs, rate, bound)
    plain = replace(processing, delay=None, period=None, harmonics_cutoff=None, skip=0)
    plain = plain.resolve(recs) if not plain.resolved else plain
    if processing.cutoff == "auto":
        plain = replace(plain, cutoff=_undecimated(plain, rate))
    velocities = None
    if all(r.velocities is not None for r in recs):
        cutoff = _undecimated(replace(plain, derivatives="positions", cutoff="auto",
                                      decimate="auto").resolve(recs), rate) \
            if processing.cutoff == "auto" else plain.cutoff
        velocities = _search(_VelocityFit(recs, cutoff, plain.order, rate, M), M, rate,
                             "the recorded velocities")
        recs = tuple(compensate(r, Delays(0.0, velocities)) for r in recs)
    base = base_parameters(robot) if base is None else base
    reach = Exclusion.for_robot(robot, 0.0, None).reach
    fit = _OutputFit([plain.apply(r, robot) for r in recs], Regressor(robot), base, reach, M,
                     M + _margin(plain, rate))
    return Delays(_search(fit, M, rate, "the output"), velocities)


def _undecimated(processing, rate: float) -> float | None:
    """The cutoff of resolved ``processing`` for a fit without decimation: at most twice the
    band its decimation keeps, ``rate / decimate`` (three significant digits)."""
    if processing.cutoff is None:
        return None
    return min(float(processing.cutoff), float(f"{rate / processing.decimate:.3g}"))


def _common_rate(recs: Sequence[Recording]) -> float:
    rates = np.array([r.rate for r in recs])
    if np.ptp(rates) > 1e-6 * rates.max():
        raise DataError(f"delay='estimate': the recordings are sampled at different rates "
                        f"({', '.join(f'{r:g}' for r in rates)} Hz); estimate the delay on "
                        "recordings of one rate (estimate_delays) and give it in seconds")
    for k, r in enumerate(recs):
        if not r.is_uniform(0.05):
            raise DataError(f"delay='estimate': recording {k + 1} is not uniformly sampled "
                            "(intervals vary by more than 5 %); read it with "
                            "timestamps='resample' or 'uniform'")
    return float(rates.mean())


def _largest_lag(recs: Sequence[Recording], rate: float, bound: float) -> int:
    """The largest lag tried, in samples: ``bound`` (at least 2 samples), a multiple of the
    coarse grid's step."""
    if not (is_number(bound) and bound > 0):
        raise DataError(f"bound: expected the largest delay tried, s (> 0), found "
                        f"{excerpt(bound)}")
    shortest = min(r.time[-1] - r.time[0] for r in recs)
    if bound > MAX_SHARE * shortest:
        raise DataError(f"bound: {1e3 * bound:.4g} ms is longer than a tenth of the shortest "
                        f"record ({shortest:.4g} s); search a shorter span, e.g. "
                        f"bound={MAX_SHARE * shortest / 2:.3g}")
    M = max(2, math.ceil(bound * rate - 1e-9))
    step = _step(M)
    return step * math.ceil(M / step)


def _step(M: int) -> int:
    """Spacing of the coarse grid of lags (samples): at most ``_COARSE`` lags each side."""
    return max(1, math.ceil(M / _COARSE))


def _margin(processing, rate: float) -> int:
    """Samples left out at each end, where the zero-phase low-pass of the positions has its
    transients: as many as the decimation filter of its cutoff reaches (what identification
    leaves out when it decimates)."""
    if not is_number(processing.cutoff):
        return 0
    return TAPS_PER_FACTOR // 2 * max(1, int(rate // processing.cutoff))


def _search(fit, M: int, rate: float, what: str) -> float:
    """The delay (s) minimizing ``fit(lags)`` (residual per lag in samples): on a coarse grid
    over ± ``M``, then on every sample around its minimum, the vertex of the parabola through
    the smallest residual and its neighbours. At the bound, the bound with a warning."""
    step = _step(M)
    coarse = np.arange(-M, M + 1, step, dtype=float)
    k = int(np.argmin(fit(coarse)))
    if k in (0, len(coarse) - 1):
        warnings.warn(f"delay: the delay of {what} is at the search bound "
                      f"({1e3 * coarse[k] / rate:+.4g} ms): it may be longer, or the channel "
                      "does not follow the positions; search further (bound=...) or check "
                      "the channels", DynidWarning, stacklevel=3)
        return float(coarse[k] / rate)
    fine = coarse[k] + np.arange(-step, step + 1)
    J = fit(fine)
    k = int(np.argmin(J))
    if k in (0, len(fine) - 1):
        return float(fine[k] / rate)
    left, mid, right = J[k - 1], J[k], J[k + 1]
    curvature = left - 2 * mid + right
    offset = 0.5 * (left - right) / curvature if curvature > 0 else 0.0
    return float((fine[k] + offset) / rate)


def _lagged(x: np.ndarray, lags: np.ndarray, start: int, stop: int) -> np.ndarray:
    """``x[k + m]`` (stop − start, n, K) for k in [start, stop) and the whole lags m."""
    return np.stack([x[start + m:stop + m] for m in lags.astype(int)], axis=-1)


class _VelocityFit:
    """Per lag, the sum over joints of the residual of the recorded velocities at ``k + m``
    fitted by a gain times the positions' derivative at ``k``, relative to the velocities'
    energy; both low-passed alike at ``cutoff``."""

    def __init__(self, recs: Sequence[Recording], cutoff, order: int, rate: float, M: int):
        self.parts = []
        for rec in recs:
            def smooth(x, rate=rec.rate):
                return x if cutoff is None else lowpass(x, rate, cutoff, order)
            margin = M + (0 if cutoff is None else TAPS_PER_FACTOR // 2 * int(rate // cutoff))
            margin = min(margin, rec.n_samples // 4)
            self.parts.append((differentiate(smooth(rec.positions), rec.time),
                               smooth(rec.velocities), margin))

    def __call__(self, lags: np.ndarray) -> np.ndarray:
        n = self.parts[0][0].shape[1]
        factors = [np.zeros((0, len(lags) + 1)) for _ in range(n)]
        for reference, channel, margin in self.parts:
            N = reference.shape[0]
            lagged = _lagged(channel, lags, margin, N - margin)
            for j in range(n):
                rows = np.column_stack([reference[margin:N - margin, j], lagged[:, j]])
                factors[j] = stack_triangular(factors[j], rows)
        J = np.zeros(len(lags))
        for R in factors:
            energy = np.sum(R[:, 1:] ** 2, axis=0)
            if energy.max() > 0:
                J += np.sum(R[1:, 1:] ** 2, axis=0) / energy.mean()
        return J


class _OutputFit:
    """Per lag ``m``, the residual ``‖P⊥ y_m‖²`` of the output at ``k + m`` fitted by the base
    regressor at ``k`` over every output (ordinary least squares), on the same rows for
    every lag: ``margin`` samples away from the ends, none whose window of lags (± ``M``)
    holds a saturated output, and none whose window holds a velocity reversal of a coordinate
    that reaches the row (``reach`` (n, n), as the dead zone's,
    :class:`~dynid.identify.exclusion.Exclusion`): there the Coulomb friction's sign flips
    at a sample of the model and between samples of the output, which ties the fit to whole
    samples."""

    def __init__(self, states: Sequence[Recording], regressor, base, reach: np.ndarray,
                 M: int, margin: int):
        self.states, self.regressor, self.base = states, regressor, base
        self.reversals = [np.diff(np.sign(rec.velocities), axis=0, prepend=0.0) != 0
                          for rec in states]
        self.reach = reach.astype(np.int64)
        self.window = np.ones(2 * M + 3)
        self.margin = margin

    def __call__(self, lags: np.ndarray) -> np.ndarray:
        b, K = self.base.rank, len(lags)
        factor = np.zeros((0, b + K))
        window = self.window
        for rec, reversals in zip(self.states, self.reversals, strict=True):
            N = rec.n_samples
            margin = min(self.margin, N // 4)
            clipped = np.convolve(rec.saturated.any(axis=1), window, mode="same") > 0
            near = np.column_stack([np.convolve(r, window, mode="same") > 0
                                    for r in reversals.T]).astype(np.int64)
            use = ~clipped[:, None] & ((near @ self.reach.T) == 0)
            for start in range(margin, N - margin, _CHUNK):
                sl = slice(start, min(start + _CHUNK, N - margin))
                Y, known = self.regressor.affine(rec.positions[sl], rec.velocities[sl],
                                                 rec.accelerations[sl])
                lagged = _lagged(rec.output, lags, sl.start, sl.stop) - known[..., None]
                keep = use[sl]
                rows = np.concatenate([self.base.regressor(Y)[keep], lagged[keep]], axis=1)
                factor = stack_triangular(factor, rows)
        if factor.shape[0] < b + K:
            raise DataError(f"delay='estimate': {factor.shape[0]} rows for {b} base "
                            f"parameters and {K} lags; record longer")
        norms = np.linalg.norm(factor[:, :b], axis=0)
        if np.min(np.abs(np.diag(factor[:b, :b])) / np.where(norms > 0, norms, 1)) < 1e-10:
            raise DataError("delay='estimate': the recordings do not excite every base "
                            "parameter (the regressor is rank deficient), so the output's "
                            "fit cannot tell delays apart; record a more exciting motion or "
                            "give the delay in seconds")
        return np.sum(factor[b:, b:] ** 2, axis=0)
