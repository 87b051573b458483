"""The parameter values an export writes: read from a result or a vector, checked physical, or
projected onto the physically consistent set.

A link's ten parameters are physical when its pseudo-inertia
``J = [[½ tr(Ī) 1 − Ī, h], [hᵀ, m]]`` is positive semi-definite and its mass is positive (or the
whole link is massless); every other parameter written (friction, rotor inertia) must be within
its bounds (≥ 0). The projection is the Euclidean one, ``min ‖θ − θ_given‖`` under the
constraints of :class:`~dynid.identify.consistent.PhysicallyConsistent` (pseudo-inertias
≽ ε I, bounds): it is separable over the links and the bounded parameters, so the parts that
are physical keep their values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._files import excerpt
from ..errors import DataError
from ..identify.physical import pseudo_inertia
from ..identify.result import IdentificationResult, load_result
from ..models import Robot

#: Pseudo-inertia eigenvalues down to this fraction of its largest entry count as zero.
TOLERANCE = 1e-12


def parameter_vector(robot: Robot, params: object) -> np.ndarray:
    """The standard parameters (p,) of ``params``: an identification result (or its file) of
    this robot, or a vector with one value per parameter of ``robot.parameters``."""
    names = robot.parameters.names
    if isinstance(params, str | Path):
        params = load_result(params)
    if isinstance(params, IdentificationResult):
        if tuple(params.names) != names:
            extra = [n for n in params.names if n not in names]
            missing = [n for n in names if n not in params.names]
            detail = (f"the result has {extra[:4]} the robot has not, and lacks {missing[:4]}"
                      if extra or missing else "the same names in another order")
            raise DataError(
                f"result of robot {params.robot!r}: its {len(params.names)} parameters do not "
                f"match the {len(names)} of robot {robot.name!r} ({detail}); export with the "
                "robot it was identified on, e.g. write_urdf(load_robot(result.robot_source), "
                "result, 'robot.urdf')")
        return np.array(params.params, dtype=float)
    if isinstance(params, np.ndarray | list | tuple):
        try:
            theta = np.asarray(params, dtype=float)
        except (TypeError, ValueError):
            theta = None
        if theta is not None and theta.shape == (len(names),) and np.all(np.isfinite(theta)):
            return theta.copy()
        found = (f"shape {np.shape(theta)}" if theta is not None and theta.shape != (len(names),)
                 else "non-finite or non-numeric values" if theta is not None
                 else excerpt(params))
        raise DataError(f"params: expected the {len(names)} standard parameters of robot "
                        f"{robot.name!r} (robot.parameters, from {names[0]} to {names[-1]}), "
                        f"found {found}; pass an IdentificationResult or a vector such as "
                        "robot.prior")
    raise DataError(f"params: expected an IdentificationResult, a result file or a vector of "
                    f"{len(names)} values, found {type(params).__name__}")


def problems(robot: Robot, theta: np.ndarray, written: tuple[str, ...]
             ) -> list[tuple[np.ndarray, str]]:
    """The non-physical parts of ``theta``: (indices, description) per link whose parameters
    are not physical and per written parameter beyond its bounds."""
    params = robot.parameters
    out = []
    for link in params.links:
        idx = params.link_block(link)
        block = theta[idx]
        J = pseudo_inertia(block)
        scale = max(float(np.abs(J).max()), 1e-300)
        low = float(np.linalg.eigvalsh(J)[0])
        if low < -TOLERANCE * scale:
            out.append((idx, f"{link} (mass {block[0]:.6g} kg, first moment "
                             f"{np.round(block[1:4], 6).tolist()} kg·m): its pseudo-inertia has "
                             f"the eigenvalue {low:.3g} < 0, so no mass distribution has these "
                             "parameters"))
        elif block[0] <= TOLERANCE * scale and np.any(block != 0):
            out.append((idx, f"{link}: mass {block[0]:.3g} kg with a non-zero inertia; a link "
                             "with inertia has a positive mass"))
    for name in written:
        i = params.index(name)
        p = params[i]
        if not p.lower <= theta[i] <= p.upper:
            out.append((np.array([i]), f"{name} = {theta[i]:.6g} {p.unit}: expected a value in "
                                       f"[{p.lower:g}, {p.upper:g}]"))
    return out


def physical_values(robot: Robot, theta: np.ndarray, written: tuple[str, ...], *,
                    project: bool) -> tuple[np.ndarray, dict[str, tuple[float, float]], float]:
    """The values to write: ``theta`` when physical; else its projection (``project``) with the
    parameters it moved (name → (given, written)) and the distance; else raise
    :class:`~dynid.errors.DataError` naming every non-physical part."""
    bad = problems(robot, theta, written)
    if not bad:
        return theta, {}, 0.0
    if not project:
        listed = "; ".join(text for _, text in bad[:6])
        more = f" (and {len(bad) - 6} more)" if len(bad) > 6 else ""
        raise DataError(f"the parameters are not physical, so a simulator cannot use them: "
                        f"{listed}{more}. Pass project=True (dynid export --project) to write "
                        "the nearest physically consistent values (the export says how far "
                        "they moved), or identify with dynid.PhysicallyConsistent")
    from ..identify.consistent import PhysicallyConsistent

    solved, _ = PhysicallyConsistent(com_box=None).solve(robot, np.eye(len(theta)), theta)
    out = theta.copy()
    for idx, _ in bad:  # the projection is separable: the physical parts keep their values
        out[idx] = solved[idx]
    names = robot.parameters.names
    moved = {names[i]: (float(theta[i]), float(out[i])) for i in np.flatnonzero(out != theta)}
    return out, moved, float(np.linalg.norm(out - theta))
