"""Excitation design on the Panda (joint space) and on the Ariane arm (motor space).

Prints one ``name: value`` line per figure. For each robot: the condition number of the base
regressor reached by the default design, column-normalized by range (each column divided by
``max − min``, as the dVRK package does), by norm, and plain; the wall time of the design
(robot loading and imports excluded); and the worst constraint margin (fraction of each range,
≥ 0: every constraint satisfied) on a dense grid of 100 times the optimizer's constraint samples,
computed again here apart from the design's own acceptance check. For scale, the same figures
for random feasible starts of the same design, and the Panda design with SciPy's SLSQP in place
of IPOPT, are measured side by side.

Targets for the Panda (7 joints with friction and rotor inertia, 6 harmonics, 0.1 Hz, default
settings): range-normalized condition number ≤ 12, plain ≤ 80, in ≤ 15 s, every constraint
satisfied.

The plain condition number depends on the units of the parameters. It is bounded below by the
ratio of the largest to the smallest column norm (printed): with the rotor inertia ``J_m`` in
kg·m² on the motor shaft, a gear ratio r = 100 makes its column ``r² q̈`` ten thousand times the
link columns, so no trajectory gets the plain condition number in these units below about 1e4.
Expressed at the joint, as the reflected inertia ``r² J_m`` (kg·m², the unit in which the Panda
robot file states it), the same regressor has the plain condition number printed as
``..._plain_rotor_inertia_at_joint``.
"""

from __future__ import annotations

import time

import numpy as np

import dynid
import dynid.trajectories.optimizers.ipopt  # backends imported outside the timing
import dynid.trajectories.optimizers.slsqp
from dynid.trajectories import DesignSettings, check, condition_numbers, design_excitation
from dynid.trajectories.assembly import CONSTRAINT_FACTOR, assemble

STARTS_FOR_SCALE = 10


def report(name: str, robot: dynid.Robot, settings: DesignSettings) -> None:
    design = design_excitation(robot, settings)
    cond = design.condition
    print(f"{name}_condition_number_range_normalized: {cond['range']:.3f}")
    print(f"{name}_condition_number_norm_normalized: {cond['norm']:.3f}")
    print(f"{name}_condition_number_plain: {cond['none']:.4g}")

    asm = assemble(robot, settings)
    W = asm.regressor_on(design.trajectory, 10 * settings.samples).reshape(-1, design.base_rank)
    norms = np.linalg.norm(W, axis=0)
    print(f"{name}_condition_number_plain_lower_bound_column_norm_ratio: "
          f"{norms.max() / norms.min():.4g}")
    print(f"{name}_design_wall_time_s: {design.seconds:.2f}")

    per_period = 100 * CONSTRAINT_FACTOR * settings.samples
    dense = check(design.trajectory, robot, asm.constraints, per_period=per_period)
    print(f"{name}_worst_constraint_margin_dense: {dense.margin:.5f}")
    print(f"{name}_dense_check_samples: {dense.samples}")
    print(f"{name}_optimizer_criterion_samples: {settings.samples}")
    print(f"{name}_optimizer_constraint_samples: {CONSTRAINT_FACTOR * settings.samples}")
    print(f"{name}_base_regressor_rank: {design.rank}")
    print(f"{name}_base_parameters: {design.base_rank}")

    rng = np.random.default_rng(12345)
    starts = []
    for _ in range(STARTS_FOR_SCALE):
        traj = asm.trajectory(asm.start(rng))
        starts.append(condition_numbers(asm.regressor_on(traj, 10 * settings.samples))["range"])
    print(f"{name}_random_feasible_start_condition_number_range_median: "
          f"{np.median(starts):.2f}")
    print(f"{name}_random_feasible_start_condition_number_range_min: {np.min(starts):.2f}")


def main() -> None:
    panda = dynid.load_robot("panda")
    report("panda", panda, DesignSettings())
    # The same design with SciPy's SLSQP instead of IPOPT, side by side.
    other = design_excitation(panda, DesignSettings(optimizer="slsqp"))
    print(f"panda_slsqp_condition_number_range_normalized: {other.condition['range']:.3f}")
    print(f"panda_slsqp_design_wall_time_s: {other.seconds:.2f}")
    ariane = dynid.load_robot("ariane")
    # Leborne's setting: three motors, five harmonics, an 80 s period, encoder increments and
    # the motor limits of Table III (with the joint ranges and joint velocity limits).
    report("ariane_motor_space", ariane, DesignSettings(space="actuator", unit="increments",
                                                        harmonics=5, frequency=1 / 80))


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"benchmark_total_s: {time.perf_counter() - t0:.1f}")
