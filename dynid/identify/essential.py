"""Essential parameters: the base parameters the data determine well enough to matter for
prediction (Pham and Gautier).

Starting from every base parameter, the one with the largest relative standard deviation
``100 σ / |θ|`` is left out (fixed at zero, or at its prior's value with ``fixed="prior"``),
the others are fitted again, and the removal is kept while the validation error stays within
``tolerance`` (relative) of the full set's::

    e_k ≤ e_0 (1 + tolerance)

with ``e`` the overall relative error ``100 ‖Ŷ − Y‖_F / ‖Y‖_F`` (%) on validation data (as
:func:`~dynid.identify.validation.validate` gives it; ``Y`` less the known bodies' share for a
robot that carries some): the validation recordings given, or else the last ``holdout`` of
each training recording, the fits then made on the rest. The first removal that breaks the
rule ends the elimination (it is reported, not kept). The kept set is then fitted on all the
training data.

Every refit works on the compressed system (the triangular factor of the whitened base
regressor, built once; see :mod:`dynid.identify._essentialfit`), with the estimator's own
weighting and covariance (OLS, WLS or Gauss–Markov); the validation error on the compressed
validation system. No regressor is built again per step.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from .. import _validate
from .._blas import single_threaded
from ..errors import DataError
from ._essentialfit import (
    Subsets,
    ValidationError,
    holdout_systems,
    validation_system,
    weighting_of,
)
from .data import CompressedData
from .estimators import OLS, Estimator
from .recording import Recording
from .result import IdentificationResult
from .uncertainty import Uncertainty

__all__ = ["EssentialParameters", "EssentialStep", "essential_parameters"]

_METHODS = ("ols", "wls", "gauss-markov")
_FIXED = ("zero", "prior")
_EMPTY = {"zero": "the data cannot tell the model from none); give a smaller tolerance, e.g. "
                  "0.001, or validation data where the robot moves under load",
          "prior": "the priors predict the validation data as well as a fit); there is "
                   "nothing to identify beyond the priors: keep every base parameter, or "
                   "leave them out at zero (fixed='zero')"}


@dataclass(frozen=True)
class EssentialStep:
    """One step of the elimination.

    Attributes
    ----------
    removed
        The base parameter left out at this step (``None`` for the full set).
    kept
        How many base parameters the step's fit has.
    validation_error
        Overall relative error on the validation data, %.
    max_relative_std
        Largest relative σ (%) among the step's parameters (inf when one is zero, 0 when
        none is left).
    accepted
        Whether the removal was kept (the last step is the refused one, unless the
        elimination stopped on its own).
    """

    removed: str | None
    kept: int
    validation_error: float
    max_relative_std: float
    accepted: bool

    def to_json(self) -> dict:
        rel = self.max_relative_std
        return {"removed": self.removed, "kept": self.kept,
                "validation_error": self.validation_error,
                "max_relative_std": rel if math.isfinite(rel) else None,
                "accepted": self.accepted}


@dataclass(frozen=True)
class EssentialParameters:
    """The outcome of :func:`essential_parameters`.

    Attributes
    ----------
    names
        Every base parameter (b).
    kept, removed
        The essential parameters, and those left out in the order they went.
    steps
        :class:`EssentialStep` per step, the full set first.
    tolerance
        Relative increase of the validation error allowed.
    fixed
        What the parameters left out are fixed at: ``"zero"`` or ``"prior"``.
    validation
        ``"recordings"`` (validation recordings given) or ``"holdout"`` (the end of each
        training recording).
    holdout
        Fraction of each training recording held out (with ``"holdout"``).
    method
        The estimator refitted (``ols``, ``wls``, ``gauss-markov``).
    result
        The kept set fitted on all the training data: an
        :class:`~dynid.identify.result.IdentificationResult` whose base parameters left
        out hold their fixed value with zero variance; ``predict``, ``validate``, the
        report and the exports take it as any result. ``None`` when read back from a
        result's record alone.
    full
        The estimator's result with every base parameter, on all the training data (``None``
        when read back).

    Examples
    --------
    >>> ess = essential_parameters(data, WLS(), validation=run3)     # doctest: +SKIP
    >>> ess.kept[:3], len(ess.removed)                               # doctest: +SKIP
    (('link1.Izz + ...', 'link2.Ixx - ...', ...), 12)
    >>> print(ess.summary())                                         # doctest: +SKIP
    >>> ess.result.save("essential.json")                            # doctest: +SKIP
    """

    names: tuple[str, ...]
    kept: tuple[str, ...]
    removed: tuple[str, ...]
    steps: tuple[EssentialStep, ...]
    tolerance: float
    fixed: str
    validation: str
    holdout: float | None
    method: str
    result: IdentificationResult | None = None
    full: IdentificationResult | None = None

    @property
    def full_error(self) -> float:
        """The validation error of the full set, %."""
        return self.steps[0].validation_error

    @property
    def error(self) -> float:
        """The validation error of the kept set, %."""
        return [s for s in self.steps if s.accepted][-1].validation_error

    def summary(self) -> str:
        where = "validation recordings" if self.validation == "recordings" else \
            f"the last {100 * self.holdout:g} % of each training recording"
        lines = [f"essential parameters: {len(self.kept)} of {len(self.names)} base parameters "
                 f"({self.method}; left out fixed at {self.fixed}; error on {where}; "
                 f"tolerance +{100 * self.tolerance:g} %)",
                 f"{'step':>4} {'left out':<40} {'kept':>5} {'error %':>9} {'max σ/|θ| %':>12}"]
        for k, s in enumerate(self.steps):
            name = "(full set)" if s.removed is None else s.removed
            name = name if len(name) <= 40 else name[:37] + "..."
            mark = "" if s.accepted else "  refused"
            lines.append(f"{k:>4} {name:<40} {s.kept:>5} {s.validation_error:9.4f} "
                         f"{s.max_relative_std:12.4g}{mark}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The record stored in the result's ``diagnostics["essential"]``."""
        return {"names": list(self.names), "kept": list(self.kept),
                "removed": list(self.removed), "steps": [s.to_json() for s in self.steps],
                "tolerance": self.tolerance, "fixed": self.fixed,
                "validation": self.validation, "holdout": self.holdout,
                "method": self.method}

    @classmethod
    def from_json(cls, data: object, where: str = "essential") -> EssentialParameters:
        """The record written by :meth:`to_json`; errors name ``where`` and the entry."""
        def fail(entry, expected, found):
            return DataError(f"{where}.{entry}: expected {expected}, found {str(found)[:60]}")

        if not isinstance(data, dict):
            raise fail("", "a JSON object", data)
        for key in ("names", "kept", "removed", "steps", "tolerance", "fixed", "validation",
                    "method"):
            if key not in data:
                raise DataError(f"{where}.{key}: missing entry")
        names = data["names"]
        for key in ("names", "kept", "removed"):
            value = data[key]
            if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
                raise fail(key, "a list of base parameter names", value)
            if key != "names" and not set(value) <= set(names):
                raise fail(key, "names among the base parameters", value)
        if set(data["kept"]) | set(data["removed"]) != set(names):
            raise fail("kept", "with removed, every base parameter", len(data["kept"]))
        if not (_validate.is_number(data["tolerance"]) and data["tolerance"] > 0):
            raise fail("tolerance", "a number > 0", data["tolerance"])
        if data["fixed"] not in _FIXED:
            raise fail("fixed", "'zero' or 'prior'", data["fixed"])
        if data["validation"] not in ("recordings", "holdout"):
            raise fail("validation", "'recordings' or 'holdout'", data["validation"])
        steps = data["steps"]
        if not isinstance(steps, list) or not steps:
            raise fail("steps", "a list of steps", steps)
        out = []
        for i, s in enumerate(steps):
            try:
                rel = s["max_relative_std"]
                out.append(EssentialStep(s["removed"], int(s["kept"]),
                                         float(s["validation_error"]),
                                         math.inf if rel is None else float(rel),
                                         bool(s["accepted"])))
            except (KeyError, TypeError, ValueError):
                raise fail(f"steps[{i}]", "removed, kept, validation_error, max_relative_std "
                           "and accepted", s) from None
        holdout = data.get("holdout")
        return cls(tuple(names), tuple(data["kept"]), tuple(data["removed"]), tuple(out),
                   float(data["tolerance"]), data["fixed"], data["validation"],
                   None if holdout is None else float(holdout), str(data["method"]))

    @classmethod
    def from_result(cls, result: IdentificationResult) -> EssentialParameters | None:
        """The record of a result fitted on essential parameters (``None`` for another)."""
        record = result.diagnostics.get("essential")
        if record is None:
            return None
        return replace(cls.from_json(record, "diagnostics.essential"), result=result)


@single_threaded
def essential_parameters(data: CompressedData, estimator: Estimator | None = None, *,
                         validation: Recording | Sequence[Recording] | CompressedData
                         | None = None, tolerance: float = 0.01, fixed: str = "zero",
                         holdout: float = 0.25) -> EssentialParameters:
    """Eliminate the base parameters the data barely determine, while the validation error
    stays within ``tolerance`` of the full set's.

    Parameters
    ----------
    data
        The identification data (:class:`~dynid.identify.data.IdentificationData`; or
        :class:`~dynid.identify.data.CompressedData` with ``validation`` compressed too).
    estimator
        :class:`~dynid.identify.estimators.OLS` (default),
        :class:`~dynid.identify.estimators.WLS` or
        :class:`~dynid.identify.estimators.GaussMarkov`: its weighting (fitted once on the
        full set) weights every refit, and its covariance gives the relative σ.
    validation
        Validation recordings (raw, processed as ``data`` was, without its ``skip``), or a
        compressed validation set. Default: the last ``holdout`` of each training recording.
    tolerance
        Relative increase of the validation error allowed (> 0; 0.01: 1 %).
    fixed
        ``"zero"`` (the parameters left out are zero, the classical essential set) or
        ``"prior"`` (they keep the value the robot's priors give them).
    holdout
        Fraction of each training recording held out when no validation is given.

    Returns
    -------
    EssentialParameters

    Examples
    --------
    >>> data = IdentificationData(robot, [run1, run2])                    # doctest: +SKIP
    >>> ess = essential_parameters(data, WLS(), validation=run3)          # doctest: +SKIP
    >>> print(ess.summary())                                              # doctest: +SKIP
    essential parameters: 50 of 62 base parameters (wls; left out fixed at zero; ...)
    step left out                                  kept   error %  max σ/|θ| %
       0 (full set)                                  62    0.2571        1.2e+04
       1 link7.mcx - ...                             61    0.2571          851
    ...
    >>> validate(robot, ess.result, run4).overall_relative_error          # doctest: +SKIP
    0.259
    """
    if not isinstance(data, CompressedData):
        raise DataError(f"data: expected IdentificationData, found {type(data).__name__}; e.g. "
                        "essential_parameters(IdentificationData(robot, [run]), OLS())")
    estimator = OLS() if estimator is None else estimator
    if not isinstance(estimator, Estimator) or estimator.method not in _METHODS:
        raise DataError(f"estimator: expected OLS(), WLS() or GaussMarkov() (refitted by "
                        f"weighted least squares), found {estimator!r}")
    if not (_validate.is_number(tolerance) and tolerance > 0):
        raise DataError(f"tolerance: expected a relative increase of the validation error "
                        f"> 0, e.g. tolerance=0.01 for 1 %, found {tolerance!r}")
    if fixed not in _FIXED:
        raise DataError(f"fixed: expected 'zero' or 'prior', found {fixed!r}")
    if not (_validate.is_number(holdout) and 0.05 <= holdout <= 0.5):
        raise DataError(f"holdout: expected a fraction of each recording in [0.05, 0.5], e.g. "
                        f"holdout=0.25, found {holdout!r}")
    base = data.base
    values = np.zeros(base.rank) if fixed == "zero" else base.to_base(data.robot.prior)
    if validation is None:
        train, check = holdout_systems(data, holdout)
        selector = copy.deepcopy(estimator).fit(train)
        final = estimator.fit(data)
    else:
        check = validation_system(data, validation)
        final = selector = estimator.fit(data)
        train = data
    subsets = Subsets(train.system(), estimator.method, weighting_of(selector), values)
    steps, kept = _eliminate(subsets, ValidationError(check), base.names, tolerance, fixed)
    ess = EssentialParameters(
        names=base.names, kept=tuple(n for n, k in zip(base.names, kept, strict=True) if k),
        removed=tuple(s.removed for s in steps[1:] if s.accepted), steps=tuple(steps),
        tolerance=float(tolerance), fixed=fixed,
        validation="holdout" if validation is None else "recordings",
        holdout=float(holdout) if validation is None else None, method=estimator.method)
    refit = Subsets(data.system(), estimator.method, weighting_of(final), values)
    return replace(ess, result=_result(final, refit, kept, data, ess), full=final.result_)


def _eliminate(subsets: Subsets, error: ValidationError, names: tuple[str, ...],
               tolerance: float, fixed: str) -> tuple[list[EssentialStep], np.ndarray]:
    """The steps of the elimination and the kept set (b booleans)."""
    kept = np.ones(len(names), dtype=bool)
    theta, P = subsets.fit(kept)
    rel = Uncertainty.from_covariance(names, theta, P).relative_std
    e0 = error(theta)
    steps = [EssentialStep(None, len(names), e0, float(rel.max()), True)]
    limit = e0 * (1 + tolerance)
    while True:
        worst = int(np.flatnonzero(kept)[np.argmax(rel[kept])])
        trial = kept.copy()
        trial[worst] = False
        if not trial.any():  # nothing left to fit: the model is the fixed values
            e = error(subsets.fixed)
            if e <= limit:
                raise DataError(f"tolerance {tolerance:g}: the validation error stays within "
                                f"it with every base parameter left out ({_EMPTY[fixed]})")
            steps.append(EssentialStep(names[worst], 0, e, 0.0, False))
            return steps, kept
        theta_t, P_t = subsets.fit(trial)
        e = error(theta_t)
        rel_t = Uncertainty.from_covariance(names, theta_t, P_t).relative_std
        accepted = bool(e <= limit)
        steps.append(EssentialStep(names[worst], int(trial.sum()), e,
                                   float(rel_t[trial].max()), accepted))
        if not accepted:
            return steps, kept
        kept, rel = trial, rel_t


def _result(final: Estimator, refit: Subsets, kept: np.ndarray, data: CompressedData,
            ess: EssentialParameters) -> IdentificationResult:
    """The estimator's result with the kept set fitted on all the data."""
    theta, P = refit.fit(kept)
    base = data.base
    B = base.matrix
    params = base.from_base(theta, data.robot.prior)
    Bp = np.linalg.pinv(B)
    system = refit.system
    rmse = np.sqrt(np.diag(system.residuals_gram(theta)) / np.maximum(system.rows, 1))
    noise = final.result_.noise_covariance
    if final.method == "ols":
        noise = refit.residual_variance(theta, int(kept.sum())) * np.eye(len(rmse))
    return replace(final.result_, params=params, cov=Bp @ P @ Bp.T, base_params=B @ params,
                   base_cov=P, noise_covariance=noise, training_rmse=rmse,
                   diagnostics={**final.result_.diagnostics, "essential": ess.to_json()})
