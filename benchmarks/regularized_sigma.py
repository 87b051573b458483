"""Honesty of the physically consistent fits' σ on the dVRK PSM.

Prints one ``name: value`` line per figure measured in the run; settings are ``# setting:``
comment lines.

The PSM of ``notebooks/dvrk_psm.py`` (same excitation design, true parameters, noise and
drives), simulated 8 times with different noise; each run identified from the true states
(the simulation's exact positions, velocities and accelerations with the measured, noisy
torque), so that the only error is the torque noise's, the constraints' and the
regularization's. For weighted least squares, for ``PhysicallyConsistent()`` with its σ as
reported, and for ``PhysicallyConsistent(regularization="euclidean", weight=1.0)`` with its σ as
reported (``covariance="auto"``) and with weighted least squares' covariance
(``covariance="unconstrained"``, which leaves out the bias towards the prior): the RMS of
(estimate − truth) / σ over runs, for the notebook's 15 spring, motor and jaw-friction
parameters and for every base parameter. Honest σ give about 1.

The PSM's wrist, jaw and roll links are massless in its description, and so in the truth
(each link's parameters are the prior's scaled): their pseudo-inertias are zero, below the
floor ``J ≽ εI`` of the consistent fit. The run prints how far that truth lies from the
feasible set (in σ of the data: the whitened distance from the truth's base parameters to
the nearest feasible ones), how much of the unregularized fit's error is bias (mean over
runs) and how much spread, the active constraints, and how far the floor moved the estimate.
"""

from __future__ import annotations

import warnings

import numpy as np

import dynid
from dynid.demo import true_parameters
from dynid.hardware import SensorNoise, simulate, smooth_coulomb
from dynid.identify import (
    WLS,
    IdentificationData,
    PhysicallyConsistent,
    Recording,
    pseudo_inertia,
)
from dynid.trajectories import DesignSettings, basis_motion, design_excitation

RUNS = 8
ESTIMATORS = {
    "wls": WLS,
    "consistent_reported": PhysicallyConsistent,
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


def truth_distance(data, truth: np.ndarray) -> float:
    """Whitened distance (in σ of the data) from the base parameters ``truth`` to the nearest
    ones the default consistent fit allows."""
    est = PhysicallyConsistent()
    weights = WLS().fit(data).noise_covariance_
    R = data.system().system(covariance=weights).R
    nearest = est.solve(data.robot, R @ data.base.matrix, R @ truth)[0]
    return float(np.linalg.norm(R @ (data.base.matrix @ nearest - truth)))


def main() -> None:
    print(f"# setting: dVRK PSM as notebooks/dvrk_psm.py, {RUNS} runs, exact states")
    robot, theta, recordings = psm_runs()
    base = dynid.base_parameters(robot)
    params = robot.parameters
    watched = [n for n in base.names if n.startswith(("motor", "roll_spring", "jaw"))
               and n in params.names and params[n].group != "link"]
    columns = [base.names.index(n) for n in watched]
    truth = base.to_base(theta)
    massless = [k for k in params.links
                if np.linalg.eigvalsh(pseudo_inertia(theta[params.link_block(k)]))[0] < 1e-6]
    print(f"# setting: true links below the floor ε = 1e-6: {massless}")
    z = {name: [] for name in ESTIMATORS}
    methods = {name: set() for name in ESTIMATORS}
    plain = {"error": [], "sigma": [], "wls_sigma": [], "floor": [], "active": []}
    for run, rec in enumerate(recordings):
        data = IdentificationData(robot, rec, base=base)
        if run == 0:
            print(f"psm_truth_distance_from_feasible_sigma: {truth_distance(data, truth):.1f}")
        for name, make in ESTIMATORS.items():
            with warnings.catch_warnings():  # the residual's colour is not measured here
                warnings.simplefilter("ignore", dynid.DynidWarning)
                est = make().fit(data)
            z[name].append((est.base_params_ - truth) / np.sqrt(np.diag(est.base_cov_)))
            if name == "wls":
                plain["wls_sigma"].append(np.sqrt(np.diag(est.base_cov_)))
            else:
                methods[name].add(est.result_.covariance_method)
            if name == "consistent_reported":
                diagnostics = est.result_.diagnostics
                plain["error"].append(est.base_params_ - truth)
                plain["sigma"].append(np.sqrt(np.diag(est.base_cov_)))
                plain["floor"].append(diagnostics.get("epsilon_shift", np.zeros(len(truth))))
                plain["active"].append(diagnostics["constrained_base_directions"])
    print(f"# setting: {len(columns)} spring, motor and jaw parameters; covariance='auto' "
          f"chose {({k: sorted(v) for k, v in methods.items() if v})}")
    errors, sigma = np.array(plain["error"]), np.array(plain["sigma"])
    wls_sigma = np.array(plain["wls_sigma"])
    bias = np.abs(errors.mean(axis=0)) / wls_sigma.mean(axis=0)
    spread = errors.std(axis=0, ddof=1) / wls_sigma.mean(axis=0)
    worst = np.argsort(-bias)[:3]
    print("psm_consistent_largest_bias_in_wls_sigma: " + ", ".join(
        f"{base.names[k]} {bias[k]:.1f} (spread {spread[k]:.2f})" for k in worst))
    print(f"psm_consistent_rms_bias_in_wls_sigma_15: {np.sqrt(np.mean(bias[columns]**2)):.2f}")
    print(f"psm_consistent_rms_spread_in_wls_sigma_15: "
          f"{np.sqrt(np.mean(spread[columns]**2)):.2f}")
    print(f"psm_consistent_constrained_base_directions_per_run: {plain['active']}")
    floor = np.abs(np.array(plain["floor"])) / wls_sigma
    print(f"psm_consistent_floor_shift_max_in_wls_sigma: {floor.max():.1f}")
    print(f"psm_consistent_reported_over_wls_sigma_median: {np.median(sigma / wls_sigma):.2f}")
    for name, values in z.items():
        values = np.array(values)
        print(f"psm_exact_states_{name}_rms_z_15: {np.sqrt(np.mean(values[:, columns]**2)):.2f}")
        print(f"psm_exact_states_{name}_rms_z_all_base: {np.sqrt(np.mean(values**2)):.2f}")


if __name__ == "__main__":
    main()
