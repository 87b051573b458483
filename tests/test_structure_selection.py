"""Model-structure selection by the condition number of the correlation matrix (Abdellatif
(10)–(11)), on the embedded hexapod."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import dynid
from dynid.identify import compare_structures, structure_uncertainty
from dynid.models import Regressor, base_parameters, random_states
from dynid.models.stewart import leg_friction

TABLE_I = {"alpha": ["coulomb"], "beta": ["coulomb"], "length": ["viscous", "coulomb"]}


@pytest.fixture(scope="module")
def hexapod() -> dynid.Robot:
    return dynid.load_robot("hexapod")


@pytest.fixture(scope="module")
def excitation(hexapod):
    return random_states(hexapod, 300, np.random.default_rng(0), margin=0.05)


def test_correlation_matches_a_dense_gauss_markov_covariance(hexapod, excitation):
    """ρ from the chunked information matrix against P = (Ψᵀ Σ⁻¹ Ψ)⁻¹ of the whole stacked,
    whitened regressor (scipy's Cholesky, a dense inverse)."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((6, 6))
    sigma = A @ A.T + 6 * np.eye(6)  # correlated noise across the legs
    u = structure_uncertainty(hexapod, *excitation, covariance=sigma)
    base = base_parameters(hexapod)
    Y = Regressor(hexapod)(*excitation)[:, :, base.independent]
    L = scipy.linalg.cholesky(sigma, lower=True)
    W = scipy.linalg.solve_triangular(L, Y.transpose(1, 0, 2).reshape(6, -1), lower=True)
    W = W.reshape(6, Y.shape[0], -1).transpose(1, 0, 2).reshape(-1, Y.shape[2])
    P = np.linalg.inv(W.T @ W)
    d = np.sqrt(np.diag(P))
    np.testing.assert_allclose(u.std, d, rtol=1e-6)
    np.testing.assert_allclose(u.correlation, P / np.outer(d, d), rtol=0, atol=1e-6)
    assert u.condition == pytest.approx(np.linalg.cond(P / np.outer(d, d)), rel=1e-4)
    # A scaled noise covariance changes σ, not ρ.
    scaled = structure_uncertainty(hexapod, *excitation, covariance=100 * sigma)
    np.testing.assert_allclose(scaled.std, 10 * u.std, rtol=1e-9)
    assert scaled.condition == pytest.approx(u.condition, rel=1e-9)


def test_compare_structures_ranks_an_indistinguishable_friction_model_last(hexapod,
                                                                         excitation):
    """A Coulomb term smoothed far beyond the motion's speeds (tanh(q̇/50) ≈ q̇/50) cannot be
    told from the viscous term of the same joint: cond(ρ) grows by orders of magnitude, with
    the same number of parameters."""
    sharp = hexapod.with_terms(leg_friction(hexapod.closure, TABLE_I, shared=["alpha", "beta"]))
    smooth = hexapod.with_terms(leg_friction(hexapod.closure, TABLE_I, shared=["alpha", "beta"],
                                             smoothing=50.0))
    rows = compare_structures({"smoothed": smooth, "Table I": sharp}, *excitation)
    assert [r[0] for r in rows] == ["Table I", "smoothed"]
    assert rows[0][1] == rows[1][1] == 102
    assert rows[1][2] > 100 * rows[0][2]


def test_structure_selection_bad_input(hexapod, excitation):
    with pytest.raises(dynid.DataError, match=r"covariance: expected a finite symmetric "
                                              r"\(6, 6\) covariance, found shape \(5, 5\)"):
        structure_uncertainty(hexapod, *excitation, covariance=np.eye(5))
    with pytest.raises(dynid.DataError, match="at least one candidate"):
        compare_structures({}, *excitation)
    q, v, a = excitation
    with pytest.raises(dynid.DataError, match=r"q: expected an array of shape \(N, 6\)"):
        structure_uncertainty(hexapod, q[:, :5], v, a)
