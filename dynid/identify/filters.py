"""Filters and derivatives of uniformly sampled signals.

* :func:`lowpass`: a zero-phase Butterworth low-pass (forward and backward, so no delay), and
  :func:`zero_phase_response`, what that filter does as a whole: applied twice, a Butterworth
  of order n designed at ``cutoff`` is a filter of order 2n whose −3 dB point lies below
  ``cutoff`` (its gain there is ½, −6 dB);
* :func:`differentiate`: central differences;
* :func:`decimation_filter`: the FIR low-pass of decimation (:mod:`dynid.identify.data`);
* :func:`signal_bandwidth` and :func:`noise_level`: where a signal's spectrum meets its
  noise floor, and the standard deviation of white noise at that floor;
  :func:`rolloff_bandwidth`: where the spectrum of a signal without a floor (low-passed
  before it was recorded) has fallen far below its peak.
"""

from __future__ import annotations

import numpy as np

from .._files import excerpt
from ..errors import DataError

__all__ = ["ROLLOFF", "decimation_filter", "differentiate", "has_floor", "lowpass",
           "noise_level", "rolloff_bandwidth", "signal_bandwidth", "zero_phase_response"]

#: Taps of the decimation filter per unit of the decimation factor.
TAPS_PER_FACTOR = 16
#: A spectrum "stands above its noise floor" by this factor (10 dB).
_FLOOR_RATIO = 10.0
#: Depth (power ratio, 60 dB) below its peak at which the increments' spectrum of a signal
#: without a noise floor counts as ended (:func:`rolloff_bandwidth`).
ROLLOFF = 1e-6
#: Gain of a zero-phase filter at its −3 dB point (an amplitude of 1/√2).
_HALF_POWER = 1.0 / np.sqrt(2.0)


def _signal():
    """scipy.signal, imported on first use (it takes about half a second to import)."""
    import scipy.signal

    return scipy.signal


def check_cutoff(cutoff: object, rate: float, N: int | None = None) -> float:
    """``cutoff`` (Hz) checked: a number between 0 and the Nyquist frequency of ``rate``, and,
    given the samples ``N``, at least one cycle over the record (slower filters remove the
    motion itself)."""
    number = not isinstance(cutoff, bool) and isinstance(cutoff, int | float | np.floating)
    if not (number and 0 < cutoff < rate / 2):
        found = f"{cutoff:g} Hz" if number else excerpt(cutoff)
        raise DataError(f"cutoff: expected a frequency between 0 and the Nyquist frequency "
                        f"{rate / 2:g} Hz, found {found}")
    if N is not None and cutoff * N / rate < 1:
        raise DataError(f"cutoff: {cutoff:g} Hz is less than one cycle over the recording "
                        f"({N} samples at {rate:g} Hz); a filter that slow removes the motion "
                        "itself. Raise the cutoff")
    return float(cutoff)


def lowpass(x: np.ndarray, rate: float, cutoff: float, order: int = 4, *,
            periodic: bool = False) -> np.ndarray:
    """Zero-phase Butterworth low-pass of ``x`` (N, ...) along its first axis.

    Parameters
    ----------
    x
        Uniformly sampled signal(s), (N, ...).
    rate, cutoff
        Sample rate and design cutoff in Hz (``cutoff < rate / 2``): the filter of
        ``scipy.signal.butter(order, cutoff, fs=rate)``, −3 dB at ``cutoff`` for one pass.
    order
        Order of the filter designed. It is applied forward and backward, so the signal goes
        through a filter of order ``2 order`` that is −6 dB at ``cutoff`` and −3 dB at
        :func:`zero_phase_response`'s effective cutoff (0.90 ``cutoff`` for order 4).
    periodic
        Treat ``x`` as one period of a periodic signal (filter its periodic extension).

    Examples
    --------
    >>> t = np.arange(0, 4, 0.002)
    >>> slow = lowpass(np.sin(2 * np.pi * t) + 0.1 * np.sin(2 * np.pi * 80 * t), 500.0, 10.0)
    """
    x = np.asarray(x, dtype=float)
    N = x.shape[0]
    check_cutoff(cutoff, rate)
    pad = 3 * (2 * ((int(order) + 1) // 2) + 1)  # scipy's padding for the sections of sos
    if not periodic and pad >= N:
        raise DataError(f"lowpass: {N} samples are too few for an order-{order} "
                        f"filter (needs more than {pad}); record longer or lower the order")
    check_cutoff(cutoff, rate, N)
    sos = _signal().butter(int(order), cutoff, fs=rate, output="sos")
    if periodic:
        return _signal().sosfiltfilt(sos, np.concatenate([x, x, x]), axis=0)[N:2 * N]
    return _signal().sosfiltfilt(sos, x, axis=0)


def zero_phase_response(cutoff: float, order: int, rate: float) -> tuple[float, int]:
    """The −3 dB frequency (Hz) and the order of :func:`lowpass` as a whole.

    The order is that of the two passes, twice the number of poles of the filter designed;
    the −3 dB frequency is where the gain of the two passes, ``|H(f)|²`` with ``H`` the
    designed filter's response (``scipy.signal.sosfreqz``), is ``1/√2``, found by bracketing
    between 0 and ``cutoff`` (where it is ½).

    Examples
    --------
    >>> f3, n = zero_phase_response(10.0, 4, 1000.0)   # about 8.96 Hz, order 8
    """
    if not 0 < cutoff < rate / 2:
        raise DataError(f"cutoff: expected a frequency between 0 and the Nyquist frequency "
                        f"{rate / 2:g} Hz, found {cutoff:g} Hz")
    from scipy.optimize import brentq

    sos = _signal().butter(int(order), cutoff, fs=rate, output="sos")
    den = sos[:, 3:]
    poles = int(np.sum(np.where(den[:, 2] != 0, 2, np.where(den[:, 1] != 0, 1, 0))))

    def gain(f: float) -> float:
        with np.errstate(all="ignore"):
            return float(np.abs(_signal().sosfreqz(sos, worN=[f], fs=rate)[1][0]) ** 2)

    try:
        f3 = brentq(lambda f: gain(f) - _HALF_POWER, 1e-9 * cutoff, cutoff,
                    xtol=1e-12 * cutoff, rtol=1e-12)
    except ValueError:  # a response that is not a low-pass: a degenerate design
        raise DataError(f"cutoff: an order-{order} Butterworth at {cutoff:g} Hz cannot be "
                        f"designed at {rate:g} Hz (its response is not a low-pass); give a "
                        "cutoff nearer the motion's frequencies or a lower order") from None
    return float(f3), 2 * poles


def decimation_filter(factor: int) -> np.ndarray:
    """Symmetric low-pass FIR for decimation by ``factor``: ``TAPS_PER_FACTOR · factor + 1``
    taps (Hamming window), unit DC gain, cutoff at the new Nyquist frequency (see
    :mod:`dynid.identify.data`)."""
    return _signal().firwin(TAPS_PER_FACTOR * factor + 1, 1.0 / factor)


def _increment_spectrum(x: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Welch spectrum ``(f, P)`` of the increments ``x[k+1] − x[k]`` of each column."""
    dx = np.diff(np.asarray(x, dtype=float), axis=0)
    N = dx.shape[0]
    if N < 16:
        raise DataError(f"signal bandwidth: {N + 1} samples are too few to estimate a spectrum")
    nperseg = int(min(N, max(64, 2 ** round(np.log2(N / 8)))))
    return _signal().welch(dx, fs=rate, nperseg=nperseg, axis=0)


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
    f, P = _increment_spectrum(x, rate)
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


def has_floor(x: np.ndarray, rate: float) -> np.ndarray:
    """Whether each column of ``x`` (N, n) has a noise floor: :func:`signal_bandwidth`'s
    test, its increments' spectrum no longer falling by more than three times from 60–80 %
    to 80–100 % of the band."""
    f, P = _increment_spectrum(x, rate)
    floor = np.median(P[f >= 0.8 * f[-1]], axis=0)
    below = np.median(P[(f >= 0.6 * f[-1]) & (f < 0.8 * f[-1])], axis=0)
    return below <= 3 * floor


def rolloff_bandwidth(x: np.ndarray, rate: float, depth: float = ROLLOFF) -> np.ndarray:
    """Highest frequency (Hz) at which the spectrum of the increments of each column of ``x``
    (N, n) stands above ``depth`` times its peak.

    For signals without a noise floor (:func:`has_floor`): positions low-passed before they
    were recorded, whose spectrum keeps falling to the Nyquist frequency, so that
    :func:`signal_bandwidth` finds signal everywhere. Their motion ends where the spectrum
    has fallen by ``depth`` (60 dB by default: components a thousandth of the peak's
    amplitude density).

    Examples
    --------
    >>> q = lowpass(np.random.default_rng(0).standard_normal((4000, 1)), 200.0, 2.0)
    >>> rolloff_bandwidth(q, 200.0)        # a few Hz                   # doctest: +SKIP
    """
    if not (0 < depth < 1):
        raise DataError(f"depth: expected a power ratio between 0 and 1 (1e-6 is 60 dB), "
                        f"found {excerpt(depth)}")
    f, P = _increment_spectrum(x, rate)
    above = depth * P.max(axis=0) < P
    return np.array([f[np.flatnonzero(above[:, j])[-1]] if above[:, j].any() else 0.0
                     for j in range(P.shape[1])])


def noise_level(x: np.ndarray, rate: float) -> np.ndarray:
    """Standard deviation (n,) of the white noise that would give each column of ``x``
    (N, n) its spectral noise floor.

    White noise of variance σ² has increments of one-sided spectral density
    ``(4 σ² / rate) (1 − cos 2πf/rate)``; σ² is the median over the top fifth of the band
    (where :func:`signal_bandwidth` takes the floor) of the increments' Welch spectrum divided
    by that shape. On a signal without a floor (smooth up to the Nyquist frequency) this is an
    upper bound of its noise.
    """
    f, P = _increment_spectrum(x, rate)
    top = f >= 0.8 * f[-1]
    shape = 4.0 / rate * (1.0 - np.cos(2 * np.pi * f[top] / rate))
    return np.sqrt(np.median(P[top] / shape[:, None], axis=0))


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
