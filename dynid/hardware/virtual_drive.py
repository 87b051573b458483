"""One simulated CiA 402 drive: a ``canopen`` local node with the 402 state machine and the
PDOs a master mapped.

A :class:`VirtualDrive` is a :class:`canopen.LocalNode` with the dictionary of
:func:`~dynid.hardware.dictionary.cia402_dictionary`; the local node answers SDO and NMT on
its own, and the drive adds what a servo drive does:

* *State machine.* The controlword (0x6040, by SDO or in a receive PDO) is decoded into the
  device control commands of CiA 402 (disable voltage, quick stop, shutdown, switch on,
  enable operation), and the drive takes the transition of
  :data:`canopen.profiles.p402.State402.TRANSITIONTABLE` from its state that this command
  names. Transitions 7 and 10 are also taken on a quick stop, as CiA 402 states; transition
  16 (quick stop active → operation enabled) is not, since the drive's quick stop option
  code is 2 (stop, then switch on disabled). A rising edge of bit 7 resets a fault
  (transition 15). The statusword (0x6041) is the pattern of
  :data:`~canopen.profiles.p402.State402.SW_MASK` for the state, with bit 9 (remote) set.
* *Mode.* Only cyclic synchronous position (0x6060 = 8) is simulated: writing another mode
  is aborted with SDO abort code 0x06090030 (value range exceeded), and the drive stays
  SWITCHED ON when asked to enable operation before the mode is set (it boots in mode 0).
* *PDOs.* When the node enters NMT OPERATIONAL it reads its own PDO configuration
  (:meth:`canopen.pdo.PdoBase.read`) and packs and unpacks the mapped objects of
  :data:`~dynid.hardware.pdo.OBJECTS` with :mod:`struct`. A mapped object the simulation
  does not produce or consume, a mapping whose length does not match the object, a transmit
  PDO that is not synchronous (transmission types 1–240) or one too long for the frame
  makes the drive send an emergency message (0x8200, protocol error; the object's index and
  subindex in its data) and return to PRE-OPERATIONAL.
* *Faults.* :meth:`VirtualDrive.fault` sets the error code (0x603F) and error register
  (0x1001), sends the emergency message and enters FAULT; a fault reset clears them and
  sends the emergency reset (code 0).

The drive holds no physics: :class:`~dynid.hardware.virtual.VirtualRobot` feeds it the
positions and outputs of the simulated robot on each SYNC and reads its latched targets.
"""

from __future__ import annotations

import struct

import canopen
from canopen.profiles.p402 import State402
from canopen.sdo import SdoAbortedError

from .dictionary import cia402_dictionary
from .pdo import OBJECTS

__all__ = ["VirtualDrive", "decode_command"]

CSP = 8
#: CiA 402 device control commands: (name, mask, value) of the controlword.
_COMMANDS = (("disable voltage", 0x82, 0x00), ("quick stop", 0x86, 0x02),
             ("shutdown", 0x87, 0x06), ("switch on", 0x8F, 0x07),
             ("enable operation", 0x8F, 0x0F))
_AUTOMATIC = ("START", "NOT READY TO SWITCH ON", "FAULT REACTION ACTIVE")
_PRODUCED = ("statusword", "position", "velocity", "torque", "current", "timestamp")
_CONSUMED = ("controlword", "target_position", "velocity_offset", "torque_offset")
_NAMES = {(index, sub): name for name, (index, sub, _) in OBJECTS.items()}
_REMOTE = 0x0200


def decode_command(controlword: int) -> str | None:
    """The CiA 402 device control command a controlword gives (``None``: none, e.g. a fault
    reset bit)."""
    for name, mask, value in _COMMANDS:
        if controlword & mask == value:
            return name
    return None


def _transitions() -> dict[tuple[str, str], str]:
    """(state, command) → next state, from ``canopen``'s table of the 402 state machine."""
    table = {(frm, decode_command(word)): to
             for (frm, to), word in State402.TRANSITIONTABLE.items()
             if frm not in _AUTOMATIC and frm != "FAULT"}
    del table[("QUICK STOP ACTIVE", "enable operation")]   # option codes 5–8 only
    for state in ("READY TO SWITCH ON", "SWITCHED ON"):     # transitions 7 and 10
        table[(state, "quick stop")] = "SWITCH ON DISABLED"
    return table


TRANSITIONS = _transitions()


class _Refused(Exception):
    """A PDO configuration the drive cannot run, with the object it names."""

    def __init__(self, message: str, index: int, subindex: int):
        super().__init__(message)
        self.index, self.subindex = index, subindex


def _register(code: int) -> int:
    """CiA 301 error register (0x1001) for an emergency error code: generic, plus current,
    voltage, temperature, communication or device-profile bits."""
    bits = {0x2: 0x02, 0x3: 0x04, 0x4: 0x08}.get(code >> 12, 0)
    if code >> 8 == 0x81 or code >> 8 == 0x82:
        bits |= 0x10
    elif code >> 8 == 0x86:
        bits |= 0x20
    return 0x01 | bits


class VirtualDrive:
    """A simulated CiA 402 drive at ``node_id`` (see the module docstring).

    Parameters
    ----------
    node_id
        CANopen node ID, 1 to 127.
    output
        ``"current"`` or ``"torque"``: which actual value (0x6078 or 0x6077) the drive
        measures; the other cannot be mapped.
    rated
        Rated value of that output in thousandths of which it reports (A, N·m or N); 0x6075
        or 0x6076 holds it in mA or mN·m.
    fd
        The bus is CAN FD: transmit PDOs up to 64 bytes, sent as CAN FD frames.

    Attributes
    ----------
    state
        The 402 state, as :class:`~canopen.profiles.p402.State402` names it.
    target, velocity_offset, torque_offset
        Latched set points in drive units (increments, increments/s, thousandths of rated).
    position, velocity, output, stamp
        The last values sampled (increments, increments/s, thousandths of rated, µs).
    """

    def __init__(self, node_id: int, *, output: str = "current", rated: float = 1.0,
                 fd: bool = False):
        self.node = canopen.LocalNode(node_id, cia402_dictionary(node_id))
        self.id, self.output_name, self.fd = node_id, output, fd
        self.state = "NOT READY TO SWITCH ON"
        self.mode = 0
        self.error_code = self.error_register = 0
        self.window = 0xFFFFFFFF
        self.controlword = 0
        self.target: int | None = None
        self.velocity_offset = self.torque_offset = 0
        self.position = self.velocity = self.output = self.stamp = 0
        self.refused: str | None = None
        self.tpdos: list[tuple[int, struct.Struct, tuple[str, ...], int]] = []
        self.rpdos: dict[int, tuple[struct.Struct, tuple[str, ...]]] = {}
        self.received: dict[int, bytes] = {}
        self.configured = self.cut = False
        self.receives: frozenset[str] = frozenset()
        self._subscribed: list[int] = []
        milli = max(round(rated * 1000.0), 1)
        self.node.sdo[0x6075 if output == "current" else 0x6076].raw = milli
        self.node.sdo[0x6076 if output == "current" else 0x6075].raw = 0
        self.node.sdo[0x6502].raw = 1 << (CSP - 1)     # supported modes: CSP only
        self.node.add_read_callback(self._on_read)
        self.node.add_write_callback(self._on_write)

    # The state machine ---------------------------------------------------------------------
    @property
    def statusword(self) -> int:
        return State402.SW_MASK[self.state][1] | _REMOTE

    def boot(self) -> None:
        """Power on: NMT boot-up, then PRE-OPERATIONAL; the 402 state machine goes on to
        SWITCH ON DISABLED by itself (transition 1)."""
        self.node.nmt.state = "INITIALISING"
        self.node.nmt.state = "PRE-OPERATIONAL"
        self.state = "SWITCH ON DISABLED"

    def command(self, controlword: int) -> None:
        """Apply a controlword written by SDO or received in a PDO."""
        rising = controlword & 0x80 and not self.controlword & 0x80
        self.controlword = controlword
        if self.state == "FAULT":
            if rising:
                self.state = "SWITCH ON DISABLED"
                self.error_code = self.error_register = 0
                self.node.emcy.reset()
            return
        next_state = TRANSITIONS.get((self.state, decode_command(controlword)))
        if next_state is None or (next_state == "OPERATION ENABLED" and self.mode != CSP):
            return
        if next_state in ("OPERATION ENABLED", "QUICK STOP ACTIVE"):
            # The position demand starts where the axis is; a quick stop holds it there.
            self.target, self.velocity_offset, self.torque_offset = self.position, 0, 0
        self.state = next_state

    def fault(self, code: int, data: bytes = b"") -> None:
        """Enter FAULT with emergency error ``code`` and send its emergency message."""
        self.error_code, self.error_register = code, _register(code)
        self.state = "FAULT"
        self.node.emcy.send(code, self.error_register, data)

    @property
    def operational(self) -> bool:
        return self.node.nmt.state == "OPERATIONAL" and self.configured

    # SDO -----------------------------------------------------------------------------------
    def _on_read(self, index: int, subindex: int, od) -> int | None:
        values = {0x6041: self.statusword, 0x6061: self.mode, 0x6064: self.position,
                  0x606C: self.velocity, 0x1013: self.stamp, 0x603F: self.error_code,
                  0x1001: self.error_register, 0x6040: self.controlword,
                  0x6060: self.mode, 0x6065: self.window,
                  0x607A: self.target or 0, 0x60B1: self.velocity_offset,
                  0x60B2: self.torque_offset}
        if index in (0x6077, 0x6078):
            return self.output if index == OBJECTS[self.output_name][0] else 0
        return values.get(index)

    def _on_write(self, index: int, subindex: int, od, data: bytes) -> None:
        value = od.decode_raw(data)
        if index == 0x6040:
            self.command(value)
        elif index == 0x6060:
            if value != CSP:
                raise SdoAbortedError(0x06090030)
            self.mode = value
        elif index == 0x6065:
            self.window = value
        elif index == 0x607A:
            self.target = value
        elif index == 0x60B1:
            self.velocity_offset = value
        elif index == 0x60B2:
            self.torque_offset = value

    # PDOs ----------------------------------------------------------------------------------
    def on_nmt(self) -> None:
        """Called after every NMT command: configure the PDOs on entering OPERATIONAL, drop
        them on leaving it."""
        if self.cut:
            return
        if self.node.nmt.state == "OPERATIONAL" and not self.configured:
            try:
                self._configure()
            except _Refused as exc:
                self.refused = str(exc)
                self.node.emcy.send(0x8200, _register(0x8200),
                                    struct.pack("<HB", exc.index, exc.subindex))
                self.node.nmt.state = "PRE-OPERATIONAL"
        elif self.node.nmt.state != "OPERATIONAL" and self.configured:
            self._unsubscribe()
            self.configured = False

    def _configure(self) -> None:
        node = self.node
        node.tpdo.read()
        node.rpdo.read()
        tpdos, rpdos = [], {}
        for maps, base, allowed in ((node.tpdo, 0x1A00, _PRODUCED),
                                    (node.rpdo, 0x1600, _CONSUMED)):
            for k, pdo in maps.map.items():
                if pdo.enabled:
                    node.network.unsubscribe(pdo.cob_id, pdo.on_message)
                else:
                    continue
                mapping = node.sdo[base + k - 1]
                names = []
                for s in range(1, mapping[0].raw + 1):
                    entry = mapping[s].raw
                    key, bits = (entry >> 16, (entry >> 8) & 0xFF), entry & 0xFF
                    name = _NAMES.get(key)
                    if (name not in allowed or bits != 8 * struct.calcsize(OBJECTS[name][2])
                            or (name in ("current", "torque") and name != self.output_name)):
                        raise _Refused(
                            f"node {self.id}: {pdo.name} maps 0x{key[0]:04X}:{key[1]} "
                            f"({bits} bits), which this drive cannot "
                            f"{'send' if base == 0x1A00 else 'receive'}", *key)
                    names.append(name)
                codec = struct.Struct("<" + "".join(OBJECTS[o][2] for o in names))
                if base == 0x1600:
                    rpdos[pdo.cob_id] = (codec, tuple(names))
                    continue
                if not 1 <= pdo.trans_type <= 240 or codec.size > (64 if self.fd else 8):
                    raise _Refused(f"node {self.id}: TPDO{k} has transmission type "
                                   f"{pdo.trans_type} and {codec.size} bytes; this drive "
                                   f"sends synchronous PDOs (types 1–240) of at most "
                                   f"{64 if self.fd else 8} bytes", 0x1800 + k - 1, 2)
                tpdos.append((pdo.cob_id, codec, tuple(names), pdo.trans_type))
        self.tpdos, self.rpdos, self.received = tpdos, rpdos, {}
        self.receives = frozenset(o for _, names in rpdos.values() for o in names)
        for cob_id in rpdos:
            node.network.subscribe(cob_id, self._on_rpdo)
            self._subscribed.append(cob_id)
        self.configured = True

    def _unsubscribe(self) -> None:
        for cob_id in self._subscribed:
            self.node.network.unsubscribe(cob_id, self._on_rpdo)
        self._subscribed = []

    def _on_rpdo(self, cob_id: int, data: bytearray, timestamp: float) -> None:
        self.received[cob_id] = bytes(data)

    def latch(self) -> None:
        """At SYNC: apply the receive PDOs that came since the last one."""
        if not self.received:
            return
        received, self.received = self.received, {}
        values = {}
        for cob_id, data in received.items():
            codec, names = self.rpdos[cob_id]
            if len(data) >= codec.size:
                values.update(zip(names, codec.unpack_from(data), strict=True))
        if "controlword" in values:
            self.command(values["controlword"])
        if self.state != "QUICK STOP ACTIVE":
            self.target = values.get("target_position", self.target)
            self.velocity_offset = values.get("velocity_offset", self.velocity_offset)
            self.torque_offset = values.get("torque_offset", self.torque_offset)

    def frames(self, sync: int) -> list[tuple[int, bytes]]:
        """The transmit PDOs due at SYNC number ``sync``, from the last sampled values."""
        values = {"statusword": self.statusword, "position": self.position,
                  "velocity": self.velocity, "timestamp": self.stamp,
                  self.output_name: self.output}
        return [(cob_id, codec.pack(*(values[o] for o in names)))
                for cob_id, codec, names, every in self.tpdos if sync % every == 0]

    def detach(self) -> None:
        """Leave the network (:meth:`boot` on another starts the drive again; its dictionary
        keeps what was written)."""
        self._unsubscribe()
        if self.cut:                # silence() took these off already
            self.node.network.subscribe(self.node.sdo.rx_cobid, self.node.sdo.on_request)
            self.node.network.subscribe(0, self.node.nmt.on_command)
        self.node.remove_network()
        self.configured = self.cut = False

    def silence(self) -> None:
        """Stop answering anything (a cut cable): SDO, NMT and PDOs."""
        network = self.node.network
        self._unsubscribe()
        network.unsubscribe(self.node.sdo.rx_cobid, self.node.sdo.on_request)
        network.unsubscribe(0, self.node.nmt.on_command)
        self.configured, self.cut = False, True
