"""A simulated robot whose drives answer as CiA 402 nodes on python-can's virtual bus.

:class:`VirtualRobot` puts one :class:`~dynid.hardware.virtual_drive.VirtualDrive` per
actuator on a ``canopen`` network connected to ``interface="virtual"``, and moves a
:class:`~dynid.hardware.plant.Plant` of the robot with its true parameters one control period
per SYNC (COB-ID 0x80). A master on the same channel cannot tell it from real drives: it reads
and writes the dictionaries by SDO, maps the PDOs, walks the 402 state machine and exchanges
receive PDOs, SYNC and transmit PDOs.

On each SYNC, while at least one drive is NMT OPERATIONAL:

1. every drive applies the receive PDOs that came since the last SYNC (controlword, target
   position, velocity and torque offsets);
2. the drives sample what they measure: the plant's encoder positions in increments and its
   measured output in thousandths of the rated value (:class:`~dynid.hardware.pdo.Scaling`),
   the velocity actual value (the encoder difference over the period, increments/s) and
   their time stamp 0x1013 (µs: the SYNC count over the rate, plus a random offset per
   drive, modulo 2³²); a drive in OPERATION ENABLED whose position is farther from its last
   target than its following-error window (0x6065, increments; 0xFFFFFFFF disables it)
   faults with emergency code 0x8611; each OPERATIONAL drive sends its transmit PDOs;
3. if every drive is OPERATIONAL and controls its axis (OPERATION ENABLED or QUICK STOP
   ACTIVE), the plant moves one period towards the targets (increments → SI actuator
   coordinates), with the velocity offset as the velocity feed-forward where it is mapped
   (else the targets' difference over the period) and the torque offset as the output
   feed-forward. Otherwise the arm is held, as by its brakes: one mechanism cannot move
   with an axis that is not controlled. A held arm does not move, every drive reports zero
   output, and when the drives release it again the plant restarts at rest where it was.

A quick stop makes the drive hold the position it has (velocity feed-forward 0) until its
axis stands still (its true speed below one increment per period for 20 ms, as a
drive's velocity threshold and threshold time detect it; or after 2 s), and then go to
SWITCH ON DISABLED (quick stop option code 2). Its axis then stays where it
stopped, as on its brake, while other drives finish their quick stop; the arm is held once
no drive is quick stopping. A quick stop while the arm is held ends at the next SYNC.

The physics depends on the SYNC count only, never on wall-clock time: a capture is the same,
frame for frame, for the same seed whatever the machine's load. :attr:`VirtualRobot.truth`
holds what the robot did at every SYNC answered. :class:`Faults` injects lost and late
transmit PDOs, a drive fault and a cut cable. The SYNC cycle is
:class:`~dynid.hardware.virtual_sync.SyncCycle`; this module holds the robot's life cycle on
the bus.

Examples
--------
>>> settings, bus = DriveSettings.defaults(robot, rate=500), BusSettings(channel="sim")
>>> with VirtualRobot.for_capture(robot, settings, bus, noise=0.01) as sim:
...     capture(robot, "excitation.json", "run.csv", settings=settings, bus=bus)
>>> sim.truth.q                               # true joint positions at every SYNC
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, replace

import can
import canopen
import numpy as np

from .. import _validate
from ..errors import DriveConfigError, HardwareError
from ..models import Robot
from .plant import Plant
from .virtual_drive import VirtualDrive
from .virtual_setup import (
    Faults,
    as_robot,
    capture_setup,
    check_faults,
    check_node_ids,
    check_scalings,
    default_scalings,
)
from .virtual_sync import SyncCycle

__all__ = ["Faults", "VirtualRobot", "VirtualTruth"]


@dataclass(frozen=True)
class VirtualTruth:
    """What the simulated robot did at every SYNC answered.

    Attributes
    ----------
    time
        Drive time of each SYNC (N,), s: its count over the rate.
    q, v, a
        True basis positions, velocities and accelerations (N, n) when the drives sampled.
    actuator
        True actuator positions (N, n), rad or m.
    output
        Output the drives applied (N, n): current (A) or torque (N·m, N); zero while held.
    moving
        (N,) whether the arm moved in the period that followed (False: held).
    """

    time: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    actuator: np.ndarray
    output: np.ndarray
    moving: np.ndarray


class VirtualRobot(SyncCycle):
    """``robot``'s drives as CiA 402 nodes on python-can's virtual bus (see the module
    docstring).

    Parameters
    ----------
    robot
        A :class:`~dynid.models.Robot` or the name of an embedded robot.
    theta
        Its true standard parameters (default: ``robot.prior``).
    channel
        Virtual bus channel the master connects to.
    node_ids
        Node ID of each actuator's drive, 1 to 127 (default: 1 to n).
    rate
        SYNC rate the drives expect, Hz: one control period of the plant per SYNC.
    loops, noise, q0, speed
        The drives' loops and sensors, the start configuration and the peak speeds they are
        tuned for (:meth:`Plant.commissioned`).
    scalings
        One :class:`~dynid.hardware.pdo.Scaling` per drive. Default: the plant's encoders,
        and rated values half the largest output the robot's model needs within its limits
        (the rule of :mod:`~dynid.hardware.virtual_setup`).
    seed
        Seed of the plant's noise, the drives' clock offsets and the lost frames.
    faults
        Faults to inject (:class:`Faults`).
    fd
        CAN FD: transmit PDOs up to 64 bytes, sent as CAN FD frames.

    Attributes
    ----------
    plant
        The simulated robot (:class:`~dynid.hardware.plant.Plant`).
    drives
        The :class:`~dynid.hardware.virtual_drive.VirtualDrive` of each actuator.
    truth
        :class:`VirtualTruth` of every SYNC answered so far.
    errors
        Exceptions raised while answering a SYNC (:meth:`check` raises the first).
    handled, handling_time
        SYNCs answered so far, and the seconds spent answering them (every SYNC received).

    Examples
    --------
    >>> sim = VirtualRobot(load_robot("panda"), channel="test", rate=500.0, seed=1)
    >>> sim.start()
    >>> network = canopen.Network().connect(interface="virtual", channel="test")
    >>> drive = network.add_node(1, cia402_dictionary(1))
    >>> drive.sdo[0x6041].raw                     # SWITCH ON DISABLED, remote
    576
    >>> sim.stop()
    """

    def __init__(self, robot: Robot | str, theta: np.ndarray | None = None, *,
                 channel: str = "dynid", node_ids=None, rate: float = 500.0, loops=None,
                 noise=None, scalings=None, q0=None, speed=None, seed: int = 0,
                 faults: Faults | None = None, fd: bool = False):
        robot = as_robot(robot)
        n = robot.n
        if not (_validate.is_number(rate) and rate > 0):
            raise DriveConfigError(f"rate: expected the SYNC rate in Hz > 0, found {rate!r}; "
                                   "e.g. VirtualRobot(robot, rate=500.0)")
        self.node_ids = check_node_ids(node_ids, n)
        faults = check_faults(faults, n)
        theta = robot.prior if theta is None else theta
        self.robot, self.theta, self.rate, self.channel = robot, theta, float(rate), channel
        self.faults, self.fd, self.seed, self.noise = faults, bool(fd), seed, noise
        self.plant = Plant.commissioned(robot, theta, control_rate=self.rate, loops=loops,
                                        noise=noise, q0=q0, speed=speed, seed=seed)
        self.scalings = (default_scalings(robot, theta, noise, seed) if scalings is None
                         else check_scalings(scalings, n))
        output = "current" if robot.output == "current" else "torque"
        self.drives = [VirtualDrive(node, output=output, rated=sc.rated, fd=self.fd)
                       for node, sc in zip(self.node_ids, self.scalings, strict=True)]
        rng = np.random.default_rng([seed, 1])
        self._offsets = rng.integers(0, 2**32, n)
        self._drops = np.random.default_rng([seed, 2])
        self._res = np.array([sc.resolution for sc in self.scalings])
        self._zero = np.array([sc.zero for sc in self.scalings])
        self._unit = np.array([sc.rated * sc.gear / 1000.0 for sc in self.scalings])
        self.errors: list[BaseException] = []
        self.network: canopen.Network | None = None
        self._sender: _DelayedSender | None = None
        self._lock = threading.Lock()
        self._rows: list[tuple] = []
        self._count = 0
        self.handling_time = 0.0
        self._held = True
        self._releases = 0
        self._demand = [None] * n          # the target each drive tracked the last period
        self._stopping = np.zeros(n)       # seconds each drive has been quick stopping
        self._braking = np.zeros(n, bool)  # quick stopped, its brake holding while others stop
        self._brake = np.zeros(n)          # where (increments)
        self._still = np.zeros(n)          # seconds each axis has stood still in a quick stop
        positions, _ = self.plant.sense("actuator")
        counts = self._counts(positions[0])
        for j, drive in enumerate(self.drives):
            drive.position, drive.stamp = int(counts[j]), int(self._offsets[j])

    @classmethod
    def for_capture(cls, robot: Robot | str, settings, bus, *, noise: float = 0.0,
                    seed: int = 0, **kwargs) -> VirtualRobot:
        """The simulated robot a capture with ``settings`` and ``bus`` expects.

        The node IDs, rate, scalings and CAN FD come from the
        :class:`~dynid.hardware.settings.DriveSettings` and the
        :class:`~dynid.hardware.settings.BusSettings`; a drive whose rated value is to be read
        from it gets the default rule's. ``noise`` is the standard deviation of the measured
        output, as a fraction of each drive's rated value.

        Examples
        --------
        >>> settings, bus = DriveSettings.defaults(robot, rate=500), BusSettings()
        >>> with VirtualRobot.for_capture(robot, settings, bus, noise=0.01, seed=1):
        ...     capture(robot, "excitation.json", "run.csv", settings=settings, bus=bus)
        """
        robot = as_robot(robot)
        theta = kwargs.pop("theta", None)
        theta = robot.prior if theta is None else theta
        return cls(robot, theta, **capture_setup(robot, theta, settings, bus, noise, seed),
                   **kwargs)

    @staticmethod
    def lockstep(settings, timeout: float = 2.0):
        """``settings`` under which a capture waits for every answer of the simulated robot
        (up to ``timeout`` seconds, SDO answers too) instead of dropping the late ones: the
        simulated robot shares the process with the capture and is not real time, so on a
        busy machine its answers come late although its motion is the same."""
        timeout = max(timeout, settings.timeout)
        return replace(settings, feedback_timeout=timeout, feedback_wait=timeout,
                       sdo_timeout=max(settings.sdo_timeout, timeout))

    # Life cycle ----------------------------------------------------------------------------
    def start(self) -> VirtualRobot:
        """Connect the drives to the virtual channel and boot them (NMT boot-up, then
        PRE-OPERATIONAL and SWITCH ON DISABLED)."""
        if self.network is not None:
            return self
        network = canopen.Network()
        network.NOTIFIER_CYCLE = 0.05      # the receiving thread stops within 50 ms
        network.connect(interface="virtual", channel=self.channel)
        self.network = network
        for drive in self.drives:
            network.add_node(drive.node)
        network.subscribe(0, self._on_nmt)
        network.subscribe(0x80, self._on_sync)
        if self.faults.delay > 0:
            self._sender = _DelayedSender(network.bus)
            self._sender.start()
        for drive in self.drives:
            drive.boot()
        return self

    def stop(self) -> None:
        """Disconnect from the channel (the drives fall silent; :meth:`start` boots them
        again)."""
        if self._sender is not None:
            self._sender.close()
            self._sender = None
        if self.network is not None:
            try:
                self.network.disconnect()
            finally:
                self.network = None
                for drive in self.drives:
                    drive.detach()

    def __enter__(self) -> VirtualRobot:
        return self.start()

    def __exit__(self, kind, value, traceback) -> None:
        self.stop()
        if kind is None:
            self.check()

    def check(self) -> None:
        """Raise the first error met while answering a SYNC, if any."""
        if self.errors:
            exc = self.errors[0]
            raise HardwareError(f"the virtual drives failed at a SYNC: "
                                f"{type(exc).__name__}: {exc}") from exc

    @property
    def handled(self) -> int:
        return self._count

    @property
    def truth(self) -> VirtualTruth:
        with self._lock:
            rows = list(self._rows)
        n = self.robot.n
        if not rows:
            empty = np.zeros((0, n))
            return VirtualTruth(np.zeros(0), empty, empty, empty, empty, empty,
                                np.zeros(0, bool))
        columns = list(zip(*rows, strict=True))
        return VirtualTruth(np.array(columns[0]), *(np.array(c) for c in columns[1:6]),
                            np.array(columns[6], dtype=bool))

    # The bus -------------------------------------------------------------------------------
    def _on_nmt(self, cob_id: int, data: bytearray, timestamp: float) -> None:
        try:
            for drive in self.drives:
                drive.on_nmt()
        except Exception as exc:  # the notifier thread would only log it
            self.errors.append(exc)


class _DelayedSender(threading.Thread):
    """Sends frames at their due time, so that late answers do not hold up the SYNCs."""

    def __init__(self, bus: can.BusABC):
        super().__init__(daemon=True, name="virtual-drives-delay")
        self.bus = bus
        self.queue: queue.Queue = queue.Queue()

    def put(self, due: float, messages: list[can.Message]) -> None:
        self.queue.put((due, messages))

    def run(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            due, messages = item
            time.sleep(max(0.0, due - time.monotonic()))
            for message in messages:
                self.bus.send(message)

    def close(self) -> None:
        self.queue.put(None)
        self.join(timeout=5.0)
