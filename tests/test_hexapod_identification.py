"""The hexapod measured on its leg lengths (Abdellatif 3.2–3.3, 5): simulated recordings, direct
kinematics before the frequency-domain processing, Gauss–Markov and maximum likelihood with
the cutoff; closed-loop simulation through the nonlinear closure and transmission."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest

import dynid
from dynid import DataError, DynidWarning, GaussMarkov, IdentificationData, Processing
from dynid.demo import true_parameters
from dynid.hardware import FourierReference, SensorNoise, measure, simulate, smooth_coulomb
from dynid.identify.likelihood import MaximumLikelihood
from dynid.models.dynamics import Dynamics

PERIOD, HARMONICS, RATE = 2.0, 3, 250.0
RUNS = 6
NOISE = SensorNoise(position_step=1e-6, position_std=2e-6, output_std=2.0)


@pytest.fixture(scope="module")
def hexapod():
    return dynid.load_robot("hexapod")


@pytest.fixture(scope="module")
def experiment(hexapod):
    theta = true_parameters(hexapod, np.random.default_rng(1))
    ref = FourierReference.random(hexapod, harmonics=HARMONICS, frequency=1 / PERIOD,
                                  ramp=0.0, periods=6, seed=1)
    sim = measure(hexapod, theta, ref, 6 * PERIOD, rate=RATE, space="actuator", noise=NOISE,
                  runs=RUNS)
    return theta, sim, dynid.base_parameters(hexapod)


def z_scores(estimator, robot, rec, base, theta, processing):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)   # the residual's whiteness, judged here
        est = estimator.fit(IdentificationData(robot, rec, base=base, processing=processing))
    return (est.base_params_ - base.to_base(theta)) / np.sqrt(np.diag(est.base_cov_)), est


def test_measured_leg_lengths(hexapod, experiment):
    """The recording holds leg lengths quantized to the sensors' 1 µm, the truth satisfies
    the model, and the measured lengths are the truth's within the noise."""
    theta, sim, _ = experiment
    rec, truth = sim.measured[0], sim.truth[0]
    assert rec.space == "actuator" and rec.units["positions"] == ("m",) * 6
    np.testing.assert_allclose(rec.positions / 1e-6, np.round(rec.positions / 1e-6), atol=1e-6)
    legs = hexapod.transmission.geometry.legs(truth.positions).length
    assert np.abs(rec.positions - legs).max() < 1e-6 / 2 + 6 * 2e-6
    y = dynid.Regressor(hexapod).predict(truth.positions, truth.velocities,
                                         truth.accelerations, theta)
    np.testing.assert_allclose(y, truth.output, atol=1e-9)


def test_poses_from_leg_lengths_then_the_spectrum(hexapod, experiment):
    """Direct kinematics of every sample, period averaging, then the DFT low-pass at the
    pose's harmonics: states near the analytic ones, and Gauss–Markov σ that match the spread
    of the estimates over the runs. Low-passing the leg lengths instead, whose spectrum the
    nonlinear map spreads beyond the pose's harmonics, biases the estimates by several σ."""
    theta, sim, base = experiment
    rec, truth = sim.measured[0], sim.truth[0]
    cutoff = (HARMONICS + 0.5) / PERIOD
    first = Processing(period=PERIOD, harmonics_cutoff=cutoff)
    states = first.apply(rec, hexapod)
    one = slice(round(PERIOD * RATE), round(2 * PERIOD * RATE))      # after the skipped one
    assert states.space == "basis" and states.names == hexapod.joint_names
    for x, bound in (("positions", 1e-5), ("velocities", 1e-4), ("accelerations", 1e-3)):
        err = np.abs(getattr(states, x) - getattr(truth, x)[one]).max()
        assert err < bound * np.abs(getattr(truth, x)).max(), x
    after = Processing(period=PERIOD, harmonics_cutoff=cutoff, kinematics="after")
    fits = {p: [z_scores(GaussMarkov(), hexapod, r, base, theta, p)[1] for r in sim.measured]
            for p in (first, after)}
    true_b = base.to_base(theta)
    estimates = np.array([e.base_params_ for e in fits[first]])
    sigma = np.mean([np.sqrt(np.diag(e.base_cov_)) for e in fits[first]], axis=0)
    ratio = np.median(estimates.std(axis=0, ddof=1) / sigma)
    assert 0.6 < ratio < 1.6
    bias = [np.sqrt(np.mean(np.mean([(e.base_params_ - true_b) / sigma for e in fits[p]],
                                    axis=0) ** 2)) for p in (first, after)]
    assert bias[0] < 1.5 / np.sqrt(RUNS) * 2         # the mean of RUNS runs: within its σ
    assert bias[1] > 3


def test_maximum_likelihood_tunes_the_cutoff(hexapod, experiment):
    """A cutoff below the pose's harmonics removes real motion, which the leg lengths' noise
    covariance makes costly; the cutoff found keeps every harmonic of the pose, its estimate
    is within its σ of the truth and is the Gauss–Markov estimate at that cutoff."""
    theta, sim, base = experiment
    z, est = z_scores(MaximumLikelihood(max_harmonic=8), hexapod, sim.measured[0], base, theta,
                      Processing(period=PERIOD))
    assert est.cutoff_ >= (HARMONICS + 0.5) / PERIOD
    assert est.profile_[est.cutoff_] == min(est.profile_.values())
    assert est.profile_[1.5 / PERIOD] > 100 * abs(est.profile_[est.cutoff_])
    assert np.sqrt(np.mean(z ** 2)) < 1.5
    # At its cutoff the estimate is Gauss–Markov's with that frequency-domain filter.
    _, gm = z_scores(GaussMarkov(covariance=est.noise_covariance_), hexapod, sim.measured[0],
                     base, theta, Processing(period=PERIOD, harmonics_cutoff=est.cutoff_))
    np.testing.assert_allclose(est.base_params_, gm.base_params_, rtol=1e-6,
                               atol=1e-6 * np.abs(gm.base_params_).max())


def test_maximum_likelihood_passes_over_cutoffs_that_excite_too_little(hexapod, experiment,
                                                                       monkeypatch):
    """Where the harmonics kept leave a parameter unexcited (the least-squares system is rank
    deficient) the cutoff costs infinitely and the search goes on; when every cutoff does,
    the rank deficiency is reported."""
    from dynid.identify import likelihood
    from dynid.identify.system import RankDeficient

    theta, sim, base = experiment
    solve = likelihood.gauss_markov
    calls = []

    def deficient_below_the_third(system, covariance):
        calls.append(len(calls) + 1)
        if len(calls) < 3:
            raise RankDeficient(np.array([0]))
        return solve(system, covariance)

    monkeypatch.setattr(likelihood, "gauss_markov", deficient_below_the_third)
    _, est = z_scores(MaximumLikelihood(max_harmonic=4), hexapod, sim.measured[0], base, theta,
                      Processing(period=PERIOD))
    costs = [est.profile_[c] for c in sorted(est.profile_)]
    assert np.isinf(costs[:2]).all() and np.isfinite(costs[2:]).all()
    assert est.cutoff_ >= 2.5 / PERIOD

    def deficient(system, covariance):
        raise RankDeficient(np.array([0]))

    monkeypatch.setattr(likelihood, "gauss_markov", deficient)
    with pytest.raises(dynid.SolverError, match="rank deficient"):
        z_scores(MaximumLikelihood(max_harmonic=3), hexapod, sim.measured[0], base, theta,
                 Processing(period=PERIOD))


def test_leg_lengths_without_a_pose_name_the_time(hexapod, experiment):
    _, sim, _ = experiment
    rec = sim.measured[0]
    q_m = rec.positions.copy()
    q_m[321, 4] = 1.9                                   # beyond the 1.5 m stroke
    bad = rec.with_signals(positions=q_m)
    with pytest.raises(DataError, match=rf"at t = {rec.time[321]:.6g} s \(leg1 = .*leg5 = 1\.9"
                                        r".*\) map to no basis position of robot hexapod"):
        Processing(cutoff=None, decimate=1, deadzone=None).apply(bad, hexapod)


def test_forward_dynamics_through_the_closure(hexapod):
    """The simulator's mass matrix on the pose is ``Gᵀ M_t G`` with Pinocchio's tree mass
    matrix (CRBA) and the closure's Jacobian; on the legs it is ``K⁻ᵀ Gᵀ M_t G``."""
    rng = np.random.default_rng(4)
    lim = hexapod.limits
    q = lim.lower + (lim.upper - lim.lower) * rng.uniform(0.2, 0.8, (3, 6))
    tree = hexapod.tree
    data = tree.model.createData()
    q_t = hexapod.closure.positions(q)
    G = hexapod.closure.jacobian(q)
    K = hexapod.transmission.jacobian(q)
    M_pose = Dynamics(hexapod.with_output("joint_torque"), hexapod.prior).mass_matrix(q)
    M_legs = Dynamics(hexapod, hexapod.prior).mass_matrix(q)
    for k, cfg in enumerate(tree.configuration(q_t)):
        M_t = pin.crba(tree.model, data, cfg)
        M_t = np.triu(M_t) + np.triu(M_t, 1).T
        expected = G[k].T @ M_t @ G[k]
        np.testing.assert_allclose(M_pose[k], expected, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(M_legs[k], np.linalg.solve(K[k].T, expected), rtol=1e-9,
                                   atol=1e-9)


def test_closed_loop_simulation_on_leg_encoders(hexapod):
    """The drives' loops close on the legs' 1 µm sensors: the motion stays near the
    reference, the recorded leg lengths are the true ones quantized, and every true state
    satisfies the model."""
    robot = smooth_coulomb(hexapod, joint=0.01)
    theta = true_parameters(robot, np.random.default_rng(2))
    ref = FourierReference.random(robot, harmonics=2, frequency=0.5, ramp=0.0, seed=3)
    sim = simulate(robot, theta, ref, 0.4, control_rate=500.0, space="actuator",
                   noise=SensorNoise(output_std=1.0))
    rec, truth = sim.measured[0], sim.truth[0]
    legs = robot.transmission.geometry.legs(truth.positions).length
    assert np.abs(rec.positions - legs).max() <= 0.5e-6 + 1e-12
    y = dynid.Regressor(robot).predict(truth.positions, truth.velocities, truth.accelerations,
                                       theta)
    np.testing.assert_allclose(y, truth.output, atol=1e-8)
    q = ref(truth.time)[0]
    assert np.abs(truth.positions - q)[:, :3].max() < 0.02           # m
    assert np.abs(truth.positions - q)[:, 3:].max() < 0.05           # rad


def test_capture_of_six_leg_drives_on_the_virtual_bus(hexapod, tmp_path):
    """Six simulated drives on python-can's virtual bus report the leg lengths at their 1 µm
    step and the leg forces; the captured file reads back as a leg-length recording whose
    direct kinematics gives the platform poses the simulated robot took."""
    import os

    from dynid.hardware import BusSettings, DriveSettings, VirtualRobot, capture

    robot = smooth_coulomb(hexapod, joint=0.05)
    ref = FourierReference.random(robot, harmonics=2, frequency=1.0, ramp=0.2, seed=4)
    bus = BusSettings(channel=f"hexapod-test-{os.getpid()}")
    settings = VirtualRobot.lockstep(DriveSettings.defaults(robot, rate=250.0))
    with VirtualRobot.for_capture(robot, settings, bus, noise=0.0, seed=1) as sim:
        result = capture(robot, ref, tmp_path / "run.csv", settings=settings, bus=bus,
                         progress=False)
        truth = sim.truth
    assert result.dropped == 0
    rec = dynid.read_csv(tmp_path / "run.csv")
    assert rec.space == "actuator" and rec.names == robot.actuator_names
    assert rec.units["positions"] == ("m",) * 6 and rec.units["output"] == ("N",) * 6
    np.testing.assert_allclose(rec.resolution, 1e-6)
    errors = [np.abs(rec.positions - truth.actuator[o:o + rec.n_samples]).max()
              for o in range(len(truth.actuator) - rec.n_samples + 1)]
    first = int(np.argmin(errors))
    assert errors[first] <= 0.5e-6 + 1e-12
    poses = Processing(cutoff=None, decimate=1, deadzone=None).apply(rec, robot).positions
    np.testing.assert_allclose(poses, truth.q[first:first + rec.n_samples], atol=5e-6)
