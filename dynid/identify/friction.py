"""Friction velocities by variable projection: Stribeck and sigmoid friction identified with
the linear parameters eliminated.

A model with :class:`~dynid.models.friction.StribeckFriction` or :class:`~dynid.models.
friction.SigmoidCoulomb` terms is linear in every parameter but their velocities ``v``. For
fixed ``v`` the linear parameters are the least-squares solution of the compressed system, and
the residual left, ``r(v) = −P⊥(v) y`` (``P⊥`` the projector off the regressor's columns), is a
function of the few velocities alone. :func:`identify_friction` minimizes ``‖r‖²`` over
``x = log v`` within bounds with :func:`scipy.optimize.least_squares` (trust-region
reflective), each trial building the compressed system anew from the processed recordings.

Its Jacobian is Kaufman's approximation of Golub and Pereyra's, ``∂r/∂x ≈ P⊥ D`` with ``D``
the columns :class:`~dynid.models.friction.FrictionSlope` gives (the derivative of each
friction force with respect to ``log v``) times their amplitudes. Both come from one
triangular factor: the system is built with the slope columns appended, and the factor of
``[W D y]`` reordered so that ``W`` comes first holds ``P⊥ D`` and ``P⊥ y`` in its trailing rows
(in an orthonormal basis of their span, which leaves every quantity of the trust-region
method unchanged). No matrix of samples × parameters is formed.

At the solution the same augmented system is the Gauss–Newton linearization of the model in
``(θ, log v)``: its weighted fit gives the step left (≈ 0 at convergence) and, by the sandwich
of :class:`~dynid.identify.estimators.WLS`, the covariance of ``log v``, so
``σ_v = v σ_log v`` (first order). The linear part is then fitted by the estimator chosen
(OLS, WLS, physically consistent...) at the estimated velocities, keeping its constraints; its
covariance is conditional on the velocities.

The search weights each output by its noise level, taken from the residual of a first
ordinary fit at the starting velocities. The starting velocity is the best of a few trials
spread over the bounds (the same for every coordinate) unless given.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from ..errors import DataError, DynidWarning, ModelError, SolverError
from ..models import Robot, base_parameters
from ..models.friction import FrictionSlope, friction_models, nonlinear_terms
from .data import IdentificationData
from .estimators import WLS, Estimator, first_pass_covariance, weighted_fit
from .system import RankDeficient

__all__ = ["FrictionFit", "identify_friction"]

#: Default bounds of the friction velocities (rad/s or m/s).
BOUNDS = (1e-3, 1.0)


@dataclass(frozen=True)
class FrictionFit:
    """Friction velocities found by :func:`identify_friction`, and the fit at them.

    Attributes
    ----------
    robot
        The robot with its friction terms at the estimated velocities.
    estimator
        The estimator fitted at those velocities (its ``result_`` holds the linear part, and
        this fit in ``result_.solver["friction"]``).
    velocities, sigma
        ``owner → velocity`` and its standard deviation (rad/s or m/s).
    models
        ``owner → model`` of every coordinate with Coulomb-like friction.
    bounds
        ``owner → (lower, upper)`` of the search.
    converged, evaluations, step
        Whether the search converged, the systems it built, and the Gauss–Newton step of
        ``log v`` left at the solution (≈ 0 when converged).
    """

    robot: Robot
    estimator: Estimator
    velocities: dict[str, float]
    sigma: dict[str, float]
    models: dict[str, str]
    bounds: dict[str, tuple[float, float]]
    converged: bool
    evaluations: int
    step: dict[str, float]

    @property
    def result(self):
        """The estimator's :class:`~dynid.identify.result.IdentificationResult`."""
        return self.estimator.result_

    def to_json(self) -> dict:
        """The settings and the velocities, as stored in a result's ``solver["friction"]``."""
        return {"models": dict(self.models),
                "velocities": {k: float(v) for k, v in self.velocities.items()},
                "sigma": {k: float(v) for k, v in self.sigma.items()},
                "bounds": {k: [float(a), float(b)] for k, (a, b) in self.bounds.items()},
                "exponents": {t.owner: t.exponent for t in nonlinear_terms(self.robot)
                              if hasattr(t, "exponent")},
                "converged": bool(self.converged), "evaluations": int(self.evaluations)}

    def summary(self) -> str:
        """One line per nonlinear friction velocity."""
        lines = []
        for owner, v in self.velocities.items():
            unit = "m/s" if _linear(self.robot, owner) else "rad/s"
            lines.append(f"{owner}: {self.models[owner]} velocity {v:.4g} ± "
                         f"{self.sigma[owner]:.2g} {unit}")
        return "\n".join(lines)


def _linear(robot: Robot, owner: str) -> bool:
    for t in nonlinear_terms(robot):
        if t.owner == owner:
            return t.parameters[0].unit == "N"
    return False


def _bounds(bounds, owners: list[str]) -> dict[str, tuple[float, float]]:
    """Per-owner bounds from one pair or a mapping, checked."""
    if isinstance(bounds, Mapping):
        unknown = sorted(set(bounds) - set(owners))
        if unknown:
            raise ModelError(f"bounds: {unknown[0]!r} has no sigmoid or Stribeck friction "
                             f"(those that have: {', '.join(owners)})")
        pairs = {o: bounds.get(o, BOUNDS) for o in owners}
    else:
        pairs = dict.fromkeys(owners, bounds)
    out = {}
    for owner, pair in pairs.items():
        try:
            lo, hi = (float(x) for x in pair)
        except (TypeError, ValueError):
            raise ModelError(f"bounds of {owner}: expected (lower, upper) velocities, found "
                             f"{pair!r}; e.g. bounds=(0.001, 1.0)") from None
        if not (np.isfinite(lo) and lo > 0):
            raise ModelError(f"bounds of {owner}: the lower velocity bound must be > 0 (the "
                             f"search is over log v), found {lo:g}; e.g. bounds=(0.001, 1.0)")
        if not (np.isfinite(hi) and hi > lo):
            raise ModelError(f"bounds of {owner}: the upper velocity bound must exceed the "
                             f"lower one {lo:g}, found {hi:g}; e.g. bounds=(0.001, 1.0)")
        out[owner] = (lo, hi)
    return out


class _Projection:
    """The projected residual of the data at given log-velocities, and its Jacobian."""

    def __init__(self, data: IdentificationData, robot: Robot):
        self.data, self.terms = data, nonlinear_terms(robot)
        self.owners = [t.owner for t in self.terms]
        self._all = list(robot.terms)
        self._where = [self._all.index(t) for t in self.terms]
        self.augmented = self.robot(np.log([t.velocity for t in self.terms]), slopes=True)
        self.base = base_parameters(self.augmented)
        params = self.augmented.parameters
        slopes = [params.index(f"{t.owner}.dlog_{t.velocity_name}") for t in self.terms]
        where = {int(c): k for k, c in enumerate(self.base.independent)}
        lost = [t.owner for t, s in zip(self.terms, slopes, strict=True)
                if s not in where or np.any(self.base.grouping[where[s]] != 0)]
        if lost:
            raise DataError(f"friction: the velocity of {', '.join(lost)} cannot be identified "
                            "(its effect is a combination of other columns, as friction on "
                            "both a joint and its motor can be); use the coulomb model there")
        self.slopes = np.array([where[s] for s in slopes])
        self.linear = np.setdiff1d(np.arange(self.base.rank), self.slopes)
        amp = [[(params.index(name), c) for name, c in t.amplitude] for t in self.terms]
        self._amplitudes = amp
        self.weighting = None
        self.evaluations = 0
        self._cache: tuple[bytes, tuple] | None = None

    def robot(self, x: np.ndarray, *, slopes: bool) -> Robot:
        """The robot at log-velocities ``x``, with the slope columns when ``slopes``."""
        every = list(self._all)
        for i, t, xi in zip(self._where, self.terms, x, strict=True):
            every[i] = t.with_velocity(float(np.exp(xi)))
        extra = [FrictionSlope(every[i]) for i in self._where] if slopes else []
        return self.data.robot.with_terms(every + extra)

    def system(self, x: np.ndarray):
        """The compressed system of the robot with slopes at ``x``."""
        data = self.data.with_robot(self.robot(x, slopes=True), base=self.base)
        self.evaluations += 1
        return data.system()

    def undetermined(self, exc: RankDeficient, x: np.ndarray) -> SolverError:
        """The error of a system that does not determine every column at ``x``."""
        names = ", ".join(self.base.names[c] for c in exc.columns)
        return SolverError(f"friction: the data do not determine {names} at velocities "
                           f"{', '.join(f'{v:.3g}' for v in np.exp(x))} (of "
                           f"{', '.join(self.owners)}); record slow motions through zero "
                           "velocity, lower the dead zone, raise the lower bound of the "
                           "velocities, or use the coulomb model there")

    def amplitudes(self, theta: np.ndarray) -> np.ndarray:
        """The amplitude (k,) each slope column multiplies, at base parameters ``theta``."""
        std = self.base.from_base(theta, self.augmented.prior)
        return np.array([sum(c * std[i] for i, c in pairs) for pairs in self._amplitudes])

    def evaluate(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """Residual r̃ (k + 1,), Jacobian J̃ (k + 1, k) and cost ``‖r‖²`` at ``x``."""
        key = np.asarray(x, dtype=float).tobytes()
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        system = self.system(x)
        if self.weighting is None:
            try:
                self.weighting = first_pass_covariance(system, diagonal=True)
            except RankDeficient as exc:
                raise self.undetermined(exc, x) from None
        stacked = system.system(covariance=self.weighting)
        R, z = stacked.R, stacked.qty
        rho = np.sqrt(max(stacked.residual_norm2(np.zeros(stacked.n_params)) - z @ z, 0.0))
        F = np.zeros((R.shape[0] + 1, R.shape[1] + 1))
        F[:-1, :-1], F[:-1, -1], F[-1, -1] = R, z, rho
        order = np.concatenate([self.linear, self.slopes, [R.shape[1]]])
        T = scipy.linalg.qr(F[:, order], mode="r")[0]
        m = len(self.linear)
        theta = np.zeros(self.base.rank)
        theta[self.linear] = scipy.linalg.lstsq(T[:m, :m], T[:m, -1])[0]
        out = (-T[m:, -1], T[m:, m:-1] * self.amplitudes(theta),
               float(T[m:, -1] @ T[m:, -1]))
        self._cache = (key, out)
        return out


def _check_excitation(data: IdentificationData, terms, bounds) -> None:
    """Warn for each coordinate whose data barely move at speeds where its friction's
    velocity acts."""
    zone = data.exclusion.thresholds if data.exclusion is not None else \
        np.zeros(data.robot.n)
    for term in terms:
        if term.space == "tree" and data.robot.tree.n != data.robot.n:
            continue  # a passive joint of a closure: its speeds are not at hand
        hi = bounds[term.owner][1]
        j = term.rows[0]
        speeds = []
        for rec in data.processed:
            v = data.robot.transmission.actuator_state(
                rec.positions, rec.velocities, rec.accelerations)[1] \
                if term.space == "actuator" else rec.velocities
            speeds.append(np.abs(v[:, j]))
        speeds = np.concatenate(speeds)
        dead = zone[j] if term.space != "actuator" else 0.0
        seen = int(np.sum((speeds > dead) & (speeds < 2 * hi)))
        if seen < max(20, 0.02 * len(speeds)):
            warnings.warn(
                f"friction of {term.owner}: only {seen} of {len(speeds)} samples move between "
                f"{dead:.3g} (the dead zone) and {2 * hi:.3g} (twice the upper bound of its "
                f"{term.velocity_name.replace('_', ' ')}): the data barely see it and its "
                "velocity will be poorly determined; record slow motions through zero "
                "velocity, lower the dead zone (Processing(deadzone=...)), or use the coulomb "
                "model for it", DynidWarning, stacklevel=3)


def _check_dead_zone(data: IdentificationData, terms, velocities: np.ndarray) -> None:
    """Warn for each coordinate whose dead zone leaves out the speeds where its friction's
    velocity acts (rows below the dead zone are not fitted, and their absence biases the
    velocity)."""
    if data.exclusion is None:
        return
    zone = data.exclusion.thresholds
    for term, v in zip(terms, velocities, strict=True):
        if term.space == "actuator":
            continue
        j = term.rows[0]
        if zone[j] > 0.25 * v:
            warnings.warn(f"friction of {term.owner}: the dead zone {zone[j]:.3g} leaves out "
                          f"the rows below it, where its {term.velocity_name.replace('_', ' ')}"
                          f" {v:.3g} acts, and biases it; identify with a dead zone well "
                          "below it or none (Processing(deadzone=None), --deadzone 0)",
                          DynidWarning, stacklevel=3)


def identify_friction(data: IdentificationData, estimator: Estimator | None = None, *,
                      bounds: tuple[float, float] | Mapping[str, tuple[float, float]] = BOUNDS,
                      start: float | Mapping[str, float] | None = None,
                      max_evaluations: int = 60) -> FrictionFit:
    """Estimate the sigmoid and Stribeck velocities of ``data.robot`` by variable projection,
    then its linear parameters with ``estimator`` at them (see the module docstring).

    Parameters
    ----------
    data
        Recordings of a robot with sigmoid or Stribeck friction terms
        (:func:`~dynid.models.friction.with_friction`).
    estimator
        The estimator of the linear part (default :class:`~dynid.identify.WLS`); it is
        fitted, and returned in the fit.
    bounds
        ``(lower, upper)`` of every velocity (rad/s or m/s), or per owner; lower > 0.
    start
        Starting velocity, one for all or per owner (default: the best of a few trials
        spread over the bounds).
    max_evaluations
        Most systems built by the search; a search stopped by it warns.

    Examples
    --------
    >>> robot = with_friction(load_robot("panda"), "stribeck")           # doctest: +SKIP
    >>> fit = identify_friction(IdentificationData(robot, rec), WLS())   # doctest: +SKIP
    >>> print(fit.summary())                                              # doctest: +SKIP
    joint1: stribeck velocity 0.0502 ± 0.0011 rad/s
    >>> fit.result.save("result.json")    # velocities in solver["friction"]  # doctest: +SKIP
    """
    if not isinstance(data, IdentificationData):
        raise DataError(f"identify_friction: expected IdentificationData, found "
                        f"{type(data).__name__}; e.g. identify_friction("
                        "IdentificationData(robot, recordings))")
    estimator = estimator if estimator is not None else WLS()
    terms = nonlinear_terms(data.robot)
    if not terms:
        raise ModelError(f"identify_friction: robot {data.robot.name} has no sigmoid or "
                         "Stribeck friction; set them with with_friction(robot, 'stribeck')")
    owners = [t.owner for t in terms]
    limits = _bounds(bounds, owners)
    if not (isinstance(max_evaluations, int | np.integer) and max_evaluations >= 2):
        raise ModelError(f"max_evaluations: expected an integer ≥ 2, found {max_evaluations!r}"
                         "; e.g. max_evaluations=60")
    _check_excitation(data, terms, limits)
    lo = np.log([limits[o][0] for o in owners])
    hi = np.log([limits[o][1] for o in owners])
    projection = _Projection(data, data.robot)
    x0 = _start(projection, start, owners, lo, hi)
    result = scipy.optimize.least_squares(
        lambda x: projection.evaluate(x)[0], x0, jac=lambda x: projection.evaluate(x)[1],
        bounds=(lo, hi), method="trf", x_scale=1.0, max_nfev=max_evaluations,
        xtol=1e-6, ftol=1e-10, gtol=1e-8)
    x = np.clip(result.x, lo, hi)
    converged = result.status > 0
    if not converged:
        warnings.warn(f"friction: the variable projection did not converge in "
                      f"{projection.evaluations} evaluations (velocities of "
                      f"{', '.join(owners)} at {', '.join(f'{np.exp(v):.3g}' for v in x)}); "
                      "raise max_evaluations, narrow the bounds or give a start, or use the "
                      "coulomb model", DynidWarning, stacklevel=2)
    for owner, xi, a, b in zip(owners, x, lo, hi, strict=True):
        if np.isclose(xi, a, atol=1e-3) or np.isclose(xi, b, atol=1e-3):
            warnings.warn(f"friction of {owner}: its velocity {np.exp(xi):.3g} is at a bound "
                          f"of the search ({np.exp(a):.3g}, {np.exp(b):.3g}); widen the "
                          "bounds, or use another model for it", DynidWarning, stacklevel=2)
    # The linearization at the solution: the step left and the covariance of log v.
    system = projection.system(x)
    try:
        theta, cov, _ = weighted_fit(system, projection.weighting)
    except RankDeficient as exc:
        raise projection.undetermined(exc, x) from None
    # The slope's coefficient is the amplitude times the step of log v.
    amplitude = np.abs(projection.amplitudes(np.where(np.isin(np.arange(len(theta)),
                                                              projection.slopes), 0.0, theta)))
    if np.any(amplitude == 0):
        owner = owners[int(np.argmin(amplitude))]
        raise DataError(f"friction of {owner}: the estimated amplitude its velocity scales is "
                        "zero, so the velocity is undetermined; use the coulomb model there")
    step = theta[projection.slopes] / amplitude
    sigma_log = np.sqrt(np.diag(cov)[projection.slopes]) / amplitude
    velocities = np.exp(x)
    _check_dead_zone(data, projection.terms, velocities)
    robot = projection.robot(x, slopes=False)
    estimator.fit(data.with_robot(robot))
    fit = FrictionFit(
        robot=robot, estimator=estimator,
        velocities=dict(zip(owners, velocities.tolist(), strict=True)),
        sigma=dict(zip(owners, (velocities * sigma_log).tolist(), strict=True)),
        models=friction_models(robot), bounds=limits, converged=converged,
        evaluations=projection.evaluations, step=dict(zip(owners, step.tolist(), strict=True)))
    estimator.result_.solver["friction"] = fit.to_json()
    return fit


def _start(projection: _Projection, start, owners, lo, hi) -> np.ndarray:
    """The starting log-velocities: given, or the best common value of a few trials."""
    if start is not None:
        values = [start.get(o, np.exp((a + b) / 2)) for o, a, b in zip(owners, lo, hi,
                                                                       strict=True)] \
            if isinstance(start, Mapping) else [start] * len(owners)
        x = np.log(np.asarray(values, dtype=float))
        if not np.all(np.isfinite(x)):
            raise ModelError(f"start: expected velocities > 0, found {values}")
        return np.clip(x, lo, hi)
    trials = np.linspace(0.9, 0.1, 5)
    costs, failure = [], None
    for t in trials:
        try:
            costs.append(projection.evaluate(lo + t * (hi - lo))[2])
        except SolverError as exc:  # velocities too low for any sample to see them
            costs.append(np.inf)
            failure = exc
    if not np.isfinite(min(costs)):
        raise failure
    return lo + trials[int(np.argmin(costs))] * (hi - lo)
