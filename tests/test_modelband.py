"""The model low-passed as the output was (``Processing(model_cutoff=...)``): a simulated arm
whose torques a logger low-passed at a known frequency before writing them, while its
states are exact. The output is computed by Pinocchio's RNEA (``reference_output``) and
filtered by scipy directly, independently of the regressor and of dynid's filter."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import logged_arm

import dynid
from dynid.identify import (
    OLS,
    IdentificationData,
    Processing,
    filter_model,
    validate,
)

RATE, CUTOFF, ORDER = 200.0, 1.0, 4
STATES = dict(cutoff=None, decimate=1, derivatives="recorded", deadzone=None)


@pytest.fixture(scope="module")
def logged():
    """Exact states of a 0.5–1.5 Hz Fourier motion at 200 Hz for 30 s, and the RNEA
    torques through a 4th-order Butterworth at 1 Hz, forward and backward."""
    return logged_arm(seed=4, seconds=30, rate=RATE, order=ORDER, cutoff=CUTOFF)


def _fit(robot, rec, **settings):
    with warnings.catch_warnings():  # exact data: the residual is rounding, not noise
        warnings.simplefilter("ignore", dynid.DynidWarning)
        data = IdentificationData(robot, rec, processing=Processing(**(STATES | settings)))
        return data, OLS().fit(data)


def _base_error(data, est) -> float:
    truth = data.base.to_base(data.robot.prior)
    return float(np.max(np.abs(est.base_params_ - truth)) / np.max(np.abs(truth)))


@pytest.mark.parametrize("decimate", [1, 4])
def test_the_logger_filter_on_the_model_restores_the_parameters(logged, decimate):
    """Without the filter the model holds torque the logger removed and the parameters are
    off by percents; with the logger's filter on the regressor they come back to rounding,
    and validation, which filters the prediction
    alike, matches the logged torque; decimated too (the filter comes first)."""
    robot, rec, _ = logged
    plain_data, plain = _fit(robot, rec, model_cutoff=None, decimate=decimate)
    data, est = _fit(robot, rec, model_cutoff=CUTOFF, decimate=decimate)
    assert data.processing.model_cutoff == CUTOFF
    assert _base_error(plain_data, plain) > 1e-2
    assert _base_error(data, est) < 1e-8
    assert validate(robot, est.result_, rec).overall_relative_error < 1e-6
    unfiltered = validate(robot, est.result_, rec, processing=Processing(
        **(STATES | {"decimate": decimate}), model_cutoff=None))
    assert unfiltered.overall_relative_error > 1.0  # the prediction, not the logged torque
    assert "regressor low-passed at 1 Hz" in data.processing.summary()


def test_automatic_model_filter_finds_the_loggers_cutoff(logged):
    """The default looks for a filter because the logged torque has no noise floor, and the
    least-squares residual points at the logger's cutoff."""
    robot, rec, _ = logged
    data, est = _fit(robot, rec)
    found = data.processing.model_cutoff
    print(f"model cutoff found {found} Hz (logger: {CUTOFF} Hz)")
    assert found == pytest.approx(CUTOFF, rel=0.05)
    assert _base_error(data, est) < 1e-2


def test_no_model_filter_for_an_output_with_a_noise_floor_or_an_exact_model(logged):
    robot, rec, _ = logged
    noisy = rec.with_signals(output=rec.output + 0.01 * np.random.default_rng(2).standard_normal(
        rec.output.shape))
    assert _fit(robot, noisy)[0].processing.model_cutoff is None
    exact = rec.with_signals(output=dynid.Regressor(robot).predict(
        rec.positions, *_derivatives(robot, rec), robot.prior))
    assert _fit(robot, exact)[0].processing.model_cutoff is None


def _derivatives(robot, rec):
    states = Processing(**STATES).apply(rec, robot)
    return states.velocities, states.accelerations


def test_model_filter_is_kept_with_the_settings():
    p = Processing(model_cutoff=2.0)
    assert Processing.from_dict(p.to_dict()).model_cutoff == 2.0
    assert Processing.from_dict({"cutoff": None, "decimate": 1}).model_cutoff is None
    assert Processing().model_cutoff == "auto"


@pytest.mark.parametrize("value", ["fast", -1.0, 0, float("inf"), [2.0]])
def test_bad_model_cutoff_is_refused(value):
    with pytest.raises(dynid.DataError, match=r"model_cutoff: expected a frequency > 0 Hz .*"
                                              r"'auto' or None, found .*"
                                              r"Processing\(model_cutoff=2.0\)"):
        Processing(model_cutoff=value)


def test_model_cutoff_above_nyquist_is_refused(logged):
    robot, rec, _ = logged
    with pytest.raises(dynid.DataError, match=r"model_cutoff: 150 Hz is not below the "
                                              r"Nyquist frequency 100 Hz"):
        _fit(robot, rec, model_cutoff=150.0)[1]
    with pytest.raises(dynid.DataError, match="model_cutoff: 150 Hz"):
        filter_model(rec.output, RATE, 150.0, ORDER)


def test_automatic_model_filter_beyond_the_memory_budget_warns(logged, monkeypatch):
    from dynid.identify import modelband

    robot, rec, _ = logged
    monkeypatch.setattr(modelband, "MAX_VALUES", 1000)
    with pytest.warns(dynid.DynidWarning, match=r"the model filter was not looked for: the "
                                                r"recordings' regressor holds .* values, more "
                                                r"than 1e\+03. Give Processing\(model_cutoff=HZ\)"):
        data = IdentificationData(robot, rec, processing=Processing(**STATES))
    assert data.processing.model_cutoff is None
