"""dynid's own CSV recordings: the metadata line that makes them readable without options.

A recording written by :class:`dynid.hardware.RecordingWriter` starts with one line
``# dynid recording {json}`` (space, output kind, names, units, output limits, the columns of
each signal, free ``source`` text, optionally the encoders' ``resolution`` in SI units), then
the header row, then one row per sample, each ended by a line break. The file is appended to
while the robot moves; a process stopped while writing a row leaves a last line without its
line break: that row is incomplete, whatever it parses as, and the readers drop it
(:func:`layout`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .._files import excerpt
from ..errors import DataError

__all__ = ["MARKER", "VERSION", "Layout", "is_recording", "layout", "meta_line"]

#: Start of the first line of dynid's CSV recordings.
MARKER = "# dynid recording "
#: Version of the metadata written.
VERSION = 1
# The metadata entries, the JSON type of each and whether it is required.
_META = {"version": (int, True), "space": (str, True), "output_kind": (str, True),
         "names": (list, True), "units": (dict, True), "columns": (dict, True),
         "output_limits": (list, False), "source": (str, False), "resolution": (list, False)}
_COLUMNS = ("time", "positions", "output", "extra")
_CHUNK = 1 << 20


def meta_line(meta: dict) -> str:
    """The first line of a recording (with its line break) from its metadata."""
    return MARKER + json.dumps(meta, ensure_ascii=True) + "\n"


def is_recording(path: str | Path) -> bool:
    """Whether the file starts as dynid's CSV recordings do (``False`` when unreadable)."""
    try:
        with Path(path).open("rb") as f:
            return f.read(len(MARKER)) == MARKER.encode()
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return False


@dataclass(frozen=True)
class Layout:
    """How to read a text table: its metadata, lines before its header, its complete rows.

    Attributes
    ----------
    meta
        The metadata of a dynid recording, checked; ``None`` for any other table.
    skip
        Lines before the header (the metadata line).
    rows
        Sample rows to read when the last line is incomplete (``None``: every row).
    dropped
        Line number of the incomplete last row dropped, or ``None``.
    """

    meta: dict | None = None
    skip: int = 0
    rows: int | None = None
    dropped: int | None = None

    def note(self, name: str) -> str | None:
        """What the reader did about an incomplete last row, one line (``None``: nothing)."""
        if self.dropped is None:
            return None
        return (f"{name}: line {self.dropped}, the last row, has no line break: the recording "
                "stopped while writing it; that row was dropped")


def layout(path: Path) -> Layout:
    """The layout of a table file: for a dynid recording, its checked metadata and its complete
    rows; for any other file, nothing to skip."""
    if not is_recording(path):
        return Layout()
    with path.open("rb") as f:
        first, second = f.readline(), f.readline()
    meta = _parse(first, path)
    _check_header(second, meta, path)
    lines, ended = _count_lines(path)
    if ended:
        return Layout(meta, skip=1)
    return Layout(meta, skip=1, rows=lines - 2, dropped=lines + 1)


def _parse(line: bytes, path: Path) -> dict:
    where = f"{path.name}, line 1 (dynid recording metadata)"
    try:
        meta = json.loads(line[len(MARKER):].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DataError(f"{where}: not valid JSON ({excerpt(str(exc), 100)}); expected "
                        f"{MARKER.strip()} followed by a JSON object on one line, as "
                        "dynid.hardware.RecordingWriter writes it") from None
    if not isinstance(meta, dict):
        raise DataError(f"{where}: expected a JSON object, found {excerpt(meta)}")
    for key, value in meta.items():
        if key not in _META:
            raise DataError(f"{where}: unknown entry {excerpt(key)}; expected some of "
                            f"{sorted(_META)}")
        if not isinstance(value, _META[key][0]) or isinstance(value, bool):
            raise DataError(f"{where}: {key}: expected a JSON {_META[key][0].__name__}, found "
                            f"{excerpt(value)}")
    missing = [k for k, (_, required) in _META.items() if required and k not in meta]
    if missing:
        raise DataError(f"{where}: no {', '.join(missing)}; expected {sorted(_META)}")
    res = meta.get("resolution")
    if res is not None and (len(res) != len(meta["names"]) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) and 0 < x < float("inf")
            for x in res)):
        raise DataError(f"{where}: resolution: expected the encoder step (rad or m, > 0) of "
                        f"each of the {len(meta['names'])} coordinates, found {excerpt(res)}")
    if meta["version"] != VERSION:
        raise DataError(f"{where}: version {meta['version']}, this dynid reads version "
                        f"{VERSION}; read it with a newer dynid")
    cols = meta["columns"]
    if set(cols) != set(_COLUMNS) or not isinstance(cols["time"], str) or not all(
            isinstance(cols[k], list) and all(isinstance(c, str) for c in cols[k])
            for k in _COLUMNS[1:]):
        raise DataError(f"{where}: columns: expected {{'time': name, 'positions': [names], "
                        f"'output': [names], 'extra': [names]}}, found {excerpt(cols)}")
    return meta


def _check_header(line: bytes, meta: dict, path: Path) -> None:
    cols = meta["columns"]
    want = [cols["time"], *cols["positions"], *cols["output"], *cols["extra"]]
    found = [f.strip() for f in line.decode("utf-8", "replace").rstrip("\r\n").split(",")]
    if not line.endswith(b"\n"):
        raise DataError(f"{path.name}, line 2: the header row is incomplete ({excerpt(found)}):"
                        " the recording stopped before its first sample was written")
    if found != want:
        raise DataError(f"{path.name}, line 2: header {excerpt(found, 200)} does not match the "
                        f"columns of the metadata on line 1, {excerpt(want, 200)}")


def _count_lines(path: Path) -> tuple[int, bool]:
    """Line breaks in the file, and whether its last byte is one."""
    count, last = 0, b"\n"
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count, last == b"\n"
