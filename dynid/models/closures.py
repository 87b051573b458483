"""Closure maps from basis coordinates to tree coordinates.

A closure ``q_t = φ(q)`` gives every joint of the (cut) tree from the ``n`` independent basis
coordinates, with ``G = ∂φ/∂q``, ``v_t = G v`` and ``a_t = G a + Ġ v``. By virtual work the
generalized force on the basis coordinates is ``τ = Gᵀ τ_t``, which is how regressor rows computed
on the tree are projected (:meth:`Closure.project`).

Every closure works on batches: ``q``, ``v``, ``a`` of shape (N, n).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

__all__ = ["Closure", "IdentityClosure"]


class Closure(ABC):
    """Map from basis coordinates (n) to tree coordinates (n_tree)."""

    n_basis: int
    n_tree: int
    #: Names of the basis coordinates.
    basis_names: tuple[str, ...]

    @abstractmethod
    def tree_state(self, q: np.ndarray, v: np.ndarray, a: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """Tree positions, velocities, accelerations (N, n_tree) and ``G`` for :meth:`project`.

        ``G`` is (N, n_tree, n), or (n_tree, n) when constant, or ``None`` for the identity.
        """

    @abstractmethod
    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """``G = ∂φ/∂q`` at each sample, shape (N, n_tree, n)."""

    @staticmethod
    def project(rows: np.ndarray, G: np.ndarray | None) -> np.ndarray:
        """Project tree-space rows (N, n_tree, p) to basis space (N, n, p): ``Gᵀ rows``."""
        if G is None:
            return rows
        if G.ndim == 2:
            return np.einsum("tb,ntp->nbp", G, rows, optimize=True)
        return np.einsum("ntb,ntp->nbp", G, rows, optimize=True)

    @property
    def is_identity(self) -> bool:
        return False


class IdentityClosure(Closure):
    """Serial and tree robots without loops: the basis coordinates are the tree joints."""

    def __init__(self, names: tuple[str, ...]):
        self.basis_names = tuple(names)
        self.n_basis = self.n_tree = len(names)

    def tree_state(self, q, v, a):
        return q, v, a, None

    def jacobian(self, q):
        return np.broadcast_to(np.eye(self.n_basis), (q.shape[0], self.n_basis, self.n_basis))

    @property
    def is_identity(self) -> bool:
        return True
