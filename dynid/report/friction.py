"""The report's friction section: the model of each coordinate, the sigmoid and Stribeck
velocities identified with their σ, and the validation errors that chose the models."""

from __future__ import annotations

from ..identify.result import IdentificationResult
from .html import Cell, paragraph, table

__all__ = ["friction_html"]


def friction_html(result: IdentificationResult) -> str:
    """The friction models and velocities of ``result`` (its ``solver["friction"]``)."""
    info = result.solver.get("friction") or {}
    velocities, sigma = info.get("velocities", {}), info.get("sigma", {})
    rows = []
    for owner, model in info.get("models", {}).items():
        v = velocities.get(owner)
        rows.append([owner, model, Cell(v) if v is not None else "",
                     Cell(sigma.get(owner)) if owner in sigma else "",
                     Cell(info.get("exponents", {}).get(owner)) if model == "stribeck"
                     else ""])
    parts = [paragraph("Coulomb-like friction per coordinate: sign (coulomb), f_c tanh(v/v_c) "
                       "(sigmoid) or (f_c + (f_s − f_c) exp(−|v/v_s|^δ)) sign(v) (stribeck). "
                       "The velocities are estimated by variable projection, their σ from the "
                       "Gauss–Newton linearization at the solution; the linear parameters' σ "
                       "are conditional on them."),
             table(["coordinate", "model", "velocity", "σ", "exponent δ"], rows,
                   id="friction-models")]
    if "converged" in info and not info["converged"]:
        parts.append(paragraph(f"The search did not converge in {info.get('evaluations')} "
                               "evaluations: the velocities are not at a minimum.", note=True))
    selection = info.get("selection")
    if selection and selection.get("scores"):
        scores = selection["scores"]
        models = [m for m in ("coulomb", "sigmoid", "stribeck")
                  if any(m in s for s in scores.values())]
        rows = [[owner, *(Cell(s[m]) if m in s else "" for m in models)]
                for owner, s in scores.items()]
        parts += [paragraph(f"Models chosen per coordinate by the validation RMSE of its output "
                            f"on a held-out recording, the other coordinates at their choice "
                            f"(a more complex model needs {100 * selection['tolerance']:g} % "
                            "less):"),
                  table(["coordinate", *models], rows, id="friction-selection")]
    return "\n".join(parts)
