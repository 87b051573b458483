"""Payload identification: the ten inertial parameters of an unknown body fixed to a link of
an identified robot, from one run with it.

With the robot's parameters ``θ`` known (an identification result, or values), the run's
output less the robot's own prediction is what the payload adds, linear in the payload's ten
parameters ``π`` (Pinocchio's order, about the origin of the payload's frame, in that frame)::

    y − Y_b θ_b = Y_link T(X) π + noise

with ``Y_link T(X)`` the columns of a body fixed to the link at the pose ``X``
(:mod:`dynid.models.bodies`). The run goes through the processing the robot was identified
with (the result's; else :class:`~dynid.identify.processing.Processing`'s defaults), each
output is weighted by its noise level iterated from the residuals, as
:class:`~dynid.identify.estimators.WLS` does, and the system is compressed as it is built.

Physical consistency: the estimate minimizes the weighted residual subject to the payload's
pseudo-inertia ``J(π) ≽ ε I`` (a small semidefinite program, CVXPY with Clarabel, solved only
when the weighted least-squares estimate is not physical). Its uncertainty (the result's
``covariance_method``):

``"unconstrained"``
    When the weighted least-squares estimate is physical, it is the estimate, and its
    covariance is the sandwich of the weighted fit, plus the share of the robot's own
    uncertainty when the robot is given as a result: ``A P_b Aᵀ`` with
    ``A = (W_Lᵀ V⁻¹ W_L)⁻¹ W_Lᵀ V⁻¹ W_b`` the payload estimate's sensitivity to the robot's
    base parameters (whose covariance is ``P_b``).
``"bootstrap"``
    When the constraint is active, the second moment about the estimate of estimates solved
    under it for data drawn with both noises (:func:`~dynid.identify.constrained.bootstrap`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin
import scipy.linalg

from .. import _validate
from .._blas import single_threaded
from ..errors import DataError, DynidWarning, SolverError
from ..models import Body, LinkInertia, Robot, base_parameters
from ._bodyrows import BodyRows
from ._payloadfit import PayloadFit, fit_payload
from .estimators import weighted_fit, wls_weighting
from .processing import Processing
from .recording import Recording
from .residuals import whiteness
from .result import IdentificationResult
from .system import JointSystem, RankDeficient
from .uncertainty import Uncertainty
from .validation import _parameters

__all__ = ["Payload", "identify_payload"]


@dataclass(frozen=True)
class Payload:
    """An identified payload: ten inertial parameters with their covariance.

    Attributes
    ----------
    name, parent, xyz, rpy
        The payload's name, the link (or frame) it is fixed to and the pose of its frame
        there (m, rad).
    names
        Its parameter names, ``<name>.m`` … ``<name>.Izz``.
    params, cov
        The estimate (10,) (about the payload frame's origin, in that frame) and its
        covariance (10, 10).
    covariance_method
        ``"unconstrained"`` or ``"bootstrap"`` (see :mod:`dynid.identify.payload`).
    unconstrained, unconstrained_cov
        The weighted least-squares estimate and its covariance.
    robot_uncertainty
        Whether the covariance holds the robot's own uncertainty (a result was given).
    noise_sigma
        Each output's noise σ, in its unit, iterated from the residuals.
    output_names, n_samples, processing
        The outputs, the samples used and the processing applied.
    fit
        The constrained solve: solver, status, smallest pseudo-inertia eigenvalue, whether
        the constraint is active.
    whiteness
        The residual's whiteness test (``None`` for too short a run).
    settings
        The settings it was identified with (``epsilon``, ``covariance``, ``draws``,
        ``seed``; the command line adds the files it read).

    Examples
    --------
    >>> payload = identify_payload(robot, result, run, "flange")   # doctest: +SKIP
    >>> payload.mass, payload.mass_sigma                            # doctest: +SKIP
    (2.996, 0.004)
    >>> loaded = replace(robot, bodies=(payload.body(),))           # doctest: +SKIP
    """

    name: str
    parent: str
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]
    names: tuple[str, ...]
    params: np.ndarray
    cov: np.ndarray
    covariance_method: str
    unconstrained: np.ndarray
    unconstrained_cov: np.ndarray
    robot_uncertainty: bool
    noise_sigma: np.ndarray
    output_names: tuple[str, ...]
    n_samples: int
    processing: Processing
    fit: PayloadFit
    whiteness: object = None
    settings: dict = field(default_factory=dict)

    @property
    def sigma(self) -> np.ndarray:
        """Standard deviation of each parameter (10,)."""
        return np.sqrt(np.clip(np.diag(self.cov), 0.0, None))

    @property
    def mass(self) -> float:
        """Mass, kg."""
        return float(self.params[0])

    @property
    def mass_sigma(self) -> float:
        return float(self.sigma[0])

    @property
    def com(self) -> np.ndarray:
        """Centre of mass (3,) in the payload frame, m."""
        return self.params[1:4] / self.params[0]

    @property
    def com_cov(self) -> np.ndarray:
        """Covariance (3, 3) of the centre of mass (first order in the estimate's error)."""
        m, h = self.params[0], self.params[1:4]
        J = np.column_stack([-h / m**2, np.eye(3) / m])
        return J @ self.cov[:4, :4] @ J.T

    @property
    def inertia(self) -> LinkInertia:
        """Mass, centre of mass and inertia about it, in the payload frame."""
        I = pin.Inertia.FromDynamicParameters(np.asarray(self.params, dtype=float))
        T = I.inertia
        return LinkInertia(float(I.mass), tuple(I.lever), (T[0, 0], T[0, 1], T[0, 2], T[1, 1],
                                                           T[1, 2], T[2, 2]))

    def body(self, *, known: bool = True) -> Body:
        """The payload as a body of the robot: known (its values added to the model's
        prediction) or identified (its values as the prior)."""
        return Body(self.name, self.parent, self.inertia, xyz=self.xyz, rpy=self.rpy,
                    known=known)

    def uncertainty(self) -> Uncertainty:
        """Standard deviations and correlations of the ten parameters."""
        return Uncertainty.from_covariance(self.names, self.params, self.cov)

    def save(self, path: str | Path) -> Path:
        """Write the payload as JSON (:func:`~dynid.identify.bodyfiles.load_payload` reads
        it back); returns the path."""
        from .bodyfiles import save_payload

        return save_payload(self, path)

    def summary(self) -> str:
        c, sc = self.com * 1e3, np.sqrt(np.diag(self.com_cov)) * 1e3
        com = ", ".join(f"{x:.1f} ± {s:.1f}" for x, s in zip(c, sc, strict=True))
        lines = [f"payload {self.name} on {self.parent}: mass {self.mass:.4g} ± "
                 f"{self.mass_sigma:.2g} kg, centre of mass ({com}) mm",
                 f"σ: {self.covariance_method}"
                 + (" (with the robot's uncertainty)" if self.robot_uncertainty else
                    " (the robot's parameters taken as exact)")
                 + (f"; pseudo-inertia constraint active ({self.fit.min_eigenvalue:.3g})"
                    if self.fit.active else "")]
        return "\n".join(lines)


@single_threaded
def identify_payload(robot: Robot, identified: IdentificationResult | np.ndarray,
                     recording: Recording | Sequence[Recording], parent: str, *,
                     xyz: Sequence[float] = (0.0, 0.0, 0.0),
                     rpy: Sequence[float] = (0.0, 0.0, 0.0), name: str = "payload",
                     processing: Processing | None = None, epsilon: float = 1e-6,
                     covariance: str = "auto", draws: int = 200, seed: int = 0) -> Payload:
    """Identify a payload fixed to a link of an identified robot.

    Parameters
    ----------
    robot
        The robot as identified, without the payload.
    identified
        Its identification result (its covariance then enters the payload's), or its
        standard parameters (p,) (taken as exact).
    recording
        One run (or several) with the payload, of the kind the robot outputs.
    parent
        The link, or a frame fixed to one (``"flange"``), the payload is fixed to.
    xyz, rpy
        Pose of the payload's frame in the parent's frame (m, rad); its parameters are
        about this frame's origin, in this frame.
    name
        The payload's name (its parameters ``<name>.m`` …).
    processing
        How the run is processed (default: the result's processing, else
        :class:`~dynid.identify.processing.Processing`'s defaults chosen for the run).
    epsilon
        Smallest eigenvalue required of the payload's pseudo-inertia.
    covariance
        ``"auto"`` (the unconstrained covariance when the constraint is not active, else
        the bootstrap), ``"unconstrained"`` or ``"bootstrap"``.
    draws, seed
        Bootstrap draws and their seed.

    Returns
    -------
    Payload

    Examples
    --------
    >>> est = WLS().fit(IdentificationData(robot, empty_runs))      # doctest: +SKIP
    >>> payload = identify_payload(robot, est.result_, loaded_run, "flange")  # doctest: +SKIP
    >>> print(payload.summary())                                    # doctest: +SKIP
    payload payload on flange: mass 3.002 ± 0.0041 kg, centre of mass (20.1 ± 0.3, ...) mm
    """
    if not isinstance(robot, Robot):
        raise DataError(f"robot: expected a Robot, found {type(robot).__name__}; e.g. "
                        "identify_payload(dynid.load_robot('panda'), result, run, 'flange')")
    if covariance not in ("auto", "unconstrained", "bootstrap"):
        raise DataError(f"covariance: expected 'auto', 'unconstrained' or 'bootstrap', found "
                        f"{covariance!r}")
    if not (_validate.is_number(epsilon) and epsilon > 0):
        raise DataError(f"epsilon: expected a finite value > 0 (kg, kg·m²), found {epsilon!r}")
    if not (isinstance(draws, int) and 2 <= draws <= 100_000):
        raise DataError(f"draws: expected an integer between 2 and 100000, found {draws!r}")
    runs = (recording,) if isinstance(recording, Recording) else tuple(recording)
    for i, rec in enumerate(runs):
        if not isinstance(rec, Recording):
            raise DataError(f"recording[{i}]: expected a Recording, found "
                            f"{type(rec).__name__}; read runs with read_csv or read_npz")
    theta = _parameters(robot, identified)
    base = base_parameters(robot)
    P_b = _robot_covariance(identified, base)
    theta_b = base.to_base(theta)
    rows = BodyRows(robot, Body(name, parent, LinkInertia(), xyz=tuple(xyz), rpy=tuple(rpy)),
                    base)
    if processing is None:
        processing = identified.processing if isinstance(identified, IdentificationResult) \
            else Processing()
    data = rows.data(runs, processing)
    own, cross = _systems(data, rows.b, theta_b, P_b is not None)
    names = rows.columns.names[rows.b:]
    try:
        weighting = wls_weighting(data, own)
        pi_u, _, noise = weighted_fit(own, weighting.covariance)
    except RankDeficient as exc:
        least = ", ".join(names[c] for c in exc.columns)
        raise SolverError(f"payload {name}: the run does not determine its ten parameters "
                          f"(least determined: {least}); move the joints that turn {parent} "
                          "through more orientations, or record a longer run") from None
    V = weighting.covariance
    Rv, Rg = own.factors(V, noise)
    root = scipy.linalg.solve_triangular(Rv, Rg.T, trans="T")  # the data's noise: root ξ
    if cross is not None:
        Rc = cross.system(covariance=V).R
        C = Rc[:10, :10].T @ Rc[:10, 10:]                         # W_Lᵀ V⁻¹ W_b
        d, U = np.linalg.eigh((P_b + P_b.T) / 2)
        L = U * np.sqrt(np.clip(d, 0.0, None))                   # L Lᵀ = P_b
        root = np.column_stack([root, scipy.linalg.solve_triangular(Rv, C @ L, trans="T")])
    Rinv = scipy.linalg.solve_triangular(Rv, np.eye(10))
    P_u = Rinv @ root @ root.T @ Rinv.T
    _check_change(name, pi_u, P_u)
    fit = fit_payload(Rv, pi_u, epsilon=epsilon)
    method = covariance if covariance != "auto" else \
        "bootstrap" if fit.active else "unconstrained"
    P = P_u if method == "unconstrained" else fit.bootstrap(root, draws=draws, seed=seed)
    test = None
    residuals = data.residuals(np.concatenate([theta_b, fit.params]))
    if sum(len(e) for e in residuals) >= 20:
        test = whiteness(residuals, robot.output_names)
        if not test.white:
            warnings.warn(f"payload identification: {test.message()}", DynidWarning,
                          stacklevel=3)
    return Payload(name=name, parent=parent, xyz=rows.body.xyz, rpy=rows.body.rpy,
                   names=names, params=fit.params, cov=P, covariance_method=method,
                   unconstrained=pi_u, unconstrained_cov=P_u,
                   robot_uncertainty=cross is not None, noise_sigma=weighting.sigma,
                   output_names=tuple(robot.output_names), n_samples=own.n_samples,
                   processing=data.processing, fit=fit, whiteness=test,
                   settings={"epsilon": epsilon, "covariance": covariance, "draws": draws,
                             "seed": seed})


def _robot_covariance(identified, base) -> np.ndarray | None:
    """The covariance of the robot's base parameters, from a result computed on ``base``."""
    if not isinstance(identified, IdentificationResult):
        return None
    if tuple(identified.base_names) != tuple(base.names):
        raise DataError("identified: the result's base parameters differ from the robot's "
                        f"({len(identified.base_names)} against {base.rank}); use the robot "
                        "the result was identified on")
    return np.asarray(identified.base_cov, dtype=float)


def _systems(data, b: int, theta_b: np.ndarray, cross: bool
             ) -> tuple[JointSystem, JointSystem | None]:
    """The payload's compressed system ``W_L π = y − W_b θ_b`` and, with ``cross``, the system
    of ``[W_L  W_b]`` and ``y`` (its factor holds ``W_Lᵀ V⁻¹ W_b``)."""
    n = data.robot.n
    own = JointSystem(n, 10)
    both = JointSystem(n, 10 + b) if cross else None
    for Y, y, keep in data.rows():
        W_b, W_L = Y[..., :b], Y[..., b:]
        own.add(W_L, y - W_b @ theta_b, keep)
        if both is not None:
            both.add(np.concatenate([W_L, W_b], axis=2), y, keep)
    return own, both


def _check_change(name: str, pi: np.ndarray, P: np.ndarray) -> None:
    """Warn when the run shows no payload (its ten parameters jointly within the noise of
    zero: χ² test at 0.1 %) or less mass than the robot's parameters hold."""
    from scipy.stats import chi2

    m, s = float(pi[0]), float(np.sqrt(max(P[0, 0], 0.0)))
    stat = float(pi @ np.linalg.lstsq(P, pi, rcond=None)[0])
    if m < -3 * s:
        warnings.warn(f"payload {name}: the run carries less mass than the robot's "
                      f"parameters say (mass estimate {m:.3g} ± {s:.2g} kg); use parameters "
                      "identified without the payload, from runs of the same robot",
                      DynidWarning, stacklevel=4)
    elif chi2.sf(stat, len(pi)) > 1e-3:
        warnings.warn(f"payload {name}: the run shows no payload (its ten parameters are "
                      f"within the noise of zero, χ² = {stat:.3g} for 10; mass estimate "
                      f"{m:.3g} ± {s:.2g} kg); check that the payload was fixed to the robot "
                      "for this run and that the robot's parameters are from runs without it",
                      DynidWarning, stacklevel=4)
