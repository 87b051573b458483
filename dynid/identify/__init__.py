"""Identification: recordings, signal processing, estimators, uncertainty, validation.

A typical run::

    from dynid.identify import IdentificationData, PhysicallyConsistent, Processing, validate
    data = IdentificationData(robot, [rec1, rec2], processing=Processing(cutoff=20))
    est = PhysicallyConsistent().fit(data)
    est.result_.save("result.json")
    print(validate(robot, est.result_, rec3).summary())
"""

from .consistent import PhysicallyConsistent, com_boxes, pseudo_inertia
from .data import IdentificationData
from .estimators import OLS, WLS, Estimator, GaussMarkov
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
from .result import IdentificationResult, load_result
from .system import JointSystem, LinearSystem
from .uncertainty import Uncertainty

__all__ = [
    "OLS",
    "WLS",
    "Estimator",
    "GaussMarkov",
    "IdentificationData",
    "IdentificationResult",
    "JointSystem",
    "LinearSystem",
    "PeriodAverage",
    "PhysicallyConsistent",
    "Processing",
    "Recording",
    "Uncertainty",
    "average_periods",
    "com_boxes",
    "differentiate",
    "load_result",
    "lowpass",
    "pseudo_inertia",
    "read_csv",
    "read_npz",
    "save_npz",
    "spectral_states",
]
