"""Reading and writing recordings: CSV with a column mapping and units, NPZ archives.

dynid's own NPZ files hold the arrays ``time``, ``positions``, ``output`` (and ``velocities``,
``accelerations`` when present) in SI units plus a ``meta`` entry (JSON text: space, output
kind, names, units, limits), so :func:`read_npz` reads them back without options. Archives
written by other tools are read with a ``keys`` mapping and ``units``.

Positions in encoder increments (unit ``inc``, velocities ``inc/s``, accelerations ``inc/s²``)
are converted with the robot's encoder resolution (``robot=``); they are actuator coordinates.
"""

from __future__ import annotations

import csv
import difflib
import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .._files import excerpt
from ..errors import DataError
from ._matching import column_order
from ._npz import npz_arrays
from .recording import Recording

__all__ = ["read_csv", "read_npz", "save_npz"]

_SIGNALS = ("time", "positions", "velocities", "accelerations", "output")
_INCREMENTS = {"positions": "inc", "velocities": "inc/s", "accelerations": "inc/s²"}


@contextmanager
def _in_file(path: Path) -> Iterator[None]:
    """Prefix the messages of the errors raised in the block with the file's name."""
    try:
        yield
    except DataError as exc:
        text = str(exc)
        if text.startswith(path.name):
            raise
        raise DataError(f"{path.name}: {text}") from None


def _units(units: object) -> dict:
    if units is not None and not isinstance(units, Mapping):
        raise DataError(f"units: expected a mapping signal → unit, e.g. {{'positions': "
                        f"'deg'}}, found {excerpt(units)}")
    return dict(units or {})


def _check_file(path: str | Path) -> Path:
    path = Path(path)
    if not path.exists():
        raise DataError(f"recording file {excerpt(str(path), 200)} does not exist")
    if not path.is_file():
        raise DataError(f"recording file {excerpt(str(path), 200)} is not a regular file (a "
                        "directory?)")
    return path


def _in_robot_order(arrays: dict, units: dict, names, limits, covariance, robot, space: str):
    """Columns matched to the robot by name (see :func:`~dynid.identify.recording.
    column_order`), before any unit conversion: arrays, per-column units, names, output
    limits and covariance in the robot's order."""
    if robot is None or names is None:
        return arrays, units, names, limits, covariance
    order = column_order(names, robot, space)
    n = len(names)
    if order is None or list(order) == list(range(n)):
        return arrays, units, names, limits, covariance
    idx = list(order)

    def pick(x):
        return x[:, idx] if isinstance(x, np.ndarray) and x.ndim == 2 and x.shape[1] == n \
            else x

    arrays = {k: v if k == "time" else pick(v) for k, v in arrays.items()}
    units = {k: [u[j] for j in idx] if not isinstance(u, str) and isinstance(u, Sequence)
             and len(u) == n else u for k, u in units.items()}
    if limits is not None and len(limits) == n:
        limits = [limits[j] for j in idx]
    if covariance is not None and len(covariance) == n and \
            all(isinstance(r, list) and len(r) == n for r in covariance):
        covariance = [[covariance[i][j] for j in idx] for i in idx]
    return arrays, units, tuple(names[j] for j in idx), limits, covariance


def _missing(name: str, available: Sequence[str], where: str, hint: str = "") -> DataError:
    close = difflib.get_close_matches(name, available, n=3)
    if close and not hint:
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?"
    listed = excerpt([a if len(a) <= 30 else a[:29] + "…" for a in list(available)[:20]], 300)
    return DataError(f"{where}: no column {excerpt(name)}{hint} (available: {listed})")


def _delimiter_hint(header: list[str], delimiter: str) -> str:
    """A hint when the header is one field that another delimiter would split."""
    if len(header) != 1:
        return ""
    for other in (";", "\t", "|", ",", " "):
        if other != delimiter and other in header[0].strip():
            return (f"; the header is one field: are the columns separated by "
                    f"{other!r}? Pass delimiter={other!r} (--delimiter {other!r})")
    return ""


def _increments(arrays: dict, units: dict, robot, space: str) -> tuple[dict, dict]:
    """Convert signals given in encoder increments to rad on the motor side."""
    inc = {k for k, u in units.items() if k in _INCREMENTS and u in (
        _INCREMENTS[k], _INCREMENTS[k].replace("²", "^2"), "increments")}
    if not inc:
        return arrays, units
    if robot is None:
        raise DataError(f"units: {sorted(inc)} in encoder increments need the robot's encoder "
                        "resolution; pass robot=")
    if space != "actuator":
        raise DataError("units: encoder increments are actuator coordinates; pass "
                        "space='actuator'")
    arrays, units = dict(arrays), dict(units)
    for key in inc:
        arrays[key] = robot.transmission.from_increments(arrays[key],
                                                         derivative=key != "positions")
        units[key] = {"positions": "rad", "velocities": "rad/s",
                      "accelerations": "rad/s²"}[key]
    return arrays, units


def read_csv(path: str | Path, *, time: str, positions: Sequence[str], output: Sequence[str],
             velocities: Sequence[str] | None = None,
             accelerations: Sequence[str] | None = None,
             units: Mapping[str, str | Sequence[str]] | None = None, space: str = "basis",
             output_kind: str | None = None, names: Sequence[str] | None = None,
             output_limits: Sequence[float] | None = None, delimiter: str = ",",
             robot=None) -> Recording:
    """Read a recording from a CSV file with a header row.

    Parameters
    ----------
    path
        The CSV file.
    time, positions, output, velocities, accelerations
        Column names of each signal (one name for time, one per coordinate for the others).
    units
        Units per signal as in :class:`~dynid.identify.recording.Recording` (``deg``, ``mA``,
        ``ms``, ``inc``...).
    space, output_kind, names, output_limits
        As in :class:`~dynid.identify.recording.Recording`; ``names`` default to the position
        column names.
    delimiter
        Field separator.
    robot
        The robot recorded: columns named after its joints (actuators, in actuator space)
        are put in its order, and unknown or missing names raise (see
        :meth:`~dynid.identify.recording.Recording.matched`); needed for positions in encoder
        increments.
    """
    path = _check_file(path)
    if not isinstance(time, str):
        raise DataError(f"time: expected a column name, found {excerpt(time)}")
    for key, cols in (("positions", positions), ("output", output), ("velocities", velocities),
                      ("accelerations", accelerations)):
        if isinstance(cols, str) or (cols is not None and not all(
                isinstance(c, str) for c in cols)):
            raise DataError(f"{key}: expected a list of column names, one per coordinate, "
                            f"found {excerpt(cols)}")
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise DataError(f"delimiter: expected one character (not a quote or a line break), "
                        f"found {excerpt(delimiter)}")
    header = _header(path, delimiter)
    mapping = {"time": [time], "positions": list(positions), "output": list(output)}
    if velocities is not None:
        mapping["velocities"] = list(velocities)
    if accelerations is not None:
        mapping["accelerations"] = list(accelerations)
    columns = {}
    for key, cols in mapping.items():
        for c in cols:
            if c not in header:
                raise _missing(c, header, f"{path.name} ({key})", _delimiter_hint(
                    header, delimiter))
            if header.count(c) > 1:
                where = [i + 1 for i, h in enumerate(header) if h == c]
                raise DataError(f"{path.name}: column {c!r} ({key}) appears {len(where)} times "
                                f"in the header (fields {where}); rename the repeated columns")
        columns[key] = [header.index(c) for c in cols]
    table = _table(path, header, sorted({i for idx in columns.values() for i in idx}),
                   delimiter)
    arrays = {key: table[:, idx[0]] if key == "time" else table[:, idx]
              for key, idx in columns.items()}
    units = _units(units)
    names = names if names is not None else tuple(positions)
    with _in_file(path):
        arrays, units, names, output_limits, _ = _in_robot_order(
            arrays, units, names, output_limits, None, robot, space)
        arrays, units = _increments(arrays, units, robot, space)
        return Recording(arrays["time"], arrays["positions"], arrays["output"],
                         velocities=arrays.get("velocities"),
                         accelerations=arrays.get("accelerations"), space=space,
                         output_kind=output_kind, units=units, names=names,
                         output_limits=output_limits)


def _header(path: Path, delimiter: str) -> list[str]:
    """The header row of a CSV file, its fields stripped."""
    try:
        with _text(path) as f:
            header = [h.strip() for h in next(csv.reader(f, delimiter=delimiter), [])]
    except csv.Error as exc:
        raise DataError(f"{path.name}: not a readable CSV file ({exc}); is it a text file "
                        "with a header row?") from None
    if not header:
        raise DataError(f"{path.name}: expected a header row and samples, found 0 rows")
    return header


@contextmanager
def _text(path: Path) -> Iterator:
    """The file opened as text: UTF-8 (a byte-order mark is skipped), or UTF-16 when it starts
    with a UTF-16 byte-order mark; bytes that are not text raise naming the file."""
    try:
        with path.open(newline="", encoding=_encoding(path)) as f:
            yield f
    except UnicodeError as exc:
        where = f" (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})" if isinstance(
            exc, UnicodeDecodeError) else ""
        raise DataError(f"{path.name}: not a UTF-8 text file{where}; a CSV recording is text "
                        "with a header row. Is it a binary file (read .npz archives with "
                        "read_npz)?") from None


def _encoding(path: Path) -> str:
    with path.open("rb") as f:
        start = f.read(2)
    return "utf-16" if start in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"


def _table(path: Path, header: list[str], used: list[int], delimiter: str) -> np.ndarray:
    """The samples of a CSV file after its header (N, len(header)), read at once; a file
    numpy cannot read (a missing field, text) is parsed row by row, which names the bad cell
    of a ``used`` column (the others are then NaN)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # no samples: reported below
            table = np.loadtxt(path, delimiter=delimiter, skiprows=1, ndmin=2, comments=None,
                               quotechar='"', dtype=float, encoding=_encoding(path))
        if table.shape[0] and table.shape[1] == len(header):
            return table
    except (ValueError, TypeError):  # text or a missing field: found row by row below
        pass
    return _parse_rows(path, header, used, delimiter)


def _parse_rows(path: Path, header: list[str], used: list[int], delimiter: str
                ) -> np.ndarray:
    try:
        with _text(path) as f:
            rows = list(csv.reader(f, delimiter=delimiter))[1:]
    except csv.Error as exc:
        raise DataError(f"{path.name}: not a readable CSV file ({exc})") from None
    if not rows:
        raise DataError(f"{path.name}: expected a header row and samples, found 1 rows")
    values = np.full((len(rows), len(header)), np.nan)
    for r, row in enumerate(rows):
        if len(row) != len(header):
            raise DataError(f"{path.name}: row {r + 2} has {len(row)} fields, the header "
                            f"has {len(header)}")
        for i in used:
            try:
                values[r, i] = float(row[i])
            except ValueError:
                raise DataError(f"{path.name}: row {r + 2}, column {header[i]!r}: "
                                f"{excerpt(row[i])} is not a number") from None
    return values


def read_npz(path: str | Path, *, keys: Mapping[str, str] | None = None,
             units: Mapping[str, str | Sequence[str]] | None = None, space: str | None = None,
             output_kind: str | None = None, names: Sequence[str] | None = None,
             output_limits: Sequence[float] | None = None, robot=None) -> Recording:
    """Read a recording from an NPZ archive.

    Parameters
    ----------
    path
        The archive.
    keys
        Signal → array name, for archives not written by :func:`save_npz`, e.g.
        ``{"time": "times", "output": "torques"}`` (signals not listed use their own name).
    units, space, output_kind, names, output_limits, robot
        As in :func:`read_csv`; dynid's own archives carry them in their ``meta`` entry.
    """
    path = _check_file(path)
    keys = dict(keys or {})
    unknown = set(keys) - set(_SIGNALS)
    if unknown:
        raise DataError(f"keys: unknown signals {sorted(unknown)}; expected {list(_SIGNALS)}")
    wanted = {signal: keys.get(signal, signal) for signal in _SIGNALS}
    if not all(isinstance(k, str) for k in wanted.values()):
        raise DataError(f"keys: expected array names (text), found {excerpt(keys)}")
    found, meta = npz_arrays(path, wanted)
    arrays = {}
    for signal, key in wanted.items():
        if key in found:
            arrays[signal] = found[key]
        elif signal in ("time", "positions", "output") or signal in keys:
            raise _missing(key, sorted(found), f"{path.name} ({signal})")
    space = space or meta.get("space", "basis")
    units = {**meta.get("units", {}), **_units(units)}
    limits = output_limits if output_limits is not None else meta.get("output_limits")
    names = names if names is not None else meta.get("names")
    with _in_file(path):
        arrays, units, names, limits, cov = _in_robot_order(
            arrays, units, names, limits, meta.get("output_covariance"), robot, space)
        arrays, units = _increments(arrays, units, robot, space)
        return Recording(arrays["time"], arrays["positions"], arrays["output"],
                         velocities=arrays.get("velocities"),
                         accelerations=arrays.get("accelerations"), space=space,
                         output_kind=output_kind or meta.get("output_kind"), units=units,
                         names=names, output_limits=limits, output_covariance=cov)


def save_npz(recording: Recording, path: str | Path) -> Path:
    """Write a recording (SI units, with its metadata) to an NPZ archive; returns its path."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    meta = {"space": recording.space, "output_kind": recording.output_kind,
            "names": list(recording.names),
            "units": {k: list(v) if not isinstance(v, str) else v
                      for k, v in recording.units.items()}}
    if recording.output_limits is not None:
        meta["output_limits"] = recording.output_limits.tolist()
    if recording.output_covariance is not None:
        meta["output_covariance"] = recording.output_covariance.tolist()
    arrays = {"time": recording.time, "positions": recording.positions,
              "output": recording.output}
    for key in ("velocities", "accelerations"):
        if getattr(recording, key) is not None:
            arrays[key] = getattr(recording, key)
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
    return path
