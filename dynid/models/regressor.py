"""The extended regressor: the model output is linear in the parameters, ``y = Y(q, v, a) θ``.

For a batch of N basis states, ``Y`` has shape (N, n, p): one row per output (basis coordinate
for joint torque, actuator for motor torque or current), one column per parameter of
``robot.parameters``. It is assembled from

* Pinocchio's joint-torque regressor of the links on the tree, ``Y_t(q_t, v_t, a_t)``,
  projected to the basis coordinates by the closure (``Gᵀ Y_t``);
* the extra terms, each in its own space (tree, basis or actuator), projected likewise;
* the transmission: actuator-space rows are ``K⁻ᵀ`` times basis-space rows, and actuator
  terms reach the joints as ``Kᵀ`` times their rows;
* the output gain: current rows are motor-torque rows divided by ``k_T``.

Evaluation runs in chunks of samples (``chunk_size``) so that memory stays bounded; the one
per-sample loop is the call into Pinocchio.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pinocchio as pin

from .. import _validate
from .robot import Robot

__all__ = ["Regressor"]


class Regressor:
    """Evaluate a robot's extended regressor on batches of states.

    Parameters
    ----------
    robot
        The robot description.
    chunk_size
        Samples evaluated at once by :meth:`chunks`.

    Examples
    --------
    >>> reg = Regressor(robot)
    >>> Y = reg(q, v, a)              # (N, n, p)
    >>> y = Y @ robot.prior           # predicted output, (N, n)
    """

    def __init__(self, robot: Robot, *, chunk_size: int = 2048):
        self.robot = robot
        self.chunk_size = int(chunk_size)
        self._data = robot.tree.model.createData()
        self.n_links = 10 * robot.tree.n
        self._tree_terms = [(t, c) for t, c in zip(robot.terms, robot.term_columns, strict=True)
                            if t.space == "tree"]
        self._basis_terms = [(t, c) for t, c in zip(robot.terms, robot.term_columns, strict=True)
                             if t.space == "basis"]
        self._act_terms = [(t, c) for t, c in zip(robot.terms, robot.term_columns, strict=True)
                           if t.space == "actuator"]
        tree_cols = [np.arange(self.n_links)] + [c for _, c in self._tree_terms]
        self._tree_cols = np.concatenate(tree_cols)
        self._act_cols = (np.concatenate([c for _, c in self._act_terms])
                          if self._act_terms else np.zeros(0, dtype=int))

    @property
    def parameters(self):
        return self.robot.parameters

    @property
    def shape(self) -> tuple[int, int]:
        """(rows per sample, columns)."""
        return self.robot.n, len(self.robot.parameters)

    def __call__(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Regressor (N, n, p) at basis positions, velocities and accelerations (N, n)."""
        q, v, a = _validate.states(q, v, a, self.robot.n)
        return self._evaluate(q, v, a)

    def chunks(self, q: np.ndarray, v: np.ndarray, a: np.ndarray
               ) -> Iterator[tuple[slice, np.ndarray]]:
        """Yield ``(samples, Y)`` for consecutive chunks of at most ``chunk_size`` samples."""
        q, v, a = _validate.states(q, v, a, self.robot.n)
        for start in range(0, q.shape[0], self.chunk_size):
            sl = slice(start, min(start + self.chunk_size, q.shape[0]))
            yield sl, self._evaluate(q[sl], v[sl], a[sl])

    def predict(self, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                theta: np.ndarray) -> np.ndarray:
        """Model output ``Y θ`` (N, n), evaluated chunk by chunk."""
        theta = _validate.vector(theta, "theta", len(self.robot.parameters))
        q, v, a = _validate.states(q, v, a, self.robot.n)
        out = np.empty((q.shape[0], self.robot.n))
        for sl, Y in self.chunks(q, v, a):
            out[sl] = Y @ theta
        return out

    # Assembly ------------------------------------------------------------------------------
    def _links(self, q_t: np.ndarray, v_t: np.ndarray, a_t: np.ndarray,
               out: np.ndarray) -> None:
        """Pinocchio's joint-torque regressor per sample, written into ``out`` (N, n_t, 10 n_t)."""
        model, data = self.robot.tree.model, self._data
        f = pin.computeJointTorqueRegressor
        pq = self.robot.tree.configuration(q_t)
        for k in range(q_t.shape[0]):
            out[k] = f(model, data, pq[k], v_t[k], a_t[k])

    def _evaluate(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        robot = self.robot
        N, n, p = q.shape[0], robot.n, len(robot.parameters)
        Y = np.zeros((N, n, p))
        q_t, v_t, a_t, G = robot.closure.tree_state(q, v, a)
        if G is None:
            self._links(q_t, v_t, a_t, Y[:, :, :self.n_links])
            tree_rows = Y
        else:
            tree_rows = np.zeros((N, robot.tree.n, p))
            self._links(q_t, v_t, a_t, tree_rows[:, :, :self.n_links])
        for term, cols in self._tree_terms:
            tree_rows[:, term.rows, cols[0]:cols[-1] + 1] += term.columns(q_t, v_t, a_t)
        if G is not None:
            Y[:, :, self._tree_cols] = robot.closure.project(tree_rows[:, :, self._tree_cols], G)
        for term, cols in self._basis_terms:
            Y[:, term.rows, cols[0]:cols[-1] + 1] += term.columns(q, v, a)

        trans = robot.transmission
        if robot.output == "joint_torque" and trans.is_direct:
            for term, cols in self._act_terms:
                Y[:, term.rows, cols[0]:cols[-1] + 1] += term.columns(q, v, a)
            return Y
        q_m, v_m, a_m, gp = trans.actuator_state(q, v, a)
        act = np.zeros((N, n, len(self._act_cols)))
        offset = 0
        for term, cols in self._act_terms:
            act[:, term.rows, offset:offset + len(cols)] += term.columns(q_m, v_m, a_m)
            offset += len(cols)
        if robot.output == "joint_torque":
            if len(self._act_cols):
                Y[:, :, self._act_cols] = trans.to_basis(act, gp)
            return Y
        Y = trans.to_actuator(Y, gp)
        if len(self._act_cols):
            Y[:, :, self._act_cols] = act
        if robot.output == "current":
            Y /= trans.torque_constants[None, :, None]
        return Y
