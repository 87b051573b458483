"""Periodic excitation (Abdellatif 3.2–3.3): period averaging and spectral states.

The recording is cut into whole periods after a transient, each period is checked to repeat
the first, and the periods are averaged. The spread between periods gives the full noise
covariance across coordinates of the output and of the positions (Abdellatif 3.2). The averaged
period is then low-passed in the frequency domain by an ideal rectangular window, and
differentiated spectrally, ``V = jω X`` and ``A = −ω² X`` (Abdellatif 3.3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from .recording import Recording

__all__ = ["PeriodAverage", "average_periods", "spectral_states"]


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
    if not samples <= recording.n_samples:
        raise DataError(f"period: {period:g} s is longer than the recording "
                        f"({recording.n_samples} samples at {rate:g} Hz); averaging needs at "
                        "least two whole periods")
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
