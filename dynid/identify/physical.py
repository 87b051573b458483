"""Physical consistency of a link's ten inertial parameters.

The pseudo-inertia ``J = [[½ tr(Ī) 1 − Ī, h], [hᵀ, m]]`` (Ī about the link frame's origin,
``h = m c``) is positive definite exactly when the parameters come from a positive mass
distribution (Wensing, Kim and Slotine, RA-L 2018); :func:`com_boxes` gives each link a box for
its centre of mass from the robot's description, and :func:`polish` moves a solver's answer
that misses these constraints by its accuracy onto them.
"""

from __future__ import annotations

import numpy as np

from ..models import Robot

__all__ = ["PSEUDO", "com_boxes", "lmi_scaling", "polish", "pseudo_inertia"]


def pseudo_inertia(block: np.ndarray) -> np.ndarray:
    """Pseudo-inertia (4, 4) of one link's ten parameters (Pinocchio order)."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = block
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    J[:3, 3] = J[3, :3] = hx, hy, hz
    J[3, 3] = m
    return J


# vec(J) (column-major) = PSEUDO @ block, a constant (16, 10) map.
PSEUDO = np.column_stack([pseudo_inertia(e).reshape(-1, order="F") for e in np.eye(10)])


def lmi_scaling(block: np.ndarray) -> np.ndarray:
    """Diagonal scaling (4, 4) of a link's pseudo-inertia from its prior parameters."""
    Jp = pseudo_inertia(block)
    mass = Jp[3, 3] if Jp[3, 3] > 0 else 1.0
    radius = np.sqrt(np.trace(Jp[:3, :3]) / mass) if np.trace(Jp[:3, :3]) > 0 else 0.1
    radius = max(radius, 1e-3)
    return np.diag([1 / radius, 1 / radius, 1 / radius, 1.0]) / np.sqrt(mass)


def com_boxes(robot: Robot, margin: float = 0.1) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """A box per link for its centre of mass, from the description: the bounding box, in the
    link frame, of the frame's origin, the origins of the joints and frames it carries and
    the prior centre of mass, grown by ``margin`` metres on every side (links sharing their
    parameters: one box holding each one's points; massless links: none); and per identified
    body fixed to a link, the box of its own frame's origin and its prior centre of mass."""
    model = robot.tree.model
    params = robot.parameters
    out = {}
    points: dict[str, list[np.ndarray]] = {}  # per parameter block: of each of its links
    for j, owner in enumerate(robot.tree.linkset.owners):
        if owner is None:  # a massless link has no parameters to bound
            continue
        jid = j + 1
        pts = points.setdefault(owner, [np.zeros(3)])
        pts += [model.jointPlacements[c].translation for c in range(1, model.njoints)
                if model.parents[c] == jid]
        pts += [f.placement.translation for f in model.frames if f.parentJoint == jid]
        block = robot.prior[params.link_block(owner)]
        if block[0] > 0:
            pts.append(block[1:4] / block[0])
    for owner, pts in points.items():
        out[owner] = _box(pts, margin)
    for body in robot.bodies:
        if not body.known:
            block = robot.prior[params.link_block(body.name)]
            out[body.name] = _box([np.zeros(3)] + ([block[1:4] / block[0]] if block[0] > 0
                                                   else []), margin)
    return out


def _box(points: list[np.ndarray], margin: float) -> tuple[np.ndarray, np.ndarray]:
    pts = np.array(points)
    return pts.min(axis=0) - margin, pts.max(axis=0) + margin


def polish(robot: Robot, value: np.ndarray, epsilon: float, tolerance: float
           ) -> tuple[np.ndarray, float]:
    """Move a solution that misses its constraints by no more than the solver's accuracy
    (``tolerance``) onto them: bounds are clipped, and a pseudo-inertia whose smallest
    eigenvalue is below ``epsilon`` is shifted by ``d I`` (``m += d``, each diagonal inertia
    ``+= 2d``, which keeps the centre of mass between its old place and the frame origin, so
    inside its box).
    Returns the parameters and the largest shift ``d``."""
    params = robot.parameters
    lo, hi = params.lower, params.upper
    slack = 10 * tolerance * np.maximum(np.abs(value), 1.0)
    out = value.copy()
    for bound, sign in ((lo, 1), (hi, -1)):
        miss = sign * (bound - out)
        fix = np.isfinite(bound) & (miss > 0) & (miss <= slack) & np.array(
            [p.group != "link" for p in params])
        out[fix] = bound[fix]
    worst = 0.0
    for link in params.links:
        idx = params.link_block(link)
        low = np.linalg.eigvalsh(pseudo_inertia(out[idx]))[0]
        if low < epsilon:
            d = (epsilon - low) * (1 + 1e-6) + 1e-15
            out[idx[0]] += d
            out[idx[[4, 6, 9]]] += 2 * d  # Ixx, Iyy, Izz
            worst = max(worst, d)
    return out, worst
