"""Signal processing before identification: filtering, differentiation, period averaging.

* Time domain: a zero-phase Butterworth low-pass (forward and backward, so no delay) of the
  positions, then second-order central differences for velocities and accelerations.
* Periodic excitation: the recording is cut into whole periods after a transient, each period
  is checked to repeat the first, and the periods are averaged. The spread between periods
  gives the full noise covariance across coordinates of the output and of the positions
  (Abdellatif 3.2). The averaged period is then low-passed in the frequency domain by an ideal
  rectangular window, and differentiated spectrally, ``V = jω X`` and ``A = −ω² X``
  (Abdellatif 3.3).
* The measured torque or current is not low-passed unless asked (Leborne IV-D, Abdellatif
  3.3: filtering it distorts the friction discontinuities).

:class:`Processing` bundles the settings, turns a raw recording into basis-space states with
velocities and accelerations (:meth:`Processing.apply`), and is stored with identification
results so validation processes its data the same way.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np

from ..errors import DataError
from .recording import Recording

__all__ = ["PeriodAverage", "Processing", "average_periods", "differentiate", "lowpass",
           "spectral_states"]


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
    sos = _signal().butter(int(order), cutoff, fs=rate, output="sos")
    x = np.asarray(x, dtype=float)
    if periodic:
        N = x.shape[0]
        return _signal().sosfiltfilt(sos, np.concatenate([x, x, x]), axis=0)[N:2 * N]
    pad = 3 * (2 * len(sos) + 1)
    if x.shape[0] <= pad:
        raise DataError(f"lowpass: {x.shape[0]} samples are too few for an order-{order} "
                        f"filter (needs more than {pad}); record longer or lower the order")
    return _signal().sosfiltfilt(sos, x, axis=0)


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


def spectral_states(x: np.ndarray, rate: float, cutoff: float | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frequency-domain low-pass and differentiation of one period ``x`` (P, n) (Abdellatif 3.3).

    The spectrum is cut by a rectangular window at ``cutoff`` Hz (default: keep all but the
    Nyquist bin) and multiplied by ``jω`` and ``−ω²``. Returns filtered positions, velocities
    and accelerations (P, n).
    """
    P = x.shape[0]
    X = np.fft.rfft(x, axis=0)
    f = np.fft.rfftfreq(P, 1.0 / rate)
    keep = f <= (cutoff if cutoff is not None else np.inf)
    if P % 2 == 0:
        keep[-1] = False  # the Nyquist bin has no defined derivative
    if cutoff is not None and not cutoff > 0:
        raise DataError(f"harmonics cutoff: expected a frequency > 0, found {cutoff}")
    X = X * keep[:, None]
    w = 2j * np.pi * f[:, None]
    return (np.fft.irfft(X, P, axis=0), np.fft.irfft(w * X, P, axis=0),
            np.fft.irfft(w * w * X, P, axis=0))


@dataclass(frozen=True)
class PeriodAverage:
    """One averaged period and the noise statistics of the periods (Abdellatif 3.2).

    Attributes
    ----------
    recording
        The averaged period; its ``output_covariance`` is that of the averaged samples
        (``output_covariance / n_periods``).
    output_covariance, position_covariance
        Noise covariance (n, n) of one sample of the output and of the positions.
    n_periods
        Number of periods averaged.
    """

    recording: Recording
    output_covariance: np.ndarray
    position_covariance: np.ndarray
    n_periods: int


def average_periods(recording: Recording, period: float, *, skip_periods: int = 1,
                    ) -> PeriodAverage:
    """Average the whole periods of a periodic recording.

    The first ``skip_periods`` periods (the transient) and a trailing partial period are left
    out. The period must be a whole number of samples, and the recorded positions must repeat
    with it (checked by the lag that best aligns the last period with the first).
    """
    if not recording.is_uniform():
        raise DataError("period averaging needs uniformly sampled data; resample first")
    rate = recording.rate
    samples = period * rate
    P = round(samples)
    if P < 4 or abs(samples - P) > 1e-6 * samples:
        raise DataError(f"period: {period:g} s at {rate:g} Hz is {samples:.6g} samples; it must "
                        "be a whole number of samples (resample or correct the period)")
    start = int(skip_periods) * P
    n_periods = (recording.n_samples - start) // P
    if n_periods < 2:
        raise DataError(f"period averaging: {recording.n_samples} samples hold "
                        f"{n_periods} whole period(s) of {P} samples after skipping "
                        f"{skip_periods}; record at least two periods more")
    stop = start + n_periods * P
    q = recording.positions[start:stop].reshape(n_periods, P, -1)
    _check_alignment(q, P, period)
    y = recording.output[start:stop].reshape(n_periods, P, -1)
    q_mean, y_mean = q.mean(axis=0), y.mean(axis=0)
    dq, dy = (q - q_mean).reshape(-1, q.shape[2]), (y - y_mean).reshape(-1, y.shape[2])
    dof = P * (n_periods - 1)
    cov_y, cov_q = dy.T @ dy / dof, dq.T @ dq / dof

    def mean(x):
        return None if x is None else x[start:stop].reshape(n_periods, P, -1).mean(axis=0)

    avg = recording.with_signals(
        time=recording.time[start:start + P], positions=q_mean, output=y_mean,
        velocities=mean(recording.velocities), accelerations=mean(recording.accelerations),
        output_covariance=cov_y / n_periods if np.linalg.eigvalsh(cov_y)[0] > 0 else None,
        output_limits=None)
    return PeriodAverage(avg, cov_y, cov_q, n_periods)


def _check_alignment(q: np.ndarray, P: int, period: float) -> None:
    """Raise when the last period is shifted against the first: the period is not the
    motion's period (or the time base drifts)."""
    first, last = q[0] - q[0].mean(axis=0), q[-1] - q[-1].mean(axis=0)
    corr = np.fft.irfft(np.fft.rfft(last, axis=0) * np.conj(np.fft.rfft(first, axis=0)),
                        P, axis=0).sum(axis=1)
    lag = int(np.argmax(corr))
    lag = lag - P if lag > P // 2 else lag
    if lag != 0:
        raise DataError(f"period: the motion does not repeat every {period:g} s; period "
                        f"{len(q)} is shifted by {lag} samples against the first. Give the "
                        "excitation's exact period (or fix the recording's time base)")


@dataclass(frozen=True)
class Processing:
    """How a raw recording becomes states and outputs for identification.

    Parameters
    ----------
    cutoff, order
        Butterworth low-pass of the positions (Hz; ``None``: not filtered) and its order.
    derivatives
        ``"auto"``: use recorded velocities and accelerations when present, else differentiate
        the (filtered) positions; ``"positions"``: always differentiate the positions.
    output_cutoff
        Low-pass of the output in Hz (default ``None``: the output is not filtered).
    decimate
        Keep one sample in ``decimate`` after filtering the regressor and the output alike
        (see :mod:`dynid.identify.data`).
    period, skip_periods
        Period of a periodic excitation in s: average the periods after skipping the first
        ``skip_periods`` (the transient).
    harmonics_cutoff
        With ``period``: frequency-domain low-pass (Hz) and spectral differentiation of the
        averaged period (``None`` with a period: keep every harmonic below Nyquist).
    skip
        Samples dropped at the start of each recording.
    """

    cutoff: float | None = None
    order: int = 4
    derivatives: str = "auto"
    output_cutoff: float | None = None
    decimate: int = 1
    period: float | None = None
    skip_periods: int = 1
    harmonics_cutoff: float | None = None
    skip: int = 0

    def __post_init__(self) -> None:
        if self.derivatives not in ("auto", "positions"):
            raise DataError(f"derivatives: expected 'auto' or 'positions', found "
                            f"{self.derivatives!r}")
        if int(self.decimate) != self.decimate or self.decimate < 1:
            raise DataError(f"decimate: expected an integer ≥ 1, found {self.decimate}")
        if self.harmonics_cutoff is not None and self.period is None:
            raise DataError("harmonics_cutoff needs the excitation period (period=...)")
        if self.period is not None and not self.period > 0:
            raise DataError(f"period: expected a duration > 0 s, found {self.period}")

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
        """Basis-space positions, velocities and accelerations and the output, processed."""
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

