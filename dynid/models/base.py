"""Base parameters: the identifiable linear combinations of the standard parameters.

Following Gautier's numerical method, the regressor is stacked at random states, the columns are
scaled to unit norm, and a QR decomposition with column pivoting gives the numerical rank ``b``:
the number of diagonal entries of ``R`` above ``tolerance`` (relative to the largest). The
independent columns are then chosen in a preferred order (links from the base outwards, inertia
before first moments before mass; links before friction before actuators), each one kept when
it is not a combination of those already kept, so the groupings read like the classical closed
forms (``ZZ1R = ZZ1 + Ia1``). With ``θ_1`` the independent and ``θ_2`` the dependent parameters::

    Y θ = Y_1 θ_1 + Y_2 θ_2 = Y_1 (θ_1 + K_d θ_2) = Y_b θ_b,   θ_b = θ_1 + K_d θ_2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .. import _validate
from .._blas import single_threaded
from ..errors import ModelError
from .parameters import GROUPS, ParameterSet
from .regressor import Regressor
from .robot import Robot

__all__ = ["BaseParameters", "base_parameters", "independent_columns", "random_states"]

# Within a link, which parameters are kept as representatives first.
_LINK_PREFERENCE = ("Izz", "Ixx", "Ixy", "Ixz", "Iyz", "mcx", "mcy", "mcz", "Iyy", "m")


@dataclass(frozen=True)
class BaseParameters:
    """The base parameters of a model and the maps to and from the standard parameters.

    Attributes
    ----------
    parameters
        The standard parameter set (p parameters).
    independent, dependent
        Indices of the independent (b) and dependent (p − b) standard parameters; together,
        in this order, they are the column permutation.
    grouping
        ``K_d`` (b, p − b): ``θ_b = θ[independent] + K_d θ[dependent]``.
    tolerance
        Relative threshold on the unit-norm columns' ``|R_ii|`` used for the rank.
    names
        Readable expression of each base parameter, e.g. ``link2.Izz + 0.09·link3.m``.
    """

    parameters: ParameterSet
    independent: np.ndarray
    dependent: np.ndarray
    grouping: np.ndarray
    tolerance: float
    names: tuple[str, ...]

    @property
    def rank(self) -> int:
        """Number of base parameters."""
        return len(self.independent)

    @property
    def permutation(self) -> np.ndarray:
        return np.concatenate([self.independent, self.dependent])

    @property
    def matrix(self) -> np.ndarray:
        """``B`` (b, p) with ``θ_b = B θ``."""
        B = np.zeros((self.rank, len(self.parameters)))
        B[np.arange(self.rank), self.independent] = 1.0
        B[:, self.dependent] = self.grouping
        return B

    def to_base(self, theta: np.ndarray) -> np.ndarray:
        """Base parameters ``θ_b`` (b,) of standard parameters ``θ`` (p,)."""
        theta = _validate.vector(theta, "theta", len(self.parameters))
        return theta[self.independent] + self.grouping @ theta[self.dependent]

    def from_base(self, theta_b: np.ndarray, prior: np.ndarray | None = None) -> np.ndarray:
        """The standard parameters closest to ``prior`` (default: the priors) with base ``θ_b``.

        The correction is the minimum-norm one, ``θ = π + B⁺ (θ_b − B π)``.
        """
        theta_b = _validate.vector(theta_b, "theta_b", self.rank)
        prior = self.parameters.priors if prior is None else _validate.vector(
            prior, "prior", len(self.parameters))
        B = self.matrix
        return prior + np.linalg.lstsq(B, theta_b - B @ prior, rcond=None)[0]

    def regressor(self, Y: np.ndarray) -> np.ndarray:
        """Base regressor ``Y_b`` from a standard regressor ``Y`` (..., p)."""
        if Y.shape[-1] != len(self.parameters):
            raise ModelError(f"regressor: expected {len(self.parameters)} columns, found "
                             f"{Y.shape[-1]}")
        return Y[..., self.independent]

    def __repr__(self) -> str:
        return f"BaseParameters({self.rank} of {len(self.parameters)})"


def random_states(robot: Robot, n_samples: int, rng: np.random.Generator, *,
                  margin: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random positions within the limits (±π where unbounded), velocities and accelerations.

    ``margin`` is the fraction of each position range left out at both ends."""
    lim = robot.limits
    lo = np.where(np.isfinite(lim.lower), lim.lower, -np.pi)
    hi = np.where(np.isfinite(lim.upper), lim.upper, np.pi)
    inset = margin * (hi - lo)
    q = rng.uniform(lo + inset, hi - inset, size=(n_samples, robot.n))
    v = rng.standard_normal((n_samples, robot.n))
    a = rng.standard_normal((n_samples, robot.n))
    return q, v, a


def _preference(params: ParameterSet) -> np.ndarray:
    group_rank = {g: i for i, g in enumerate(GROUPS)}
    owners: dict[str, int] = {}
    for p in params:
        owners.setdefault(p.owner, len(owners))
    kind_rank = {k: i for i, k in enumerate(_LINK_PREFERENCE)}
    keys = [(group_rank[p.group], owners[p.owner], kind_rank.get(p.kind, 0), i)
            for i, p in enumerate(params)]
    return np.array([k[-1] for k in sorted(keys)])


@single_threaded
def base_parameters(robot: Robot | Regressor, *, n_samples: int | None = None,
                    tolerance: float = 1e-8, seed: int = 0) -> BaseParameters:
    """Base parameters of a robot, from its regressor at random states.

    Parameters
    ----------
    robot
        The robot (or a regressor of it).
    n_samples
        Number of random states (default: enough for four rows per parameter).
    tolerance
        Rank threshold on ``|R_ii| / |R_00|`` of the unit-norm columns.
    seed
        Seed of the random states; the result does not depend on it for a well-chosen tolerance.
    """
    reg = robot if isinstance(robot, Regressor) else Regressor(robot)
    robot = reg.robot
    params = robot.parameters
    p = len(params)
    n_samples = n_samples or max(50, int(np.ceil(4 * p / robot.n)))
    W = reg(*random_states(robot, n_samples, np.random.default_rng(seed))).reshape(-1, p)
    norms = np.linalg.norm(W, axis=0)
    live = norms > 1e-12 * norms.max()
    Ws = np.zeros_like(W)
    Ws[:, live] = W[:, live] / norms[live]
    R = scipy.linalg.qr(Ws, mode="r", pivoting=True)[0]
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > tolerance * diag[0]))

    kept = independent_columns(Ws, [i for i in _preference(params) if live[i]], tolerance)
    if len(kept) != rank:
        raise ModelError(f"base parameters: the pivoted QR finds rank {rank} but the ordered "
                         f"selection finds {len(kept)}; the regressor is ill-conditioned at "
                         f"tolerance {tolerance:g}; try another tolerance or n_samples")
    independent = np.array(sorted(kept), dtype=int)
    dependent = np.setdiff1d(np.arange(p), independent)
    W[:, ~live] = 0.0
    K = np.linalg.lstsq(W[:, independent], W[:, dependent], rcond=None)[0]
    scale = np.where(live[dependent], norms[dependent], 1.0)
    residual = np.linalg.norm(W[:, independent] @ K - W[:, dependent], axis=0) / scale
    if np.any(residual > np.sqrt(tolerance)):
        worst = params[dependent[np.argmax(residual)]]
        raise ModelError(f"base parameters: {worst.name} is neither independent nor a "
                         f"combination of the base columns at tolerance {tolerance:g}; try "
                         "another tolerance or more samples")
    # Drop numerical noise: a term whose share of the dependent column is below 1e-8.
    share = np.abs(K) * norms[independent][:, None] / np.where(scale > 0, scale, 1.0)[None, :]
    K[share < 1e-8] = 0.0
    names = tuple(_group_name(params, i, dependent, K[row])
                  for row, i in enumerate(independent))
    return BaseParameters(params, independent, dependent, K, tolerance, names)


def independent_columns(W: np.ndarray, order, threshold: float) -> list[int]:
    """Greedy choice of columns of ``W`` (unit-norm) in ``order``: a column is kept when its
    part orthogonal to the columns kept before it has a norm above ``threshold``."""
    kept: list[int] = []
    Q = np.zeros((W.shape[0], 0))
    for i in order:
        r = W[:, i] - Q @ (Q.T @ W[:, i])
        r -= Q @ (Q.T @ r)  # second pass of Gram-Schmidt for orthogonality
        if np.linalg.norm(r) > threshold:
            kept.append(i)
            Q = np.column_stack([Q, r / np.linalg.norm(r)])
    return kept


def _digits(x: float) -> int:
    """Significant digits of ``x`` written to 12 digits."""
    mantissa = f"{abs(x):.11e}".split("e")[0].replace(".", "").rstrip("0")
    return len(mantissa)


def _coefficient(c: float) -> str:
    """Short form of a grouping coefficient: ``0.316²`` for 0.099856, else ``%.6g``.

    The square form is used when it is exact and shorter (at least 3 digits become fewer),
    which is how squared lengths from the geometry show up."""
    a = abs(c)
    s = float(f"{np.sqrt(a):.4g}")
    if a < 1 and abs(s * s - a) <= 1e-9 * a and _digits(s) < _digits(a) and _digits(a) >= 3:
        return f"{s:g}²"
    return f"{a:.6g}"


def _group_name(params: ParameterSet, i: int, dependent: np.ndarray, coefs: np.ndarray) -> str:
    text = params[i].name
    for j, c in zip(dependent, coefs, strict=True):
        if c == 0:
            continue
        sign = "-" if c < 0 else "+"
        if abs(abs(c) - 1) < 1e-9:
            text += f" {sign} {params[j].name}"
        else:
            text += f" {sign} {_coefficient(c)}·{params[j].name}"
    return text
