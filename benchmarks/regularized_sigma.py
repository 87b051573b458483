"""Honesty of the regularized physically consistent fit's σ on the dVRK PSM.

Prints one ``name: value`` line per figure measured in the run; settings are ``# setting:``
comment lines.

The PSM of ``notebooks/dvrk_psm.py`` (same excitation design, true parameters, noise and
drives), simulated 8 times with different noise; each run identified from the true states
(the simulation's exact positions, velocities and accelerations with the measured, noisy
torque), so that the only error is the torque noise's and the regularization's. For weighted
least squares and for ``PhysicallyConsistent(regularization="euclidean", weight=1.0)``, with its
σ as reported (``covariance="auto"``) and with weighted least squares' covariance
(``covariance="unconstrained"``, which leaves out the bias towards the prior): the RMS of
(estimate − truth) / σ over runs, for the notebook's 15 spring, motor and jaw-friction
parameters and for every base parameter. Honest σ give about 1.
"""

from __future__ import annotations

import warnings

import numpy as np

import dynid
from dynid.demo import true_parameters
from dynid.hardware import SensorNoise, simulate, smooth_coulomb
from dynid.identify import WLS, IdentificationData, PhysicallyConsistent, Recording
from dynid.trajectories import DesignSettings, basis_motion, design_excitation

RUNS = 8
ESTIMATORS = {
    "wls": WLS,
    "regularized_reported": lambda: PhysicallyConsistent(regularization="euclidean",
                                                         weight=1.0),
    "regularized_wls_covariance": lambda: PhysicallyConsistent(
        regularization="euclidean", weight=1.0, covariance="unconstrained"),
}


def psm_runs():
    """The robot, its true parameters and ``RUNS`` recordings of exact states."""
    robot = smooth_coulomb(dynid.load_robot("dvrk_psm"), joint=0.02)
    settings = dict(harmonics=6, frequency=0.18, boundary="ramp", ramp=1.0, samples=60,
                    max_iterations=30, starts=1)
    design = design_excitation(robot, DesignSettings(periods=2, seed=0, **settings))
    print(f"psm_design_condition_number: {design.condition['range']:.1f}")
    theta = true_parameters(robot, np.random.default_rng(0))
    period = 1 / settings["frequency"]
    t = np.arange(0.0, period, 0.01)
    clean = dynid.Regressor(robot).predict(*basis_motion(design.trajectory, robot)(t), theta)
    noise = SensorNoise(position_std=1e-5, output_std=0.02 * np.sqrt(np.mean(clean**2, axis=0)))
    sim = simulate(robot, theta, design.trajectory, 2 * period + 2, control_rate=300,
                   record_every=3, noise=noise, seed=2, runs=RUNS)
    recordings = [Recording(true.time, true.positions, measured.output,
                            velocities=true.velocities, accelerations=true.accelerations,
                            output_kind=robot.output, names=true.names, units=true.units)
                  for measured, true in zip(sim.measured, sim.truth, strict=True)]
    return robot, theta, recordings


def main() -> None:
    print(f"# setting: dVRK PSM as notebooks/dvrk_psm.py, {RUNS} runs, exact states")
    robot, theta, recordings = psm_runs()
    base = dynid.base_parameters(robot)
    params = robot.parameters
    watched = [n for n in base.names if n.startswith(("motor", "roll_spring", "jaw"))
               and n in params.names and params[n].group != "link"]
    columns = [base.names.index(n) for n in watched]
    truth = base.to_base(theta)
    z = {name: [] for name in ESTIMATORS}
    methods = set()
    for rec in recordings:
        data = IdentificationData(robot, rec, base=base)
        for name, make in ESTIMATORS.items():
            with warnings.catch_warnings():  # the residual's colour is not measured here
                warnings.simplefilter("ignore", dynid.DynidWarning)
                est = make().fit(data)
            z[name].append((est.base_params_ - truth) / np.sqrt(np.diag(est.base_cov_)))
            if name == "regularized_reported":
                methods.add(est.result_.covariance_method)
    print(f"# setting: {len(columns)} spring, motor and jaw parameters; the regularized "
          f"fit's covariance='auto' chose {sorted(methods)}")
    for name, values in z.items():
        values = np.array(values)
        print(f"psm_exact_states_{name}_rms_z_15: {np.sqrt(np.mean(values[:, columns]**2)):.2f}")
        print(f"psm_exact_states_{name}_rms_z_all_base: {np.sqrt(np.mean(values**2)):.2f}")


if __name__ == "__main__":
    main()
