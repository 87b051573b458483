"""How the base regressor moves with the basis states: the gradient of a design criterion.

A criterion ``f(W)`` of the base regressor at N samples has the gradient ``G = ∂f/∂W`` (N, n, b).
Each sample's block ``W_k`` depends only on that sample's state ``(q_k, q̇_k, q̈_k)``, so the
gradient with respect to the states is, per sample and coordinate,
``s_kj = ⟨G_k, ∂W_k/∂x_kj⟩`` for x in q, q̇, q̈: 3n scalars per sample, which the Fourier basis
then turns into the gradient with respect to the coefficients.

Pinocchio gives the regressor but not its derivatives, so ``∂W_k/∂x_kj`` comes from extra
regressor evaluations, chosen to be exact wherever the structure allows:

* q̈: the regressor is affine in the accelerations (links: ``Y_a(q) q̈``; rotor inertia and
  translating screw masses: ``J q̈_m`` with ``q̈_m`` affine in q̈), so
  ``W(q, q̇, q̈ + e_j) − W(q, q̇, q̈)`` is the exact derivative: n evaluations;
* q̇: the rigid-body part is quadratic in q̇ and viscous friction is linear, so the central
  difference ``(W(q̇ + h e_j) − W(q̇ − h e_j)) / 2h`` has no truncation error for any h; Coulomb
  friction ``sgn q̇`` has zero derivative away from q̇ = 0, and a step across zero would add a jump
  ``/h``. The step is therefore ``h = min(1e-5, 1e-3 |q̇_kj|)`` per sample, which never crosses
  zero on the coordinate itself; where a coupling or a closure could still make another velocity
  cross, the two one-sided differences then disagree far beyond what a quadratic gives, and the
  one without the jump (the smaller) is kept. Smoothed signs (``tanh``) see an O(h²) error.
  2n evaluations;
* q: central differences, O(h²) with h = 1e-5 (rad or m): 2n evaluations.

So one gradient costs ``1 + 5n`` regressor evaluations per sample, done in one batched call
through :meth:`Regressor.chunks`, whose blocks are reduced to the 3n scalars as they come (memory
does not grow with the number of perturbations). The criterion's gradient with respect to the
trajectory coefficients is tested against finite differences of the criterion itself.
"""

from __future__ import annotations

import numpy as np

from ..models import Regressor

__all__ = ["base_regressor", "regressor_vjp"]

STEP_Q = 1e-5   # rad or m
STEP_V = 1e-5   # rad/s or m/s


def base_regressor(regressor: Regressor, columns: np.ndarray, q: np.ndarray, v: np.ndarray,
                   a: np.ndarray, whitener: np.ndarray | None = None) -> np.ndarray:
    """Base regressor (N, n, b) at basis states (N, n): the ``columns`` of the regressor,
    rows whitened by ``whitener`` (n, n) when given."""
    N, n = q.shape
    out = np.empty((N, n, len(columns)))
    for sl, Y in regressor.chunks(q, v, a):
        out[sl] = Y[:, :, columns]
    if whitener is not None:
        out = np.matmul(whitener, out)
    return out


def regressor_vjp(regressor: Regressor, columns: np.ndarray, q: np.ndarray, v: np.ndarray,
                  a: np.ndarray, G: np.ndarray, whitener: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(s_q, s_v, s_a)``, each (N, n): ``s_x[k, j] = ⟨G_k, ∂W_k/∂x_kj⟩``.

    Parameters
    ----------
    regressor, columns
        The robot's regressor and the indices of the base columns.
    q, v, a
        Basis states (N, n), SI.
    G
        ``∂f/∂W`` (N, n, b) of a criterion at ``W = base_regressor(...)``.
    whitener
        Row whitening ``L⁻¹`` (n, n) used to build ``W``, if any.
    """
    N, n = q.shape
    if whitener is not None:
        G = np.matmul(whitener.T, G)     # ⟨G, L⁻¹ dY⟩ = ⟨L⁻ᵀ G, dY⟩
    # Perturbed states, in blocks of N samples: base, q̈ + e_j, q̇ ± h e_j, q ± h e_j.
    P = 1 + 5 * n
    hv = np.clip(1e-3 * np.abs(v), 1e-10, STEP_V)               # (N, n)
    states = [np.repeat(x[None], P, axis=0) for x in (q, v, a)]
    for j in range(n):
        states[2][1 + j, :, j] += 1.0
        states[1][1 + n + 2 * j, :, j] += hv[:, j]
        states[1][2 + n + 2 * j, :, j] -= hv[:, j]
        states[0][1 + 3 * n + 2 * j, :, j] += STEP_Q
        states[0][2 + 3 * n + 2 * j, :, j] -= STEP_Q
    qq, vv, aa = (x.reshape(P * N, n) for x in states)
    # G on every column (zero on the dependent ones), repeated for each block, flattened so
    # that each chunk reduces with one row-wise dot product.
    p = regressor.shape[1]
    Gfull = np.zeros((N, n * p))
    Gfull.reshape(N, n, p)[:, :, columns] = G
    inner = np.empty(P * N)
    for sl, Y in regressor.chunks(qq, vv, aa):
        idx = np.arange(sl.start, sl.stop) % N
        inner[sl] = np.einsum("ki,ki->k", Y.reshape(len(idx), -1), Gfull[idx])
    inner = inner.reshape(P, N)
    base = inner[0]
    s_a = (inner[1:1 + n] - base).T
    s_v = _central(inner[1 + n:1 + 3 * n:2], base, inner[2 + n:1 + 3 * n:2], hv.T)
    s_q = ((inner[1 + 3 * n::2] - inner[2 + 3 * n::2]) / (2 * STEP_Q)).T
    return s_q, s_v, s_a


def _central(plus: np.ndarray, base: np.ndarray, minus: np.ndarray, h: np.ndarray
             ) -> np.ndarray:
    """Central differences (n, N) with steps h (n, N) → (N, n), falling back to the one-sided
    difference without a jump where the two sides disagree far beyond what the steps allow for
    a quadratic (≈ h/|q̇| ≤ 1e-3 relative): a Coulomb sign flip."""
    fwd = (plus - base) / h
    bwd = (base - minus) / h
    central = (fwd + bwd) / 2
    size = np.abs(base) + np.abs(plus) + np.abs(minus)
    jump = np.abs(fwd - bwd) > 0.1 * (np.abs(fwd) + np.abs(bwd)) + 1e-6 * size / h
    central[jump] = np.where(np.abs(fwd) < np.abs(bwd), fwd, bwd)[jump]
    return central.T
