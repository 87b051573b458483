"""Identification methods on simulated robots with known truth: drive gains by the payload
method, payload identification, Stribeck friction and essential parameters (the Panda), and
closed-loop estimators (a two-joint arm).

Prints one ``name: value`` line per figure measured in the run; settings are ``#`` comment
lines. Options: ``--seeds`` (default 50), ``--closed-loop-seeds`` (default 50) and ``--skip``
with any of ``gains payload friction essential closedloop``.

Both studies share one pair of closed-loop simulations of the Panda (:func:`dynid.hardware.
simulate`, cascaded drive loops at 500 Hz, Coulomb sign smoothed over 0.05 rad/s) along one
random Fourier excitation of 8 s, without and with a 3 kg box on the flange, each with
``--seeds`` independent noise draws: the drives record currents with 0.01 A of white noise
and a 1 mA step, the joint encoders 2²⁰ steps per turn. The output is current: the Panda file
with torque constants of 0.07 to 0.13 N·m/A assumed (gear ratio 100), the true parameters its
priors perturbed by ±10 %.

* Drive gains: per seed, :func:`~dynid.identify.identify_drive_gains` from the two runs with
  the box known. ``drive_gain_error_pct``: RMS over seeds and actuators of the relative error
  (target ≤ 1 %); ``drive_gain_worst_pct``: the RMS of the worst actuator; ``drive_gain_z_rms``:
  RMS of (estimate − truth)/σ.
* Payload: per seed, the robot identified by :class:`~dynid.identify.WLS` from the run without
  the box (its torque constants known; the processing chosen on the first seed), then
  :func:`~dynid.identify.identify_payload` from the run with it. ``payload_mass_error_pct``:
  RMS relative mass error; ``payload_com_error_mm``: RMS distance of the centre of mass;
  ``payload_z_rms``: RMS of (estimate − truth)/σ over the ten parameters.
* Friction: the Panda (current output as above) with Stribeck friction on every joint (true
  Stribeck velocities 0.04 to 0.1 rad/s, static friction 1.5 times the Coulomb one, sign
  smoothed over 0.01 rad/s), ``--seeds`` closed-loop runs of 8 s and one validation run along
  another excitation. Per seed, :func:`~dynid.identify.identify_friction` (WLS, processing
  chosen on the first seed, no dead zone) from a start of 0.3 rad/s, and a WLS fit with plain
  Coulomb friction. ``stribeck_velocity_error_pct``: RMS over seeds and joints of the relative
  error of the Stribeck velocity (``_bias_pct`` its mean, ``_z_rms`` the RMS of
  (estimate − truth)/σ); ``stribeck_coulomb_error_pct``, ``stribeck_static_error_pct``: RMS
  relative errors of f_c and f_s; ``stribeck_validation_error_pct`` and
  ``coulomb_validation_error_pct``: mean overall relative error on the validation run of the
  two models.
* Essential parameters: per seed, :func:`~dynid.identify.essential_parameters` with
  :class:`~dynid.identify.WLS` on the run without the box (processing as for the payload),
  the validation error measured on a run along another random excitation (its own noise
  seed; tolerance 1 %). ``essential_parameters_count``: the median number kept, with the
  base count beside; ``essential_valid_pct`` and ``full_set_valid_pct``: the median overall
  relative error on a second run of that other excitation (another noise draw, not used to
  choose), of the kept set and of the full set.
* Closed-loop estimators: the two-joint arm of ``tests/data/arm2.yaml`` (gear ratio 50) along
  a random Fourier reference (3 harmonics of 0.5 Hz) for 4 s, its drives at 250 Hz reading
  motor encoders of 4096 increments per turn with white noise of 10 increments (σ), which
  they feed back and record (actuator side; exact output). Per seed, OLS, IDIM-IV and DIDIM
  (finite-difference Jacobian) from the same processed data (Butterworth cutoff 15 Hz, decimation by
  5), the estimators' simulator :class:`~dynid.hardware.ClosedLoop` with the experiment's
  gains. Bias of an estimator: per base parameter ``|mean error over seeds|`` over the spread
  (standard deviation over seeds) of the OLS error, the median over the parameters.
  ``iv_bias_over_ols_bias``, ``didim_bias_over_ols_bias``: the ratios to OLS's (target < 0.5);
  ``ols_bias_sd``: OLS's own bias in those units; ``iv_z_rms``, ``didim_z_rms``: RMS of
  (estimate − truth)/σ (the bias included; σ from the output error's autocovariance,
  :mod:`dynid.identify._coloured`), 1 for an honest σ.
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from dynid.demo import true_parameters
from dynid.errors import DynidWarning
from dynid.hardware import (
    ClosedLoop,
    DriveLoops,
    FourierReference,
    SensorNoise,
    simulate,
    smooth_coulomb,
)
from dynid.identify import (
    DIDIM,
    OLS,
    WLS,
    IdentificationData,
    InstrumentalVariables,
    Processing,
    essential_parameters,
    identify_drive_gains,
    identify_friction,
    identify_payload,
    validate,
)
from dynid.identify.gains import with_torque_constants
from dynid.models import Body, LinkInertia, base_parameters, load_robot, with_friction

TORQUE_CONSTANTS = (0.12, 0.11, 0.13, 0.10, 0.08, 0.09, 0.07)  # N·m/A, assumed
BOX = LinkInertia(3.0, (0.02, -0.01, 0.05), (0.012, 0.001, 0.0, 0.015, 0.0, 0.008))


def panda_with_currents():
    """The embedded Panda with current output and :data:`TORQUE_CONSTANTS`."""
    panda = smooth_coulomb(load_robot("panda"), joint=0.05)
    return with_torque_constants(panda, TORQUE_CONSTANTS)


def simulations(seeds: int):
    robot = panda_with_currents()
    theta = true_parameters(robot, np.random.default_rng(0))
    box = Body("box", "flange", BOX, known=True)
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, seed=1)
    noise = SensorNoise(output_std=0.01, output_step=0.001)
    start = time.perf_counter()
    empty = simulate(robot, theta, ref, 8.0, control_rate=500, noise=noise, runs=seeds, seed=3)
    loaded = simulate(replace(robot, bodies=(box,)), theta, ref, 8.0, control_rate=500,
                      noise=noise, runs=seeds, seed=4)
    print(f"# simulation: {seeds} seeds, 2 runs of 8 s: {time.perf_counter() - start:.0f} s")
    return robot, theta, box, empty.measured, loaded.measured


def gains_study(robot, box, empty, loaded) -> None:
    truth = np.array(TORQUE_CONSTANTS)
    errors, z = [], []
    start = time.perf_counter()
    for e, f in zip(empty, loaded, strict=True):
        gains = identify_drive_gains(robot, e, f, box)
        errors.append(100 * (gains.gains / truth - 1))
        z.append((gains.gains - truth) / gains.sigma)
    errors, z = np.array(errors), np.array(z)
    per_actuator = np.sqrt(np.mean(errors**2, axis=0))
    print(f"# drive gains: {len(errors)} seeds, {(time.perf_counter() - start) / len(errors):.2f}"
          f" s each; RMS error per actuator % {np.round(per_actuator, 3).tolist()}")
    print(f"drive_gain_error_pct: {np.sqrt(np.mean(errors**2)):.3f}")
    print(f"drive_gain_worst_pct: {per_actuator.max():.3f}")
    print(f"drive_gain_z_rms: {np.sqrt(np.mean(z**2)):.2f}")


def payload_study(robot, box, empty, loaded) -> None:
    base = base_parameters(robot)
    truth = box.values
    mass, com, z = [], [], []
    processing = None
    start = time.perf_counter()
    for e, f in zip(empty, loaded, strict=True):
        result = WLS().fit(IdentificationData(robot, e, base=base,
                                              processing=processing)).result_
        processing = processing or result.processing
        payload = identify_payload(robot, result, f, "flange", name="box")
        mass.append(100 * (payload.mass / BOX.mass - 1))
        com.append(1e3 * np.linalg.norm(payload.com - np.array(BOX.com)))
        z.append((payload.params - truth) / payload.sigma)
    z = np.array(z)
    print(f"# payload: {len(mass)} seeds, {(time.perf_counter() - start) / len(mass):.2f} s each"
          f" (robot and payload); processing {processing.cutoff} Hz, decimated by "
          f"{processing.decimate}")
    print(f"payload_mass_error_pct: {np.sqrt(np.mean(np.square(mass))):.4f}")
    print(f"payload_com_error_mm: {np.sqrt(np.mean(np.square(com))):.3f}")
    print(f"payload_z_rms: {np.sqrt(np.mean(z**2)):.2f}")


STRIBECK_VELOCITIES = (0.05, 0.08, 0.06, 0.10, 0.04, 0.07, 0.05)  # rad/s, true


def friction_study(seeds: int) -> None:
    """Stribeck friction on every Panda joint, identified by variable projection."""
    names = [f"joint{j + 1}" for j in range(7)]
    truth_v = dict(zip(names, STRIBECK_VELOCITIES, strict=True))
    robot = with_torque_constants(smooth_coulomb(with_friction(
        load_robot("panda"), "stribeck", velocities=truth_v), joint=0.01), TORQUE_CONSTANTS)
    theta = true_parameters(robot, np.random.default_rng(0))
    params = robot.parameters.names
    fc = np.array([params.index(f"{o}.fc") for o in names])
    fs = np.array([params.index(f"{o}.fs") for o in names])
    theta[fs] = 1.5 * theta[fc]
    noise = SensorNoise(output_std=0.01, output_step=0.001)
    start = time.perf_counter()
    runs = simulate(robot, theta, FourierReference.random(robot, harmonics=5, frequency=0.2,
                                                          seed=1),
                    8.0, control_rate=500, noise=noise, runs=seeds, seed=5).measured
    valid = simulate(robot, theta, FourierReference.random(robot, harmonics=5, frequency=0.2,
                                                           seed=2),
                     8.0, control_rate=500, noise=noise, runs=1, seed=6).measured[0]
    print(f"# friction simulation: {seeds} + 1 runs of 8 s: {time.perf_counter() - start:.0f} s")
    guess = with_friction(robot, "stribeck", velocities=0.3)
    coulomb = with_friction(robot, "coulomb")
    v_err, z, fc_err, fs_err, evaluations, val_s, val_c = [], [], [], [], [], [], []
    processing = Processing(deadzone=None)  # the rows near zero speed are the Stribeck ones
    start = time.perf_counter()
    for k, rec in enumerate(runs):
        data = IdentificationData(guess, rec, processing=processing)
        processing = data.processing if k == 0 else processing
        fit = identify_friction(data, WLS())
        v = np.array([fit.velocities[o] for o in names])
        sigma = np.array([fit.sigma[o] for o in names])
        v_err.append(100 * (v / np.array(STRIBECK_VELOCITIES) - 1))
        z.append((v - np.array(STRIBECK_VELOCITIES)) / sigma)
        est = fit.result.params
        fc_err.append(100 * (est[fc] / theta[fc] - 1))
        fs_err.append(100 * (est[fs] / theta[fs] - 1))
        evaluations.append(fit.evaluations)
        val_s.append(validate(fit.robot, fit.result, valid).overall_relative_error)
        plain = WLS().fit(data.with_robot(coulomb)).result_
        val_c.append(validate(coulomb, plain, valid).overall_relative_error)
    v_err, z = np.array(v_err), np.array(z)
    per_joint = np.sqrt(np.mean(v_err**2, axis=0))
    print(f"# friction: {len(v_err)} seeds, {(time.perf_counter() - start) / len(v_err):.1f} s "
          f"each (variable projection, {np.mean(evaluations):.0f} systems built on average, "
          f"and the Coulomb fit); true v_s {list(STRIBECK_VELOCITIES)} rad/s, f_s = 1.5 f_c, "
          f"sign smoothed over 0.01 rad/s; RMS error of v_s per joint % "
          f"{np.round(per_joint, 2).tolist()}")
    print(f"stribeck_velocity_error_pct: {np.sqrt(np.mean(v_err**2)):.2f}")
    print(f"stribeck_velocity_bias_pct: {np.mean(v_err):.2f}")
    print(f"stribeck_velocity_z_rms: {np.sqrt(np.mean(z**2)):.2f}")
    print(f"stribeck_coulomb_error_pct: {np.sqrt(np.mean(np.square(fc_err))):.2f}")
    print(f"stribeck_static_error_pct: {np.sqrt(np.mean(np.square(fs_err))):.2f}")
    print(f"stribeck_validation_error_pct: {np.mean(val_s):.3f}")
    print(f"coulomb_validation_error_pct: {np.mean(val_c):.3f}")


def essential_study(robot, empty, seeds: int) -> None:
    theta = true_parameters(robot, np.random.default_rng(0))
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, seed=2)
    noise = SensorNoise(output_std=0.01, output_step=0.001)
    start = time.perf_counter()
    other = simulate(robot, theta, ref, 8.0, control_rate=500, noise=noise, runs=2 * seeds,
                     seed=5).measured
    simulated = time.perf_counter() - start
    base = base_parameters(robot)
    kept, essential, full, processing = [], [], [], None
    start = time.perf_counter()
    for k, run in enumerate(empty):
        data = IdentificationData(robot, run, base=base, processing=processing)
        processing = processing or data.processing
        ess = essential_parameters(data, WLS(), validation=other[2 * k], tolerance=0.01)
        kept.append(len(ess.kept))
        fresh = other[2 * k + 1]
        essential.append(validate(robot, ess.result, fresh).overall_relative_error)
        full.append(validate(robot, ess.full, fresh).overall_relative_error)
    each = (time.perf_counter() - start) / len(kept)
    print(f"# essential parameters: {len(kept)} seeds, {each:.2f} s each; validation runs "
          f"simulated in {simulated:.0f} s; kept from {min(kept)} to {max(kept)}")
    print(f"essential_parameters_count: {np.median(kept):.0f} of {base.rank}")
    print(f"essential_valid_pct: {np.median(essential):.3f}")
    print(f"full_set_valid_pct: {np.median(full):.3f}")


ARM = Path(__file__).resolve().parents[1] / "tests" / "data" / "arm2.yaml"


def closed_loop_study(seeds: int) -> None:
    robot = load_robot(ARM)
    theta = true_parameters(robot, np.random.default_rng(0))
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, seed=2)
    increments, counts, rate, duration = 4096, 10, 250.0, 4.0
    step = 2 * np.pi / increments
    loops = DriveLoops(encoder_increments=increments)
    noise = SensorNoise(position_step=step, position_std=counts * step)
    sim = simulate(robot, theta, ref, duration, control_rate=rate, space="actuator",
                   loops=loops, noise=noise, runs=seeds, seed=3)
    loop = ClosedLoop(robot, ref, duration, gains=sim.gains, control_rate=rate, loops=loops)
    base = base_parameters(robot)
    truth = base.matrix @ theta
    processing = Processing(cutoff=15.0, decimate=5)
    estimators = {"ols": OLS, "iv": lambda: InstrumentalVariables(simulator=loop),
                  "didim": lambda: DIDIM(simulator=loop)}
    errors = {k: [] for k in estimators}
    z = {k: [] for k in estimators}
    seconds = dict.fromkeys(estimators, 0.0)
    for rec in sim.measured:
        data = IdentificationData(robot, rec, base=base, processing=processing)
        for name, make in estimators.items():
            start = time.perf_counter()
            est = make().fit(data)
            seconds[name] += time.perf_counter() - start
            errors[name].append(est.base_params_ - truth)
            z[name].append((est.base_params_ - truth) / np.sqrt(np.diag(est.base_cov_)))
    spread = np.std(errors["ols"], axis=0)
    bias = {k: float(np.median(np.abs(np.mean(e, axis=0)) / spread)) for k, e in errors.items()}
    print(f"# closed loop: arm2, {seeds} seeds, encoders {increments} increments/turn, noise "
          f"{counts} increments; seconds per fit " +
          ", ".join(f"{k} {v / seeds:.1f}" for k, v in seconds.items()))
    print(f"ols_bias_sd: {bias['ols']:.3f}")
    print(f"iv_bias_over_ols_bias: {bias['iv'] / bias['ols']:.3f}")
    print(f"didim_bias_over_ols_bias: {bias['didim'] / bias['ols']:.3f}")
    for k in ("iv", "didim"):
        print(f"{k}_z_rms: {np.sqrt(np.mean(np.square(z[k]))):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--closed-loop-seeds", type=int, default=50)
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["gains", "payload", "friction", "essential", "closedloop"])
    args = parser.parse_args()
    warnings.simplefilter("ignore", DynidWarning)  # residual colour of the closed loop
    if not {"gains", "payload", "essential"} <= set(args.skip):
        print(f"# setting: Panda, current output, 3 kg box on the flange, {args.seeds} seeds, "
              "current noise 0.01 A")
        robot, _, box, empty, loaded = simulations(args.seeds)
        if "gains" not in args.skip:
            gains_study(robot, box, empty, loaded)
        if "payload" not in args.skip:
            payload_study(robot, box, empty, loaded)
        if "essential" not in args.skip:
            essential_study(robot, empty, args.seeds)
    if "friction" not in args.skip:
        friction_study(args.seeds)
    if "closedloop" not in args.skip:
        closed_loop_study(args.closed_loop_seeds)


if __name__ == "__main__":
    main()
