"""Reading NPZ archives safely: every array's header is checked before its data is read.

An NPZ archive is a zip file of ``.npy`` arrays. Only numeric arrays (and the text ``meta``
entry of dynid's own archives) are read, never pickled objects, and an array is read only when
its header's shape fits in the data the archive holds, so a damaged or hostile archive ends in
a :class:`~dynid.errors.DataError` naming it rather than in a huge allocation.
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .._files import excerpt
from ..errors import DataError

__all__ = ["npz_arrays"]

# What the meta entry of a dynid NPZ archive holds, and the JSON type of each entry.
_META = {"space": str, "output_kind": (str, type(None)), "names": list, "units": dict,
         "output_limits": list, "output_covariance": list, "history": list, "resolution": list}


def npz_arrays(path: Path, wanted: Mapping[str, str]) -> tuple[dict, dict]:
    """The arrays of an NPZ archive named in ``wanted`` (as float arrays) and its ``meta``
    entry. Every array's header is checked before its data is read: numbers only (no
    pickled objects), and no more data than the archive holds."""
    if not zipfile.is_zipfile(path):
        with path.open("rb") as f:
            magic = f.read(6)
        if magic == b"\x93NUMPY":
            raise DataError(f"{path.name}: a single NumPy array (.npy), not an NPZ archive of "
                            "signals; write one with numpy.savez(path, time=..., positions=..., "
                            "output=...) or dynid.identify.save_npz")
        raise DataError(f"{path.name}: not an NPZ archive (a zip file of NumPy arrays, as "
                        "numpy.savez and dynid.identify.save_npz write)")
    try:
        with zipfile.ZipFile(path) as archive:
            members = {n[:-4]: archive.getinfo(n) for n in archive.namelist()
                       if n.endswith(".npy")}
            arrays = {key: _npy(archive, members[key], key, path)
                      for key in set(wanted.values()) if key in members}
            for key in members.keys() - arrays.keys() - {"meta"}:
                arrays[key] = None  # present, not read: named in messages only
            meta = _meta(_npy(archive, members["meta"], "meta", path), path) \
                if "meta" in members else {}
    except DataError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError,
            NotImplementedError) as exc:
        raise DataError(f"{path.name}: the NPZ archive is damaged or unreadable "
                        f"({type(exc).__name__}: {excerpt(str(exc), 120)})") from None
    return arrays, meta


def _npy(archive: zipfile.ZipFile, info: zipfile.ZipInfo, key: str, path: Path) -> np.ndarray:
    """One array of an NPZ archive, after checking its header."""
    with archive.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise DataError(f"{path.name}: array {key!r} has .npy format version {version}; "
                            "expected 1.0 or 2.0 (numpy.savez)")
        text = key == "meta"
        if dtype.hasobject or dtype.fields is not None or dtype.kind not in (
                "U" if text else "biuf"):
            want = "text" if text else "numbers"
            raise DataError(f"{path.name}: array {key!r} holds {dtype} values, expected {want}")
        size = math.prod(shape) * dtype.itemsize
        if size > info.file_size:
            raise DataError(f"{path.name}: array {key!r} claims shape {excerpt(shape)} "
                            f"({size} bytes), more than its {info.file_size} bytes in the "
                            "archive; the archive is damaged")
        data = f.read(size)
        if len(data) < size or f.read(1):
            raise DataError(f"{path.name}: array {key!r} holds {len(data)} bytes, its header "
                            f"says {size}; the archive is damaged")
    arr = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return arr if text else arr.astype(float)


def _meta(entry: np.ndarray, path: Path) -> dict:
    """The ``meta`` entry of a dynid NPZ archive, checked."""
    if entry.size != 1:
        raise DataError(f"{path.name}: meta: expected one JSON text, found an array of shape "
                        f"{entry.shape}")
    try:
        meta = json.loads(str(entry.reshape(())))
    except (ValueError, RecursionError) as exc:
        raise DataError(f"{path.name}: meta: not valid JSON ({excerpt(str(exc), 100)})"
                        ) from None
    if not isinstance(meta, dict):
        raise DataError(f"{path.name}: meta: expected a JSON object, found "
                        f"{excerpt(meta)}")
    for key, value in meta.items():
        if key not in _META:
            raise DataError(f"{path.name}: meta: unknown entry {excerpt(key)}; expected "
                            f"{sorted(_META)}")
        if not isinstance(value, _META[key]):
            raise DataError(f"{path.name}: meta: {key}: unexpected value {excerpt(value)}")
    return meta
