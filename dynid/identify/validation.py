"""Validation: predict another recording with identified parameters and measure the error.

Figures, per output channel j over the N samples of the validation recording:

* RMSE (Leborne (21)): ``√(mean_k (ŷ_kj − y_kj)²)``, in the output's unit;
* relative error (Wang): ``‖ŷ_j − y_j‖ / ‖y_j‖``, in %;
* overall relative error: ``‖Ŷ − Y‖_F / ‖Y‖_F`` over every sample and channel, in % (the figure
  FloBaRoID reports).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import is_number
from ..errors import DataError
from ..models import Regressor, Robot
from .data import check_informative, check_recording, decimate, decimated_flags
from .modelband import filter_model
from .processing import Processing
from .recording import Recording
from .result import IdentificationResult

__all__ = ["Validation", "predict", "validate"]


def _parameters(robot: Robot, params: IdentificationResult | np.ndarray) -> np.ndarray:
    if isinstance(params, IdentificationResult):
        if tuple(params.names) != robot.parameters.names:
            missing = sorted(set(robot.parameters.names) ^ set(params.names))[:5]
            raise DataError(f"result: its parameters do not match robot {robot.name} "
                            f"(differences: {missing}); use the robot it was identified on")
        return params.params
    theta = np.asarray(params, dtype=float)
    if theta.shape != (len(robot.parameters),):
        raise DataError(f"params: expected {len(robot.parameters)} values, found shape "
                        f"{theta.shape}")
    return theta


def predict(robot: Robot, params: IdentificationResult | np.ndarray,
            recording: Recording) -> np.ndarray:
    """Model output (N, n) on a processed recording (basis states with derivatives)."""
    if recording.velocities is None or recording.accelerations is None or \
            recording.space != "basis":
        raise DataError("predict: the recording needs basis positions, velocities and "
                        "accelerations; process it first (Processing.apply)")
    theta = _parameters(robot, params)
    return Regressor(robot).predict(recording.positions, recording.velocities,
                                    recording.accelerations, theta)


@dataclass(frozen=True)
class Validation:
    """Measured and predicted outputs of a validation recording and their errors.

    Attributes
    ----------
    time, measured, predicted
        Sample times (N,) and outputs (N, n).
    names, units
        Output channel names and units.
    rmse
        RMSE per channel (Leborne (21)).
    relative_error
        ``100 ‖ŷ_j − y_j‖ / ‖y_j‖`` per channel, % (Wang).
    overall_relative_error
        ``100 ‖Ŷ − Y‖_F / ‖Y‖_F``, %.
    """

    time: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    names: tuple[str, ...]
    units: tuple[str, ...]

    @property
    def error(self) -> np.ndarray:
        return self.predicted - self.measured

    @property
    def rmse(self) -> np.ndarray:
        return np.sqrt(np.mean(self.error**2, axis=0))

    @property
    def relative_error(self) -> np.ndarray:
        return 100 * np.linalg.norm(self.error, axis=0) / np.linalg.norm(self.measured, axis=0)

    @property
    def overall_relative_error(self) -> float:
        return float(100 * np.linalg.norm(self.error) / np.linalg.norm(self.measured))

    def summary(self) -> str:
        lines = [f"{'output':<12} {'RMSE':>10} {'':<4} {'relative %':>11}"]
        for name, r, unit, e in zip(self.names, self.rmse, self.units, self.relative_error,
                                    strict=True):
            lines.append(f"{name:<12} {r:10.4g} {unit:<4} {e:11.3f}")
        lines.append(f"overall relative error {self.overall_relative_error:.3f} %")
        return "\n".join(lines)

    def plot(self, path: str | Path, *, title: str = "") -> Path:
        """Measured and predicted output per channel, written to an image file."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        n = self.measured.shape[1]
        fig, axes = plt.subplots(n, 1, figsize=(9, 1.8 * n + 0.6), sharex=True, squeeze=False)
        for j, ax in enumerate(axes[:, 0]):
            ax.plot(self.time, self.measured[:, j], color="0.6", lw=1.0, label="measured")
            ax.plot(self.time, self.predicted[:, j], color="tab:red", lw=0.9, label="predicted")
            ax.set_ylabel(f"{self.names[j]}\n[{self.units[j]}]")
            ax.text(0.99, 0.9, f"RMSE {self.rmse[j]:.3g}, {self.relative_error[j]:.1f} %",
                    transform=ax.transAxes, ha="right", va="top", fontsize=8)
        axes[0, 0].legend(loc="upper left", fontsize=8)
        axes[-1, 0].set_xlabel("time [s]")
        fig.suptitle(title or f"validation: overall relative error "
                              f"{self.overall_relative_error:.2f} %")
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path


def validate(robot: Robot, params: IdentificationResult | np.ndarray, recording: Recording, *,
             processing: Processing | None = None) -> Validation:
    """Predict a (raw) recording and compare with what was measured.

    Parameters
    ----------
    robot
        The identified model.
    params
        An identification result, or standard parameters (p,).
    recording
        The validation recording, as measured.
    processing
        How to process it (default: the result's processing, else
        :class:`~dynid.identify.processing.Processing`'s defaults, chosen for this recording).
        With decimation, measured and predicted outputs pass through the same filter before
        they are compared; with a model filter (``model_cutoff``), the prediction passes
        through it first, as the output did before it was recorded.
    """
    recording = check_recording(robot, recording, reorder=True)
    check_informative([recording])
    if processing is None:
        processing = params.processing if isinstance(params, IdentificationResult) else \
            Processing()
    processing = processing.resolve(recording)
    processed = processing.apply(recording, robot)
    keep = ~processed.saturated.any(axis=1)
    time, measured = processed.time, processed.output
    predicted = predict(robot, params, processed)
    if is_number(processing.model_cutoff):  # the output was low-passed before it was recorded
        predicted = filter_model(predicted, processed.rate, processing.model_cutoff,
                                 processing.order)
    if processing.decimate > 1:
        # Compare what the identification saw: both outputs through the same filter.
        D = int(processing.decimate)
        centers, measured = decimate(measured, D)
        predicted = decimate(predicted, D)[1]
        keep = ~decimated_flags(~keep, D)
        time = time[centers]
    return Validation(time[keep], measured[keep], predicted[keep], tuple(robot.output_names),
                      robot.output_units)
