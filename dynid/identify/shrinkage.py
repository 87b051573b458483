"""The uncertainty of a regularized estimate: its variance and its bias towards the prior.

A regularized physically consistent estimate minimizes ``‖R b − z‖² + λ r(θ)`` with ``b = Bθ``
the base parameters, ``[R z]`` the compressed whitened data and ``r`` the regularization
(:mod:`dynid.identify.consistent`). It is pulled towards the prior, so its error has two parts,
and the weighted least-squares estimate ``b̂_u = R⁻¹ z`` splits it exactly::

    b̂ − b* = (b̂ − b̂_u) + (b̂_u − b*) = s + e_u,      Cov(e_u) = P_u (the sandwich)

The shift ``s`` is known: it is the bias the estimator has when the truth is ``b̂_u`` (for the
Euclidean regularization exactly, since the estimate depends on the data through ``b̂_u`` only
and linearly), the plug-in estimate of its bias. Linearized at the estimate (``H`` the
regularization's Hessian, ``F = RᵀR``), the estimate responds to the data through

    G = B (Bᵀ F B + ½ λ H)⁺ Bᵀ,    Cov(b̂) = G R_gᵀ R_g G

(the sandwich of the regularized normal equations, ``R_gᵀR_g`` the information the outputs'
residual covariance gives, :meth:`~dynid.identify.system.JointSystem.factors`), and the shift
varies from one noisy run to the next with ``Cov(s) = (G F − I) P_u (G F − I)ᵀ``. The reported
mean squared error is

    Cov(b̂) + s sᵀ + Cov(s).

Since ``E[s sᵀ] = β βᵀ + Cov(s)`` (``β`` the true bias), it exceeds the mean squared error by
``Cov(s)`` on average: without that term a shift that comes out near zero by chance while the
true bias does not gives σ far too small for that run (errors of 10–50 σ). Where the bias
dominates, the σ are the root mean squared error. Where the prior happens to be close to the
truth they overstate the error: the data cannot tell such a prior from one off by about the
unregularized σ, so along a direction the regularization holds firmly (``G F ≈ 0``) the σ²
are the unregularized σ² plus the squared shift, twice the unregularized σ² on average when
the prior is right. With constraints that restrict the base parameters, :func:`bootstrap_mse`
measures ``Cov(b̂)`` and ``Cov(s)`` over data drawn again.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..models import Robot
from .physical import PSEUDO, pseudo_inertia

__all__ = ["bootstrap_mse", "regularization_root", "regularized_mse", "response"]


def regularization_root(robot: Robot, theta: np.ndarray, kind: str, weight: float,
                        typical: np.ndarray) -> np.ndarray:
    """Rows ``S`` (k, p) with ``SᵀS = ½ λ T H T``: ``H`` the Hessian of the regularization
    ``kind`` at the standard parameters ``theta`` (p), ``λ`` its ``weight``, ``T`` the
    diagonal of the parameters' ``typical`` magnitudes (p).

    Euclidean, ``r = ‖(θ − π)/T‖²``: ``H = 2 T⁻²``, so ``S = √λ I``. Entropic,
    ``r = Σ_k −log det J_k + tr(J_π⁻¹ J_k) − 4``: the trace is linear, and the Hessian of
    ``−log det J`` is ``Pᵀ (J⁻¹ ⊗ J⁻¹) P`` (``vec J = P θ_k``, :data:`~dynid.identify.physical.
    PSEUDO`), whose root is ``(L⁻¹ ⊗ L⁻¹) P`` for ``J = L Lᵀ``; parameters outside the links
    get no row.
    """
    p = len(theta)
    if kind == "euclidean":
        return np.sqrt(weight) * np.eye(p)
    params = robot.parameters
    rows = [np.zeros((0, p))]
    for link in params.links:
        idx = params.link_block(link)
        Linv = scipy.linalg.solve_triangular(np.linalg.cholesky(pseudo_inertia(theta[idx])),
                                             np.eye(4), lower=True)
        block = np.zeros((16, p))
        block[:, idx] = np.kron(Linv, Linv) @ PSEUDO * typical[idx]
        rows.append(np.sqrt(weight / 2) * block)
    return np.vstack(rows)


def response(Rv: np.ndarray, B: np.ndarray, root: np.ndarray, typical: np.ndarray
             ) -> np.ndarray:
    """``G = B (Bᵀ F B + ½ λ H)⁺ Bᵀ`` (b, b), ``F = R_vᵀ R_v``, from the regularization's
    ``root`` rows (:func:`regularization_root`): the regularized estimate moves by ``G F δ``
    when the unregularized one moves by ``δ``.

    Computed by the singular value decomposition of the stacked, scaled rows
    ``[R_v B T; S]`` rather than by normal equations; directions that neither the data nor
    the regularization reach (singular values below 1e-10 of the largest) are left out.
    """
    scaled = B * typical
    _, s, Vt = np.linalg.svd(np.vstack([Rv @ scaled, root]), full_matrices=False)
    keep = s > 1e-10 * s[0]
    X = scaled @ Vt[keep].T / s[keep]
    return X @ X.T


def regularized_mse(G: np.ndarray, Rv: np.ndarray, Rg: np.ndarray, shift: np.ndarray
                    ) -> np.ndarray:
    """``Cov(b̂) + s sᵀ + Cov(s)`` (b, b) for the response ``G`` (:func:`response`), the
    factors ``R_v``, ``R_g`` of the unregularized sandwich and the ``shift`` ``s = b̂ − b̂_u``
    (see the module docstring)."""
    Z = scipy.linalg.solve_triangular(Rv, scipy.linalg.solve_triangular(Rv, Rg.T, trans="T"))
    K = G @ Rg.T                  # Cov(b̂) = K Kᵀ
    D = K - Z                     # (G F − I) P_u (G F − I)ᵀ = D Dᵀ, as P_u = Z Zᵀ
    return K @ K.T + D @ D.T + np.outer(shift, shift)


def bootstrap_mse(estimates: np.ndarray, unregularized: np.ndarray, shift: np.ndarray
                  ) -> np.ndarray:
    """``Cov(b̂) + s sᵀ + Cov(s)`` (b, b) measured on the regularized ``estimates`` (k, b) of
    data drawn again and the ``unregularized`` estimates (k, b) of the same data: the
    covariances are their spreads about their means."""
    spread = estimates - estimates.mean(axis=0)
    moved = estimates - unregularized
    moved = moved - moved.mean(axis=0)
    k = len(estimates)
    return (spread.T @ spread + moved.T @ moved) / (k - 1) + np.outer(shift, shift)
