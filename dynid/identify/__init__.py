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
    payload.save("payload.json"); gains.save("gains.json")   # load_payload, load_drive_gains

Essential parameters (the base parameters that matter for prediction)::

    ess = essential_parameters(data, WLS(), validation=rec3, tolerance=0.01)
    print(ess.summary())                                   # each step's validation error

Reading logs::

    from dynid.identify import ColumnMap, Trim, read_csv, read_npz
    rec = read_csv("log.txt", delimiter=None, rate=1000.0, positions=[0, 1], output=[2, 3],
                   trim=Trim("2s", 0))                     # no header, no time column
    rec = read_npz("run.npz", keys={"time": "times"}, timestamps="resample")
    print(rec.history)                                     # what was done as it was read

Data recorded in closed loop (noisy encoders fed back): estimators with the experiment's
closed loop simulated (e.g. ``dynid.hardware.ClosedLoop``)::

    est = InstrumentalVariables(simulator=loop).fit(data)     # or DIDIM(simulator=loop)

Delays between the channels (a drive's current loop, a bus)::

    data = IdentificationData(robot, [rec1, rec2], processing=Processing(delay="estimate"))
    print(data.processing.delay)                           # Delays(output=0.0030..., ...)
"""

from .bodyfiles import load_drive_gains, load_payload
from .choice import Candidate, choose_processing
from .closedloop import ClosedLoopSimulator
from .columns import ColumnMap, load_column_map
from .consistent import PhysicallyConsistent
from .data import CompressedData, IdentificationData
from .delays import Delays, compensate, estimate_delays
from .derivatives import butterworth_states, estimate_states, savgol_states, savgol_window
from .didim import DIDIM
from .essential import EssentialParameters, EssentialStep, essential_parameters
from .estimators import OLS, WLS, Estimator, GaussMarkov
from .exclusion import Excluded
from .filters import rolloff_bandwidth
from .friction import FrictionFit, identify_friction
from .friction_choice import FrictionChoice, select_friction
from .gains import DriveGains, identify_drive_gains
from .iv import InstrumentalVariables
from .likelihood import MaximumLikelihood
from .modelband import choose_model_cutoff, filter_model
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
from .quantization import resolution_from_increments
from .readers import read_csv, read_npz, save_npz
from .recording import Recording
from .residuals import Whiteness, whiteness
from .result import IdentificationResult, load_result
from .rts import rts_covariance, rts_states
from .structure import compare_structures, structure_uncertainty
from .system import JointSystem, LinearSystem
from .tables import Flat
from .timestamps import TimeReport, resample, time_report
from .trims import Trim
from .uncertainty import Uncertainty
from .validation import Validation, predict, validate
from .weights import Weighting

__all__ = [
    "DIDIM",
    "OLS",
    "WLS",
    "Candidate",
    "ClosedLoopSimulator",
    "ColumnMap",
    "CompressedData",
    "Delays",
    "DriveGains",
    "EssentialParameters",
    "EssentialStep",
    "Estimator",
    "Excluded",
    "Flat",
    "FrictionChoice",
    "FrictionFit",
    "GaussMarkov",
    "IdentificationData",
    "IdentificationResult",
    "InstrumentalVariables",
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
    "butterworth_states",
    "choose_model_cutoff",
    "choose_processing",
    "com_boxes",
    "compare_structures",
    "compensate",
    "differentiate",
    "essential_parameters",
    "estimate_delays",
    "estimate_states",
    "filter_model",
    "identify_drive_gains",
    "identify_friction",
    "identify_payload",
    "load_column_map",
    "load_drive_gains",
    "load_payload",
    "load_result",
    "lowpass",
    "predict",
    "pseudo_inertia",
    "read_csv",
    "read_npz",
    "resample",
    "resolution_from_increments",
    "rolloff_bandwidth",
    "rts_covariance",
    "rts_states",
    "save_npz",
    "savgol_states",
    "savgol_window",
    "select_friction",
    "signal_bandwidth",
    "spectral_states",
    "structure_uncertainty",
    "time_report",
    "validate",
    "whiteness",
    "zero_phase_response",
]
