"""Speed of the mechanism regressors (dVRK PSM and MTM) and of building them with their base
parameters.

Prints one ``name: value`` line per figure; ratios are measured side by side in this run. The
size of each model is printed as ``# setting:`` comment lines.
Targets: extended / bare Pinocchio regressor time ≤ 3 on the same trees; model build plus base
parameters under 2 s (the dVRK package's symbolic generation takes about 12 minutes for the
PSM and 80 for the MTM).
"""

from __future__ import annotations

import numpy as np
from _timing import best_of, extended_and_bare

import dynid
from dynid.models import Regressor, base_parameters, random_states

N = 20_000


def measure(name: str) -> None:
    robot = dynid.load_robot(name)
    q, v, a = random_states(robot, N, np.random.default_rng(0))
    (t_ext,), t_bare = extended_and_bare([Regressor(robot)], q, v, a, rounds=3)
    short = name.removeprefix("dvrk_")
    print(f"{short}_extended_regressor_samples_per_s: {N / t_ext:.0f}")
    print(f"{short}_bare_pinocchio_regressor_samples_per_s: {N / t_bare:.0f}")
    print(f"{short}_extended_over_bare_time_ratio: {t_ext / t_bare:.3f}")
    print(f"# setting: {short}_tree_joints = {robot.tree.n}")
    print(f"# setting: {short}_parameters = {len(robot.parameters)}")

    def build():
        return base_parameters(dynid.load_robot(name))

    base = build()
    print(f"{short}_base_parameters: {base.rank}")
    print(f"{short}_model_and_base_parameters_s: {best_of(build, 5):.4f}")


def main() -> None:
    for name in ("dvrk_psm", "dvrk_mtm"):
        measure(name)


if __name__ == "__main__":
    main()
