"""Time stamps: how regular they are, and what to do when they are not.

:func:`time_report` measures a time column: its median step, the jitter of the steps around it,
duplicated stamps, steps back in time and gaps (a step of more than 1.5 median steps: samples
are missing). The readers act on it as ``timestamps=`` says:

``"check"`` (default)
    refuse duplicates, steps back and gaps, naming them and the fixes; keep stamps that only
    jitter, with a :class:`~dynid.errors.DynidWarning` that gives the numbers;
``"strict"``
    refuse any irregularity, jitter beyond 1 % of a step included;
``"resample"`` (whenever the stamps are not uniform to rounding, jitter below 1 % included)
    the samples were taken at their stamps: interpolate every signal onto a uniform grid at
    the mean step (gaps left out), with a cubic spline through the samples (``scipy.interpolate.
    make_interp_spline``, ``k=3``); samples with the same stamp are averaged first; gaps of
    more than :data:`MAX_GAP` steps are refused (interpolating across them would invent data);
``"uniform"`` (likewise)
    the samples were taken at a constant rate and only their stamps jitter (a logger that
    stamps on receipt): the stamps are replaced by the straight line fitted to them by least
    squares; refused when a stamp is half a step or more off that line (a missing sample);

Both ``"resample"`` and ``"uniform"`` count the time from the first sample (stamps written as
absolute clock times, 1.46e9 s, hold steps only to 0.2 µs).
``"keep"``
    the stamps as recorded, with no check beyond the recording's own (strictly increasing).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import DataError, DynidWarning

__all__ = ["JITTER_TOLERANCE", "MAX_GAP", "TIMESTAMPS", "TimeReport", "regularize", "resample",
           "resampled", "time_report"]

#: What the readers do with irregular time stamps (see the module's documentation).
TIMESTAMPS = ("check", "strict", "resample", "uniform", "keep")
#: Largest deviation of a step from the median step, relative to it, that counts as regular.
JITTER_TOLERANCE = 0.01
#: A step longer than this many median steps is a gap (samples are missing).
GAP = 1.5
#: Longest gap, in median steps, that resampling interpolates across.
MAX_GAP = 3.0
_METHODS = {"cubic": 3, "linear": 1}


def _duration(s: float) -> str:
    s = float(s)
    if abs(s) < 1e-9:
        return "0 s" if s == 0 else "< 1 ns"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(s) >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


@dataclass(frozen=True)
class TimeReport:
    """How regular a time column is.

    Attributes
    ----------
    n_samples
        Number of stamps.
    median_step
        Median step between stamps, s.
    mean_step
        Mean of the steps that are neither duplicates, steps back nor gaps, s: the step of a
        resampling grid (the median of stamps rounded to a clock's resolution is biased).
    jitter_rms, jitter_max
        RMS and largest deviation of the steps from the median step, s (duplicates, steps back
        and gaps left out).
    duplicates, backwards
        Sample indices ``k`` whose stamp equals (is earlier than) the previous one.
    gaps
        ``(k, start, length)`` of each gap: sample ``k`` follows a step of ``length`` s (more
        than 1.5 median steps), ``start`` s after the first stamp.
    """

    n_samples: int
    median_step: float
    mean_step: float
    jitter_rms: float
    jitter_max: float
    duplicates: tuple[int, ...]
    backwards: tuple[int, ...]
    gaps: tuple[tuple[int, float, float], ...]

    @property
    def rate(self) -> float:
        """Sample rate from the median step, Hz."""
        return 1.0 / self.median_step

    def is_regular(self, tolerance: float = JITTER_TOLERANCE) -> bool:
        """No duplicate, step back or gap, and no step off the median by more than
        ``tolerance`` (relative)."""
        return not (self.duplicates or self.backwards or self.gaps) and \
            self.jitter_max <= tolerance * self.median_step

    def summary(self) -> str:
        """The numbers in one line."""
        h = self.median_step
        parts = [f"{self.n_samples} stamps, median step {_duration(h)} ({self.rate:.6g} Hz), "
                 f"jitter RMS {_duration(self.jitter_rms)} ({100 * self.jitter_rms / h:.2g} % "
                 f"of a step), max {_duration(self.jitter_max)} "
                 f"({100 * self.jitter_max / h:.2g} %)"]
        for what, where in (("duplicated stamps", self.duplicates),
                            ("steps back in time", self.backwards)):
            if where:
                shown = ", ".join(str(k) for k in where[:5]) + (", …" if len(where) > 5 else "")
                parts.append(f"{len(where)} {what} (at samples {shown})")
        if self.gaps:
            shown = ", ".join(f"{_duration(length)} before sample {k} ({start:.6g} s after the "
                              f"start)" for k, start, length in self.gaps[:3])
            parts.append(f"{len(self.gaps)} gaps of more than {GAP:g} steps ({shown}"
                         f"{', …' if len(self.gaps) > 3 else ''})")
        return "; ".join(parts)


def time_report(time: np.ndarray) -> TimeReport:
    """The regularity of a time column (s).

    Examples
    --------
    >>> t = np.arange(100) * 0.005
    >>> t[50:] += 0.02                       # four samples lost
    >>> report = time_report(t)
    >>> report.gaps[0][0], report.is_regular()
    (50, False)
    """
    t = np.asarray(time, dtype=float).ravel()
    if t.size < 2:
        raise DataError(f"time: expected at least 2 stamps to measure their steps, found "
                        f"{t.size}")
    dt = np.diff(t)
    positive = dt[dt > 0]
    h = float(np.median(positive)) if positive.size else 0.0
    if not h > 0:
        raise DataError("time: every stamp is the same; is the time column the right one?")
    gap = dt > GAP * h
    steady = dt[(dt > 0) & ~gap]
    mean = float(steady.mean()) if steady.size else h
    steady = steady - h
    return TimeReport(
        n_samples=int(t.size), median_step=h, mean_step=mean,
        jitter_rms=float(np.sqrt(np.mean(steady ** 2))) if steady.size else 0.0,
        jitter_max=float(np.abs(steady).max()) if steady.size else 0.0,
        duplicates=tuple(int(k) + 1 for k in np.flatnonzero(dt == 0)),
        backwards=tuple(int(k) + 1 for k in np.flatnonzero(dt < 0)),
        gaps=tuple((int(k) + 1, float(t[k] - t[0]), float(dt[k])) for k in np.flatnonzero(gap)))


def _fixes(report: TimeReport) -> str:
    fixes = []
    if report.backwards:
        fixes.append("samples out of order are not repaired: check how the file was written "
                     "(two logs concatenated?), or trim it before the step back")
    if not report.backwards:
        fixes.append(f"timestamps='resample' (the samples were taken at their stamps: a cubic "
                     f"spline onto a uniform grid, duplicates averaged, gaps up to {MAX_GAP:g} "
                     "steps filled)")
    if not report.gaps:
        fixes.append("timestamps='uniform' (the samples are uniform and only their stamps "
                     "jitter: the stamps are replaced by their least-squares line)")
    if report.gaps:
        fixes.append("trim the file around a gap (trim='START:END'), or read it with "
                     "timestamps='keep' and cut it with Recording.select")
    return "; or ".join(fixes)


def regularize(time: np.ndarray, signals: Mapping[str, np.ndarray], mode: str, *,
               where: str = "time") -> tuple[np.ndarray, dict[str, np.ndarray], str | None]:
    """Apply a ``timestamps=`` mode to a time column (s) and its signals (N, ...).

    Returns the time, the signals and a note of what was done (``None`` when nothing was).
    """
    if mode not in TIMESTAMPS:
        raise DataError(f"timestamps: expected one of {', '.join(TIMESTAMPS)}, found {mode!r}; "
                        "e.g. timestamps='resample'")
    signals = dict(signals)
    if mode == "keep" or len(time) < 2 or not np.all(np.isfinite(time)):
        return time, signals, None  # the recording names a non-finite stamp
    report = time_report(time)
    if mode in ("check", "strict") and report.is_regular():
        return time, signals, None
    if report.is_regular(1e-9):  # uniform already, to rounding
        return time, signals, None
    head = f"{where}: irregular time stamps: {report.summary()}"
    if mode == "strict" or (mode == "check" and (report.duplicates or report.backwards
                                                 or report.gaps)):
        raise DataError(f"{head}. The samples cannot be taken as uniform; read with "
                        f"{_fixes(report)}")
    if mode == "check":
        warnings.warn(f"{head}. The stamps are kept as recorded (not uniform); to make them "
                      f"uniform read with {_fixes(report)}", DynidWarning, stacklevel=4)
        return time, signals, f"irregular time stamps kept: {report.summary()}"
    if mode == "uniform":
        return _uniform(time, signals, report, head)
    if report.backwards:
        raise DataError(f"{head}. Resampling needs stamps in order; {_fixes(report)}")
    grid, out = resampled(time, signals, report.mean_step, where=where, head=head)
    return grid, out, (f"resampled onto a uniform grid at {1 / report.mean_step:.6g} Hz (cubic "
                       f"spline through the samples), counted from the first sample (stamped "
                       f"{time[0]:.17g} s) from {report.summary()}")


def _uniform(time, signals, report: TimeReport, head: str):
    k = np.arange(len(time), dtype=float)
    slope, intercept = np.polynomial.polynomial.polyfit(k, time - time[0], 1)[::-1]
    off = np.abs(time - time[0] - intercept - slope * k)
    worst = int(np.argmax(off))
    if not slope > 0 or off[worst] >= 0.5 * slope:
        raise DataError(f"{head}. The stamps are not a constant rate with jitter: sample "
                        f"{worst} is {_duration(off[worst])} off the fitted line, half a step "
                        f"or more (a sample is missing or extra); read with timestamps="
                        "'resample', or trim the file")
    return slope * k, signals, (f"time stamps replaced by their least-squares line, "
                                f"{1 / slope:.6g} Hz, counted from the first sample (stamped "
                                f"{time[0]:.17g} s; largest stamp off the line: "
                                f"{_duration(off[worst])}) from {report.summary()}")


def resampled(time: np.ndarray, signals: Mapping[str, np.ndarray], step: float, *,
              method: str = "cubic", max_gap: float = MAX_GAP, where: str = "time",
              head: str | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Signals (N, ...) sampled at non-decreasing ``time`` interpolated onto the uniform grid
    ``time[0] + k step``; samples with the same stamp are averaged first. Returns the grid
    counted from ``time[0]`` (``k step``) and the signals on it."""
    if method not in _METHODS:
        raise DataError(f"method: expected one of {', '.join(_METHODS)}, found {method!r}")
    if not np.isfinite(step) or step <= 0:
        raise DataError(f"resample: expected a step > 0 s, found {step}")
    from scipy.interpolate import make_interp_spline

    t, inverse, counts = np.unique(time, return_inverse=True, return_counts=True)
    merged = {}
    for key, x in signals.items():
        x = np.asarray(x, dtype=float)
        bad = np.argwhere(~np.isfinite(x))
        if len(bad):
            raise DataError(f"{where}: {key}: non-finite value {x[tuple(bad[0])]} at sample "
                            f"{bad[0][0]}; remove or repair it before resampling")
        if len(t) < len(time):
            sums = np.zeros((len(t), *x.shape[1:]))
            np.add.at(sums, inverse, x)
            x = sums / counts.reshape(-1, *([1] * (x.ndim - 1)))
        merged[key] = x
    dt = np.diff(t)
    long = np.flatnonzero(dt > max_gap * step * (1 + 1e-9))
    if long.size:
        k = int(long[0])
        raise DataError(f"{head or where}. {long.size} gaps are longer than {max_gap:g} steps, "
                        f"the first {_duration(dt[k])} at {t[k] - t[0]:.6g} s after the start; "
                        "interpolating across them would invent the missing samples. Trim the "
                        "file around them, or cut the recording with Recording.select")
    order = _METHODS[method]
    if len(t) <= order:
        raise DataError(f"{where}: {len(t)} distinct stamps are too few for a {method} "
                        "interpolation")
    grid = step * np.arange(int(np.floor((t[-1] - t[0]) / step * (1 + 1e-12))) + 1)
    out = {key: make_interp_spline(t - t[0], x, k=order, axis=0)(grid)
           for key, x in merged.items()}
    return grid, out


def resample(recording, rate: float | None = None, *, method: str = "cubic",
             max_gap: float = MAX_GAP):
    """A recording interpolated onto a uniform time grid.

    Parameters
    ----------
    recording
        A :class:`~dynid.identify.recording.Recording` whose samples were taken at their
        stamps.
    rate
        Rate of the grid, Hz (default: one over the mean step, gaps left out).
    method
        ``"cubic"`` (a spline through the samples, ``scipy.interpolate.make_interp_spline``
        with ``k=3``) or ``"linear"``.
    max_gap
        Longest step interpolated across, in grid steps; longer gaps raise.

    Examples
    --------
    >>> rec = read_npz("measurements_1.npz", keys={"time": "times", "output": "torques"},
    ...                timestamps="keep")                      # doctest: +SKIP
    >>> uniform = resample(rec, 200.0)                         # doctest: +SKIP
    """
    if rate is not None and not (isinstance(rate, int | float) and 0 < rate < np.inf):
        raise DataError(f"rate: expected a sample rate > 0 in Hz, found {rate!r}; e.g. "
                        "resample(rec, 200.0)")
    step = time_report(recording.time).mean_step if rate is None else 1.0 / float(rate)
    signals = {key: getattr(recording, key) for key in ("positions", "velocities",
                                                        "accelerations", "output")
               if getattr(recording, key) is not None}
    grid, out = resampled(recording.time, signals, step, method=method, max_gap=max_gap,
                          where="resample")
    note = f"resampled onto a uniform grid at {1 / step:.6g} Hz ({method} interpolation)"
    return recording.with_signals(time=recording.time[0] + grid,
                                  history=(*recording.history, note), **out)
