"""Constraint groups of the physically consistent fit: each link's pseudo-inertia, centre-of-mass
box and mass bounds, the total mass and the other parameters' bounds, each with a function that
says how far a parameter vector misses it (to name the groups that make a problem infeasible
and those active at the estimate)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import DataError
from ..models import Robot
from .physical import PSEUDO, com_boxes, lmi_scaling, pseudo_inertia

__all__ = ["constraint_groups", "resolve_boxes", "resolve_mass_bounds", "undetermined_masses"]


def constraint_groups(robot: Robot, theta, *, epsilon: float, margin: float, boxes: dict,
                      masses: dict, total_mass: tuple[float, float] | None
                      ) -> dict[str, tuple[list, object]]:
    """Constraint groups of the physically consistent fit over the cvxpy variable ``theta``:
    name → (cvxpy constraints, function giving how far a parameter vector misses the group,
    in its own units). Each link's (and identified body's) pseudo-inertia ≽ ``epsilon`` +
    ``margin``; its centre of mass in its box (``boxes``: link → corners) and its mass
    within ``masses`` (link → bounds), both by ``margin``; the ``total_mass`` bounds; and
    every other parameter group's bounds."""
    import cvxpy as cp

    params = robot.parameters
    groups: dict[str, tuple[list, object]] = {}
    eps = epsilon + margin
    for link in params.links:
        idx = params.link_block(link)
        J = cp.reshape(PSEUDO @ theta[idx], (4, 4), order="F")
        # T J T ≽ ε T² is J ≽ ε I; T (from the prior's mass and radius of gyration) makes
        # the prior's scaled pseudo-inertia about the identity, which first-order solvers
        # need to converge (SCS: tens of times fewer iterations).
        T = lmi_scaling(robot.prior[idx])
        groups[f"pseudo-inertia {link}"] = (
            [T @ J @ T >> eps * T @ T],
            lambda th, idx=idx: epsilon - np.linalg.eigvalsh(
                pseudo_inertia(th[idx]))[0])
        m, h = theta[idx[0]], theta[idx[1:4]]
        if link in boxes:
            lo, hi = boxes[link]
            groups[f"COM box {link}"] = (
                [h - m * lo >= margin, m * hi - h >= margin],
                lambda th, idx=idx, lo=lo, hi=hi: float(np.max(np.r_[
                    th[idx[0]] * lo - th[idx[1:4]], th[idx[1:4]] - th[idx[0]] * hi])))
        if link in masses:
            lo, hi = masses[link]
            groups[f"mass bounds {link}"] = (
                [m >= lo, m <= hi], lambda th, i=idx[0], lo=lo, hi=hi: max(lo - th[i],
                                                                           th[i] - hi))
    if total_mass is not None:
        lo, hi = total_mass
        im = params.indices(f"{k}.m" for k in params.links)
        w = robot.link_counts  # a shared block's mass counts once per link carrying it
        total = w @ theta[im]
        groups["total mass"] = ([total >= lo, total <= hi],
                                lambda th, lo=lo, hi=hi: max(lo - w @ th[im], w @ th[im] - hi))
    lower, upper = params.lower, params.upper
    for group in sorted({p.group for p in params if p.group != "link"}):
        idx = params.where(group=group)
        lo, hi = idx[np.isfinite(lower[idx])], idx[np.isfinite(upper[idx])]
        cons = ([theta[lo] >= lower[lo]] if len(lo) else []) + \
            ([theta[hi] <= upper[hi]] if len(hi) else [])
        if cons:
            groups[f"{group} bounds"] = (cons, lambda th, lo=lo, hi=hi: float(np.max(
                np.r_[lower[lo] - th[lo], th[hi] - upper[hi], -np.inf])))
    return groups

def resolve_boxes(robot: Robot, com_box: str | Mapping | None, com_margin: float) -> dict:
    """Centre-of-mass boxes per link: none, the automatic ones (:func:`com_boxes`), or those
    with the given ones replacing theirs."""
    if com_box is None:
        return {}
    auto = com_boxes(robot, com_margin)
    if isinstance(com_box, str):
        if com_box != "auto":
            raise DataError(f"com_box: expected 'auto', a mapping or None, found {com_box!r}")
        return auto
    unknown = set(com_box) - set(auto)
    if unknown:
        raise DataError(f"com_box: unknown links {sorted(unknown)}; links are {list(auto)}")
    out = dict(auto)
    for link, (lo, hi) in com_box.items():
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        if lo.shape != (3,) or hi.shape != (3,) or np.any(lo >= hi):
            raise DataError(f"com_box[{link!r}]: expected lower and upper corners (3,) with "
                            f"lower < upper, found {lo} and {hi}")
        out[link] = (lo, hi)
    return out

def resolve_mass_bounds(robot: Robot, mass_bounds: float | Mapping | None) -> dict:
    """Mass bounds per link: none, ``(1 ± r)·prior`` for every link, or the given ones."""
    params = robot.parameters
    if mass_bounds is None:
        return {}
    if isinstance(mass_bounds, int | float):
        r = float(mass_bounds)
        return {link: ((1 - r) * params[f"{link}.m"].prior, (1 + r) * params[f"{link}.m"].prior)
                for link in params.links}
    unknown = set(mass_bounds) - set(params.links)
    if unknown:
        raise DataError(f"mass_bounds: unknown links {sorted(unknown)}; links are "
                        f"{list(params.links)}")
    return {k: (float(lo), float(hi)) for k, (lo, hi) in mass_bounds.items()}


def undetermined_masses(robot: Robot, B: np.ndarray, theta: np.ndarray, masses: dict,
                        total_mass: tuple[float, float] | None) -> str:
    """A warning's text when the fit placed link masses that the data do not determine, far
    from their priors; else ``""``.

    A link's mass that enters no base parameter (its column of ``B``, the standard-to-base
    map, is zero: e.g. the first link of an arm whose first axis is vertical) is placed by
    the constraints alone; without a mass bound (``masses``) or a ``total_mass`` it may come
    out anywhere the pseudo-inertia allows, hundreds of kilograms on a 16 kg arm. Named when it
    lies outside half to twice its prior."""
    if total_mass is not None:
        return ""
    params = robot.parameters
    scale = np.abs(B).max()
    found = []
    for link in params.links:
        i = params.index(f"{link}.m")
        prior, value = params[f"{link}.m"].prior, float(theta[i])
        if link in masses or np.abs(B[:, i]).max() > 1e-9 * scale or prior <= 0:
            continue
        if not 0.5 * prior <= value <= 2 * prior:
            found.append(f"{link} {value:.4g} kg (prior {prior:.4g} kg)")
    if not found:
        return ""
    return ("physically consistent estimate: the masses of " + ", ".join(found) + " enter no "
            "base parameter, so the data do not determine them and the constraints alone "
            "placed them; bound them, e.g. PhysicallyConsistent(mass_bounds=0.3) (±30 % of the "
            "prior) or total_mass=(lo, hi), before reading masses from this estimate")
