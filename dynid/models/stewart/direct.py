"""Direct kinematics of a Stewart–Gough platform: the pose from the six leg lengths.

Newton–Raphson on ``l(x) = L`` with the analytic Jacobian ``K = ∂l/∂x``, stopped when every leg
length is within ``tolerance`` of its measured value: set it below the resolution of the leg
sensors (Abdellatif 2 and 3.3), so that the pose's numerical error stays under what the sensors
can tell. The batch is solved block by block along the trajectory, vectorised within a block:
each block starts from the last solved pose, moved to first order towards each sample's
lengths (``x₀ = x_p + K(x_p)⁻¹ (L − L_p)``), so a smooth motion needs two or three iterations
and stays on the assembly branch of its start. Samples whose start is too far off are solved
again from the home pose; one that still does not converge raises, naming its time.
"""

from __future__ import annotations

import numpy as np

from ...errors import DataError
from .geometry import StewartGeometry

__all__ = ["direct_kinematics"]

#: Samples solved together (and started from one predicted pose).
BLOCK = 512


def _where(k: int, t: np.ndarray | None) -> str:
    return f"sample {k}" + ("" if t is None else f" (t = {t[k]:.6g} s)")


def _newton(geometry: StewartGeometry, X: np.ndarray, L: np.ndarray, tolerance: float,
            max_iterations: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newton iterations from ``X`` (B, 6) towards lengths ``L`` (B, 6): the poses, whether
    each converged, and the smallest largest-leg residual reached (m)."""
    X = X.copy()
    active = np.arange(X.shape[0])
    worst = np.full(X.shape[0], np.inf)  # the residual of the last iterate
    best = np.full(X.shape[0], np.inf)  # the smallest residual reached
    for _ in range(max_iterations + 1):
        legs = geometry.legs(X[active])
        res = legs.length - L[active]
        worst[active] = np.abs(res).max(axis=1)
        best[active] = np.fmin(best[active], worst[active])
        done = worst[active] < tolerance
        active, K, res = active[~done], legs.K[~done], res[~done]
        if not len(active):
            break
        with np.errstate(all="ignore"):
            try:
                step = np.linalg.solve(K, res[..., None])[..., 0]
            except np.linalg.LinAlgError:
                step = np.einsum("nij,nj->ni", np.linalg.pinv(K), res)
        X[active] -= step
        finite = np.all(np.isfinite(X[active]), axis=1) & (np.abs(X[active, 3:]) < 10).all(axis=1)
        if not np.all(finite):  # diverged: stop iterating these
            worst[active[~finite]] = np.inf
            active = active[finite]
    return X, worst < tolerance, best


def direct_kinematics(geometry, lengths: np.ndarray, *, t: np.ndarray | None = None,
                      start: np.ndarray | None = None, tolerance: float | None = None,
                      max_iterations: int = 30, strict: bool = True) -> np.ndarray:
    """Platform poses (N, 6) of leg lengths (N, 6), by Newton–Raphson along the samples.

    Parameters
    ----------
    geometry
        A :class:`~dynid.models.stewart.geometry.StewartGeometry`, or a robot whose
        transmission is a :class:`~dynid.models.stewart.legs.LegTransmission`.
    lengths
        Leg lengths (m), one row per sample; the samples of a trajectory in time order.
    t
        Times of the samples (s), to name them in errors.
    start
        Pose (6,) to start the first sample from (default: the geometry's home pose).
    tolerance
        Largest leg-length residual (m) accepted: set it below the sensors' resolution
        (default: the robot's :attr:`~dynid.models.stewart.legs.LegTransmission.tolerance`,
        else 1e-10 m).
    max_iterations
        Newton iterations per attempt.
    strict
        Raise :class:`~dynid.errors.DataError` on a sample out of the stroke or that does not
        converge (naming its index and time); else give it a row of NaN.

    Examples
    --------
    >>> robot = dynid.load_robot("hexapod")
    >>> legs = robot.closure.legs(poses).length            # inverse kinematics (N, 6)
    >>> np.abs(direct_kinematics(robot, legs) - poses).max() < 1e-8
    True
    """
    if not isinstance(geometry, StewartGeometry):
        transmission = getattr(geometry, "transmission", None)
        geometry = getattr(transmission, "geometry", None)
        if tolerance is None and hasattr(transmission, "tolerance"):
            tolerance = transmission.tolerance
        if not isinstance(geometry, StewartGeometry):
            raise DataError("direct_kinematics: expected a StewartGeometry or a Stewart "
                            "platform robot (dynid.load_robot('hexapod')) as first argument")
    L = np.asarray(lengths, dtype=float)
    if L.ndim == 1 and L.shape == (6,):
        L = L[None]
    if L.ndim != 2 or L.shape[1] != 6:
        raise DataError(f"direct_kinematics lengths: expected shape (N, 6), m, found "
                        f"{np.shape(lengths)}; e.g. direct_kinematics(robot, np.full((1, 6), "
                        f"{np.mean(geometry.stroke):.3g}))")
    if t is not None:
        t = np.asarray(t, dtype=float)
        if t.shape != (L.shape[0],):
            raise DataError(f"direct_kinematics t: expected {L.shape[0]} times, one per "
                            f"sample, found shape {t.shape}")
    tolerance = 1e-10 if tolerance is None else tolerance
    if not 0 < tolerance < np.inf:
        raise DataError(f"direct_kinematics tolerance: expected a length > 0 (m), found "
                        f"{tolerance}")
    lo, hi = geometry.stroke
    outside = ~np.all((lo <= L) & (hi >= L), axis=1)  # also catches NaN
    if strict and np.any(outside):
        k = int(np.argmax(outside))
        i = int(np.argmax(~((L[k] >= lo) & (L[k] <= hi))))
        raise DataError(f"direct_kinematics: at {_where(k, t)} leg {i + 1} has length "
                        f"{L[k, i]:.6g} m, outside the stroke [{lo:g}, {hi:g}] m; check that "
                        "the lengths are in m and that the encoders' zero is the leg length at "
                        "position 0")
    x_prev = np.asarray(geometry.home if start is None else start, dtype=float)
    if x_prev.shape != (6,) or not np.all(np.isfinite(x_prev)):
        raise DataError(f"direct_kinematics start: expected a finite pose of 6 values, found "
                        f"{np.shape(start)}")
    out = np.full((L.shape[0], 6), np.nan)
    L_prev = geometry.legs(x_prev[None]).length[0]
    for s in range(0, L.shape[0], BLOCK):
        sl = np.arange(s, min(s + BLOCK, L.shape[0]))
        sl = sl[~outside[sl]]
        if not len(sl):
            continue
        K = geometry.legs(x_prev[None]).K[0]
        try:
            X0 = x_prev + np.linalg.solve(K, (L[sl] - L_prev).T).T
        except np.linalg.LinAlgError:
            X0 = np.broadcast_to(x_prev, (len(sl), 6))
        X, ok, worst = _newton(geometry, X0, L[sl], tolerance, max_iterations)
        if not np.all(ok):  # started too far off: again from the home pose
            home = np.broadcast_to(geometry.home, (int(np.sum(~ok)), 6))
            X[~ok], ok[~ok], worst[~ok] = _newton(geometry, home, L[sl][~ok], tolerance,
                                                  max_iterations)
        if strict and not np.all(ok):
            k = int(sl[np.argmax(~ok)])
            raise DataError(
                f"direct_kinematics: no pose found at {_where(k, t)} for leg lengths "
                f"{np.round(L[k], 6).tolist()} m: Newton–Raphson did not reach the tolerance "
                f"{tolerance:g} m within {max_iterations} iterations (best residual "
                f"{worst[np.argmax(~ok)]:.3g} m); the lengths may be inconsistent (no "
                "assembly, or near a singular pose), or far from the previous sample: check "
                "the leg order and the sample times")
        X[~ok] = np.nan
        out[sl] = X
        last = np.flatnonzero(ok)
        if len(last):
            x_prev, L_prev = X[last[-1]], L[sl[last[-1]]]
    return out
