"""The uncertainty of a constrained estimate: the constraints a physically consistent estimate
meets with equality, the subspace of base parameters they leave free, and a bootstrap under
the constraints.

At the solution of a constrained least-squares problem some constraints are active: a link's
pseudo-inertia with eigenvalues at ``ε`` (several at once for a link pressed towards a rod or
a point, whose face keeps the whole eigenspace at ``ε``: :func:`face_rows`), a centre of mass
on its box, a friction at zero...
Conditional on that active set the estimate is the least-squares estimate on the face where
they hold, ``C θ = d`` (their linearization), and its covariance is the unconstrained one
restricted to the base-parameter directions ``B null(C)`` that the face leaves free
(:meth:`~dynid.identify.system.JointSystem.covariance` with a subspace): directions along which
the data move the estimate without leaving the face. Where the truth lies off the face, the
estimate pressed against it errs less than the unconstrained covariance says and more than the
restricted one says; :func:`bootstrap` follows it by solving the constrained problem again for
data drawn about the estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import scipy.linalg

from ..errors import SolverError
from ..models import BaseParameters, Robot
from .physical import PSEUDO, pseudo_inertia

__all__ = ["active_constraints", "bootstrap", "bootstrap_draws", "face_rows",
           "floor_eigenspace", "floor_links", "floor_move", "free_subspace", "typical_magnitudes"]

#: A constraint is active when its slack is below this fraction of its scale.
TOLERANCE = 1e-5


def typical_magnitudes(priors: np.ndarray) -> np.ndarray:
    """A magnitude per parameter (p): its prior's, at least a thousandth of the largest."""
    return np.maximum(np.abs(priors), 1e-3 * max(np.abs(priors).max(), 1e-9))


def active_constraints(robot: Robot, theta: np.ndarray, *,
                       epsilon: float, boxes: Mapping, masses: Mapping,
                       total_mass: tuple[float, float] | None, margin: float = 0.0
                       ) -> tuple[np.ndarray, list[str]]:
    """Gradients (k, p) of the constraints active at the standard parameters ``theta`` and
    their names.

    A pseudo-inertia's eigenvalues at its floor ``f = ε + margin`` (the floor the solver met,
    ``margin`` its tightening), those with ``λ − f ≤ max(TOLERANCE · λ_max, f)``, span an
    eigenspace ``U`` (4, k); the face of ``J ≽ f I`` through the estimate keeps
    ``Uᵀ J U = f I``, whose k(k+1)/2 entries ``u_iᵀ J u_j`` (i ≤ j) give one row each,
    ``∂(u_iᵀ J u_j)/∂θ``: the off-diagonal ones hold where several eigenvalues sit at the
    floor together (a link pressed towards a point or a rod). The slack test is relative to
    the link's largest eigenvalue and to the floor itself, so that a light link and a heavy
    one are judged alike. Centre-of-mass boxes, mass bounds, the total mass and the
    parameter bounds give their linear rows when their slack is below ``TOLERANCE`` of
    their range.
    """
    params = robot.parameters
    p = len(params)
    rows: list[np.ndarray] = []
    names: list[str] = []

    def add(name: str, index, values) -> None:
        row = np.zeros(p)
        row[index] = values
        rows.append(row)
        names.append(name)

    for link in params.links:
        idx = params.link_block(link)
        block = theta[idx]
        for row in face_rows(pseudo_inertia(block), epsilon + margin):
            add(f"pseudo-inertia {link}", idx, row)
        m, h = block[0], block[1:4]
        if link in boxes:
            lo, hi = boxes[link]
            for axis, name in enumerate("xyz"):
                room = TOLERANCE * abs(m) * (hi[axis] - lo[axis])
                if h[axis] - m * lo[axis] <= room:
                    add(f"COM box {link} {name} low", idx[[0, 1 + axis]], [-lo[axis], 1.0])
                if m * hi[axis] - h[axis] <= room:
                    add(f"COM box {link} {name} high", idx[[0, 1 + axis]], [hi[axis], -1.0])
        if link in masses:
            lo, hi = masses[link]
            room = TOLERANCE * max(abs(hi), abs(lo), 1e-300)
            if m - lo <= room or hi - m <= room:
                add(f"mass bounds {link}", idx[0], 1.0)
    if total_mass is not None:
        im = params.indices(f"{k}.m" for k in params.links)
        total = robot.link_counts @ theta[im]
        room = TOLERANCE * max(abs(v) for v in total_mass)
        if total - total_mass[0] <= room or total_mass[1] - total <= room:
            add("total mass", im, robot.link_counts)
    lower, upper = params.lower, params.upper
    typical = typical_magnitudes(params.priors)
    for i, par in enumerate(params):
        if par.group == "link":
            continue
        room = TOLERANCE * max(typical[i], abs(lower[i]) if np.isfinite(lower[i]) else 0.0)
        if (np.isfinite(lower[i]) and theta[i] - lower[i] <= room) or \
                (np.isfinite(upper[i]) and upper[i] - theta[i] <= room):
            add(f"bound {par.name}", i, 1.0)
    return np.array(rows).reshape(-1, p), names


def floor_eigenspace(J: np.ndarray, floor: float) -> np.ndarray:
    """Orthonormal eigenvectors (4, k) of the pseudo-inertia ``J`` whose eigenvalues are at
    ``floor``: ``λ − floor ≤ max(TOLERANCE · λ_max, floor)``."""
    w, V = np.linalg.eigh(J)
    return V[:, w - floor <= max(TOLERANCE * max(w.max(), 0.0), floor, 1e-300)]


def face_rows(J: np.ndarray, floor: float) -> np.ndarray:
    """Rows (k(k+1)/2, 10) of the face of ``J ≽ floor · I`` through ``J``: the gradients
    with respect to the link's ten parameters of ``u_iᵀ J u_j`` (i ≤ j) over the eigenspace
    at the floor (:func:`floor_eigenspace`).

    Examples
    --------
    >>> J = np.diag([1e-6, 1e-6, 0.5, 1.0])     # two eigenvalues at the floor: three rows
    >>> face_rows(J, 1e-6).shape
    (3, 10)
    """
    U = floor_eigenspace(J, floor)
    k = U.shape[1]
    pairs = [(i, j) for i in range(k) for j in range(i, k)]
    # u_iᵀ J u_j = (u_j ⊗ u_i)ᵀ vec(J), vec column-major; symmetrized over i, j.
    return np.array([0.5 * (np.kron(U[:, j], U[:, i]) + np.kron(U[:, i], U[:, j])) @ PSEUDO
                     for i, j in pairs]).reshape(-1, PSEUDO.shape[1])


def free_subspace(base_matrix: np.ndarray, rows: np.ndarray, priors: np.ndarray
                  ) -> np.ndarray | None:
    """Orthonormal basis (b, r) of the base-parameter directions that the active constraints
    ``rows`` (k, p) leave free, ``B null(C)``; ``None`` when they leave every direction free.

    Parameters are scaled by their typical magnitudes (from the ``priors`` (p)) first, so that
    the rank decisions do not depend on units.
    """
    if not len(rows):
        return None
    typical = typical_magnitudes(priors)
    B = base_matrix * typical
    C = rows * typical
    C = C / np.linalg.norm(C, axis=1, keepdims=True)
    null = scipy.linalg.null_space(C, rcond=1e-10)
    if null.shape[1] == 0:
        return np.zeros((B.shape[0], 0))
    # Base directions are compared in the scale of the base parameters' own columns.
    V = B @ null
    U, s, _ = np.linalg.svd(V, full_matrices=False)
    rank = int(np.sum(s > 1e-10 * max(s.max(), 1e-300)))
    if rank == B.shape[0]:
        return None
    return U[:, :rank]


def floor_links(base_matrix: np.ndarray, rows: np.ndarray, names: list[str],
                priors: np.ndarray) -> list[str]:
    """The links whose pseudo-inertias, pressed against the floor, restrict the
    base-parameter directions, from the active constraints ``rows`` and their ``names``
    (:func:`active_constraints`): those that do on their own, or every pressed link when only
    together they do; ``[]`` when the floor leaves the base parameters free."""
    faces: dict[str, list[np.ndarray]] = {}
    for row, name in zip(rows, names, strict=True):
        if name.startswith("pseudo-inertia "):
            faces.setdefault(name.removeprefix("pseudo-inertia "), []).append(row)
    if not faces or free_subspace(base_matrix, np.vstack([r for f in faces.values() for r in f]),
                                  priors) is None:
        return []
    alone = [link for link, face in faces.items()
             if free_subspace(base_matrix, np.array(face), priors) is not None]
    return alone or list(faces)


def floor_move(robot: Robot, base: BaseParameters, theta: np.ndarray, base_cov: np.ndarray,
               floorless: Callable[[], np.ndarray], *, active: tuple[np.ndarray, list[str]],
               epsilon: float) -> tuple[np.ndarray, dict, str | None]:
    """The bias ``d dᵀ`` (b, b) of the pseudo-inertias' floor ``epsilon`` at the standard
    parameters ``theta``, the diagnostics that describe it and a warning, if any.

    Where links pressed against the floor restrict the base parameters (:func:`floor_links`
    of the ``active`` constraints' rows and names), ``d = B (θ − θ₀)`` is the move of the base
    parameters from ``θ₀ = floorless()``, the estimate with the floor at zero (only the
    solver's margin left); else ``d = 0``. A move beyond
    half the σ of ``base_cov`` gives a warning naming the links: the data put them lighter
    than ``epsilon`` allows (a truth outside the constraints, e.g. a massless link). A
    ``floorless`` that raises :class:`~dynid.errors.SolverError` gives ``d = 0`` and a
    warning that says so.
    """
    zero = np.zeros_like(base_cov)
    links = floor_links(base.matrix, *active, robot.parameters.priors)
    if not links:
        return zero, {}, None
    try:
        d = base.matrix @ (theta - floorless())
    except SolverError as exc:
        return zero, {}, (f"physically consistent estimate: links pressed against epsilon "
                          f"({', '.join(links)}) restrict the base parameters, and the fit "
                          f"with no floor that measures its move failed ({exc}); the σ leave "
                          "that move out")
    found = {"epsilon_links": links, "epsilon_shift": d}
    sigma = np.sqrt(np.clip(np.diag(base_cov), 1e-300, None))
    worst = int(np.argmax(np.abs(d) / sigma))
    note = None
    if abs(d[worst]) > 0.5 * sigma[worst]:
        note = (f"physically consistent estimate: the pseudo-inertias' floor epsilon="
                f"{epsilon:g} moves the base parameter {base.names[worst]!r} by "
                f"{abs(d[worst]) / sigma[worst]:.1f} σ; the links pressed against it "
                f"({', '.join(links)}) are lighter in the data than epsilon allows (a truth "
                "outside the constraints, e.g. a massless link, or too large an epsilon). "
                "The σ hold that move as a bias (diagnostics 'epsilon_shift'); give a "
                "smaller floor, e.g. PhysicallyConsistent(epsilon=1e-9), or check those links")
    return np.outer(d, d), found, note


def bootstrap(solve: Callable[[np.ndarray], np.ndarray], fitted: np.ndarray, root: np.ndarray,
              estimate: np.ndarray, *, draws: int, seed: int) -> tuple[np.ndarray, int]:
    """Second moment about ``estimate`` (b,) of ``solve(z*)`` over ``draws`` data
    ``z* = fitted + root ξ`` (:func:`bootstrap_draws`), and the number of draws solved."""
    solved = bootstrap_draws(solve, fitted, root, draws=draws, seed=seed)[0]
    spread = solved - estimate
    return spread.T @ spread / len(solved), len(solved)


def bootstrap_draws(solve: Callable[[np.ndarray], np.ndarray], fitted: np.ndarray,
                    root: np.ndarray, *, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``solve(z*)`` (k, b) and the data ``z*`` (k, m) of ``draws`` draws
    ``z* = fitted + root ξ`` (``ξ`` standard normal, ``root rootᵀ`` the covariance of the
    compressed data): a draw the solver cannot finish (:class:`~dynid.errors.SolverError`) is
    left out, more than a tenth of them raises."""
    rng = np.random.default_rng(seed)
    solved, data, failed = [], [], []
    for _ in range(draws):
        z = fitted + root @ rng.standard_normal(root.shape[1])
        try:
            solved.append(solve(z))
            data.append(z)
        except SolverError as exc:
            failed.append(str(exc))
    if len(failed) > draws // 10:
        raise SolverError(f"bootstrap: {len(failed)} of {draws} draws failed (first: "
                          f"{failed[0]}); use covariance='conditional' or 'unconstrained'")
    return np.array(solved), np.array(data)
