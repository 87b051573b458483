"""The hexapod: speed of its model, and Abdellatif & Heimann's findings on a simulated PaLiDA.

Prints one ``name: value`` line per figure; settings are ``#`` comment lines. Options:
``--runs`` (default 100), ``--harmonics`` (5), ``--skip`` with any of ``timing study``,
``--identical-legs`` (the study on the model whose legs share one set of link parameters,
Abdellatif's Table I structure, instead of the embedded per-leg model).

Speed. Ratios are measured side by side in this run, interleaved: the hexapod's regressor
(Pinocchio's joint-torque regressor per sample on the cut tree, its non-zero blocks projected
by ``Gᵀ``), the Panda's (7 joints, 70 link columns), and Pinocchio's bare joint-torque
regressor on the hexapod's own cut tree (24 joints, 240 link columns). The direct
kinematics runs along a smooth trajectory sampled at 1 kHz, to a tolerance of 1e-10 m.

Study (:func:`study`). The embedded hexapod with true parameters its priors perturbed by
±10 % (:func:`dynid.demo.true_parameters`, seed 0), 102 base parameters. Two pose-space
excitations of ``--harmonics`` harmonics at 0.5 Hz, designed from the same start, one by the
condition number (Abdellatif (21)) and one D-optimal with the output noise (22). Each is
measured ``--runs`` times (:func:`dynid.hardware.measure`: the platform follows the
trajectory, the leg sensors read its lengths at 250 Hz with 5 µm of white noise and a 1 µm
step, the drives their forces with 5 N of white noise; assumed, the paper states no noise
levels), six periods, the first skipped. Identification is Gauss–Markov (9) unless stated.

* Fig. 4: the D-optimal trajectory's runs processed three ways: ``raw`` (direct kinematics of
  every sample, central differences, no filter), ``time_domain`` (the leg lengths low-passed
  by dynid's automatic zero-phase Butterworth, then mapped; the output filtered and decimated
  alike) and ``frequency_domain`` (direct kinematics, averaging of the periods, DFT low-pass
  at the designed harmonics, spectral derivatives; Abdellatif 3.2–3.3). ``fig4_*_error_pct``:
  the forces each estimate predicts along the D-optimal design's own true motion (and
  ``fig4_*_other_error_pct`` along the condition design's) against the true forces, RMS over
  legs and samples in % of the true forces' RMS, mean over the first ten runs. The finding
  holds when frequency < time domain < raw on both motions.
* Fig. 5: ``fig5_std_ratio_median``: the median over base parameters of the standard
  deviation of the estimates over the runs of the D-optimal trajectory over that of the
  condition-number trajectory (frequency-domain processing); ``fig5_smaller_std_pct``: the
  share of parameters whose deviation the D-optimal design makes smaller. Holds when the
  median ratio is below ``fig5_significant_below``, ``1 − 2/√(runs − 1)``: two of its
  sampling scatters under 1.
* Table II: the first run of the D-optimal trajectory identified by Gauss–Markov (cutoff at
  the designed harmonics) and by maximum likelihood with the cutoff as an unknown (24),
  searched up to four times the designed harmonics. ``table2_max_difference_sigma`` and
  ``table2_rms_difference_sigma``: the differences of the two estimates in the Gauss–Markov
  σ (the estimates agree when the RMS is below 0.5; the paper's are nearly identical);
  ``table2_fc_hz``, the fitted cutoff, is near the nominal one when within one harmonic of
  ``table2_nominal_fc_hz``, the highest designed harmonic (the paper's is);
  ``table2_likelihood_falls_with_cutoff`` is 1 when the likelihood's cost falls at every
  higher cutoff tried, else 0. The simulated motion has no content beyond its harmonics: what
  a cutoff removes above them is measured noise, which (24) counts as a cost, while the 5 µm of
  position noise a higher cutoff lets into the regressor barely reaches the forces, so the
  likelihood has little to prefer a cutoff near the designed harmonics.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import yaml
from _timing import best_of, extended_and_bare

import dynid
from dynid.demo import true_parameters
from dynid.errors import DynidWarning
from dynid.hardware import SensorNoise, measure
from dynid.identify import GaussMarkov, IdentificationData, Processing
from dynid.identify.likelihood import MaximumLikelihood
from dynid.models import Regressor, random_states
from dynid.models.robotfile import robot_from_mapping
from dynid.models.stewart import direct_kinematics
from dynid.trajectories import DesignSettings, FourierTrajectory, design_excitation

N = 20_000
FREQUENCY, RATE, PERIODS = 0.5, 250.0, 6
NOISE = SensorNoise(position_step=1e-6, position_std=5e-6, output_std=5.0)


def poses(robot, t: np.ndarray) -> np.ndarray:
    """A smooth motion over most of the pose box: three sines per coordinate."""
    lo, hi = robot.limits.lower, robot.limits.upper
    rng = np.random.default_rng(1)
    freq = rng.uniform(0.2, 1.0, (3, 6))
    phase = rng.uniform(0, 2 * np.pi, (3, 6))
    wave = np.sin(2 * np.pi * freq * t[:, None, None] + phase).sum(axis=1) / 3
    return 0.5 * (lo + hi) + 0.4 * (hi - lo) * wave


def timing() -> None:
    hexapod = dynid.load_robot("hexapod")
    panda = dynid.load_robot("panda")
    rng = np.random.default_rng(0)
    q, v, a = random_states(hexapod, N, rng, margin=0.05)
    qp, vp, ap = random_states(panda, N, rng)
    t_hex, t_bare, t_panda = (float("inf"),) * 3
    for _ in range(3):  # interleaved, so that all see the same machine state
        (h,), b = extended_and_bare([Regressor(hexapod)], q, v, a, rounds=1)
        (pa,), _ = extended_and_bare([Regressor(panda)], qp, vp, ap, rounds=1)
        t_hex, t_bare, t_panda = (min(x, y) for x, y in zip(
            (t_hex, t_bare, t_panda), (h, b, pa), strict=True))
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


def designs(robot, harmonics: int, *, samples: int = 40, iterations: int = 20
            ) -> dict[str, FourierTrajectory]:
    """The condition-number (21) and D-optimal (22) excitations from the same start, each
    repeated over ``PERIODS`` periods."""
    out = {}
    for criterion in ("condition", "d-optimal"):
        noise = tuple(np.full(robot.n, NOISE.output_std)) if criterion == "d-optimal" else None
        settings = DesignSettings(harmonics=harmonics, frequency=FREQUENCY, samples=samples,
                                  max_iterations=iterations, starts=1, criterion=criterion,
                                  noise=noise)
        traj = design_excitation(robot, settings).trajectory
        out[criterion] = FourierTrajectory(traj.coefficients, FREQUENCY, traj.names,
                                           periods=PERIODS)
    return out


def processings(harmonics: int) -> dict[str, Processing]:
    """Fig. 4's three ways from leg lengths to pose states."""
    return {"raw": Processing(cutoff=None, decimate=1, deadzone=None, kinematics="before"),
            "time_domain": Processing(deadzone=None, kinematics="after"),
            "frequency_domain": Processing(period=1 / FREQUENCY,
                                           harmonics_cutoff=(harmonics + 0.5) * FREQUENCY)}


def fit(estimator, robot, recording, base, processing):
    """The estimator fitted on one recording; the residual's colour is not reported."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)
        return estimator.fit(IdentificationData(robot, recording, base=base,
                                                processing=processing))


def prediction_error(robot, theta, truth) -> float:
    """RMS error (%) of the forces predicted by ``theta`` along a true motion."""
    y = Regressor(robot).predict(truth.positions, truth.velocities, truth.accelerations, theta)
    return 100 * np.sqrt(np.mean((y - truth.output) ** 2) / np.mean(truth.output ** 2))


def hexapod(identical_legs: bool = False) -> dynid.Robot:
    """The embedded hexapod, or its model with identical legs (Abdellatif's Table I)."""
    if not identical_legs:
        return dynid.load_robot("hexapod")
    path = Path(dynid.models.library.__file__).parent / "hexapod.yaml"
    data = {**yaml.safe_load(path.read_text()), "identical_legs": True}
    return robot_from_mapping(data)


def study(runs: int, harmonics: int, *, samples: int = 40, iterations: int = 20,
          fig4_runs: int = 10, identical_legs: bool = False) -> dict[str, float]:
    """The study of the module docstring; returns its figures by name."""
    robot = hexapod(identical_legs)
    theta = true_parameters(robot, np.random.default_rng(0))
    base = dynid.base_parameters(robot)
    trajectories = designs(robot, harmonics, samples=samples, iterations=iterations)
    sims = {name: measure(robot, theta, traj, PERIODS / FREQUENCY, rate=RATE,
                          space="actuator", noise=NOISE, runs=runs, seed=k)
            for k, (name, traj) in enumerate(trajectories.items())}
    out: dict[str, float] = {}
    # Fig. 4: processing of the same runs, predictions along the true motion of the same
    # trajectory and of the other one.
    own, other = sims["d-optimal"].truth[0], sims["condition"].truth[0]
    for name, proc in processings(harmonics).items():
        thetas = [fit(GaussMarkov(), robot, rec, base, proc).params_
                  for rec in sims["d-optimal"].measured[:fig4_runs]]
        out[f"fig4_{name}_error_pct"] = float(np.mean([prediction_error(robot, t, own)
                                                       for t in thetas]))
        out[f"fig4_{name}_other_error_pct"] = float(np.mean([prediction_error(robot, t, other)
                                                             for t in thetas]))
    # Fig. 5: spread of the estimates over the runs of each design.
    freq = processings(harmonics)["frequency_domain"]
    spread = {}
    for name, sim in sims.items():
        estimates = np.array([fit(GaussMarkov(), robot, rec, base, freq).base_params_
                              for rec in sim.measured])
        spread[name] = estimates.std(axis=0, ddof=1)
    ratio = spread["d-optimal"] / spread["condition"]
    out["fig5_std_ratio_median"] = float(np.median(ratio))
    out["fig5_smaller_std_pct"] = float(100 * np.mean(ratio < 1))
    out["fig5_std_ratio_geometric_mean"] = float(np.exp(np.mean(np.log(ratio))))
    # A ratio of two standard deviations of `runs` samples each scatters by about
    # 1/√(runs − 1): below this bound the ratio is two such scatters under 1.
    out["fig5_significant_below"] = float(1 - 2 / np.sqrt(runs - 1))
    # Table II: Gauss–Markov against maximum likelihood on one run.
    rec = sims["d-optimal"].measured[0]
    gm = fit(GaussMarkov(), robot, rec, base, freq)
    ml = fit(MaximumLikelihood(max_harmonic=4 * harmonics), robot, rec, base,
             Processing(period=1 / FREQUENCY))
    sigma = np.sqrt(np.diag(gm.base_cov_))
    true_b = base.to_base(theta)
    difference = np.abs(ml.base_params_ - gm.base_params_) / sigma
    out["table2_max_difference_sigma"] = float(np.max(difference))
    out["table2_rms_difference_sigma"] = float(np.sqrt(np.mean(difference ** 2)))
    out["table2_fc_hz"] = float(ml.cutoff_)
    costs = np.array([ml.profile_[c] for c in sorted(ml.profile_)])
    finite = costs[np.isfinite(costs)]
    out["table2_likelihood_falls_with_cutoff"] = float(np.all(np.diff(finite) < 0))
    out["table2_nominal_fc_hz"] = harmonics * FREQUENCY
    out["table2_gm_z_rms"] = float(np.sqrt(np.mean(((gm.base_params_ - true_b) / sigma) ** 2)))
    out["table2_ml_z_rms"] = float(np.sqrt(np.mean(
        ((ml.base_params_ - true_b) / np.sqrt(np.diag(ml.base_cov_))) ** 2)))
    return out


def holds(figures: dict[str, float]) -> dict[str, bool]:
    """Whether each finding of the paper holds in the figures."""
    f = figures
    return {"fig4_holds": all(f[f"fig4_frequency_domain_{m}error_pct"]
                              < f[f"fig4_time_domain_{m}error_pct"] < f[f"fig4_raw_{m}error_pct"]
                              for m in ("", "other_")),
            "fig5_holds": f["fig5_std_ratio_median"] < f["fig5_significant_below"],
            "table2_estimates_agree": f["table2_rms_difference_sigma"] < 0.5,
            "table2_fc_near_nominal": abs(f["table2_fc_hz"] - f["table2_nominal_fc_hz"])
            <= FREQUENCY}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--harmonics", type=int, default=5)
    parser.add_argument("--skip", nargs="*", default=[], choices=["timing", "study"])
    parser.add_argument("--identical-legs", action="store_true",
                        help="study the model whose six legs share their parameters")
    args = parser.parse_args()
    if "timing" not in args.skip:
        timing()
    if "study" not in args.skip:
        print(f"# setting: runs = {args.runs}, harmonics = {args.harmonics}, "
              f"{FREQUENCY} Hz, {PERIODS} periods at {RATE:g} Hz, noise {NOISE}, "
              f"identical legs {args.identical_legs}")
        figures = study(args.runs, args.harmonics, identical_legs=args.identical_legs)
        for name, value in figures.items():
            print(f"{name}: {value:.4g}")
        for name, ok in holds(figures).items():
            print(f"{name}: {'yes' if ok else 'no'}")


if __name__ == "__main__":
    main()
