"""CiA 402 drives through ``canopen`` on any python-can interface, in cyclic synchronous
position mode.

Opening the drives (:meth:`CiA402Drives.open`) connects the bus, asks every node for its
device type (a node that does not answer stops here, before anything moves), puts it in
pre-operational, reads its rated current or torque when the settings do not give it, selects
cyclic synchronous position mode (0x6060 = 8, confirmed by 0x6061), sets the interpolation
period (0x60C2) and the drive's following-error window (0x6065), writes the PDO mapping with
``canopen`` (:meth:`canopen.pdo.PdoMap.save`: the transmit PDOs sent on every SYNC, the receive
PDOs applied on the next SYNC), and starts the nodes (NMT operational). The 402 state machine
is walked by SDO with ``canopen``'s tables (:class:`canopen.profiles.p402.State402`), each
transition confirmed by the statusword within the SDO timeout.

Each cycle (:meth:`CiA402Drives.exchange`) sends every drive its receive PDOs, then the SYNC,
and waits for every transmit PDO of that cycle: the frames are packed and unpacked with the
mapping's own :mod:`struct` codecs, not through the object dictionary, so a cycle costs a few
tens of microseconds of Python per drive. Emergency messages, a failed send and an error in
the receiving thread are checked every cycle and raised as :class:`~dynid.errors.CaptureError`
subclasses.
"""

from __future__ import annotations

import logging
import threading
import time

import can
import canopen
import numpy as np
from canopen.profiles.p402 import State402

from ..errors import (
    BusError,
    CaptureTimeoutError,
    DriveConfigError,
    DriveFaultError,
)
from .assembler import CycleAssembler
from .dictionary import cia402_dictionary, load_dictionary
from .drive import Drives, Feedback
from .pdo import OBJECTS, PdoMapping
from .settings import BusSettings, DriveSettings

__all__ = ["CiA402Drives", "map_pdos", "state_of"]

_CSP = 8


def _fd_sizes(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Max size of PDO exceeded")


def _variable(node: canopen.RemoteNode, index: int, sub: int):
    obj = node.sdo[index]
    return obj[sub] if isinstance(obj, canopen.sdo.SdoRecord | canopen.sdo.SdoArray) else obj


def state_of(statusword: int) -> str:
    """The 402 state a statusword reports (``canopen``'s masks)."""
    for state, (mask, value) in State402.SW_MASK.items():
        if statusword & mask == value:
            return state
    return "UNKNOWN"


def map_pdos(node: canopen.RemoteNode, mapping: PdoMapping) -> None:
    """Write ``mapping`` into the node's transmit and receive PDOs by SDO (each sent on every
    SYNC; the unused ones disabled)."""
    if mapping.fd:  # canopen warns about PDOs beyond 8 bytes, which CAN FD carries
        logging.getLogger("canopen.pdo.base").addFilter(_fd_sizes)
    try:
        for maps, pdos in ((node.tpdo, mapping.tpdos), (node.rpdo, mapping.rpdos)):
            maps.read()
            for k in range(1, 5):
                m = maps[k]
                m.clear()
                m.enabled = k <= len(pdos)
                if m.enabled:
                    for name in pdos[k - 1].objects:
                        m.add_variable(*OBJECTS[name][:2])
                    m.trans_type = 1
                m.save()
    except canopen.SdoAbortedError as exc:
        raise DriveConfigError(f"node {node.id}: the drive refused the PDO mapping "
                               f"{mapping.to_dict()} ({exc})") from None
    except canopen.SdoCommunicationError as exc:
        raise CaptureTimeoutError(f"node {node.id} did not answer while its PDOs were "
                                  f"mapped ({exc})") from None


class CiA402Drives(Drives):
    """The drives of ``robot``: one CiA 402 node per actuator (see the module docstring).

    Parameters
    ----------
    robot
        The robot whose actuators the drives move, in its order.
    settings
        Node IDs, dictionaries, scalings, mapping, rate (:class:`DriveSettings`).
    bus
        The python-can bus (:class:`BusSettings`).
    reset_faults
        Reset a drive found in FAULT when opening; otherwise opening refuses.
    """

    def __init__(self, robot, settings: DriveSettings, bus: BusSettings, *,
                 reset_faults: bool = False):
        if len(settings.nodes) != robot.n:
            raise DriveConfigError(f"drives: {len(settings.nodes)} nodes for the {robot.n} "
                                   f"actuators of {robot.name!r}")
        if bus.fd != settings.mapping.fd:
            kind = "CAN FD" if settings.mapping.fd else "classic CAN"
            raise DriveConfigError(f"the PDO mapping is for {kind} frames but the bus "
                                   f"{'is' if bus.fd else 'is not'} CAN FD; set both alike")
        self.robot, self.settings, self.bus = robot, settings, bus
        self.n, self.rate = robot.n, settings.rate
        self.output = settings.mapping.output
        self.reset_faults = reset_faults
        self.stop_errors: list[str] = []
        self.network: canopen.Network | None = None
        self.nodes: list[canopen.RemoteNode] = []
        self._faults: list[str] = []
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._sample = None
        self._assembler: CycleAssembler | None = None
        self._cycle = -1
        self._t0: float | None = None
        self._stamp: int | None = None
        self._stamp_cycle = -1
        self._time = self._good = 0.0

    # Opening ------------------------------------------------------------------------------
    def open(self) -> None:
        network = canopen.Network()
        try:
            network.connect(**self.bus.kwargs())
        except (can.CanError, OSError, ValueError, ImportError, TypeError) as exc:
            raise DriveConfigError(f"CAN interface {self.bus.interface!r} channel "
                                   f"{self.bus.channel!r}: cannot be opened ({exc}); check "
                                   "--interface, --channel and that the adapter is "
                                   "connected") from None
        self.network = network
        try:
            self._configure()
        except BaseException:
            self.close()
            raise

    def _configure(self) -> None:
        s, mapping = self.settings, self.settings.mapping
        for ns in s.nodes:
            od = (load_dictionary(ns.dictionary, int(ns.node), mapping) if ns.dictionary
                  else cia402_dictionary(int(ns.node)))
            node = canopen.RemoteNode(int(ns.node), od)
            node.sdo.RESPONSE_TIMEOUT = s.sdo_timeout
            node.sdo.MAX_RETRIES = 1
            self.network.add_node(node)
            self.nodes.append(node)
        for node in self.nodes:
            device = self._read(node, 0x1000)
            if device & 0xFFFF != 0x0192:
                raise DriveConfigError(f"node {node.id}: device type 0x{device:08X} is not a "
                                       "CiA 402 drive (profile 402 expected)")
            node.nmt.state = "PRE-OPERATIONAL"
        rated = []
        for ns, node in zip(s.nodes, self.nodes, strict=True):
            state = state_of(self._read(node, 0x6041))
            if state in ("FAULT", "FAULT REACTION ACTIVE"):
                code = self._read(node, 0x603F)
                if not self.reset_faults:
                    raise DriveFaultError(f"node {node.id} is in FAULT (error code "
                                          f"0x{code:04X}); clear its cause and reset it "
                                          "(--reset-faults)")
                self._write(node, 0x6040, State402.CW_SWITCH_ON_DISABLED)
            if ns.rated_from_drive:
                index = 0x6075 if self.output == "current" else 0x6076
                value = self._read(node, index) / 1000.0  # mA → A, mN·m → N·m
                if not value > 0:
                    raise DriveConfigError(f"node {node.id}: rated {self.output} "
                                           f"(0x{index:04X}) is {value}; give 'rated' in "
                                           "the drives file")
                rated.append(value)
            else:
                rated.append(ns.scaling.rated)
        self.settings = s = s.with_rated(rated)
        for node in self.nodes:
            self._write(node, 0x6060, _CSP)
            self._wait(node, lambda n: self._read(n, 0x6061) == _CSP,
                       "cyclic synchronous position mode (0x6061 = 8)")
            if 0x60C2 in node.object_dictionary:
                ms, index = self._period()
                self._write(node, 0x60C2, ms, sub=1)
                self._write(node, 0x60C2, index, sub=2)
            self._map(node, mapping)
        self._assembler = CycleAssembler(mapping, s.node_ids, s.scalings)
        for node in self.nodes:
            for k in range(len(mapping.tpdos)):
                self.network.subscribe(PdoMapping.tpdo_id(node.id, k), self._on_frame)
            node.emcy.add_callback(lambda e, node=node.id: self._on_emcy(node, e))
        for node in self.nodes:
            node.nmt.state = "OPERATIONAL"

    def _period(self) -> tuple[int, int]:
        """The cycle as 0x60C2's value and power of ten."""
        period = 1.0 / self.rate
        for index in (-3, -4, -5):
            value = round(period / 10.0 ** index)
            if value <= 255 and abs(value * 10.0 ** index - period) < 1e-9 + 1e-6 * period:
                return value, index
        return min(255, round(period / 1e-3)), -3

    def _map(self, node: canopen.RemoteNode, mapping: PdoMapping) -> None:
        map_pdos(node, mapping)


    def _read(self, node: canopen.RemoteNode, index: int, sub: int = 0) -> int:
        try:
            return _variable(node, index, sub).raw
        except canopen.SdoAbortedError as exc:
            raise DriveConfigError(f"node {node.id}: reading 0x{index:04X}:{sub} was refused "
                                   f"({exc})") from None
        except (canopen.SdoCommunicationError, KeyError) as exc:
            raise CaptureTimeoutError(f"node {node.id} does not answer (reading 0x{index:04X}:"
                                      f"{sub}: {exc}); check that it is powered, its node ID "
                                      "and the bitrate") from None

    def _write(self, node: canopen.RemoteNode, index: int, value: int, sub: int = 0) -> None:
        try:
            _variable(node, index, sub).raw = value
        except canopen.SdoAbortedError as exc:
            raise DriveConfigError(f"node {node.id}: writing {value} to 0x{index:04X}:{sub} "
                                   f"was refused ({exc})") from None
        except (canopen.SdoCommunicationError, KeyError) as exc:
            raise CaptureTimeoutError(f"node {node.id} does not answer (writing "
                                      f"0x{index:04X}:{sub}: {exc})") from None

    def _wait(self, node, done, what: str) -> None:
        deadline = time.monotonic() + max(self.settings.sdo_timeout, 0.05) * 4
        while not done(node):
            if time.monotonic() > deadline:
                raise CaptureTimeoutError(f"node {node.id} did not confirm {what}")
            time.sleep(0.001)

    def _go(self, node, target: str) -> None:
        """Walk the 402 state machine of ``node`` to ``target`` by SDO."""
        for _ in range(8):
            state = state_of(self._read(node, 0x6041))
            if state == target:
                return
            if state in ("FAULT", "FAULT REACTION ACTIVE"):
                raise DriveFaultError(f"node {node.id} is in FAULT (error code "
                                      f"0x{self._read(node, 0x603F):04X})")
            step = target if (state, target) in State402.TRANSITIONTABLE else \
                State402.next_state_indirect(state)
            if (state, step) not in State402.TRANSITIONTABLE:
                raise DriveConfigError(f"node {node.id}: no transition from {state} to {step}")
            self._write(node, 0x6040, State402.TRANSITIONTABLE[(state, step)])
            self._wait(node, lambda n, step=step: state_of(self._read(n, 0x6041)) == step,
                       f"the state {step} (from {state})")
        raise CaptureTimeoutError(f"node {node.id} did not reach {target}")

    # Cyclic exchange ----------------------------------------------------------------------
    def positions(self) -> np.ndarray:
        return np.array([sc.position(self._read(node, 0x6064)) for node, sc in
                         zip(self.nodes, self.settings.scalings, strict=True)])

    def limit_following_error(self, limits: np.ndarray) -> None:
        """The following-error window 0x6065 of each drive, in increments."""
        for node, sc, limit in zip(self.nodes, self.settings.scalings, limits, strict=True):
            if 0x6065 in node.object_dictionary:
                window = min(int(np.ceil(limit / sc.resolution)), 2**32 - 2)
                self._write(node, 0x6065, window)

    def enable(self, hold: np.ndarray, feedforward: np.ndarray | None = None) -> None:
        self._send_targets(hold, feedforward)
        self._send_sync()
        for node in self.nodes:
            self._go(node, "OPERATION ENABLED")
        self._cycle, self._t0, self._stamp, self._time = -1, None, None, 0.0
        self._stamp_cycle = -1

    def _send_targets(self, targets: np.ndarray, feedforward: np.ndarray | None) -> None:
        mapping = self.settings.mapping
        for j, (node, sc) in enumerate(zip(self.nodes, self.settings.scalings, strict=True)):
            values = {"target_position": sc.to_counts(targets[j], what=f"target of node "
                                                      f"{node.id}"),
                      "controlword": State402.CW_OPERATION_ENABLED, "velocity_offset": 0,
                      "torque_offset": 0 if feedforward is None else
                      sc.to_output(feedforward[j])}
            for k, data in enumerate(mapping.encode(values)):
                self._send(PdoMapping.rpdo_id(node.id, k), data)

    def _send(self, cob_id: int, data: bytes) -> None:
        try:
            self.network.bus.send(can.Message(arbitration_id=cob_id, data=data,
                                              is_extended_id=False, is_fd=self.bus.fd,
                                              bitrate_switch=self.bus.fd))
        except can.CanError as exc:
            raise BusError(f"sending frame 0x{cob_id:03X} failed: {exc}") from None

    def _send_sync(self) -> float:
        now = time.perf_counter()
        with self._lock:
            self._ready.clear()
            self._sample = None
            self._assembler.feed(0x80, b"", now)
        self._send(0x80, b"")
        return now

    def _on_frame(self, cob_id: int, data: bytes, timestamp: float) -> None:
        with self._lock:
            sample = self._assembler.feed(cob_id, data, timestamp)
            if sample is not None:
                self._sample = sample
                self._ready.set()

    def _on_emcy(self, node: int, error) -> None:
        if error.code & 0xFF00:
            self._faults.append(f"node {node}: emergency 0x{error.code:04X} "
                                f"({error.get_desc() or 'no description'}), error register "
                                f"0x{error.register:02X}")

    def exchange(self, targets: np.ndarray, feedforward: np.ndarray | None = None
                 ) -> Feedback | None:
        self._check()
        self._send_targets(targets, feedforward)
        host = self._send_sync()
        self._cycle += 1
        if self._t0 is None:
            self._t0 = self._good = host
        # A cycle waits for its feedback the settings' wait; the watchdog stops the capture
        # when no complete feedback came for the settings' timeout.
        if not self._ready.wait(self.settings.wait):
            self._check()
            if time.perf_counter() - self._good > self.settings.timeout:
                raise CaptureTimeoutError(
                    f"no complete feedback from the drives for "
                    f"{self.settings.timeout * 1e3:.0f} ms (cycle {self._cycle}; "
                    f"{self._assembler.stats}); check the cabling, the node IDs and the bus "
                    "load")
            return None
        with self._lock:
            sample = self._sample
        self._check()
        if sample.stamps is not None:  # the first drive's clock, unwrapped
            stamp = int(sample.stamps[0])
            if self._stamp is not None:
                elapsed = ((stamp - self._stamp) % 2**32) * 1e-6
                expected = (self._cycle - self._stamp_cycle) / self.rate
                if abs(elapsed - expected) > 0.5 / self.rate:
                    return None  # a late answer to an earlier cycle: not this one's
                t = self._time + elapsed
            else:
                t = 0.0
            self._stamp, self._stamp_cycle = stamp, self._cycle
        else:
            t = host - self._t0
        self._time, self._good = t, time.perf_counter()
        return Feedback(self._cycle, t, sample.positions, sample.output, host)

    def _check(self) -> None:
        if self._faults:
            raise DriveFaultError("; ".join(self._faults))
        try:
            self.network.check()
        except Exception as exc:  # whatever stopped python-can's receiving thread
            raise BusError(f"the CAN interface stopped receiving: {type(exc).__name__}: "
                           f"{exc}") from None

    # Stopping -----------------------------------------------------------------------------
    def quick_stop(self) -> None:
        self._command_all(State402.CW_QUICK_STOP, "quick stop")

    def disable(self) -> None:
        self._command_all(State402.CW_DISABLE_VOLTAGE, "disable")

    def _command_all(self, word: int, what: str) -> None:
        """The controlword ``word`` to every drive; each is tried and the failures kept in
        :attr:`stop_errors` (stopping never raises)."""
        for node in self.nodes:
            try:
                self._write(node, 0x6040, word)
            except Exception as exc:
                self.stop_errors.append(f"node {node.id}: {what} not confirmed: {exc}")

    def close(self) -> None:
        if self.network is not None:
            try:
                for node in self.nodes:
                    try:
                        node.nmt.state = "PRE-OPERATIONAL"
                    except Exception as exc:  # the bus may be gone; report, go on
                        self.stop_errors.append(f"node {node.id}: NMT: {exc}")
                self.network.disconnect()
            finally:
                self.network = None
