"""NPZ archives of recordings: :func:`read_npz` and :func:`save_npz`.

dynid's own NPZ files hold the arrays ``time``, ``positions``, ``output`` (and ``velocities``,
``accelerations`` when present) in SI units plus a ``meta`` entry (JSON text: space, output
kind, names, units, limits, history), so :func:`read_npz` reads them back without options.
Archives written by other tools are read with a ``keys`` mapping and ``units``. An archive is
read safely (:mod:`dynid.identify._npz`: numbers only, every array's header checked before its
data), then trimmed, its time stamps checked and its columns matched to the robot as
:func:`~dynid.identify.readers.read_csv` does (:mod:`dynid.identify._assemble`).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .._files import excerpt
from ..errors import DataError
from ._assemble import SIGNALS, assemble, check_file, check_options, check_rate, user_units
from ._npz import npz_arrays
from .columns import ColumnMap
from .recording import Recording
from .trims import trim_of

__all__ = ["read_npz", "save_npz"]


def _missing(name: str, available: Sequence[str], where: str) -> DataError:
    close = difflib.get_close_matches(name, available, n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    listed = excerpt([a if len(a) <= 30 else a[:29] + "…" for a in list(available)[:20]], 300)
    return DataError(f"{where}: no column {excerpt(name)}{hint} (available: {listed})")


def _shaped(arrays: dict, path: Path) -> dict:
    """Archive arrays as signals: time (N,), the others (N, k) (a vector is one column)."""
    out = {}
    for key, x in arrays.items():
        want = 1 if key == "time" else 2
        if x.ndim == 1 and key != "time":
            x = x[:, None]
        if x.ndim != want or (x.ndim and x.shape[0] == 0):
            shape = "(N,)" if key == "time" else "(N, n)"
            raise DataError(f"{path.name}: array for {key} has shape {x.shape}; expected "
                            f"{shape}")
        out[key] = x
    return out


def read_npz(path: str | Path, *, keys: Mapping[str, str] | None = None,
             units: Mapping[str, str | Sequence[str]] | None = None, space: str | None = None,
             output_kind: str | None = None, names: Sequence[str] | None = None,
             output_limits: Sequence[float] | None = None, rate: float | None = None,
             trim=None, timestamps: str = "check", column_map: ColumnMap | None = None,
             robot=None, resolution=None) -> Recording:
    """Read a recording from an NPZ archive.

    Parameters
    ----------
    path
        The archive.
    keys
        Signal → array name, for archives not written by :func:`save_npz`, e.g.
        ``{"time": "times", "output": "torques"}`` (signals not listed use their own name).
    rate
        Sample rate in Hz, for archives without a time array.
    units, space, output_kind, names, output_limits, trim, timestamps, column_map, robot,
    resolution
        As in :func:`read_csv`; dynid's own archives carry the first five and the resolution
        in their ``meta`` entry.

    Examples
    --------
    The KUKA LWR4+ measurements of FloBaRoID, stamped with jitter at 200 Hz::

        rec = read_npz("measurements_1.npz", keys={"time": "times", "output": "torques"},
                       timestamps="uniform", trim=500)
    """
    path = check_file(path)
    keys = dict(keys or {})
    unknown = set(keys) - set(SIGNALS)
    if unknown:
        raise DataError(f"keys: unknown signals {sorted(unknown)}; expected {list(SIGNALS)}")
    wanted = {signal: keys.get(signal, signal) for signal in SIGNALS}
    if not all(isinstance(k, str) for k in wanted.values()):
        raise DataError(f"keys: expected array names (text), found {excerpt(keys)}")
    rate = check_rate(rate)
    check_options(timestamps, column_map)
    found, meta = npz_arrays(path, wanted)
    arrays = {}
    for signal, key in wanted.items():
        if found.get(key) is not None:
            arrays[signal] = found[key]
        elif signal in ("positions", "output") or signal in keys or (
                signal == "time" and rate is None):
            raise _missing(key, sorted(found), f"{path.name} ({signal})")
    arrays = _shaped(arrays, path)
    space = space or meta.get("space", "basis")
    units = {**meta.get("units", {}), **user_units(units)}
    limits = output_limits if output_limits is not None else meta.get("output_limits")
    names = names if names is not None else meta.get("names")
    sources = dict.fromkeys(arrays, path.name)
    return assemble(arrays, sources, trims=dict.fromkeys(arrays, trim_of(trim)), rate=rate,
                    timestamps=timestamps, column_map=column_map, units=units, space=space,
                    output_kind=output_kind or meta.get("output_kind"), names=names,
                    output_limits=limits, covariance=meta.get("output_covariance"),
                    resolution=resolution if resolution is not None else meta.get("resolution"),
                    robot=robot, history=[*meta.get("history", []), f"read {path.name}"])


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
    if recording.history:
        meta["history"] = list(recording.history)
    if recording.resolution is not None:
        meta["resolution"] = recording.resolution.tolist()
    arrays = {"time": recording.time, "positions": recording.positions,
              "output": recording.output}
    for key in ("velocities", "accelerations"):
        if getattr(recording, key) is not None:
            arrays[key] = getattr(recording, key)
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
    return path
