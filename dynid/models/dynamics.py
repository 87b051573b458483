"""Mass matrix, bias and forward dynamics from the extended regressor.

For every mechanism dynid describes, the model output is affine in the basis accelerations::

    y = Y(q, v, a) θ + y_known(q, v, a) = M(q) a + h(q, v)

(rigid bodies, rotor inertia ``J_m (g′ a + g″ v²)``, closures ``a_t = G a + Ġ v``: all affine in
``a``; friction and springs do not depend on ``a``). So the output-space mass matrix and bias come
from the regressor's prediction itself (known bodies included), whatever the closure,
transmission or output kind::

    M(q)[:, i] = y(q, 0, e_i) − y(q, 0, 0),     h(q, v) = y(q, v, 0)

For joint-torque output ``M`` is the symmetric generalized mass matrix (reflected rotor inertia
included); for motor torque or current it is ``diag(1/k_T) K⁻ᵀ M``, invertible but not
symmetric. Everything is evaluated for a batch of N states with one regressor call of
``N (n + 2)`` samples.
"""

from __future__ import annotations

import numpy as np

from .. import _validate
from ..errors import DataError
from .regressor import Regressor
from .robot import Robot

__all__ = ["Dynamics"]


class Dynamics:
    """Mass matrix, bias and forward dynamics of a robot with parameters ``θ``.

    Parameters
    ----------
    robot
        The robot (or a :class:`~dynid.models.regressor.Regressor` of it).
    theta
        Standard parameters (p,), in the order of ``robot.parameters``.

    Examples
    --------
    >>> dyn = Dynamics(robot, robot.prior)
    >>> a = dyn.forward(q, v, y)          # accelerations (N, n) produced by outputs y (N, n)
    >>> np.allclose(Regressor(robot).predict(q, v, a, robot.prior), y)
    True
    """

    def __init__(self, robot: Robot | Regressor, theta: np.ndarray):
        self.regressor = robot if isinstance(robot, Regressor) else Regressor(robot)
        self.robot = self.regressor.robot
        self.theta = _validate.vector(theta, "theta", len(self.robot.parameters))

    @property
    def n(self) -> int:
        return self.robot.n

    def terms(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mass matrix ``M`` (N, n, n) and bias ``h`` (N, n) at positions and velocities (N, n)."""
        n = self.n
        q = _validate.batch(q, "q", n)
        v = _validate.batch(v, "v", n)
        if q.shape[0] != v.shape[0]:
            raise DataError(f"q and v: expected the same number of samples, found {q.shape[0]} "
                            f"and {v.shape[0]}")
        N = q.shape[0]
        eye = np.eye(n)
        # Per state: n unit accelerations at rest, rest itself, then the actual velocity.
        qs = np.repeat(q, n + 2, axis=0)
        vs = np.zeros((N, n + 2, n))
        vs[:, n + 1] = v
        as_ = np.zeros((N, n + 2, n))
        as_[:, :n] = eye
        # The states are valid (q and v were checked): no second check of the larger batch.
        y = np.empty((N * (n + 2), n))
        for sl, out in self.regressor._outputs(qs, vs.reshape(-1, n), as_.reshape(-1, n),
                                               self.theta):
            y[sl] = out
        y = y.reshape(N, n + 2, n)
        M = np.swapaxes(y[:, :n] - y[:, n:n + 1], 1, 2)
        return M, y[:, n + 1]

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """``M(q)`` (N, n, n): output produced by unit accelerations at rest (gravity removed)."""
        q = np.asarray(q, dtype=float)
        return self.terms(q, np.zeros_like(q))[0]

    def forward(self, q: np.ndarray, v: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Accelerations (N, n) with which the outputs ``y`` (N, n) drive the robot:
        ``a = M⁻¹ (y − h)``."""
        y = _validate.batch(y, "y", self.n)
        M, h = self.terms(q, v)
        if y.shape[0] != M.shape[0]:
            raise DataError(f"y: expected {M.shape[0]} samples like q, found {y.shape[0]}")
        return np.linalg.solve(M, (y - h)[..., None])[..., 0]
