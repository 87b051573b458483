"""Identification: recordings, signal processing, estimators, uncertainty, validation.

A typical run::

    from dynid.identify import IdentificationData, PhysicallyConsistent, Processing, validate
    data = IdentificationData(robot, [rec1, rec2], processing=Processing(cutoff=20))
    est = PhysicallyConsistent().fit(data)
    est.result_.save("result.json")
    print(validate(robot, est.result_, rec3).summary())
"""

from .consistent import PhysicallyConsistent, com_boxes, pseudo_inertia
from .data import CompressedData, IdentificationData
from .estimators import OLS, WLS, Estimator, GaussMarkov
from .likelihood import MaximumLikelihood
from .processing import (
    PeriodAverage,
    Processing,
    average_periods,
    differentiate,
    lowpass,
    spectral_states,
)
from .readers import read_csv, read_npz, save_npz
from .recording import Recording
from .reference import FourierReference
from .result import IdentificationResult, load_result
from .simulate import DriveLoops, SensorNoise, Simulation, simulate, smooth_coulomb
from .system import JointSystem, LinearSystem
from .uncertainty import Uncertainty
from .validation import Validation, predict, validate

__all__ = [
    "OLS",
    "WLS",
    "CompressedData",
    "DriveLoops",
    "Estimator",
    "FourierReference",
    "GaussMarkov",
    "IdentificationData",
    "IdentificationResult",
    "JointSystem",
    "LinearSystem",
    "MaximumLikelihood",
    "PeriodAverage",
    "PhysicallyConsistent",
    "Processing",
    "Recording",
    "SensorNoise",
    "Simulation",
    "Uncertainty",
    "Validation",
    "average_periods",
    "com_boxes",
    "differentiate",
    "load_result",
    "lowpass",
    "predict",
    "pseudo_inertia",
    "read_csv",
    "read_npz",
    "save_npz",
    "simulate",
    "smooth_coulomb",
    "spectral_states",
    "validate",
]
