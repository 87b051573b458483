"""The simulated drives: gains by their stated rule, stable loops (no limit cycle), coarse
encoders filtered, and motions tracked."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

import dynid
from dynid.demo import true_parameters
from dynid.hardware import (
    DriveLoops,
    FourierReference,
    SensorNoise,
    simulate,
    smooth_coulomb,
    tune_loops,
)
from dynid.models.dynamics import Dynamics

CASES = {
    # robot, Coulomb smoothing (joint, motor), control rate, recorded side
    "panda": (0.02, 2.0, 500.0, "basis"),
    "ariane": (0.02, 100.0, 200.0, "actuator"),
    "dvrk_psm": (0.02, 2.0, 500.0, "basis"),
}


def _run(name, duration=6.0, runs=1, noise=None):
    joint, motor, rate, space = CASES[name]
    robot = smooth_coulomb(dynid.load_robot(name), joint=joint, motor=motor)
    theta = true_parameters(robot, np.random.default_rng(1))
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, seed=3, ramp=1.0)
    sim = simulate(robot, theta, ref, duration, control_rate=rate, space=space, runs=runs,
                   noise=noise or SensorNoise(position_std=1e-5), seed=4)
    return robot, theta, ref, sim, rate


@pytest.mark.parametrize("name", list(CASES))
def test_tracking_error_has_no_spectral_peak_beyond_the_noise(name):
    """A limit cycle concentrates power at one frequency: the periodogram of the tracking
    error, against its running median over a third of an octave, stands out by orders of
    magnitude there. Above the excitation (5 Hz and up) no bin of a stable loop's error
    exceeds 50 times its neighbourhood (the largest of several thousand exponentially
    distributed bins is about 13 times their median), and the error stays small."""
    _, _, ref, sim, rate = _run(name)
    truth = sim.truth[0]
    err = truth.positions - ref(truth.time)[0]
    f, P = scipy.signal.periodogram(err, fs=rate, axis=0, detrend="linear")
    above = f >= 5.0
    ratios = []
    for k in np.flatnonzero(above):
        near = (f >= f[k] / 2 ** (1 / 6)) & (f <= f[k] * 2 ** (1 / 6)) & above
        ratios.append(P[k] / np.median(P[near], axis=0))
    assert np.max(ratios) < 50
    span = np.ptp(ref(truth.time)[0], axis=0)
    assert np.all(np.abs(err).max(axis=0) < 0.1 * span)


def test_a_limit_cycle_is_what_the_spectral_check_catches():
    """The check above can fail: loops tuned past the rule (budget for a tenth of the lags)
    oscillate, and the same statistic is then far beyond its bound."""
    joint, motor, rate, _ = CASES["panda"]
    robot = smooth_coulomb(dynid.load_robot("panda"), joint=joint, motor=motor)
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, seed=3, ramp=1.0)
    sim = simulate(robot, robot.prior, ref, 3.0, control_rate=rate,
                   loops=DriveLoops(a=0.3), seed=4)
    truth = sim.truth[0]
    err = truth.positions - ref(truth.time)[0]
    f, P = scipy.signal.periodogram(err, fs=rate, axis=0, detrend="linear")
    above = f >= 5.0
    peak = P[above].max(axis=0) / np.median(P[above], axis=0)
    assert np.max(peak) > 1e3


@pytest.mark.parametrize("name", list(CASES))
def test_gains_follow_the_stated_rule(name):
    """Against the rule of DriveLoops, recomputed here: the lags ``T_Σ`` per drive, every
    velocity-loop mode along the motion within its budget ``1 / (a T_Σ)``, the fastest mode
    on its budget, and the position and integral gains half the axis's slowest own mode."""
    joint, motor, rate, _ = CASES[name]
    robot = smooth_coulomb(dynid.load_robot(name), joint=joint, motor=motor)
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, seed=3, ramp=1.0)
    t = np.arange(0, 6.0, 1 / rate)
    motion = ref(t)
    loops = DriveLoops()
    step = 2 * np.pi / (robot.transmission.increments_per_turn
                        if robot.transmission.increments_per_turn is not None else 2.0 ** 16)
    gains = tune_loops(Dynamics(robot, robot.prior), motion, loops, rate, step)
    lags = 1.5 / rate + 1 / (2 * np.pi * loops.current_bandwidth) + gains.velocity_filter
    np.testing.assert_allclose(gains.delay, lags)
    budget = 1 / (loops.a * lags)
    q = motion[0][np.linspace(0, len(t) - 1, 64).round().astype(int)]
    M = Dynamics(robot, robot.prior).mass_matrix(q)
    K = robot.transmission.jacobian(q)
    L = np.linalg.solve(M, np.broadcast_to(np.diag(gains.velocity), M.shape))
    modes = np.linalg.eigvals(K @ L).real
    assert modes.min() > 0                          # every loop is a negative feedback
    assert modes.max() <= budget.max() * (1 + 1e-9)
    if np.ptp(budget) == 0:                         # one budget: the fastest mode is on it
        assert modes.max() == pytest.approx(budget[0], rel=1e-9)
    inertia = np.abs(np.diagonal(M @ np.linalg.inv(K), axis1=1, axis2=2)).max(axis=0)
    np.testing.assert_allclose(gains.position, np.abs(gains.velocity) / inertia / 2)
    np.testing.assert_allclose(gains.integral, gains.position)


def test_coarse_encoders_are_filtered_and_fine_ones_are_not():
    """Ariane's 24-increment hall sensors get a velocity filter (at most 20 control periods)
    and track a motion within a tenth of its span (the prior model they feed forward is 10 %
    off); the Panda's fine encoders get none."""
    _, _, _, panda, _ = _run("panda", duration=2.0)
    assert np.all(panda.gains.velocity_filter == 0)
    robot, _, ref, sim, rate = _run("ariane", duration=6.0)
    assert np.all(sim.gains.velocity_filter > 0)
    assert np.all(sim.gains.velocity_filter <= 20 / rate + 1e-12)
    truth = sim.truth[0]
    trans = robot.transmission
    rest = np.zeros_like(truth.positions)
    counts = trans.to_increments(trans.actuator_state(truth.positions, rest, rest)[0])
    want = trans.to_increments(trans.actuator_state(*ref(truth.time))[0])
    assert np.abs(counts - want).max() < 0.1 * np.ptp(want, axis=0).min()


def test_loop_settings_are_checked():
    robot = dynid.load_robot("panda")
    ref = FourierReference.random(robot, harmonics=2, frequency=0.5, seed=0)
    for loops, match in ((DriveLoops(a=0.0), "loops.a"),
                         (DriveLoops(current_bandwidth=0.0), "current_bandwidth"),
                         (DriveLoops(velocity_resolution=2.0), "velocity_resolution")):
        with pytest.raises(dynid.DataError, match=match):
            simulate(robot, robot.prior, ref, 0.2, control_rate=200, loops=loops)
