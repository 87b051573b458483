"""Identification results and their file format.

An :class:`IdentificationResult` holds everything a later stage needs: the standard and base
estimates with their covariances, the parameter and base-parameter names, the estimated output
noise, the estimator's and the processing's settings, and solver details. It is written as JSON
(:meth:`IdentificationResult.save`), so validation, export and reports can run on their own::

    {"format": "dynid-result", "version": 1, "method": "consistent", "robot": "panda",
     "output": "joint_torque", "parameters": {"names": [...], "units": [...],
     "values": [...], "covariance": [[...]]}, "base": {"names": [...], "matrix": [[...]],
     "values": [...], "covariance": [[...]]}, "noise_covariance": [[...]],
     "training_rmse": [...], "n_samples": 12000, "settings": {...}, "processing": {...},
     "solver": {...}}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._files import read_structured
from ..errors import DataError
from .processing import Processing
from .uncertainty import Uncertainty

__all__ = ["IdentificationResult", "load_result"]

FORMAT = "dynid-result"
VERSION = 1


@dataclass(frozen=True, eq=False)
class IdentificationResult:
    """The outcome of an identification.

    Attributes
    ----------
    method
        Estimator name (``ols``, ``wls``, ``gauss-markov``, ``consistent``, ``ml``).
    robot
        Robot name, or the robot file or embedded name it was loaded from (``robot_source``).
    output
        What the model predicts (joint_torque, motor_torque, current).
    names, units
        Standard parameter names and units (p).
    params, cov
        Standard parameter estimate (p,) and its covariance (p, p). For estimates obtained in
        base coordinates the standard parameters are the ones closest to the prior, and their
        covariance is that of the identifiable part, ``B⁺ P_b B⁺ᵀ``.
    base_names, base_matrix
        Base parameter expressions (b) and ``B`` (b, p) with ``θ_b = B θ``.
    base_params, base_cov
        Base estimate (b,) and its covariance (b, b).
    noise_covariance
        Estimated (or given) output noise covariance (n, n) used for weighting.
    training_rmse
        RMSE per output on the identification data (n,).
    n_samples
        Samples used (after processing).
    settings, processing, solver
        Estimator settings, the processing settings, solver details (status, time, smallest
        pseudo-inertia eigenvalue...).
    """

    method: str
    robot: str
    output: str
    names: tuple[str, ...]
    units: tuple[str, ...]
    params: np.ndarray
    cov: np.ndarray
    base_names: tuple[str, ...]
    base_matrix: np.ndarray
    base_params: np.ndarray
    base_cov: np.ndarray
    noise_covariance: np.ndarray
    training_rmse: np.ndarray
    n_samples: int
    robot_source: str | None = None
    output_names: tuple[str, ...] = ()
    settings: dict = field(default_factory=dict)
    processing: Processing = field(default_factory=Processing)
    solver: dict = field(default_factory=dict)

    def uncertainty(self) -> Uncertainty:
        """Uncertainty of the base parameters."""
        return Uncertainty.from_covariance(self.base_names, self.base_params, self.base_cov)

    def standard_uncertainty(self) -> Uncertainty:
        """Uncertainty of the standard parameters (of their identifiable part)."""
        return Uncertainty.from_covariance(self.names, self.params, self.cov)

    def as_dict(self) -> dict[str, float]:
        """Standard parameter name → value."""
        return dict(zip(self.names, self.params.tolist(), strict=True))

    # File format -------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "format": FORMAT, "version": VERSION, "method": self.method, "robot": self.robot,
            "robot_source": self.robot_source, "output": self.output,
            "output_names": list(self.output_names),
            "parameters": {"names": list(self.names), "units": list(self.units),
                           "values": self.params.tolist(), "covariance": self.cov.tolist()},
            "base": {"names": list(self.base_names), "matrix": self.base_matrix.tolist(),
                     "values": self.base_params.tolist(),
                     "covariance": self.base_cov.tolist()},
            "noise_covariance": self.noise_covariance.tolist(),
            "training_rmse": self.training_rmse.tolist(), "n_samples": self.n_samples,
            "settings": self.settings, "processing": self.processing.to_dict(),
            "solver": self.solver,
        }

    def save(self, path: str | Path) -> Path:
        """Write the result as JSON; returns the path."""
        path = Path(path)
        path.write_text(json.dumps(self.to_json(), indent=1, default=_plain))
        return path

    @classmethod
    def from_json(cls, data: dict, where: str = "result") -> IdentificationResult:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DataError(f"{where}: not a dynid result file (expected \"format\": "
                            f"\"{FORMAT}\")")
        if data.get("version") != VERSION:
            raise DataError(f"{where}: result format version {data.get('version')}, this dynid "
                            f"reads version {VERSION}")
        try:
            par, base = data["parameters"], data["base"]
            return cls(
                method=data["method"], robot=data["robot"], output=data["output"],
                names=tuple(par["names"]), units=tuple(par["units"]),
                params=np.array(par["values"], float), cov=np.array(par["covariance"], float),
                base_names=tuple(base["names"]), base_matrix=np.array(base["matrix"], float),
                base_params=np.array(base["values"], float),
                base_cov=np.array(base["covariance"], float),
                noise_covariance=np.array(data["noise_covariance"], float),
                training_rmse=np.array(data["training_rmse"], float),
                n_samples=int(data["n_samples"]), robot_source=data.get("robot_source"),
                output_names=tuple(data.get("output_names", ())),
                settings=data.get("settings", {}),
                processing=Processing.from_dict(data.get("processing", {})),
                solver=data.get("solver", {}))
        except KeyError as exc:
            raise DataError(f"{where}: missing entry {exc}") from None


def load_result(path: str | Path) -> IdentificationResult:
    """Read a result file written by :meth:`IdentificationResult.save`."""
    data = read_structured(path, "result file", "JSON", json.loads, json.JSONDecodeError, DataError)
    return IdentificationResult.from_json(data, Path(path).name)


def _plain(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"cannot write {type(x).__name__} to a result file")
