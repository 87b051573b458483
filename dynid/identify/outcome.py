"""What a processing did to the data it was resolved for.

Identification records, with the processing settings it used, the sample rate, the
zero-phase filter's effective −3 dB cutoff and order at that rate
(:func:`~dynid.identify.filters.zero_phase_response`), the rows the dead zone and the
rests left out (:class:`~dynid.identify.exclusion.Excluded`), and the delays it estimated
(:class:`~dynid.identify.delays.Delays`). Result files store them in their processing entry
(``"rate"``, ``"effective_cutoff"``, ``"effective_order"``, ``"excluded"``,
``"estimated_delay"``); reading a file recomputes the effective cutoff and order from the settings
and the rate and refuses a file where they disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._files import excerpt
from .._validate import is_number
from ..errors import DataError
from .compensation import Delays, delay_setting
from .exclusion import Excluded
from .filters import zero_phase_response

__all__ = ["KEYS", "Outcome"]

#: Entries of a saved processing that hold the outcome rather than settings.
KEYS = ("rate", "effective_cutoff", "effective_order", "excluded", "estimated_delay")
#: Highest sample rate a result file may state, Hz (a recording's shortest interval is 1 µs).
MAX_RATE = 1e6


@dataclass(frozen=True)
class Outcome:
    """What a processing did (see the module docstring).

    Attributes
    ----------
    rate
        Sample rate of the recordings, Hz (the lowest, when they differ).
    effective_cutoff, effective_order
        −3 dB frequency (Hz) and order of the forward–backward low-pass at that rate
        (``None`` without a time-domain low-pass).
    excluded
        Rows left out near zero velocity and at rest (``None`` without a dead zone).
    delays
        The delays estimated (``Processing(delay="estimate")``), ``None`` when none was.
    """

    rate: float
    effective_cutoff: float | None = None
    effective_order: int | None = None
    excluded: Excluded | None = None
    delays: Delays | None = None

    @classmethod
    def of(cls, cutoff, order: int, rate: float, excluded: Excluded | None = None,
           delays: Delays | None = None) -> Outcome:
        """The outcome of a low-pass at ``cutoff`` Hz (or ``None``) of ``order`` at
        ``rate``."""
        if isinstance(cutoff, int | float) and cutoff < rate / 2:
            f3, n = zero_phase_response(float(cutoff), order, rate)
            return cls(float(rate), f3, n, excluded, delays)
        return cls(float(rate), None, None, excluded, delays)

    def to_dict(self) -> dict:
        out = {"rate": self.rate, "effective_cutoff": self.effective_cutoff,
               "effective_order": self.effective_order,
               "excluded": None if self.excluded is None else self.excluded.to_dict()}
        if self.delays is not None:
            out["estimated_delay"] = self.delays.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict, cutoff, order: int) -> Outcome:
        """Read back :meth:`to_dict`, checking the effective cutoff and order against the
        settings ``cutoff`` and ``order``."""
        rate = data.get("rate")
        if not is_number(rate) or not 0 < rate <= MAX_RATE:
            raise DataError(f"processing: rate: expected the sample rate in Hz (> 0, at most "
                            f"{MAX_RATE:g}), found {excerpt(rate)}")
        excluded, delays = data.get("excluded"), data.get("estimated_delay")
        if delays is not None and not isinstance(delays, dict):
            raise DataError(f"processing: estimated_delay: expected {{'output': s, "
                            f"'velocities': s}}, found {excerpt(delays)}")
        out = cls.of(cutoff, order, float(rate),
                     None if excluded is None else Excluded.from_dict(excluded),
                     None if delays is None else delay_setting(delays))
        for key, want in (("effective_cutoff", out.effective_cutoff),
                          ("effective_order", out.effective_order)):
            got = data.get(key)
            same = got is None if want is None else (
                is_number(got) and abs(float(got) - want) <= 1e-6 * abs(want))
            if not same:
                raise DataError(f"processing: {key} is {excerpt(got)}, but an order-{order} "
                                f"Butterworth at {cutoff} Hz applied forward and backward at "
                                f"{rate:g} Hz has {want if want is None else f'{want:.6g}'}; "
                                "the entry was edited: remove it or correct the cutoff")
        return out
