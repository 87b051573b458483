"""Weights of the outputs: each output's share of the leverage, the iteration of σ from the
residuals and its warning, weights given by the user (σ per output or a full covariance) for
weighted and physically consistent least squares, their checks and their result files."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.identify import (
    WLS,
    GaussMarkov,
    IdentificationData,
    JointSystem,
    PhysicallyConsistent,
    Recording,
    load_result,
)
from dynid.models import base_parameters, random_robot, random_states

ROBOT = random_robot(3, seed=2, friction=True, motors=True, output="motor_torque")
BASE = base_parameters(ROBOT)
NOISE = np.array([0.01, 1.0, 0.1])


def _rows(N, seed, sigma=NOISE, correlated=None):
    """Base regressor (N, 3, b) and outputs (N, 3) at random states, with output noise of
    standard deviations ``sigma`` or of covariance ``correlated``."""
    rng = np.random.default_rng(seed)
    q, v, a = random_states(ROBOT, N, rng)
    reg = dynid.Regressor(ROBOT)
    W = BASE.regressor(reg(q, v, a))
    noise = rng.standard_normal((N, 3))
    noise = noise @ np.linalg.cholesky(correlated).T if correlated is not None else \
        noise * sigma
    return (q, v, a), W, reg.predict(q, v, a, ROBOT.prior) + noise


def _data(N=400, seed=0, **kwargs):
    (q, v, a), _, y = _rows(N, seed, **kwargs)
    rec = Recording(np.arange(N) * 0.01, q, y, velocities=v, accelerations=a,
                    output_kind=ROBOT.output)
    return IdentificationData(ROBOT, rec, base=BASE)


def test_leverage_is_the_trace_of_each_outputs_block_of_the_hat_matrix():
    """``h_j`` against the dense oblique projector ``H = W (Wᵀ V⁻¹ W)⁻¹ Wᵀ V⁻¹`` of a full
    weighting V; they sum to the number of unknowns; and with the noise's own covariance as
    weighting, ``e_jᵀe_j / (N − h_j)`` averages to each output's variance over many draws."""
    N, b = 60, BASE.rank
    _, W, y = _rows(N, 1)
    V = np.array([[0.2, 0.05, 0.0], [0.05, 1.0, -0.1], [0.0, -0.1, 0.5]])
    system = JointSystem(3, b)
    system.add(W, y)
    Wd = W.transpose(1, 0, 2).reshape(3 * N, b)  # rows by output, then sample
    Vbig = np.kron(V, np.eye(N))
    Vi = np.linalg.inv(Vbig)
    H = Wd @ np.linalg.solve(Wd.T @ Vi @ Wd, Wd.T @ Vi)
    want = [np.trace(H[j * N:(j + 1) * N, j * N:(j + 1) * N]) for j in range(3)]
    h = system.leverage(V)
    np.testing.assert_allclose(h, want, rtol=1e-9)
    assert h.sum() == pytest.approx(b, rel=1e-9)
    # Expectation of the residual sum of squares under the weighting V = noise covariance.
    S = np.diag(NOISE**2)
    h = system.leverage(S)
    rng = np.random.default_rng(2)
    ratios = []
    for _ in range(400):
        y = W @ BASE.to_base(ROBOT.prior) + NOISE * rng.standard_normal((N, 3))
        s = JointSystem(3, b)
        s.add(W, y)
        theta = s.system(covariance=S).solve()
        ratios.append(np.diag(s.residuals_gram(theta)) / (N - h) / NOISE**2)
    mean, error = np.mean(ratios, axis=0), np.std(ratios, axis=0) / np.sqrt(len(ratios))
    assert np.all(np.abs(mean - 1) < 4 * error)


def test_weights_that_do_not_settle_are_named():
    data = _data()
    with pytest.warns(dynid.DynidWarning, match=r"noise level of motor1 \(σ 0.03\d* → "
                                                r"0.0099\d*\), .* did not settle within 1 "
                                                r"weighted pass \(relative change 0.67"):
        est = WLS(max_iterations=1).fit(data)
    assert est.weighting_.settled is False and est.weighting_.iterations == 1
    assert est.result_.solver["weighting"]["settled"] is False
    single = WLS(iterations=1).fit(data)  # asked for: no warning, the same estimate
    np.testing.assert_array_equal(single.base_params_, est.base_params_)


def test_an_output_without_residual_cannot_be_weighted():
    """An output whose rows are all zero (the others determine every unknown) has no
    residual: the first pass says so, and so does the iteration started from any weights."""
    from dynid.identify.estimators import first_pass_covariance
    from dynid.identify.weights import iterate

    rng = np.random.default_rng(3)
    W, y = rng.standard_normal((50, 3, 6)), rng.standard_normal((50, 3))
    W[:, 1], y[:, 1] = 0.0, 0.0
    system = JointSystem(3, 6)
    system.add(W, y)
    with pytest.raises(dynid.DataError, match="the residual of elbow is zero after 1 weighted "
                                              "pass"):
        iterate(system, np.eye(3), ["shoulder", "elbow", "wrist"])
    with pytest.raises(dynid.DataError, match="output 1: the first-pass residual is zero"):
        first_pass_covariance(system, diagonal=True)


def test_given_sigma_weigh_each_output():
    """σ given per output: the estimate is weighted least squares on the raw rows with those
    weights, whatever the residuals say; a full covariance gives the Gauss–Markov estimate,
    with the sandwich covariance, which agrees with Gauss–Markov's when the covariance is
    the noise's."""
    data = _data(N=2000)
    rec = data.recordings[0]
    W = BASE.regressor(dynid.Regressor(ROBOT)(rec.positions, rec.velocities,
                                              rec.accelerations))
    sigma = np.array([0.5, 0.2, 0.05])
    want = np.linalg.lstsq((W / sigma[:, None]).reshape(-1, BASE.rank),
                           (rec.output / sigma).reshape(-1), rcond=None)[0]
    est = WLS(sigma=sigma).fit(data)
    np.testing.assert_allclose(est.base_params_, want, rtol=1e-7, atol=1e-9 * np.abs(want).max())
    assert est.weighting_.source == "given"
    np.testing.assert_allclose(est.result_.solver["weighting"]["sigma"], sigma, rtol=1e-12)
    S = np.array([[1.0, 0.3, 0.0], [0.3, 0.5, 0.1], [0.0, 0.1, 0.2]]) * 1e-2
    data = _data(N=2000, correlated=S)
    full = WLS(noise_covariance=S).fit(data)
    gm = GaussMarkov(covariance=S).fit(data)
    np.testing.assert_allclose(full.base_params_, gm.base_params_, rtol=1e-9,
                               atol=1e-12 * np.abs(gm.base_params_).max())
    np.testing.assert_allclose(np.sqrt(np.diag(full.base_cov_)), np.sqrt(np.diag(
        gm.base_cov_)), rtol=0.1)


@pytest.mark.parametrize("weights", [{"sigma": [0.5, 0.2, 0.05]},
                                     {"noise_covariance": np.diag([0.5, 0.2, 0.05]) ** 2}])
def test_consistent_estimate_is_weighted_by_the_given_weights(weights):
    """A truth well inside every constraint and little noise: the physically consistent
    estimate is the weighted least-squares one for the weights given, and so is its
    covariance."""
    small = {k: np.asarray(v) * 1e-3 for k, v in weights.items()}
    data = _data(sigma=np.array([2e-4, 1e-4, 5e-5]))
    est = PhysicallyConsistent(**small).fit(data)
    wls = WLS(**small).fit(data)
    assert est.result_.covariance_method == "unconstrained"
    np.testing.assert_allclose(est.base_params_, wls.base_params_, rtol=1e-5,
                               atol=1e-7 * np.abs(wls.base_params_).max())
    np.testing.assert_allclose(est.base_cov_, wls.base_cov_, rtol=1e-6,
                               atol=1e-9 * np.abs(wls.base_cov_).max())
    assert est.result_.solver["weighting"]["source"] == "given"
    other = WLS(sigma=[1e-3, 1e-3, 1e-3]).fit(data)  # other weights, another estimate
    assert np.max(np.abs(other.base_params_ - wls.base_params_)) > 1e-6 * np.abs(
        wls.base_params_).max()


_SIGMA_CASES = [
    ([0.1, 0.1], r"sigma: expected one noise σ > 0 per output \(motor1, motor2, motor3\), in "
                 r"the output's unit: 3 values, found 2 values \(\[0.1, 0.1\]\); e.g. "
                 r"sigma=\[0.1, 0.1, 0.1\]"),
    ([[0.1, 0.1, 0.1]], r"sigma: .*: 3 values, found shape \(1, 3\)"),
    ([0.1, float("nan"), 0.1], r"sigma\[1\] \(motor2\): expected a finite σ > 0, found nan"),
    ([0.1, 0.1, float("inf")], r"sigma\[2\] \(motor3\): expected a finite σ > 0, found inf"),
    ([0.0, 0.1, 0.1], r"sigma\[0\] \(motor1\): expected a finite σ > 0, found 0; e.g. sigma="),
    ([0.1, -0.1, 0.1], r"sigma\[1\] \(motor2\): expected a finite σ > 0, found -0.1"),
    (["a", 0.1, 0.1], r"sigma: expected one noise σ > 0 per output .*found \['a', 0.1, 0.1\]"),
    ([[0.1], [0.1, 0.2]], r"sigma: expected one noise σ .*found \[\[0.1\], \[0.1, 0.2\]\]"),
    ("0.1,0.1,0.1", r"sigma: expected one noise σ .*found '0.1,0.1,0.1'"),
    ({"motor1": 0.1}, r"sigma: expected one noise σ .*found \{'motor1': 0.1\}"),
]
_COVARIANCE_CASES = [
    (np.eye(2), r"noise_covariance: expected the \(3, 3\) covariance of the outputs' noise "
                r"\(motor1, motor2, motor3\), found shape \(2, 2\); e.g. "
                r"noise_covariance=np.diag\(\[0.1, 0.1, 0.1\]\) \*\* 2"),
    (np.diag([1.0, np.nan, 1.0]), r"noise_covariance\[1\]\[1\]: expected a finite number, "
                                  r"found nan"),
    (np.diag([1.0, 1.0, -np.inf]), r"noise_covariance\[2\]\[2\]: expected a finite number"),
    (np.diag([1.0, 0.0, 1.0]), r"noise_covariance\[1\]\[1\] \(motor2\): expected a variance "
                               r"> 0, found 0"),
    ([[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], r"noise_covariance: expected a symmetric matrix, "
                                          r"found noise_covariance\[0\]\[1\] = 0.5 but "
                                          r"noise_covariance\[1\]\[0\] = 0"),
    ([[1, 2, 0], [2, 1, 0], [0, 0, 1]], r"noise_covariance: expected a positive definite "
                                        r"covariance.*motor1 and motor2 correlate by 2"),
    ([[1, 1, 0], [1, 1, 0], [0, 0, 1]], r"expected a positive definite covariance, found a "
                                        r"singular"),
    ([[1, 0, 0], [0, 1]], r"noise_covariance: expected the \(3, 3\) covariance .*found "
                          r"\[\[1, 0, 0\], \[0, 1\]\]"),
]
_SETTINGS_CASES = [
    ({"sigma": [1, 1, 1], "noise_covariance": np.eye(3)},
     r"sigma and noise_covariance: give one of them"),
    ({"iterations": "many"}, r"iterations: expected 'auto' or an integer between 1 and 1000, "
                             r"found 'many'"),
    ({"iterations": True}, r"iterations: expected 'auto' or an integer"),
    ({"tolerance": 0.0}, r"tolerance: expected a relative change of σ in \(0, 1\), found 0.0"),
    ({"tolerance": float("nan")}, r"tolerance: expected a relative change"),
    ({"max_iterations": 0}, r"max_iterations: expected an integer between 1 and 1000"),
    ({"max_iterations": 2.5}, r"max_iterations: expected an integer between 1 and 1000, found "
                              r"2.5"),
    ({"sigma": [1, 1, 1], "iterations": 2}, r"iterations: the weights are given \(sigma\), so "
                                            r"there is nothing to iterate"),
]


@pytest.mark.parametrize(("settings", "match"), [
    *[({"sigma": value}, match) for value, match in _SIGMA_CASES],
    *[({"noise_covariance": value}, match) for value, match in _COVARIANCE_CASES],
    *_SETTINGS_CASES])
def test_bad_weights_of_wls_are_refused(settings, match):
    with pytest.raises(dynid.DataError, match=match):
        WLS(**settings).fit(_data(N=100))


@pytest.mark.parametrize(("settings", "match"), [
    ({"sigma": [0.1, np.nan, 0.1]}, r"sigma\[1\] \(motor2\): expected a finite σ > 0"),
    ({"noise_covariance": [[1, 2, 0], [2, 1, 0], [0, 0, 1]]}, r"noise_covariance: expected a "
                                                              r"positive definite"),
    ({"sigma": [0.1, 0.1, 0.1], "wls_iterations": 1},
     r"wls_iterations: the weights are given \(sigma\), so there is nothing to iterate"),
    ({"wls_iterations": 0}, r"wls_iterations: expected 'auto' or an integer"),
    ({"weighting": "ols", "sigma": [0.1, 0.1, 0.1]},
     r"sigma: applies to weighting='wls', found weighting='ols'"),
    ({"weighting": "gauss-markov", "wls_iterations": 2}, r"wls_iterations: applies to "
                                                         r"weighting='wls'"),
])
def test_bad_weights_of_the_consistent_estimate_are_refused(settings, match):
    with pytest.raises(dynid.DataError, match=match):
        PhysicallyConsistent(**settings).fit(_data(N=100))


@pytest.mark.parametrize(("value", "match"), [
    ([[1, 0, 0], [0, 1]], r"covariance: expected the \(3, 3\) covariance .*e.g. "
                          r"covariance=np.diag"),
    ([["a", 0, 0], [0, 1, 0], [0, 0, 1]], r"covariance: expected the \(3, 3\) covariance"),
    (None, r"covariance: expected the \(3, 3\) covariance .*found None"),
    (np.array([[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), r"covariance: expected a symmetric"),
])
def test_bad_gauss_markov_covariances_are_refused(value, match):
    with pytest.raises(dynid.DataError, match=match):
        GaussMarkov(covariance=value).fit(_data(N=100))


@pytest.mark.parametrize("weights", [{"sigma": np.array([0.5, 0.2, 0.05])},
                                     {"noise_covariance": np.diag([0.5, 0.2, 0.05]) ** 2},
                                     {"iterations": 1}])
def test_weights_are_stored_in_the_result_file_and_make_the_estimator_again(weights, tmp_path):
    data = _data()
    est = WLS(**weights).fit(data)
    back = load_result(est.result_.save(tmp_path / "result.json"))
    again = WLS(**back.settings).fit(data)
    np.testing.assert_array_equal(again.base_params_, est.base_params_)
    assert back.solver["weighting"] == est.result_.solver["weighting"]
    for key, value in weights.items():
        np.testing.assert_array_equal(back.settings[key], value)


@pytest.mark.parametrize(("entry", "value", "match"), [
    ("sigma", [0.5, 0.2], r"bad.json: settings.sigma: expected a list of numbers of length 3, "
                          r"found 2"),
    ("sigma", [0.5, -0.2, 0.1], r"bad.json: settings.sigma\[1\]: expected a noise σ > 0, "
                                r"found -0.2"),
    ("sigma", [0.5, "x", 0.1], r"bad.json: settings.sigma\[1\]: expected a finite number"),
    ("noise_covariance", [[1, 0], [0, 1]], r"bad.json: settings.noise_covariance: expected a "
                                           r"list of rows of numbers of length 3"),
])
def test_bad_weights_in_a_result_file_are_named(entry, value, match, tmp_path):
    path = WLS(sigma=[0.5, 0.2, 0.05]).fit(_data()).result_.save(tmp_path / "result.json")
    content = json.loads(path.read_text())
    content["settings"].pop("sigma")
    content["settings"][entry] = value
    (tmp_path / "bad.json").write_text(json.dumps(content))
    with pytest.raises(dynid.DataError, match=match):
        load_result(tmp_path / "bad.json")
