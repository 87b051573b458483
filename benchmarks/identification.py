"""Identification: time and memory against the number of samples, the LMI solve at the dVRK
PSM's size, and the Ariane arm with and without actuator dynamics (the real robots' data:
``benchmarks/realdata.py``).

Prints one ``name: value`` line per figure measured in the run; settings and published figures
for reference are ``#`` comment lines (``# setting: …``, ``# anchor: …``). Options:
``--max-samples`` (default 10⁶) and ``--skip`` with any of ``scaling lmi ariane``.

* Scaling: the Panda (91 parameters, 62 base) identified from 10³ … 10⁶ samples of the same
  20 s of a Fourier excitation (two periods) with 0.05 N·m torque noise, physically consistent
  (default solver). The samples are generated chunk by chunk and streamed through
  ``CompressedData.from_chunks`` as they come, so the input never exists as a whole; peak
  memory is what tracemalloc sees allocated while building and solving. Targets: time linear
  in samples, memory flat. Up to 10⁵ samples the same data also go the recording path, a
  ``Recording`` in memory through ``IdentificationData`` (processing, saturation flags,
  chunked regressor), whose memory grows with the recording.
* LMI solve alone at the size of the dVRK PSM problem (39 193 rows): the embedded
  ``dvrk_psm`` (7 outputs, 153 standard parameters in this model, 77 base) at 5 599 samples.
  Target: under 0.5 s with an optimal status (the dVRK package needed 14.5 minutes with SCS on
  the raw rows and ended inaccurate).
* Ariane: closed-loop simulation of Leborne's excitation (period 80 s, 5 harmonics, motor-side
  hall encoders, current noise 0.02 A), identified with and without the actuator terms, current
  RMSE per joint on a second trajectory (Leborne Table IV); Coulomb terms smoothed for the
  simulation.
"""

from __future__ import annotations

import argparse
import itertools
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from _timing import best_of

import dynid
from dynid.demo import true_parameters
from dynid.hardware import DriveLoops, FourierReference, SensorNoise, simulate, smooth_coulomb
from dynid.identify import (
    OLS,
    WLS,
    CompressedData,
    IdentificationData,
    JointSystem,
    PhysicallyConsistent,
    Processing,
    Recording,
    validate,
)
from dynid.models import Regressor, base_parameters

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
DURATION = 20.0  # s of the excitation, whatever the number of samples


def excitation_chunks(robot, theta, ref, n_samples: int, chunk: int = 4096):
    """Chunks ``(q, v, a, y)`` of ``n_samples`` spread over the same :data:`DURATION` of the
    reference, with 0.05 N·m output noise, generated one at a time."""
    reg = Regressor(robot)
    rng = np.random.default_rng(0)
    rate = n_samples / DURATION
    for k in range(0, n_samples, chunk):
        q, v, a = ref(np.arange(k, min(k + chunk, n_samples)) / rate)
        y = reg.predict(q, v, a, theta)
        yield q, v, a, y + 0.05 * rng.standard_normal(y.shape)


def identify_streamed(robot, base, theta, ref, n_samples: int
                      ) -> tuple[float, float, float]:
    """Stream the chunks into ``CompressedData.from_chunks`` and solve physically consistent;
    returns the time to make and compress the chunks, the solve time (s) and the estimate's
    median relative base-parameter error."""
    start = time.perf_counter()
    data = CompressedData.from_chunks(robot, excitation_chunks(robot, theta, ref, n_samples),
                                      base=base)
    built = time.perf_counter()
    est = PhysicallyConsistent().fit(data)
    solved = time.perf_counter()
    truth = base.to_base(theta)
    error = float(np.median(np.abs(est.base_params_ - truth) / np.abs(truth)))
    return built - start, solved - built, error


def recording_path(robot, base, theta, ref, n_samples: int) -> float:
    """Build time (s) of the system from the same samples held as a Recording and processed
    by IdentificationData."""
    chunks = excitation_chunks(robot, theta, ref, n_samples)
    q, v, a, y = (np.concatenate(x) for x in zip(*chunks, strict=True))
    rec = Recording(np.arange(n_samples) * DURATION / n_samples, q, y, velocities=v,
                    accelerations=a)
    return best_of(lambda: IdentificationData(robot, rec, base=base).system(),
                   3 if n_samples <= 10**4 else 1)


def scaling(max_samples: int) -> None:
    robot = dynid.load_robot("panda")
    base = base_parameters(robot)
    theta = true_parameters(robot, np.random.default_rng(0))
    ref = FourierReference.random(robot, harmonics=5, frequency=0.1, seed=1)
    sizes = [n for n in (10**3, 10**4, 10**5, 10**6) if n <= max_samples]
    build = {}
    for n in sizes:
        repeat = 3 if n <= 10**4 else 1
        runs = [identify_streamed(robot, base, theta, ref, n) for _ in range(repeat)]
        # The streamed build includes making the data; that part alone is timed apart.
        generate = best_of(lambda n=n: list(excitation_chunks(robot, theta, ref, n)), repeat)
        streamed, solve, err = (min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2])
        build[n] = streamed - generate
        print(f"panda_{n}_samples_generate_s: {generate:.3f}")
        print(f"panda_{n}_samples_build_s: {build[n]:.3f}")
        print(f"panda_{n}_samples_solve_s: {solve:.3f}")
        print(f"panda_{n}_samples_total_s: {build[n] + solve:.3f}")
        print(f"panda_{n}_samples_build_us_per_sample: {1e6 * build[n] / n:.2f}")
        print(f"panda_{n}_samples_median_base_relative_error: {err:.3g}")
        if n <= 10**5:
            print(f"panda_{n}_samples_recording_path_build_s: "
                  f"{recording_path(robot, base, theta, ref, n):.3f}")
    for small, large in itertools.pairwise(sizes):
        print(f"panda_build_time_ratio_{large}_over_{small}_samples: "
              f"{build[large] / build[small]:.2f}")
    for n in sizes:
        for path, run in (("", identify_streamed), ("recording_path_", recording_path)):
            if path and n > 10**5:
                continue
            tracemalloc.start()
            run(robot, base, theta, ref, n)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(f"panda_{n}_samples_{path}peak_memory_MB: {peak / 1e6:.1f}")


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
    print(f"# setting: psm_rows = {n_samples * robot.n}")
    print(f"# setting: psm_standard_parameters = {len(robot.parameters)}")
    print(f"psm_base_parameters: {base.rank}")
    stacked = system.system()
    A, z = stacked.R @ base.matrix, stacked.qty
    for solver in ("CLARABEL", "SCS"):  # the default first
        est = PhysicallyConsistent(solver=solver)
        _, info = est.solve(robot, A, z)
        total = best_of(lambda est=est: est.solve(robot, A, z), 3)
        name = solver.lower()
        print(f"psm_lmi_{name}_status: {info['status']}")
        print(f"psm_lmi_{name}_solver_s: {info['solve_time']:.3f}")
        print(f"psm_lmi_{name}_with_modelling_s: {total:.3f}")
        print(f"psm_lmi_{name}_iterations: {info['iterations']}")
        print(f"psm_lmi_{name}_min_pseudo_inertia_eigenvalue: {info['lmi_min_eigenvalue']:.4g}")
    print("# anchor: the dVRK package's PSM LMI solve (SCS on the raw rows) took 14.5 min and "
          "ended inaccurate (Wang et al.)")


def ariane_model():
    """The Ariane arm with its Coulomb terms smoothed for simulation, true parameters near the
    priors, the same arm without its actuator terms, and the sensors."""
    robot = smooth_coulomb(dynid.load_robot("ariane"), joint=0.02, motor=100.0)
    theta = true_parameters(robot, np.random.default_rng(0))
    bare = robot.with_terms([t for t in robot.terms if t.space != "actuator"])
    return robot, theta, bare, SensorNoise(output_std=0.02, output_step=0.001)


def ariane() -> None:
    """Leborne Table IV: current RMSE per joint on a validation trajectory, with and without
    the actuator terms (rotor inertia, motor and screw friction, translating mass)."""
    robot, theta, bare, noise = ariane_model()
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
        # filtered, least squares; parallel decimation of regressor and current to 10 Hz; the
        # default processing, chosen for the recording.
        for label, proc, estimator in (
                ("leborne", Processing(cutoff=0.1 * rate / 2, order=3, decimate=1), OLS),
                ("decimated", Processing(cutoff=None, decimate=20), WLS),
                ("default", Processing(), WLS)):
            used = {}
            for name, model in (("with", robot), ("without", bare)):
                with warnings.catch_warnings():  # a coloured residual is expected here
                    warnings.filterwarnings("ignore", message="identification: the residual",
                                            category=dynid.DynidWarning)
                    est = estimator().fit(IdentificationData(model, train, processing=proc))
                used[name] = est.result_.processing  # the validation processes as identified
                rmse = validate(model, est.result_, val).rmse
                for j, r in enumerate(rmse):
                    print(f"ariane_{drive}_{label}_rmse_{name}_actuators_joint{j + 1}_A: {r:.4f}")
            truth = validate(robot, theta, val, processing=used["with"]).rmse
            for j, r in enumerate(truth):
                print(f"ariane_{drive}_{label}_rmse_true_parameters_joint{j + 1}_A: {r:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-samples", type=int, default=10**6)
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=("scaling", "lmi", "ariane"))
    args = parser.parse_args()
    if "lmi" not in args.skip:
        lmi_at_psm_size()
    if "ariane" not in args.skip:
        ariane()
    if "scaling" not in args.skip:
        scaling(args.max_samples)


if __name__ == "__main__":
    main()
