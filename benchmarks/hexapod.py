"""Speed of the hexapod model: extended regressor and direct kinematics per sample.

Prints one ``name: value`` line per figure. Ratios are measured side by side in this run:
the hexapod's regressor against the Panda's (7 joints, 70 link columns) and against Pinocchio's
bare joint-torque regressor on the hexapod's own cut tree (24 joints, 240 link columns), which
bounds what any closure and transmission on top of it can cost. The direct kinematics runs
along a smooth trajectory sampled at 1 kHz, to a tolerance of 1e-10 m.
"""

from __future__ import annotations

import numpy as np
from _timing import best_of, extended_and_bare

import dynid
from dynid.models import Regressor, random_states
from dynid.models.stewart import direct_kinematics

N = 20_000


def poses(robot, t: np.ndarray) -> np.ndarray:
    """A smooth motion over most of the pose box: three sines per coordinate."""
    lo, hi = robot.limits.lower, robot.limits.upper
    rng = np.random.default_rng(1)
    freq = rng.uniform(0.2, 1.0, (3, 6))
    phase = rng.uniform(0, 2 * np.pi, (3, 6))
    wave = np.sin(2 * np.pi * freq * t[:, None, None] + phase).sum(axis=1) / 3
    return 0.5 * (lo + hi) + 0.4 * (hi - lo) * wave


def main() -> None:
    hexapod = dynid.load_robot("hexapod")
    panda = dynid.load_robot("panda")
    rng = np.random.default_rng(0)
    q, v, a = random_states(hexapod, N, rng, margin=0.05)
    (t_hex,), t_bare = extended_and_bare([Regressor(hexapod)], q, v, a, rounds=3)
    qp, vp, ap = random_states(panda, N, rng)
    (t_panda,), _ = extended_and_bare([Regressor(panda)], qp, vp, ap, rounds=3)
    print(f"hexapod_regressor_us_per_sample: {1e6 * t_hex / N:.2f}")
    print(f"panda_regressor_us_per_sample: {1e6 * t_panda / N:.2f}")
    print(f"hexapod_over_panda_regressor_time_ratio: {t_hex / t_panda:.2f}")
    print(f"hexapod_over_bare_tree_regressor_time_ratio: {t_hex / t_bare:.2f}")
    print(f"# setting: hexapod_columns = {len(hexapod.parameters)}, panda_columns = "
          f"{len(panda.parameters)}, samples = {N}")

    t = np.arange(N) / 1000.0
    motion = poses(hexapod, t)
    lengths = hexapod.closure.legs(motion).length
    solved = []

    def solve():
        solved.append(direct_kinematics(hexapod, lengths, t=t))

    t_dk = best_of(solve, 3)
    error = np.abs(hexapod.closure.legs(solved[-1]).length - lengths).max()
    print(f"hexapod_direct_kinematics_us_per_sample: {1e6 * t_dk / N:.2f}")
    print(f"hexapod_direct_kinematics_max_leg_residual_m: {error:.3g}")
    print(f"hexapod_direct_kinematics_max_pose_error: {np.abs(solved[-1] - motion).max():.3g}")


if __name__ == "__main__":
    main()
