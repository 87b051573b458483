"""Actuator effort limits along an excitation: the force or torque the drives must deliver.

A drive delivers at most its rated effort, so an excitation is only feasible when the model,
with the parameters known before identification (the robot's prior), predicts actuator-side
efforts within the actuator limits (Abdellatif (20): the limits of the actuation; for a
hexapod the leg forces, obtained from the pose-space dynamics through the transmission,
``τ_m = K⁻ᵀ τ``)::

    −effort_j ≤ τ_m,j(q, q̇, q̈) ≤ effort_j        (N·m for a rotary motor, N for a leg)

:class:`EffortConstraint` evaluates these rows on basis states with the robot's regressor
(output ``"motor_torque"``), and their derivatives by differences of the prediction: exact in
the accelerations (the output is affine in them), central differences in the velocities and
positions. All perturbed states are evaluated in one regressor call.
"""

from __future__ import annotations

import numpy as np

from .. import _validate
from ..errors import TrajectoryError
from ..models import Regressor, Robot
from .constraints import Constraint, Row

__all__ = ["EffortConstraint"]

_STEP = 1e-6  # relative difference step of positions and velocities


class EffortConstraint(Constraint):
    """The actuator efforts a robot needs along basis states stay within ``±effort``.

    Parameters
    ----------
    robot
        The robot; its ``actuator_limits.effort`` (the finite entries) are the bounds.
    theta
        Standard parameters (p,) that predict the efforts (default: ``robot.prior``).
    margin
        Fraction of each limit kept free (the bound is ``(1 − margin) effort``).

    Examples
    --------
    >>> c = EffortConstraint(robot)
    >>> c.values(q, v, a)          # (N, m) actuator efforts of the limited actuators
    """

    space = "basis"

    def __init__(self, robot: Robot, theta: np.ndarray | None = None, *, margin: float = 0.0):
        if not 0 <= margin < 1:
            raise TrajectoryError(f"margin: expected a fraction in [0, 1), found {margin}")
        effort = np.asarray(robot.actuator_limits.effort, dtype=float)
        if np.any(~(effort > 0)):
            j = int(np.argmax(~(effort > 0)))
            raise TrajectoryError(f"actuator limits of {robot.actuator_names[j]}: the effort "
                                  f"limit must be > 0 (inf for none), found {effort[j]}")
        model = robot if robot.output == "motor_torque" else robot.with_output("motor_torque")
        self.theta = robot.prior if theta is None else \
            _validate.vector(theta, "theta", len(robot.parameters))
        self.regressor = Regressor(model)
        self._select = np.flatnonzero(np.isfinite(effort))
        units = model.output_units
        self.rows = tuple(Row("actuator limits", robot.actuator_names[j], "effort", units[j],
                              -float(effort[j]) * (1 - margin), float(effort[j]) * (1 - margin))
                          for j in self._select)

    def values(self, q, v, a):
        return self.regressor.predict(q, v, a, self.theta)[:, self._select]

    def jacobian(self, q, v, a):
        return self.values_and_jacobian(q, v, a)[1]

    def values_and_jacobian(self, q, v, a):
        N, n = q.shape
        hq = _STEP * np.maximum(np.abs(q), 1.0)           # (N, n)
        hv = _STEP * np.maximum(np.abs(v), 1.0)
        # States: the samples, ± a step of each position, ± of each velocity, + a unit
        # acceleration of each coordinate: (1 + 5 n) blocks of N samples.
        blocks = 1 + 5 * n
        Q, V, A = (np.broadcast_to(x, (blocks, N, n)).copy() for x in (q, v, a))
        for j in range(n):
            Q[1 + j, :, j] += hq[:, j]
            Q[1 + n + j, :, j] -= hq[:, j]
            V[1 + 2 * n + j, :, j] += hv[:, j]
            V[1 + 3 * n + j, :, j] -= hv[:, j]
            A[1 + 4 * n + j, :, j] += 1.0
        y = self.regressor.predict(Q.reshape(-1, n), V.reshape(-1, n), A.reshape(-1, n),
                                   self.theta)[:, self._select].reshape(blocks, N, -1)
        base = y[0]
        J = np.empty((N, len(self._select), 3, n))
        J[:, :, 0, :] = np.moveaxis((y[1:1 + n] - y[1 + n:1 + 2 * n]) / (2 * hq.T[:, :, None]),
                                    0, 2)
        J[:, :, 1, :] = np.moveaxis((y[1 + 2 * n:1 + 3 * n] - y[1 + 3 * n:1 + 4 * n])
                                    / (2 * hv.T[:, :, None]), 0, 2)
        J[:, :, 2, :] = np.moveaxis(y[1 + 4 * n:] - base, 0, 2)
        return base, J

    def __repr__(self) -> str:
        return f"EffortConstraint({', '.join(r.coordinate for r in self.rows)})"
