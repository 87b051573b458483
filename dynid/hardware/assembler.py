"""CAN frames → samples: the cycle assembler of a live capture (and of CAN logs decoded
offline, :mod:`dynid.hardware.decode`).

Each control cycle, the host sends a SYNC frame and every drive answers with its transmit PDOs
(:class:`~dynid.hardware.pdo.PdoMapping`). A :class:`CycleAssembler` is fed the frames one at a
time, as a bus or a log delivers them: a SYNC opens the next cycle and closes the previous one
(an incomplete cycle is counted as dropped, with the node and TPDO that were missing); the
moment every expected TPDO of the cycle has arrived, the completed :class:`Sample` is returned,
without waiting for the next SYNC.

Time of a sample: when the mapping carries the drive time stamp (CiA 301 object 0x1013, µs),
the first drive's stamp unwrapped across its 2³² µs wrap
(:func:`~dynid.hardware.pdo.unwrap_microseconds`), in seconds from the first sample; otherwise
the SYNC frame's reception time relative to the first sample's SYNC.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .._files import excerpt
from ..errors import DriveConfigError
from .pdo import PdoMapping, Scaling

__all__ = ["AssemblyStats", "CycleAssembler", "Sample"]

_WRAP = 2**32


@dataclass(slots=True, eq=False)
class Sample:
    """One complete cycle.

    Attributes
    ----------
    cycle
        Index of the cycle: SYNC frames seen before its own (0 for the first).
    sync_time
        Reception time of the cycle's SYNC frame, s (the bus's or the log's clock).
    time
        Time of the sample, s from the first sample (see the module's documentation).
    stamps
        Raw drive time stamps (n,), µs modulo 2³², when the mapping carries them; else ``None``.
    positions
        Positions (n,) in SI units, through each drive's :class:`~dynid.hardware.pdo.Scaling`.
    output
        Current (A) or torque (N·m, N) (n,), through each drive's scaling.
    raw
        Object name → its value from every drive (n,), in drive units.
    """

    cycle: int
    sync_time: float
    time: float
    stamps: np.ndarray | None
    positions: np.ndarray
    output: np.ndarray
    raw: dict[str, np.ndarray]


@dataclass(eq=False)
class AssemblyStats:
    """What a :class:`CycleAssembler` has seen.

    Attributes
    ----------
    cycles
        SYNC frames seen (cycles opened).
    complete
        Cycles completed (samples returned).
    dropped
        Cycles closed incomplete (by the next SYNC, or by :meth:`CycleAssembler.finish`).
    dropped_by_node
        Node → dropped cycles that missed at least one of its TPDOs.
    missing
        ``(node, TPDO number from 1)`` → cycles that missed it.
    received
        Node → its TPDOs taken into cycles.
    late
        TPDOs received with no cycle open: their SYNC was not seen (before the first SYNC).
    duplicate
        TPDOs received a second time in one cycle (the first is kept).
    short
        TPDOs shorter than their mapping (not used).
    unknown
        Frames of other COB-IDs (other nodes, other services), ignored.
    unknown_ids
        COB-ID → count of those frames.
    """

    cycles: int = 0
    complete: int = 0
    dropped: int = 0
    dropped_by_node: dict[int, int] = field(default_factory=dict)
    missing: dict[tuple[int, int], int] = field(default_factory=dict)
    received: dict[int, int] = field(default_factory=dict)
    late: int = 0
    duplicate: int = 0
    short: int = 0
    unknown: int = 0
    unknown_ids: Counter = field(default_factory=Counter)

    @property
    def errors(self) -> int:
        """TPDOs received twice in a cycle or too short."""
        return self.duplicate + self.short

    def summary(self) -> str:
        """One line: cycles, complete and dropped ones (which nodes), errors, other frames."""
        text = f"{self.cycles} cycles, {self.complete} complete, {self.dropped} dropped"
        if self.dropped:
            text += " (" + ", ".join(
                f"node {node} missing " + " and ".join(
                    f"TPDO{k} {c}×" for (nd, k), c in sorted(self.missing.items()) if nd == node)
                for node in sorted(self.dropped_by_node)) + ")"
        for count, what in ((self.duplicate, "TPDOs received twice in a cycle"),
                            (self.short, "TPDOs too short"),
                            (self.late, "TPDOs before the first SYNC"),
                            (self.unknown, "frames of other COB-IDs ignored")):
            if count:
                text += f"; {count} {what}"
        return text


class CycleAssembler:
    """Group the frames of each SYNC cycle into samples.

    Parameters
    ----------
    mapping
        The PDOs the drives send (their COB-IDs: :meth:`PdoMapping.tpdo_id`).
    node_ids
        CANopen node ids of the drives, in the order of the recording's coordinates.
    scalings
        One :class:`~dynid.hardware.pdo.Scaling` per drive.
    sync_id
        COB-ID of the SYNC frame.

    Examples
    --------
    >>> asm = CycleAssembler(PdoMapping.default("current"), [1, 2],
    ...                      [Scaling(1e-4, rated=2.0)] * 2)
    >>> for msg in bus:                                                  # doctest: +SKIP
    ...     sample = asm.feed(msg.arbitration_id, msg.data, msg.timestamp)
    ...     if sample is not None:
    ...         writer.append(sample.time, sample.positions, sample.output)
    """

    def __init__(self, mapping: PdoMapping, node_ids: Sequence[int],
                 scalings: Sequence[Scaling], *, sync_id: int = 0x80):
        nodes, scalings = _checked(mapping, node_ids, scalings, sync_id)
        self.mapping, self.node_ids, self.scalings = mapping, nodes, scalings
        self.sync_id = sync_id
        self.stats = AssemblyStats(received=dict.fromkeys(nodes, 0))
        self._values = {name: [0] * len(nodes) for name in mapping.transmit}
        self._slots = {}
        m = len(mapping.tpdos)
        for j, node in enumerate(nodes):
            for k, pdo in enumerate(mapping.tpdos):
                targets = tuple(self._values[o] for o in pdo.objects)
                self._slots[mapping.tpdo_id(node, k)] = (
                    1 << (j * m + k), pdo.codec.unpack_from, pdo.size, targets, j, node)
        self._full = (1 << (len(nodes) * m)) - 1
        self._output = mapping.output
        self._stamped = "timestamp" in mapping.transmit
        self._have = 0
        self._open = False
        self._cycle = -1
        self._sync_time = 0.0
        self._origin: float | None = None  # first sample's SYNC time
        self._previous = 0  # previous sample's raw stamp of the first drive
        self._elapsed: int | None = None  # µs since the first sample

    def feed(self, arbitration_id: int, data: bytes | bytearray, timestamp: float
             ) -> Sample | None:
        """Take one frame (its COB-ID, payload and reception time in s); return the sample
        when this frame completes its cycle, else ``None``."""
        if arbitration_id == self.sync_id:
            self._next(timestamp)
            return None
        slot = self._slots.get(arbitration_id)
        stats = self.stats
        if slot is None:
            stats.unknown += 1
            stats.unknown_ids[arbitration_id] += 1
            return None
        if not self._open:
            stats.late += 1
            return None
        bit, unpack, size, targets, j, node = slot
        if self._have & bit:
            stats.duplicate += 1
            return None
        if len(data) < size:
            stats.short += 1
            return None
        for target, value in zip(targets, unpack(data), strict=True):
            target[j] = value
        stats.received[node] += 1
        self._have |= bit
        return self._complete() if self._have == self._full else None

    def finish(self) -> None:
        """Close the open cycle (counted as dropped when incomplete), e.g. at the end of a log."""
        self._close()
        self._open = False

    def _next(self, timestamp: float) -> None:
        self._close()
        self._cycle += 1
        self.stats.cycles += 1
        self._have, self._open, self._sync_time = 0, True, float(timestamp)

    def _close(self) -> None:
        if not self._open or self._have == self._full:
            return
        stats = self.stats
        stats.dropped += 1
        nodes = set()
        for bit, _, _, _, _, node in self._slots.values():
            if not self._have & bit:
                k = (bit.bit_length() - 1) % len(self.mapping.tpdos) + 1
                stats.missing[node, k] = stats.missing.get((node, k), 0) + 1
                nodes.add(node)
        for node in nodes:
            stats.dropped_by_node[node] = stats.dropped_by_node.get(node, 0) + 1

    def _complete(self) -> Sample:
        self.stats.complete += 1
        raw = {name: np.array(values, dtype=np.int64) for name, values in self._values.items()}
        positions = np.array([s.position(c) for s, c in zip(self.scalings, raw["position"],
                                                             strict=True)])
        output = np.array([s.output(c) for s, c in zip(self.scalings, raw[self._output],
                                                       strict=True)])
        stamps = raw["timestamp"] if self._stamped else None
        if self._origin is None:
            self._origin = self._sync_time
        if stamps is not None:
            first = int(stamps[0])
            self._elapsed = 0 if self._elapsed is None else \
                self._elapsed + (first - self._previous) % _WRAP
            self._previous = first
            time = self._elapsed * 1e-6
        else:
            time = self._sync_time - self._origin
        return Sample(self._cycle, self._sync_time, time, stamps, positions, output, raw)


def _checked(mapping, node_ids, scalings, sync_id) -> tuple[tuple[int, ...], tuple]:
    if not isinstance(mapping, PdoMapping):
        raise DriveConfigError(f"mapping: expected a PdoMapping, found {excerpt(mapping)}; "
                               "e.g. PdoMapping.default('current')")
    if isinstance(node_ids, str | bytes) or not isinstance(node_ids, Sequence) or not node_ids \
            or not all(isinstance(n, int | np.integer) and not isinstance(n, bool) and
                       1 <= n <= 127 for n in node_ids) or len(set(node_ids)) != len(node_ids):
        raise DriveConfigError(f"node_ids: expected distinct CANopen node ids from 1 to 127, "
                               f"one per drive, found {excerpt(node_ids)}; e.g. [1, 2, 3]")
    if isinstance(scalings, Scaling) or not isinstance(scalings, Sequence) or len(
            scalings) != len(node_ids) or not all(isinstance(s, Scaling) for s in scalings):
        raise DriveConfigError(f"scalings: expected one Scaling per node ({len(node_ids)}), "
                               f"found {excerpt(scalings)}; e.g. [Scaling.from_turn(4096)] * "
                               f"{len(node_ids)}")
    ids = {mapping.tpdo_id(n, k) for n in node_ids for k in range(len(mapping.tpdos))}
    if isinstance(sync_id, bool) or not isinstance(sync_id, int) or not 0 <= sync_id <= 0x7FF \
            or sync_id in ids:
        raise DriveConfigError(f"sync_id: expected an 11-bit COB-ID other than the drives' "
                               f"TPDOs, found {excerpt(sync_id)}; the default is 0x80")
    return tuple(int(n) for n in node_ids), tuple(scalings)
