"""Signal processing before identification: filtering, differentiation, period averaging.

* Time domain: a zero-phase Butterworth low-pass (forward and backward, so no delay) of the
  positions, then second-order central differences for velocities and accelerations.
* Periodic excitation: the periods are averaged, low-passed in the frequency domain and
  differentiated spectrally (:mod:`dynid.identify.periodic`).
* The measured torque or current is never low-passed on its own (Leborne IV-D, Abdellatif
  3.3: filtering it alone distorts the friction discontinuities and the model relation);
  it goes through the same decimation filter as the regressor (Gautier's parallel
  filtering, :mod:`dynid.identify.data`).

The defaults are for a user who does not know about filtering (``Processing()``):

* ``cutoff="auto"``: the positions are low-passed at a multiple (1, 1.5, 2 or 3) of the
  frequency where their spectrum meets its noise floor (:func:`signal_bandwidth`: the highest
  frequency at which the spectrum of the position increments stands ten times above its
  floor; the highest over every coordinate and recording). Positions whose spectrum stands
  above the floor up to 80 % of the Nyquist frequency are not filtered;
* ``decimate="auto"``: the regressor and the output are filtered alike and decimated so that
  the new Nyquist frequency is about half the cutoff, ``D = ⌊rate / cutoff⌋``: below it the
  position filter changes little, above it what the filter changed is removed from both
  sides, and the output noise left is white at the new rate. At most so much that every
  recording keeps 100 decimated samples;
* which multiple: identification fits each candidate by least squares and keeps the one whose
  residual is the whitest (:func:`~dynid.identify.choice.choose_processing`), since the
  reported uncertainty assumes a white residual: a cutoff too low distorts the motion, one too
  high lets the noise of differentiated positions into the regressor, and both colour the
  residual. Without a fit (validation with given parameters) the 1.5 multiple is taken;
* recordings that carry their velocities and accelerations are used as recorded (no filter,
  no decimation) unless asked;
* with a period (periodic excitation), the periods are averaged and filtered in the frequency
  domain instead, and nothing is decimated.

:class:`Processing` bundles the settings, turns a raw recording into basis-space states with
velocities and accelerations (:meth:`Processing.apply`), and is stored with identification
results so validation processes its data the same way: results store the numbers chosen.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from .._files import excerpt
from ..errors import DataError, DynidWarning
from .periodic import PeriodAverage, average_periods, spectral_states
from .recording import Recording

__all__ = ["Processing", "decimation_filter", "differentiate", "lowpass", "signal_bandwidth"]

#: Largest decimation factor accepted.
MAX_DECIMATE = 10_000
#: Taps of the decimation filter per unit of the decimation factor.
TAPS_PER_FACTOR = 16
# Decimated samples an automatic decimation leaves at least, per recording.
_MIN_DECIMATED = 100
# Automatic cutoffs tried, in multiples of the positions' signal bandwidth.
_CUTOFF_MULTIPLES = (1.0, 1.5, 2.0, 3.0)
#: A spectrum "stands above its noise floor" by this factor (10 dB).
_FLOOR_RATIO = 10.0


def _signal():
    """scipy.signal, imported on first use (it takes about half a second to import)."""
    import scipy.signal

    return scipy.signal


def lowpass(x: np.ndarray, rate: float, cutoff: float, order: int = 4, *,
            periodic: bool = False) -> np.ndarray:
    """Zero-phase Butterworth low-pass of ``x`` (N, ...) along its first axis.

    Parameters
    ----------
    x
        Uniformly sampled signal(s), (N, ...).
    rate, cutoff
        Sample rate and cutoff frequency in Hz (``cutoff < rate / 2``).
    order
        Order of the filter (applied twice, forward and backward).
    periodic
        Treat ``x`` as one period of a periodic signal (filter its periodic extension).
    """
    if not 0 < cutoff < rate / 2:
        raise DataError(f"cutoff: expected a frequency between 0 and the Nyquist frequency "
                        f"{rate / 2:g} Hz, found {cutoff:g} Hz")
    x = np.asarray(x, dtype=float)
    N = x.shape[0]
    pad = 3 * (2 * ((int(order) + 1) // 2) + 1)  # scipy's padding for the sections of sos
    if not periodic and pad >= N:
        raise DataError(f"lowpass: {N} samples are too few for an order-{order} "
                        f"filter (needs more than {pad}); record longer or lower the order")
    if cutoff * N / rate < 1:
        raise DataError(f"cutoff: {cutoff:g} Hz is less than one cycle over the recording "
                        f"({N} samples at {rate:g} Hz); a low-pass that slow removes "
                        "the motion itself. Raise the cutoff, or set none")
    sos = _signal().butter(int(order), cutoff, fs=rate, output="sos")
    if periodic:
        return _signal().sosfiltfilt(sos, np.concatenate([x, x, x]), axis=0)[N:2 * N]
    return _signal().sosfiltfilt(sos, x, axis=0)


def decimation_filter(factor: int) -> np.ndarray:
    """Symmetric low-pass FIR for decimation by ``factor``: ``TAPS_PER_FACTOR · factor + 1``
    taps (Hamming window), unit DC gain, cutoff at the new Nyquist frequency (see
    :mod:`dynid.identify.data`)."""
    return _signal().firwin(TAPS_PER_FACTOR * factor + 1, 1.0 / factor)


def signal_bandwidth(x: np.ndarray, rate: float) -> np.ndarray:
    """Highest frequency (Hz) at which each column of ``x`` (N, n) carries signal above its
    noise floor.

    The spectrum of the increments ``x[k+1] − x[k]`` (which flattens the steep spectrum of a
    motion, so the window's leakage cannot hide the floor) is estimated by Welch's method; its
    noise floor is the median over the top fifth of the band, and the bandwidth is the highest
    frequency at which the spectrum stands ten times above it (0 when it never does). A
    column without a floor (its spectrum still falls by more than three times from 60–80 % to
    80–100 % of the band: it is signal up to the Nyquist frequency) gives the Nyquist
    frequency.
    """
    dx = np.diff(np.asarray(x, dtype=float), axis=0)
    N = dx.shape[0]
    if N < 16:
        raise DataError(f"signal bandwidth: {N + 1} samples are too few to estimate a spectrum")
    nperseg = int(min(N, max(64, 2 ** round(np.log2(N / 8)))))
    f, P = _signal().welch(dx, fs=rate, nperseg=nperseg, axis=0)
    floor = np.median(P[f >= 0.8 * f[-1]], axis=0)
    below = np.median(P[(f >= 0.6 * f[-1]) & (f < 0.8 * f[-1])], axis=0)
    above = _FLOOR_RATIO * floor < P
    out = np.zeros(P.shape[1])
    for j in range(P.shape[1]):
        hits = np.flatnonzero(above[:, j])
        if below[j] > 3 * floor[j]:
            out[j] = f[-1]
        elif len(hits):
            out[j] = f[hits[-1]]
    return out


def differentiate(x: np.ndarray, time: np.ndarray, *, periodic: bool = False) -> np.ndarray:
    """Time derivative of ``x`` (N, ...) along its first axis.

    Uniformly sampled data get fourth-order central differences
    ``(x[k−2] − 8 x[k−1] + 8 x[k+1] − x[k+2]) / (12 dt)`` (second-order ones at the two
    samples next to each end, wrapped around for one ``periodic`` period); non-uniform data get
    second-order differences for uneven spacing. The fourth-order stencil keeps the error on a
    sinusoid of frequency f at ``(2π f dt)⁴ / 30`` rather than ``(2π f dt)² / 6``, which matters
    once the output noise is small.
    """
    x = np.asarray(x, dtype=float)
    dt = np.diff(time)
    if not periodic and (x.shape[0] < 5 or np.ptp(dt) > 1e-6 * np.median(dt)):
        return np.gradient(x, time, axis=0, edge_order=2)
    h = float(np.median(dt))
    if periodic:
        return (np.roll(x, 2, axis=0) - 8 * np.roll(x, 1, axis=0) + 8 * np.roll(x, -1, axis=0)
                - np.roll(x, -2, axis=0)) / (12 * h)
    out = np.gradient(x, h, axis=0, edge_order=2)
    out[2:-2] = (x[:-4] - 8 * x[1:-3] + 8 * x[3:-1] - x[4:]) / (12 * h)
    return out


@dataclass(frozen=True)
class Processing:
    """How a raw recording becomes states and outputs for identification.

    Parameters
    ----------
    cutoff, order
        Butterworth low-pass of the positions: a frequency in Hz, ``"auto"`` (default: a
        multiple of where the positions' spectrum meets its noise floor, chosen by the
        residual's whiteness; see the module docstring) or ``None`` (not filtered); and its
        order (applied forward and backward, so the magnitude response is squared: −6 dB at
        the cutoff).
    derivatives
        ``"auto"``: use recorded velocities and accelerations when present, else differentiate
        the (filtered) positions; ``"positions"``: always differentiate the positions.
    output_cutoff
        Low-pass of the output in Hz (default ``None``: the output goes only through the
        decimation filter, alike with the regressor).
    decimate
        Keep one sample in ``decimate`` after filtering the regressor and the output alike
        (see :mod:`dynid.identify.data`); ``"auto"`` (default): ``⌊rate / cutoff⌋`` with a
        cutoff, else 1.
    period, skip_periods
        Period of a periodic excitation in s: average the periods after skipping the first
        ``skip_periods`` (the transient).
    harmonics_cutoff
        With ``period``: frequency-domain low-pass (Hz) and spectral differentiation of the
        averaged period (``None`` with a period: keep every harmonic below Nyquist).
    skip
        Samples dropped at the start of each recording.
    """

    cutoff: float | str | None = "auto"
    order: int = 4
    derivatives: str = "auto"
    output_cutoff: float | None = None
    decimate: int | str = "auto"
    period: float | None = None
    skip_periods: int = 1
    harmonics_cutoff: float | None = None
    skip: int = 0

    def __post_init__(self) -> None:
        if self.derivatives not in ("auto", "positions"):
            raise DataError(f"derivatives: expected 'auto' or 'positions', found "
                            f"{excerpt(self.derivatives)}")
        for name in ("cutoff", "output_cutoff", "period", "harmonics_cutoff"):
            value = getattr(self, name)
            if name == "cutoff" and isinstance(value, str):
                if value != "auto":
                    raise DataError(f"cutoff: expected a frequency in Hz, 'auto' or None, "
                                    f"found {excerpt(value)}")
                continue
            if value is not None and not (_is_number(value) and 0 < value < np.inf):
                what = "duration > 0 s" if name == "period" else "frequency > 0 Hz"
                raise DataError(f"{name}: expected a {what} or None, found {excerpt(value)}")
        if self.decimate != "auto":
            _check_int("decimate", self.decimate, 1, MAX_DECIMATE,
                       "keep one sample in this many; 'auto' chooses it from the cutoff")
        _check_int("order", self.order, 1, 20, "the Butterworth filter's order (4 is usual)")
        _check_int("skip", self.skip, 0, None, "samples dropped at the start")
        _check_int("skip_periods", self.skip_periods, 0, None, "periods dropped at the start")
        if self.harmonics_cutoff is not None and self.period is None:
            raise DataError("harmonics_cutoff needs the excitation period (period=...)")

    @property
    def resolved(self) -> bool:
        """Whether every automatic setting has been replaced by a number."""
        return self.cutoff != "auto" and self.decimate != "auto"

    def candidates(self, recordings: Recording | Sequence[Recording]) -> list[Processing]:
        """Settings with the automatic ones replaced, for ``recordings`` (raw, as recorded):
        a cutoff of 1, 1.5, 2 and 3 times the positions' signal bandwidth (those below 80 %
        of the Nyquist frequency; the highest bandwidth over every coordinate and recording),
        each with its decimation ``⌊rate / cutoff⌋``. One candidate when nothing is automatic,
        with a period, when the positions need no filter, or when every recording carries its
        velocities and accelerations (used as recorded: no cutoff, no decimation)."""
        if self.resolved:
            return [self]
        recs = (recordings,) if isinstance(recordings, Recording) else tuple(recordings)
        if self.period is not None:
            return [replace(self, cutoff=None if self.cutoff == "auto" else self.cutoff,
                            decimate=1 if self.decimate == "auto" else self.decimate)]
        recs = tuple(r.skip(self.skip) if self.skip else r for r in recs)
        recorded = self.derivatives == "auto" and all(
            r.velocities is not None and r.accelerations is not None for r in recs)
        if self.cutoff == "auto" and recorded:
            cutoffs = [None]  # states recorded with their derivatives are used as they are
        elif self.cutoff == "auto":
            band = _bandwidth(recs)
            nyquist = min(r.rate for r in recs) / 2
            cutoffs = [float(f"{m * band:.3g}") for m in _CUTOFF_MULTIPLES
                       if band is not None and m * band < 0.8 * nyquist] or [None]
        else:
            cutoffs = [self.cutoff]
        return [replace(self, cutoff=c, decimate=self.decimate if self.decimate != "auto" else
                        1 if c is None else _auto_decimate(recs, c)[0]) for c in cutoffs]

    def resolve(self, recordings: Recording | Sequence[Recording]) -> Processing:
        """These settings with the automatic ones chosen for ``recordings`` without a fit:
        the candidate (:meth:`candidates`) whose cutoff is 1.5 times the positions' signal
        bandwidth (or the nearest). Identification chooses among the candidates by the
        whiteness of the residual (:func:`~dynid.identify.choice.choose_processing`)."""
        options = self.candidates(recordings)
        return options[min(1, len(options) - 1)]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Processing:
        names = {f.name for f in fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise DataError(f"processing settings: unknown keys {sorted(unknown)}")
        return cls(**data)

    def apply(self, recording: Recording, robot=None) -> Recording:
        """Basis-space positions, velocities and accelerations and the output, processed
        (automatic settings chosen for this recording when not resolved)."""
        if not self.resolved:
            return self.resolve(recording).apply(recording, robot)
        if self.period is not None:
            return self.states(self.average(recording).recording, robot)
        return self.states(recording.skip(self.skip) if self.skip else recording, robot)

    def average(self, recording: Recording) -> PeriodAverage:
        """The periods of a recording averaged as :meth:`apply` does, after the skipped
        samples and periods."""
        if self.period is None:
            raise DataError("period averaging needs the excitation period (period=...)")
        rec = recording.skip(self.skip) if self.skip else recording
        return average_periods(rec, self.period, skip_periods=self.skip_periods)

    def states(self, rec: Recording, robot=None) -> Recording:
        """The rest of :meth:`apply`, on a recording whose samples were skipped and, with a
        period, whose periods were averaged (:meth:`average`): filtered positions, velocities
        and accelerations, mapped to the basis coordinates, and the output."""
        if rec.space == "actuator" and robot is None:
            raise DataError("the recording holds actuator coordinates; pass the robot to map "
                            "them to its basis coordinates")
        if not self.resolved:
            raise DataError("processing: resolve the automatic settings first "
                            "(Processing.resolve(recordings))")
        periodic = self.period is not None
        if not periodic and (self.cutoff is not None or self.output_cutoff is not None) and \
                not rec.is_uniform(0.05):
            raise DataError("filtering needs uniformly sampled data; the sample intervals "
                                "vary by more than 5 %; resample first or set no cutoff")
        rate = rec.rate
        q = rec.positions
        if periodic and (self.harmonics_cutoff is not None or self.cutoff is None):
            q, v, a = spectral_states(q, rate, self.harmonics_cutoff)
        else:
            if self.cutoff is not None:
                q = lowpass(q, rate, self.cutoff, self.order, periodic=periodic)
            recorded = self.derivatives == "auto" and rec.velocities is not None
            v = rec.velocities if recorded else differentiate(q, rec.time, periodic=periodic)
            if recorded and self.cutoff is not None:
                v = lowpass(v, rate, self.cutoff, self.order, periodic=periodic)
            if self.derivatives == "auto" and rec.accelerations is not None:
                a = rec.accelerations
                if self.cutoff is not None:
                    a = lowpass(a, rate, self.cutoff, self.order, periodic=periodic)
            else:
                a = differentiate(v, rec.time, periodic=periodic)
        y = rec.output
        if self.output_cutoff is not None:
            y = lowpass(y, rate, self.output_cutoff, self.order, periodic=periodic)
        if rec.space == "actuator":
            if rec.n != robot.n:
                raise DataError(f"recording: {rec.n} actuator coordinates, the robot "
                                f"{robot.name} has {robot.n}")
            q, v, a = robot.transmission.basis_state(q, v, a)
            units = {**rec.units, "positions": robot.basis_units}
            rec = rec.with_signals(space="basis", names=robot.joint_names, units=units)
        return rec.with_signals(positions=q, velocities=v, accelerations=a, output=y)



def _bandwidth(recordings: Sequence[Recording]) -> float | None:
    """The highest signal bandwidth of the positions over every coordinate and recording;
    ``None`` (no filter) when a recording is not uniformly sampled (with a warning) or the
    positions' spectrum is flat (samples at unrelated states, or no motion above the noise)."""
    best = 0.0
    for rec in recordings:
        if not rec.is_uniform(0.05):
            warnings.warn("processing: the sample intervals vary by more than 5 %, so the "
                          "positions are not filtered and nothing is decimated; resample the "
                          "recording onto a uniform grid to filter it", DynidWarning,
                          stacklevel=5)
            return None
        best = max(best, float(signal_bandwidth(rec.positions, rec.rate).max()))
    return best if best > 0 else None


def _auto_decimate(recordings: Sequence[Recording], cutoff: float) -> tuple[int, str]:
    """``⌊rate / cutoff⌋`` at the lowest rate, at most what leaves the shortest recording
    ``_MIN_DECIMATED`` samples after the decimation filter; and a note when it had to be
    less."""
    rate = min(r.rate for r in recordings)
    factor = max(1, int(rate // cutoff))
    shortest = min(r.n_samples for r in recordings)
    fits = max(1, min(factor, shortest // (TAPS_PER_FACTOR + _MIN_DECIMATED)))
    if fits == factor:
        return factor, ""
    return fits, (f"the cutoff {cutoff:g} Hz calls for decimating by {factor}, which leaves "
                  f"fewer than {_MIN_DECIMATED} samples of the shortest recording ({shortest} "
                  f"samples); decimated by {fits}, so the output keeps content up to "
                  f"{rate / (2 * fits):.3g} Hz that the filtered positions miss. Record longer")


def _is_number(value) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and \
        not isinstance(value, bool) and np.isfinite(value)


def _check_int(name: str, value, low: int, high: int | None, meaning: str) -> None:
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool) and \
        value >= low and (high is None or value <= high)
    if not ok:
        span = f"between {low} and {high}" if high is not None else f"≥ {low}"
        raise DataError(f"{name}: expected an integer {span} ({meaning}), found "
                        f"{excerpt(value)}")
