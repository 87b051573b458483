"""Delays of channels behind the positions, and their compensation.

:class:`Delays` holds the delay of the output and of the recorded velocities (and
accelerations) behind the positions, in s; positive: the channel lags the positions (its
sample at ``t`` shows the state at ``t − d``). :func:`compensate` advances the delayed
channels, ``x(t + d)``, by a phase shift of their spectrum (:func:`advance`: all-pass, so the
output's noise is not filtered), and drops the samples at the end (or start) where a shifted
channel has no data. A delay longer than :data:`MAX_SHARE` of the record is refused: that is a
misaligned log, not a drive's delay. Estimating the delays is
:func:`~dynid.identify.delays.estimate_delays`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.fft

from .._files import excerpt
from .._validate import is_number
from ..errors import DataError
from .recording import Recording

__all__ = ["MAX_SHARE", "Delays", "advance", "check_delays", "compensate", "delay_setting"]

#: A delay may be at most this share of the record.
MAX_SHARE = 0.1


@dataclass(frozen=True)
class Delays:
    """Delays of the output and of the recorded velocities behind the positions, s.

    Positive: the channel lags the positions (its sample at ``t`` shows the state at
    ``t − d``). ``velocities`` also applies to recorded accelerations; ``None``: not given
    (the velocities are used as recorded).

    Examples
    --------
    >>> Delays(output=0.003)                      # current 3 ms behind the encoders
    >>> Delays(output=0.003, velocities=0.0015)
    >>> Processing(delay=Delays(output=0.003))    # the same as Processing(delay=0.003)
    """

    output: float = 0.0
    velocities: float | None = None

    def __post_init__(self) -> None:
        for name in ("output", "velocities"):
            value = getattr(self, name)
            if value is None and name == "velocities":
                continue
            if not is_number(value):
                raise DataError(f"delay: {name}: expected a delay in s (a finite number), "
                                f"found {excerpt(value)}; e.g. Processing(delay=0.003) or "
                                f"delay={{'output': 0.003, 'velocities': 0.001}}")
            object.__setattr__(self, name, float(value))

    def to_dict(self) -> dict:
        return {"output": self.output, "velocities": self.velocities}

    def summary(self) -> str:
        """The delays in ms, in words."""
        text = f"output {1e3 * self.output:.3g} ms"
        if self.velocities is not None:
            text += f", velocities {1e3 * self.velocities:.3g} ms"
        return text


def delay_setting(value) -> Delays | str | None:
    """``Processing(delay=...)`` checked: ``None``, ``"estimate"``, a :class:`Delays`, the
    output's delay in s, or a mapping ``{"output": s, "velocities": s}``."""
    if value is None or isinstance(value, Delays) or (isinstance(value, str) and
                                                      value == "estimate"):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - {"output", "velocities"}
        if unknown:
            raise DataError(f"delay: unknown channels {sorted(map(str, unknown))}; expected "
                            "'output' and 'velocities', e.g. delay={'output': 0.003}")
        return Delays(value.get("output", 0.0), value.get("velocities"))
    if is_number(value):
        return Delays(float(value))
    raise DataError(f"delay: expected the output's delay in s (e.g. 0.003), 'estimate', "
                    f"{{'output': s, 'velocities': s}} or None, found {excerpt(value)}")


def advance(x: np.ndarray, rate: float, delay: float) -> np.ndarray:
    """``x`` (N, ...) advanced by ``delay`` seconds: the signal at ``t + delay``.

    A whole number of samples is an index shift; a fraction is a linear phase on the
    spectrum of ``x`` extended by its mirror image (continuous, so the ends hardly ring), an
    all-pass that keeps every frequency's amplitude. Samples beyond the ends repeat the
    mirror image: :func:`compensate` drops them.

    Examples
    --------
    >>> t = np.arange(1000) / 1000.0
    >>> advance(np.sin(t), 1000.0, 0.0025)[10:-10]   # sin(t + 2.5 ms)
    """
    x = np.asarray(x, dtype=float)
    shift = delay * rate
    N = x.shape[0]
    mirrored = np.concatenate([x, x[::-1]], axis=0)
    whole = round(shift)
    if abs(shift - whole) < 1e-9:
        return np.roll(mirrored, -whole, axis=0)[:N]
    spectrum = scipy.fft.rfft(mirrored, axis=0)
    phase = np.exp(2j * np.pi * scipy.fft.rfftfreq(2 * N) * shift)
    phase = phase.reshape((-1,) + (1,) * (x.ndim - 1))
    return scipy.fft.irfft(spectrum * phase, n=2 * N, axis=0)[:N]


def check_delays(delays: Delays, recording: Recording, setting: str = "delay") -> None:
    """Raise when a delay is beyond a tenth of the record, or given for velocities the
    recording does not carry."""
    length = recording.time[-1] - recording.time[0]
    for name in ("output", "velocities"):
        value = getattr(delays, name)
        if value is not None and abs(value) > MAX_SHARE * length:
            whose = "output's" if name == "output" else "velocities'"
            raise DataError(f"{setting}: the {whose} delay {1e3 * value:.4g} ms is longer than "
                            f"a tenth of the record ({recording.n_samples} samples, "
                            f"{length:.4g} s); a delay that long is a misaligned log, not a "
                            f"drive's: give it in seconds (e.g. {setting}=0.003) or align the "
                            "channels first")
    if delays.velocities is not None and recording.velocities is None:
        raise DataError(f"{setting}: a delay of the velocities ({1e3 * delays.velocities:.4g} "
                        "ms) but the recording carries no velocities; give only the output's, "
                        f"e.g. {setting}={delays.output:g}")


def compensate(recording: Recording, delays: Delays | float, *, setting: str = "delay"
               ) -> Recording:
    """The recording with its delayed channels advanced (:func:`advance`) and the samples
    where a channel has no data after the shift dropped (at the end for a positive delay).

    Examples
    --------
    >>> aligned = compensate(recording, Delays(output=0.003))   # drops 3 samples at 1 kHz
    """
    delays = delays if isinstance(delays, Delays) else delay_setting(delays)
    if not isinstance(delays, Delays):
        raise DataError(f"{setting}={delays!r}: the delays are estimated by identification "
                        "(IdentificationData, dynid identify), which stores the numbers in its "
                        "result; to process a recording alone give them in seconds, e.g. "
                        f"Processing({setting}=0.003)")
    check_delays(delays, recording, setting)
    if not recording.is_uniform(0.05) and (delays.output or delays.velocities):
        raise DataError(f"{setting}: shifting a channel needs uniformly sampled data; the "
                        "sample intervals vary by more than 5 %; resample first "
                        "(timestamps='resample') or set no delay")
    rate = recording.rate
    changes = {}
    if delays.output:
        changes["output"] = advance(recording.output, rate, delays.output)
    if delays.velocities:
        for name in ("velocities", "accelerations"):
            if getattr(recording, name) is not None:
                changes[name] = advance(getattr(recording, name), rate, delays.velocities)
    if not changes:
        return recording
    shifts = [d * rate for d in (delays.output, delays.velocities or 0.0)]
    end = max(0, math.ceil(max(shifts) - 1e-9))
    start = max(0, math.ceil(-min(shifts) - 1e-9))
    done = f"delays compensated ({delays.summary()}), {start} samples dropped at the start " \
        f"and {end} at the end"
    out = recording.with_signals(**changes).select(slice(start, recording.n_samples - end))
    return out.with_signals(history=(*recording.history, done))
