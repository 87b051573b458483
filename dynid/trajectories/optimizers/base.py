"""The small interface every optimizer backend implements.

A backend minimizes a smooth objective under smooth inequality constraints ``c(x) ≤ 0`` and
variable bounds, given callables for the values and first derivatives (:class:`Problem`). It
returns an :class:`OptimizerResult`; whether the result is acceptable is decided afterwards by
the design's dense constraint check, not by the backend's status.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...errors import TrajectoryError

__all__ = ["Optimizer", "OptimizerResult", "Problem"]


@dataclass(frozen=True)
class Problem:
    """``min f(x)`` subject to ``c(x) ≤ 0`` and ``lower ≤ x ≤ upper``.

    Attributes
    ----------
    x0
        Starting point (n,), inside the bounds.
    lower, upper
        Variable bounds (n,), ±inf where there is none.
    objective, gradient
        ``f(x)`` and ``∇f(x)`` (n,).
    constraints, jacobian
        ``c(x)`` (m,) and ``∂c/∂x`` (m, n).
    n_constraints
        m.
    """

    x0: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    objective: Callable[[np.ndarray], float]
    gradient: Callable[[np.ndarray], np.ndarray]
    constraints: Callable[[np.ndarray], np.ndarray]
    jacobian: Callable[[np.ndarray], np.ndarray]
    n_constraints: int


@dataclass(frozen=True)
class OptimizerResult:
    """Where a backend stopped: the point, its objective, iterations and the status text."""

    x: np.ndarray
    value: float
    iterations: int
    status: str
    converged: bool


class Optimizer(ABC):
    """An optimizer backend.

    Parameters
    ----------
    max_iterations
        Iteration limit of one run (> 0).
    tolerance
        Convergence tolerance on the optimality conditions (> 0).
    """

    #: Registry name.
    name: str = ""

    def __init__(self, *, max_iterations: int = 60, tolerance: float = 1e-6):
        if int(max_iterations) != max_iterations or max_iterations < 1:
            raise TrajectoryError(f"max_iterations: expected a whole number ≥ 1, found "
                                  f"{max_iterations!r}")
        if not (np.isfinite(tolerance) and tolerance > 0):
            raise TrajectoryError(f"tolerance: expected a number > 0, found {tolerance!r}")
        self.max_iterations = int(max_iterations)
        self.tolerance = float(tolerance)

    @abstractmethod
    def minimize(self, problem: Problem) -> OptimizerResult:
        """Run from ``problem.x0`` and return where the run stopped."""

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(max_iterations={self.max_iterations}, "
                f"tolerance={self.tolerance:g})")
