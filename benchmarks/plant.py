"""Speed of the simulated robot stepped one control period at a time.

Prints one ``name: value`` line per figure, measured side by side in this run: the time of
one ``Plant.step`` on the Panda (one run, one integration substep), of the forward dynamics
it evaluates four times a period (the classical Runge–Kutta stages), and their ratio.
Target: a 7-axis plant steps at 500 Hz in real time with room for the bus traffic, i.e. a
step well under 2 ms; the forward dynamics should take most of it.
"""

from __future__ import annotations

import numpy as np
from _timing import best_of

import dynid
from dynid.hardware import Plant, smooth_coulomb
from dynid.models.dynamics import Dynamics

STEPS = 2000


def main() -> None:
    robot = smooth_coulomb(dynid.load_robot("panda"), joint=0.02, motor=2.0)
    plant = Plant.commissioned(robot, robot.prior, control_rate=1000.0)
    start = plant.actuator_positions()[0].copy()
    targets = start + 0.05 * np.minimum(np.arange(STEPS) / 500, 1.0)[:, None]
    dyn = Dynamics(robot, robot.prior)
    q, v, u = plant.q.copy(), plant.v.copy(), plant.current.copy()

    def steps():
        for target in targets:
            plant.step(target)

    def dynamics():
        for _ in range(STEPS):
            M, h = dyn.terms(q, v)
            np.linalg.solve(M, (u - h)[..., None])

    t_step = best_of(steps) / STEPS
    t_dyn = best_of(dynamics) / STEPS
    print(f"panda_plant_step_us: {t_step * 1e6:.0f}")
    print(f"panda_forward_dynamics_us: {t_dyn * 1e6:.0f}")
    print(f"panda_plant_step_over_four_forward_dynamics_ratio: {t_step / (4 * t_dyn):.3f}")
    print(f"panda_plant_steps_per_s: {1 / t_step:.0f}")


if __name__ == "__main__":
    main()
