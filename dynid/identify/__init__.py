"""Identification: recordings, signal processing, estimators, uncertainty, validation.

A typical run::

    from dynid.identify import IdentificationData, PhysicallyConsistent, Processing, validate
    data = IdentificationData(robot, [rec1, rec2], processing=Processing(cutoff=20))
    est = PhysicallyConsistent().fit(data)
    est.result_.save("result.json")
    print(validate(robot, est.result_, rec3).summary())
"""

from .data import IdentificationData
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
from .system import JointSystem, LinearSystem

__all__ = [
    "IdentificationData",
    "JointSystem",
    "LinearSystem",
    "PeriodAverage",
    "Processing",
    "Recording",
    "average_periods",
    "differentiate",
    "lowpass",
    "read_csv",
    "read_npz",
    "save_npz",
    "spectral_states",
]
