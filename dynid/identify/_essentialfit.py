"""Refits of a subset of the base parameters, the others fixed, on one compressed system; the
validation error of base parameters on another compressed system; and the compressed
validation systems (recordings given, or the held-out ends of the training recordings).

With ``V`` the output weighting of the estimator (``I`` for OLS, the iterated σ² for WLS, the
noise covariance for Gauss–Markov) and ``[R z]`` the triangular factor of the whitened system
``V^{-1/2} [W y]`` (b columns, built once), the estimate over the kept columns ``S`` with the
others ``F`` fixed at ``c`` is::

    θ_S = argmin ‖R_S θ_S − (z − R_F c)‖

a least-squares problem of b rows, whatever the number of samples. Its covariance is the
estimator's own (the sandwich of :meth:`~dynid.identify.system.JointSystem.covariance`
restricted to the kept columns; for Gauss–Markov ``(W_Sᵀ V⁻¹ W_S)⁻¹``), with the outputs'
residual covariance at the restricted estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..errors import DataError
from .data import CompressedData, IdentificationData, check_recording
from .recording import Recording
from .system import JointSystem

__all__ = ["Subsets", "ValidationError", "holdout_systems", "validation_system",
           "weighting_of"]


def weighting_of(estimator) -> np.ndarray:
    """The output weighting (n, n) a fitted OLS, WLS or Gauss–Markov estimator used."""
    if estimator.method == "ols":
        return np.eye(len(estimator.noise_covariance_))
    if estimator.method == "wls":
        return np.asarray(estimator.weighting_.covariance, dtype=float)
    return np.asarray(estimator.noise_covariance_, dtype=float)


class Subsets:
    """Weighted least squares over subsets of the base parameters of one compressed system.

    Parameters
    ----------
    system
        The compressed system of the base regressor.
    method
        ``"ols"``, ``"wls"`` or ``"gauss-markov"``: how the covariance is formed.
    weighting
        The output weighting ``V`` (n, n).
    fixed
        The values (b,) the parameters left out are fixed at.
    """

    def __init__(self, system: JointSystem, method: str, weighting: np.ndarray,
                 fixed: np.ndarray):
        self.system, self.method = system, method
        self.weighting = np.asarray(weighting, dtype=float)
        whitened = system.system(covariance=self.weighting)
        self.R, self.z = whitened.R, whitened.qty
        self.fixed = np.asarray(fixed, dtype=float)

    def fit(self, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The estimate (b,) with the parameters not ``kept`` (b booleans) at their fixed
        values, and its covariance (b, b) (zero rows and columns for those left out)."""
        S = np.flatnonzero(kept)
        z = self.z - self.R[:, ~kept] @ self.fixed[~kept]
        theta = self.fixed.copy()
        theta[S] = np.linalg.lstsq(self.R[:, S], z, rcond=None)[0]
        if self.method == "gauss-markov":
            noise = self.weighting
        elif self.method == "ols":
            noise = self.system.residual_covariance(theta)
        else:
            noise = self.system.residual_covariance(theta, weighting=self.weighting)
        U = np.eye(len(theta))[:, S]
        return theta, self.system.covariance(self.weighting, noise, subspace=U)

    def residual_variance(self, theta: np.ndarray, n_free: int) -> float:
        """The unweighted residual variance per row of ``theta`` fitted with ``n_free``
        parameters."""
        dof = int(self.system.rows.sum()) - n_free
        return self.system.system().residual_norm2(theta) / max(dof, 1)


class ValidationError:
    """The overall relative error ``100 ‖Ŵ θ − y‖ / ‖y‖`` (%) of base parameters on a
    compressed validation system (every row, unweighted)."""

    def __init__(self, system: JointSystem):
        self.system = system.system()
        self.norm2 = self.system.residual_norm2(np.zeros(system.n_params))
        if not self.norm2 > 0:
            raise DataError("validation: its outputs are all zero; validate on a recording "
                            "of the robot moving under load")

    def __call__(self, theta: np.ndarray) -> float:
        return float(100 * np.sqrt(self.system.residual_norm2(theta) / self.norm2))


def holdout_systems(data: CompressedData, holdout: float) -> tuple[CompressedData, JointSystem]:
    """The data without the last ``holdout`` of each recording, and the compressed system of
    those ends (every row)."""
    if not isinstance(data, IdentificationData):
        raise DataError("validation: compressed data keep no recordings to hold some out; "
                        "give validation data, e.g. essential_parameters(data, validation="
                        "CompressedData.from_chunks(robot, chunks))")
    starts, ends = [], []
    for rec in data.processed:
        cut = round(rec.n_samples * (1 - holdout))
        starts.append(rec.select(slice(0, cut)))
        ends.append(rec.select(slice(cut, None)))
    train = CompressedData(data.robot, data.compress(starts), base=data.base,
                           processing=data.processing,
                           output_covariance=data.output_covariance)
    return train, all_rows(data, ends)


def validation_system(data: CompressedData, validation) -> JointSystem:
    """The compressed system of the validation data."""
    if isinstance(validation, CompressedData):
        if validation.robot.parameters != data.robot.parameters or \
                tuple(validation.base.names) != tuple(data.base.names):
            raise DataError(f"validation: its robot ({validation.robot.name}) is not the one "
                            f"identified ({data.robot.name}); validate on data of the same "
                            "robot")
        return validation.system()
    if not isinstance(data, IdentificationData):
        raise DataError("validation: recordings need IdentificationData to be processed as the "
                        "training data; give a CompressedData of the validation run instead")
    runs = (validation,) if isinstance(validation, Recording) else tuple(validation)
    processing = replace(data.processing, skip=0)
    processed = []
    for i, rec in enumerate(runs):
        if not isinstance(rec, Recording):
            raise DataError(f"validation[{i}]: expected a Recording, found "
                            f"{type(rec).__name__}; read runs with read_csv or read_npz")
        try:
            rec = check_recording(data.robot, rec, reorder=True)
        except DataError as exc:
            raise DataError(f"validation[{i}]: {exc}") from None
        processed.append(processing.resolve(rec).apply(rec, data.robot))
    return all_rows(data, processed)


def all_rows(data: IdentificationData, processed: Sequence[Recording]) -> JointSystem:
    """The compressed system of every (unsaturated) row of processed recordings."""
    system = JointSystem(data.robot.n, data.base.rank)
    for Yb, y, _ in data.rows(processed):
        system.add(Yb, y)
    if system.n_samples == 0:
        raise DataError("validation: no sample left to validate on; give a longer recording")
    return system
