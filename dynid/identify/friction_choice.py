"""The friction model of each coordinate, chosen by the validation error on held-out data.

:func:`select_friction` identifies the robot once per candidate model (every coordinate with
Coulomb-like friction given that model; velocities by :func:`~dynid.identify.friction.
identify_friction`), predicts a validation recording with each, and gives each coordinate the
simplest model whose validation RMSE on its own output is within ``tolerance`` of the best.
The friction of a joint acts on its own output first (through the transmission, on the
outputs its actuator moves), so the per-output error separates the choices. A second pass
tries each coordinate's other models with the others at their first choice (a wrong model on
one joint leaves errors in the shared inertial parameters that weigh on the others' outputs),
and chooses again; the robot is then identified with the models chosen. The table of errors is
returned with the choice.
Warnings of the candidates' fits are not shown (a wrong model leaves a coloured residual), but
for those of their friction velocities; the final fit's are.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DataError, DynidWarning, ModelError
from ..models import Robot
from ..models.friction import FRICTION_MODELS, friction_models, nonlinear_terms, with_friction
from .data import IdentificationData
from .estimators import WLS, Estimator
from .friction import BOUNDS, FrictionFit, identify_friction
from .processing import Processing
from .recording import Recording
from .validation import Validation, validate

__all__ = ["FrictionChoice", "select_friction"]


@dataclass(frozen=True)
class FrictionChoice:
    """The friction model chosen per coordinate and the validation errors behind it.

    Attributes
    ----------
    choice
        ``owner → model`` (joint or motor names).
    scores
        ``owner → model → validation RMSE`` of the owner's output with that model and the
        other coordinates at their choice (the figures the choice compares).
    errors
        ``model → validation RMSE per output`` (n,) with every coordinate at that model (the
        first pass), in the outputs' units.
    outputs
        The output names the errors are for.
    robot, estimator, validation
        The robot with the models chosen (velocities estimated), its fitted estimator, and its
        validation.
    fit
        The :class:`~dynid.identify.friction.FrictionFit` of the final model (``None`` when
        every coordinate kept Coulomb friction).
    """

    choice: dict[str, str]
    scores: dict[str, dict[str, float]]
    errors: dict[str, np.ndarray]
    outputs: tuple[str, ...]
    robot: Robot
    estimator: Estimator
    validation: Validation
    fit: FrictionFit | None

    def table(self) -> str:
        """The validation RMSE of each coordinate's output per model (:attr:`scores`), the
        chosen model marked ``*``."""
        models = [m for m in FRICTION_MODELS if any(m in s for s in self.scores.values())]
        lines = [f"{'coordinate':<14}" + "".join(f"{m:>12}" for m in models)]
        for owner, score in self.scores.items():
            cells = "".join(f"{score[m]:11.4g}{'*' if self.choice[owner] == m else ' '}"
                            if m in score else f"{'':12}" for m in models)
            lines.append(f"{owner:<14}{cells}")
        return "\n".join(lines)


def _rows(robot: Robot) -> dict[str, int]:
    """``owner → output row`` of each coordinate with friction (its index in its space)."""
    out = {}
    for term in robot.terms:
        owner = getattr(term, "owner", None)
        if owner is not None and owner in friction_models(robot) and term.space != "tree":
            out[owner] = term.rows[0]
    return out


def _fresh(estimator: Estimator) -> Estimator:
    return type(estimator)(**estimator.get_params())


def _fit(data: IdentificationData, estimator: Estimator, **options
         ) -> tuple[Robot, Estimator, FrictionFit | None]:
    if not nonlinear_terms(data.robot):
        return data.robot, estimator.fit(data), None
    fit = identify_friction(data, estimator, **options)
    return fit.robot, fit.estimator, fit


def select_friction(robot: Robot, train: Recording | Sequence[Recording],
                    valid: Recording, *, candidates: Sequence[str] = FRICTION_MODELS,
                    estimator: Estimator | None = None, processing: Processing | None = None,
                    tolerance: float = 0.01,
                    bounds: tuple[float, float] | Mapping[str, tuple[float, float]] = BOUNDS,
                    start: float | Mapping[str, float] | None = None,
                    max_evaluations: int = 60) -> FrictionChoice:
    """Choose each coordinate's friction model by its validation error.

    Parameters
    ----------
    robot
        A robot whose joints or motors have Coulomb friction.
    train, valid
        Recordings to identify from, and a held-out recording to validate on.
    candidates
        Models among :data:`~dynid.models.friction.FRICTION_MODELS`.
    estimator
        Estimator of the linear parameters (default :class:`~dynid.identify.WLS`); each fit
        uses a fresh one with its settings.
    processing
        Processing of the recordings (default: chosen for the training data, then kept).
    tolerance
        A more complex model is chosen only when its validation RMSE is below
        ``(1 − tolerance)`` times that of every simpler one.
    bounds, start, max_evaluations
        Settings of :func:`~dynid.identify.friction.identify_friction` for every fit.

    Examples
    --------
    >>> choice = select_friction(robot, [run1], run2)                # doctest: +SKIP
    >>> choice.choice                                                # doctest: +SKIP
    {'joint1': 'stribeck', 'joint2': 'coulomb', ...}
    >>> print(choice.table())                                        # doctest: +SKIP
    """
    candidates = tuple(candidates)
    unknown = [c for c in candidates if c not in FRICTION_MODELS]
    if unknown or not candidates:
        raise ModelError(f"candidates: expected friction models among "
                         f"{', '.join(FRICTION_MODELS)}, found {list(candidates)}; e.g. "
                         "candidates=('coulomb', 'stribeck')")
    if not (0 <= tolerance < 1):
        raise ModelError(f"tolerance: expected a fraction in [0, 1), found {tolerance}; e.g. "
                         "tolerance=0.01")
    if not friction_models(robot):
        raise ModelError(f"select_friction: robot {robot.name} has no Coulomb friction to "
                         "choose a model for; give its joints friction (coulomb) in the robot "
                         "file")
    if not isinstance(valid, Recording):
        raise DataError(f"valid: expected one Recording held out from the training, found "
                        f"{type(valid).__name__}")
    estimator = estimator if estimator is not None else WLS()
    options = {"bounds": bounds, "start": start, "max_evaluations": max_evaluations}
    order = [m for m in FRICTION_MODELS if m in candidates]
    data = IdentificationData(with_friction(robot, order[0]), train, processing=processing)
    owners, rows = list(friction_models(robot)), _rows(robot)

    def rmse(models) -> np.ndarray:
        return _candidate(data.with_robot(with_friction(robot, models)), estimator, valid,
                          options, models)[0]

    def score(errors: np.ndarray, owner: str) -> float:
        j = rows.get(owner)
        return float(errors[j]) if j is not None else float(np.sqrt(np.mean(errors ** 2)))

    # First pass: every coordinate with the same model.
    errors = {m: rmse(m) for m in order}
    choice = {o: _pick({m: score(errors[m], o) for m in order}, order, tolerance)
              for o in owners}
    # Second pass: each coordinate's alternatives with the others at their choice, so that a
    # wrong model elsewhere does not weigh on its error.
    scores = {o: {m: score(errors[m], o) for m in order} for o in owners}
    final = None
    if len(owners) > 1 and len(order) > 1:
        first = dict(choice)
        final = _candidate(data.with_robot(with_friction(robot, first)), estimator, valid,
                           options, None)
        for owner in owners:
            scores[owner] = {choice[owner]: score(final[0], owner)}
            for m in order:
                if m != choice[owner]:
                    scores[owner][m] = score(rmse({**choice, owner: m}), owner)
        choice = {o: _pick(scores[o], order, tolerance) for o in owners}
        if choice != first:
            final = None
    if final is None:
        final = _candidate(data.with_robot(with_friction(robot, choice)), estimator, valid,
                           options, None)
    fitted, est, fit = final[1:]
    est.result_.solver.setdefault("friction", {"models": choice})
    est.result_.solver["friction"]["selection"] = {
        "validation_rmse": {m: [float(x) for x in e] for m, e in errors.items()},
        "scores": scores, "tolerance": float(tolerance)}
    return FrictionChoice(choice, scores, errors, tuple(robot.output_names), fitted, est,
                          validate(fitted, est.result_, valid), fit)


def _pick(score: dict[str, float], order: list[str], tolerance: float) -> str:
    """The simplest model whose score is below ``(1 − tolerance)`` times every simpler one's
    (models in ``order``, simplest first)."""
    ranked = [m for m in order if m in score]
    best = ranked[0]
    for i, m in enumerate(ranked[1:], 1):
        if score[m] < (1 - tolerance) * min(score[s] for s in ranked[:i]):
            best = m
    return best


def _candidate(data: IdentificationData, estimator: Estimator, valid: Recording,
               options: dict, label) -> tuple[np.ndarray, Robot, Estimator, FrictionFit | None]:
    """The validation RMSE (n,) of the model of ``data`` and its fit. With a ``label`` (a
    candidate's models), only the warnings of its friction velocities are shown: a wrong
    candidate's residual is not white, as expected."""
    if label is None:
        fitted, est, fit = _fit(data, _fresh(estimator), **options)
        return validate(fitted, est.result_, valid).rmse, fitted, est, fit
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted, est, fit = _fit(data, _fresh(estimator), **options)
        errors = validate(fitted, est.result_, valid).rmse
    for w in caught:
        if str(w.message).startswith("friction"):
            warnings.warn(f"select_friction, candidate {label}: {w.message}", DynidWarning,
                          stacklevel=3)
    return errors, fitted, est, fit
