"""The recording file a capture appends to, readable by dynid's readers at every moment.

A :class:`RecordingWriter` writes a CSV text file: one line of metadata
(``# dynid recording {json}``: space, output kind, names, units, output limits, the columns of
each signal, free ``source`` text, the encoders' resolution), the header row (``time``, the
position columns named after the coordinates, the output columns such as ``motor1_current``,
then extra columns the readers ignore, such as ``cycle``), then one row per sample.
:func:`dynid.read_csv` reads it back without options as the
:class:`~dynid.identify.recording.Recording` it holds.

Durability: :meth:`RecordingWriter.append` keeps the row in memory; :meth:`~RecordingWriter.
flush` hands every pending row to the operating system in one write of whole lines, after which
the rows survive the process being killed; :meth:`~RecordingWriter.sync` also asks the
operating system to put them on the disk (``os.fsync``), after which they survive a power loss.
A process killed in the middle of a write can leave a last line without its line break; the
readers drop that row with a warning.

Numbers are written with Python's shortest ``repr`` that reads back to the same float64, so a
recording read back is bit for bit the one written.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

import numpy as np

from .._files import excerpt
from ..errors import DataError
from ..identify._csvmeta import VERSION, meta_line
from ..identify.recording import OUTPUT_KINDS, Recording

__all__ = ["RecordingWriter"]

# Output columns are named after the coordinate and this suffix.
_SUFFIX = {"current": "current", "motor_torque": "torque", "joint_torque": "torque"}
# Characters a column name cannot hold in a comma-separated header.
_FORBIDDEN = (",", '"', "\n", "\r")


def _check_column(name: object, what: str) -> str:
    if not isinstance(name, str) or not name or name != name.strip() or any(
            c in name for c in _FORBIDDEN):
        raise DataError(f"{what}: expected a column name (text without commas, quotes, line "
                        f"breaks or surrounding spaces), found {excerpt(name)}; e.g. 'cycle'")
    return name


def _floats(values) -> list[float]:
    """Python floats (their ``repr`` is the shortest text that reads back the same)."""
    if type(values) is np.ndarray and values.dtype == np.float64 and values.ndim == 1:
        return values.tolist()
    return [float(x) for x in values]


def _check_row(values: list[float], n: int, what: str, sample: int) -> None:
    if len(values) != n:
        raise DataError(f"{what} of sample {sample}: expected {n} values, found {len(values)}")


class RecordingWriter:
    """Append a recording to a CSV file, sample by sample, as a capture measures it.

    Parameters
    ----------
    path
        The file to create. An existing file is refused unless ``overwrite=True``.
    names
        Coordinate (or actuator) names, one per position column; they name the columns.
    output_kind
        ``"current"``, ``"motor_torque"`` or ``"joint_torque"``.
    space
        ``"actuator"`` (motor side, as drives measure) or ``"basis"``.
    units
        Units of the values appended, per signal (``positions``, ``output``): one unit, or
        one per column; default SI (rad, and A or N·m). Time is in seconds.
    output_limits
        Saturation level of each output channel, in the output's units (``inf`` for none).
    extra
        Names of extra columns appended after the output (``cycle``, ``sync_time``...),
        ignored by the readers.
    source
        Free text stored in the metadata (the capture's settings), kept in the history of the
        recording read back.
    resolution
        The positions' quantization step in SI units (rad, m), one value or one per
        coordinate: the encoders' (:attr:`~dynid.hardware.pdo.Scaling.resolution`), read back
        as :attr:`~dynid.identify.recording.Recording.resolution`; ``None`` when unknown.
    overwrite
        Replace an existing file.

    Attributes
    ----------
    path
        The file.
    columns
        The header's column names.
    samples
        Samples appended.
    flushed
        Samples in the file (handed to the operating system).

    Examples
    --------
    >>> with RecordingWriter("run.csv", names=["motor1", "motor2"],
    ...                      output_kind="current", extra=["cycle"]) as w:  # doctest: +SKIP
    ...     for k in range(1000):
    ...         w.append(k * 1e-3, [0.1, 0.2], [0.5, -0.3], extra=[k])
    ...         w.flush()
    >>> dynid.read_csv("run.csv").names                                        # doctest: +SKIP
    ('motor1', 'motor2')
    """

    def __init__(self, path: str | Path, *, names: Sequence[str], output_kind: str,
                 space: str = "actuator",
                 units: Mapping[str, str | Sequence[str]] | None = None,
                 output_limits: Sequence[float] | None = None, extra: Sequence[str] = (),
                 source: str = "", resolution: float | Sequence[float] | None = None,
                 overwrite: bool = False):
        if not isinstance(path, str | Path):
            raise DataError(f"recording file: expected a path, found {excerpt(path)}")
        self.path = Path(path)
        meta = self._metadata(names, output_kind, space, units, output_limits, extra, source,
                              resolution)
        self.columns = (meta["columns"]["time"], *meta["columns"]["positions"],
                        *meta["columns"]["output"], *meta["columns"]["extra"])
        self.n, self.n_extra = len(meta["names"]), len(meta["columns"]["extra"])
        self.samples = self.flushed = 0
        self._pending: list[str] = []
        self._last = -math.inf
        try:
            self._file = open(self.path, "wb" if overwrite else "xb", buffering=0)  # noqa: SIM115
        except FileExistsError:
            raise DataError(f"recording file {self.path}: exists already; choose another name "
                            "or pass overwrite=True to replace it") from None
        except OSError as exc:
            raise DataError(f"recording file {self.path}: cannot be created "
                            f"({exc.strerror or exc}); is its folder there and writable?"
                            ) from None
        self._write(meta_line(meta) + ",".join(self.columns) + "\n")

    def _metadata(self, names, output_kind, space, units, output_limits, extra, source,
                  resolution) -> dict:
        if isinstance(names, str) or not isinstance(names, Sequence) or not names:
            raise DataError(f"names: expected one name per coordinate, found {excerpt(names)}; "
                            "e.g. names=['motor1', 'motor2']")
        names = [_check_column(x, "names") for x in names]
        if output_kind not in OUTPUT_KINDS:
            raise DataError(f"output_kind: expected one of {OUTPUT_KINDS}, found "
                            f"{excerpt(output_kind)}")
        if isinstance(extra, str) or not isinstance(extra, Sequence):
            raise DataError(f"extra: expected a list of column names, found {excerpt(extra)}; "
                            "e.g. extra=['cycle', 'sync_time']")
        if not isinstance(source, str):
            raise DataError(f"source: expected text, found {excerpt(source)}")
        if units is not None and not isinstance(units, Mapping):
            raise DataError(f"units: expected a mapping signal → unit, e.g. {{'positions': "
                            f"'deg'}}, found {excerpt(units)}")
        units = dict(units or {})
        if set(units) - {"positions", "output"}:
            raise DataError(f"units: expected units of positions and output (time is in s), "
                            f"found {sorted(units)}; e.g. units={{'positions': 'deg'}}")
        n = len(names)
        try:  # checked as the recording read back will be
            rec = Recording(np.arange(10.0), np.zeros((10, n)), np.zeros((10, n)), space=space,
                            output_kind=output_kind, units=units, names=names,
                            output_limits=output_limits, resolution=resolution)
        except DataError as exc:
            raise DataError(f"recording file {self.path.name}: {exc}") from None
        per_column = {k: [units[k]] * n if isinstance(units.get(k), str) else list(
            units.get(k, rec.units[k])) for k in ("positions", "output")}
        output = [f"{x}_{_SUFFIX[output_kind]}" for x in names]
        extra = [_check_column(x, "extra") for x in extra]
        taken = ["time", *names, *output, *extra]
        repeated = sorted({c for c in taken if taken.count(c) > 1})
        if repeated:
            raise DataError(f"columns {taken}: {repeated} appear more than once; rename the "
                            "coordinates or the extra columns")
        meta = {"version": VERSION, "space": space, "output_kind": output_kind,
                "names": names, "units": {"time": "s", **per_column},
                "columns": {"time": "time", "positions": names, "output": output,
                            "extra": extra}, "source": source}
        if output_limits is not None:
            meta["output_limits"] = [float(x) for x in np.asarray(output_limits, float)]
        if rec.resolution is not None:
            meta["resolution"] = rec.resolution.tolist()
        return meta

    # Appending -----------------------------------------------------------------------------
    def append(self, time: float, positions: Sequence[float], output: Sequence[float],
               extra: Sequence[float] = ()) -> None:
        """Add one sample: its time (s, after the previous one), positions (n,), output (n,)
        and extra values (one per extra column; whole numbers are written as such)."""
        if self._file.closed:
            raise DataError(f"{self.path.name}: the recording is closed; nothing more can be "
                            "appended")
        try:
            t = float(time)
            q = _floats(positions)
            y = _floats(output)
            e = [x if type(x) is int else int(x) if isinstance(x, np.integer) else float(x)
                 for x in extra]
        except (TypeError, ValueError) as exc:
            raise DataError(f"{self.path.name}: sample {self.samples}: expected numbers "
                            f"({exc})") from None
        if len(q) != self.n or len(y) != self.n or len(e) != self.n_extra:
            for what, values, k in (("positions", q, self.n), ("output", y, self.n),
                                    ("extra", e, self.n_extra)):
                _check_row(values, k, f"{self.path.name}: {what}", self.samples)
        if not t > self._last:
            self._refuse_time(t, self.samples, self._last)
        line = ",".join(map(repr, [t, *q, *y, *e]))
        if "n" in line:  # inf or nan: finite floats and integers are digits, ".", "e", "+-"
            self._refuse([[t, *q, *y, *e]])
        self._pending.append(line + "\n")
        self._last = t
        self.samples += 1

    def append_many(self, time: np.ndarray, positions: np.ndarray, output: np.ndarray,
                    extra: np.ndarray | None = None) -> None:
        """Add samples: times (N,), positions (N, n), output (N, n), extra (N, k)."""
        if self._file.closed:
            raise DataError(f"{self.path.name}: the recording is closed; nothing more can be "
                            "appended")
        t = self._array(time, "time", 1)
        q = self._array(positions, "positions", 2, self.n, len(t))
        y = self._array(output, "output", 2, self.n, len(t))
        e = np.zeros((len(t), 0)) if extra is None and not self.n_extra else self._array(
            extra, "extra", 2, self.n_extra, len(t), keep_integers=True)
        if not len(t):
            return
        steps = np.diff(np.concatenate([[self._last], t]))
        if not np.all(steps > 0):
            k = int(np.flatnonzero(~(steps > 0))[0])
            self._refuse_time(float(t[k]), self.samples + k,
                              self._last if k == 0 else float(t[k - 1]))
        values = np.column_stack([t, q, y]).tolist()
        ints = e.tolist()
        rows = [row + more for row, more in zip(values, ints, strict=True)]
        lines = [",".join(map(repr, row)) for row in rows]
        if any("n" in line for line in lines):
            self._refuse(rows)
        self._pending.extend(line + "\n" for line in lines)
        self._last = float(t[-1])
        self.samples += len(t)

    def _array(self, x, what: str, ndim: int, width: int | None = None,
               length: int | None = None, keep_integers: bool = False) -> np.ndarray:
        try:
            arr = np.asarray(x)
            if not (keep_integers and arr.dtype.kind in "iu"):
                arr = arr.astype(float)
        except (TypeError, ValueError) as exc:
            raise DataError(f"{self.path.name}: {what}: expected numbers ({exc})") from None
        if ndim == 2 and arr.ndim == 1 and width == 1:
            arr = arr[:, None]
        shape = (length,) if ndim == 1 else (length, width)
        if arr.ndim != ndim or (length is not None and arr.shape != shape):
            want = "(N,)" if ndim == 1 else f"(N, {width}) with N = {length}"
            raise DataError(f"{self.path.name}: {what}: expected an array of shape {want}, "
                            f"found {arr.shape}")
        return arr

    def _refuse_time(self, t: float, sample: int, previous: float) -> None:
        if not math.isfinite(t):
            raise DataError(f"{self.path.name}: sample {sample}: time is {t}; expected a "
                            "finite number of seconds")
        raise DataError(f"{self.path.name}: sample {sample}: time {t!r} s is not after the "
                        f"previous sample's {previous!r} s; times must increase")

    def _refuse(self, rows: list[list[float]]) -> None:
        """Raise naming the first value that is not finite."""
        for k, row in enumerate(rows):
            for j, value in enumerate(row):
                if not math.isfinite(value):
                    raise DataError(f"{self.path.name}: sample {self.samples + k}, column "
                                    f"{self.columns[j]!r}: {value} is not a finite number; "
                                    "a recording holds measured values only")

    # Durability ----------------------------------------------------------------------------
    def flush(self) -> None:
        """Write the pending samples to the file in one write of whole lines: they survive
        the process being killed."""
        if self._pending:
            self._write("".join(self._pending))
            self.flushed += len(self._pending)
            self._pending.clear()

    def sync(self) -> None:
        """:meth:`flush`, then ask the operating system to store the file on its disk
        (``os.fsync``): the samples survive a power loss."""
        self.flush()
        os.fsync(self._file.fileno())

    def _write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                done = self._file.write(data)
            except OSError as exc:
                raise DataError(f"recording file {self.path}: write failed "
                                f"({exc.strerror or exc}); {self.flushed} samples are in the "
                                "file") from None
            data = data[done:]

    def close(self) -> None:
        """Flush and close the file (again: nothing)."""
        if not self._file.closed:
            try:
                self.flush()
            finally:
                self._file.close()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"RecordingWriter({str(self.path)!r}, {self.samples} samples, {self.flushed} "
                "in the file)")
