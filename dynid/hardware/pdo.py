"""What a drive exchanges each cycle, and the units it exchanges it in.

A :class:`PdoMapping` lists the process data objects of every drive: the receive PDOs (host →
drive: the target position, optionally velocity and torque offsets) and the transmit PDOs
(drive → host: the position actual value, the current or torque actual value, a drive time
stamp). Each PDO packs its objects little-endian, in order, as CANopen does; the mapping
encodes and decodes the frames with :mod:`struct` on the cyclic path, and gives the bus
budget its payload sizes.

A :class:`Scaling` converts between a drive's units and SI at this edge only: positions in
encoder increments (resolution, zero, gear ratio), currents and torques in thousandths of the
motor's rated value (CiA 402 objects 0x6078 and 0x6077), the drive time stamp in
microseconds (CiA 301 object 0x1013, which wraps after 2³² µs).

Example::

    mapping = PdoMapping.default("current")      # RPDO1: target, torque offset;
    mapping.tpdo_bytes                           # TPDO1: position, current; TPDO2: time
                                                 # stamp → (6, 4)
    scale = Scaling(resolution=2 * np.pi / 4096, rated=2.5)
    counts = scale.to_counts(np.array([0.1]))    # rad → increments
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import DriveConfigError

__all__ = ["OBJECTS", "Pdo", "PdoMapping", "Scaling", "unwrap_microseconds"]

#: Objects a cyclic exchange maps: name → (index, subindex, struct code).
OBJECTS: dict[str, tuple[int, int, str]] = {
    "controlword": (0x6040, 0, "H"),
    "statusword": (0x6041, 0, "H"),
    "target_position": (0x607A, 0, "i"),
    "velocity_offset": (0x60B1, 0, "i"),
    "torque_offset": (0x60B2, 0, "h"),
    "position": (0x6064, 0, "i"),
    "velocity": (0x606C, 0, "i"),
    "torque": (0x6077, 0, "h"),
    "current": (0x6078, 0, "h"),
    "timestamp": (0x1013, 0, "I"),
}
_RECEIVE = ("controlword", "target_position", "velocity_offset", "torque_offset")
_TRANSMIT = ("statusword", "position", "velocity", "torque", "current", "timestamp")
_INT_RANGE = {"i": 2**31, "h": 2**15, "H": 2**16, "I": 2**32}


@dataclass(frozen=True)
class Pdo:
    """One PDO: the names of the objects it carries, in order (see :data:`OBJECTS`)."""

    objects: tuple[str, ...]
    codec: struct.Struct = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        objects = tuple(self.objects) if not isinstance(self.objects, str) else (self.objects,)
        unknown = [o for o in objects if o not in OBJECTS]
        if unknown or not objects:
            raise DriveConfigError(f"PDO {list(objects)}: unknown object {unknown[0]!r}; "
                                   f"expected names from {sorted(OBJECTS)}" if unknown else
                                   "PDO: expected at least one object, found none")
        if len(set(objects)) != len(objects):
            raise DriveConfigError(f"PDO {list(objects)}: an object is mapped twice")
        object.__setattr__(self, "objects", objects)
        object.__setattr__(self, "codec", struct.Struct(
            "<" + "".join(OBJECTS[o][2] for o in objects)))

    @property
    def size(self) -> int:
        """Payload in bytes."""
        return self.codec.size

    def entries(self) -> list[tuple[int, int, int]]:
        """``(index, subindex, bits)`` of each object, as a PDO mapping parameter lists them."""
        return [(OBJECTS[o][0], OBJECTS[o][1], 8 * struct.calcsize(OBJECTS[o][2]))
                for o in self.objects]


def _pdos(pdos, what: str) -> tuple[Pdo, ...]:
    if isinstance(pdos, Pdo | str):
        pdos = (pdos,)
    out = tuple(p if isinstance(p, Pdo) else Pdo(tuple(p) if not isinstance(p, str) else (p,))
                for p in pdos)
    if not 1 <= len(out) <= 4:
        raise DriveConfigError(f"{what}: expected 1 to 4 PDOs per drive (the predefined "
                               f"connection set), found {len(out)}")
    return out


@dataclass(frozen=True)
class PdoMapping:
    """The PDOs every drive exchanges each cycle.

    Parameters
    ----------
    rpdos
        Receive PDOs (host → drive), each a :class:`Pdo` or a sequence of object names.
    tpdos
        Transmit PDOs (drive → host), sent by every drive on each SYNC.
    fd
        CAN FD frames (up to 64 bytes per PDO) instead of classic ones (8).
    """

    rpdos: tuple[Pdo, ...]
    tpdos: tuple[Pdo, ...]
    fd: bool = False

    def __post_init__(self) -> None:
        rpdos, tpdos = _pdos(self.rpdos, "rpdos"), _pdos(self.tpdos, "tpdos")
        object.__setattr__(self, "rpdos", rpdos)
        object.__setattr__(self, "tpdos", tpdos)
        limit = 64 if self.fd else 8
        for kind, pdos, allowed in (("rpdos", rpdos, _RECEIVE), ("tpdos", tpdos, _TRANSMIT)):
            for k, pdo in enumerate(pdos, 1):
                wrong = [o for o in pdo.objects if o not in allowed]
                if wrong:
                    raise DriveConfigError(f"{kind}[{k}]: {wrong[0]!r} cannot be mapped in this "
                                           f"direction; expected some of {list(allowed)}")
                if pdo.size > limit:
                    raise DriveConfigError(
                        f"{kind}[{k}] {list(pdo.objects)}: {pdo.size} bytes exceed a "
                        f"{'CAN FD' if self.fd else 'classic CAN'} frame ({limit} bytes); "
                        "split it into two PDOs" + ("" if self.fd else " or use CAN FD"))
        for kind, names in (("rpdos", self.receive), ("tpdos", self.transmit)):
            if len(set(names)) != len(names):
                raise DriveConfigError(f"{kind}: an object is mapped in two PDOs: {names}")
        if "target_position" not in self.receive:
            raise DriveConfigError("rpdos: the target position must be mapped (cyclic "
                                   "synchronous position mode), e.g. rpdos=[['target_position']]")
        if "position" not in self.transmit or self.output is None:
            raise DriveConfigError("tpdos: the position actual value and the current or torque "
                                   "actual value must be mapped, e.g. "
                                   "tpdos=[['position', 'current']]")

    @classmethod
    def default(cls, output: str = "current", *, timestamp: bool = True,
                feedforward: bool = True, fd: bool = False) -> PdoMapping:
        """The target position (and the torque offset, ``feedforward``) in one RPDO; the
        position and ``output`` (``"current"`` or ``"torque"``) actual values in one TPDO, the
        drive time stamp in a second one (in the first with CAN FD).

        The torque offset (0x60B2, thousandths of the rated torque, which for a drive that
        reports current is the same fraction of its rated current) carries the output the
        robot's prior model needs along the schedule: the drives' loops then correct only
        what the model misses, as a robot controller's computed-torque feed-forward does."""
        if output not in ("current", "torque"):
            raise DriveConfigError(f"output: expected 'current' or 'torque', found {output!r}")
        feedback = ["position", output]
        if timestamp and fd:
            tpdos = [[*feedback, "timestamp"]]
        else:
            tpdos = [feedback] + ([["timestamp"]] if timestamp else [])
        rpdo = ("target_position", "torque_offset") if feedforward else ("target_position",)
        return cls(rpdos=(Pdo(rpdo),), tpdos=tuple(Pdo(tuple(p)) for p in tpdos), fd=fd)

    @property
    def receive(self) -> tuple[str, ...]:
        return tuple(o for p in self.rpdos for o in p.objects)

    @property
    def transmit(self) -> tuple[str, ...]:
        return tuple(o for p in self.tpdos for o in p.objects)

    @property
    def output(self) -> str | None:
        """``"current"`` or ``"torque"``: the measured output the drives send."""
        return next((o for o in ("current", "torque") if o in self.transmit), None)

    @property
    def rpdo_bytes(self) -> tuple[int, ...]:
        return tuple(p.size for p in self.rpdos)

    @property
    def tpdo_bytes(self) -> tuple[int, ...]:
        return tuple(p.size for p in self.tpdos)

    @staticmethod
    def rpdo_id(node: int, k: int) -> int:
        """COB-ID of receive PDO ``k`` (0-based) of ``node`` (predefined connection set)."""
        return 0x200 + 0x100 * k + node

    @staticmethod
    def tpdo_id(node: int, k: int) -> int:
        """COB-ID of transmit PDO ``k`` (0-based) of ``node``."""
        return 0x180 + 0x100 * k + node

    def encode(self, values: dict[str, int]) -> list[bytes]:
        """The payload of each receive PDO from integer values in drive units."""
        try:
            return [p.codec.pack(*(int(values[o]) for o in p.objects)) for p in self.rpdos]
        except (KeyError, struct.error) as exc:
            raise DriveConfigError(f"receive PDO values {values}: {exc}") from None

    def decode(self, k: int, data: bytes) -> dict[str, int]:
        """Object name → value from the payload of transmit PDO ``k`` (0-based)."""
        pdo = self.tpdos[k]
        if len(data) < pdo.size:
            raise DriveConfigError(f"transmit PDO {k + 1}: expected {pdo.size} bytes "
                                   f"{list(pdo.objects)}, found {len(data)}")
        return dict(zip(pdo.objects, pdo.codec.unpack_from(bytes(data)), strict=True))

    def to_dict(self) -> dict:
        return {"rpdos": [list(p.objects) for p in self.rpdos],
                "tpdos": [list(p.objects) for p in self.tpdos], "fd": self.fd}

    @classmethod
    def from_dict(cls, d: dict) -> PdoMapping:
        if not isinstance(d, dict) or set(d) - {"rpdos", "tpdos", "fd"}:
            raise DriveConfigError(f"PDO mapping: expected a table with rpdos, tpdos and fd, "
                                   f"found {d!r}")
        return cls(rpdos=d.get("rpdos", [["target_position"]]),
                   tpdos=d.get("tpdos", [["position", "current"], ["timestamp"]]),
                   fd=bool(d.get("fd", False)))


@dataclass(frozen=True)
class Scaling:
    """Drive units ↔ SI for one drive.

    Parameters
    ----------
    resolution
        Actuator coordinate per encoder increment (rad, or m for a linear encoder), seen from
        the actuator coordinate of the robot model: ``2π / (increments per turn · gear)``.
    zero
        Increments at actuator coordinate 0.
    rated
        Rated current (A) or torque (N·m, N) of the motor: the drive reports the actual value
        in thousandths of it.
    gear
        Output torque per motor torque, for a drive that reports motor torque while the model's
        output is the torque after the gear (1 when they are the same side).
    """

    resolution: float
    zero: float = 0.0
    rated: float = 1.0
    gear: float = 1.0

    def __post_init__(self) -> None:
        for name in ("resolution", "rated", "gear"):
            value = getattr(self, name)
            if not (isinstance(value, int | float | np.floating) and np.isfinite(value)
                    and value != 0 and (name == "gear" or value > 0)):
                raise DriveConfigError(f"scaling {name}: expected a finite number "
                                       f"{'≠ 0' if name == 'gear' else '> 0'}, found {value!r}")
        if not np.isfinite(self.zero):
            raise DriveConfigError(f"scaling zero: expected a finite number, found {self.zero}")

    @classmethod
    def from_turn(cls, increments_per_turn: float, *, gear_ratio: float = 1.0,
                  zero: float = 0.0, rated: float = 1.0) -> Scaling:
        """A rotary encoder of ``increments_per_turn`` on a motor turning ``gear_ratio`` times
        per turn of the actuator coordinate."""
        if not (np.isfinite(increments_per_turn) and increments_per_turn > 0 and
                np.isfinite(gear_ratio) and gear_ratio > 0):
            raise DriveConfigError(f"encoder: expected increments per turn > 0 and a gear ratio "
                                   f"> 0, found {increments_per_turn} and {gear_ratio}")
        return cls(2 * np.pi / (increments_per_turn * gear_ratio), zero=zero, rated=rated)

    def to_counts(self, position: np.ndarray, *, what: str = "position") -> np.ndarray:
        """SI positions as integer increments; out of the 32-bit range raises."""
        counts = np.rint(np.asarray(position, dtype=float) / self.resolution + self.zero)
        if not np.all(np.abs(counts) < 2**31):
            raise DriveConfigError(f"{what}: {np.max(np.abs(position)):.6g} is beyond the drive's "
                                   f"32-bit position range at {self.resolution:.6g} per increment")
        return counts.astype(np.int64)

    def position(self, counts: np.ndarray) -> np.ndarray:
        return (np.asarray(counts, dtype=float) - self.zero) * self.resolution

    def output(self, raw: np.ndarray) -> np.ndarray:
        """Thousandths of the rated value → A, N·m or N (after the gear)."""
        return np.asarray(raw, dtype=float) * (self.rated * self.gear / 1000.0)

    def to_output(self, value: np.ndarray) -> np.ndarray:
        """SI output → thousandths of the rated value, saturated to the 16-bit range."""
        raw = np.rint(np.asarray(value, dtype=float) / (self.rated * self.gear / 1000.0))
        return np.clip(raw, -(2**15), 2**15 - 1).astype(np.int64)


def unwrap_microseconds(stamps: Sequence[int] | np.ndarray) -> np.ndarray:
    """A drive's 32-bit microsecond time stamps as seconds from the first, unwrapped."""
    raw = np.asarray(stamps, dtype=np.int64)
    steps = np.diff(raw) % 2**32
    return np.concatenate([[0.0], np.cumsum(steps) * 1e-6]) if raw.size else np.zeros(0)
