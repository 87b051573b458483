"""Reading recordings: text tables (CSV or whitespace-separated); NPZ archives are
:mod:`dynid.identify.archives`'s (:func:`read_npz` and :func:`save_npz`, importable from here
too).

:func:`read_csv` reads a table with or without a header, its columns named or given by index
(0 for the first), its time from a column or from the sample rate, and one recording from
several files of equal length (the positions in one file, the torques in another). A signal
stored flattened row-major is read with :class:`~dynid.identify.tables.Flat`.

Both readers trim each file (:class:`~dynid.identify.trims.Trim`), check the time stamps and
make them uniform when asked (``timestamps=``, :mod:`dynid.identify.timestamps`), map columns
that are not the coordinates to them (:class:`~dynid.identify.columns.ColumnMap`), match
columns named after a robot's joints to them, take the robot's units by default and check
every column's unit against the coordinate it holds (a prismatic joint is a length with a
force). What was done is in :attr:`Recording.history <dynid.identify.recording.Recording>`.

dynid's own CSV recordings (:class:`dynid.hardware.RecordingWriter`) start with a line
``# dynid recording {json}`` of the metadata of its NPZ archives (space, output kind, names,
units, limits, history) and the columns of each signal, so :func:`read_csv` reads them without
column options; their last row, when the recording stopped while writing it (no line break),
is dropped with a warning.

Positions in encoder increments (unit ``inc``, velocities ``inc/s``, accelerations ``inc/s²``)
are converted with the robot's encoder resolution (``robot=``); they are actuator coordinates.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .._files import excerpt
from ..errors import DataError, DynidWarning
from ._assemble import (
    SIGNALS,
    assemble,
    check_file,
    check_options,
    check_rate,
    user_units,
)
from ._csvmeta import layout
from .archives import read_npz, save_npz
from .columns import ColumnMap
from .recording import Recording
from .tables import Flat, Table, check_delimiter, open_table
from .trims import Trim, trim_of

__all__ = ["read_csv", "read_npz", "save_npz"]


def _is_column(c: object) -> bool:
    return isinstance(c, str) or (isinstance(c, int | np.integer) and not isinstance(c, bool)
                                  and c >= 0)


def _spec(key: str, cols: object):
    """A signal's columns, checked: ``None``, a :class:`Flat`, or a list of columns."""
    if key == "time":
        if cols is not None and not _is_column(cols):
            raise DataError(f"time: expected a column name or index (0 = first column), found "
                            f"{excerpt(cols)}; e.g. time='t' or time=0")
        return cols
    if cols is None or isinstance(cols, Flat):
        return cols
    if isinstance(cols, str) or not isinstance(cols, Sequence) or not cols or not all(
            _is_column(c) for c in cols):
        raise DataError(f"{key}: expected a list of column names or indices (0 = first "
                        f"column), one per coordinate, or Flat(n), found {excerpt(cols)}; "
                        f"e.g. {key}=['q1', 'q2'] or {key}=[1, 2]")
    return list(cols)


def _files(path, specs: dict) -> dict[str, Path]:
    """Signal → file."""
    if isinstance(path, Mapping):
        unknown = [k for k in path if k not in SIGNALS]
        if unknown:
            raise DataError(f"files: unknown signals {excerpt(unknown)}; expected some of "
                            f"{', '.join(SIGNALS)}, e.g. {{'positions': 'q.csv', 'output': "
                            "'tau.csv'}")
        for key in ("positions", "output"):
            if key not in path:
                raise DataError(f"files: no file for {key}; e.g. read_csv({{'positions': "
                                "'q.csv', 'output': 'tau.csv'}, rate=1000.0)")
        orphans = [k for k, v in specs.items() if v is not None and k not in path]
        if orphans:
            raise DataError(f"{orphans[0]}: columns given, but no file for {orphans[0]}; add "
                            f"it to the files, e.g. {{'{orphans[0]}': 'file.csv', ...}}")
        return {k: check_file(v) for k, v in path.items()}
    path = check_file(path)
    for key in ("positions", "output"):
        if specs[key] is None:
            raise DataError(f"{path.name}: {key}: give its columns, e.g. read_csv("
                            f"{path.name!r}, time='t', positions=['q1', 'q2'], output=['tau1', "
                            "'tau2'])")
    return {k: path for k, v in specs.items() if v is not None}


def _trims(trim, signals: dict[str, Path]) -> dict[str, Trim]:
    """Signal → the trim of its file."""
    if not isinstance(trim, Mapping):
        value = trim_of(trim)
        return dict.fromkeys(signals, value)
    unknown = [k for k in trim if k not in signals]
    if unknown:
        raise DataError(f"trim: {excerpt(unknown[0])} is not a signal read ({', '.join(signals)})"
                        "; give a trim per signal's file, e.g. trim={'positions': '20:20'}")
    out = {k: trim_of(v) for k, v in trim.items()}
    for key, path in signals.items():  # signals from one file share its trim
        same = [k for k, p in signals.items() if p == path and k in out]
        if len({str(out[k]) for k in same}) > 1:
            raise DataError(f"trim: {path.name} holds {', '.join(same)}, trimmed differently "
                            f"({', '.join(f'{k} {out[k]}' for k in same)}); a file has one trim")
        if same:
            out[key] = out[same[0]]
    return out


def _example(table: Table, signal: str) -> str:
    """An example call that reads ``signal`` from the table's first columns."""
    cols = list(table.header[:3]) if table.header is not None else \
        list(range(min(table.width, 3)))
    cols = cols[0] if signal == "time" else cols
    return f"read_csv({table.name!r}, {signal}={cols!r}, ...)"


def _indices(table: Table, key: str, spec) -> list[int] | None:
    """The columns a signal takes from its table (``None``: every value of the file)."""
    if isinstance(spec, Flat):
        return None if spec.column is None else [
            table.index(spec.column, key, _example(table, key))]
    if spec is None:
        if key == "time" and table.width != 1:
            raise DataError(f"{table.name} (time): {table.width} columns; say which is the "
                            "time, e.g. time='t' or time=0")
        return list(range(table.width))
    return [table.index(c, key, _example(table, key)) for c in ([spec] if key == "time"
                                                               else spec)]


def _extract(values: np.ndarray, table: Table, key: str, spec, idx) -> np.ndarray:
    """A signal's values from its table's (``idx``: its columns; ``None``: ``values`` is
    every value of the file): time (N,), the others (N, k)."""
    if isinstance(spec, Flat):
        where = "the file" if idx is None else f"column {spec.column!r}"
        flat = values if idx is None else values[:, idx[0]]
        if flat.size % spec.n:
            raise DataError(f"{table.name} ({key}): {flat.size} values in {where}, not a "
                            f"multiple of Flat(n={spec.n}) values per sample; is n the number "
                            "of coordinates?")
        return flat.reshape(-1, spec.n)
    return values[:, idx[0]] if key == "time" else values[:, idx]


def read_csv(path: str | Path | Mapping[str, str | Path], *,
             time: str | int | None = None, positions=None, output=None,
             velocities=None, accelerations=None, rate: float | None = None,
             header: bool | None = None, delimiter: str | None = ",",
             trim=None, timestamps: str = "check", column_map: ColumnMap | None = None,
             units: Mapping[str, str | Sequence[str]] | None = None, space: str | None = None,
             output_kind: str | None = None, names: Sequence[str] | None = None,
             output_limits: Sequence[float] | None = None, robot=None,
             resolution=None) -> Recording:
    """Read a recording from a text table, or from several of equal length.

    Parameters
    ----------
    path
        The file, or signal → file for a recording split over several files (each signal
        whose columns are not given takes every column of its file).
    time, positions, output, velocities, accelerations
        Columns of each signal: names from the header or indices (0 for the first column),
        one per coordinate (one for time), or :class:`~dynid.identify.tables.Flat` for a
        signal stored flattened row-major.
    rate
        Sample rate in Hz, for files without a time column (``t = k / rate``).
    header
        Whether the first row is a header (default: when one of its fields is not a number).
    delimiter
        Field separator; ``None`` for columns separated by spaces or tabs.
    trim
        Samples dropped at each file's start and end: a :class:`~dynid.identify.trims.Trim`,
        ``"START:END"`` (samples, or seconds ending in ``s``), or signal → trim of its file.
    timestamps
        What to do with irregular time stamps: ``"check"``, ``"strict"``, ``"resample"``,
        ``"uniform"`` or ``"keep"`` (see :mod:`dynid.identify.timestamps`).
    column_map
        A :class:`~dynid.identify.columns.ColumnMap` when the columns are not the coordinates
        (sums of joints, motor-side coordinates): applied as the file is read.
    units
        Units per signal as in :class:`~dynid.identify.recording.Recording` (``deg``, ``mm``,
        ``mA``, ``N``, ``ms``, ``inc``...); with a robot, the default is its units (m and N
        for a prismatic joint).
    space, output_kind, names, output_limits
        As in :class:`~dynid.identify.recording.Recording` (``space`` defaults to
        ``"basis"``); ``names`` default to the position columns' header names.
    robot
        The robot recorded: columns named after its joints (actuators, in actuator space)
        are put in its order (unknown or missing names raise), each column's unit is checked
        against its coordinate; needed for positions in encoder increments.
    resolution
        The positions' quantization step (SI units, one value or one per position column),
        as :class:`~dynid.identify.recording.Recording`'s; a dynid recording carries it.

    Examples
    --------
    A file with a header::

        rec = read_csv("run.csv", time="t", positions=["q1", "q2"], output=["tau1", "tau2"],
                       units={"positions": "deg"})

    Whitespace-separated, no header, no time column, 1 kHz, the first 2 s dropped::

        rec = read_csv("log.txt", delimiter=None, rate=1000.0, positions=[0, 1, 2],
                       output=[3, 4, 5], trim="2s")

    Positions and torques in two files (the Stäubli TX40 data; see ColumnMap)::

        rec = read_csv({"positions": "pos_read_data.csv", "output": "curr_data.csv"},
                       rate=5000.0, column_map=tx40)

    A recording written by :class:`dynid.hardware.RecordingWriter` carries its columns,
    units, space, output kind, names, limits and resolution (options given still win)::

        rec = read_csv("capture.csv", trim="1s")
    """
    specs = {key: _spec(key, cols) for key, cols in (
        ("time", time), ("positions", positions), ("output", output),
        ("velocities", velocities), ("accelerations", accelerations))}
    delimiter = check_delimiter(delimiter)
    if header not in (None, True, False):
        raise DataError(f"header: expected True, False or None (detect it), found "
                        f"{excerpt(header)}")
    rate = check_rate(rate)
    check_options(timestamps, column_map)
    own = layout(check_file(path)) if isinstance(path, str | Path) else None
    history, dropped = [], []
    if own is not None and own.meta is not None:
        if all(v is None for v in specs.values()):
            meta, cols = own.meta, own.meta["columns"]
            specs.update(time=cols["time"], positions=cols["positions"], output=cols["output"])
            header, delimiter = True, ","
            units = {**meta["units"], **user_units(units)}
            space, output_kind = space or meta["space"], output_kind or meta["output_kind"]
            names = names if names is not None else meta["names"]
            output_limits = output_limits if output_limits is not None else meta.get(
                "output_limits")
        if resolution is None:
            resolution = own.meta.get("resolution")
        if own.meta.get("source"):
            history.append(f"{Path(path).name}: {own.meta['source']}")
    files = _files(path, specs)
    trims = _trims(trim, files)
    arrays, labels = {}, {}
    for p in dict.fromkeys(files.values()):
        mine = [k for k, f in files.items() if f == p]
        flat = [k for k in mine if isinstance(specs[k], Flat) and specs[k].column is None]
        if flat and len(mine) > 1:
            raise DataError(f"{p.name}: {flat[0]} is read as every value of the file "
                            f"(Flat({specs[flat[0]].n})), so the file cannot also hold "
                            f"{', '.join(k for k in mine if k != flat[0])}")
        lay = own if own is not None else layout(p)
        table = open_table(p, header=header, delimiter=delimiter, skip=lay.skip, rows=lay.rows)
        if lay.note(p.name):
            warnings.warn(lay.note(p.name), DynidWarning, stacklevel=2)
            dropped.append(lay.note(p.name))
        idx = {k: _indices(table, k, specs[k]) for k in mine}
        values = table.flat() if flat else table.values([i for k in mine for i in idx[k]])
        for k in mine:
            arrays[k] = _extract(values, table, k, specs[k], idx[k])
            if table.header is not None and idx[k] is not None and not isinstance(
                    specs[k], Flat):
                labels[k] = [table.header[j] for j in idx[k]]
    if names is None and column_map is None:
        names = labels.get("positions")
    sources = {k: p.name for k, p in files.items()}
    read = ", ".join(f"{p.name} ({', '.join(k for k in files if files[k] == p)})"
                     for p in dict.fromkeys(files.values()))
    return assemble(arrays, sources, trims=trims, rate=rate, timestamps=timestamps,
                    column_map=column_map, units=units, space=space or "basis",
                    output_kind=output_kind, names=names, output_limits=output_limits,
                    resolution=resolution, robot=robot,
                    history=[*history, f"read {read}", *dropped])
