"""The compressed systems against dense least squares."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import dynid
from dynid.identify import JointSystem, LinearSystem


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    m, n, p = 400, 3, 6
    Y = rng.standard_normal((m, n, p))
    y = rng.standard_normal((m, n))
    C = np.array([[1.0, 0, 0], [0.5, 0.7, 0], [-0.2, 0.3, 0.4]])
    return Y, y, C @ C.T


def _joint(Y, y, step=37):
    system = JointSystem(Y.shape[1], Y.shape[2])
    for start in range(0, len(y), step):
        system.add(Y[start:start + step], y[start:start + step])
    return system


def test_compressed_system_matches_dense_least_squares():
    """A system from the triangular factor of [W y] solves, gives residuals and the inverse
    information as the dense rows do, whether the factor comes from one QR or from rows
    compressed chunk by chunk (a single output)."""
    rng = np.random.default_rng(0)
    W, y = rng.standard_normal((500, 8)), rng.standard_normal(500)
    theta, res, *_ = np.linalg.lstsq(W, y, rcond=None)
    joint = _joint(W[:, None, :], y[:, None])
    direct = LinearSystem(scipy.linalg.qr(np.column_stack([W, y]), mode="r")[0], 500)
    for system in (direct, joint.system()):
        assert system.n_rows == 500 and system.n_params == 8
        np.testing.assert_allclose(system.solve(), theta, rtol=1e-10)
        np.testing.assert_allclose(system.residual_norm2(theta), res[0], rtol=1e-10)
        np.testing.assert_allclose(system.residual_norm2(np.zeros(8)), y @ y, rtol=1e-10)
        np.testing.assert_allclose(system.inverse_information(), np.linalg.inv(W.T @ W),
                                   rtol=1e-9)
        np.testing.assert_allclose(system.R.T @ system.R, W.T @ W, rtol=1e-10, atol=1e-10)
    with pytest.raises(dynid.SolverError, match="3 rows for 8 unknowns"):
        LinearSystem(scipy.linalg.qr(np.column_stack([W[:3], y[:3]]), mode="r")[0], 3).solve()


def test_unweighted_system_is_ordinary_least_squares(problem):
    Y, y, _ = problem
    system = _joint(Y, y).system()
    want = np.linalg.lstsq(Y.reshape(-1, Y.shape[2]), y.reshape(-1), rcond=None)[0]
    np.testing.assert_allclose(system.solve(), want, rtol=1e-10)
    assert system.n_rows == y.size


def test_output_covariance_applied_afterwards(problem):
    Y, y, S = problem
    joint = _joint(Y, y)
    # A diagonal covariance weighs each output by 1 / σ.
    w = np.array([1.0, 3.0, 0.5])
    want = np.linalg.lstsq((Y * w[None, :, None]).reshape(-1, 6), (y * w).reshape(-1),
                           rcond=None)[0]
    np.testing.assert_allclose(joint.system(covariance=np.diag(1 / w**2)).solve(), want,
                               rtol=1e-10)
    # Gauss–Markov, Abdellatif (9), with explicit sums: (Σ YᵀS⁻¹Y)⁻¹ Σ YᵀS⁻¹y.
    Si = np.linalg.inv(S)
    info = np.einsum("kip,ij,kjq->pq", Y, Si, Y)
    rhs = np.einsum("kip,ij,kj->p", Y, Si, y)
    gm = joint.system(covariance=S)
    theta = gm.solve()
    np.testing.assert_allclose(theta, np.linalg.solve(info, rhs), rtol=1e-10)
    np.testing.assert_allclose(gm.inverse_information(), np.linalg.inv(info), rtol=1e-9)
    E = np.einsum("kip,p->ki", Y, theta) - y
    np.testing.assert_allclose(gm.residual_norm2(theta), np.einsum("ki,ij,kj->", E, Si, E),
                               rtol=1e-10)


def test_residual_covariance_of_any_estimate(problem):
    Y, y, _ = problem
    joint = _joint(Y, y)
    theta = np.random.default_rng(1).standard_normal(6)
    E = np.einsum("kip,p->ki", Y, theta) - y
    np.testing.assert_allclose(joint.residuals_gram(theta), E.T @ E, rtol=1e-10)
    dof = len(y) - 6 / 3
    np.testing.assert_allclose(joint.residual_covariance(theta), E.T @ E / dof, rtol=1e-10)


def test_bad_covariances_and_shapes_are_reported(problem):
    Y, y, _ = problem
    joint = _joint(Y, y)
    with pytest.raises(dynid.DataError, match="covariance: the covariance is not positive"):
        joint.system(covariance=np.diag([1.0, 0.0, 1.0]))
    with pytest.raises(dynid.DataError, match=r"covariance: expected a finite symmetric"):
        joint.system(covariance=np.eye(2))
    with pytest.raises(dynid.DataError, match=r"expected shapes \(m, 3, 6\) and \(m, 3\)"):
        joint.add(Y[:, :2], y[:, :2])
    with pytest.raises(dynid.DataError, match="expected finite values"):
        joint.add(Y[:2] * np.nan, y[:2])


def test_sandwich_covariance_matches_dense_normal_equations(problem):
    """``JointSystem.covariance`` (triangular factors) equals ``A⁻¹ G A⁻¹`` formed from the
    dense rows, ``A = Σ W_kᵀ V⁻¹ W_k``, ``G = Σ W_kᵀ V⁻¹ Σ V⁻¹ W_k``; restricted to a subspace
    ``U`` it is ``U (UᵀAU)⁻¹ UᵀGU (UᵀAU)⁻¹ Uᵀ``; with ``V = Σ`` it is the Gauss–Markov
    inverse information."""
    Y, y, S = problem
    system = _joint(Y, y)
    V = np.diag([0.5, 2.0, 1.0])
    Vi = np.linalg.inv(V)
    A = np.einsum("kip,ij,kjq->pq", Y, Vi, Y)
    G = np.einsum("kip,ij,kjq->pq", Y, Vi @ S @ Vi, Y)
    dense = np.linalg.solve(A, np.linalg.solve(A, G).T)
    np.testing.assert_allclose(system.covariance(V, S), dense, rtol=1e-9, atol=1e-14)
    U = np.linalg.qr(np.random.default_rng(1).standard_normal((Y.shape[2], 4)))[0]
    Au, Gu = U.T @ A @ U, U.T @ G @ U
    restricted = U @ np.linalg.solve(Au, np.linalg.solve(Au, Gu).T) @ U.T
    np.testing.assert_allclose(system.covariance(V, S, U), restricted, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(system.covariance(S, S),
                               system.system(covariance=S).inverse_information(), rtol=1e-9)


def test_rank_deficiency_names_the_undetermined_columns():
    """Two proportional columns (in different units) cannot both be determined: the error
    names them."""
    rng = np.random.default_rng(2)
    W = rng.standard_normal((200, 1, 4))
    W[..., 3] = 1e-4 * W[..., 1]
    system = JointSystem(1, 4)
    system.add(W, rng.standard_normal((200, 1)))
    with pytest.raises(dynid.SolverError, match="do not determine every unknown") as info:
        system.system().solve()
    assert set(info.value.columns[:2]) == {1, 3}
