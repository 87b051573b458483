"""The extended regressor: the model output is linear in the parameters, ``y = Y(q, v, a) θ``.

For a batch of N basis states, ``Y`` has shape (N, n, p): one row per output (basis coordinate
for joint torque, actuator for motor torque or current), one column per parameter of
``robot.parameters``. It is assembled from

* Pinocchio's joint-torque regressor of the links on the tree, ``Y_t(q_t, v_t, a_t)``,
  projected to the basis coordinates by the closure (``Gᵀ Y_t``);
* the columns of the bodies attached to links, the link's columns times the map ``T`` of the
  body's fixed pose (:mod:`dynid.models.bodies`);
* the extra terms, each in its own space (tree, basis or actuator), projected likewise;
* the transmission: actuator-space rows are ``K⁻ᵀ`` times basis-space rows, and actuator
  terms reach the joints as ``Kᵀ`` times their rows;
* the output gain: current rows are motor-torque rows divided by ``k_T``.

Known bodies (fixed values, not identified) make the model affine in the parameters,
``y = Y θ + y_known``: :meth:`Regressor.affine` gives both parts, :meth:`Regressor.predict`
their sum. ``y_known`` goes through the same closure, transmission and gain as the columns.

Evaluation runs in chunks of samples (``chunk_size``) so that memory stays bounded; the one
per-sample loop is the call into Pinocchio.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pinocchio as pin

from .. import _validate
from .robot import Robot
from .terms import SPACES, CoordinateBlock, CoordinateTerm

__all__ = ["Regressor"]


class Regressor:
    """Evaluate a robot's extended regressor on batches of states.

    Parameters
    ----------
    robot
        The robot description.
    chunk_size
        Samples evaluated at once by :meth:`chunks`. A few hundred keeps each chunk in cache,
        which matters more than the Python overhead per chunk.
    analytic
        Use the closure's closed-form link rows where it has them for this tree (the Stewart
        platform: :mod:`dynid.models.stewart.rigid`), over all samples at once; ``False``:
        always Pinocchio's joint-torque regressor per sample, projected by ``Gᵀ``. Both give
        the same columns. Robots with bodies fixed to links use Pinocchio's.

    Examples
    --------
    >>> reg = Regressor(robot)
    >>> Y = reg(q, v, a)              # (N, n, p)
    >>> y = Y @ robot.prior           # predicted output (N, n), when no body is known
    >>> Y, y_known = reg.affine(q, v, a)
    >>> y = Y @ robot.prior + y_known # the same as reg.predict(q, v, a, robot.prior)
    """

    def __init__(self, robot: Robot, *, chunk_size: int = 512, analytic: bool = True):
        self.robot = robot
        self.chunk_size = int(chunk_size)
        self._data = robot.tree.model.createData()
        tree = robot.tree
        #: Which links carry parameters (massless links dropped, shared ones summed).
        self.links = tree.linkset
        self.n_links = 10 * len(self.links.names)
        att = robot.attachments
        #: Link and identified-body columns: the columns of the rigid bodies.
        self.n_rigid = self.n_links + 10 * len(att.identified)
        # Bodies are computed from Pinocchio's columns (all tree links), before the reduction:
        # (first column, first column of the carrying joint's link in Pinocchio's, T).
        self._bodies = [(self.n_links + 10 * k, 10 * att.joints[i], att.maps[i])
                        for k, i in enumerate(att.identified)]
        # Joint-frame parameters of the known bodies, per carrying joint's first column.
        self._known = [(10 * j, values) for j, values in att.known_values().items()]
        self._pairs = None if robot.closure.is_identity else _Pairs(tree)
        self._rigid = (robot.closure.rigid_rows(tree) if analytic and not robot.bodies
                       else None)
        self._spaces = {space: _SpaceTerms(robot, space, local=space == "tree"
                                           and not robot.closure.is_identity)
                        for space in SPACES}
        # Joint-torque output: actuator terms are evaluated in their own block, then Kᵀ.
        self._act_local = (_SpaceTerms(robot, "actuator", local=True)
                           if robot.output == "joint_torque" else None)

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
        yield from self._chunks(q, v, a)

    def affine(self, q: np.ndarray, v: np.ndarray, a: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """Regressor ``Y`` (N, n, p) and output of the known bodies ``y_known`` (N, n): the
        model output is ``Y θ + y_known``. ``y_known`` is zero without known bodies.

        Examples
        --------
        >>> Y, y_known = Regressor(robot).affine(q, v, a)
        >>> y_measured - y_known            # the part the parameters explain, Y θ
        """
        q, v, a = _validate.states(q, v, a, self.robot.n)
        if not self._known:
            return self._evaluate(q, v, a), np.zeros((q.shape[0], self.robot.n))
        Y = self._evaluate(q, v, a, known=True)
        return Y[:, :, :-1], Y[:, :, -1]

    def known_output(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Output of the known bodies (N, n) at basis states (N, n), chunk by chunk: what the
        model predicts beyond ``Y θ``."""
        q, v, a = _validate.states(q, v, a, self.robot.n)
        out = np.zeros((q.shape[0], self.robot.n))
        if self._known:
            for sl, Y in self._chunks(q, v, a, known=True):
                out[sl] = Y[:, :, -1]
        return out

    def predict(self, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                theta: np.ndarray) -> np.ndarray:
        """Model output ``Y θ + y_known`` (N, n), evaluated chunk by chunk."""
        theta = _validate.vector(theta, "theta", len(self.robot.parameters))
        q, v, a = _validate.states(q, v, a, self.robot.n)
        out = np.empty((q.shape[0], self.robot.n))
        for sl, y in self._outputs(q, v, a, theta):
            out[sl] = y
        return out

    def _outputs(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, theta: np.ndarray
                 ) -> Iterator[tuple[slice, np.ndarray]]:
        """Model outputs ``Y θ + y_known`` chunk by chunk, for states already validated."""
        if not self._known:
            for sl, Y in self._chunks(q, v, a):
                yield sl, Y @ theta
            return
        for sl, Y in self._chunks(q, v, a, known=True):
            yield sl, Y[:, :, :-1] @ theta + Y[:, :, -1]

    def _chunks(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, *, known: bool = False
                ) -> Iterator[tuple[slice, np.ndarray]]:
        """:meth:`chunks` of states already validated (with the known output as a last
        column when ``known``)."""
        for start in range(0, q.shape[0], self.chunk_size):
            sl = slice(start, min(start + self.chunk_size, q.shape[0]))
            yield sl, self._evaluate(q[sl], v[sl], a[sl], known=known)

    # Assembly ------------------------------------------------------------------------------
    def _links(self, q_t: np.ndarray, v_t: np.ndarray, a_t: np.ndarray) -> np.ndarray:
        """Pinocchio's joint-torque regressor (N, n_t, 10 n_t), every tree link's columns."""
        model, data = self.robot.tree.model, self._data
        f = pin.computeJointTorqueRegressor
        pq = self.robot.tree.configuration(q_t)
        # One list then one copy: faster than writing each sample into a strided view.
        full = np.array([f(model, data, qk, vk, ak)
                         for qk, vk, ak in zip(pq, v_t, a_t, strict=True)])
        return full.reshape(q_t.shape[0], self.robot.tree.n, -1)  # a flat row for one joint

    def _attached(self, full: np.ndarray, out: np.ndarray, known: bool) -> np.ndarray | None:
        """Fill the identified bodies' columns of ``out`` (N, rows, ≥ n_rigid) from the tree
        links' columns ``full`` (N, rows, 10 n_t); return the known bodies' output (N, rows)
        when ``known``."""
        for col, link, T in self._bodies:
            out[:, :, col:col + 10] = full[:, :, link:link + 10] @ T
        if not known:
            return None
        y = np.zeros(full.shape[:2])
        for link, values in self._known:
            y += full[:, :, link:link + 10] @ values
        return y

    def _evaluate(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, *,
                  known: bool = False) -> np.ndarray:
        """Regressor (N, n, p) at validated states; with ``known`` (and known bodies), one more
        column: the known bodies' output, which goes through every map like the others."""
        robot, spaces = self.robot, self._spaces
        known = known and bool(self._known)
        N, n, p = q.shape[0], robot.n, len(robot.parameters)
        Y = np.empty((N, n, p + known))
        Y[:, :, self.n_links:] = 0.0
        q_t, v_t, a_t, G = robot.closure.tree_state(q, v, a)
        tree = spaces["tree"]
        if G is None:
            full = self._links(q_t, v_t, a_t)
            Y[:, :, :self.n_links] = self.links.reduce(full)
            y_known = self._attached(full, Y, known)
            if known:
                Y[:, :, p] = y_known
            tree.add(Y, q_t, v_t, a_t)
        else:
            if self._rigid is not None:  # closed form on the basis, all samples at once
                self._rigid(q, v, a, q_t, v_t, a_t, G, out=Y[:, :, :self.n_links])
            else:  # only the non-zero blocks of the tree rows, projected onto the basis by Gᵀ
                full = self._links(q_t, v_t, a_t)
                Y[:, :, :self.n_links] = self._pairs.project(full, G)
            if self._bodies or known:
                bodies = np.zeros((N, robot.tree.n, self.n_rigid + 1))
                y_known = self._attached(full, bodies, known)
                if known:
                    bodies[:, :, -1] = y_known
                bodies = robot.closure.project(bodies[:, :, self.n_links:], G)
                Y[:, :, self.n_links:self.n_rigid] = bodies[:, :, :-1]
                if known:
                    Y[:, :, p] = bodies[:, :, -1]
            if len(tree.columns):
                rows = np.zeros((N, robot.tree.n, len(tree.columns)))
                tree.add(rows, q_t, v_t, a_t)
                Y[:, :, tree.target] = robot.closure.project(rows, G)
        spaces["basis"].add(Y, q, v, a)

        trans, act = robot.transmission, spaces["actuator"]
        direct = trans.is_direct
        if robot.output == "joint_torque":
            if direct:
                act.add(Y, q, v, a)
            elif len(act.columns):
                q_m, v_m, a_m, gp = trans.actuator_state(q, v, a)
                rows = np.zeros((N, n, len(act.columns)))
                self._act_local.add(rows, q_m, v_m, a_m)
                Y[:, :, act.target] = trans.to_basis(rows, gp, overwrite=True)
            return Y
        q_m, v_m, a_m, gp = trans.actuator_state(q, v, a)
        if not direct:
            Y = trans.to_actuator(Y, gp, overwrite=True)
        act.add(Y, q_m, v_m, a_m)
        if robot.output == "current":
            Y /= trans.torque_constants[None, :, None]
        return Y


class _Pairs:
    """The non-zero blocks of a tree's joint-torque regressor and their projection ``Gᵀ``.

    Row ``i`` of Pinocchio's regressor has non-zero columns only for the links ``j`` that
    joint ``i`` moves (``j`` in the subtree of ``i``). For each parameter block ``k`` the
    pairs ``(i, j)`` of its links ``j`` and their ancestors ``i`` give the basis rows
    ``Σ_(i,j) G_iᵀ Y_t[i, j]``: one gather, one product and one sum over the samples at once,
    instead of the dense ``Gᵀ`` (n × n_t) times (n_t × 10 n_t) per sample.
    """

    def __init__(self, tree):
        parents = tree.model.parents
        rows, cols, starts = [], [], []
        for name in tree.linkset.names:
            starts.append(len(rows))
            for j in tree.linkset.members(name):
                i = j + 1
                while i > 0:  # the link's joint and every joint above it
                    rows.append(i - 1)
                    cols.append(j)
                    i = parents[i]
        self.rows, self.cols = np.array(rows), np.array(cols)
        self.starts = np.array(starts)
        self.n_tree = tree.n

    def project(self, full: np.ndarray, G: np.ndarray) -> np.ndarray:
        """Basis rows (N, n, 10 k) of the model's link columns from Pinocchio's tree rows
        ``full`` (N, n_t, 10 n_t) and ``G`` (N, n_t, n), or (n_t, n) when constant."""
        N, n = full.shape[0], G.shape[-1]
        blocks = full.reshape(N, self.n_tree, self.n_tree, 10)[:, self.rows, self.cols]
        terms = G[..., self.rows, :, None] * blocks[:, :, None, :]  # (N, pairs, n, 10)
        out = np.add.reduceat(terms, self.starts, axis=1)  # (N, k, n, 10)
        return out.transpose(0, 2, 1, 3).reshape(N, n, -1)


class _SpaceTerms:
    """The extra terms acting in one space: coordinate terms vectorized, others one by one."""

    def __init__(self, robot: Robot, space: str, *, local: bool = False):
        """With ``local``, columns are numbered within this space's own block (for terms
        evaluated in a separate array and projected afterwards); ``columns`` stays global."""
        pairs = [(t, c) for t, c in zip(robot.terms, robot.term_columns, strict=True)
                 if t.space == space]
        if local and pairs:
            start = np.cumsum([0] + [len(c) for _, c in pairs])
            self.columns = np.concatenate([c for _, c in pairs])
            pairs = [(t, np.arange(start[i], start[i + 1])) for i, (t, _) in enumerate(pairs)]
        coord = [(t, c) for t, c in pairs if isinstance(t, CoordinateTerm)]
        self.block = CoordinateBlock([t for t, _ in coord], [c for _, c in coord])
        self.generic = [(t, slice(c[0], c[-1] + 1)) for t, c in pairs
                        if not isinstance(t, CoordinateTerm)]
        if not (local and pairs):
            self.columns = (np.concatenate([c for _, c in pairs]) if pairs
                            else np.zeros(0, dtype=int))
        cols = self.columns
        contiguous = len(cols) > 0 and np.array_equal(cols, np.arange(cols[0], cols[0] + len(cols)))
        #: ``columns`` as a slice when consecutive (a cheaper assignment into the regressor).
        self.target = slice(cols[0], cols[0] + len(cols)) if contiguous else cols

    def add(self, out: np.ndarray, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray) -> None:
        """Add the terms' columns at states (N, dim) into ``out`` (N, dim, p)."""
        block = self.block
        if len(block):
            out[:, block.rows, block.cols] += block.values(x, xd, xdd)
        for term, cols in self.generic:
            out[:, term.rows, cols] += term.columns(x, xd, xdd)
