"""CAN frames → samples: the cycle assembler of a live capture, and CAN logs decoded offline.

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

:func:`decode_log` reads a log written by other tools (Vector ASC, Vector BLF, SocketCAN
candump ``-l``) with python-can's readers and assembles it into a
:class:`~dynid.identify.recording.Recording`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import can
import numpy as np

from .._files import excerpt
from ..errors import DataError, DriveConfigError
from ..identify.recording import Recording
from ..identify.timestamps import TIMESTAMPS, regularize
from .pdo import PdoMapping, Scaling

__all__ = ["AssemblyStats", "CycleAssembler", "Sample", "decode_log"]

_WRAP = 2**32
_SUFFIXES = {".asc": "asc", ".blf": "blf", ".log": "candump"}
_READERS = {"asc": can.ASCReader, "blf": can.BLFReader, "candump": can.CanutilsLogReader}


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


class _Lines:
    """A text file that counts the lines read from it (to name a line python-can rejects)."""

    def __init__(self, path: Path):
        self.file = path.open(encoding="utf-8", errors="replace", newline=None)
        self.line = 0

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        text = next(self.file)
        self.line += 1
        return text

    def close(self) -> None:
        self.file.close()


def _format(path: Path, format: str | None) -> str:
    if format is None:
        fmt = _SUFFIXES.get(path.suffix.lower())
        if fmt is None:
            raise DataError(f"{path.name}: unknown CAN log suffix {path.suffix!r}; expected "
                            f"{', '.join(_SUFFIXES)}, or say it: format='asc', 'blf' or "
                            "'candump'")
        return fmt
    if format not in _READERS:
        raise DataError(f"format: expected one of {', '.join(_READERS)}, found "
                        f"{excerpt(format)}; e.g. decode_log('run.log', format='candump', ...)")
    return format


def _frames(path: Path, fmt: str):
    """The frames of the log (``can.Message``); python-can's failures raise naming the file
    and, for text logs, the line."""
    lines = _Lines(path) if fmt != "blf" else None
    where = ""
    try:
        reader = _READERS[fmt](lines if lines is not None else path)
        yield from reader
    except Exception as exc:  # python-can's parsers raise many kinds
        if isinstance(exc, DataError):
            raise
        where = f", line {lines.line}" if lines is not None else ""
        raise DataError(f"{path.name}{where}: not a readable {fmt} log; python-can says "
                        f"{type(exc).__name__}: {excerpt(str(exc), 160)}") from None
    finally:
        if lines is not None:
            lines.close()


def decode_log(path: str | Path, *, mapping: PdoMapping, node_ids: Sequence[int],
               scalings: Sequence[Scaling], names: Sequence[str], output_kind: str,
               space: str = "actuator", units=None, timestamps: str = "check",
               sync_id: int = 0x80, format: str | None = None) -> Recording:
    """Decode a CAN log (ASC, BLF or candump) of a cyclic exchange into a recording.

    Parameters
    ----------
    path
        The log: ``.asc`` (Vector ASCII), ``.blf`` (Vector binary logging format) or ``.log``
        (``candump -l``), read by python-can; classic CAN and CAN FD frames.
    mapping, node_ids, scalings, sync_id
        As in :class:`CycleAssembler`.
    names, output_kind, space, units
        As in :class:`~dynid.identify.recording.Recording`; the values are in SI units unless
        ``units`` says otherwise (a linear encoder's resolution in mm: ``{"positions": "mm"}``).
    timestamps
        As in :func:`~dynid.read_csv`: a dropped cycle is a gap in time, which ``"check"``
        refuses; ``"keep"`` keeps the samples as they are, ``"resample"`` interpolates.
    format
        ``"asc"``, ``"blf"`` or ``"candump"`` when the suffix does not say it.

    Examples
    --------
    >>> rec = decode_log("run.blf", mapping=PdoMapping.default("current"), node_ids=[1, 2],
    ...                  scalings=[Scaling.from_turn(4096, gear_ratio=100, rated=2.5)] * 2,
    ...                  names=["motor1", "motor2"], output_kind="current")  # doctest: +SKIP
    >>> rec.history                                                         # doctest: +SKIP
    ('decoded run.blf (blf log): 4002 frames; 1000 cycles, 1000 complete, 0 dropped', ...)
    """
    if not isinstance(path, str | Path) or not Path(path).is_file():
        raise DataError(f"CAN log {excerpt(str(path), 200)}: no such file")
    path = Path(path)
    fmt = _format(path, format)
    if timestamps not in TIMESTAMPS:
        raise DataError(f"timestamps: expected one of {', '.join(TIMESTAMPS)}, found "
                        f"{excerpt(timestamps)}; e.g. timestamps='keep'")
    want = {"current": ("current",), "torque": ("motor_torque", "joint_torque")}[mapping.output]
    if output_kind not in want:
        raise DataError(f"output_kind: the drives send {mapping.output} (the mapping), so "
                        f"expected {' or '.join(want)}, found {excerpt(output_kind)}")
    asm = CycleAssembler(mapping, node_ids, scalings, sync_id=sync_id)
    samples, ids, skipped = [], Counter(), 0
    for msg in _frames(path, fmt):
        ids[msg.arbitration_id] += 1
        # CAN FD has no remote frames: python-can's ASC reader marks empty FD frames so.
        if msg.is_error_frame or msg.is_extended_id or (msg.is_remote_frame and not msg.is_fd):
            skipped += 1
            continue
        sample = asm.feed(msg.arbitration_id, msg.data, msg.timestamp)
        if sample is not None:
            samples.append(sample)
    asm.finish()
    frames = ids.total()
    _check_decoded(path, fmt, asm, ids)
    stamped = samples[0].stamps is not None
    notes = [f"decoded {path.name} ({fmt} log): {frames} frames; {asm.stats.summary()}"
             + (f"; {skipped} error, remote or extended frames skipped" if skipped else ""),
             f"time from the drive time stamps of node {asm.node_ids[0]}, unwrapped" if stamped
             else "time from the log's reception times of the SYNC frames"]
    time = np.array([s.time for s in samples])
    arrays = {"positions": np.array([s.positions for s in samples]),
              "output": np.array([s.output for s in samples])}
    time, arrays, note = regularize(time, arrays, timestamps, where=f"{path.name} (time)")
    if note:
        notes.append(note)
    try:
        return Recording(time, arrays["positions"], arrays["output"], space=space,
                         output_kind=output_kind, units=units, names=names,
                         history=tuple(notes))
    except DataError as exc:
        raise DataError(f"{path.name}: {exc}") from None


def _check_decoded(path: Path, fmt: str, asm: CycleAssembler, ids: Counter) -> None:
    stats, frames = asm.stats, ids.total()
    if not frames:
        raise DataError(f"{path.name}: no CAN frames found; is it a {fmt} log?")
    seen = ", ".join(f"0x{i:03X}" for i, _ in ids.most_common(9) if i != asm.sync_id)
    if not stats.cycles:
        raise DataError(f"{path.name}: no SYNC frames (COB-ID 0x{asm.sync_id:03X}) among its "
                        f"{frames} frames (COB-IDs in the log, most frequent first: {seen}); "
                        "give the SYNC's COB-ID, e.g. sync_id=0x80")
    silent = [n for n, count in stats.received.items() if not count]
    if silent:
        wanted = ", ".join(f"0x{asm.mapping.tpdo_id(n, k):03X}" for n in silent
                           for k in range(len(asm.mapping.tpdos)))
        raise DataError(f"{path.name}: no transmit PDO of node {', '.join(map(str, silent))} "
                        f"(COB-IDs {wanted}) in {stats.cycles} cycles; COB-IDs in the log, "
                        f"most frequent first: {seen}. Are node_ids and the mapping those of "
                        "the log?")
    if not stats.complete:
        raise DataError(f"{path.name}: no complete cycle ({stats.summary()}); is the mapping "
                        "the drives' (every TPDO listed is expected each cycle)?")
