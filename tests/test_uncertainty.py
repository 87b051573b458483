"""Reported uncertainty against the actual errors over repeated noisy runs: least squares with
outputs of different noise levels, and the physically consistent estimate with and without
active constraints."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dynid
from dynid.demo import true_parameters
from dynid.hardware import FourierReference, SensorNoise, simulate, smooth_coulomb
from dynid.identify import (
    OLS,
    WLS,
    CompressedData,
    IdentificationData,
    JointSystem,
    PhysicallyConsistent,
    Recording,
)
from dynid.models import base_parameters, random_robot, random_states

ROBOT = random_robot(3, seed=2, friction=True, motors=True, output="motor_torque")
BASE = base_parameters(ROBOT)


def _runs(theta, sigma, runs, N=400):
    """Recordings at random states with exact derivatives and output noise ``sigma`` (n,)."""
    out = []
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        q, v, a = random_states(ROBOT, N, rng)
        y = dynid.Regressor(ROBOT).predict(q, v, a, theta) + sigma * rng.standard_normal((N, 3))
        out.append(IdentificationData(ROBOT, Recording(
            np.arange(N) * 0.01, q, y, velocities=v, accelerations=a,
            output_kind=ROBOT.output), base=BASE))
    return out


def test_least_squares_sigma_hold_with_unequal_output_noise():
    """Outputs whose noise differs a hundredfold: the sandwich covariances of OLS, of WLS
    iterated until its σ settle (the default), of its single pass, and of WLS weighted by σ
    given in the wrong order are honest for every base parameter over 60 runs (the plain
    ``σ² (WᵀW)⁻¹`` of OLS is not: it spreads one pooled noise level over every output)."""
    sigma = np.array([1.0, 0.1, 0.01])
    truth = BASE.to_base(ROBOT.prior)
    estimators = {"ols": OLS(), "wls": WLS(), "wls one pass": WLS(iterations=1),
                  "wls wrong σ": WLS(sigma=sigma[::-1])}
    z = {name: [] for name in estimators}
    errors = {name: [] for name in estimators}
    pooled = []
    for data in _runs(ROBOT.prior, sigma, 60):
        for name, est in estimators.items():
            est.fit(data)
            z[name].append((est.base_params_ - truth) / np.sqrt(np.diag(est.base_cov_)))
            errors[name].append(est.base_params_ - truth)
        stacked = data.system().system()
        theta = stacked.solve()
        sigma2 = stacked.residual_norm2(theta) / (stacked.n_rows - stacked.n_params)
        pooled.append((theta - truth) / np.sqrt(np.diag(sigma2 * stacked.inverse_information())))
    print("unequal output noise, 60 runs: RMS of err/σ " + ", ".join(
        f"{k} {np.sqrt(np.mean(np.square(v))):.3f}" for k, v in z.items()) +
        f", pooled σ² (WᵀW)⁻¹ {np.sqrt(np.mean(np.square(pooled))):.3f}")
    for values in z.values():
        per_parameter = np.sqrt(np.mean(np.square(values), axis=0))
        assert 0.85 < np.sqrt(np.mean(np.square(values))) < 1.15
        assert per_parameter.max() < 1.6 and per_parameter.min() > 0.6
    per_parameter = np.sqrt(np.mean(np.square(pooled), axis=0))
    assert per_parameter.max() > 2 or per_parameter.min() < 0.5  # the pooled one is not
    # Weighted by the right σ, the estimate errs less than weighted by the wrong ones.
    assert np.sum(np.square(errors["wls"])) < 0.5 * np.sum(np.square(errors["wls wrong σ"]))


def test_iterated_sigma_are_unbiased_with_few_samples():
    """40 samples of 3 outputs for 28 base parameters, noise levels 1, 0.1 and 0.01, 200 runs:
    at the fixed point each σ² is its residual over the output's own degrees of freedom, so
    its mean is the true variance (shared equally, the loud output's comes out about 12 % too
    large and the quiet ones' too small), and the sandwich stays honest."""
    sigma = np.array([1.0, 0.1, 0.01])
    truth = BASE.to_base(ROBOT.prior)
    reg = dynid.Regressor(ROBOT)
    ratios, z = [], []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        q, v, a = random_states(ROBOT, 40, rng)
        system = JointSystem(3, BASE.rank)
        system.add(BASE.regressor(reg(q, v, a)), reg.predict(q, v, a, ROBOT.prior)
                   + sigma * rng.standard_normal((40, 3)))
        est = WLS().fit(CompressedData(ROBOT, system, base=BASE))
        ratios.append(est.weighting_.sigma ** 2 / sigma ** 2)
        z.append((est.base_params_ - truth) / np.sqrt(np.diag(est.base_cov_)))
    mean = np.mean(ratios, axis=0)
    error = np.std(ratios, axis=0) / np.sqrt(len(ratios))
    rms = np.sqrt(np.mean(np.square(z)))
    print(f"40 samples, 200 runs: mean σ̂²/σ² {np.round(mean, 3)} (± {np.round(error, 3)}), "
          f"RMS of err/σ {rms:.3f}")
    assert np.all(np.abs(mean - 1) < 4 * error)
    assert 0.9 < rms < 1.12


def test_consistent_estimate_without_active_constraints_has_the_weighted_sigma():
    """A truth well inside every constraint and little noise: no active constraint restricts
    the base parameters, so the estimate is weighted least squares', and so is its covariance,
    which holds over 60 runs."""
    theta = ROBOT.prior
    truth = BASE.to_base(theta)
    z = []
    for data in _runs(theta, np.array([2e-4, 1e-4, 5e-5]), 60, N=300):
        est = PhysicallyConsistent().fit(data)
        assert est.result_.covariance_method == "unconstrained"
        assert est.result_.diagnostics["constrained_base_directions"] == 0
        z.append((est.base_params_ - truth) / np.sqrt(np.diag(est.base_cov_)))
    print(f"no active constraint, 60 runs: RMS of err/σ {np.sqrt(np.mean(np.square(z))):.3f}")
    assert 0.8 < np.sqrt(np.mean(np.square(z))) < 1.25


@pytest.fixture(scope="module")
def ariane_runs():
    """The lever-actuated 3-DOF arm in closed loop, current noise of 20 mA: its links' true
    pseudo-inertias are close to singular and friction is weakly separable from the motors',
    so constraints are active in most runs."""
    robot = smooth_coulomb(dynid.load_robot("ariane"), joint=0.02, motor=100.0)
    theta = true_parameters(robot, np.random.default_rng(0))
    ref = FourierReference.random(robot, harmonics=5, frequency=0.1, ramp=2.0, periods=2,
                                  seed=1)
    sim = simulate(robot, theta, ref, 20.0, control_rate=200, space="actuator", runs=16,
                   noise=SensorNoise(output_std=0.02, output_step=0.001), seed=2)
    base = base_parameters(robot)
    return robot, base, base.to_base(theta), sim.measured


def test_consistent_estimate_with_active_constraints_reports_its_coverage(ariane_runs):
    """With active constraints the estimate is pressed against them, closer to the truth
    than weighted least squares: the unconstrained covariance overstates its errors (RMS of
    err/σ near 0.6) and the bootstrap under the constraints follows them. Coverage of the
    ±1.96 σ intervals over 16 runs × 30 base parameters (nominal 95 %)."""
    robot, base, truth, recordings = ariane_runs
    processing = IdentificationData(robot, recordings[0], base=base).processing
    z = {"bootstrap": [], "unconstrained": []}
    active = 0
    for rec in recordings:
        data = IdentificationData(robot, rec, base=base, processing=processing)
        est = PhysicallyConsistent(covariance="bootstrap", draws=100).fit(data)
        active += est.result_.diagnostics["constrained_base_directions"] > 0
        z["bootstrap"].append((est.base_params_ - truth) / np.sqrt(np.diag(est.base_cov_)))
        plain = PhysicallyConsistent(covariance="unconstrained").fit(data)
        z["unconstrained"].append((plain.base_params_ - truth) / np.sqrt(
            np.diag(plain.base_cov_)))
    coverage = {k: float(np.mean(np.abs(v) <= 1.96)) for k, v in z.items()}
    rms = {k: float(np.sqrt(np.mean(np.square(v)))) for k, v in z.items()}
    print(f"coverage of ±1.96σ: {coverage}; RMS of err/σ: {rms}")
    assert active >= 0.75 * len(recordings)
    assert rms["unconstrained"] < 0.8 and coverage["unconstrained"] > 0.97
    assert 0.85 < coverage["bootstrap"] < 0.99 and 0.8 < rms["bootstrap"] < 1.6


def test_active_constraint_rows_are_the_constraints_gradients():
    """A link whose pseudo-inertia has an eigenvalue at ε, and joint 3's viscous friction at
    its bound 0 on both sides of the gear: their rows are the gradients of the smallest
    eigenvalue (by central differences) and of the bounds. The link's constraint leaves every
    base direction free (the unidentifiable part of the link absorbs it); the two bounds pin
    the base parameter ``joint3.fv + r²·motor3.fvm`` and nothing else."""
    from numerics import assert_derivative, derivative

    from dynid.identify import pseudo_inertia
    from dynid.identify.constrained import active_constraints, free_subspace
    from dynid.identify.physical import PSEUDO

    params = ROBOT.parameters
    theta = ROBOT.prior.copy()
    idx = params.link_block("link2")
    w, V = np.linalg.eigh(pseudo_inertia(theta[idx]))
    J = pseudo_inertia(theta[idx]) - (w[0] - 1e-6) * np.outer(V[:, 0], V[:, 0])
    theta[idx] = np.linalg.lstsq(PSEUDO, J.reshape(-1, order="F"), rcond=None)[0]

    def active(theta):
        return active_constraints(ROBOT, theta, epsilon=1e-6, boxes={}, masses={},
                                  total_mass=None)

    rows, names = active(theta)
    assert names == ["pseudo-inertia link2"]

    def lowest(block):
        return np.linalg.eigvalsh(pseudo_inertia(block))[0]

    for k in range(10):
        # rounding: eigvalsh errs by about ε ‖J‖ ≈ 1e-15, not relative to the tiny eigenvalue
        estimate = derivative(lowest, theta[idx], np.eye(10)[k], scale=1e-3, rounding=1e-8)
        assert_derivative(rows[0, idx[k]], estimate, size=0.1, what=params.names[idx[k]])
    assert free_subspace(BASE.matrix, rows, params.priors) is None
    theta[params.indices(["joint3.fv", "motor3.fvm"])] = 0.0
    rows, names = active(theta)
    assert names == ["pseudo-inertia link2", "bound joint3.fv", "bound motor3.fvm"]
    free = free_subspace(BASE.matrix, rows, params.priors)
    pinned = [k for k, name in enumerate(BASE.names) if name.startswith("joint3.fv")]
    assert free.shape == (BASE.rank, BASE.rank - 1)
    np.testing.assert_allclose(free.T @ free, np.eye(BASE.rank - 1), atol=1e-10)
    np.testing.assert_allclose(free[pinned], 0.0, atol=1e-10)


def _prior_off():
    """True parameters 30–40 % off the prior: each link scaled as a whole (so it stays
    physical), the friction parameters alternately by 1.3 and 0.7."""
    params = ROBOT_NM.parameters
    theta = ROBOT_NM.prior.copy()
    for link, factor in zip(params.links, (1.3, 0.7, 1.4), strict=True):
        theta[params.link_block(link)] *= factor
    others = np.flatnonzero([p.group != "link" for p in params])
    theta[others] *= np.where(np.arange(len(others)) % 2, 0.7, 1.3)
    return theta


ROBOT_NM = random_robot(3, seed=2, friction=True)
BASE_NM = base_parameters(ROBOT_NM)


def _noisy(theta, runs, N=200, level=0.02):
    """Recordings at random states with exact derivatives, output noise ``level`` times each
    output's RMS."""
    reg = dynid.Regressor(ROBOT_NM)
    clean = reg.predict(*random_states(ROBOT_NM, 500, np.random.default_rng(99)), theta)
    sigma = level * np.sqrt(np.mean(clean**2, axis=0))
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        q, v, a = random_states(ROBOT_NM, N, rng)
        y = reg.predict(q, v, a, theta) + sigma * rng.standard_normal((N, 3))
        yield IdentificationData(ROBOT_NM, Recording(
            np.arange(N) * 0.01, q, y, velocities=v, accelerations=a,
            output_kind=ROBOT_NM.output), base=BASE_NM)


@pytest.mark.parametrize("kind,weight", [("euclidean", 1e3), ("entropic", 1e5)])
def test_regularized_consistent_sigma_cover_variance_and_bias(kind, weight):
    """A prior 30–40 % off and a regularization weight that moves the poorly excited base
    parameters by more than their unregularized σ: the regularized estimate is biased towards
    the prior. Its reported σ (variance of the regularized estimate, the plug-in bias and the
    plug-in's own spread) cover its errors over 16 runs; weighted least squares' σ do not
    (RMS of err/σ about 3.6 for the Euclidean regularization, 9 for the entropic one)."""
    theta = _prior_off()
    truth = BASE_NM.to_base(theta)
    z, z_wls, moved = [], [], []
    for data in _noisy(theta, 16):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dynid.DynidWarning)
            est = PhysicallyConsistent(regularization=kind, weight=weight).fit(data)
            wls = WLS().fit(data)
        assert est.result_.covariance_method == "regularized"
        error = est.base_params_ - truth
        z.append(error / np.sqrt(np.diag(est.base_cov_)))
        z_wls.append(error / np.sqrt(np.diag(wls.base_cov_)))
        moved.append((est.base_params_ - wls.base_params_) / np.sqrt(np.diag(wls.base_cov_)))
    rms = {"reported": np.sqrt(np.mean(np.square(z))),
           "wls σ": np.sqrt(np.mean(np.square(z_wls)))}
    shift = np.sqrt(np.mean(np.square(moved), axis=0))
    print(f"{kind}, 16 runs: RMS of err/σ {rms}; largest shift by the regularization "
          f"{shift.max():.1f} unregularized σ")
    assert shift.max() > 1.5  # the regularization visibly moves some parameters
    assert 0.7 < rms["reported"] < 1.4
    assert np.sqrt(np.mean(np.square(z), axis=0)).max() < 2.0
    assert rms["wls σ"] > 2.0


def _whitened(est, data):
    """``R_v`` and ``z`` of the data whitened by the estimate's output weighting."""
    whitened = data.system().system(covariance=est.noise_covariance_)
    return whitened.R, whitened.qty


@pytest.mark.parametrize("kind", ["euclidean", "entropic"])
def test_regularized_response_is_the_solvers(kind):
    """The response ``G F`` of the regularized estimate to its data, from the regularization's
    Hessian (:mod:`dynid.identify.shrinkage`), against the solver's own: the estimate solved
    again for data moved by ±δ along random directions (central differences)."""
    from dynid.identify.constrained import typical_magnitudes
    from dynid.identify.shrinkage import regularization_root, response

    data = next(_noisy(ROBOT_NM.prior, 1, N=300, level=0.005))
    est = PhysicallyConsistent(regularization=kind, weight=30.0)
    est.fit(data)
    assert est.result_.diagnostics["active_constraints"] == []  # the linearization holds
    Rv, z = _whitened(est, data)
    B = BASE_NM.matrix
    typical = typical_magnitudes(ROBOT_NM.parameters.priors)
    G = response(Rv, B, regularization_root(ROBOT_NM, est.params_, kind, 30.0, typical),
                 typical)
    rng = np.random.default_rng(5)
    for _ in range(3):
        delta = 0.3 * rng.standard_normal(len(z))  # z's noise has unit variance
        moved = [B @ est.solve(ROBOT_NM, Rv @ B, z + sign * delta)[0] for sign in (1, -1)]
        numeric = (moved[0] - moved[1]) / 2
        analytic = G @ Rv.T @ delta
        scale = np.sqrt(np.diag(est.base_cov_))
        np.testing.assert_allclose(numeric / scale, analytic / scale, atol=2e-3)


def test_regularized_bootstrap_agrees_with_the_analytic_sigma():
    """The bootstrap of a regularized fit (its variance and the shift's spread measured over
    400 draws of the data, the same plug-in bias) against the analytic σ: within the
    bootstrap's own sampling error (about 7 % for each σ² from 400 draws)."""
    data = next(_noisy(_prior_off(), 1))
    fits = {}
    for method in ("regularized", "bootstrap"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dynid.DynidWarning)
            fits[method] = PhysicallyConsistent(regularization="euclidean", weight=1000.0,
                                                covariance=method, draws=400).fit(data)
    ratio = np.sqrt(np.diag(fits["bootstrap"].base_cov_) / np.diag(
        fits["regularized"].base_cov_))
    print(f"bootstrap σ / analytic σ: {np.round(ratio, 2)}")
    assert fits["bootstrap"].result_.covariance_method == "bootstrap"
    assert ratio.min() > 0.75 and ratio.max() < 1.33


def test_regularized_covariance_needs_a_regularization():
    with pytest.raises(dynid.DataError, match="covariance='regularized': applies to a "
                                              "regularized fit"):
        PhysicallyConsistent(covariance="regularized").fit(next(_noisy(ROBOT_NM.prior, 1)))


def test_regularized_sigma_without_pull_are_weighted_least_squares():
    """At weight 0 the regularized estimate is the weighted least-squares one: no shift, no
    shrinkage, and its mean squared error is the sandwich."""
    data = next(_noisy(_prior_off(), 1))
    est = PhysicallyConsistent(regularization="euclidean", weight=0.0,
                               covariance="regularized").fit(data)
    wls = WLS().fit(data)
    np.testing.assert_allclose(est.base_params_, wls.base_params_,
                               atol=1e-6 * np.abs(wls.base_params_).max())
    np.testing.assert_allclose(est.base_cov_, wls.base_cov_,
                               atol=1e-6 * np.abs(np.diag(wls.base_cov_)).max())
