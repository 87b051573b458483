"""Identification: time and memory against the number of samples, the LMI solve at the dVRK
PSM's size, the Ariane arm with and without actuator dynamics, and the KUKA LWR4+ data.

Prints one ``name: value`` line per figure. Options: ``--max-samples`` (default 10⁶) and
``--skip`` with any of ``scaling lmi ariane kuka``.

* Scaling: the Panda (91 parameters, 62 base) identified from 10³ … 10⁶ samples of the same
  20 s of a Fourier excitation (two periods) with 0.05 N·m torque noise, physically consistent
  (default solver). The samples are generated chunk by chunk and fed to the compressed system
  as they come, so the input never exists as a whole; peak memory is what tracemalloc sees
  allocated while building and solving. Targets: time linear in samples, memory flat.
* LMI solve alone at the size of the dVRK PSM problem (39 193 rows): the embedded
  ``dvrk_psm`` (7 outputs, 153 standard parameters in this model, 77 base) at 5 599 samples.
  Target: under 0.5 s with an optimal status (the dVRK package needed 14.5 minutes with SCS on
  the raw rows and ended inaccurate).
* Ariane: closed-loop simulation of Leborne's excitation (period 80 s, 5 harmonics, motor-side
  hall encoders, current noise 0.02 A), identified with and without the actuator terms, current
  RMSE per joint on a second trajectory (Leborne Table IV); Coulomb terms smoothed for the
  simulation.
* KUKA LWR4+ (FloBaRoID data): validation relative errors.
"""

from __future__ import annotations

import argparse
import itertools
import time
import tracemalloc
from pathlib import Path

import numpy as np

import dynid
from dynid.demo import true_parameters
from dynid.identify import (
    OLS,
    WLS,
    CompressedData,
    DriveLoops,
    FourierReference,
    IdentificationData,
    JointSystem,
    PhysicallyConsistent,
    Processing,
    SensorNoise,
    read_npz,
    simulate,
    smooth_coulomb,
    validate,
)
from dynid.models import Regressor, base_parameters, robot_from_mapping

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def identify_streamed(robot, base, theta, n_samples: int, duration: float = 20.0,
                      chunk: int = 4096) -> tuple[float, float, float]:
    """Build the system from ``n_samples`` spread over ``duration`` seconds of the excitation
    (so every size sees the same motion), generated chunk by chunk, and solve it physically
    consistent; returns the build and solve times (s) and the estimate's median relative
    base-parameter error."""
    rate = n_samples / duration
    reg = Regressor(robot)
    ref = FourierReference.random(robot, harmonics=5, frequency=0.1, seed=1)
    rng = np.random.default_rng(0)
    system = JointSystem(robot.n, base.rank)
    start = time.perf_counter()
    for k in range(0, n_samples, chunk):
        t = np.arange(k, min(k + chunk, n_samples)) / rate
        Y = reg(*ref(t))
        y = Y @ theta
        system.add(base.regressor(Y), y + 0.05 * rng.standard_normal(y.shape))
    built = time.perf_counter()
    est = PhysicallyConsistent().fit(CompressedData(robot, system, base=base))
    solved = time.perf_counter()
    truth = base.to_base(theta)
    error = float(np.median(np.abs(est.base_params_ - truth) / np.abs(truth)))
    return built - start, solved - built, error


def scaling(max_samples: int) -> None:
    robot = dynid.load_robot("panda")
    base = base_parameters(robot)
    theta = true_parameters(robot, np.random.default_rng(0))
    sizes = [n for n in (10**3, 10**4, 10**5, 10**6) if n <= max_samples]
    build = {}
    for n in sizes:
        build[n], solve, err = identify_streamed(robot, base, theta, n)
        print(f"panda_{n}_samples_build_s: {build[n]:.3f}")
        print(f"panda_{n}_samples_solve_s: {solve:.3f}")
        print(f"panda_{n}_samples_total_s: {build[n] + solve:.3f}")
        print(f"panda_{n}_samples_build_us_per_sample: {1e6 * build[n] / n:.2f}")
        print(f"panda_{n}_samples_median_base_relative_error: {err:.3g}")
    for small, large in itertools.pairwise(sizes):
        print(f"panda_build_time_ratio_{large}_over_{small}_samples: "
              f"{build[large] / build[small]:.2f}")
    for n in sizes:
        tracemalloc.start()
        identify_streamed(robot, base, theta, n)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"panda_{n}_samples_peak_memory_MB: {peak / 1e6:.1f}")


def lmi_at_psm_size() -> None:
    robot = dynid.load_robot("dvrk_psm")
    base = base_parameters(robot)
    n_samples = 5599  # 7 outputs: 39 193 rows, the size of the dVRK package's PSM problem
    ref = FourierReference.random(robot, harmonics=6, frequency=0.18, ramp=0.0, seed=1)
    t = np.arange(n_samples) / 200.0
    q, v, a = ref(t)
    Y = Regressor(robot)(q, v, a)
    y = Y @ robot.prior
    y += 0.01 * y.std(axis=0) * np.random.default_rng(0).standard_normal(y.shape)
    system = JointSystem(robot.n, base.rank)
    system.add(base.regressor(Y), y)
    print(f"psm_rows: {n_samples * robot.n}")
    print(f"psm_standard_parameters: {len(robot.parameters)}")
    print(f"psm_base_parameters: {base.rank}")
    stacked = system.system()
    A, z = stacked.R @ base.matrix, stacked.qty
    for solver in ("CLARABEL", "SCS"):  # the default first
        est = PhysicallyConsistent(solver=solver)
        est.solve(robot, A, z)  # compile once (cvxpy caches nothing between problems)
        start = time.perf_counter()
        _, info = est.solve(robot, A, z)
        total = time.perf_counter() - start
        name = solver.lower()
        print(f"psm_lmi_{name}_status: {info['status']}")
        print(f"psm_lmi_{name}_solver_s: {info['solve_time']:.3f}")
        print(f"psm_lmi_{name}_with_modelling_s: {total:.3f}")
        print(f"psm_lmi_{name}_iterations: {info['iterations']}")
        print(f"psm_lmi_{name}_min_pseudo_inertia_eigenvalue: {info['lmi_min_eigenvalue']:.4g}")
    print(f"psm_lmi_dvrk_package_s: {14.5 * 60:.0f}")


def ariane() -> None:
    """Leborne Table IV: current RMSE per joint on a validation trajectory, with and without
    the actuator terms (rotor inertia, motor and screw friction, translating mass)."""
    robot = smooth_coulomb(dynid.load_robot("ariane"), joint=0.02, motor=100.0)
    theta = true_parameters(robot, np.random.default_rng(0))
    bare = robot.with_terms([t for t in robot.terms if t.space != "actuator"])
    noise = SensorNoise(output_std=0.02, output_step=0.001)
    period, rate = 80.0, 200.0
    refs = [FourierReference.random(robot, harmonics=5, frequency=1 / period, ramp=10.0,
                                    seed=seed) for seed in (1, 7)]
    # Drive loops reading the 24-increment hall steps (a noisy velocity loop, as Leborne
    # reports), or a finer 4096-increment position.
    for drive, loops in (("hall", DriveLoops()), ("fine", DriveLoops(encoder_increments=4096))):
        train, val = (simulate(robot, theta, ref, 10.0 + period, control_rate=rate,
                               space="actuator", noise=noise, loops=loops, seed=k).measured[0]
                      for k, ref in enumerate(refs))
        # Leborne IV-D: 3rd-order Butterworth at 0.1 of Nyquist on the positions, current not
        # filtered, least squares; or parallel decimation of regressor and current to 10 Hz.
        for label, proc, estimator in (
                ("leborne", Processing(cutoff=0.1 * rate / 2, order=3), OLS),
                ("decimated", Processing(decimate=20), WLS)):
            for name, model in (("with", robot), ("without", bare)):
                est = estimator().fit(IdentificationData(model, train, processing=proc))
                rmse = validate(model, est.result_, val, processing=proc).rmse
                for j, r in enumerate(rmse):
                    print(f"ariane_{drive}_{label}_rmse_{name}_actuators_joint{j + 1}_A: {r:.4f}")
            truth = validate(robot, theta, val, processing=proc).rmse
            for j, r in enumerate(truth):
                print(f"ariane_{drive}_{label}_rmse_true_parameters_joint{j + 1}_A: {r:.4f}")


def kuka() -> None:
    root = DATASETS / "kuka_lwr4_flobaroid"
    if not root.is_dir():
        print("kuka: dataset not found")
        return
    robot = robot_from_mapping({
        "name": "kuka_lwr4", "kinematics": {"urdf": str(root / "urdf" / "kuka_lwr4.urdf")},
        "defaults": {"friction": {"viscous": 0.0, "coulomb": 0.0, "offset": 0.0}}})
    recs = {k: read_npz(root / "data" / f"measurements_{k}.npz",
                        keys={"time": "times", "output": "torques"},
                        output_kind="joint_torque").skip(500) for k in (1, 2, 3)}
    mass = robot.prior[robot.parameters.where(kind="m")].sum()
    print(f"kuka_prior_validation_on_1_relative_error_pct: "
          f"{validate(robot, robot.prior, recs[1]).overall_relative_error:.3f}")
    for train, test in (((2, 3), 1), ((1,), 3)):
        data = IdentificationData(robot, [recs[k] for k in train])
        tag = "".join(map(str, train))
        for name, est in (("ols", OLS()), ("consistent", PhysicallyConsistent(
                mass_bounds=0.5, total_mass=(0.7 * mass, 1.3 * mass)))):
            start = time.perf_counter()
            est.fit(data)
            val = validate(robot, est.result_, recs[test])
            print(f"kuka_{name}_train_{tag}_validate_{test}_relative_error_pct: "
                  f"{val.overall_relative_error:.3f}")
            print(f"kuka_{name}_train_{tag}_s: {time.perf_counter() - start:.2f}")
            if name == "consistent":
                print(f"kuka_consistent_train_{tag}_total_mass_kg: "
                      f"{est.params_[robot.parameters.where(kind='m')].sum():.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-samples", type=int, default=10**6)
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=("scaling", "lmi", "ariane", "kuka"))
    args = parser.parse_args()
    if "lmi" not in args.skip:
        lmi_at_psm_size()
    if "kuka" not in args.skip:
        kuka()
    if "ariane" not in args.skip:
        ariane()
    if "scaling" not in args.skip:
        scaling(args.max_samples)


if __name__ == "__main__":
    main()
