"""Stribeck and sigmoid Coulomb friction: the terms against their closed forms, their velocities
by variable projection (exact and noisy data, σ against the scatter over seeds), the choice per
joint by validation, the closed-loop simulator with a Stribeck truth, and bad inputs.

Runs are synthetic (the model's exact output along a Fourier motion, white noise of known σ,
derivatives as recorded) unless they say otherwise.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dynid
from dynid.demo import true_parameters
from dynid.errors import DataError, DynidWarning, ModelError, SolverError
from dynid.hardware import FourierReference, SensorNoise, simulate, smooth_coulomb
from dynid.identify import OLS, WLS, IdentificationData, PhysicallyConsistent, Processing
from dynid.identify.friction import identify_friction
from dynid.identify.friction_choice import select_friction
from dynid.models import Regressor, random_robot
from dynid.models.friction import (
    FrictionSlope,
    SigmoidCoulomb,
    StribeckFriction,
    apply_friction,
    friction_models,
    with_friction,
)

NOISE = 0.02  # N·m
RAW = Processing(deadzone=None, cutoff=None)
TRUE_V = {"joint1": 0.08, "joint2": 0.12, "joint3": 0.05}


def stribeck(v, fc, fs, vs, delta=2.0, eps=0.0):
    s = np.tanh(v / eps) if eps > 0 else np.sign(v)
    return (fc + (fs - fc) * np.exp(-np.abs(v / vs) ** delta)) * s


@pytest.fixture(scope="module")
def arm():
    """A random 4-joint arm with Coulomb friction, its truth with Stribeck friction on joints
    1 and 2 (static 1.6 times Coulomb) and sigmoid friction on joint 3, and a motion maker."""
    base = random_robot(4, seed=2, friction=True, motors=False)
    truth = with_friction(base, {"joint1": "stribeck", "joint2": "stribeck",
                                 "joint3": "sigmoid"}, velocities=TRUE_V)
    theta = true_parameters(truth, np.random.default_rng(0))
    names = truth.parameters.names
    for owner in ("joint1", "joint2"):
        theta[names.index(f"{owner}.fs")] = 1.6 * theta[names.index(f"{owner}.fc")]
    return base, truth, theta


def motion(robot, seed):
    ref = FourierReference.random(robot, harmonics=4, frequency=0.5, periods=3, seed=seed)
    t = np.arange(0.0, 6.0, 0.005)
    return (t, *ref(t))


def run(robot, theta, m, seed=None):
    t, q, v, a = m
    y = Regressor(robot).predict(q, v, a, theta)
    if seed is not None:
        y = y + NOISE * np.random.default_rng(seed).standard_normal(y.shape)
    return dynid.Recording(t, q, y, velocities=v, accelerations=a, names=robot.joint_names)


# Terms against their closed forms --------------------------------------------------------------

def test_stribeck_and_sigmoid_forces_match_their_closed_forms(arm):
    _, truth, theta = arm
    rng = np.random.default_rng(3)
    q, v, a = (rng.standard_normal((200, 4)) * s for s in (1.0, 0.2, 1.0))
    # The Stribeck model's output less the same robot's without Coulomb-like friction.
    names = truth.parameters.names
    bare = theta.copy()
    for owner in ("joint1", "joint2", "joint3"):
        for kind in ("fc", "fs"):
            if f"{owner}.{kind}" in names:
                bare[names.index(f"{owner}.{kind}")] = 0.0
    reg = Regressor(truth)
    friction = reg.predict(q, v, a, theta) - reg.predict(q, v, a, bare)
    get = {n: theta[i] for i, n in enumerate(names)}
    for j, owner in enumerate(("joint1", "joint2")):
        want = stribeck(v[:, j], get[f"{owner}.fc"], get[f"{owner}.fs"], TRUE_V[owner])
        np.testing.assert_allclose(friction[:, j], want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(friction[:, 2], get["joint3.fc"] * np.tanh(v[:, 2] / 0.05),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(friction[:, 3], 0.0, atol=1e-12)


def test_motor_side_stribeck_friction_reaches_the_joint_through_the_gear():
    robot = random_robot(2, seed=3, friction=True, motors=True)
    motor = with_friction(robot, {"motor1": "stribeck"}, velocities=0.5)
    names = motor.parameters.names
    assert {"motor1.fcm", "motor1.fsm", "motor1.fvm"} <= set(names)
    rng = np.random.default_rng(4)
    q, v, a = (rng.standard_normal((100, 2)) * s for s in (0.5, 0.1, 1.0))
    theta = np.zeros(len(names))
    theta[names.index("motor1.fcm")], theta[names.index("motor1.fsm")] = 0.01, 0.03
    y = Regressor(motor).predict(q, v, a, theta)           # joint torques
    K = robot.transmission.jacobian(q)                     # q̇_m = K q̇
    vm = np.einsum("nij,nj->ni", K, v)
    tau_m = np.zeros_like(vm)
    tau_m[:, 0] = stribeck(vm[:, 0], 0.01, 0.03, 0.5)
    np.testing.assert_allclose(y, np.einsum("nji,nj->ni", K, tau_m), atol=1e-12)
    # Its velocity is identified like a joint's.
    m = motion(motor, 2)
    theta = true_parameters(motor, np.random.default_rng(0))
    theta[names.index("motor1.fsm")] = 3 * theta[names.index("motor1.fcm")]
    data = IdentificationData(with_friction(motor, {"motor1": "stribeck"}, velocities=2.0),
                              run(motor, theta, m), processing=RAW)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)  # exact data
        fit = identify_friction(data, OLS(), bounds=(0.01, 10.0))
    assert fit.velocities["motor1"] == pytest.approx(0.5, rel=1e-5)


@pytest.mark.parametrize("term", [
    StribeckFriction("j", 0, velocity=0.07, coulomb=0.4, static=0.9, exponent=1.5),
    StribeckFriction("j", 0, velocity=0.07, coulomb=0.4, static=0.9, smoothing=0.01),
    SigmoidCoulomb("j", 0, velocity=0.03, coulomb=0.5)])
def test_slope_is_the_derivative_with_respect_to_log_velocity(term):
    v = np.linspace(-0.5, 0.5, 101)[:, None]
    amps = np.array([p.prior for p in term.parameters])
    h = 1e-6

    def force(t):
        return t.columns(v, v, v)[:, 0] @ amps

    numeric = (force(term.with_velocity(term.velocity * np.exp(h))) -
               force(term.with_velocity(term.velocity * np.exp(-h)))) / (2 * h)
    amplitude = sum(c * amps[[p.name for p in term.parameters].index(n)]
                    for n, c in term.amplitude)
    slope = FrictionSlope(term).columns(v, v, v)[:, 0, 0]
    np.testing.assert_allclose(amplitude * slope, numeric, atol=1e-7)


def test_with_friction_round_trips_and_keeps_viscous_friction(arm):
    base, truth, _ = arm
    assert friction_models(truth) == {"joint1": "stribeck", "joint2": "stribeck",
                                      "joint3": "sigmoid", "joint4": "coulomb"}
    assert {"joint1.fv", "joint1.fo", "joint1.fc", "joint1.fs"} <= set(truth.parameters.names)
    back = with_friction(truth, "coulomb")
    assert sorted(back.parameters.names) == sorted(base.parameters.names)
    settings = {"models": friction_models(truth), "velocities": TRUE_V, "exponents": {}}
    again = apply_friction(base, settings)
    assert again.parameters.names == truth.parameters.names


# Variable projection ----------------------------------------------------------------------------

def test_exact_data_give_the_true_velocities(arm):
    base, truth, theta = arm
    data = IdentificationData(with_friction(base, {"joint1": "stribeck", "joint2": "stribeck",
                                                   "joint3": "sigmoid"}, velocities=0.3),
                              run(truth, theta, motion(truth, 2)), processing=RAW)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)  # exact data: σ of zero noise
        fit = identify_friction(data, OLS())
    assert fit.converged
    for owner, v in TRUE_V.items():
        assert fit.velocities[owner] == pytest.approx(v, rel=1e-6)
    assert fit.robot.parameters.names == truth.parameters.names
    B = fit.result.base_matrix
    np.testing.assert_allclose(B @ fit.result.params, B @ theta, rtol=1e-6, atol=1e-8)


def test_sigma_of_the_velocities_matches_their_scatter_over_seeds(arm):
    base, truth, theta = arm
    m = motion(truth, 2)
    start = with_friction(base, {"joint1": "stribeck", "joint2": "stribeck",
                                 "joint3": "sigmoid"}, velocities=0.3)
    z, errors = [], []
    for seed in range(8):
        data = IdentificationData(start, run(truth, theta, m, seed), processing=RAW)
        fit = identify_friction(data, WLS())
        assert fit.converged and max(abs(s) for s in fit.step.values()) < 1e-3
        for owner, v in TRUE_V.items():
            z.append((fit.velocities[owner] - v) / fit.sigma[owner])
            errors.append(fit.velocities[owner] / v - 1)
    z_rms = float(np.sqrt(np.mean(np.square(z))))
    assert 0.6 < z_rms < 1.6, z_rms             # 24 draws: z RMS within about ±40 % of 1
    assert abs(np.mean(errors)) < 0.05           # no bias beyond a few % of v_s
    assert np.sqrt(np.mean(np.square(errors))) < 0.1


def test_physically_consistent_estimator_keeps_its_constraints(arm):
    base, truth, theta = arm
    data = IdentificationData(with_friction(base, "stribeck", velocities=0.2),
                              run(truth, theta, motion(truth, 2), 0), processing=RAW)
    fit = identify_friction(data, PhysicallyConsistent())
    assert fit.result.method == PhysicallyConsistent.method
    assert fit.velocities["joint1"] == pytest.approx(TRUE_V["joint1"], rel=0.15)
    names = fit.robot.parameters.names
    for owner in ("joint1", "joint2", "joint3", "joint4"):
        assert fit.result.params[names.index(f"{owner}.fs")] >= -1e-9
    assert fit.result.solver["friction"]["models"]["joint4"] == "stribeck"


def test_result_file_keeps_the_friction_and_rebuilds_the_robot(arm, tmp_path):
    base, truth, theta = arm
    data = IdentificationData(with_friction(base, {"joint1": "stribeck"}),
                              run(truth, theta, motion(truth, 2), 0), processing=RAW)
    fit = identify_friction(data, WLS())
    path = fit.result.save(tmp_path / "r.json")
    back = dynid.load_result(path)
    assert back.solver["friction"]["velocities"] == pytest.approx(fit.velocities)
    robot = apply_friction(base, back.solver["friction"])
    assert robot.parameters.names == fit.robot.parameters.names
    [term] = [t for t in robot.terms if isinstance(t, StribeckFriction)]
    assert term.velocity == pytest.approx(fit.velocities["joint1"], rel=1e-12)


# Choice per joint by validation -----------------------------------------------------------------

def test_select_friction_finds_each_joints_model(arm):
    base, truth, theta = arm
    train = run(truth, theta, motion(truth, 2), 1)
    valid = run(truth, theta, motion(truth, 5), 2)
    choice = select_friction(base, train, valid, processing=RAW)
    assert choice.choice == {"joint1": "stribeck", "joint2": "stribeck", "joint3": "sigmoid",
                             "joint4": "coulomb"}
    # The chosen model predicts the held-out run to its noise level; Coulomb does not.
    assert np.all(choice.validation.rmse < 1.1 * NOISE)
    assert choice.errors["coulomb"][0] > 1.5 * NOISE
    assert "stribeck" in choice.table()


# The simulator with a Stribeck truth ------------------------------------------------------------

def test_closed_loop_simulation_with_stribeck_friction_satisfies_the_model():
    robot = smooth_coulomb(with_friction(random_robot(2, seed=4, friction=True),
                                         "stribeck", velocities=0.1), joint=0.01)
    assert all(getattr(t, "smoothing", 0.01) == 0.01 for t in robot.terms)
    theta = true_parameters(robot, np.random.default_rng(1))
    names = robot.parameters.names
    theta[names.index("joint1.fs")] = 2 * theta[names.index("joint1.fc")]
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, seed=2)
    sim = simulate(robot, theta, ref, 2.0, control_rate=500, noise=SensorNoise(), seed=1)
    truth = sim.truth[0]
    y = Regressor(robot).predict(truth.positions, truth.velocities, truth.accelerations, theta)
    scale = np.abs(truth.output).max(axis=0)
    np.testing.assert_allclose(y, truth.output, atol=1e-6 * scale.max())


# Bad inputs -------------------------------------------------------------------------------------

def test_unknown_model_names_raise(arm):
    base = arm[0]
    with pytest.raises(ModelError, match=r"joint1: unknown model 'stribek'.*coulomb, sigmoid"):
        with_friction(base, {"joint1": "stribek"})
    with pytest.raises(ModelError, match=r"'elbow' has no Coulomb friction.*joint1"):
        with_friction(base, {"elbow": "stribeck"})
    with pytest.raises(ModelError, match=r"candidates: expected.*found \['lugre'\]"):
        select_friction(base, [], None, candidates=("lugre",))


def test_bad_selection_settings_raise(arm):
    base, truth, theta = arm
    rec = run(truth, theta, motion(truth, 2), 0)
    with pytest.raises(ModelError, match=r"tolerance: expected a fraction in \[0, 1\), found 1.5"):
        select_friction(base, rec, rec, tolerance=1.5)
    with pytest.raises(DataError, match=r"valid: expected one Recording .* found list"):
        select_friction(base, rec, [rec])
    with pytest.raises(ModelError, match="no Coulomb friction to choose a model for"):
        select_friction(random_robot(2, seed=1), rec, rec)


@pytest.mark.parametrize("bounds, message", [
    ((0.0, 1.0), "lower velocity bound must be > 0.*found 0"),
    ((-0.1, 1.0), "lower velocity bound must be > 0.*found -0.1"),
    ((0.5, 0.1), "upper velocity bound must exceed the lower one 0.5, found 0.1"),
    ({"joint9": (0.1, 1.0)}, "'joint9' has no sigmoid or Stribeck friction")])
def test_bad_velocity_bounds_raise(arm, bounds, message):
    base, truth, theta = arm
    data = IdentificationData(with_friction(base, {"joint1": "stribeck"}),
                              run(truth, theta, motion(truth, 2), 0), processing=RAW)
    with pytest.raises(ModelError, match=message):
        identify_friction(data, bounds=bounds)
    with pytest.raises(ModelError, match=r"velocity > 0.*found -1"):
        StribeckFriction("j", 0, velocity=-1)


def test_no_nonlinear_friction_or_wrong_data_raise(arm):
    base, truth, theta = arm
    data = IdentificationData(base, run(truth, theta, motion(truth, 2), 0), processing=RAW)
    with pytest.raises(ModelError, match=r"no sigmoid or Stribeck friction.*with_friction"):
        identify_friction(data)
    with pytest.raises(DataError, match="expected IdentificationData"):
        identify_friction(data.system())


def test_data_without_slow_motion_warn_naming_the_joint(arm):
    base, truth, theta = arm
    rec = run(truth, theta, motion(truth, 2), 0)
    robot = with_friction(base, {"joint2": "stribeck"})

    def data(zone):
        return IdentificationData(robot, rec, processing=Processing(
            deadzone=[0.0, zone, 0.0, 0.0], cutoff=None, rest=None))

    with pytest.warns(DynidWarning, match=r"friction of joint2: only 0 of \d+ samples move "
                                          r"between 0.25 .*lower the dead zone"):
        identify_friction(data(0.25), bounds=(0.05, 0.1), max_evaluations=3)
    # Where no sample is left at all, the search cannot start and says what is undetermined.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)
        with pytest.raises(SolverError, match=r"do not determine joint2.fs.*slow motions"):
            identify_friction(data(0.6), bounds=(0.01, 0.05))


def test_a_search_that_does_not_converge_warns(arm):
    base, truth, theta = arm
    data = IdentificationData(with_friction(base, "stribeck"),
                              run(truth, theta, motion(truth, 2), 0), processing=RAW)
    with pytest.warns(DynidWarning, match="did not converge in .*raise max_evaluations"):
        fit = identify_friction(data, start=0.9, max_evaluations=2)
    assert not fit.converged and not fit.result.solver["friction"]["converged"]


def test_docstring_examples_hold():
    import doctest

    import dynid.models.friction as module

    assert doctest.testmod(module, extraglobs={"np": np}).failed == 0
