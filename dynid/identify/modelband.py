"""The model low-passed as the output was: parallel filtering of an output filtered at capture.

Some loggers low-pass the output (torque, current) before they write it, in a narrower band
than the positions: FloBaRoID's KUKA LWR4+ logger, for instance, low-passed the positions at
3 Hz and the torques at 2 Hz. The regressor built from the positions then holds motion that
the recorded output lacks, and the mismatch grows with the speed of the motion. Passing the
regressor through the same low-pass as the output restores the model (it is linear in the
parameters, so ``F(Y) θ = F(Y θ)``) without filtering the measured output again:

    y_recorded = F(τ) ≈ F(Y) θ

``Processing(model_cutoff=f)`` applies a zero-phase Butterworth of the processing's order,
designed at ``f`` Hz, to every regressor column along time (before any decimation), and
validation applies it to the prediction. With ``model_cutoff="auto"`` (the default),
identification looks for such a filter when every output channel of every recording lacks a
noise floor (:func:`~dynid.identify.filters.has_floor`: the signal was low-passed before it
was recorded): the cutoff whose filtered regressor fits the training output best by ordinary
least squares (a geometric grid of 12 cutoffs, then a bounded scalar search between the
grid's neighbours; each fit solved by :class:`~dynid.identify._filteredfit.FilteredFit`, which
filters only the regressor's non-zero columns and solves refined normal equations), kept
when it lowers the training residual by at least :data:`MIN_GAIN` against no filter (none is
looked for when the unfiltered model already explains the output to rounding).
Only the recordings identified are used. An output with a noise floor gets no model filter.

Identification filters the regressor chunk by chunk: each chunk is computed with
:func:`~dynid.identify._chunkfilter.filter_margin` samples on each side (about ``14 fs / c``
for order 4), which the zero-phase filter's transient needs to die out to about 10⁻¹² of the
signals, so memory follows the chunk (at least four margins long, so that the margins add
at most half the work), not the recording.
The automatic search filters whole recordings, once per cutoff: it holds every recording's
non-zero regressor columns, and is skipped with a warning beyond :data:`MAX_VALUES`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from .._blas import single_thread
from .._files import excerpt
from .._validate import is_number
from ..errors import DataError, DynidWarning
from ._chunkfilter import filter_slice
from ._filteredfit import FilteredFit
from .filters import has_floor, lowpass
from .recording import Recording

__all__ = ["MAX_VALUES", "MIN_GAIN", "check_below_nyquist", "check_model_cutoff",
           "choose_model_cutoff", "filter_model", "model_rows"]

#: Relative reduction of the training residual's norm a model filter must bring to be kept.
MIN_GAIN = 0.02
#: Most regressor values (samples × outputs × base parameters, over the recordings) the
#: automatic search holds in memory (400 MB); beyond, it warns and applies no filter.
MAX_VALUES = 50_000_000
#: Candidate cutoffs of the grid, per recording's Nyquist frequency (geometric, 12 points).
_GRID = np.geomspace(0.005, 0.8, 12)
#: Tolerance of the bounded search between the grid's neighbours, on the log of the cutoff.
_XATOL = 1e-3
#: A model that explains the output to this fraction of its norm needs no filter.
_EXACT = 1e-6


def check_model_cutoff(value: object) -> None:
    """Raise :class:`DataError` unless ``value`` is ``None``, ``"auto"`` or a frequency > 0
    Hz."""
    if value is None or (value == "auto" and isinstance(value, str)):
        return
    if not (is_number(value) and 0 < value < np.inf):
        raise DataError(f"model_cutoff: expected a frequency > 0 Hz (the low-pass the output "
                        f"passed before it was recorded), 'auto' or None, found "
                        f"{excerpt(value)}; e.g. Processing(model_cutoff=2.0)")


def filter_model(x: np.ndarray, rate: float, cutoff: float | None, order: int) -> np.ndarray:
    """``x`` (N, ...) through the model filter: a zero-phase Butterworth of ``order`` designed
    at ``cutoff`` Hz along the first axis (:func:`~dynid.identify.filters.lowpass`); ``x``
    itself for ``None``.

    Examples
    --------
    >>> t = np.arange(0, 10, 0.005)
    >>> y = filter_model(np.sin(2 * np.pi * 5 * t)[:, None], 200.0, 2.0, 4)   # mostly gone
    """
    if cutoff is None:
        return np.asarray(x, dtype=float)
    check_below_nyquist(cutoff, rate)
    return lowpass(x, rate, float(cutoff), order)


def check_below_nyquist(cutoff: float, rate: float) -> None:
    """Raise :class:`DataError` unless the model filter's ``cutoff`` (Hz) is below the
    Nyquist frequency of ``rate``."""
    if not cutoff < rate / 2:
        raise DataError(f"model_cutoff: {cutoff:g} Hz is not below the Nyquist frequency "
                        f"{rate / 2:g} Hz of a recording at {rate:g} Hz; give a lower cutoff "
                        "(or None)")


def model_rows(regressor, base, rec: Recording, states: Recording, cutoff: float | None,
               order: int, output_error: bool = False, rows: slice = slice(None)
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The base regressor (N, n, b), the known bodies' output (N, n) and the output (N, n)
    of a processed recording at the samples ``rows`` (all by default), at the states of
    ``states`` (the recording itself, or a simulated run of the same samples), the model side
    through the model filter. With ``output_error`` the output is the recording's less the
    simulated run's (filtered as the model), and the known bodies' output is zero.

    The filter is computed from ``rows`` and :func:`~dynid.identify._chunkfilter.filter_margin`
    samples on each side, as the whole recording filtered would give them to about 10⁻¹² of
    the signals' amplitude: memory follows the rows asked for, not the recording."""
    start, stop, step = rows.indices(rec.n_samples)
    if stop <= start or step != 1:
        raise DataError(f"model_rows: rows {rows} is not a non-empty run of consecutive "
                        f"samples of a recording of {rec.n_samples}; give e.g. "
                        f"rows=slice(0, {min(rec.n_samples, 2048)})")

    def unfiltered(part: slice) -> np.ndarray:
        """The base regressor with the known bodies' output as a last column (N, n, b + 1)."""
        blocks = []
        for k in range(part.start, part.stop, 2048):
            sl = slice(k, min(k + 2048, part.stop))
            Y, known = regressor.affine(states.positions[sl], states.velocities[sl],
                                        states.accelerations[sl])
            blocks.append(np.concatenate([base.regressor(Y), known[:, :, None]], axis=2))
        return np.concatenate(blocks)

    def filtered(signal: Callable[[slice], np.ndarray]) -> np.ndarray:
        if cutoff is None:
            return signal(slice(start, stop))
        return filter_slice(signal, rec.n_samples, slice(start, stop), rec.rate, cutoff, order)

    both = filtered(unfiltered)
    Yb, known = both[:, :, :-1], both[:, :, -1]
    y = rec.output[start:stop]
    if output_error:
        return Yb, np.zeros_like(known), y - filtered(lambda part: states.output[part])
    return Yb, known, y


def choose_model_cutoff(regressor, base, recordings: Sequence[Recording], order: int,
                        keep: Sequence[np.ndarray] | None = None) -> float | None:
    """The model filter's cutoff (Hz) for processed ``recordings``, or ``None``: none when an
    output channel of a recording has a noise floor, or when no cutoff lowers the ordinary
    least-squares residual by :data:`MIN_GAIN` (see the module docstring). ``keep`` (one
    (N, n) mask per recording) leaves rows out of the fits. Identification calls it for
    ``Processing(model_cutoff="auto")``.

    Examples
    --------
    >>> data = IdentificationData(robot, recordings)      # doctest: +SKIP
    >>> choose_model_cutoff(data.regressor, data.base, data.processed, order=4)  # doctest: +SKIP
    1.58
    >>> data.processing.model_cutoff   # the same, chosen by default   # doctest: +SKIP
    1.58
    """
    from scipy.optimize import minimize_scalar

    recs = tuple(recordings)
    if any(r.n_samples < 64 or has_floor(r.output, r.rate).any() for r in recs):
        return None
    values = sum(r.n_samples for r in recs) * recs[0].n * base.rank
    if values > MAX_VALUES:
        warnings.warn(f"processing: the outputs have no noise floor (low-passed before they "
                      f"were recorded?), but the model filter was not looked for: the "
                      f"recordings' regressor holds {values:.3g} values, more than "
                      f"{MAX_VALUES:.3g}. Give Processing(model_cutoff=HZ) to apply one, or "
                      "model_cutoff=None", DynidWarning, stacklevel=4)
        return None
    masks = [np.ones(r.output.shape, bool) if keep is None else k
             for r, k in zip(recs, keep or [None] * len(recs), strict=True)]
    fit = FilteredFit((model_rows(regressor, base, r, r, None, order) for r in recs),
                      [r.rate for r in recs], masks, order)
    nyquist = min(r.rate for r in recs) / 2
    lowest = max(1.0 / min(r.n_samples / r.rate for r in recs), _GRID[0] * nyquist)
    grid = np.array([f for f in _GRID * nyquist if f >= lowest])
    with single_thread():
        unfiltered = fit.residual(None)
        if not len(grid) or unfiltered <= _EXACT * fit.norm:
            return None
        scores = np.array([fit.residual(float(f)) for f in grid])
        i = int(np.argmin(scores))
        low, high = np.log(grid[max(i - 1, 0)]), np.log(grid[min(i + 1, len(grid) - 1)])
        found = minimize_scalar(lambda x: fit.residual(float(np.exp(x))), bounds=(low, high),
                                method="bounded", options={"xatol": _XATOL})
    best, score = (float(np.exp(found.x)), found.fun) if found.fun < scores[i] else \
        (float(grid[i]), scores[i])
    return float(f"{best:.4g}") if score <= (1 - MIN_GAIN) * unfiltered else None
