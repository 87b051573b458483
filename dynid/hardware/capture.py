"""Capture: run a designed trajectory on the robot's drives and record what they measure.

:func:`capture` refuses before anything moves when something is wrong: the trajectory or the
ramps leave a joint or actuator limit (:mod:`~dynid.hardware.motion`), the cycle does not fit
the bus (:mod:`~dynid.hardware.budget`), a target is beyond a drive's position range, the
recording file exists, the drives report another output than the robot's model uses, or a
drive does not answer. Then it enables the drives holding the present position, ramps to the
trajectory's start, streams the trajectory for the requested periods while recording
drive-time-stamped positions and outputs, ramps out to rest and disables the drives.

The recording is appended one sample per cycle and flushed every cycle (and synced to disk
every second), so a crash or a killed process loses no flushed sample, and the file is
readable by :func:`dynid.read_csv` at any moment. Every failure on the way stops the motion
(a quick stop of every drive), closes the file and raises a
:class:`~dynid.errors.CaptureError` subclass carrying the file and the samples it holds:
missing feedback (:class:`~dynid.errors.CaptureTimeoutError`, the watchdog), a position error
beyond its limit (:class:`~dynid.errors.FollowingError`), a drive fault or emergency message
(:class:`~dynid.errors.DriveFaultError`), a bus failure (:class:`~dynid.errors.BusError`).
An interrupt (Ctrl-C) stops the motion the same way and is raised again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._progress import Progress
from ..errors import CaptureError, DataError, DriveConfigError, DynidError
from .budget import BusTiming, Cycle, check_budget
from .drive import Drives, open_drives
from .motion import Schedule, plan, sample_trajectory
from .settings import BusSettings, DriveSettings
from .writer import RecordingWriter

__all__ = ["CaptureResult", "capture"]

_OUTPUTS = {"current": ("current",), "torque": ("joint_torque", "motor_torque")}


@dataclass(frozen=True)
class CaptureResult:
    """What a capture did.

    Attributes
    ----------
    path
        The recording file.
    samples
        Samples recorded (cycles of the trajectory with complete feedback).
    cycles
        Cycles run, ramps included.
    dropped
        Cycles whose feedback did not come in time (not recorded).
    rate
        Sustained cycle rate, Hz (cycles over the wall-clock time of the run).
    jitter_p99
        99th percentile of the deviation of the cycle period from its nominal value, s.
    bus_load
        Worst-case bus load of the cycle (fraction of the bus time).
    """

    path: Path
    samples: int
    cycles: int
    dropped: int
    rate: float
    jitter_p99: float
    bus_load: float

    def summary(self) -> str:
        return (f"recorded {self.samples} samples in {self.path} ({self.cycles} cycles at "
                f"{self.rate:.0f} Hz sustained, period jitter p99 {self.jitter_p99 * 1e3:.2f} "
                f"ms, {self.dropped} dropped, bus load {self.bus_load:.0%})")


def budget(settings: DriveSettings, bus: BusSettings, max_load: float = 0.9):
    """The bus load of the settings' cycle; raises :class:`~dynid.errors.BusBudgetError`
    when the bus cannot carry it."""
    m = settings.mapping
    cycle = Cycle(drives=len(settings.nodes), rpdo_bytes=m.rpdo_bytes, tpdo_bytes=m.tpdo_bytes)
    timing = BusTiming(bitrate=bus.bitrate, fd=bus.fd, data_bitrate=bus.data_bitrate)
    return check_budget(cycle, timing, settings.rate, max_load=max_load)


def _following_limits(settings: DriveSettings, schedule: Schedule) -> np.ndarray:
    if settings.following_error is not None:
        return np.broadcast_to(np.asarray(settings.following_error, dtype=float),
                               (schedule.targets.shape[1],)).copy()
    span = np.ptp(schedule.targets, axis=0)
    counts = np.array([200 * s.resolution for s in settings.scalings])
    return np.maximum(0.05 * span, counts)


def capture(robot, trajectory, path: str | Path, *, settings: DriveSettings | None = None,
            bus: BusSettings | None = None, periods: int | None = None,
            min_ramp: float = 1.0, max_load: float = 0.9, overwrite: bool = False,
            progress: bool = True, reset_faults: bool = False,
            drives: Drives | None = None) -> CaptureResult:
    """Run ``trajectory`` on the drives of ``robot`` and record it in ``path``.

    Parameters
    ----------
    robot
        The robot (its limits, transmission and output).
    trajectory
        A :class:`~dynid.trajectories.FourierTrajectory` of the robot, or its file.
    path
        The recording to write (CSV; see :mod:`~dynid.hardware.writer`).
    settings, bus
        Drives and bus (default: CiA 402 nodes 1…n with the robot's encoders on the virtual
        bus, channel ``dynid``).
    periods
        Periods of the trajectory to record (default: the trajectory's own).
    min_ramp
        Shortest ramp in and out, s.
    max_load
        Largest worst-case bus load accepted.
    overwrite
        Replace an existing recording.
    progress
        Show a progress bar (periods, cycle rate, dropped cycles) on standard error.
    reset_faults
        Reset drives found in FAULT when opening them.
    drives
        An opened-or-not :class:`~dynid.hardware.drive.Drives` to use instead of building
        one from ``settings`` and ``bus`` (a custom protocol).

    Example
    -------
    On the simulated robot (:class:`~dynid.hardware.virtual.VirtualRobot`)::

        with VirtualRobot(robot, rate=500):
            result = capture(robot, "excitation.json", "run.csv",
                             settings=DriveSettings.defaults(robot, rate=500))
        rec = dynid.read_csv("run.csv")
    """
    settings = settings or DriveSettings.defaults(robot)
    bus = bus or BusSettings()
    trajectory = _trajectory(trajectory, periods)
    kinds = _OUTPUTS.get(settings.mapping.output, ())
    if robot.output not in kinds:
        raise DriveConfigError(f"the drives report {settings.mapping.output} but the model of "
                               f"{robot.name!r} predicts {robot.output}; map "
                               f"{'current' if robot.output == 'current' else 'torque'} in the "
                               "transmit PDOs or describe the robot's output to match")
    load = budget(settings, bus, max_load)
    _, motion = sample_trajectory(robot, trajectory, settings.rate)
    targets = robot.transmission.actuator_state(*motion)[0]
    for j, sc in enumerate(settings.scalings):  # beyond a drive's range: refuse now
        sc.to_counts(targets[:, j], what=f"target of {robot.actuator_names[j]}")
    path = Path(path)
    if path.exists() and not overwrite:
        raise DataError(f"recording {path} exists; choose another file or overwrite it "
                        "(--overwrite)")
    drives = drives or open_drives("cia402", robot, settings, bus, reset_faults=reset_faults)
    drives.open()
    try:
        start = drives.positions()
        schedule = plan(robot, trajectory, settings.rate, start, min_ramp=min_ramp,
                        feedforward="torque_offset" in settings.mapping.receive)
        for j, sc in enumerate(settings.scalings):  # beyond a drive's range: refuse now
            sc.to_counts(schedule.targets[:, j], what=f"target of {robot.actuator_names[j]}")
    except BaseException:
        drives.close()
        raise
    writer = RecordingWriter(path, names=robot.actuator_names, output_kind=robot.output,
                             space="actuator", units=_units(robot), overwrite=overwrite,
                             extra=("cycle",), source=_source(trajectory, settings, bus),
                             resolution=[sc.resolution for sc in settings.scalings])
    run = _Run(drives, writer, schedule, _following_limits(settings, schedule), robot,
               trajectory.period, progress)
    try:
        run.go(start)
    except BaseException as exc:
        drives.quick_stop()
        writer.close()
        drives.close()
        if isinstance(exc, CaptureError):
            exc.path, exc.samples = path, writer.flushed
            if drives.stop_errors:
                exc.args = (f"{exc.args[0]}; while stopping: {'; '.join(drives.stop_errors)}",)
        elif isinstance(exc, DynidError):
            raise CaptureError(f"{exc} (the capture stopped; {writer.flushed} samples kept in "
                               f"{path})", path=path, samples=writer.flushed) from exc
        raise
    drives.disable()
    writer.close()
    drives.close()
    return CaptureResult(path, writer.samples, run.cycles, run.dropped, run.rate(),
                         run.jitter_p99(), load.load)


class _Run:
    """The cyclic loop of one capture."""

    def __init__(self, drives: Drives, writer, schedule: Schedule, limits: np.ndarray,
                 robot, period: float, progress: bool):
        self.drives, self.writer, self.schedule, self.limits = drives, writer, schedule, limits
        self.robot, self.period = robot, period
        self.progress = Progress(schedule.cycles, "capture", enabled=progress)
        self.cycles = self.dropped = 0
        self.starts: list[float] = []

    def go(self, start: np.ndarray) -> None:
        s = self.schedule
        # The drives' own window, a backstop: wide enough that the check here, with its
        # clearer message, trips first although a drive compares with the newer target.
        step = np.abs(np.diff(s.targets, axis=0)).max(axis=0, initial=0.0)
        self.drives.limit_following_error(2 * self.limits + step)
        self.drives.enable(start, None if s.feedforward is None else s.feedforward[0])
        rec = s.recorded
        previous = start
        t0 = None
        dt = 1.0 / s.rate
        begin = time.perf_counter()
        last_sync = begin
        for k in range(s.cycles):
            deadline = begin + k * dt
            pause = deadline - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            self.starts.append(time.perf_counter())
            feedback = self.drives.exchange(
                s.targets[k], None if s.feedforward is None else s.feedforward[k])
            self.cycles += 1
            if feedback is None:
                self.dropped += 1
            else:
                self._follow(previous, feedback.positions, k)
                if rec.start <= k < rec.stop:
                    t0 = feedback.time if t0 is None else t0
                    self.writer.append(feedback.time - t0, feedback.positions,
                                       feedback.output, extra=(k - rec.start,))
                    self.writer.flush()
            previous = s.targets[k]
            now = time.perf_counter()
            if now - last_sync > 1.0:
                self.writer.sync()
                last_sync = now
            if k % 25 == 0 or k == s.cycles - 1:
                self.progress.update(k + 1, self._status(k))
        self.progress.close()

    def _follow(self, target: np.ndarray, actual: np.ndarray, k: int) -> None:
        from ..errors import FollowingError

        err = np.abs(np.asarray(actual) - target)
        bad = np.flatnonzero(err > self.limits)
        if bad.size:
            j = int(bad[0])
            raise FollowingError(f"{self.robot.actuator_names[j]}: position error "
                                 f"{err[j]:.4g} exceeds its limit {self.limits[j]:.4g} at cycle "
                                 f"{k} ({k / self.schedule.rate:.3f} s); the motion was stopped")

    def _status(self, k: int) -> str:
        rec = self.schedule.recorded
        if k < rec.start:
            phase = "ramp in"
        elif k < rec.stop:
            done = (k - rec.start) / self.schedule.rate / self.period
            phase = f"period {min(int(done) + 1, 10**6)}"
        else:
            phase = "ramp out"
        return f"{phase}  {self.rate():.0f} Hz  dropped {self.dropped}"

    def rate(self) -> float:
        if len(self.starts) < 2:
            return 0.0
        return (len(self.starts) - 1) / (self.starts[-1] - self.starts[0])

    def jitter_p99(self) -> float:
        if len(self.starts) < 3:
            return 0.0
        periods = np.diff(self.starts)
        return float(np.percentile(np.abs(periods - 1.0 / self.schedule.rate), 99))


def _trajectory(trajectory, periods: int | None):
    from ..trajectories import FourierTrajectory, load_trajectory

    if isinstance(trajectory, str | Path):
        trajectory = load_trajectory(trajectory)
    if not isinstance(trajectory, FourierTrajectory):
        raise DataError(f"trajectory: expected a FourierTrajectory or its file, found "
                        f"{type(trajectory).__name__}")
    if periods is not None:
        data = trajectory.to_dict()
        data["periods"] = periods
        trajectory = FourierTrajectory.from_dict(data)
    return trajectory


def _units(robot) -> dict:
    return {"positions": list(robot.actuator_units), "output": list(robot.output_units)}


def _source(trajectory, settings: DriveSettings, bus: BusSettings) -> str:
    return (f"capture of a {trajectory.periods}-period trajectory at {settings.rate:g} Hz on "
            f"{bus.interface} {bus.channel}, nodes {list(settings.node_ids)}")
