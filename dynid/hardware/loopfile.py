"""The closed-loop settings file: the drives' loops and gains of an experiment.

The closed-loop estimators simulate the experiment again, which needs what a recording does
not hold: the drives' control rate, their loops and the gains they ran with. A user has them
from the drives' configuration (or from :attr:`~dynid.hardware.Simulation.gains`); this file
holds them, in YAML (or JSON, which is YAML too)::

    format: dynid-closed-loop
    version: 1
    robot: arm2                 # the robot the gains are for (checked against it)
    control_rate: 250           # Hz, the drives' loops
    record_every: 1             # one control period recorded in this many
    loops:                      # optional; the defaults of DriveLoops otherwise
      current_bandwidth: 100    # Hz, the current loop's first-order lag
      feedforward: true         # the robot's prior model fed forward
      encoder_increments: 4096  # per motor turn, of the position the loops read
    drives:                     # one entry per actuator, by the robot's actuator names
      motor1: {position: 30.0, velocity: 0.8, integral: 30.0, velocity_filter: 0.0}
      motor2: {position: 30.0, velocity: 0.2, integral: 30.0}

``position`` is the position-loop gain (1/s), ``velocity`` the velocity-loop gain (output
units per motor rad/s), ``integral`` the velocity loop's integral corner (rad/s) and
``velocity_filter`` the time constant (s) of the filter of the velocity fed back (0, the
default: none), as in :class:`~dynid.hardware.Gains`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import yaml

from .._files import excerpt, load_yaml, name_list, read_structured
from ..errors import DriveConfigError
from ..models import Robot
from .drives import DriveLoops, Gains

__all__ = ["LoopSettings", "experiment_loop", "load_loop_settings", "save_loop_settings"]

FORMAT, VERSION = "dynid-closed-loop", 1
_GAINS = ("position", "velocity", "integral", "velocity_filter")
_LOOPS = ("current_bandwidth", "feedforward", "encoder_increments", "substeps")
_EXAMPLE = ("e.g. drives: {motor1: {position: 30, velocity: 0.8, integral: 30}}")


@dataclass(frozen=True)
class LoopSettings:
    """The drives of an experiment: their rate, loops and gains (a closed-loop settings file).

    Examples
    --------
    >>> save_loop_settings("loop.yaml", robot, sim.gains, control_rate=250)
    >>> settings = load_loop_settings("loop.yaml", robot)
    >>> loop = settings.closed_loop(robot, reference, duration=4.0)   # a ClosedLoop
    """

    robot: str
    control_rate: float
    record_every: int
    loops: DriveLoops
    gains: Gains

    def closed_loop(self, robot: Robot, reference, duration: float, *, recordings: int = 1,
                    source: dict | None = None):
        """The :class:`~dynid.hardware.ClosedLoop` of an experiment along ``reference`` for
        ``duration`` seconds with these drives (``recordings``, ``source``: as there)."""
        from .closedloop import ClosedLoop

        return ClosedLoop(robot, reference, duration, gains=self.gains,
                          control_rate=self.control_rate, record_every=self.record_every,
                          loops=self.loops, recordings=recordings, source=source)

    def to_dict(self, robot: Robot) -> dict:
        """The file's content."""
        loops = {k: getattr(self.loops, k) for k in _LOOPS if getattr(self.loops, k) is not None}
        drives = {name: {k: float(getattr(self.gains, k)[i]) for k in _GAINS}
                  for i, name in enumerate(robot.actuator_names)}
        return {"format": FORMAT, "version": VERSION, "robot": self.robot,
                "control_rate": float(self.control_rate), "record_every": int(self.record_every),
                "loops": {k: (v if isinstance(v, bool) else int(v) if k == "substeps" else float(v))
                          for k, v in loops.items()},
                "drives": drives}


def save_loop_settings(path: str | Path, robot: Robot, gains: Gains, *, control_rate: float,
                       record_every: int = 1, loops: DriveLoops | None = None) -> Path:
    """Write the closed-loop settings file of drives with ``gains`` (e.g. a simulation's).

    Examples
    --------
    >>> sim = simulate(robot, theta, ref, 4.0, control_rate=250)
    >>> save_loop_settings("loop.yaml", robot, sim.gains, control_rate=250)
    """
    settings = LoopSettings(robot.name, float(control_rate), int(record_every),
                            loops or DriveLoops(), gains)
    path = Path(path)
    path.write_text(yaml.safe_dump(settings.to_dict(robot), sort_keys=False))
    return path


def load_loop_settings(path: str | Path, robot: Robot) -> LoopSettings:
    """Read and check a closed-loop settings file (see the module docstring) for ``robot``.

    Examples
    --------
    >>> settings = load_loop_settings("loop.yaml", robot)
    >>> settings.control_rate, settings.gains.velocity
    """
    where = f"closed-loop settings {excerpt(str(path), 200)}"
    data = read_structured(path, "closed-loop settings", "YAML", load_yaml, yaml.YAMLError,
                           DriveConfigError)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DriveConfigError(f"{where}: expected \"format: {FORMAT}\" (a closed-loop settings "
                               "file, see `dynid identify --help`)")
    if data.get("version") != VERSION:
        raise DriveConfigError(f"{where}: version {excerpt(data.get('version'))} is not "
                               f"supported (expected {VERSION})")
    if data.get("robot") != robot.name:
        raise DriveConfigError(f"{where}: the gains are for robot {excerpt(data.get('robot'))}, "
                               f"not {robot.name!r}; give the settings of this robot's drives")
    rate = _number(data.get("control_rate"), f"{where}: control_rate", "a rate > 0 Hz, e.g. "
                   "control_rate: 1000", positive=True)
    every = data.get("record_every", 1)
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise DriveConfigError(f"{where}: record_every: expected a whole number ≥ 1, found "
                               f"{excerpt(every)}; e.g. record_every: 1")
    return LoopSettings(robot.name, rate, every, _loops(data.get("loops") or {}, where),
                        _gains(data.get("drives"), robot, where))


def _number(value, where: str, expected: str, *, positive: bool = False) -> float:
    ok = (isinstance(value, int | float) and not isinstance(value, bool) and
          math.isfinite(value) and (value > 0 if positive else value >= 0))
    if not ok:
        raise DriveConfigError(f"{where}: expected {expected}, found {excerpt(value)}")
    return float(value)


def _loops(given, where: str) -> DriveLoops:
    if not isinstance(given, dict) or set(given) - set(_LOOPS):
        unknown = sorted(set(given) - set(_LOOPS)) if isinstance(given, dict) else given
        raise DriveConfigError(f"{where}: loops: expected a mapping of {', '.join(_LOOPS)}, "
                               f"found {excerpt(unknown)}; e.g. loops: {{current_bandwidth: "
                               "100, encoder_increments: 4096}")
    values = {}
    for f in fields(DriveLoops):
        if f.name not in given:
            continue
        v = given[f.name]
        if f.name == "feedforward":
            if not isinstance(v, bool):
                raise DriveConfigError(f"{where}: loops.feedforward: expected true or false, "
                                       f"found {excerpt(v)}")
        elif f.name == "substeps":
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise DriveConfigError(f"{where}: loops.substeps: expected a whole number ≥ 1, "
                                       f"found {excerpt(v)}")
        else:
            v = _number(v, f"{where}: loops.{f.name}", "a number > 0", positive=True)
        values[f.name] = v
    return DriveLoops(**values)


def _gains(drives, robot: Robot, where: str) -> Gains:
    names = list(robot.actuator_names)
    if not isinstance(drives, dict):
        raise DriveConfigError(f"{where}: drives: expected a mapping from each actuator's name "
                               f"({name_list(names)}) to its gains, found {excerpt(drives)}; "
                               f"{_EXAMPLE}")
    missing = [k for k in names if k not in drives]
    unknown = [k for k in drives if k not in names]
    if missing or unknown:
        raise DriveConfigError(f"{where}: drives: {len(drives)} given for the robot's "
                               f"{len(names)} actuators {name_list(names)}; missing "
                               f"{name_list(missing)}, unknown {name_list(unknown)}")
    values = {k: np.zeros(len(names)) for k in _GAINS}
    for i, name in enumerate(names):
        gains = drives[name]
        if not isinstance(gains, dict) or set(gains) - set(_GAINS) or \
                not {"position", "velocity", "integral"} <= set(gains):
            raise DriveConfigError(f"{where}: drives.{name}: expected position, velocity, "
                                   f"integral (and optionally velocity_filter), found "
                                   f"{excerpt(gains)}; {_EXAMPLE}")
        for k in _GAINS:
            values[k][i] = _number(gains.get(k, 0.0), f"{where}: drives.{name}.{k}",
                                   "a number > 0" if k == "velocity" else "a number ≥ 0",
                                   positive=k == "velocity")
    n = len(names)
    return Gains(inertia=np.full(n, np.nan), modes=(math.nan, math.nan), delay=math.nan,
                 **values)


def experiment_loop(robot: Robot, excitation: str | Path, loop: str | Path, recordings):
    """The :class:`~dynid.hardware.ClosedLoop` of recordings captured along the excitation
    file ``excitation`` (``dynid design -o``) by drives of the closed-loop settings file
    ``loop``: each recording must start where the excitation starts, at the drives' rate
    (``control_rate / record_every``), all of the same length.

    Examples
    --------
    >>> loop = experiment_loop(robot, "excitation.json", "loop.yaml", [run])
    >>> InstrumentalVariables(simulator=loop).fit(IdentificationData(robot, [run]))
    """
    from ..errors import DataError, TrajectoryError
    from ..trajectories.io import read_trajectory_file
    from ..trajectories.spaces import basis_motion

    design = read_trajectory_file(excitation)
    if design.robot not in (None, robot.name):
        raise TrajectoryError(f"excitation {excerpt(str(excitation), 200)} was designed for "
                              f"robot {excerpt(design.robot)}, not {robot.name!r}; give the "
                              "excitation the recordings were captured along")
    reference = basis_motion(design.trajectory, robot)
    settings = load_loop_settings(loop, robot)
    rate = settings.control_rate / settings.record_every
    lengths = {rec.n_samples for rec in recordings}
    for k, rec in enumerate(recordings):
        if not np.isclose(rec.rate, rate, rtol=1e-3):
            raise DataError(f"recording {k + 1}: {rec.rate:.6g} Hz, where the drives of "
                            f"{excerpt(str(loop), 200)} record at {rate:.6g} Hz (control_rate "
                            f"{settings.control_rate:g} / record_every {settings.record_every});"
                            " give the settings the recording was captured with")
        if abs(rec.time[0]) > 0.5 / rate:
            raise DataError(f"recording {k + 1} starts at t = {rec.time[0]:.6g} s; the closed "
                            "loop is simulated from the start of the excitation (t = 0): give "
                            "the whole recording, untrimmed")
    if len(lengths) != 1:
        raise DataError(f"recordings of {sorted(lengths)} samples: the closed-loop estimators "
                        "take repeats of one excitation, each of the same length")
    duration = lengths.pop() / rate
    return settings.closed_loop(robot, reference, duration, recordings=len(recordings),
                                source={"excitation": str(excitation),
                                        "loop_settings": str(loop)})
