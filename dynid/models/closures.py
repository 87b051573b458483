"""Closure maps from basis coordinates to tree coordinates.

A closure ``q_t = φ(q)`` gives every joint of the (cut) tree from the ``n`` independent basis
coordinates, with ``G = ∂φ/∂q``, ``v_t = G v`` and ``a_t = G a + Ġ v``. By virtual work the
generalized force on the basis coordinates is ``τ = Gᵀ τ_t``, which is how regressor rows computed
on the tree are projected (:meth:`Closure.project`).

Three kinds:

* :class:`IdentityClosure`: serial and tree robots, ``q_t = q``;
* :class:`LinearClosure`: ``q_t = A q + b`` with a constant ``A`` — parallelograms, whose passive
  joints are linear combinations of the basis joints (Wang), and coordinate changes such as the
  two jaws of a gripper from its yaw and opening angles;
* :class:`NonlinearClosure`: ``φ``, ``G`` and ``Ġ v`` given analytically by a subclass (for
  example :class:`~dynid.models.loops.LoopClosure`, which solves the loop equations of a cut
  tree with Pinocchio's frame Jacobians).

Closed loops are cut: the tree is open, and each cut names two frames that the real mechanism
keeps together (a :class:`~dynid.models.cuts.Cut`). :meth:`Closure.check` verifies that a closure
keeps them together, so a wrong dimension or a wrong row of ``A`` is caught when the robot is
built rather than as wrong parameters later.

Every closure works on batches: ``q``, ``v``, ``a`` of shape (N, n).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from ..errors import ModelError
from .cuts import Cut, cut_residuals

__all__ = ["Closure", "IdentityClosure", "LinearClosure", "NonlinearClosure"]


class Closure(ABC):
    """Map from basis coordinates (n) to tree coordinates (n_tree)."""

    n_basis: int
    n_tree: int
    #: Names of the basis coordinates.
    basis_names: tuple[str, ...]
    #: Pairs of frames the mechanism keeps together (the cut joints of its loops).
    cuts: tuple[Cut, ...] = ()

    @abstractmethod
    def tree_state(self, q: np.ndarray, v: np.ndarray, a: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """Tree positions, velocities, accelerations (N, n_tree) and ``G`` for :meth:`project`.

        ``G`` is (N, n_tree, n), or (n_tree, n) when constant, or ``None`` for the identity.
        """

    @abstractmethod
    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """``G = ∂φ/∂q`` at each sample, shape (N, n_tree, n)."""

    def positions(self, q: np.ndarray) -> np.ndarray:
        """Tree positions ``φ(q)`` (N, n_tree)."""
        zero = np.zeros_like(q)
        return self.tree_state(q, zero, zero)[0]

    @staticmethod
    def project(rows: np.ndarray, G: np.ndarray | None) -> np.ndarray:
        """Project tree-space rows (N, n_tree, p) to basis space (N, n, p): ``Gᵀ rows``."""
        if G is None:
            return rows
        if G.ndim == 2:
            return np.matmul(G.T, rows)
        return np.matmul(np.swapaxes(G, 1, 2), rows)

    @property
    def is_identity(self) -> bool:
        return False

    def rigid_rows(self, tree):
        """A closed-form evaluator of the tree's link rows on the basis coordinates, called as
        ``rows(q, v, a, q_t, v_t, a_t, G, out=None)`` → (N, n, 10 k) (written into ``out``
        when given), or ``None`` (the default): the regressor then projects Pinocchio's
        joint-torque regressor."""
        return None

    def tree_joints(self, tree_names: Sequence[str]) -> list[int | None]:
        """Per basis coordinate, the index of the tree joint it is (same name, ``q_t = q`` on
        it), or ``None``: such a coordinate takes that joint's limits."""
        return [None] * self.n_basis

    def check(self, tree, q: np.ndarray, *, tolerance: float = 1e-9) -> float:
        """Largest cut residual (m or rad) over the basis positions ``q`` (N, n).

        Raises :class:`~dynid.errors.ModelError` naming the cut when a residual exceeds
        ``tolerance``: the closure does not close.
        """
        if not self.cuts:
            return 0.0
        q_t = self.positions(np.atleast_2d(q))
        res = cut_residuals(tree, self.cuts, q_t)  # (N, n_cuts)
        worst = float(res.max(initial=0.0))
        if worst > tolerance:
            k, c = np.unravel_index(np.argmax(res), res.shape)
            cut = self.cuts[c]
            raise ModelError(
                f"closure does not close: cut {cut.name} ({cut.kind} joint between frames "
                f"{cut.frames[0]!r} and {cut.frames[1]!r}) is off by {res[k, c]:.3g} at basis "
                f"position {np.round(np.atleast_2d(q)[k], 4).tolist()}; expected at most "
                f"{tolerance:g}. Check the closure rows and the link dimensions of the loop")
        return worst


class IdentityClosure(Closure):
    """Serial and tree robots without loops: the basis coordinates are the tree joints."""

    def __init__(self, names: Sequence[str]):
        self.basis_names = tuple(names)
        self.n_basis = self.n_tree = len(self.basis_names)

    def tree_state(self, q, v, a):
        return q, v, a, None

    def jacobian(self, q):
        return np.broadcast_to(np.eye(self.n_basis), (q.shape[0], self.n_basis, self.n_basis))

    @property
    def is_identity(self) -> bool:
        return True

    def tree_joints(self, tree_names):
        return list(range(self.n_basis))


class LinearClosure(Closure):
    """Constant linear closure ``q_t = A q + b``: ``G = A``, ``Ġ v = 0``.

    Parameters
    ----------
    matrix
        ``A`` (n_tree, n): each tree joint as a combination of the basis coordinates.
    offset
        ``b`` (n_tree,), rad or m (default zero).
    basis_names
        Names of the n basis coordinates.
    cuts
        Frame pairs the mechanism keeps together, checked by :meth:`Closure.check`.
    """

    def __init__(self, matrix: np.ndarray, basis_names: Sequence[str], *,
                 offset: np.ndarray | None = None, cuts: Sequence[Cut] = ()):
        A = np.asarray(matrix, dtype=float)
        self.basis_names = tuple(basis_names)
        n = len(self.basis_names)
        if A.ndim != 2 or A.shape[1] != n or not np.all(np.isfinite(A)):
            raise ModelError(f"linear closure matrix: expected a finite array of shape "
                             f"(n_tree, {n}) for basis {list(self.basis_names)}, found shape "
                             f"{A.shape}")
        if np.linalg.matrix_rank(A) < n:
            raise ModelError(f"linear closure matrix has rank {np.linalg.matrix_rank(A)} < {n}: "
                             "some basis coordinate moves no tree joint (or two move the same "
                             "combination); every basis coordinate must be independent")
        b = np.zeros(A.shape[0]) if offset is None else np.asarray(offset, dtype=float)
        if b.shape != (A.shape[0],) or not np.all(np.isfinite(b)):
            raise ModelError(f"linear closure offset: expected {A.shape[0]} finite values, "
                             f"found shape {b.shape}")
        self.matrix, self.offset = A, b
        self.n_tree, self.n_basis = A.shape
        self.cuts = tuple(cuts)
        self._AT = np.ascontiguousarray(A.T)

    def tree_state(self, q, v, a):
        AT = self._AT
        return q @ AT + self.offset, v @ AT, a @ AT, self.matrix

    def jacobian(self, q):
        return np.broadcast_to(self.matrix, (q.shape[0], *self.matrix.shape))

    def tree_joints(self, tree_names):
        out: list[int | None] = []
        for k, name in enumerate(self.basis_names):
            t = list(tree_names).index(name) if name in tree_names else None
            unit = t is not None and self.offset[t] == 0 and self.matrix[t, k] == 1 \
                and np.count_nonzero(self.matrix[t]) == 1
            out.append(t if unit else None)
        return out

    def __repr__(self) -> str:
        return f"LinearClosure({self.n_basis} basis → {self.n_tree} tree joints)"


class NonlinearClosure(Closure):
    """A closure whose ``φ``, ``G`` and ``Ġ v`` a subclass gives analytically.

    Subclasses implement :meth:`evaluate`; the batch assembly, projection and checks are here.
    """

    @abstractmethod
    def evaluate(self, q: np.ndarray, v: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``φ(q)`` (N, n_tree), ``G(q)`` (N, n_tree, n) and ``Ġ v`` (N, n_tree)."""

    def tree_state(self, q, v, a):
        q_t, G, bias = self.evaluate(q, v)
        v_t = np.einsum("ntb,nb->nt", G, v)
        a_t = np.einsum("ntb,nb->nt", G, a) + bias
        return q_t, v_t, a_t, G

    def jacobian(self, q):
        return self.evaluate(q, np.zeros_like(q))[1]

    def positions(self, q):
        return self.evaluate(q, np.zeros_like(q))[0]
