"""CAN logs decoded offline: frames written by other tools → a recording.

:func:`decode_log` reads a log written by other tools (Vector ASC, Vector BLF, SocketCAN
candump ``-l``) with python-can's readers and assembles it into a
:class:`~dynid.identify.recording.Recording`. The frames are grouped into cycles by the
assembler of a live capture (:class:`~dynid.hardware.assembler.CycleAssembler`, importable
from here too, with :class:`Sample` and :class:`AssemblyStats`), which also sets the time of
each sample; error, remote and extended frames are skipped, and a dropped cycle is a gap in
time that ``timestamps=`` handles as for a CSV file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import can
import numpy as np

from .._files import excerpt
from ..errors import DataError
from ..identify.recording import Recording
from ..identify.timestamps import TIMESTAMPS, regularize
from .assembler import AssemblyStats, CycleAssembler, Sample
from .pdo import PdoMapping, Scaling

__all__ = ["AssemblyStats", "CycleAssembler", "Sample", "decode_log"]

_SUFFIXES = {".asc": "asc", ".blf": "blf", ".log": "candump"}
_READERS = {"asc": can.ASCReader, "blf": can.BLFReader, "candump": can.CanutilsLogReader}


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
