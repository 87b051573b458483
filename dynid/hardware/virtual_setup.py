"""What the simulated CiA 402 drives of :class:`~dynid.hardware.virtual.VirtualRobot` are set
up with: the robot, node IDs and unit scalings (with the rule for default rated values), and
the faults they inject.

The default scaling of a drive is the plant's encoder on the actuator side (the robot's
increments per turn, 2¹⁶ when it has none, or the sensors' ``position_step``) with the robot's
zero, and a rated value (A, N·m or N) half the largest output the robot's model needs to hold
or move it at its velocity limits without acceleration, over 64 configurations drawn within
its joint limits (±π where it has none; zero speed where it has no velocity limit), rounded
to whole thousandths (at least 0.001) so that objects 0x6075/0x6076 (mA, mN·m) state it
exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import _validate
from ..errors import DataError, DriveConfigError
from ..models import Robot
from ..models.dynamics import Dynamics
from .pdo import Scaling
from .sensors import SensorNoise

__all__ = ["Faults", "as_robot", "capture_setup", "check_faults", "check_node_ids",
           "check_scalings", "default_scalings"]


@dataclass(frozen=True)
class Faults:
    """Faults a :class:`~dynid.hardware.virtual.VirtualRobot` injects, to test a capture.

    Parameters
    ----------
    drop
        Probability that each transmit PDO frame is lost (seeded by the robot's seed).
    delay
        Seconds every drive waits before sending the transmit PDOs of a SYNC.
    fault_at, fault_drive, fault_code
        At the SYNC answered number ``fault_at`` (0-based), drive ``fault_drive`` (index in
        the robot's actuator order) enters FAULT with emergency code ``fault_code`` (default
        0x2310, continuous over-current): it keeps reporting its position but no longer moves.
    cut_at, cut_drive
        From the SYNC answered number ``cut_at`` on, drive ``cut_drive`` answers nothing (no
        PDO, SDO or NMT: a cut cable); it goes on holding its last target.

    Examples
    --------
    >>> Faults(drop=0.01)                         # one transmit PDO in a hundred lost
    >>> Faults(fault_at=250, fault_drive=2)       # drive 3 faults half a second in at 500 Hz
    """

    drop: float = 0.0
    delay: float = 0.0
    fault_at: int | None = None
    fault_drive: int = 0
    fault_code: int = 0x2310
    cut_at: int | None = None
    cut_drive: int = 0

    def __post_init__(self) -> None:
        if not (_validate.is_number(self.drop) and 0 <= self.drop <= 1):
            raise DriveConfigError(f"faults.drop: expected a probability from 0 to 1, found "
                                   f"{self.drop!r}; e.g. Faults(drop=0.01)")
        if not (_validate.is_number(self.delay) and 0 <= self.delay <= 10):
            raise DriveConfigError(f"faults.delay: expected seconds from 0 to 10, found "
                                   f"{self.delay!r}; e.g. Faults(delay=0.005)")
        for name in ("fault_at", "cut_at", "fault_drive", "cut_drive"):
            value = getattr(self, name)
            if value is None and name.endswith("_at"):
                continue
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
                raise DriveConfigError(f"faults.{name}: expected a whole number ≥ 0, found "
                                       f"{value!r}; e.g. Faults(fault_at=100, fault_drive=0)")
        if not (isinstance(self.fault_code, int) and 0x1000 <= self.fault_code <= 0xFFFF):
            raise DriveConfigError(f"faults.fault_code: expected an emergency error code from "
                                   f"0x1000 to 0xFFFF, found {self.fault_code!r}")




def check_faults(faults, n: int) -> Faults:
    """``faults`` (default: none) for a robot of ``n`` drives."""
    faults = Faults() if faults is None else faults
    if not isinstance(faults, Faults):
        raise DriveConfigError(f"faults: expected a Faults, found {faults!r}; e.g. "
                               "faults=Faults(drop=0.01)")
    for name in ("fault_drive", "cut_drive"):
        if getattr(faults, name) >= n:
            raise DriveConfigError(f"faults.{name}: expected a drive index from 0 to {n - 1}, "
                                   f"found {getattr(faults, name)}")
    return faults


def capture_setup(robot: Robot, theta, settings, bus, noise: float, seed: int) -> dict:
    """Keyword arguments of :class:`~dynid.hardware.virtual.VirtualRobot` for a capture with
    ``settings`` (:class:`~dynid.hardware.settings.DriveSettings`) and ``bus``
    (:class:`~dynid.hardware.settings.BusSettings`): their node IDs, rate, scalings (the
    default rated value where it is to be read from the drive), channel and CAN FD, and an
    output noise of ``noise`` times each drive's rated value."""
    if bus.interface != "virtual":
        raise DriveConfigError(f"bus: the simulated robot is on python-can's virtual bus, "
                               f"found interface {bus.interface!r}; e.g. "
                               "BusSettings(interface='virtual', channel='dynid')")
    if len(settings.nodes) != robot.n:
        raise DriveConfigError(f"settings: {len(settings.nodes)} drives for the {robot.n} "
                               f"actuators of {robot.name!r}")
    if not (_validate.is_number(noise) and noise >= 0):
        raise DriveConfigError(f"noise: expected a fraction of the rated value ≥ 0, found "
                               f"{noise!r}; e.g. noise=0.01")
    default = default_scalings(robot, theta, None, seed)
    scalings = [replace(ns.scaling, rated=d.rated) if ns.rated_from_drive else ns.scaling
                for ns, d in zip(settings.nodes, default, strict=True)]
    rated = np.array([sc.rated * sc.gear for sc in scalings])
    return dict(channel=bus.channel, node_ids=settings.node_ids, rate=settings.rate,
                scalings=scalings, seed=seed, noise=SensorNoise(output_std=noise * rated),
                fd=bus.fd)


def as_robot(robot) -> Robot:
    """A :class:`~dynid.models.Robot`, or the embedded robot of that name."""
    if isinstance(robot, Robot):
        return robot
    if isinstance(robot, str):
        from ..models import load_robot
        return load_robot(robot)
    raise DriveConfigError(f"robot: expected a dynid Robot or the name of an embedded robot, "
                           f"found {type(robot).__name__} {robot!r}; e.g. "
                           "VirtualRobot(load_robot('panda'))")


def check_node_ids(node_ids, n: int) -> list[int]:
    """One node ID from 1 to 127 per actuator, all different (default: 1 to n)."""
    if node_ids is None:
        return list(range(1, n + 1))
    ids = list(node_ids) if not isinstance(node_ids, str | bytes) else [node_ids]
    if len(ids) != n:
        raise DriveConfigError(f"node_ids: expected one node ID per actuator ({n}), found "
                               f"{len(ids)}: {ids}; e.g. node_ids={list(range(1, n + 1))}")
    for j, node in enumerate(ids):
        if isinstance(node, bool) or not isinstance(node, int | np.integer) or \
                not 1 <= node <= 127:
            raise DriveConfigError(f"node_ids[{j}]: expected a node ID from 1 to 127, found "
                                   f"{node!r}")
    duplicated = sorted({int(x) for x in ids if ids.count(x) > 1})
    if duplicated:
        raise DriveConfigError(f"node_ids: node IDs {duplicated} are given twice in {ids}; "
                               "every drive needs its own")
    return [int(x) for x in ids]


def check_scalings(scalings, n: int) -> list[Scaling]:
    """One :class:`~dynid.hardware.pdo.Scaling` per actuator."""
    out = list(scalings) if not isinstance(scalings, Scaling) else [scalings]
    if len(out) != n:
        raise DriveConfigError(f"scalings: expected one Scaling per actuator ({n}), found "
                               f"{len(out)}; e.g. scalings=[Scaling.from_turn(4096, "
                               f"rated=2.0)] * {n}")
    for j, sc in enumerate(out):
        if not isinstance(sc, Scaling):
            raise DriveConfigError(f"scalings[{j}]: expected a Scaling, found "
                                   f"{type(sc).__name__} {sc!r}")
    return out


def default_scalings(robot: Robot, theta, noise, seed: int) -> list[Scaling]:
    """The drives' default scalings (the module docstring states the rule)."""
    n, trans, lim = robot.n, robot.transmission, robot.limits
    if noise is not None and noise.position_step is not None:
        steps = np.full(n, float(noise.position_step))
    else:
        increments = trans.increments_per_turn
        steps = 2 * np.pi / (np.full(n, 2.0**16) if increments is None
                             else np.asarray(increments, dtype=float))
    zeros = (np.zeros(n) if trans.zero_increments is None
             else np.asarray(trans.zero_increments, dtype=float))
    rng = np.random.default_rng([seed, 4])
    lower = np.where(np.isfinite(lim.lower), lim.lower, -np.pi)
    upper = np.where(np.isfinite(lim.upper), lim.upper, np.pi)
    q = rng.uniform(lower, upper, (64, n))
    speed = np.where(np.isfinite(lim.velocity), lim.velocity, 0.0)
    v = speed * rng.choice([-1.0, 1.0], (64, n))
    need = np.abs(Dynamics(robot, theta).terms(q, v)[1]).max(axis=0)
    if not np.all(np.isfinite(need)):
        raise DataError(f"theta: the robot's model gives a non-finite output {need} within "
                        "its limits; check the parameters")
    rated = np.maximum(np.round(need / 2 * 1000.0), 1.0) / 1000.0
    return [Scaling(float(steps[j]), zero=float(zeros[j]), rated=float(rated[j]))
            for j in range(n)]
