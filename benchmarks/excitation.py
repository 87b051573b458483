"""Excitation design on the Panda (joint space) and on the Ariane arm (motor space).

Prints one ``name: value`` line per figure. For each robot: the condition number of the base
regressor reached by the default design, column-normalized by range (each column divided by
``max − min``, as the dVRK package does), by norm, and plain; the wall time of the design
(robot loading and imports excluded); and the worst constraint margin of the joint and actuator
limits (fraction of each half range, or of the velocity or acceleration limit; ≥ 0: every limit
satisfied) over the whole executed trajectory, sampled 100 times as densely as the optimizer's
constraint grid. That margin and the regressor figures are computed here from the robot's own
maps (``Transmission.basis_state``/``actuator_state``, the encoder conversion), its limits and
its regressor, apart from the design's constraints and acceptance check. For scale, the range
condition number of random feasible starts of the same design (drawn by its assembly), and the
Panda design with SciPy's SLSQP in place of IPOPT, are measured side by side; so is
pyOptSparse's SLSQP against SciPy's (same settings, same seeded starts: the condition number
each reaches, its wall time and the ratio of the wall times), where pyOptSparse is installed.
Settings of the run are printed as ``# setting:`` comment lines.

Targets for the Panda (7 joints with friction and rotor inertia, 6 harmonics, 0.1 Hz, default
settings): range-normalized condition number ≤ 12, plain ≤ 80, in ≤ 15 s, every constraint
satisfied.

The plain condition number depends on the units of the parameters. It is bounded below by the
ratio of the largest to the smallest column norm (printed): a rotor inertia ``J_m`` in kg·m² on
the motor shaft behind a gear ratio r = 100 would make its column ``r² q̈`` ten thousand times
the link columns; the Panda robot file states it at the joint, as the armature ``r² J_m``, which
keeps that ratio and the plain condition number small.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

import dynid
import dynid.trajectories.optimizers.ipopt  # backends imported outside the timing
import dynid.trajectories.optimizers.slsqp
from dynid.models import Regressor, base_parameters
from dynid.trajectories import (
    DesignSettings,
    FourierTrajectory,
    condition_numbers,
    design_excitation,
)
from dynid.trajectories.assembly import CONSTRAINT_FACTOR, assemble
from dynid.trajectories.optimizers import available_optimizers

STARTS_FOR_SCALE = 10


def robot_states(robot: dynid.Robot, traj: FourierTrajectory, t: np.ndarray):
    """Joint and actuator states (SI) of a trajectory at times t, with the robot's maps."""
    x, xd, xdd = traj.evaluate(t)
    trans = robot.transmission
    if traj.space == "basis":
        return (x, xd, xdd), trans.actuator_state(x, xd, xdd)[:3]
    if traj.unit == "increments":
        x, xd, xdd = (trans.from_increments(x), trans.from_increments(xd, derivative=True),
                      trans.from_increments(xdd, derivative=True))
    return trans.basis_state(x, xd, xdd), (x, xd, xdd)


def limit_margin(robot: dynid.Robot, traj: FourierTrajectory, samples: int) -> float:
    """Worst margin of the robot's joint and actuator limits at ``samples`` times spanning the
    executed trajectory (ramps and every period)."""
    joint, actuator = robot_states(robot, traj, np.linspace(0, traj.duration, samples))
    worst = np.inf
    for lim, (q, v, a) in ((robot.limits, joint), (robot.actuator_limits, actuator)):
        for j in range(robot.n):
            lo, hi = lim.lower[j], lim.upper[j]
            if np.isfinite(lo) and np.isfinite(hi):
                worst = min(worst, np.min(np.minimum(hi - q[:, j], q[:, j] - lo)) / ((hi - lo) / 2))
            for x, bound in ((v[:, j], lim.velocity[j]), (a[:, j], lim.acceleration[j])):
                if np.isfinite(bound):
                    worst = min(worst, np.min(bound - np.abs(x)) / bound)
    return float(worst)


def base_regressor_rows(robot: dynid.Robot, traj: FourierTrajectory, samples: int
                        ) -> np.ndarray:
    """Base regressor rows (samples·n, b) over one period of the steady part."""
    t = traj.ramp + (np.arange(samples) + 0.5) * traj.period / samples
    joint, _ = robot_states(robot, traj, t)
    base = base_parameters(robot)
    return base.regressor(Regressor(robot)(*joint)).reshape(-1, base.rank)


def report(name: str, robot: dynid.Robot, settings: DesignSettings) -> None:
    design = design_excitation(robot, settings)
    cond = design.condition
    print(f"{name}_condition_number_range_normalized: {cond['range']:.3f}")
    print(f"{name}_condition_number_norm_normalized: {cond['norm']:.3f}")
    print(f"{name}_condition_number_plain: {cond['none']:.4g}")

    W = base_regressor_rows(robot, design.trajectory, 10 * settings.samples)
    norms = np.linalg.norm(W, axis=0)
    print(f"{name}_condition_number_plain_lower_bound_column_norm_ratio: "
          f"{norms.max() / norms.min():.4g}")
    print(f"{name}_design_wall_time_s: {design.seconds:.2f}")

    dense = int(100 * CONSTRAINT_FACTOR * settings.samples * design.trajectory.duration
                / design.trajectory.period) + 1
    print(f"{name}_worst_constraint_margin_dense: "
          f"{limit_margin(robot, design.trajectory, dense):.5f}")
    print(f"# setting: {name}_dense_check_samples = {dense}")
    print(f"# setting: {name}_optimizer_criterion_samples = {settings.samples}")
    print(f"# setting: {name}_optimizer_constraint_samples = "
          f"{CONSTRAINT_FACTOR * settings.samples}")
    print(f"{name}_base_regressor_rank: {design.rank}")
    print(f"{name}_base_parameters: {design.base_rank}")

    asm = assemble(robot, settings)     # only to draw the design's random feasible starts
    rng = np.random.default_rng(12345)
    starts = []
    for _ in range(STARTS_FOR_SCALE):
        traj = asm.trajectory(asm.start(rng))
        starts.append(condition_numbers(base_regressor_rows(robot, traj,
                                                            10 * settings.samples))["range"])
    print(f"{name}_random_feasible_start_condition_number_range_median: "
          f"{np.median(starts):.2f}")
    print(f"{name}_random_feasible_start_condition_number_range_min: {np.min(starts):.2f}")


def slsqp_backends(panda: dynid.Robot) -> None:
    """The Panda design with SciPy's SLSQP in place of IPOPT and, where it is installed, with
    pyOptSparse's SLSQP: same settings, same seed (so the same random feasible starts)."""
    settings = DesignSettings(optimizer="slsqp")
    print(f"# setting: panda_slsqp = max_iterations {settings.max_iterations}, tolerance "
          f"{settings.tolerance:g}, starts {settings.starts}, seed {settings.seed}")
    scipy_design = design_excitation(panda, settings)
    print(f"panda_slsqp_condition_number_range_normalized: "
          f"{scipy_design.condition['range']:.3f}")
    print(f"panda_slsqp_design_wall_time_s: {scipy_design.seconds:.2f}")
    if "pyoptsparse" not in available_optimizers():
        print("# pyoptsparse: not installed")
        return
    design = design_excitation(panda, replace(settings, optimizer="pyoptsparse"))
    print(f"panda_pyoptsparse_slsqp_condition_number_range_normalized: "
          f"{design.condition['range']:.3f}")
    print(f"panda_pyoptsparse_slsqp_design_wall_time_s: {design.seconds:.2f}")
    print(f"panda_pyoptsparse_over_scipy_slsqp_wall_time_ratio: "
          f"{design.seconds / scipy_design.seconds:.3f}")


def main() -> None:
    available_optimizers()          # imports the installed backends outside the timing
    panda = dynid.load_robot("panda")
    report("panda", panda, DesignSettings())
    slsqp_backends(panda)
    ariane = dynid.load_robot("ariane")
    # Leborne's setting: three motors, five harmonics, an 80 s period, encoder increments and
    # the motor limits of Table III (with the joint ranges and joint velocity limits).
    report("ariane_motor_space", ariane, DesignSettings(space="actuator", unit="increments",
                                                        harmonics=5, frequency=1 / 80))


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"benchmark_total_s: {time.perf_counter() - t0:.1f}")
