"""From the signals read from one or more files to a :class:`~dynid.identify.recording.Recording`.

The readers extract each signal's columns from its file; :func:`assemble` does the rest, the
same for every format: each file's trim, the check that the files hold the same number of
samples, the time (a column, or the sample rate), the time stamps (``timestamps=``), columns
matched to the robot by name, encoder increments, a column map, the robot's units, and a
history of what was done. The checks of the options every reader takes (the file, the sample
rate, ``timestamps=``, the column map, the units) are here too.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .._files import excerpt
from ..errors import DataError
from . import units as U
from ._matching import check_units, column_order, robot_units
from .columns import ColumnMap
from .recording import MIN_SAMPLES, Recording
from .timestamps import TIMESTAMPS, regularize
from .trims import Trim

__all__ = ["SIGNALS", "assemble", "check_file", "check_options", "check_rate", "prefixed",
           "user_units"]

#: The signals a recording file may hold.
SIGNALS = ("time", "positions", "velocities", "accelerations", "output")
_INCREMENTS = {"positions": "inc", "velocities": "inc/s", "accelerations": "inc/s²"}
_DERIVATIVES = ("velocities", "accelerations")


@contextmanager
def prefixed(where: str, names: Sequence[str] = ()) -> Iterator[None]:
    """Prefix the messages of the errors raised in the block with ``where`` (the file), unless
    they already start with one of the files' ``names``."""
    try:
        yield
    except DataError as exc:
        text = str(exc)
        if text.startswith((where, *names)):
            raise
        raise DataError(f"{where}: {text}") from None


def check_file(path: str | Path) -> Path:
    if not isinstance(path, str | Path):
        raise DataError(f"recording file: expected a path, found {excerpt(path)}")
    path = Path(path)
    if not path.exists():
        raise DataError(f"recording file {excerpt(str(path), 200)} does not exist")
    if not path.is_file():
        raise DataError(f"recording file {excerpt(str(path), 200)} is not a regular file (a "
                        "directory?)")
    return path


def check_options(timestamps, column_map) -> None:
    if timestamps not in TIMESTAMPS:
        raise DataError(f"timestamps: expected one of {', '.join(TIMESTAMPS)}, found "
                        f"{excerpt(timestamps)}; e.g. timestamps='resample'")
    if column_map is not None and not isinstance(column_map, ColumnMap):
        raise DataError(f"column_map: expected a ColumnMap, found {excerpt(column_map)}; e.g. "
                        "column_map=ColumnMap([[1, 0], [1, 1]]) for columns q1 and q1 + q2")


def user_units(units: object) -> dict:
    if units is not None and not isinstance(units, Mapping):
        raise DataError(f"units: expected a mapping signal → unit, e.g. {{'positions': "
                        f"'deg'}}, found {excerpt(units)}")
    return dict(units or {})


def check_rate(rate: object) -> float | None:
    if rate is None:
        return None
    try:
        value = float(rate)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and 1e-3 <= value <= 1e6) or isinstance(rate, bool):
        raise DataError(f"rate: expected the sample rate in Hz, a number from 0.001 to 1e6, "
                        f"found {excerpt(rate)}; e.g. rate=1000.0")
    return value


def assemble(arrays: Mapping[str, np.ndarray], sources: Mapping[str, str], *,
             trims: Mapping[str, Trim], rate: float | None, timestamps: str,
             column_map: ColumnMap | None, units: Mapping, space: str,
             output_kind: str | None, names: Sequence[str] | None,
             output_limits=None, covariance=None, robot=None,
             history: Sequence[str] = (), resolution=None) -> Recording:
    """A recording from the raw signals of its files (``arrays``: signal → values in the
    file's units, time (N,), the others (N, k); ``sources``: signal → file name;
    ``trims``: signal → its file's trim)."""
    files = list(dict.fromkeys(sources.values()))
    where = " + ".join(files)
    units = user_units(units)
    notes = list(history)
    if "time" in arrays and rate is not None:
        raise DataError(f"{where}: give the time column or rate=, not both; with a time column "
                        "the rate is measured from it")
    if "time" not in arrays and rate is None:
        raise DataError(f"{where}: no time column; give the sample rate, e.g. rate=5000.0 "
                        "(--rate 5000), or the time column, e.g. time='t'")
    arrays = _trimmed(dict(arrays), sources, trims, rate, units, notes)
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{k} {n} (in {sources[k]})" for k, n in lengths.items())
        raise DataError(f"{where}: the signals of one recording need the same number of "
                        f"samples, found {listed}; trim the files to the same span, e.g. "
                        "trim={'output': '0:10'}")
    with prefixed(where, files):
        if "time" in arrays:
            time = np.asarray(arrays.pop("time"), dtype=float) * U.convert_factor(
                units.get("time", "s"), "time", "time")
        else:
            first = trims["positions"].samples(rate)[0] if trims.get("positions") else 0
            time = (first + np.arange(next(iter(lengths.values())))) / rate
            notes.append(f"time from the sample rate, {rate:g} Hz (t = k / rate, k counted "
                         "from the start of the positions' file)")
        units["time"] = "s"
        time, arrays, note = regularize(time, arrays, timestamps,
                                        where=f"{sources.get('time', where)} (time)")
        if note:
            notes.append(note)
        if column_map is None:
            arrays, units, names, output_limits, covariance, resolution = _in_robot_order(
                arrays, units, names, output_limits, covariance, robot, space, resolution)
        arrays, units = _increments(arrays, units, robot, space)
        if column_map is not None:
            arrays, units, names = _mapped(arrays, units, names, column_map, robot, space,
                                           output_kind, notes)
        elif robot is not None and "positions" not in units and \
                np.ndim(arrays["positions"]) == 2 and arrays["positions"].shape[1] == robot.n:
            units["positions"] = list(robot_units(robot, space)[0])
        rec = Recording(time, arrays["positions"], arrays["output"],
                        velocities=arrays.get("velocities"),
                        accelerations=arrays.get("accelerations"), space=space,
                        output_kind=output_kind, units=units, names=names,
                        output_limits=output_limits, output_covariance=covariance,
                        history=tuple(notes), resolution=resolution)
        if robot is not None:
            check_units(rec, robot, where)
    return rec


def _trimmed(arrays: dict, sources, trims, rate, units, notes: list) -> dict:
    """Each signal with its file's trim applied."""
    step = 1.0 / rate if rate is not None else None
    if step is None and any(t.in_seconds for t in trims.values()):
        t = np.asarray(arrays["time"], dtype=float) * U.convert_factor(
            units.get("time", "s"), "time", "time")
        dt = np.diff(t)
        positive = dt[np.isfinite(dt) & (dt > 0)]
        step = float(np.median(positive)) if positive.size else None
    done = set()
    for key in list(arrays):
        trim = trims.get(key)
        if not trim:
            continue
        first, last = trim.samples(None if step is None else 1.0 / step)
        N = len(arrays[key])
        if N - first - last < MIN_SAMPLES:
            raise DataError(f"{sources[key]}: trim {trim} drops {first} + {last} of its {N} "
                            f"samples ({key}), leaving fewer than {MIN_SAMPLES}; trim less")
        arrays[key] = arrays[key][first:N - last]
        if sources[key] not in done:
            done.add(sources[key])
            notes.append(f"{sources[key]}: trimmed {first} samples at the start and {last} at "
                         f"the end ({trim})")
    return arrays


def _in_robot_order(arrays: dict, units: dict, names, limits, covariance, robot, space: str,
                    resolution=None):
    """Columns matched to the robot by name (see :func:`column_order`), before any unit
    conversion: arrays, per-column units, names, output limits, covariance and resolution in
    the robot's order."""
    if robot is None or names is None:
        return arrays, units, names, limits, covariance, resolution
    order = column_order(names, robot, space)
    n = len(names)
    if order is None or list(order) == list(range(n)):
        return arrays, units, names, limits, covariance, resolution
    idx = list(order)

    def pick(x):
        return x[:, idx] if isinstance(x, np.ndarray) and x.ndim == 2 and x.shape[1] == n \
            else x

    arrays = {k: pick(v) for k, v in arrays.items()}
    units = {k: [u[j] for j in idx] if not isinstance(u, str) and isinstance(u, Sequence)
             and len(u) == n else u for k, u in units.items()}
    if limits is not None and len(limits) == n:
        limits = [limits[j] for j in idx]
    if covariance is not None and len(covariance) == n and \
            all(isinstance(r, list) and len(r) == n for r in covariance):
        covariance = [[covariance[i][j] for j in idx] for i in idx]
    if resolution is not None and np.ndim(resolution) == 1 and len(resolution) == n:
        resolution = [resolution[j] for j in idx]
    return arrays, units, tuple(names[j] for j in idx), limits, covariance, resolution


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


def _per_column(units: dict, key: str, n: int, default) -> list[str]:
    value = units.get(key, default)
    value = [value] * n if isinstance(value, str) else value
    if not isinstance(value, Sequence) or len(value) != n or not all(
            isinstance(u, str) for u in value):
        raise DataError(f"units of {key}: expected one unit or {n} (text), found "
                        f"{excerpt(units.get(key))}")
    return list(value)


def _mapped(arrays: dict, units: dict, names, cmap: ColumnMap, robot, space: str,
            output_kind: str | None, notes: list) -> tuple[dict, dict, tuple | None]:
    """The columns mapped to coordinates (SI units) by a column map."""
    q = np.asarray(arrays["positions"], dtype=float)
    n = cmap.n
    if q.ndim != 2 or q.shape[1] != n:
        raise DataError(f"column map: it maps {n} columns, but positions has "
                        f"{q.shape[1] if q.ndim == 2 else 1}; give one row per position column")
    pos = _per_column(units, "positions", n, "rad")
    fams = [U.family(u, "position", f"positions column {j}") for j, u in enumerate(pos)]
    col_si = [U.si_unit(u, "position", "positions") for u in pos]
    if robot is not None and robot.n == n:
        joint = list(robot_units(robot, space)[0])
    elif "positions" not in cmap.signals:
        joint = col_si
    else:
        joint = []
        for j, fam in enumerate(cmap.joint_families(fams)):
            if fam is None:
                raise DataError(f"column map: coordinate {j} is made of lengths and angles, so "
                                "its unit is unknown; pass robot= (its joints say which "
                                "are prismatic)")
            joint.append("m" if fam == "length" else "rad")
    out = dict(arrays)
    factors = np.array([U.convert_factor(u, "position", "positions") for u in pos])
    if "positions" in cmap.signals:
        out["positions"] = cmap.coordinates(q * factors)
    else:
        out["positions"] = q * factors
    new_units = {"time": units["time"], "positions": joint}
    suffix = {"velocities": "/s", "accelerations": "/s²"}
    qty = {"velocities": "velocity", "accelerations": "acceleration"}
    for key in _DERIVATIVES:
        if key not in arrays:
            continue
        cols = _per_column(units, key, n, [u + suffix[key] for u in col_si])
        f = np.array([U.convert_factor(u, qty[key], key) for u in cols])
        for j, u in enumerate(cols):
            if U.family(u, qty[key], key) != fams[j]:
                raise DataError(f"units of {key} column {j}: {u}, but its position is in "
                                f"{pos[j]}; they must measure the same quantity")
        x = np.asarray(arrays[key], dtype=float) * f
        out[key] = cmap.rates(x) if key in cmap.signals else x
    y_units = _per_column(units, "output", n, "A" if output_kind == "current" else
                          [U.EFFORT[u] for u in col_si])
    y_fams = [U.family(u, "output", "output") for u in y_units]
    y = np.asarray(arrays["output"], dtype=float)
    if y.ndim == 2 and y.shape[1] == n:
        y = y * np.array([U.convert_factor(u, "output", "output") for u in y_units])
    if "output" in cmap.signals and "current" not in y_fams and y.ndim == 2 and \
            y.shape[1] == n:
        for j, fam in enumerate(y_fams):
            if (fam == "force") != (fams[j] == "length"):
                raise DataError(f"column map: output column {j} is in {y_units[j]} but its "
                                f"position is in {pos[j]}; an effort on a length is a force (N), "
                                "on an angle a torque (N·m): give the columns' units")
        out["output"] = cmap.efforts(y)
        new_units["output"] = [U.EFFORT[u] for u in joint]
        mapped = "positions, derivatives and efforts (τ = Mᵀ τ_columns)"
    else:
        out["output"] = y
        new_units["output"] = [U.si_unit(u, "output", "output") for u in y_units]
        mapped = "positions and derivatives" + (" (the output, a current, stays per "
                                                "actuator)" if "current" in y_fams else "")
    if "positions" not in cmap.signals:
        mapped = ", ".join(s for s in cmap.signals)
    notes.append(f"columns mapped to coordinates by a {n}×{n} column map: {mapped}")
    if names is None and robot is not None and robot.n == n:
        names = robot.joint_names if space == "basis" else robot.actuator_names
    return out, new_units, names
