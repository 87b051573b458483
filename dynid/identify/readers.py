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
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import DataError
from .recording import Recording

__all__ = ["read_csv", "read_npz", "save_npz"]

_SIGNALS = ("time", "positions", "velocities", "accelerations", "output")
_INCREMENTS = {"positions": "inc", "velocities": "inc/s", "accelerations": "inc/s²"}


def _missing(name: str, available: Sequence[str], where: str) -> DataError:
    close = difflib.get_close_matches(name, available, n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return DataError(f"{where}: no column {name!r}{hint} (available: {list(available)[:20]})")


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
        Needed only for positions in encoder increments.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"recording file {str(path)!r} does not exist")
    with path.open(newline="") as f:
        header = [h.strip() for h in next(csv.reader(f, delimiter=delimiter), [])]
    if not header:
        raise DataError(f"{path.name}: expected a header row and samples, found 0 rows")
    mapping = {"time": [time], "positions": list(positions), "output": list(output)}
    if velocities is not None:
        mapping["velocities"] = list(velocities)
    if accelerations is not None:
        mapping["accelerations"] = list(accelerations)
    columns = {}
    for key, cols in mapping.items():
        for c in cols:
            if c not in header:
                raise _missing(c, header, f"{path.name} ({key})")
        columns[key] = [header.index(c) for c in cols]
    table = _table(path, header, sorted({i for idx in columns.values() for i in idx}),
                   delimiter)
    arrays = {key: table[:, idx[0]] if key == "time" else table[:, idx]
              for key, idx in columns.items()}
    units = dict(units or {})
    arrays, units = _increments(arrays, units, robot, space)
    return Recording(arrays["time"], arrays["positions"], arrays["output"],
                     velocities=arrays.get("velocities"),
                     accelerations=arrays.get("accelerations"), space=space,
                     output_kind=output_kind, units=units,
                     names=tuple(names) if names is not None else tuple(positions),
                     output_limits=output_limits)


def _table(path: Path, header: list[str], used: list[int], delimiter: str) -> np.ndarray:
    """The samples of a CSV file after its header (N, len(header)), read at once; a file
    numpy cannot read (a missing field, text) is parsed row by row, which names the bad cell
    of a ``used`` column (the others are then NaN)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # no samples: reported below
            table = np.loadtxt(path, delimiter=delimiter, skiprows=1, ndmin=2, comments=None,
                               quotechar='"', dtype=float)
        if table.shape[0] and table.shape[1] == len(header):
            return table
    except ValueError:
        pass
    return _parse_rows(path, header, used, delimiter)


def _parse_rows(path: Path, header: list[str], used: list[int], delimiter: str
                ) -> np.ndarray:
    with path.open(newline="") as f:
        rows = list(csv.reader(f, delimiter=delimiter))[1:]
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
                                f"{row[i]!r} is not a number") from None
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
    path = Path(path)
    if not path.is_file():
        raise DataError(f"recording file {str(path)!r} does not exist")
    keys = dict(keys or {})
    unknown = set(keys) - set(_SIGNALS)
    if unknown:
        raise DataError(f"keys: unknown signals {sorted(unknown)}; expected {list(_SIGNALS)}")
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise DataError(f"{path.name}: not a readable NPZ archive ({exc})") from None
    with archive:
        meta = json.loads(str(archive["meta"])) if "meta" in archive.files else {}
        arrays = {}
        for signal in _SIGNALS:
            key = keys.get(signal, signal)
            if key in archive.files:
                arrays[signal] = np.asarray(archive[key], dtype=float)
            elif signal in ("time", "positions", "output") or signal in keys:
                raise _missing(key, archive.files, f"{path.name} ({signal})")
    space = space or meta.get("space", "basis")
    units = dict(units or meta.get("units", {}))
    arrays, units = _increments(arrays, units, robot, space)
    limits = output_limits if output_limits is not None else meta.get("output_limits")
    return Recording(arrays["time"], arrays["positions"], arrays["output"],
                     velocities=arrays.get("velocities"),
                     accelerations=arrays.get("accelerations"), space=space,
                     output_kind=output_kind or meta.get("output_kind"), units=units,
                     names=tuple(names) if names is not None else (
                         tuple(meta["names"]) if "names" in meta else None),
                     output_limits=limits, output_covariance=meta.get("output_covariance"))


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
