"""Identification: recordings, signal processing, estimators, uncertainty, validation.

A typical run::

    from dynid.identify import IdentificationData, PhysicallyConsistent, validate
    data = IdentificationData(robot, [rec1, rec2])   # processing chosen automatically
    est = PhysicallyConsistent().fit(data)
    print(est.result_.whiteness.summary())           # the σ assume a white residual
    est.result_.save("result.json")
    print(validate(robot, est.result_, rec3).summary())

A payload, drive gains::

    payload = identify_payload(robot, est.result_, loaded_run, "flange")   # ten parameters
    gains = identify_drive_gains(robot, empty_run, loaded_run, known_box)  # torque per ampere

Reading logs::

    from dynid.identify import ColumnMap, Trim, read_csv, read_npz
    rec = read_csv("log.txt", delimiter=None, rate=1000.0, positions=[0, 1], output=[2, 3],
                   trim=Trim("2s", 0))                     # no header, no time column
    rec = read_npz("run.npz", keys={"time": "times"}, timestamps="resample")
    print(rec.history)                                     # what was done as it was read
"""

from .choice import Candidate, choose_processing
from .columns import ColumnMap, load_column_map
from .consistent import PhysicallyConsistent
from .data import CompressedData, IdentificationData
from .estimators import OLS, WLS, Estimator, GaussMarkov
from .exclusion import Excluded
from .gains import DriveGains, identify_drive_gains
from .likelihood import MaximumLikelihood
from .outcome import Outcome
from .payload import Payload, identify_payload
from .periodic import PeriodAverage, average_periods, spectral_states
from .physical import com_boxes, pseudo_inertia
from .processing import (
    Processing,
    differentiate,
    lowpass,
    signal_bandwidth,
    zero_phase_response,
)
from .readers import read_csv, read_npz, save_npz
from .recording import Recording
from .residuals import Whiteness, whiteness
from .result import IdentificationResult, load_result
from .system import JointSystem, LinearSystem
from .tables import Flat
from .timestamps import TimeReport, resample, time_report
from .trims import Trim
from .uncertainty import Uncertainty
from .validation import Validation, predict, validate
from .weights import Weighting

__all__ = [
    "OLS",
    "WLS",
    "Candidate",
    "ColumnMap",
    "CompressedData",
    "DriveGains",
    "Estimator",
    "Excluded",
    "Flat",
    "GaussMarkov",
    "IdentificationData",
    "IdentificationResult",
    "JointSystem",
    "LinearSystem",
    "MaximumLikelihood",
    "Outcome",
    "Payload",
    "PeriodAverage",
    "PhysicallyConsistent",
    "Processing",
    "Recording",
    "TimeReport",
    "Trim",
    "Uncertainty",
    "Validation",
    "Weighting",
    "Whiteness",
    "average_periods",
    "choose_processing",
    "com_boxes",
    "differentiate",
    "identify_drive_gains",
    "identify_payload",
    "load_column_map",
    "load_result",
    "lowpass",
    "predict",
    "pseudo_inertia",
    "read_csv",
    "read_npz",
    "resample",
    "save_npz",
    "signal_bandwidth",
    "spectral_states",
    "time_report",
    "validate",
    "whiteness",
    "zero_phase_response",
]
