"""Speed of the extended regressor and of building a model with its base parameters.

Prints one ``name: value`` line per figure. Ratios are measured side by side in this run. The
number of regressor columns is printed as a ``# setting:`` comment line.
Targets: extended/bare ratio ≤ 1.5; Panda model plus base parameters under 0.3 s.
"""

from __future__ import annotations

import numpy as np
from _timing import best_of, extended_and_bare

import dynid
from dynid.models import Regressor, base_parameters, random_states

N = 100_000


def main() -> None:
    robot = dynid.load_robot("panda")
    q, v, a = random_states(robot, N, np.random.default_rng(0))
    (t_ext, t_motor), t_bare = extended_and_bare(
        [Regressor(robot), Regressor(robot.with_output("motor_torque"))], q, v, a, rounds=5)
    print(f"panda_extended_regressor_samples_per_s: {N / t_ext:.0f}")
    print(f"panda_bare_pinocchio_regressor_samples_per_s: {N / t_bare:.0f}")
    print(f"panda_extended_over_bare_time_ratio: {t_ext / t_bare:.3f}")
    print(f"panda_motor_torque_output_over_bare_time_ratio: {t_motor / t_bare:.3f}")
    print(f"# setting: panda_extended_columns = {len(robot.parameters)}")

    def build():
        base_parameters(dynid.load_robot("panda"))

    print(f"panda_model_and_base_parameters_s: {best_of(build, 5):.4f}")


if __name__ == "__main__":
    main()
