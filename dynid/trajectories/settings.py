"""Every setting of an excitation design, validated once and saved with the trajectory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from .._files import excerpt
from ..errors import TrajectoryError
from .constraints import CartesianBox
from .criteria import CRITERIA, SCALINGS
from .fourier import SPACES, UNITS, check_frequency, check_harmonics
from .optimizers import OPTIMIZERS

__all__ = ["BOUNDARIES", "DesignSettings"]

#: How a trajectory starts and ends: at rest by constraints on the coefficients (Swevers), with
#: a smooth ramp of the amplitudes (Wang), or neither (a periodic motion already under way).
BOUNDARIES = ("rest", "ramp", "periodic")


@dataclass(frozen=True)
class DesignSettings:
    """Settings of :func:`~dynid.trajectories.design.design_excitation`.

    Parameters
    ----------
    harmonics
        Number of harmonics ``n_h`` per coordinate (≥ 1).
    frequency
        Fundamental frequency (Hz, > 0); the period is its inverse.
    space, unit
        Design coordinates: ``"basis"`` or ``"actuator"``; ``"si"`` or ``"increments"``.
    boundary
        One of :data:`BOUNDARIES`.
    ramp
        Ramp duration (s) for ``boundary="ramp"``.
    periods
        Whole periods between the ramps in the executed trajectory.
    criterion, scaling
        ``"condition"`` (with column ``scaling`` ``"range"``, ``"norm"`` or ``"none"``) or
        ``"d-optimal"``.
    noise
        Output noise: standard deviations per output (n,) or a covariance (n, n), in the units
        of the model output; ``None`` for unit variance.
    samples
        Samples per period at which the criterion is evaluated; the constraints use four times
        as many, and the acceptance check at least ten times the constraint samples.
    optimizer, max_iterations, tolerance
        Backend name (see :mod:`dynid.trajectories.optimizers`) and its limits per start.
    starts, seed
        Number of random feasible starts and the seed that draws them.
    fixed
        Coordinates held still: name → position in design units.
    joint_limits, actuator_limits
        Whether to enforce the robot's joint and actuator limits (position, velocity,
        acceleration; the finite ones).
    cartesian
        Boxes that frames of the robot must stay in.
    margin
        Fraction of every limit range kept free (0: the full limits).
    rate
        Sample rate (Hz) of the drives that will play and record the trajectory; it scales
        the information of the new experiment against earlier ones.
    """

    harmonics: int = 6
    frequency: float = 0.1
    space: str = "basis"
    unit: str = "si"
    boundary: str = "rest"
    ramp: float = 5.0
    periods: int = 1
    criterion: str = "condition"
    scaling: str = "range"
    noise: tuple | None = None
    samples: int = 100
    optimizer: str = "ipopt"
    max_iterations: int = 60
    tolerance: float = 1e-6
    starts: int = 2
    seed: int = 0
    fixed: Mapping[str, float] = field(default_factory=dict)
    joint_limits: bool = True
    actuator_limits: bool = True
    cartesian: tuple[CartesianBox, ...] = ()
    margin: float = 0.0
    rate: float = 100.0

    def __post_init__(self) -> None:
        check_harmonics(self.harmonics)
        check_frequency(self.frequency)
        for key, allowed in (("space", SPACES), ("unit", UNITS), ("boundary", BOUNDARIES),
                             ("criterion", CRITERIA), ("scaling", SCALINGS),
                             ("optimizer", tuple(OPTIMIZERS))):
            if getattr(self, key) not in allowed:
                raise TrajectoryError(f"{key}: expected one of {allowed}, found "
                                      f"{getattr(self, key)!r}")
        for key, low, high in (("periods", 1, 1000), ("samples", 8, 100_000),
                               ("max_iterations", 1, 100_000), ("starts", 1, 1000)):
            value = getattr(self, key)
            if not isinstance(value, int | np.integer) or not low <= value <= high:
                raise TrajectoryError(f"{key}: expected a whole number from {low} to {high}, "
                                      f"found {excerpt(value)}")
        if not isinstance(self.seed, int | np.integer):
            raise TrajectoryError(f"seed: expected a whole number, found {self.seed!r}")
        for key in ("ramp", "tolerance", "rate"):
            value = getattr(self, key)
            if not (isinstance(value, int | float) and np.isfinite(value) and value >= 0):
                raise TrajectoryError(f"{key}: expected a finite number ≥ 0, found {value!r}")
        if self.boundary == "ramp" and not self.ramp > 0:
            raise TrajectoryError("ramp: boundary 'ramp' needs a ramp duration > 0 s")
        if not self.rate > 0 or not self.tolerance > 0:
            raise TrajectoryError("rate and tolerance must be > 0")
        if not 0 <= self.margin < 1:
            raise TrajectoryError(f"margin: expected a fraction in [0, 1), found {self.margin}")
        fixed = {str(k): float(v) for k, v in dict(self.fixed).items()}
        if not all(np.isfinite(v) for v in fixed.values()):
            raise TrajectoryError(f"fixed: expected finite positions, found {fixed}")
        object.__setattr__(self, "fixed", fixed)
        boxes = tuple(b if isinstance(b, CartesianBox) else CartesianBox(**b)
                      for b in self.cartesian)
        object.__setattr__(self, "cartesian", boxes)
        if self.noise is not None:
            object.__setattr__(self, "noise", _tuple(np.asarray(self.noise, float)))

    @property
    def ramp_duration(self) -> float:
        """The ramp of the executed trajectory (0 unless ``boundary="ramp"``)."""
        return self.ramp if self.boundary == "ramp" else 0.0

    def to_dict(self) -> dict:
        out = asdict(self)
        out["cartesian"] = [b.to_dict() for b in self.cartesian]
        out["fixed"] = dict(self.fixed)
        out["noise"] = None if self.noise is None else np.asarray(self.noise).tolist()
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> DesignSettings:
        names = {f.name for f in fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise TrajectoryError(f"design settings: unknown keys {sorted(unknown)}; known "
                                  f"ones are {sorted(names)}")
        return cls(**dict(data))


def _tuple(a: np.ndarray):
    return tuple(_tuple(x) for x in a) if a.ndim > 1 else tuple(float(x) for x in a)
