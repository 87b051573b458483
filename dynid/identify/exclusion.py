"""Rows left out near zero velocity and while the robot is at rest.

Coulomb friction ``f_c sgn q̇`` has no defined sign where the velocity cannot be told from
zero, and the real friction there (stiction, pre-sliding, Stribeck) is not the model's. So:

* dead zone: per joint j, the rows of joint j (its output row of the regressor) at the samples
  where ``|q̇_j|`` is below its threshold are left out. With outputs in actuator space and a
  coupling matrix ``C`` (``q̇_m = C ...``), the row of actuator i follows every coordinate that
  moves it or whose force reaches it (the non-zeros of row i of ``C`` and of ``C⁻ᵀ``);
* rest: samples where every joint is in its dead zone for at least ``rest`` seconds (gaps
  shorter than that between two such spans are closed) are left out for every joint, and with
  decimation so is every decimated sample whose filter window touches one (as for saturated
  samples), so no filtered row mixes rest into motion.

The automatic threshold (``Processing(deadzone="auto")``) of joint j is

    max(0.01 · max |q̇_j|,  3 σ_j)

with ``σ_j`` the standard deviation of the noise on the processed velocity: white noise at the
level of each recorded signal's spectral noise floor
(:func:`~dynid.identify.filters.noise_level`) is added to the recording and processed the
same way, and the change of the velocity is that noise. The first term is FIGAROH's choice for
the Stäubli TX40 (its thresholds are 1 % of each joint's peak speed); with the second, noise
flips the sign of the velocity in at most 0.13 % of the rows left in. Samples at unrelated
states (the lag-1 autocorrelation of the processed velocities is below one half on average,
where a motion sampled many times per period has it near 1) have no velocity noise to tell
from the motion and get no dead zone; nor do periodic recordings averaged over their periods
(the average has little velocity noise, and maximum likelihood filters them at a cutoff it
chooses after the data are built). ``rest="auto"`` is 0.1 s.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._files import excerpt
from .._validate import is_number
from ..errors import DataError, DynidWarning
from .filters import noise_level
from .recording import Recording
from .states import derivative_source

__all__ = ["AUTO_REST", "Excluded", "Exclusion", "auto_thresholds", "check_settings",
           "rest_segments"]

#: Share of a joint's peak speed in its automatic dead zone.
PEAK_SHARE = 0.01
#: Standard deviations of the velocity noise in the automatic dead zone.
NOISE_SIGMAS = 3.0
#: Shortest rest, s, with ``rest="auto"``.
AUTO_REST = 0.1
# An automatic dead zone that leaves out more than this share of a joint's rows is reported.
_WARN_SHARE = 0.25


def check_settings(deadzone, rest) -> None:
    """Raise unless ``deadzone`` is ``"auto"``, ``None``, a speed ≥ 0 or a sequence of them,
    and ``rest`` is ``"auto"``, ``None`` or a duration > 0 s."""
    example = "e.g. deadzone=0.05 (every joint) or deadzone=[0.05, 0.05, 0.08] (one per joint)"
    if isinstance(deadzone, str):
        if deadzone != "auto":
            raise DataError(f"deadzone: expected 'auto', None or speeds in rad/s (m/s), found "
                            f"{excerpt(deadzone)}; {example}")
    elif deadzone is not None:
        values = deadzone if isinstance(deadzone, Sequence) else [deadzone]
        for j, value in enumerate(values):
            if not is_number(value) or value < 0:
                where = f"deadzone[{j}]" if isinstance(deadzone, Sequence) else "deadzone"
                raise DataError(f"{where}: expected a speed ≥ 0 in rad/s (m/s for a prismatic "
                                f"joint), found {excerpt(value)}; {example}")
        if isinstance(deadzone, Sequence) and not len(deadzone):
            raise DataError(f"deadzone: expected one speed per joint, found none; {example}")
    if rest is not None and rest != "auto" and not (is_number(rest) and rest > 0):
        raise DataError(f"rest: expected a duration > 0 s, 'auto' ({AUTO_REST:g} s) or None, "
                        f"found {excerpt(rest)}; e.g. rest=0.5")


@dataclass(frozen=True)
class Exclusion:
    """Thresholds and rest duration resolved for a robot (see the module docstring).

    Attributes
    ----------
    thresholds
        Speed per basis coordinate (n,) below which it is in its dead zone, rad/s or m/s.
    rest
        Shortest rest, s (``None``: rests are not looked for).
    reach
        ``reach[i, j]``: output row i is left out when coordinate j is in its dead zone (n, n).
    """

    thresholds: np.ndarray
    rest: float | None
    reach: np.ndarray

    @classmethod
    def for_robot(cls, robot, thresholds, rest: float | None) -> Exclusion:
        """Thresholds (one speed, or one per joint) checked against ``robot``."""
        values = np.array(thresholds, dtype=float).reshape(-1)
        if values.size == 1:
            values = np.full(robot.n, values[0])
        if values.shape != (robot.n,):
            raise DataError(f"deadzone: expected one speed or {robot.n} (one per joint of "
                            f"{robot.name}: {', '.join(robot.joint_names)}), found "
                            f"{values.size}; e.g. deadzone={[0.05] * robot.n}")
        reach = np.eye(robot.n, dtype=bool)
        C = robot.transmission.coupling
        if robot.output != "joint_torque" and C is not None:
            reach = reach | (C != 0) | (np.linalg.inv(C).T != 0)
        return cls(values, rest, reach)

    def flags(self, recording: Recording) -> tuple[np.ndarray, np.ndarray]:
        """Per sample of a processed recording: rows in a dead zone (N, n), and samples at
        rest (N,)."""
        zone = np.abs(recording.velocities) < self.thresholds
        dead = (zone.astype(np.int64) @ self.reach.T.astype(np.int64)) > 0
        if self.rest is None:
            return dead, np.zeros(recording.n_samples, dtype=bool)
        return dead, rest_segments(zone.all(axis=1), recording.time, self.rest)


def rest_segments(still: np.ndarray, time: np.ndarray, duration: float) -> np.ndarray:
    """Samples (N,) in spans where ``still`` holds for at least ``duration`` seconds, with the
    gaps shorter than ``duration`` between two such spans closed."""
    edges = np.diff(np.concatenate([[0], still.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)  # [start, end)
    long = time[ends - 1] - time[starts] >= duration
    starts, ends = starts[long], ends[long]
    if len(starts) > 1:
        close = time[starts[1:]] - time[ends[:-1] - 1] < duration
        keep = np.concatenate([[True], ~close])
        starts, ends = starts[keep], ends[np.concatenate([~close, [True]])]
    out = np.zeros(len(still), dtype=bool)
    for a, b in zip(starts, ends, strict=True):
        out[a:b] = True
    return out


def auto_thresholds(processing, recordings: Sequence[Recording],
                    processed: Sequence[Recording], robot=None) -> np.ndarray:
    """The automatic dead zone (n,) of the module docstring for raw ``recordings`` processed
    by ``processing`` into ``processed``; zeros when no recording is a motion in time."""
    n = processed[0].n
    peak, sigma = np.zeros(n), np.zeros(n)
    rng = np.random.default_rng(0)
    for raw, done in zip(recordings, processed, strict=True):
        if not _is_motion(done.velocities):
            continue  # samples at unrelated states
        peak = np.maximum(peak, np.abs(done.velocities).max(axis=0))
        source = derivative_source(raw, processing.derivatives)
        signals = ["positions"] + (["velocities"] if source != "positions" else []) + \
            (["accelerations"] if source == "recorded" else [])
        noisy = {name: getattr(raw, name) + noise_level(getattr(raw, name), raw.rate)
                 * rng.standard_normal(getattr(raw, name).shape) for name in signals}
        again = processing.apply(raw.with_signals(**noisy), robot)
        sigma = np.maximum(sigma, np.std(again.velocities - done.velocities, axis=0))
    return np.maximum(PEAK_SHARE * peak, NOISE_SIGMAS * sigma)


@dataclass(frozen=True)
class Excluded:
    """What the dead zone and the rests left out of the identification rows.

    Attributes
    ----------
    outputs
        Output names (n).
    thresholds
        The dead zone used, per joint (rad/s or m/s) (n,).
    rest_duration
        The shortest rest looked for, s (``None``: none).
    rows
        Rows per output before exclusion (after decimation and saturated samples) (n,).
    deadzone
        Rows per output left out by the dead zone only (n,).
    rest
        Samples left out at rest (every output), and the seconds of rest found.
    """

    outputs: tuple[str, ...]
    thresholds: tuple[float, ...]
    rest_duration: float | None
    rows: tuple[int, ...]
    deadzone: tuple[int, ...]
    rest: int = 0
    rest_seconds: float = 0.0

    @property
    def kept(self) -> np.ndarray:
        """Rows per output left in (n,)."""
        return np.array(self.rows) - np.array(self.deadzone) - self.rest

    def summary(self) -> str:
        parts = [f"{name} {d}" for name, d in zip(self.outputs, self.deadzone, strict=True)]
        return (f"left out near zero velocity: {', '.join(parts)} rows (below "
                f"{', '.join(f'{t:.3g}' for t in self.thresholds)}); at rest {self.rest} "
                f"samples ({self.rest_seconds:.3g} s)")

    def to_dict(self) -> dict:
        return {"outputs": list(self.outputs), "thresholds": list(self.thresholds),
                "rest_duration": self.rest_duration, "rows": list(self.rows),
                "deadzone": list(self.deadzone), "rest": self.rest,
                "rest_seconds": self.rest_seconds}

    @classmethod
    def from_dict(cls, data) -> Excluded:
        try:
            duration = data["rest_duration"]
            out = cls(tuple(str(x) for x in data["outputs"]),
                      tuple(_speed(x) for x in data["thresholds"]),
                      None if duration is None else _speed(duration),
                      tuple(_count(x) for x in data["rows"]),
                      tuple(_count(x) for x in data["deadzone"]), _count(data.get("rest", 0)),
                      _speed(data.get("rest_seconds", 0.0)))
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise DataError(f"processing: excluded: expected outputs, thresholds, rows and "
                            f"deadzone lists and rest counts, found {excerpt(data)} "
                            f"({excerpt(str(exc))})") from None
        if not len(out.outputs) == len(out.thresholds) == len(out.rows) == len(out.deadzone):
            raise DataError(f"processing: excluded: expected one threshold and count per "
                            f"output ({len(out.outputs)}), found {len(out.thresholds)}, "
                            f"{len(out.rows)} and {len(out.deadzone)}")
        return out

    def check(self, exclusion: Exclusion, peaks: np.ndarray, units: Sequence[str], *,
              automatic: bool) -> None:
        """Raise when an output has no row left; with ``automatic`` thresholds, warn when the
        dead zone (rests apart) leaves out more than a quarter of an output's rows."""
        kept = self.kept
        for i, name in enumerate(self.outputs):
            joints = np.flatnonzero(exclusion.reach[i])
            speeds = ", ".join(f"{exclusion.thresholds[j]:.3g} {units[j]}/s (peak "
                               f"{peaks[j]:.3g})" for j in joints)
            share = self.deadzone[i] / max(self.rows[i], 1)
            if kept[i] <= 0:
                fix = ("lower its threshold, e.g. deadzone=" +
                       str([round(float(t) / 4, 4) for t in exclusion.thresholds]) +
                       ", or set deadzone=None (no exclusion)")
                raise DataError(f"dead zone: every row of {name} is left out (its dead zone: "
                                f"{speeds}; {self.rest} samples at rest); {fix}")
            if automatic and share > _WARN_SHARE:
                warnings.warn(f"processing: the automatic dead zone of {name} ({speeds}) "
                              f"leaves out {100 * share:.0f} % of its rows: its velocity is "
                              "noisy or slow. Lower the cutoff, or give deadzone= per joint",
                              DynidWarning, stacklevel=4)


def _speed(value) -> float:
    """A finite number ≥ 0 read from a file."""
    if not is_number(value) or value < 0:
        raise ValueError(f"{excerpt(value)} is not a finite number ≥ 0")
    return float(value)


def _count(value) -> int:
    """A whole number ≥ 0 read from a file."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{excerpt(value)} is not a whole number ≥ 0")
    return value


def _is_motion(v: np.ndarray) -> bool:
    """Whether velocities (N, n) follow a motion in time: the lag-1 autocorrelation of the
    columns that vary is above one half on average (about 1 for a motion sampled many times
    per period, about 0 for samples at unrelated states)."""
    v = v - v.mean(axis=0)
    power = np.sum(v * v, axis=0)
    moving = power > 0
    if not moving.any() or len(v) < 3:
        return False
    rho = np.sum(v[1:] * v[:-1], axis=0)[moving] / power[moving]
    return bool(rho.mean() > 0.5)
