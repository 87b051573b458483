"""Ground truth: closed-loop simulations with known parameters, identified back.

The Panda (and a random robot with gear motors and current output) track a Fourier excitation
through cascaded drive loops; the recordings carry quantized positions and noisy outputs. The
models use a smoothed Coulomb sign (a simulation with an exact sign chatters at velocity
reversals). Without noise the base parameters come back to 1e-6; with noise the errors, over
repeated seeds, scatter as the reported standard deviations say, and the validation error on
another trajectory equals what the true parameters achieve (the noise floor).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import check_physical, standardized_errors

import dynid
from dynid.demo import true_parameters
from dynid.hardware import FourierReference, SensorNoise, simulate, smooth_coulomb
from dynid.identify import (
    OLS,
    WLS,
    GaussMarkov,
    IdentificationData,
    MaximumLikelihood,
    PhysicallyConsistent,
    Processing,
    Recording,
    validate,
)
from dynid.identify.data import decimation_filter
from dynid.models import random_robot
from dynid.trajectories import FourierTrajectory, check

RUNS = 5
NOISE = 0.05  # N·m, torque sensor noise


@pytest.fixture(scope="module")
def panda_case():
    robot = smooth_coulomb(dynid.load_robot("panda"), joint=0.05)
    theta = true_parameters(robot, np.random.default_rng(0))
    noise = SensorNoise(output_std=NOISE, output_step=0.01)
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, seed=1)
    sim = simulate(robot, theta, ref, 8.0, control_rate=500, noise=noise, runs=RUNS, seed=3)
    other = FourierReference.random(robot, harmonics=5, frequency=0.2, seed=2)
    val = simulate(robot, theta, other, 6.0, control_rate=500, noise=noise, seed=4)
    return robot, theta, sim, val.measured[0], dynid.base_parameters(robot)


def test_smoothing_changes_only_the_coulomb_sign():
    panda = dynid.load_robot("panda")
    smooth = smooth_coulomb(panda, joint=0.05)
    assert all(t.smoothing == 0 for t in panda.terms)
    params = panda.parameters
    q, v, a = np.zeros((2, 7)), np.full((2, 7), 0.02), np.ones((2, 7))
    v[1] = 3.0
    Y0, Y1 = dynid.Regressor(panda)(q, v, a), dynid.Regressor(smooth)(q, v, a)
    fc = params.index("joint3.fc")
    assert Y1[0, 2, fc] == pytest.approx(np.tanh(0.4)) and Y0[0, 2, fc] == 1.0
    others = np.setdiff1d(np.arange(len(params)), params.where(kind="fc"))
    np.testing.assert_array_equal(Y0[..., others], Y1[..., others])
    np.testing.assert_allclose(Y1[1], Y0[1], rtol=1e-12)  # fast: the sign itself


@pytest.mark.parametrize("name,options", [("panda", {"frequency": 0.2}),
                                          ("ariane", {"frequency": 0.1, "ramp": 2.0})])
def test_random_reference_uses_the_limits(name, options):
    """Every coordinate of a random reference reaches 70 % of the limit it meets first,
    its own or its actuator's (gears on the Panda, lever actuators on Ariane), and no limit
    beyond that; the dense check of the trajectories agrees."""
    robot = dynid.load_robot(name)
    ref = FourierReference.random(robot, harmonics=5, fill=0.7, seed=1, **options)
    assert check(ref, robot).margin >= 0.3 - 1e-6
    q, v, a = ref(np.linspace(0.0, 2 * ref.ramp + ref.period, 20001))
    q_m, v_m, a_m, _ = robot.transmission.actuator_state(q, v, a)

    def use(x, xd, xdd, lim):
        finite = np.isfinite(lim.lower) & np.isfinite(lim.upper)
        lower, upper = np.where(finite, lim.lower, -1.0), np.where(finite, lim.upper, 1.0)
        mid, half = (lower + upper) / 2, np.where(finite, (upper - lower) / 2, np.inf)
        return np.max([np.abs(x - mid).max(0) / half, np.abs(xd).max(0) / lim.velocity,
                       np.abs(xdd).max(0) / lim.acceleration], axis=0)

    joint, actuator = use(q, v, a, robot.limits), use(q_m, v_m, a_m, robot.actuator_limits)
    np.testing.assert_allclose(np.maximum(joint, actuator), 0.7, rtol=2e-3)
    assert np.all(np.maximum(joint, actuator) <= 0.7 * (1 + 1e-5))  # the dense check's grid


def test_panda_without_noise_recovers_the_base_parameters(panda_case):
    robot, theta, sim, _, base = panda_case
    truth = base.to_base(theta)
    for estimator in (OLS(), PhysicallyConsistent()):
        est = estimator.fit(IdentificationData(robot, sim.truth[0], base=base))
        assert np.max(np.abs(est.base_params_ - truth) / np.abs(truth)) < 1e-6


def test_panda_with_noise_has_honest_uncertainty(panda_case):
    """Over RUNS seeds: the standardized errors z = (θ̂ − θ)/σ̂ of all 62 base parameters have
    unit RMS, none is beyond 4.5 (for normal errors that happens with probability 2e-3 over
    all of them), and each parameter's mean over the seeds is within 4/√RUNS."""
    robot, theta, sim, _, base = panda_case
    truth = base.to_base(theta)
    z = standardized_errors(robot, base, sim.measured, truth)
    assert 0.75 < np.sqrt(np.mean(z**2)) < 1.3
    assert np.abs(z).max() < 4.5
    assert np.abs(z.mean(axis=0)).max() < 4 / np.sqrt(RUNS)


def test_panda_validation_is_at_the_noise_floor(panda_case):
    robot, theta, sim, val, base = panda_case
    est = WLS().fit(IdentificationData(robot, sim.measured[0], base=base))
    proc = est.result_.processing  # chosen automatically, and applied to the validation
    got = validate(robot, est.result_, val)
    best = validate(robot, theta, val, processing=proc)
    floor = NOISE * np.linalg.norm(decimation_filter(proc.decimate))  # noise through the filter
    assert np.all(got.rmse <= 1.05 * best.rmse)
    np.testing.assert_allclose(got.rmse, floor, rtol=0.3)
    assert got.overall_relative_error < 1.0  # %


def test_panda_consistent_estimate_with_noise(panda_case):
    robot, _, sim, val, base = panda_case
    data = IdentificationData(robot, sim.measured[1], base=base,
                              processing=Processing(decimate=10))
    est = PhysicallyConsistent().fit(data)
    check_physical(robot, est.params_)
    wls = WLS().fit(data)
    got = validate(robot, est.result_, val).rmse
    assert np.all(got <= 1.1 * validate(robot, wls.result_, val).rmse)


def test_random_robot_with_gear_motors_and_current_output():
    """Actuator-side encoders, current output, gear motors: exact recovery without noise and
    honest uncertainty with it, with the automatic processing (unfiltered, the quantized motor
    positions' noise in the regressor makes the reported σ about 30 % too small)."""
    robot = random_robot(3, seed=5, friction=True, motors=True, output="current",
                         smoothing=0.05)
    theta = true_parameters(robot, np.random.default_rng(0))
    ref = FourierReference.random(robot, harmonics=4, frequency=0.5, periods=3, seed=2)
    sim = simulate(robot, theta, ref, 8.0, control_rate=500, space="actuator", runs=4, seed=1,
                   noise=SensorNoise(output_std=0.02, output_step=0.001))
    base = dynid.base_parameters(robot)
    truth = base.to_base(theta)
    est = OLS().fit(IdentificationData(robot, sim.truth[0], base=base))
    assert np.max(np.abs(est.base_params_ - truth) / np.abs(truth)) < 1e-6
    assert sim.measured[0].space == "actuator"
    z = standardized_errors(robot, base, sim.measured, truth)
    assert 0.75 < np.sqrt(np.mean(z**2)) < 1.3 and np.abs(z).max() < 4.5


def test_designed_trajectories_in_actuator_increments_are_followed():
    """A trajectory of dynid.trajectories defined on the motors in encoder increments is
    mapped to the joints and tracked."""
    robot = smooth_coulomb(dynid.load_robot("ariane"), joint=0.02, motor=100.0)
    trans = robot.transmission
    rest = np.zeros((1, 3))
    q_m = trans.actuator_state(np.array([[-0.5, 0.9, 3.0]]), rest, rest)[0]
    coefficients = np.zeros((3, 5))
    coefficients[:, 0] = trans.to_increments(q_m)[0]
    coefficients[:, 1] = [300.0, 100.0, 300.0]  # velocity amplitudes, inc/s
    traj = FourierTrajectory(coefficients, 0.2, robot.actuator_names, space="actuator",
                             unit="increments", ramp=1.0)
    truth = simulate(robot, robot.prior, traj, 4.0, control_rate=200).truth[0]
    rest = np.zeros_like(truth.positions)
    counts = trans.to_increments(trans.actuator_state(truth.positions, rest, rest)[0])
    want = traj.evaluate(truth.time)[0]
    motion = np.abs(want - coefficients[:, 0]).max()
    assert motion > 100 and np.abs(counts - want).max() < 0.02 * motion


def test_periodic_excitation_averaging_and_maximum_likelihood():
    """Abdellatif's setting: a periodic, band-limited motion (4 harmonics) measured with white
    position and output noise. Averaging gives the output noise; the likelihood over the
    filter's cutoff keeps every harmonic of the motion and cuts lower as the position noise
    grows. With small position noise the estimate has honest standard deviations (the
    covariance (10) ignores errors in the regressor, so it is optimistic when they matter)."""
    robot = random_robot(2, seed=3, friction=True, smoothing=0.1)
    theta = robot.prior.copy()
    period, rate, n_periods = 2.0, 200.0, 12
    ref = FourierReference.random(robot, harmonics=4, frequency=1 / period, ramp=0.0, seed=4)
    t = np.arange(int(n_periods * period * rate)) / rate
    q, v, a = ref(t)
    y = dynid.Regressor(robot).predict(q, v, a, theta)
    base = dynid.base_parameters(robot)
    truth = base.to_base(theta)
    sigma_y = 0.05 * y.std(axis=0)

    def fit(sigma_q, seed):
        rng = np.random.default_rng(seed)
        rec = Recording(t, q + sigma_q * rng.standard_normal(q.shape),
                        y + sigma_y * rng.standard_normal(y.shape))
        data = IdentificationData(robot, rec, base=base,
                                  processing=Processing(period=period, skip_periods=0))
        return MaximumLikelihood(max_harmonic=20).fit(data), rec

    z = []
    for seed in range(4):
        est, rec = fit(2e-4, seed)
        np.testing.assert_allclose(np.sqrt(np.diag(est.noise_covariance_)),
                                   sigma_y / np.sqrt(n_periods), rtol=0.15)
        z.append((est.base_params_ - truth) / np.sqrt(np.diag(est.base_cov_)))
    z = np.array(z)
    assert 0.7 < np.sqrt(np.mean(z**2)) < 1.3 and np.abs(z).max() < 4.5
    # More position noise, lower cutoff; never below the motion's own harmonics.
    cutoffs = [fit(sigma_q, 0)[0].cutoff_ for sigma_q in (1e-2, 2e-3, 2e-4)]
    assert 4 / period < cutoffs[0] < cutoffs[1] < cutoffs[2]
    # The result carries the chosen filter: its training RMSE and a validation that processes
    # the recording as the result says are the averaged output noise, as with the true
    # parameters; with every harmonic kept, the position noise would swamp them.
    noisy, noisy_rec = fit(2e-3, 0)
    proc = noisy.result_.processing
    assert proc.harmonics_cutoff == noisy.cutoff_ < cutoffs[2] and proc.decimate == 1
    assert noisy.result_.n_samples == period * rate
    assert noisy.result_.whiteness.n_samples == period * rate  # the averaged period it fitted
    got = validate(robot, noisy.result_, noisy_rec).rmse
    np.testing.assert_allclose(noisy.result_.training_rmse, got, rtol=1e-9)
    np.testing.assert_allclose(got, sigma_y / np.sqrt(n_periods), rtol=0.2)
    assert np.all(got <= 1.05 * validate(robot, theta, noisy_rec, processing=proc).rmse)
    every = validate(robot, theta, noisy_rec, processing=replace(proc, harmonics_cutoff=None))
    assert np.all(every.rmse > 10 * got)
    gm = GaussMarkov().fit(IdentificationData(
        robot, rec, base=base,
        processing=Processing(period=period, skip_periods=0, harmonics_cutoff=est.cutoff_)))
    np.testing.assert_allclose(gm.base_params_, est.base_params_, rtol=1e-10)
