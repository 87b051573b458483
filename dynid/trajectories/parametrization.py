"""Optimizer variables of a Fourier design and their map to the trajectory coefficients.

Each free coordinate ``j`` has an offset variable and one variable per coefficient ``μ_jk``,
``ν_jk``, scaled so that every variable is of order one:

* the offset is ``x0_j = c_j + h_j z``, with ``[c_j − h_j, c_j + h_j]`` the positions every
  limit allows (joint limits intersected with the mapped actuator limits); ``|z| ≤ 1`` is exact,
  since the offset is the mean position;
* ``μ_jk = s_jk z`` with ``s_jk = min(q̇_max, kω h_j, q̈_max/(kω))``, the largest velocity
  amplitude harmonic k can have alone. The bounds ``|μ_jk| ≤ 2 q̇_max``, ``≤ 4kω h_j``,
  ``≤ 2 q̈_max/(kω)`` are necessary for any feasible trajectory (a Fourier coefficient is at most
  twice the largest value of its signal), so they never cut off a feasible one.

With the ``rest`` boundary (Swevers), ``ẋ(0) = Σ_k μ_k = 0`` and ``ẍ(0) = ω Σ_k k ν_k = 0``:
the scaled amplitudes of each coordinate are written in an orthonormal basis of the null space
of these two conditions (``n_h − 1`` variables for the μ and as many for the ν), so every variable
vector satisfies them exactly and the variables stay as well scaled as without them (eliminating
μ_1 and ν_1 instead would make them strongly coupled). Fixed coordinates keep their offset and no
harmonic. The whole map is affine: ``vec(C) = c + P x``.
"""

from __future__ import annotations

import numpy as np

from ..errors import TrajectoryError

__all__ = ["Parametrization"]


class Parametrization:
    """Affine map from optimizer variables x to coefficients C (n, 1 + 2 n_h).

    Parameters
    ----------
    harmonics, omega
        Number of harmonics and fundamental pulsation (rad/s).
    center, half
        Middle and half-width of the allowed offsets per coordinate (n,), design units;
        ``half`` may be inf (unbounded).
    velocity, acceleration
        Velocity and acceleration limits per coordinate (n,), design units, inf if none.
    free
        Which coordinates move (n,) bool; the others stay at ``center``.
    rest
        Impose zero velocity and acceleration at t = 0 (and so at every period's end).
    """

    def __init__(self, harmonics: int, omega: float, center: np.ndarray, half: np.ndarray,
                 velocity: np.ndarray, acceleration: np.ndarray, free: np.ndarray,
                 rest: bool = False):
        n = len(center)
        nh, nc = harmonics, 1 + 2 * harmonics
        if rest and nh < 2:
            raise TrajectoryError("boundary 'rest': starting and ending at rest takes two "
                                  "harmonics or more; raise harmonics or use boundary 'ramp'")
        self.n, self.harmonics, self.omega, self.rest = n, nh, omega, rest
        self.free = np.asarray(free, bool)
        k = np.arange(1, nh + 1) * omega
        with np.errstate(divide="ignore", invalid="ignore"):
            cand = np.stack([np.broadcast_to(velocity[:, None], (n, nh)),
                             k * half[:, None], acceleration[:, None] / k])
            need = np.stack([2 * np.broadcast_to(velocity[:, None], (n, nh)),
                             4 * k * half[:, None], 2 * acceleration[:, None] / k])
        scale = np.min(cand, axis=0)                      # (n, nh)
        bound = np.min(need, axis=0) / np.where(np.isfinite(scale), scale, 1.0)
        for j in np.flatnonzero(self.free):
            if not np.isfinite(scale[j, 0]):
                raise TrajectoryError(
                    f"coordinate {j + 1}: no finite position, velocity or acceleration limit "
                    "bounds its motion, so the design has no scale; give limits in the robot "
                    "file or fix the coordinate")
        self.center = np.where(np.isfinite(center), center, 0.0)
        offset_scale = np.where(np.isfinite(half), half, 1.0)
        #: Variables per free coordinate: its offset, then its μ and ν variables.
        self.per = per = 1 + 2 * (nh - 1 if rest else nh)
        self.size = int(self.free.sum()) * per
        P = np.zeros((n, nc, self.size))
        lower, upper = np.full(self.size, -np.inf), np.full(self.size, np.inf)
        self._weights = []
        col = 0
        for j in np.flatnonzero(self.free):
            P[j, 0, col] = offset_scale[j]
            if np.isfinite(half[j]):
                lower[col], upper[col] = -1.0, 1.0
            col += 1
            for part in (0, 1):                           # μ then ν
                rows = slice(1 + part * nh, 1 + (part + 1) * nh)
                if rest:
                    # Null space of Σ_k s_k z_k = 0 (μ) or Σ_k k s_k z_k = 0 (ν).
                    a = scale[j] * (1.0 if part == 0 else np.arange(1, nh + 1))
                    basis = np.linalg.svd(a[None, :])[2][1:].T     # (nh, nh − 1), orthonormal
                    width = nh - 1
                    P[j, rows, col:col + width] = scale[j][:, None] * basis
                    lower[col:col + width] = -np.linalg.norm(bound[j])
                    upper[col:col + width] = np.linalg.norm(bound[j])
                    self._weights.append(basis)
                else:
                    width = nh
                    P[j, rows, col:col + width] = np.diag(scale[j])
                    lower[col:col + width], upper[col:col + width] = -bound[j], bound[j]
                    self._weights.append(np.eye(nh))
                col += width
        self.matrix = P.reshape(n * nc, self.size)
        self.offset = np.zeros((n, nc))
        self.offset[:, 0] = self.center
        self.lower, self.upper = lower, upper
        #: Scale of the offset variables (n,) and of the amplitude variables (n, n_h).
        self.offset_scale, self.amplitude_scale = offset_scale, scale

    def coefficients(self, x: np.ndarray) -> np.ndarray:
        """Coefficients (n, 1 + 2 n_h) of variables x."""
        return self.offset + (self.matrix @ x).reshape(self.offset.shape)

    def pullback(self, grad_coefficients: np.ndarray) -> np.ndarray:
        """Gradient with respect to x of a function whose gradient with respect to the
        coefficients is ``grad_coefficients`` (n, 1 + 2 n_h) (or (m, n, 1 + 2 n_h))."""
        g = np.asarray(grad_coefficients)
        return g.reshape(*g.shape[:-2], -1) @ self.matrix

    def at_rest(self, x: np.ndarray) -> np.ndarray:
        """The variables of x with every harmonic set to zero: the constant trajectory at its
        offsets."""
        out = np.zeros_like(x)
        out[::self.per] = x[::self.per]
        return out

    def scaled(self, x: np.ndarray, factor: float) -> np.ndarray:
        """The variables of x with every harmonic scaled by ``factor``: the oscillation of
        each coordinate scaled about its offset (see :meth:`FourierTrajectory.scaled`)."""
        still = self.at_rest(x)
        return still + factor * (x - still)

    def random(self, rng: np.random.Generator, offset_spread: float = 0.5) -> np.ndarray:
        """Random variables: offsets uniform within ``offset_spread`` of the allowed range,
        scaled amplitudes of harmonic k normal with standard deviation 1/k (projected on the
        rest conditions when they apply)."""
        x = np.empty(self.size)
        k = np.arange(1, self.harmonics + 1)
        for i, start in enumerate(range(0, self.size, self.per)):
            x[start] = rng.uniform(-offset_spread, offset_spread)
            col = start + 1
            for basis in self._weights[2 * i:2 * i + 2]:
                z = rng.standard_normal(self.harmonics) / k
                y = basis.T @ z
                x[col:col + len(y)] = y
                col += len(y)
        return x
