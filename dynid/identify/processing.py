"""Signal processing before identification: filtering, differentiation, period averaging,
exclusion of rows near zero velocity.

* Time domain: a zero-phase Butterworth low-pass (forward and backward, so no delay) of the
  positions (and of recorded velocities and accelerations when they are used), then
  fourth-order central differences (:mod:`dynid.identify.filters`, :mod:`dynid.identify.states`);
  or, for the positions, a Savitzky–Golay filter or a Rauch–Tung–Striebel smoother at the same
  cutoff (``differentiation=``, :mod:`dynid.identify.derivatives`).
* Periodic excitation: the periods are averaged, low-passed in the frequency domain and
  differentiated spectrally (:mod:`dynid.identify.periodic`).
* The measured torque or current is never low-passed on its own (Leborne IV-D, Abdellatif
  3.3: filtering it alone distorts the friction discontinuities and the model relation);
  it goes through the same decimation filter as the regressor (Gautier's parallel
  filtering, :mod:`dynid.identify.data`).
* Rows near zero velocity and samples at rest are left out (:mod:`dynid.identify.exclusion`).
* Delays of the output and of recorded velocities behind the positions, given or estimated,
  are compensated before anything else (:mod:`dynid.identify.delays`).

The defaults are for a user who does not know about filtering (``Processing()``):

* ``cutoff="auto"``: the positions are low-passed at a multiple (2, 3, 4 or 6) of the
  frequency where their spectrum meets its noise floor (:func:`signal_bandwidth`: the highest
  frequency at which the spectrum of the position increments stands ten times above its
  floor; the highest over every coordinate and recording, and over the recorded velocities
  too when the accelerations are derived from them), at most 80 % of the Nyquist frequency.
  Positions whose spectrum stands above the floor up to 80 % of the Nyquist frequency are not
  filtered. ``cutoff`` is the design cutoff of the Butterworth filter; applied forward and
  backward it is a filter of twice the order, −6 dB at ``cutoff`` and −3 dB at
  :attr:`Processing.effective_cutoff` (0.90 ``cutoff`` for order 4);
* ``decimate="auto"``: the regressor and the output are filtered alike and decimated so that
  the new Nyquist frequency is about a quarter of the cutoff, ``D = ⌊2 rate / cutoff⌋``:
  below it the position filter passes the motion undistorted (to 1.5e-5 at order 4), above
  it what the filter changed is removed from both sides, and the output noise left is white
  at the new rate. The decimation, not the cutoff, then sets the band of the differentiated
  noise that the regressor keeps (the accelerations' share of it grows as that band to the
  power 5/2), and the cutoff, four times higher, no longer distorts what is kept. At most so
  much that every recording keeps 100 decimated samples. With a given decimation
  (``Processing(decimate=10)``) the cutoff is what limits the band, and the automatic
  cutoffs are 1, 1.5, 2 and 3 times the bandwidth instead;
* which multiple: identification fits each candidate by least squares and keeps the one whose
  residual is the whitest (:func:`~dynid.identify.choice.choose_processing`), since the
  reported uncertainty assumes a white residual: the motion distorted by a cutoff too low
  (where a short recording limits the decimation), or the noise of differentiated positions
  let into the regressor by a band too wide, colours the residual. Among residuals equally
  white, the 3 multiple (a band of ¾ of the bandwidth) is taken, or, when the recordings
  state their encoders' resolution (``Recording(resolution=...)``), the widest band whose
  quantization error in the output stays below 0.3 of the residual's σ
  (:func:`~dynid.identify.quantization.errors_in_variables`): the resolution says how much
  noise a wider band lets in. Without a fit (validation with given parameters) the 3 multiple
  is taken;
* ``derivatives="auto"``: a recording with velocities and accelerations is used as recorded
  (no filter, no decimation: the capture software derived and filtered them); one with
  velocities only has them low-passed like the positions and differentiated for the
  accelerations; one with positions only has them differentiated twice;
* ``deadzone="auto"``, ``rest="auto"``: per joint, the rows at samples where its speed is
  below ``max(1 % of its peak speed, 3 σ of its velocity noise)`` are left out, and every row
  of spans of 0.1 s or more where all joints are that slow (not with a period);
* ``model_cutoff="auto"``: an output without a noise floor (low-passed by its logger) gets
  the low-pass on the regressor that fits it best, when that lowers the residual
  (:mod:`dynid.identify.modelband`);
* with a period (periodic excitation), the periods are averaged and filtered in the frequency
  domain instead, and nothing is decimated.

:class:`Processing` bundles the settings, turns a raw recording into basis-space states with
velocities and accelerations (:meth:`Processing.apply`, which runs
:mod:`dynid.identify.pipeline`), and is stored with identification results so validation
processes its data the same way: results store the numbers chosen. The automatic settings
are chosen in :mod:`dynid.identify.autoprocessing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np

from .._files import excerpt
from .._validate import is_number
from ..errors import DataError
from . import autoprocessing, pipeline
from ._bands import limited_decimation  # noqa: F401  (importable from here too)
from .compensation import Delays, delay_setting
from .derivatives import check_differentiation
from .exclusion import check_settings
from .filters import (
    decimation_filter,
    differentiate,
    lowpass,
    signal_bandwidth,
    zero_phase_response,
)
from .kinematics import check_kinematics
from .modelband import check_model_cutoff
from .outcome import KEYS as OUTCOME_KEYS
from .outcome import Outcome
from .states import DERIVATIVES

__all__ = ["Processing", "decimation_filter", "differentiate", "lowpass", "signal_bandwidth",
           "zero_phase_response"]

#: Largest decimation factor accepted.
MAX_DECIMATE = 10_000

@dataclass(frozen=True)
class Processing:
    """How a raw recording becomes states and outputs for identification.

    Parameters
    ----------
    cutoff, order
        Butterworth low-pass of the positions: a frequency in Hz, ``"auto"`` (default: a
        multiple of where the positions' spectrum meets its noise floor, chosen by the
        residual's whiteness; see the module docstring) or ``None`` (not filtered); and its
        order. ``cutoff`` is the design cutoff (``scipy.signal.butter``'s): the filter is
        applied forward and backward, which squares its magnitude response, so the positions
        go through a filter of order ``2 order`` that is −6 dB at ``cutoff`` and −3 dB at
        :meth:`effective_cutoff` (0.90 ``cutoff`` for order 4).
    derivatives
        Where the velocities and accelerations come from (:mod:`dynid.identify.states`):
        ``"positions"`` (differentiated twice), ``"velocities"`` (recorded velocities
        low-passed like the positions, differentiated for the accelerations), ``"recorded"``
        (recorded velocities and accelerations as they are), or ``"auto"`` (default): as
        recorded when a recording carries both, from its velocities when it carries only
        those, else from its positions.
    output_cutoff
        Low-pass of the output in Hz (default ``None``: the output goes only through the
        decimation filter, alike with the regressor).
    decimate
        Keep one sample in ``decimate`` after filtering the regressor and the output alike
        (see :mod:`dynid.identify.data`); ``"auto"`` (default): ``⌊2 rate / cutoff⌋`` with a
        cutoff (a new Nyquist frequency of a quarter of the cutoff), else 1.
    period, skip_periods
        Period of a periodic excitation in s: average the periods after skipping the first
        ``skip_periods`` (the transient).
    harmonics_cutoff
        With ``period``: frequency-domain low-pass (Hz) and spectral differentiation of the
        averaged period (``None`` with a period: keep every harmonic below Nyquist).
    skip
        Samples dropped at the start of each recording.
    deadzone
        Speed per joint (rad/s, m/s for a prismatic joint) below which that joint's rows are
        left out (:mod:`dynid.identify.exclusion`): one value for every joint, one per joint,
        ``"auto"`` (default: ``max(1 % of the joint's peak speed, 3 σ of its velocity
        noise)``; none for samples at unrelated states, nor with a period: averaging removes
        the velocity noise, and maximum likelihood chooses its own filter) or ``None``
        (nothing left out).
    rest
        Shortest span (s) during which every joint in its dead zone counts as rest, left out
        for every joint (``"auto"``: 0.1 s; ``None``: rests not looked for).
    outcome
        Filled by identification, not a setting: the sample rate, the filter's effective
        cutoff and order there, the dead zone used and the rows left out
        (:class:`~dynid.identify.outcome.Outcome`). Automatic settings stay ``"auto"``, so
        identifying other data with these settings chooses them again.
    delay
        Delays of the output and of recorded velocities behind the positions
        (:mod:`dynid.identify.delays`), compensated before anything is filtered: ``None``
        (default: none), the output's delay in s, ``{"output": s, "velocities": s}`` (a
        :class:`~dynid.identify.delays.Delays`), or ``"estimate"``: identification estimates
        them (:func:`~dynid.identify.delays.estimate_delays`), keeps the numbers here, so
        that validation compensates the same delays, and records the estimate in the
        outcome.
    differentiation
        How positions become velocities and accelerations at ``cutoff``
        (:mod:`dynid.identify.derivatives`): ``"butterworth"`` (the zero-phase low-pass
        above, then central differences), ``"savgol"`` (Savitzky–Golay, its window from the
        cutoff), ``"rts"`` (a Rauch–Tung–Striebel smoother on a constant-jerk model, gain ½
        at the cutoff), or ``"auto"`` (default): ``"butterworth"``, chosen by the study in
        ``benchmarks/derivatives.py``: at the same cutoff the smoother gives the same states
        and validation error (its process noise is set from the cutoff, so its response is
        the Butterworth's) at a higher cost, and Savitzky–Golay a larger validation error.
        Recorded velocities are low-passed by the Butterworth whatever it says.
    kinematics
        Where a recording in actuator coordinates is mapped to the basis coordinates
        (:mod:`dynid.identify.kinematics`): ``"before"`` filtering (every sample by the
        direct kinematics, then the basis coordinates filtered and differentiated: for an
        excitation designed in basis coordinates, a hexapod's pose), ``"after"`` (the
        actuator coordinates filtered and differentiated, then mapped with their
        derivatives: for an excitation designed in motor space), or ``"auto"`` (default):
        ``"after"`` for gears, levers and couplings, ``"before"`` for other transmissions.
    model_cutoff
        Zero-phase Butterworth (of ``order``, Hz) applied to the model side, every regressor
        column along time, for an output that the logger low-passed before it wrote it
        (:mod:`dynid.identify.modelband`); validation filters the prediction alike. ``None``:
        no model filter; ``"auto"`` (default): identification looks for one when the outputs
        have no noise floor, chooses its cutoff on the training data by least squares, and
        keeps the number here (``None`` when none helps); elsewhere ``"auto"`` means none.

    Examples
    --------
    >>> Processing(cutoff=10.0, derivatives="velocities", deadzone=[0.05, 0.05, 0.08])
    >>> Processing(deadzone=None)     # keep every row
    >>> Processing(cutoff=10.0).effective_cutoff(1000.0)   # (8.96..., 8)
    >>> Processing(delay=0.003)       # the current lags the encoders by 3 ms
    >>> Processing(delay="estimate")  # estimated by identification
    >>> Processing(differentiation="rts")   # positions smoothed by a Kalman smoother
    >>> Processing(period=10.0, harmonics_cutoff=0.6, kinematics="before")  # hexapod legs
    >>> Processing(model_cutoff=2.0)  # the logger low-passed the torques at 2 Hz
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
    deadzone: float | tuple[float, ...] | str | None = "auto"
    rest: float | str | None = "auto"
    outcome: Outcome | None = field(default=None, compare=False, repr=False)
    delay: Delays | float | str | None = None
    differentiation: str = "auto"
    kinematics: str = "auto"
    model_cutoff: float | str | None = "auto"

    def __post_init__(self) -> None:
        object.__setattr__(self, "delay", delay_setting(self.delay))
        check_differentiation(self.differentiation)
        check_model_cutoff(self.model_cutoff)
        check_kinematics(self.kinematics)
        if self.derivatives not in DERIVATIVES:
            raise DataError(f"derivatives: expected one of {', '.join(map(repr, DERIVATIVES))}"
                            f", found {excerpt(self.derivatives)}")
        for name in ("cutoff", "output_cutoff", "period", "harmonics_cutoff"):
            value = getattr(self, name)
            if name == "cutoff" and isinstance(value, str):
                if value != "auto":
                    raise DataError(f"cutoff: expected a frequency in Hz, 'auto' or None, "
                                    f"found {excerpt(value)}")
                continue
            if value is not None and not (is_number(value) and 0 < value < np.inf):
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
        if isinstance(self.deadzone, np.ndarray):
            object.__setattr__(self, "deadzone", tuple(self.deadzone.reshape(-1).tolist()))
        check_settings(self.deadzone, self.rest)
        if isinstance(self.deadzone, Sequence) and not isinstance(self.deadzone, str):
            object.__setattr__(self, "deadzone", tuple(float(x) for x in self.deadzone))
        if self.outcome is not None and not isinstance(self.outcome, Outcome):
            raise DataError(f"outcome: expected an Outcome filled by identification, found "
                            f"{excerpt(self.outcome)}; leave it out")

    @property
    def resolved(self) -> bool:
        """Whether the filter and decimation are numbers (the dead zone is resolved with the
        processed data, by :class:`~dynid.identify.data.IdentificationData`)."""
        return self.cutoff != "auto" and self.decimate != "auto"

    def effective_cutoff(self, rate: float) -> tuple[float, int] | None:
        """The −3 dB frequency (Hz) and order of the forward–backward low-pass of the
        positions at ``rate`` Hz (:func:`~dynid.identify.filters.zero_phase_response`);
        ``None`` without a numeric cutoff."""
        if not is_number(self.cutoff):
            return None
        return zero_phase_response(float(self.cutoff), self.order, rate)

    def summary(self, rate: float | None = None) -> str:
        """The settings in words, with the filter's effective cutoff and order at ``rate``
        (default: the rate of the data it was resolved for) and the rows left out."""
        outcome = self.outcome
        rate = rate if rate is not None else outcome.rate if outcome is not None else None
        if self.period is not None:
            band = "every harmonic" if self.harmonics_cutoff is None else \
                f"harmonics up to {self.harmonics_cutoff:g} Hz"
            lines = [f"periods of {self.period:g} s averaged, {band} kept"]
        elif is_number(self.cutoff):
            lines = [f"low-pass  Butterworth of order {self.order} at {self.cutoff:g} Hz, "
                     "forward and backward"]
            if rate is not None and self.cutoff < rate / 2:
                f3, n = self.effective_cutoff(rate)
                lines[0] += f": order {n}, −3 dB at {f3:.4g} Hz (at {rate:g} Hz)"
        else:
            lines = [f"low-pass  {'none' if self.cutoff is None else 'automatic'}"]
        lines.append(f"derivatives {self.derivatives}, differentiation "
                     f"{self.differentiation}; decimated by {self.decimate}")
        if is_number(self.model_cutoff):
            lines.append(f"model     regressor low-passed at {self.model_cutoff:g} Hz (order "
                         f"{self.order}, forward and backward), as the output was recorded")
        if isinstance(self.delay, Delays):
            how = "estimated and " if outcome is not None and outcome.delays is not None else ""
            lines.append(f"delay     {self.delay.summary()} behind the positions, {how}"
                         "compensated")
        elif self.delay is not None:
            lines.append("delay     estimated by identification")
        if self.deadzone is None:
            lines.append("dead zone none")
        else:
            zone = ", ".join(f"{x:.3g}" for x in self.deadzone) \
                if isinstance(self.deadzone, tuple) else str(self.deadzone)
            rest = "none" if self.rest is None else self.rest if isinstance(self.rest, str) \
                else f"≥ {self.rest:g} s"
            lines.append(f"dead zone {zone} (rad/s or m/s); rest {rest}")
        if outcome is not None and outcome.excluded is not None:
            lines.append(outcome.excluded.summary())
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The settings, and the outcome's entries (:data:`~dynid.identify.outcome.KEYS`)
        when identification filled it."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "outcome"}
        if isinstance(self.deadzone, tuple):
            out["deadzone"] = list(self.deadzone)
        if isinstance(self.delay, Delays):
            out["delay"] = self.delay.to_dict()
        if self.outcome is not None:
            out.update(self.outcome.to_dict())
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Processing:
        """Read back :meth:`to_dict`. Files written before the dead zone existed have no
        ``deadzone`` entry: nothing was left out of them, so it reads as ``None``; likewise
        a missing ``model_cutoff`` (no model filter)."""
        if not isinstance(data, dict):
            raise DataError(f"processing settings: expected a mapping, found {excerpt(data)}")
        names = {f.name for f in fields(cls)} - {"outcome"}
        unknown = set(data) - names - set(OUTCOME_KEYS)
        if unknown:
            raise DataError(f"processing settings: unknown keys {sorted(unknown)}")
        settings = {k: v for k, v in data.items() if k in names}
        if "deadzone" not in settings:
            settings.update(deadzone=None, rest=settings.get("rest"))
        settings.setdefault("model_cutoff", None)  # files written before it existed
        out = cls(**settings)
        if any(k in data for k in OUTCOME_KEYS):
            out = replace(out, outcome=Outcome.from_dict(data, out.cutoff, out.order))
        return out

    # Automatic settings (:mod:`dynid.identify.autoprocessing`) and their application to a
    # recording (:mod:`dynid.identify.pipeline`): functions of the settings, bound as methods.
    candidates = autoprocessing.candidates
    resolve = autoprocessing.resolve
    apply = pipeline.process
    average = pipeline.average
    prepared = pipeline.prepare
    states = pipeline.states


def _check_int(name: str, value, low: int, high: int | None, meaning: str) -> None:
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool) and \
        value >= low and (high is None or value <= high)
    if not ok:
        span = f"between {low} and {high}" if high is not None else f"≥ {low}"
        raise DataError(f"{name}: expected an integer {span} ({meaning}), found "
                        f"{excerpt(value)}")
