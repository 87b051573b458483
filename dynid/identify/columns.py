"""Columns that are not joint coordinates: a linear map from the coordinates to the columns.

A log may hold, instead of each joint coordinate, a sum of joints (``q2 + q3``, the absolute
angle of a parallelogram's bar) or a motor-side coordinate (``q4 + 0.6697 q3`` behind a
coupled wrist, ``32 q1`` behind a gear). A :class:`ColumnMap` declares what each column is::

    column = M (q − joint_offset) + offset

with ``M`` square and invertible, and the readers apply its inverse as they read, so that the
recording holds the coordinates ``q``. Derivatives map without the offsets, ``q̇ = M⁻¹ ċ``.
Efforts map so that power is preserved: the power ``τ_cᵀ ċ`` of the columns' efforts equals
``τᵀ q̇`` of the coordinates' efforts for every motion, so ``τ = Mᵀ τ_c`` (the columns' efforts
are ``M⁻ᵀ τ``: the transposed inverse). Values are in SI units (after the columns' units are
converted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._files import excerpt
from ..errors import DataError, ModelError

__all__ = ["MAPPED", "ColumnMap", "load_column_map"]

#: The signals a column map may apply to.
MAPPED = ("positions", "velocities", "accelerations", "output")
_EXAMPLE = ("e.g. ColumnMap([[1, 0], [1, 1]]) for columns q1 and q1 + q2, or "
            "ColumnMap(np.diag([32, 32]), joint_offset=[0, -np.pi / 2]) for motor angles "
            "behind gears of ratio 32")


def _vector(value, n: int, name: str) -> np.ndarray:
    try:
        arr = np.zeros(n) if value is None else np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"ColumnMap {name}: expected {n} numbers, found {excerpt(value)} "
                        f"({exc})") from None
    if arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise DataError(f"ColumnMap {name}: expected {n} finite numbers, one per column, found "
                        f"{excerpt(value)}")
    return arr


@dataclass(frozen=True, eq=False)
class ColumnMap:
    """What the recorded columns are, as a linear map of the coordinates.

    Parameters
    ----------
    matrix
        Square, invertible ``M`` (n, n): row ``i`` says what column ``i`` (in the order the
        columns are listed) is, column ``j`` the weight of coordinate ``j`` (in the order of
        ``names``, or the robot's joints).
    offset
        Constant added to each column (SI units of the column), default 0.
    joint_offset
        Constant subtracted from each coordinate before the map (SI units), default 0: the
        coordinates are ``q = M⁻¹ (column − offset) + joint_offset``.
    signals
        The signals the map applies to (default all that are read); an output in current is
        not an effort of the columns and is never mapped.

    Examples
    --------
    The Stäubli TX40 logs motor angles (gear ratios 32, 32, 45, −48, 45, 32; motor 6 also
    turns with joint 5) and motor torques; its URDF's joints 2 and 3 are offset by ∓π/2::

        N = np.array([32, 32, 45, -48, 45, 32.0])
        M = np.diag(N)
        M[5, 4] = N[5]
        tx40 = ColumnMap(M, joint_offset=[0, -np.pi / 2, np.pi / 2, 0, 0, 0])
        rec = read_csv({"positions": "pos_read_data.csv", "output": "curr_data.csv"},
                       rate=5000.0, column_map=tx40)

    The joint torques are then ``Mᵀ τ_motor``.
    """

    matrix: np.ndarray
    offset: np.ndarray | None = None
    joint_offset: np.ndarray | None = None
    signals: tuple[str, ...] = MAPPED

    def __post_init__(self) -> None:
        try:
            M = np.array(self.matrix, dtype=float)
        except (TypeError, ValueError) as exc:
            raise DataError(f"ColumnMap: expected a square matrix of numbers, found "
                            f"{excerpt(self.matrix)} ({exc}); {_EXAMPLE}") from None
        if M.ndim != 2 or M.shape[0] != M.shape[1] or M.size == 0:
            raise DataError(f"ColumnMap: expected a square matrix (one row per column, one "
                            f"column per coordinate), found shape {M.shape}; {_EXAMPLE}")
        if not np.all(np.isfinite(M)):
            raise DataError(f"ColumnMap: expected finite numbers, found {excerpt(M.tolist())}")
        scale = np.abs(M).max()
        cond = np.linalg.cond(M / scale) if scale > 0 else np.inf
        if not cond < 1e12:
            raise DataError(f"ColumnMap: the matrix is singular (condition number {cond:.3g}): "
                            "the columns do not determine every coordinate. Each coordinate "
                            f"needs an independent column; {_EXAMPLE}")
        n = M.shape[0]
        signals = (self.signals,) if isinstance(self.signals, str) else self.signals
        if not isinstance(signals, Sequence) or not set(signals) <= set(MAPPED):
            raise DataError(f"ColumnMap signals: expected some of {', '.join(MAPPED)}, found "
                            f"{excerpt(self.signals)}")
        object.__setattr__(self, "matrix", M)
        object.__setattr__(self, "offset", _vector(self.offset, n, "offset"))
        object.__setattr__(self, "joint_offset", _vector(self.joint_offset, n, "joint_offset"))
        object.__setattr__(self, "signals", tuple(signals))

    @property
    def n(self) -> int:
        return self.matrix.shape[0]

    def coordinates(self, columns: np.ndarray) -> np.ndarray:
        """Coordinates ``M⁻¹ (c − offset) + joint_offset`` of positions ``c`` (N, n)."""
        return self.rates(columns - self.offset) + self.joint_offset

    def rates(self, columns: np.ndarray) -> np.ndarray:
        """Coordinate velocities (or accelerations) ``M⁻¹ ċ`` of the columns' (N, n)."""
        return np.linalg.solve(self.matrix, np.asarray(columns, dtype=float).T).T

    def efforts(self, columns: np.ndarray) -> np.ndarray:
        """Coordinate efforts ``Mᵀ τ_c`` of the columns' efforts (N, n): the same power."""
        return np.asarray(columns, dtype=float) @ self.matrix

    def to_columns(self, q: np.ndarray) -> np.ndarray:
        """The columns ``M (q − joint_offset) + offset`` of coordinates ``q`` (N, n)."""
        return (np.asarray(q, dtype=float) - self.joint_offset) @ self.matrix.T + self.offset

    def joint_families(self, families: Sequence[str]) -> list[str | None]:
        """The family (``angle``, ``length``) of each coordinate when the columns it is made of
        are all of one family, else ``None``."""
        inv = np.linalg.inv(self.matrix)
        out = []
        for row in inv:
            used = {families[i] for i in np.flatnonzero(np.abs(row) > 1e-12 * np.abs(row).max())}
            out.append(used.pop() if len(used) == 1 else None)
        return out

    def __repr__(self) -> str:
        return f"ColumnMap({self.n}×{self.n}, signals={self.signals})"


def load_column_map(path: str | Path) -> ColumnMap:
    """A column map from a YAML (or JSON) file, as the ``--column-map`` option reads it::

        # column = matrix (q - joint_offset) + offset
        matrix:
          - [32, 0]
          - [0, 32]
        joint_offset: [0, -pi/2]      # optional; numbers or expressions of pi and deg
        offset: [0, 0]                # optional
        signals: [positions, output]  # optional: the signals mapped (default all)
    """
    import yaml

    from .._files import read_structured
    from ..models import _schema as S

    where = f"column map {excerpt(str(path), 200)}"
    data = read_structured(path, "column map", "YAML", yaml.safe_load, yaml.YAMLError,
                           DataError)
    try:
        data = S.mapping(data, where, ("matrix", "offset", "joint_offset", "signals"))
        if "matrix" not in data:
            raise DataError(f"{where}: no matrix; e.g. matrix: [[1, 0], [1, 1]]")
        rows = data["matrix"]
        if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
            raise DataError(f"{where}: matrix: expected a list of rows, e.g. [[1, 0], [1, 1]], "
                            f"found {excerpt(rows)}")
        n = len(rows)
        matrix = [S.numbers(r, f"{where}: matrix[{i}]", n) for i, r in enumerate(rows)]
        vectors = {k: S.numbers(data[k], f"{where}: {k}", n) for k in ("offset", "joint_offset")
                   if data.get(k) is not None}
    except ModelError as exc:
        raise DataError(str(exc)) from None
    signals = data.get("signals", MAPPED)
    if isinstance(signals, list):
        signals = tuple(signals)
    try:
        return ColumnMap(matrix, signals=signals, **vectors)
    except DataError as exc:
        raise DataError(f"{where}: {exc}") from None
