"""Encoder quantization: the resolution of recorded positions, and the errors it puts into the
regressor.

An encoder of ``increments_per_turn`` on a coordinate reads its position to a step
``resolution = 2π / (increments_per_turn · gear_ratio)`` rad (m for a linear encoder), the
recording's :attr:`~dynid.identify.recording.Recording.resolution`. Rounding to that step adds
an error uniform over ``±resolution / 2``: white, of variance ``resolution² / 12``, while the
motion moves the encoder by several increments a sample or so.

Differentiating those positions puts the error into the velocities and accelerations, hence
into the regressor: errors in variables, which least squares does not model (it biases the
estimate towards smaller parameters, by about the ratio of the regressor's noise to its
signal). :func:`errors_in_variables` measures what it does to the output: the recordings'
positions are quantized once more (a uniform error over ``±resolution / 2``, drawn once with a
fixed seed), processed as identification processed them, and the model's output at both
states compared, row by row of the identification system (on the middle :data:`ROWS`
decimated samples of each recording). The processing is linear in the
positions, so the difference is what the processing and the model make of one quantization's
error. Identification reports its σ per output next to the residual's
(``result.diagnostics["errors_in_variables"]``) and warns when it is not small against it.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from .._files import excerpt
from ..errors import DataError, DynidWarning

if TYPE_CHECKING:
    from .data import IdentificationData

__all__ = ["EIV_RATIO", "check_resolution", "errors_in_variables", "resolution_from_increments"]

#: The output error that quantized positions cause counts as not small (and warns) beyond
#: this fraction of the residual's σ (a tenth of its variance).
EIV_RATIO = 0.3
#: Samples (after decimation) of each recording on which that error is measured.
ROWS = 500


def resolution_from_increments(increments_per_turn: float | np.ndarray,
                               gear_ratio: float | np.ndarray = 1.0) -> np.ndarray:
    """The resolution (rad) of a coordinate read by an encoder of ``increments_per_turn``
    on a motor that turns ``gear_ratio`` times per turn of the coordinate:
    ``2π / (increments_per_turn · gear_ratio)``, per coordinate.

    Examples
    --------
    >>> resolution_from_increments([4096, 2**18])          # two joint encoders
    array([1.53398079e-03, 2.39684498e-05])
    >>> resolution_from_increments(4096, gear_ratio=100)   # on the motor, behind a gear
    array([1.53398079e-05])
    """
    inc = np.atleast_1d(np.asarray(increments_per_turn, dtype=float))
    gear = np.asarray(gear_ratio, dtype=float)
    for name, value in (("increments_per_turn", inc), ("gear_ratio", gear)):
        if not (np.all(np.isfinite(value)) and np.all(value > 0)):
            raise DataError(f"{name}: expected numbers > 0, found {excerpt(value.tolist())}; "
                            "e.g. resolution_from_increments(4096, gear_ratio=100)")
    return 2 * np.pi / (inc * gear)


def check_resolution(value: object, n: int, names: tuple[str, ...] | None = None
                     ) -> np.ndarray | None:
    """``value`` as the resolution (n,) of ``n`` coordinates (one value for all, or one
    each), or ``None``; a value that is not a finite number > 0 raises naming it."""
    if value is None:
        return None
    try:
        res = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"resolution: expected the encoder step (rad or m) of each "
                        f"coordinate, found {excerpt(value)}; e.g. resolution="
                        "resolution_from_increments(4096)") from None
    if res.ndim == 0 or res.shape == (1,):
        res = np.full(n, float(res.reshape(-1)[0]))
    if res.shape != (n,):
        raise DataError(f"resolution: expected one value or {n} (one per coordinate), found "
                        f"shape {res.shape}")
    bad = np.flatnonzero(~(np.isfinite(res) & (res > 0)))
    if len(bad):
        j = bad[0]
        name = f" ({names[j]})" if names is not None else ""
        raise DataError(f"resolution of column {j}{name}: expected the encoder step, a finite "
                        f"number > 0 in rad (m for a linear axis), found {res[j]:g}; e.g. "
                        "resolution=resolution_from_increments(4096) for 4096 increments a "
                        "turn, or None when unknown")
    return res


def errors_in_variables(data: IdentificationData, base_params: np.ndarray,
                        residual_rms: np.ndarray, *, seed: int = 0) -> dict | None:
    """The output error that the recordings' quantized positions cause through the
    processing and the model (see the module docstring), per output, next to the residual's
    RMS ``residual_rms`` (n,); ``None`` when a recording has no resolution. Warns when it
    is more than :data:`EIV_RATIO` of the residual on some output.

    Returns
    -------
    dict
        ``outputs`` (names), ``sigma`` (the output error's σ per output), ``residual_sigma``,
        ``ratio`` (the first over the second), ``rows`` (rows compared) and ``method``.
    """
    recordings = data.recordings
    if not recordings or any(r.resolution is None for r in recordings):
        return None
    rng = np.random.default_rng(seed)
    D = int(data.processing.decimate)
    diffs = []
    for rec, processed in zip(recordings, data.processed, strict=True):
        error = rng.uniform(-0.5, 0.5, rec.positions.shape) * rec.resolution
        moved = data.processing.apply(rec.with_signals(positions=rec.positions + error),
                                      data.robot)
        # The model is evaluated on the middle of the record, enough for ROWS samples after
        # decimation (its filter spans 16 D + 1 samples).
        span = min(processed.n_samples, (16 + ROWS) * D + 1)
        part = slice((processed.n_samples - span) // 2, (processed.n_samples + span) // 2)
        before, after = (data.residuals(base_params, [r.select(part)])[0]
                         for r in (processed, moved))
        diffs.append(after - before)
    diff = np.vstack(diffs)
    rows = np.isfinite(diff)
    if not rows.any(axis=0).all():
        return None
    sigma = np.sqrt(np.nanmean(np.where(rows, diff, np.nan) ** 2, axis=0))
    residual = np.asarray(residual_rms, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(residual > 0, sigma / residual, np.inf)
    names = list(data.robot.output_names)
    out = {"outputs": names, "sigma": sigma.tolist(), "residual_sigma": residual.tolist(),
           "ratio": ratio.tolist(), "rows": int(rows.sum()),
           "method": "positions quantized once more (uniform over ±resolution/2), processed "
                     "alike; σ of the change of the model's output"}
    large = np.flatnonzero(ratio > EIV_RATIO)
    if len(large):
        parts = ", ".join(f"{names[j]} σ {sigma[j]:.3g} against {residual[j]:.3g} "
                          f"({100 * ratio[j]:.0f} %)" for j in large)
        warnings.warn(f"identification: differentiating the quantized positions puts errors "
                      f"into the regressor that move the output by {parts} of the residual's "
                      "σ. Errors in the regressor bias least squares towards smaller "
                      "parameters; lower the cutoff, use recorded velocities, or an encoder "
                      "of finer resolution", DynidWarning, stacklevel=4)
    return out
