"""The friction options of ``dynid identify``: ``--friction`` and ``--friction-bounds``.

``--friction stribeck`` (or ``sigmoid``, ``coulomb``) gives every joint or motor with Coulomb
friction that model; ``--friction joint1=stribeck,joint3=sigmoid`` sets some of them (the
others keep Coulomb friction); ``--friction auto`` chooses per coordinate by the validation
error on the last recording, held out (:func:`~dynid.identify.friction_choice.
select_friction`). Without ``--friction``, the sigmoid and Stribeck friction a robot file
declares (``friction: {model: stribeck, ...}``) is identified the same way. Sigmoid and
Stribeck velocities are identified by variable projection within ``--friction-bounds``
(:func:`~dynid.identify.friction.identify_friction`); they are stored in the result's
``solver.friction`` and the robot is rebuilt with them when the result is read again.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .._arguments import number
from ..errors import DataError, ModelError
from ..models import Robot
from ..models.friction import FRICTION_MODELS, friction_models, nonlinear_terms, with_friction
from .data import IdentificationData
from .estimators import Estimator
from .processing import Processing
from .recording import Recording

__all__ = ["add_arguments", "fit", "has_nonlinear_friction", "parse_friction"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("friction models beyond Coulomb")
    g.add_argument("--friction", default=None, metavar="MODEL|auto|JOINT=MODEL,...",
                   help=f"friction model of the joints or motors with Coulomb friction: one of "
                        f"{', '.join(FRICTION_MODELS)} for all, per joint (joint1=stribeck,"
                        "joint2=sigmoid), or auto: chosen per joint by the validation error on "
                        "the last recording, held out")
    g.add_argument("--friction-bounds", type=number(0.0, 1e6), nargs=2, default=None,
                   metavar=("LOW", "HIGH"),
                   help="bounds of the sigmoid and Stribeck velocities, rad/s or m/s "
                        "(default 0.001 1)")


def has_nonlinear_friction(robot: Robot) -> bool:
    """Whether the robot has sigmoid or Stribeck friction (from its file)."""
    return bool(nonlinear_terms(robot))


def parse_friction(spec: str, robot: Robot) -> str | dict[str, str]:
    """``"auto"``, one model for all, or ``owner → model`` from ``--friction``."""
    spec = spec.strip()
    if spec == "auto" or spec in FRICTION_MODELS:
        return spec
    have = friction_models(robot)
    out = {}
    for item in spec.split(","):
        owner, sep, model = (s.strip() for s in item.partition("="))
        if not sep:
            raise ModelError(f"--friction: {item!r} is neither a model "
                             f"({', '.join(FRICTION_MODELS)}, auto) nor JOINT=MODEL; e.g. "
                             "--friction stribeck or "
                             f"--friction {next(iter(have), 'joint1')}=stribeck")
        if model not in FRICTION_MODELS:
            raise ModelError(f"--friction: unknown model {model!r} for {owner}; expected one of "
                             f"{', '.join(FRICTION_MODELS)}, e.g. {owner}=stribeck")
        if owner not in have:
            raise ModelError(f"--friction: {owner!r} has no Coulomb friction in robot "
                             f"{robot.name} (those that have: {', '.join(have) or 'none'})")
        out[owner] = model
    return out


def fit(args: argparse.Namespace, robot: Robot, recordings: Sequence[Recording],
        processing: Processing | None, estimator: Estimator) -> tuple[Estimator, str]:
    """Fit ``estimator`` with the friction models of ``--friction``; returns it and a summary
    of the friction found."""
    from .friction import BOUNDS, identify_friction
    from .friction_choice import select_friction

    bounds = tuple(args.friction_bounds) if args.friction_bounds else BOUNDS
    if args.friction is None:  # the sigmoid and Stribeck friction of the robot file
        data = IdentificationData(robot, recordings, processing=processing)
        friction = identify_friction(data, estimator, bounds=bounds)
        return friction.estimator, friction.summary()
    spec = parse_friction(args.friction, robot)
    if spec == "auto":
        if len(recordings) < 2:
            raise DataError("--friction auto: the last recording is held out to choose the "
                            "models, so give at least two recordings (identification ones, "
                            "then the held-out one)")
        choice = select_friction(robot, list(recordings[:-1]), recordings[-1],
                                 estimator=estimator, processing=processing, bounds=bounds)
        lines = [choice.table()]
        if choice.fit is not None:
            lines.append(choice.fit.summary())
        return choice.estimator, "\n".join(lines)
    model = with_friction(robot, spec)
    data = IdentificationData(model, recordings, processing=processing)
    if not any(m != "coulomb" for m in friction_models(model).values()):
        return estimator.fit(data), "coulomb friction"
    friction = identify_friction(data, estimator, bounds=bounds)
    return friction.estimator, friction.summary()
