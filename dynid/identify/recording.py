"""Recordings: what was measured on the robot while it moved.

A :class:`Recording` holds the sample times, the measured coordinates (basis coordinates, or
actuator coordinates as the drives see them), optional velocities and accelerations, and the
measured model output (joint torque, motor torque or motor current), all in SI units. It is
validated when it is built and rejects what it cannot trust: non-finite values, time that is not
strictly increasing or whose sample rate is implausible, mismatched shapes or units, too few
samples. Output samples at the sensor's or drive's limit are flagged as saturated
(:attr:`Recording.saturated`) with a warning. The checks of the arrays and of the time are
:mod:`dynid.identify._signals`'s.

Columns named after a robot's joints (or its actuators, in actuator space) are matched to the
robot by name (:meth:`Recording.matched`): columns in another order are put in the robot's
order; unknown, missing or repeated names are refused, naming them. Default names
(``joint1``...) and labels that name none of the robot's coordinates (``q1``...) are taken in
order.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .._files import excerpt
from ..errors import DataError, DynidWarning
from . import units as U
from ._matching import check_names, column_order, default_names, kind_mismatch
from ._signals import (  # noqa: F401  (the limits are importable from here too)
    MAX_INTERVAL,
    MAX_MAGNITUDE,
    MIN_INTERVAL,
    check_magnitude,
    check_time,
    floats,
    per_column,
    signal_array,
)
from .quantization import check_resolution

__all__ = ["MAX_MAGNITUDE", "MIN_SAMPLES", "OUTPUT_KINDS", "SPACES", "Recording", "column_order",
           "default_names"]

#: Fewer samples than this cannot be filtered, differentiated or identified.
MIN_SAMPLES = 10
#: What the output signal is (as :data:`dynid.models.robot.OUTPUTS`).
OUTPUT_KINDS = ("joint_torque", "motor_torque", "current")
#: Where the coordinates were measured.
SPACES = ("basis", "actuator")
# Consecutive samples at a channel's extreme value that count as clipping.
_CLIP_RUN = 5


@dataclass(frozen=True, eq=False)
class Recording:
    """Measured signals of one experiment.

    Parameters
    ----------
    time
        Sample times (N,), strictly increasing.
    positions
        Measured coordinates (N, n): basis coordinates, or actuator coordinates (motor side)
        when ``space="actuator"``.
    output
        Measured output (N, n): joint torque, motor torque or current (``output_kind``).
    velocities, accelerations
        Optional derivatives of ``positions`` (N, n), e.g. measured by the drives.
    space
        ``"basis"`` or ``"actuator"``.
    output_kind
        One of :data:`OUTPUT_KINDS`; by default ``"current"`` when the output unit is A, else
        ``"joint_torque"`` (basis) or ``"motor_torque"`` (actuator).
    units
        Units the arrays are given in, per signal: ``time``, ``positions``, ``velocities``,
        ``accelerations``, ``output`` (one unit, or one per column). Values are converted to SI
        on construction; defaults are SI (s, rad, rad/s, rad/s², N·m).
    names
        Coordinate (or actuator) names, one per column (default ``joint1``..., ``motor1``...
        in actuator space). Columns named after a robot's joints are matched to them by name
        (:meth:`matched`, :func:`column_order`).
    output_limits
        Saturation level per output channel (in the output's units, ``inf`` for none);
        samples at or beyond it are flagged. Without limits, flat runs at a channel's
        extreme value are flagged.
    output_covariance
        Covariance (n, n) of the output noise of each sample, when known (from period
        averaging, see :func:`dynid.identify.periodic.average_periods`).
    history
        What was done to the samples since they were read (trims, time stamps made uniform,
        column maps), one line each; the readers fill it in.
    resolution
        The positions' quantization step per coordinate (one value, or one per column), in
        SI units (rad, m) whatever ``units`` says: the encoder's resolution
        (:func:`~dynid.identify.quantization.resolution_from_increments`), or ``None`` when
        unknown. Identification reports the errors it causes
        (:func:`~dynid.identify.quantization.errors_in_variables`).

    Examples
    --------
    >>> rec = Recording(t, q, tau, resolution=resolution_from_increments(4096))  # doctest: +SKIP
    """

    time: np.ndarray
    positions: np.ndarray
    output: np.ndarray
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None
    space: str = "basis"
    output_kind: str | None = None
    units: Mapping[str, str | Sequence[str]] | None = None
    names: tuple[str, ...] | None = None
    output_limits: np.ndarray | None = None
    output_covariance: np.ndarray | None = None
    history: tuple[str, ...] = ()
    resolution: np.ndarray | None = None
    saturated: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.units is not None and not isinstance(self.units, Mapping):
            raise DataError(f"units: expected a mapping signal → unit, e.g. {{'positions': "
                            f"'deg'}}, found {excerpt(self.units)}")
        units = dict(self.units or {})
        unknown = set(units) - {"time", "positions", "velocities", "accelerations", "output"}
        if unknown:
            raise DataError(f"units: unknown signals {sorted(unknown)}; expected time, "
                            "positions, velocities, accelerations, output")
        if self.space not in SPACES:
            raise DataError(f"space: expected one of {SPACES}, found {self.space!r}")
        history = (self.history,) if isinstance(self.history, str) else self.history
        if not isinstance(history, Sequence) or not all(isinstance(h, str) for h in history):
            raise DataError(f"history: expected a list of lines (text), found "
                            f"{excerpt(self.history)}")
        set_(self, "history", tuple(history))
        t = signal_array(self.time, "time", (None,))
        t = t * U.convert_factor(units.get("time", "s"), "time", "time")
        N = t.shape[0]
        if N < MIN_SAMPLES:
            raise DataError(f"recording: too few samples, found {N}, need at least "
                            f"{MIN_SAMPLES}; record longer or at a higher rate")
        q = floats(self.positions, "positions")
        n = q.shape[1] if q.ndim == 2 else 1
        names = check_names(self.names, n) if self.names is not None else \
            default_names(n, self.space)
        set_(self, "names", names)
        set_(self, "resolution", check_resolution(self.resolution, n, names))
        check_time(t)
        set_(self, "time", t)

        pos_units = per_column(units.get("positions", "rad"), n, "positions")
        fams = [U.family(u, "position", f"positions ({names[j]})")
                for j, u in enumerate(pos_units)]
        arrays = {}
        for key, qty in (("positions", "position"), ("velocities", "velocity"),
                         ("accelerations", "acceleration")):
            value = getattr(self, key)
            if value is None:
                if key in units:
                    raise DataError(f"units: {key} given a unit but the recording has no {key}")
                arrays[key] = None
                continue
            arr = signal_array(value, key, (N, n), names)
            suffix = {"position": "", "velocity": "/s", "acceleration": "/s²"}[qty]
            default = [U.si_unit(u, "position", "positions") + suffix for u in pos_units]
            col_units = per_column(units.get(key, default), n, key)
            for j, u in enumerate(col_units):
                fam = U.family(u, qty, f"{key} ({names[j]})")
                if fam != fams[j]:
                    raise DataError(f"units of {names[j]}: position in {pos_units[j]} but "
                                    f"{key} in {u}; they must measure the same quantity "
                                    "(angle or length)")
                arr[:, j] *= U.convert_factor(u, qty, key)
            arrays[key] = arr
        for key in ("positions", "velocities", "accelerations"):
            check_magnitude(arrays[key], key, names)
        set_(self, "positions", arrays["positions"])
        set_(self, "velocities", arrays["velocities"])
        set_(self, "accelerations", arrays["accelerations"])

        y = signal_array(self.output, "output", (N, None), names)
        if y.shape[1] != n:
            raise DataError(f"output: expected {n} channels, one per coordinate in positions, "
                            f"found {y.shape[1]}")
        # By default an effort does work on its coordinate: N·m on an angle, N on a length.
        default = ["A"] * n if self.output_kind == "current" else [
            U.EFFORT[U.si_unit(u, "position", "positions")] for u in pos_units]
        out_units = per_column(units.get("output", default), n, "output")
        out_fams = {U.family(u, "output", "output") for u in out_units}
        kind = self.output_kind
        if kind is None:
            kind = "current" if out_fams == {"current"} else (
                "joint_torque" if self.space == "basis" else "motor_torque")
        if kind not in OUTPUT_KINDS:
            raise DataError(f"output_kind: expected one of {OUTPUT_KINDS}, found "
                            f"{excerpt(kind)}")
        expected = {"current"} if kind == "current" else {"torque", "force"}
        if not out_fams <= expected:
            raise DataError(kind_mismatch(kind, sorted(set(out_units)), self.space))
        factors = np.array([U.convert_factor(u, "output", "output") for u in out_units])
        check_magnitude(y * factors, "output", names)
        set_(self, "output", y * factors)
        set_(self, "output_kind", kind)
        si = {"time": "s", "positions": tuple(U.si_unit(u, "position", "") for u in pos_units),
              "output": tuple(U.si_unit(u, "output", "") for u in out_units)}
        set_(self, "units", si)

        if self.output_limits is not None:
            lim = floats(self.output_limits, "output_limits")
            if lim.shape != (n,) or not np.all(lim > 0):  # inf: no limit
                raise DataError(f"output_limits: expected {n} values > 0 (inf for none), "
                                f"found {lim}")
            lim = lim * factors
            set_(self, "output_limits", lim)
        if self.output_covariance is not None:
            cov = signal_array(self.output_covariance, "output_covariance", (n, n))
            if not np.allclose(cov, cov.T) or np.linalg.eigvalsh(cov)[0] <= 0:
                raise DataError("output_covariance: expected a symmetric positive definite "
                                "matrix")
            set_(self, "output_covariance", cov * np.outer(factors, factors))
        set_(self, "saturated", self._saturation())
        self._warn_saturated()

    # Properties --------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        return self.time.shape[0]

    @property
    def n(self) -> int:
        """Number of coordinates (and output channels)."""
        return self.positions.shape[1]

    @property
    def rate(self) -> float:
        """Sample rate in Hz, from the median sample interval."""
        return float(1.0 / np.median(np.diff(self.time)))

    def is_uniform(self, tolerance: float = 1e-3) -> bool:
        """Whether every sample interval is within ``tolerance`` (relative) of the median."""
        dt = np.diff(self.time)
        return bool(np.all(np.abs(dt - np.median(dt)) <= tolerance * np.median(dt)))

    # Derived recordings ------------------------------------------------------------------
    def select(self, samples: slice | np.ndarray) -> Recording:
        """The recording restricted to some samples (a slice, indices or a boolean mask)."""
        def pick(x):
            return None if x is None else x[samples]
        return self.with_signals(time=self.time[samples], positions=self.positions[samples],
                                 output=self.output[samples], velocities=pick(self.velocities),
                                 accelerations=pick(self.accelerations))

    def skip(self, n_samples: int) -> Recording:
        """The recording without its first ``n_samples`` samples."""
        if not 0 <= n_samples < self.n_samples - MIN_SAMPLES + 1:
            raise DataError(f"skip: expected 0 ≤ n_samples ≤ {self.n_samples - MIN_SAMPLES} "
                            f"for {self.n_samples} samples, found {n_samples}")
        return self.select(slice(n_samples, None))

    def trim(self, start: int | str = 0, end: int | str = 0) -> Recording:
        """The recording without samples at its start and its end.

        ``start`` and ``end`` are whole numbers of samples, or seconds as text (``"2.5s"``,
        converted at :attr:`rate`); ``start`` may also be a :class:`~dynid.identify.trims.Trim`
        or its text ``"START:END"``.

        Examples
        --------
        >>> rec.trim(500, 20)              # doctest: +SKIP
        >>> rec.trim("2.5s", "1s")         # doctest: +SKIP
        """
        from .trims import Trim, trim_of

        trim = trim_of(start) if isinstance(start, Trim) or (isinstance(start, str) and ":"
                                                              in start) else Trim(start, end)
        first, last = trim.samples(self.rate)
        if first + last > self.n_samples - MIN_SAMPLES:
            raise DataError(f"trim {trim}: drops {first} + {last} of {self.n_samples} samples, "
                            f"leaving fewer than {MIN_SAMPLES}; trim less")
        if not trim:
            return self
        out = self.select(slice(first, self.n_samples - last))
        return out.with_signals(history=(*self.history, f"trimmed {first} samples at the "
                                         f"start and {last} at the end ({trim})"))

    def reordered(self, order: Sequence[int]) -> Recording:
        """A copy with its columns in another order: column ``j`` of the copy (coordinate,
        derivatives, output channel, name, units, limit, resolution) is column ``order[j]``
        of this one."""
        idx = [int(j) for j in order]
        if sorted(idx) != list(range(self.n)):
            raise DataError(f"order: expected a permutation of 0..{self.n - 1}, found "
                            f"{excerpt(list(order))}")

        def cols(x):
            return None if x is None else x[:, idx]

        units = {"time": "s", "positions": tuple(self.units["positions"][j] for j in idx),
                 "output": tuple(self.units["output"][j] for j in idx)}
        cov = self.output_covariance
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DynidWarning)  # reported once already
            return replace(
                self, positions=cols(self.positions), velocities=cols(self.velocities),
                accelerations=cols(self.accelerations), output=cols(self.output),
                names=tuple(self.names[j] for j in idx), units=units,
                output_limits=None if self.output_limits is None else self.output_limits[idx],
                output_covariance=None if cov is None else cov[np.ix_(idx, idx)],
                resolution=None if self.resolution is None else self.resolution[idx])

    def matched(self, robot) -> Recording:
        """This recording with its columns in the robot's order.

        Columns named after the robot's joints (its actuators, or joints, in actuator space)
        are put in the robot's order; unknown, missing or repeated names raise
        :class:`~dynid.errors.DataError`. Default names (``joint1``...) and labels that name
        none of them are taken in order (see :func:`column_order`).
        """
        order = column_order(self.names, robot, self.space)
        if order is None or list(order) == list(range(self.n)):
            return self
        return self.reordered(order)

    def with_signals(self, **changes) -> Recording:
        """A copy with some signals replaced (SI units), e.g. filtered positions."""
        # Values are SI already: keep the SI units. Saturation was reported once, unless new
        # limits are given.
        changes.setdefault("units", self.units)
        if "output_limits" in changes:
            return replace(self, **changes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DynidWarning)
            return replace(self, **changes)

    # Saturation ----------------------------------------------------------------------------
    def _saturation(self) -> np.ndarray:
        y = self.output
        if self.output_limits is not None:
            return np.abs(y) >= self.output_limits * (1 - 1e-9)
        flags = np.zeros(y.shape, dtype=bool)
        for j in range(self.n):
            if y[:, j].max() == y[:, j].min():
                continue  # a constant channel is not clipped
            for extreme in (y[:, j].max(), y[:, j].min()):
                at = y[:, j] == extreme
                if at.sum() < _CLIP_RUN:
                    continue
                # Flag runs of at least _CLIP_RUN consecutive samples at the extreme.
                edges = np.diff(np.concatenate([[0], at.astype(int), [0]]))
                starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
                for s, e in zip(starts, ends, strict=True):
                    if e - s >= _CLIP_RUN:
                        flags[s:e, j] = True
        return flags

    def _warn_saturated(self) -> None:
        counts = self.saturated.sum(axis=0)
        if not counts.any():
            return
        parts = [f"{self.names[j]} ({c} samples, {100 * c / self.n_samples:.1f} %)"
                 for j, c in enumerate(counts) if c]
        warnings.warn(f"recording: saturated output on {', '.join(parts)}; those samples are "
                      "flagged in Recording.saturated and left out of identification",
                      DynidWarning, stacklevel=3)
