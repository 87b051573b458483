"""Estimators on exact and noisy data at random states: OLS, WLS, Gauss–Markov, physically
consistent least squares (constraints, infeasibility, regularization), results and their files."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import check_physical

import dynid
from dynid.identify import (
    OLS,
    WLS,
    CompressedData,
    GaussMarkov,
    IdentificationData,
    JointSystem,
    PhysicallyConsistent,
    Processing,
    Recording,
    load_result,
)
from dynid.models import base_parameters, random_robot, random_states

ROBOT = random_robot(3, seed=2, friction=True, motors=True, output="motor_torque")
BASE = base_parameters(ROBOT)


def _data(theta, noise=None, N=300, seed=0, **kwargs):
    """A recording at random states with exact derivatives; ``noise`` is the output noise
    covariance (n, n) or None."""
    rng = np.random.default_rng(seed)
    q, v, a = random_states(ROBOT, N, rng)
    y = dynid.Regressor(ROBOT).predict(q, v, a, theta)
    if noise is not None:
        y = y + rng.standard_normal(y.shape) @ np.linalg.cholesky(noise).T
    rec = Recording(np.arange(N) * 0.01, q, y, velocities=v, accelerations=a,
                    output_kind=ROBOT.output)
    return IdentificationData(ROBOT, rec, base=BASE, **kwargs)


@pytest.mark.parametrize("estimator", [OLS(), WLS(), GaussMarkov(),
                                       PhysicallyConsistent(),
                                       PhysicallyConsistent(solver="SCS")])
def test_exact_data_give_the_base_parameters(estimator):
    theta = ROBOT.prior * 1.1
    est = estimator.fit(_data(theta, noise=np.eye(3) * 1e-20))
    truth = BASE.to_base(theta)
    np.testing.assert_allclose(est.base_params_, truth, rtol=1e-6, atol=1e-9 * np.abs(
        truth).max())
    np.testing.assert_allclose(BASE.to_base(est.params_), truth, rtol=1e-6,
                               atol=1e-9 * np.abs(truth).max())
    if isinstance(estimator, PhysicallyConsistent):
        check_physical(ROBOT, est.params_)
        assert est.result_.solver["status"] == "optimal"
        assert est.result_.solver["lmi_min_eigenvalue"] >= 1e-6 - 1e-9


@pytest.mark.parametrize("stalls", [1, 3])
def test_an_inaccurate_interior_point_solve_is_solved_again_looser(monkeypatch, stalls):
    """Clarabel stopping short of its tolerance (status ``optimal_inaccurate``) is solved
    again at ten times it: that solve's status and tolerance are reported when it is optimal,
    else the first tolerance is solved again, with a warning."""
    calls = []
    run = PhysicallyConsistent._run

    def stalling(self, problem, tolerance=None):
        status = run(self, problem, tolerance)
        calls.append(tolerance)
        return "optimal_inaccurate" if len(calls) <= stalls else status

    monkeypatch.setattr(PhysicallyConsistent, "_run", stalling)
    theta = ROBOT.prior * 1.1
    data = _data(theta, noise=np.eye(3) * 1e-20)
    if stalls == 1:
        est = PhysicallyConsistent().fit(data)
        assert calls == [None, 1e-8]
        assert est.result_.solver["status"] == "optimal"
        assert est.result_.solver["tolerance"] == 1e-8
    else:
        with pytest.warns(dynid.DynidWarning, match="CLARABEL reports an inaccurate solution"):
            est = PhysicallyConsistent().fit(data)
        assert calls == [None, 1e-8, None]
        assert est.result_.solver["status"] == "optimal_inaccurate"
        assert est.result_.solver["tolerance"] == 1e-9
    np.testing.assert_allclose(est.base_params_, BASE.to_base(theta), rtol=1e-6,
                               atol=1e-9 * np.abs(BASE.to_base(theta)).max())


def test_gauss_markov_uncertainty_is_honest():
    """Over many noise draws with a full output covariance, the Gauss–Markov estimates scatter
    as their covariance (Abdellatif (10)) says, and better than OLS."""
    C = np.array([[0.3, 0, 0], [0.25, 0.1, 0], [0.05, -0.1, 0.2]])
    S = C @ C.T
    theta = ROBOT.prior
    truth = BASE.to_base(theta)
    z, err_gm, err_ols = [], [], []
    for seed in range(60):
        data = _data(theta, noise=S, N=120, seed=seed)
        gm = GaussMarkov(covariance=S).fit(data)
        z.append((gm.base_params_ - truth) / np.sqrt(np.diag(gm.base_cov_)))
        err_gm.append(gm.base_params_ - truth)
        err_ols.append(OLS().fit(data).base_params_ - truth)
    z = np.array(z)
    assert 0.85 < np.sqrt(np.mean(z**2)) < 1.15
    assert np.abs(z.mean(axis=0)).max() < 4 / np.sqrt(len(z))
    assert np.mean(np.square(err_gm)) < np.mean(np.square(err_ols))
    # With the covariance estimated from first-pass residuals the estimate is close.
    est = GaussMarkov(covariance="residuals").fit(_data(theta, noise=S, N=2000, seed=99))
    np.testing.assert_allclose(est.noise_covariance_, S, atol=0.1 * S.max())


def test_wls_weights_follow_each_output_noise():
    """Iterated until they settle, the weights follow each output's noise, even where the OLS
    residuals of a quiet output carry the others' noise (the single pass is far off there)."""
    S = np.diag([0.01, 1.0, 0.1]) ** 2
    data = _data(ROBOT.prior, noise=S, N=1500)
    est = WLS().fit(data)
    np.testing.assert_allclose(est.weighting_.sigma, [0.01, 1.0, 0.1], rtol=0.1)
    assert est.weighting_.settled and est.weighting_.iterations >= 2
    one = WLS(iterations=1).fit(data)
    assert one.weighting_.sigma[0] > 1.5 * 0.01
    with pytest.raises(dynid.DataError, match="covariance='recordings': the recordings carry"):
        GaussMarkov(covariance="recordings").fit(_data(ROBOT.prior, noise=S))


def test_weights_are_iterated_from_the_residuals():
    """WLS weighs each output by the residual level of the OLS fit in its first pass, then by
    that of the previous pass over the output's own degrees of freedom (N minus its share of
    the leverage: the trace of its rows' block of the hat matrix), until the σ change by less
    than the tolerance; its covariance is the sandwich with that residual covariance. The
    physically consistent estimate weighs its outputs the same way. Against weighted least
    squares on the raw rows."""
    S = np.diag([0.01, 1.0, 0.1]) ** 2
    data = _data(ROBOT.prior, noise=S, N=400)
    rec = data.recordings[0]
    W = BASE.regressor(dynid.Regressor(ROBOT)(rec.positions, rec.velocities,
                                              rec.accelerations))
    y = rec.output
    N, b = len(y), BASE.rank

    def weighted(sigma, equal_split=False):
        X = (W / sigma[:, None]).reshape(-1, b)
        theta = np.linalg.lstsq(X, (y / sigma).reshape(-1), rcond=None)[0]
        E = np.einsum("kip,p->ki", W, theta) - y
        hat = np.sum(np.linalg.qr(X)[0] ** 2, axis=1).reshape(N, 3).sum(axis=0)
        dof = np.full(3, N - b / 3) if equal_split else N - hat
        Xs = X.reshape(N, 3, b)
        A = np.einsum("kip,kiq->pq", Xs, Xs)
        noise = E.T @ E / np.sqrt(np.outer(dof, dof))
        G = np.einsum("kip,ij,kjq->pq", Xs, noise / np.outer(sigma, sigma), Xs)
        return theta, np.sqrt(np.diag(noise)), np.linalg.solve(A, np.linalg.solve(A, G).T)

    theta_ols, sigma_ols, _ = weighted(np.ones(3), equal_split=True)
    sigmas, thetas, covs = [sigma_ols], [], []
    for _ in range(30):
        theta, sigma, cov = weighted(sigmas[-1])
        thetas.append(theta)
        covs.append(cov)
        sigmas.append(sigma)
    scale = np.abs(thetas[0]).max()
    np.testing.assert_allclose(OLS().fit(data).base_params_, theta_ols, rtol=1e-7,
                               atol=1e-9 * scale)
    auto = WLS().fit(data)
    k = auto.weighting_.iterations
    change = [np.max(np.abs(sigmas[i + 1] / sigmas[i] - 1)) for i in range(k)]
    assert change[-1] < 1e-3 <= change[-2]  # the first pass that changes no σ by 0.1 %
    for est, passes in ((WLS(iterations=1).fit(data), 1), (WLS(iterations=2).fit(data), 2),
                        (auto, k)):
        np.testing.assert_allclose(est.noise_covariance_, np.diag(sigmas[passes - 1] ** 2),
                                   rtol=1e-8)
        np.testing.assert_allclose(est.base_params_, thetas[passes - 1], rtol=1e-7,
                                   atol=1e-9 * scale)
        np.testing.assert_allclose(est.base_cov_, covs[passes - 1], rtol=1e-6,
                                   atol=1e-9 * np.abs(covs[passes - 1]).max())
        assert est.result_.solver["weighting"]["iterations"] == passes
    record = auto.result_.solver["weighting"]
    assert record["source"] == "residuals" and record["settled"] is True
    np.testing.assert_allclose(record["sigma"], sigmas[k - 1], rtol=1e-8)
    with pytest.raises(dynid.DataError, match="iterations: expected 'auto' or an integer "
                                              "between 1 and 1000, found 0"):
        WLS(iterations=0).fit(data)
    wls = PhysicallyConsistent(weighting="wls").fit(data)
    np.testing.assert_allclose(wls.noise_covariance_, auto.noise_covariance_, rtol=1e-8)
    assert wls.result_.solver["weighting"] == record
    single = PhysicallyConsistent(wls_iterations=1).fit(data)
    np.testing.assert_allclose(single.noise_covariance_, np.diag(sigma_ols**2), rtol=1e-8)
    flat = PhysicallyConsistent(weighting="ols").fit(data)
    E_ols = np.einsum("kip,p->ki", W, theta_ols) - y
    np.testing.assert_allclose(flat.noise_covariance_, np.eye(3) * np.sum(E_ols**2) / (
        y.size - b), rtol=1e-8)
    assert flat.result_.solver["weighting"]["source"] == "ols"


def test_consistent_estimate_meets_active_constraints():
    """Data from non-physical parameters (a negative mass): the estimate lands on the
    constraints and satisfies all of them."""
    theta = ROBOT.prior.copy()
    params = ROBOT.parameters
    theta[params.link_block("link3")] *= -0.5
    theta[params.where(kind="fv")] = -0.2
    est = PhysicallyConsistent().fit(_data(theta, noise=np.eye(3) * 1e-4))
    check_physical(ROBOT, est.params_)
    info = est.result_.solver
    assert info["lmi_min_eigenvalue"] == pytest.approx(1e-6, abs=1e-7)
    assert np.allclose(est.params_[params.where(kind="fv")], 0.0, atol=1e-6)
    unconstrained = OLS().fit(_data(theta, noise=np.eye(3) * 1e-4))
    assert est.result_.training_rmse.sum() > unconstrained.result_.training_rmse.sum()


def test_user_boxes_and_mass_bounds_hold():
    params = ROBOT.parameters
    m1 = params["link1.m"].prior
    est = PhysicallyConsistent(mass_bounds={"link1": (1.2 * m1, 1.5 * m1)},
                               com_box={"link2": ([-0.01] * 3, [0.01] * 3)},
                               total_mass=(0, 100)).fit(_data(ROBOT.prior, noise=np.eye(3) * 1e-4))
    assert 1.2 * m1 - 1e-9 <= est.params_[params.index("link1.m")] <= 1.5 * m1 + 1e-9
    block = est.params_[params.link_block("link2")]
    assert np.all(np.abs(block[1:4] / block[0]) <= 0.01 + 1e-9)


def test_infeasible_constraints_name_the_groups():
    est = PhysicallyConsistent(mass_bounds={"link1": (5.0, 6.0)}, total_mass=(0.0, 3.0))
    with pytest.raises(dynid.SolverError, match="infeasible") as info:
        est.fit(_data(ROBOT.prior, noise=np.eye(3) * 1e-4))
    message = str(info.value)
    assert "'mass bounds link1'" in message and "'total mass'" in message
    # The other links' masses must stay positive (their pseudo-inertia or COM box says so);
    # friction and actuator bounds play no part.
    assert "link2" in message and "friction bounds" not in message
    assert "actuator bounds" not in message
    with pytest.raises(dynid.DataError, match="com_box: unknown links"):
        PhysicallyConsistent(com_box={"nolink": ([0] * 3, [1] * 3)}).fit(
            _data(ROBOT.prior, noise=np.eye(3)))
    with pytest.raises(dynid.DataError, match="regularization: expected None"):
        PhysicallyConsistent(regularization="l1").fit(_data(ROBOT.prior, noise=np.eye(3)))


@pytest.mark.parametrize("kind,solver", [("euclidean", "SCS"), ("entropic", "CLARABEL")])
def test_regularization_pulls_towards_the_prior(kind, solver):
    theta = ROBOT.prior * 1.3
    data = _data(theta, noise=np.eye(3) * 1e-2)
    free = PhysicallyConsistent(solver=solver).fit(data)
    strong = PhysicallyConsistent(regularization=kind, weight=1e8, solver=solver).fit(data)
    check_physical(ROBOT, strong.params_)
    link = ROBOT.parameters.link_block("link2")
    d_free = np.linalg.norm(free.params_[link] - ROBOT.prior[link])
    d_strong = np.linalg.norm(strong.params_[link] - ROBOT.prior[link])
    assert d_strong < 0.05 * d_free


def test_result_file_round_trip(tmp_path):
    est = PhysicallyConsistent().fit(_data(ROBOT.prior, noise=np.eye(3) * 1e-2))
    path = est.result_.save(tmp_path / "result.json")
    back = load_result(path)
    np.testing.assert_array_equal(back.params, est.params_)
    np.testing.assert_array_equal(back.cov, est.cov_)
    np.testing.assert_array_equal(back.base_matrix, BASE.matrix)
    assert back.names == ROBOT.parameters.names and back.base_names == BASE.names
    assert back.settings["epsilon"] == 1e-6 and back.solver["status"] == "optimal"
    unc = back.uncertainty()
    np.testing.assert_allclose(np.diag(unc.correlation), 1.0)
    np.testing.assert_allclose(unc.std, np.sqrt(np.diag(est.base_cov_)))
    assert unc.condition >= 1.0 and np.all(np.abs(unc.correlation) <= 1 + 1e-12)
    assert np.isinf(back.standard_uncertainty().condition)  # standard parameters are not all
    (tmp_path / "bad.json").write_text('{"format": "other"}')                # identifiable
    with pytest.raises(dynid.DataError, match="not a dynid result file"):
        load_result(tmp_path / "bad.json")


def test_saturated_samples_are_left_out():
    """Outputs clipped at a drive's limit no longer follow the model; flagged, they are left
    out and the estimate stays exact."""
    theta = ROBOT.prior * 1.1
    exact = _data(theta, N=400)
    rec = exact.recordings[0]
    limit = np.quantile(np.abs(rec.output), 0.9, axis=0)
    with pytest.warns(dynid.DynidWarning, match="saturated output"):
        clipped = rec.with_signals(output=np.clip(rec.output, -limit, limit),
                                   output_limits=limit)
    assert clipped.saturated.any(axis=1).mean() > 0.2
    truth = BASE.to_base(theta)
    kept = OLS().fit(IdentificationData(ROBOT, clipped, base=BASE))
    np.testing.assert_allclose(kept.base_params_, truth, rtol=1e-6, atol=1e-9)
    used = OLS().fit(IdentificationData(ROBOT, clipped, base=BASE, drop_saturated=False))
    assert np.max(np.abs(used.base_params_ - truth) / np.abs(truth)) > 1e-2


def test_streamed_chunks_give_the_same_estimate():
    theta = ROBOT.prior * 1.05
    data = _data(theta, noise=np.eye(3) * 1e-2, N=400)
    rec = data.recordings[0]
    chunks = ((rec.positions[k:k + 64], rec.velocities[k:k + 64], rec.accelerations[k:k + 64],
               rec.output[k:k + 64]) for k in range(0, 400, 64))
    streamed = CompressedData.from_chunks(ROBOT, chunks, base=BASE)
    assert streamed.system().n_samples == 400
    np.testing.assert_allclose(WLS().fit(streamed).base_params_, WLS().fit(data).base_params_,
                               rtol=1e-9)


def test_fit_checks_its_input():
    exact_rec = _data(ROBOT.prior).recordings[0]
    with pytest.raises(dynid.DataError, match="expected IdentificationData"):
        OLS().fit(np.zeros(3))
    with pytest.raises(dynid.DataError,
                       match=r"output is joint_torque \(in N·m\), but the model of .* "
                                              r"predicts motor_torque"):
        t = np.arange(20) * 0.1
        IdentificationData(ROBOT, Recording(t, np.zeros((20, 3)), np.zeros((20, 3))))
    slider = random_robot(2, seed=1, prismatic=1.0)
    t = np.arange(20) * 0.1
    with pytest.raises(dynid.DataError, match=r"joint1 is in rad, but joint joint1 is "
                                              r"prismatic \(a length\) \(m\)"):
        IdentificationData(slider, Recording(t, np.zeros((20, 2)), np.zeros((20, 2))))
    with pytest.raises(dynid.DataError,
                       match=r"recording: 2 coordinates \(joint1, joint2\), but robot"):
        IdentificationData(ROBOT, Recording(t, np.zeros((20, 2)), np.zeros((20, 2)),
                                            output_kind="motor_torque"))
    other = base_parameters(random_robot(3, seed=3, friction=True, motors=True,
                                         output="motor_torque"))
    assert other.rank == BASE.rank
    system = _data(ROBOT.prior, noise=np.eye(3)).system()
    for make in (lambda: CompressedData(ROBOT, system, base=other),
                 lambda: IdentificationData(ROBOT, exact_rec, base=other)):
        with pytest.raises(dynid.DataError, match="base: computed for another parameter set"):
            make()
    with pytest.raises(dynid.DataError, match="system: expected 3 outputs and 28 base"):
        CompressedData(ROBOT, JointSystem(3, 27))
    data = _data(ROBOT.prior, noise=np.eye(3), N=120, processing=Processing(decimate=5))
    with pytest.raises(dynid.DataError, match=r"8 samples of 3 outputs for 28 base parameters"):
        OLS().fit(data)  # the 81-tap filter leaves 8 decimated samples


@pytest.mark.parametrize(("settings", "match"), [
    ({"mass_bounds": float("nan")}, r"mass_bounds: expected a fraction r in \[0, 1\)"),
    ({"mass_bounds": {"link1": (2.0, 1.0)}}, r"mass_bounds\['link1'\]: expected finite bounds"),
    ({"mass_bounds": {"link1": "heavy"}}, r"mass_bounds\['link1'\]: expected \(lower, upper\)"),
    ({"total_mass": (1.0, float("inf"))}, r"total_mass: expected finite bounds"),
    ({"weight": float("nan")}, r"weight: expected a finite value ≥ 0, found nan"),
    ({"com_margin": -0.1}, r"com_margin: expected a finite value ≥ 0"),
    ({"epsilon": 0.0}, r"epsilon: expected a finite value > 0"),
    ({"covariance": "sandwich"}, r"covariance: expected 'auto', 'regularized', 'bootstrap'"),
    ({"covariance": "bootstrap", "draws": 1}, r"draws: expected an integer between 2 and"),
])
def test_consistent_settings_are_checked(settings, match):
    with pytest.raises(dynid.DataError, match=match):
        PhysicallyConsistent(**settings).fit(_data(ROBOT.prior, noise=np.eye(3) * 1e-4))


def test_a_solver_that_stops_early_names_the_other_solver():
    est = PhysicallyConsistent(solver="SCS", max_iters=5)
    with pytest.raises(dynid.SolverError, match=r"SCS ended .* missed by up to .*; try "
                                                r"solver='CLARABEL'"):
        est.fit(_data(ROBOT.prior, noise=np.eye(3) * 1e-4))
