"""Nonlinear closures of cut loops, solved with Pinocchio's kinematics.

The tree's joints split into basis joints (the independent coordinates, ``q_t = q`` on them) and
passive joints, which the loops determine. With ``c(q_t) = 0`` the equations of the cuts
(:mod:`dynid.models.cuts`) and ``J_c = [J_b  J_p]`` their Jacobian split into basis and passive
columns:

* positions: Newton's method on ``c(q_b, q_p) = 0`` for ``q_p``, started from the previous
  sample, or by continuation from the reference assembly so that the mechanism stays on the
  assembly branch of the reference;
* ``G``: the implicit-function theorem, ``∂q_p/∂q = −J_p⁺ J_b`` (exact, from Pinocchio's frame
  Jacobians; ``J_p⁺`` is the least-squares solution, which handles the redundant equations of
  planar loops);
* ``Ġ v``: from ``c̈ = J_c a_t + J̇_c v_t = 0`` at ``a = 0``: ``−J_p⁺ J̇_c v_t`` on the passive
  joints, with ``J̇_c v_t`` the cut frames' classical accelerations at zero joint acceleration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pinocchio as pin

from ..errors import ModelError
from .closures import NonlinearClosure
from .cuts import Cut, _frame_ids, cut_equations

__all__ = ["LoopClosure"]

_STEP = 0.2  # largest basis step (rad or m) between Newton solves of one continuation
_MAX_STEPS = 1000  # longest continuation (200 rad or m): bounds the time of one solve


class LoopClosure(NonlinearClosure):
    """Passive joints of a cut tree determined by its loop equations.

    Parameters
    ----------
    tree
        The cut tree (:class:`~dynid.models.tree.Tree`), holding the cut frames.
    basis
        Names of the tree joints that are the independent coordinates, in basis order.
    cuts
        The cut joints (:class:`~dynid.models.cuts.Cut`).
    reference
        An assembled configuration, tree joint name → position; joints not named are 0. The
        loops are solved from it, so it also selects the assembly branch.
    tolerance
        Convergence threshold on the cut equations (m, rad).
    """

    def __init__(self, tree, basis: Sequence[str], cuts: Sequence[Cut], *,
                 reference: Mapping[str, float] | None = None, tolerance: float = 1e-12,
                 max_iterations: int = 30):
        self.tree, self.cuts = tree, tuple(cuts)
        names = list(tree.joint_names)
        unknown = [b for b in basis if b not in names]
        if unknown or len(set(basis)) != len(basis):
            raise ModelError(f"loop closure basis: expected distinct tree joints from {names}, "
                             f"found {list(basis)}")
        if not self.cuts:
            raise ModelError("loop closure: at least one cut is needed to determine the "
                             "passive joints")
        self.basis_names = tuple(basis)
        self.n_basis, self.n_tree = len(basis), tree.n
        self._b = np.array([names.index(b) for b in basis])
        self._p = np.array([j for j in range(tree.n) if names[j] not in basis], dtype=int)
        self.passive_names = tuple(names[j] for j in self._p)
        ref = dict(reference or {})
        bad = [k for k in ref if k not in names]
        if bad:
            raise ModelError(f"loop closure reference: unknown joints {bad}; tree joints are "
                             f"{names}")
        self.reference = np.array([float(ref.get(n, 0.0)) for n in names])
        self.tolerance, self.max_iterations = float(tolerance), int(max_iterations)
        self._data = tree.model.createData()
        self._ids = _frame_ids(tree.model, self.cuts)
        self._cols = np.array([tree.model.joints[j + 1].idx_v for j in range(tree.n)])
        # Assemble the reference and check that the cuts determine every passive joint.
        solved = self._newton(self.reference.copy())
        if solved is None:
            raise ModelError(self._not_closing(self.reference[self._b]))
        self.reference, J = solved
        rank = np.linalg.matrix_rank(J[:, self._p], tol=1e-9)
        if rank < len(self._p):
            raise ModelError(f"loop closure: the cuts {[c.name for c in self.cuts]} determine "
                             f"only {rank} of the {len(self._p)} passive joints "
                             f"{list(self.passive_names)}; add a cut or make a joint a basis "
                             "coordinate")

    def tree_joints(self, tree_names):
        return [int(t) for t in self._b]

    @property
    def basis_reference(self) -> np.ndarray:
        """The basis coordinates of the reference assembly (n,)."""
        return self.reference[self._b].copy()

    def _not_closing(self, q: np.ndarray) -> str:
        return (f"closure does not close: the loops {[c.name for c in self.cuts]} cannot be "
                f"assembled at basis position {np.round(q, 4).tolist()} (no solution of the cut "
                f"equations to {self.tolerance:g} within {self.max_iterations} Newton steps); "
                "check the link dimensions, the cut frames and the reference assembly")

    def _equations(self, q_t: np.ndarray, v_t: np.ndarray | None = None):
        model, data = self.tree.model, self._data
        cfg = self.tree.configuration(q_t[None])[0]
        if v_t is not None:
            pin.forwardKinematics(model, data, cfg, v_t, np.zeros(model.nv))
        pin.computeJointJacobians(model, data, cfg)
        pin.updateFramePlacements(model, data)
        c, J, drift = cut_equations(model, data, self.cuts, self._ids, drift=v_t is not None)
        return c, J[:, self._cols], drift

    def _newton(self, q_t: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Solve the passive joints of ``q_t`` in place; the solution and the cut Jacobian
        there, or ``None`` when Newton's method does not converge."""
        for _ in range(self.max_iterations + 1):
            c, J, _ = self._equations(q_t)
            if np.abs(c).max() < self.tolerance:
                return q_t, J
            q_t[self._p] -= np.linalg.lstsq(J[:, self._p], c, rcond=None)[0]
        return None

    def _solve(self, q: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tree positions at basis position ``q`` by continuation from ``start``, and the cut
        Jacobian there."""
        distance = np.abs(q - start[self._b]).max()
        if not distance <= _MAX_STEPS * _STEP:
            raise ModelError(
                f"loop closure: basis position {np.round(q, 4).tolist()} is {distance:.3g} "
                f"(rad or m) from the last assembled position; the loops are followed from it "
                f"in steps of {_STEP:g}, at most {_MAX_STEPS} of them. Evaluate positions in "
                "sequence (a trajectory), or keep the basis coordinates within their real "
                "range")
        steps = max(1, int(np.ceil(distance / _STEP)))
        q_t, q0 = start.copy(), start[self._b].copy()
        for s in range(1, steps + 1):
            q_t[self._b] = q0 + (q - q0) * s / steps
            solved = self._newton(q_t)
            if solved is None:
                raise ModelError(self._not_closing(q))
            q_t, J = solved
        return q_t, J

    def evaluate(self, q, v):
        N = q.shape[0]
        q_t = np.empty((N, self.n_tree))
        G = np.zeros((N, self.n_tree, self.n_basis))
        bias = np.zeros((N, self.n_tree))
        G[:, self._b, np.arange(self.n_basis)] = 1.0
        previous = self.reference
        for k in range(N):
            near = np.abs(q[k] - previous[self._b]).max() <= _STEP
            previous, J = self._solve(q[k], previous if near else self.reference)
            q_t[k] = previous
            Jp_pinv = np.linalg.pinv(J[:, self._p])  # least squares, for G and Ġ v alike
            G[k, self._p] = -Jp_pinv @ J[:, self._b]
            if np.any(v[k]):
                _, _, drift = self._equations(q_t[k], G[k] @ v[k])
                bias[k, self._p] = -Jp_pinv @ drift
        return q_t, G, bias

    def __repr__(self) -> str:
        return (f"LoopClosure({self.n_basis} basis, passive {list(self.passive_names)}, "
                f"cuts {[c.name for c in self.cuts]})")
