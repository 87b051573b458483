"""Report sections of the methods that go beyond one fit: the essential parameters' steps (when
the result was fitted on them), an identified payload and identified drive gains."""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..identify.essential import EssentialParameters
from ..identify.gains import DriveGains
from ..identify.payload import Payload
from ..identify.result import IdentificationResult
from ..models import Robot
from .html import Cell, Section, heading, paragraph, table

__all__ = ["method_sections"]


def method_sections(robot: Robot, result: IdentificationResult, payload: Payload | None = None,
                    gains: DriveGains | None = None) -> list[Section]:
    """The sections for the essential parameters of ``result`` (if it has them), ``payload``
    and ``gains`` (when given) of ``robot``."""
    if payload is not None and not isinstance(payload, Payload):
        raise DataError(f"payload: expected a Payload, found {type(payload).__name__}; read "
                        "one with dynid.load_payload('payload.json')")
    if gains is not None and not isinstance(gains, DriveGains):
        raise DataError(f"gains: expected DriveGains, found {type(gains).__name__}; read "
                        "them with dynid.load_drive_gains('gains.json')")
    if gains is not None and tuple(gains.names) != tuple(robot.actuator_names):
        raise DataError(f"gains: of actuators {', '.join(gains.names)}; the robot's are "
                        f"{', '.join(robot.actuator_names)}: give the gains identified on "
                        f"robot {robot.name}")
    if payload is not None and tuple(payload.output_names) != tuple(robot.output_names):
        raise DataError(f"payload: identified on outputs {', '.join(payload.output_names)}; "
                        f"the robot's are {', '.join(robot.output_names)}: give the payload "
                        f"identified on robot {robot.name}")
    out = []
    essential = EssentialParameters.from_result(result)
    if essential is not None:
        out.append(Section("essential", "Essential parameters", _essential(essential)))
    if payload is not None:
        out.append(Section("payload", "Payload", _payload(payload)))
    if gains is not None:
        out.append(Section("drive-gains", "Drive gains", _gains(gains)))
    return out


def _essential(e: EssentialParameters) -> str:
    where = "the validation recordings" if e.validation == "recordings" else \
        f"the last {100 * e.holdout:g} % of each identification recording (fits on the rest)"
    rows = [[k, "(full set)" if s.removed is None else s.removed, Cell(s.kept),
             Cell(s.validation_error), Cell(s.max_relative_std, 3),
             "left out" if s.accepted and s.removed else "refused" if not s.accepted else ""]
            for k, s in enumerate(e.steps)]
    return "\n".join([
        paragraph(f"{len(e.kept)} of {len(e.names)} base parameters kept ({e.method}). The "
                  "base parameter with the largest relative σ was left out at each step "
                  f"(fixed at {e.fixed}), the others fitted again, while the overall relative "
                  f"error on {where} stayed within +{100 * e.tolerance:g} % (relative) of the "
                  "full set's. The parameters and their σ in this report are those of the "
                  "kept set fitted on all the identification data."),
        table(["step", "parameter tried", "kept", "validation error %", "max σ/|θ| %", ""], rows,
              id="essential-steps"),
        heading("Left out"),
        paragraph(", ".join(e.removed) if e.removed else "none", note=not e.removed)])


def _payload(p: Payload) -> str:
    u = p.uncertainty()
    com, com_sigma = p.com, np.sqrt(np.clip(np.diag(p.com_cov), 0.0, None))
    facts = [["link", p.parent], ["pose xyz m", ", ".join(f"{x:g}" for x in p.xyz)],
             ["pose rpy rad", ", ".join(f"{x:g}" for x in p.rpy)],
             ["mass kg", Cell(p.mass, 5)], ["σ mass kg", Cell(p.mass_sigma, 3)],
             *[[f"centre of mass {a} m", Cell(c, 5)] for a, c in zip("xyz", com, strict=True)],
             *[[f"σ centre of mass {a} m", Cell(s, 3)] for a, s in
               zip("xyz", com_sigma, strict=True)],
             ["σ from", p.covariance_method + (" with the robot's uncertainty"
                                               if p.robot_uncertainty else "")],
             ["pseudo-inertia constraint", "active" if p.fit.active else "not active"],
             ["smallest pseudo-inertia eigenvalue", Cell(p.fit.min_eigenvalue, 3)],
             ["samples", Cell(p.n_samples)]]
    rows = [[n, Cell(v, 6), Cell(s, 3), Cell(r, 3)] for n, v, s, r in
            zip(u.names, u.values, u.std, u.relative_std, strict=True)]
    return "\n".join([
        paragraph(f"Payload {p.name}: its ten inertial parameters (about its frame's origin, "
                  "in its frame) identified from runs with it, the robot's parameters from "
                  "the result."),
        table(["", "value"], facts, id="payload-facts"),
        table(["parameter", "value", "σ", "σ/|θ| %"], rows, id="payload-parameters")])


def _gains(g: DriveGains) -> str:
    rows = [[n, u, Cell(x, 6), Cell(s, 3), Cell(100 * s / abs(x), 3), Cell(sig, 3)]
            for n, u, x, s, sig in zip(g.names, g.units, g.gains, g.sigma, g.noise_sigma,
                                       strict=True)]
    payload = g.settings.get("payload", {})
    known = f" ({payload['mass']:g} kg on {payload['parent']})" \
        if {"mass", "parent"} <= set(payload) else ""
    return "\n".join([
        paragraph(f"Torque per ampere of each actuator by the payload method: two runs of "
                  f"one trajectory, without and with a known payload{known}; the payload "
                  f"moves the currents by {g.payload_effect:.0f} σ of the gains' common "
                  f"scale. {g.passes} weighted passes, {g.n_samples} samples."),
        table(["actuator", "unit", "gain", "σ", "σ %", "current noise σ A"], rows,
              id="drive-gains")])
