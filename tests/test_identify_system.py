"""The compressed systems against dense least squares with explicit weights."""

from __future__ import annotations

import numpy as np
import pytest

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


def test_unweighted_system_is_ordinary_least_squares(problem):
    Y, y, _ = problem
    system = _joint(Y, y).system()
    want = np.linalg.lstsq(Y.reshape(-1, Y.shape[2]), y.reshape(-1), rcond=None)[0]
    np.testing.assert_allclose(system.solve(), want, rtol=1e-10)
    assert system.n_rows == y.size


def test_weights_and_full_covariance_applied_afterwards(problem):
    Y, y, S = problem
    joint = _joint(Y, y)
    w = np.array([1.0, 3.0, 0.5])
    want = np.linalg.lstsq((Y * w[None, :, None]).reshape(-1, 6), (y * w).reshape(-1),
                           rcond=None)[0]
    np.testing.assert_allclose(joint.system(weights=w).solve(), want, rtol=1e-10)
    # Gauss–Markov, Abdellatif (9), with explicit sums: (Σ YᵀS⁻¹Y)⁻¹ Σ YᵀS⁻¹y.
    Si = np.linalg.inv(S)
    info = np.einsum("kip,ij,kjq->pq", Y, Si, Y)
    rhs = np.einsum("kip,ij,kj->p", Y, Si, y)
    gm = joint.system(covariance=S)
    np.testing.assert_allclose(gm.solve(), np.linalg.solve(info, rhs), rtol=1e-10)
    np.testing.assert_allclose(gm.inverse_information(), np.linalg.inv(info), rtol=1e-9)
    streamed = LinearSystem(6)
    for start in range(0, len(y), 50):
        streamed.add(Y[start:start + 50], y[start:start + 50], covariance=S)
    np.testing.assert_allclose(streamed.solve(), gm.solve(), rtol=1e-10)
    np.testing.assert_allclose(streamed.y_norm2, gm.y_norm2, rtol=1e-10)


def test_residual_covariance_of_any_estimate(problem):
    Y, y, _ = problem
    joint = _joint(Y, y)
    theta = np.random.default_rng(1).standard_normal(6)
    E = np.einsum("kip,p->ki", Y, theta) - y
    np.testing.assert_allclose(joint.residuals_gram(theta), E.T @ E, rtol=1e-10)
    np.testing.assert_allclose(joint.output_norms2(), (y**2).sum(axis=0), rtol=1e-10)
    dof = len(y) - 6 / 3
    np.testing.assert_allclose(joint.residual_covariance(theta), E.T @ E / dof, rtol=1e-10)


def test_bad_weights_and_shapes_are_reported(problem):
    Y, y, S = problem
    joint = _joint(Y, y)
    with pytest.raises(dynid.DataError, match=r"weights: expected 3 finite values > 0"):
        joint.system(weights=[1.0, -1.0, 1.0])
    with pytest.raises(dynid.DataError, match="covariance: the covariance is not positive"):
        joint.system(covariance=np.diag([1.0, 0.0, 1.0]))
    with pytest.raises(dynid.DataError, match="give weights or a covariance, not both"):
        joint.system(weights=np.ones(3), covariance=S)
    with pytest.raises(dynid.DataError, match=r"expected shapes \(m, 3, 6\) and \(m, 3\)"):
        joint.add(Y[:, :2], y[:, :2])
    with pytest.raises(dynid.DataError, match="expected finite values"):
        joint.add(Y[:2] * np.nan, y[:2])
    with pytest.raises(dynid.DataError, match="need rows grouped per sample"):
        LinearSystem(6).add(Y.reshape(-1, 6), y.reshape(-1), weights=np.ones(3))
