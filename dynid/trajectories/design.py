"""Design an excitation trajectory: multi-start optimization and dense acceptance.

:func:`design_excitation` builds the nonlinear program of
:class:`~dynid.trajectories.problem.ExcitationProblem` for a robot and
:class:`~dynid.trajectories.settings.DesignSettings`, then, for each of ``starts`` random
feasible starting points drawn from ``seed``:

1. runs the optimizer backend (IPOPT by default) from it;
2. takes where the backend stopped and the best point it evaluated that satisfies every
   constraint on the constraint grid; an interior-point method stops slightly outside the
   constraints, which scaling the oscillation about the offsets by a factor just below one
   corrects (every limit of a motion about feasible offsets shrinks with its amplitude);
3. accepts a candidate only after the dense check of every constraint (ramps included),
   scaling again if a limit is crossed between grid points
   (:func:`~dynid.trajectories.feasibility.shrink`), and keeps the better one.

The best accepted trajectory wins. Everything is deterministic for a given seed. The small
dense linear algebra runs on one BLAS thread (:mod:`dynid._blas`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._blas import single_thread
from .._progress import Progress
from ..errors import SolverError
from ..models import Robot
from .assembly import assemble
from .constraints import Report
from .criteria import Information, condition_numbers
from .feasibility import shrink
from .fourier import FourierTrajectory
from .optimizers import Problem, get_optimizer
from .problem import ExcitationProblem
from .settings import DesignSettings

__all__ = ["Design", "StartSummary", "design_excitation"]



@dataclass(frozen=True)
class StartSummary:
    """What one start gave: its criterion score (a condition number or ``−log det``; inf if
    rejected), the backend's iterations and status."""

    value: float
    iterations: int
    status: str
    accepted: bool


@dataclass(frozen=True)
class Design:
    """A designed excitation and how good it is.

    Attributes
    ----------
    trajectory
        The accepted trajectory.
    settings
        The settings it was designed with.
    robot
        The robot's name.
    score
        The criterion at the optimizer's samples (a condition number, or ``−log det``).
    condition
        Condition numbers of the base regressor on a dense grid of one period
        (10 × the optimizer's samples): ``none`` (plain), ``norm`` and ``range`` scaled.
    rank, base_rank
        Numerical rank of that dense base regressor, and the number of its columns: the base
        parameters the free coordinates can excite (all of them unless coordinates are held).
    robot_rank
        The robot's number of base parameters.
    report
        The dense check of every constraint.
    starts
        One summary per start.
    seconds
        Wall time of the design.
    """

    trajectory: FourierTrajectory
    settings: DesignSettings
    robot: str
    score: float
    condition: dict
    rank: int
    base_rank: int
    robot_rank: int
    report: Report
    starts: tuple[StartSummary, ...]
    seconds: float

    def summary(self) -> dict:
        return {"robot": self.robot, "criterion": self.settings.criterion,
                "score": self.score, "condition": dict(self.condition), "rank": self.rank,
                "base_rank": self.base_rank, "robot_rank": self.robot_rank,
                "margin": self.report.margin,
                "check_samples": self.report.samples, "seconds": self.seconds,
                "starts": [s.__dict__ for s in self.starts]}


def design_excitation(robot: Robot, settings: DesignSettings | None = None, *,
                      previous: Sequence[Information] = (), progress: bool = False) -> Design:
    """Design an excitation trajectory for ``robot``.

    Parameters
    ----------
    robot
        The robot.
    settings
        Design settings (default: :class:`DesignSettings` defaults).
    previous
        Information of earlier experiments (see
        :func:`~dynid.trajectories.information.trajectory_information`) that the new trajectory
        completes.
    progress
        Draw a progress bar on standard error.
    """
    with single_thread():
        return _design(robot, settings or DesignSettings(), previous, progress)


def _design(robot: Robot, s: DesignSettings, previous: Sequence[Information],
            progress: bool) -> Design:
    t0 = time.perf_counter()
    asm = assemble(robot, s, previous)
    problem, param, criterion = asm.problem, asm.param, asm.criterion
    rng = np.random.default_rng(s.seed)
    optimizer = get_optimizer(s.optimizer, max_iterations=s.max_iterations,
                              tolerance=s.tolerance)
    bar = Progress(s.starts * s.max_iterations, f"design {robot.name}", enabled=progress)
    best: tuple[float, FourierTrajectory, Report] | None = None
    summaries = []
    for start in range(s.starts):
        x0 = asm.start(rng)
        tracker = _Tracker(problem, bar, start * s.max_iterations, s.max_iterations,
                           best[0] if best else np.inf)
        result = optimizer.minimize(Problem(
            x0, param.lower, param.upper, tracker.objective, tracker.gradient,
            problem.constraints_value, problem.constraints_jacobian, problem.n_constraints))
        value, accepted = np.inf, None
        for x in (result.x, tracker.best_x):
            if x is None:
                continue
            x = asm.within_grid(x)
            if x is None:
                continue
            checked = shrink(asm.trajectory(x), robot, asm.constraints, per_period=asm.dense)
            if checked is None:
                continue
            trajectory, report, factor = checked
            v = problem.objective(param.scaled(x, factor))
            if v < value:
                value, accepted = v, (trajectory, report)
        if accepted is not None and (best is None or value < best[0]):
            best = (value, *accepted)
        summaries.append(StartSummary(criterion.score_of(value, len(asm.columns)),
                                      result.iterations, result.status, accepted is not None))
    bar.close()
    if best is None:
        raise SolverError(f"none of the {s.starts} starts gave a trajectory that passes the "
                          "dense check of every constraint; try more starts, more iterations "
                          "or a larger margin")
    value, traj, report = best
    W = asm.regressor_on(traj, 10 * s.samples)
    cond = condition_numbers(W)
    rank = int(np.linalg.matrix_rank(W.reshape(-1, W.shape[-1]) / np.maximum(
        np.linalg.norm(W.reshape(-1, W.shape[-1]), axis=0), 1e-300)))
    score = criterion.score_of(value, len(asm.columns))
    return Design(traj, s, robot.name, score, cond, rank, len(asm.columns), asm.base.rank,
                  report, tuple(summaries), time.perf_counter() - t0)


class _Tracker:
    """Counts evaluations for the progress bar and keeps the best point that satisfies every
    constraint on the grid."""

    def __init__(self, problem: ExcitationProblem, bar: Progress, offset: int, budget: int,
                 best: float):
        self.problem, self.bar, self.offset, self.budget = problem, bar, offset, budget
        self.best_value, self.best_x = np.inf, None
        self.overall = best
        self.gradients = 0

    def objective(self, x: np.ndarray) -> float:
        f = self.problem.objective(x)
        if f < self.best_value and self.problem.grid_violation(x) <= 0:
            self.best_value, self.best_x = f, x.copy()
        return f

    def gradient(self, x: np.ndarray) -> np.ndarray:
        self.gradients += 1
        best = min(self.best_value, self.overall)
        criterion = self.problem.criterion
        shown = criterion.score_of(best, len(self.problem.columns))
        self.bar.update(self.offset + min(self.gradients, self.budget),
                        f"best {criterion.name} {shown:.4g}" if np.isfinite(best) else "")
        return self.problem.gradient(x)
