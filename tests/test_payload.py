"""Payload identification: the ten parameters of an unknown body fixed to a link of an
identified robot, and a robot identified with a known payload as an extra body.

Runs are synthetic (the model's exact outputs along a Fourier motion, with Gaussian noise of
known σ, derivatives as recorded) so that many noisy seeds are cheap; one test runs the closed
loop of :func:`dynid.hardware.simulate`. Uncertainties are checked against the scatter over
seeds, the physically consistent estimate against the truth made feasible.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from conftest import current_run as run  # the model's current, noise σ 0.02 A

import dynid
from dynid.demo import true_parameters
from dynid.errors import DataError, DynidWarning, ModelError, SolverError
from dynid.hardware import FourierReference, SensorNoise, simulate
from dynid.identify import (
    OLS,
    WLS,
    IdentificationData,
    Payload,
    Processing,
    identify_payload,
)
from dynid.identify.physical import pseudo_inertia
from dynid.models import Body, LinkInertia, random_robot
from dynid.models.bodies import parameter_map

NOISE = 0.02  # A
BOX = LinkInertia(2.0, (0.05, 0.02, -0.03), (0.01, 0.001, 0.0, 0.012, 0.0, 0.008))
POSE = {"xyz": (0.1, 0.0, 0.0), "rpy": (0.0, 0.3, 0.0)}


@pytest.fixture(scope="module")
def arm():
    """A random 4-joint arm with gear motors and current output, its true parameters, the
    box as a known body of its last link, and a Fourier motion sampled at 100 Hz."""
    robot = random_robot(4, seed=2, friction=True, motors=True, output="current")
    theta = true_parameters(robot, np.random.default_rng(0))
    box = Body("box", "link4", BOX, known=True, **POSE)
    ref = FourierReference.random(robot, harmonics=4, frequency=0.5, periods=3, seed=2)
    t = np.arange(0.0, 6.0, 0.01)
    return robot, theta, box, (t, *ref(t))




def loaded(robot, box):
    return replace(robot, bodies=(box,))


# Exact data: the weights (σ of 1e-13) do not settle and the residual is no white noise.
@pytest.mark.filterwarnings("ignore::dynid.errors.DynidWarning")
def test_exact_run_gives_the_payload_and_its_body(arm):
    robot, theta, box, motion = arm
    payload = identify_payload(robot, theta, run(loaded(robot, box), theta, motion), "link4",
                               name="box", **POSE)
    assert isinstance(payload, Payload) and payload.covariance_method == "unconstrained"
    assert dynid.identify_payload is identify_payload
    np.testing.assert_allclose(payload.params, box.values, rtol=1e-8, atol=1e-10)
    # About the centre of mass, as given: Pinocchio's conversion, not ours.
    assert payload.mass == pytest.approx(2.0, rel=1e-9)
    np.testing.assert_allclose(payload.com, BOX.com, atol=1e-9)
    np.testing.assert_allclose(payload.inertia.inertia, BOX.inertia, atol=1e-9)
    # The payload as a known body predicts the loaded run as the true one does.
    _, q, v, a = motion
    back = dynid.Regressor(loaded(robot, payload.body())).predict(q, v, a, theta)
    truth = dynid.Regressor(loaded(robot, box)).predict(q, v, a, theta)
    np.testing.assert_allclose(back, truth, rtol=1e-7, atol=1e-9)


# Some of 40 whiteness tests at 0.1 % may fail by chance: not what this test is about.
@pytest.mark.filterwarnings("ignore::dynid.errors.DynidWarning")
def test_sigma_holds_the_robot_uncertainty(arm):
    """Over 20 seeds, each with a new identification of the robot (no payload) and a new run
    with the payload: the standardized errors of the ten parameters have unit RMS with the
    robot's covariance included (and with the true robot taken as exact), and the robot's
    share adds to the covariance of the payload run's noise alone."""
    robot, theta, box, motion = arm
    base = dynid.base_parameters(robot)
    rng = np.random.default_rng(7)
    z, z_exact = [], []
    for seed in range(20):
        result = WLS().fit(IdentificationData(robot, run(robot, theta, motion, rng),
                                              base=base)).result_
        rec = run(loaded(robot, box), theta, motion, rng)
        with_robot = identify_payload(robot, result, rec, "link4", **POSE)
        exact = identify_payload(robot, theta, rec, "link4", **POSE)
        assert with_robot.robot_uncertainty and not exact.robot_uncertainty
        z.append((with_robot.params - box.values) / with_robot.sigma)
        z_exact.append((exact.params - box.values) / exact.sigma)
        if seed == 0:  # the same estimate, the robot's parameters taken as exact
            alone = identify_payload(robot, result.params, rec, "link4", **POSE)
            np.testing.assert_allclose(alone.params, with_robot.params, rtol=1e-12)
            extra = np.linalg.eigvalsh(with_robot.cov - alone.cov)
            assert extra.min() > -1e-9 * extra.max() and extra.max() > 0
    z, z_exact = np.array(z), np.array(z_exact)
    assert 0.8 < np.sqrt(np.mean(z**2)) < 1.2
    assert 0.8 < np.sqrt(np.mean(z_exact**2)) < 1.2
    assert np.abs(z).max() < 4.5


def test_constrained_point_mass(arm):
    """A point mass: the unconstrained estimate is not physical (three zero eigenvalues of the
    pseudo-inertia), the constrained one is, fits no worse than the truth made feasible, and
    its bootstrap σ covers the scatter over seeds."""
    robot, theta, _, motion = arm
    point = Body("mass", "link4", LinkInertia(0.5, (0.05, 0.02, -0.03)), known=True, **POSE)
    exact = run(loaded(robot, point), theta, motion)
    rng = np.random.default_rng(3)
    eps = 1e-6
    z, active = [], 0
    for _ in range(12):
        rec = replace(exact, output=exact.output + 0.05 * rng.standard_normal(
            exact.output.shape))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DynidWarning)
            p = identify_payload(robot, theta, rec, "link4", epsilon=eps, draws=60, **POSE)
        assert np.linalg.eigvalsh(pseudo_inertia(p.params))[0] >= eps * (1 - 1e-6)
        active += p.fit.active
        if p.fit.active:
            assert p.covariance_method == "bootstrap"
            # The truth shifted onto the feasible set (m + d, diagonal + 2d: J + d·I).
            feasible = point.values.copy()
            feasible[0] += 2 * eps
            feasible[[4, 6, 9]] += 4 * eps
            R = p.fit.R
            assert np.linalg.norm(R @ (p.params - p.unconstrained)) <= \
                np.linalg.norm(R @ (feasible - p.unconstrained)) * (1 + 1e-6)
        z.append((p.params - point.values) / p.sigma)
    assert active >= 10
    z = np.array(z)
    assert 0.6 < np.sqrt(np.mean(z[:, 0] ** 2)) < 1.6  # the mass, away from the constraint
    assert np.sqrt(np.mean(z**2)) < 1.6


def test_known_payload_as_extra_body_in_closed_loop():
    """The closed loop with a known payload body: the robot's own parameters come back with
    the payload in the model (exactly from the true states, within their σ from the
    measurements), and the payload itself from a robot identified without it."""
    robot = random_robot(3, seed=5, friction=True, motors=True, output="current",
                         smoothing=0.05)
    theta = true_parameters(robot, np.random.default_rng(0))
    box = Body("box", "link3", LinkInertia(1.5, (0.0, 0.03, 0.05), (0.004, 0, 0, 0.005, 0,
                                                                        0.003)), known=True)
    with_box = loaded(robot, box)
    ref = FourierReference.random(robot, harmonics=4, frequency=0.5, periods=3, seed=2)
    noise = SensorNoise(output_std=0.01, output_step=0.001)
    empty = simulate(robot, theta, ref, 6.0, control_rate=400, noise=noise, seed=1)
    full = simulate(with_box, theta, ref, 6.0, control_rate=400, noise=noise, seed=2)
    base = dynid.base_parameters(robot)
    assert dynid.base_parameters(with_box).names == base.names  # a known body: no parameter
    truth = base.to_base(theta)
    with warnings.catch_warnings():  # the exact fit's residual, 1e-12, is not white noise
        warnings.simplefilter("ignore", DynidWarning)
        est = OLS().fit(IdentificationData(with_box, full.truth[0], base=base))
    assert np.max(np.abs(est.base_params_ - truth) / np.abs(truth)) < 1e-6
    wls = WLS().fit(IdentificationData(with_box, full.measured[0], base=base))
    z = (wls.base_params_ - truth) / np.sqrt(np.diag(wls.base_cov_))
    assert np.abs(z).max() < 5
    result = WLS().fit(IdentificationData(robot, empty.measured[0], base=base)).result_
    payload = identify_payload(robot, result, full.measured[0], "link3", name="box")
    assert payload.processing.decimate == result.processing.decimate  # the result's
    assert abs(payload.mass - 1.5) < max(5 * payload.mass_sigma, 0.002 * 1.5)
    assert np.linalg.norm(payload.com - box.inertia.com) < 0.005


# Exact data: the weights (σ of 1e-13) do not settle and the residual is no white noise.
@pytest.mark.filterwarnings("ignore::dynid.errors.DynidWarning")
def test_parameter_map_of_the_payload_frame(arm):
    """The payload's columns are its link's through the frame's pose: the estimate in a frame
    rotated and moved is the same body (Pinocchio's se3Action of the one in the link frame)."""
    robot, theta, box, motion = arm
    rec = run(loaded(robot, box), theta, motion)
    here = identify_payload(robot, theta, rec, "link4", **POSE)
    link = identify_payload(robot, theta, rec, "link4")
    np.testing.assert_allclose(parameter_map(box.placement) @ here.params, link.params,
                               rtol=1e-7, atol=1e-10)


# Bad input -----------------------------------------------------------------------------------
def test_bad_settings_and_robots(arm):
    robot, theta, box, motion = arm
    rec = run(loaded(robot, box), theta, motion, np.random.default_rng(2))
    with pytest.raises(DataError, match="robot: expected a Robot"):
        identify_payload("panda", theta, rec, "link4")
    with pytest.raises(DataError, match="covariance: expected 'auto'"):
        identify_payload(robot, theta, rec, "link4", covariance="sandwich")
    with pytest.raises(DataError, match="draws: expected an integer between 2"):
        identify_payload(robot, theta, rec, "link4", draws=1)
    with pytest.raises(DataError, match=r"recording\[0\]: expected a Recording, found str"):
        identify_payload(robot, theta, "run.npz", "link4")
    with pytest.raises(DataError, match="epsilon: expected a finite value > 0"):
        identify_payload(robot, theta, rec, "link4", epsilon=0.0)
    with pytest.raises(DataError, match="processing: expected a Processing"):
        identify_payload(robot, theta, rec, "link4", processing={"cutoff": 10})
    with pytest.raises(ModelError, match="no link or frame named 'hand'"):
        identify_payload(robot, theta, rec, "hand")
    with pytest.raises(ModelError, match="already the name of a link"):
        identify_payload(robot, theta, rec, "link4", name="link2")
    with pytest.raises(DataError, match="params: expected"):
        identify_payload(robot, theta[:-1], rec, "link4")


def test_results_of_another_robot(arm):
    robot, theta, box, motion = arm
    rec = run(loaded(robot, box), theta, motion, np.random.default_rng(2))
    other = random_robot(4, seed=2, output="current", motors=True)
    result = OLS().fit(IdentificationData(other, run(other, other.prior, motion,
                                                     np.random.default_rng(1)))).result_
    with pytest.raises(DataError, match="do not match robot"):
        identify_payload(robot, result, rec, "link4")
    mine = OLS().fit(IdentificationData(robot, run(robot, theta, motion,
                                                   np.random.default_rng(1)))).result_
    shuffled = replace(mine, base_names=mine.base_names[::-1])
    with pytest.raises(DataError, match="base parameters differ"):
        identify_payload(robot, shuffled, rec, "link4")


def test_run_without_the_payload_warns(arm):
    robot, theta, box, motion = arm
    rec = run(robot, theta, motion, np.random.default_rng(4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        identify_payload(robot, theta, rec, "link4", **POSE)
    assert any("shows no payload" in str(w.message) for w in caught)
    # Parameters that already hold the box, and a run without it: less mass than they say
    # (the residual, which misses the box, is not white either).
    heavy = theta.copy()
    link4 = robot.parameters.link_block("link4")
    heavy[link4] += parameter_map(box.placement) @ box.values
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        identify_payload(robot, heavy, rec, "link4", **POSE)
    messages = [str(w.message) for w in caught]
    assert any("carries less mass" in m for m in messages)
    assert not any("shows no payload" in m for m in messages)


def test_payload_the_run_cannot_determine(arm):
    """On the first link, which turns about one fixed axis, a body's ten parameters are not
    all determined."""
    robot, theta, _, motion = arm
    box = Body("box", "link1", BOX, known=True)
    rec = run(loaded(robot, box), theta, motion)
    with pytest.raises(SolverError, match="does not determine its ten parameters"):
        identify_payload(robot, theta, rec, "link1", processing=Processing(deadzone=None))
