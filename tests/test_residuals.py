"""The residual whiteness check: white noise passes, coloured noise is flagged with the factor
its colour puts on the σ, and every result carries the check."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.signal

import dynid
from dynid.identify import (
    OLS,
    CompressedData,
    IdentificationData,
    PhysicallyConsistent,
    Processing,
    Recording,
    load_result,
)
from dynid.identify.residuals import whiteness
from dynid.models import random_robot


def test_white_noise_is_white():
    rng = np.random.default_rng(0)
    flags = []
    for _ in range(200):
        w = whiteness([rng.standard_normal((1000, 2)), rng.standard_normal((500, 2))], ("a", "b"))
        flags.append(w.coloured.any())
        assert w.n_samples == 1500 and w.lags == 20
    assert np.mean(flags) < 0.02  # Ljung–Box at 1e-3 on two outputs
    assert abs(w.sigma_factor - 1).max() < 0.2


@pytest.mark.parametrize("phi", [0.5, -0.5])
def test_ar1_noise_is_flagged_with_its_long_run_factor(phi):
    """AR(1) noise ``e_k = φ e_{k−1} + w_k`` has lag-k autocorrelation ``φ^k`` and long-run
    variance ``(1 + φ)/(1 − φ)`` times its variance: the σ of a mean are off by the square
    root of that (1.73 for φ = 0.5, 0.58 for −0.5). The Bartlett estimate over 20 lags is
    close to it (its weights shrink the sum by about Σ k φ^k / 21)."""
    rng = np.random.default_rng(1)
    e = scipy.signal.lfilter([1.0], [1.0, -phi], rng.standard_normal((20000, 1)), axis=0)
    w = whiteness([e], ("joint1",))
    assert w.coloured.all() and not w.white
    assert w.autocorrelation[0, 0] == pytest.approx(phi, abs=0.03)
    exact = np.sqrt((1 + phi) / (1 - phi))
    assert w.sigma_factor[0] == pytest.approx(exact, rel=0.1)
    assert "joint1" in w.message() and "σ off by about" in w.message()


def _line(rate=100.0, N=3000, seed=0, filtered=False):
    """A 1-DOF robot swinging, its output with white noise (or that noise low-passed alone,
    which colours the residual)."""
    robot = random_robot(1, seed=4, friction=True)
    t = np.arange(N) / rate
    q = 0.8 * np.sin(2 * np.pi * 0.3 * t) + 0.3 * np.sin(2 * np.pi * 1.1 * t)
    v = np.gradient(q, t)
    a = np.gradient(v, t)
    y = dynid.Regressor(robot).predict(q[:, None], v[:, None], a[:, None], robot.prior)
    noise = 0.05 * np.random.default_rng(seed).standard_normal(y.shape)
    if filtered:
        noise = scipy.signal.filtfilt(*scipy.signal.butter(2, 5.0, fs=rate), noise, axis=0)
    return robot, Recording(t, q[:, None], y + noise, velocities=v[:, None],
                            accelerations=a[:, None])


def test_results_carry_the_check_and_warn_when_coloured(tmp_path):
    robot, rec = _line()
    with warnings.catch_warnings():
        warnings.simplefilter("error", dynid.DynidWarning)
        result = OLS().fit(IdentificationData(robot, rec)).result_
    assert result.whiteness.white and result.whiteness.n_samples == rec.n_samples
    robot, rec = _line(filtered=True)
    with pytest.warns(dynid.DynidWarning, match=r"residual is not white on joint1 .*σ off by"):
        est = PhysicallyConsistent().fit(IdentificationData(robot, rec))
    white = est.result_.whiteness
    assert not white.white and white.sigma_factor[0] > 1.5
    path = est.result_.save(tmp_path / "r.json")
    again = load_result(path).whiteness
    np.testing.assert_allclose(again.sigma_factor, white.sigma_factor)
    assert again.names == white.names


def test_whiteness_needs_the_rows():
    """Data streamed in compressed form have no residual series: no check, said so."""
    robot, rec = _line()
    chunks = [(rec.positions, rec.velocities, rec.accelerations, rec.output)]
    result = OLS().fit(CompressedData.from_chunks(robot, chunks)).result_
    assert result.whiteness is None and "whiteness" not in result.diagnostics


def test_periods_averaged_data_are_checked_too():
    robot, rec = _line(N=4000)
    period = 1 / 0.1  # the two sines share a 10 s period
    data = IdentificationData(robot, rec, processing=Processing(period=period))
    assert OLS().fit(data).result_.whiteness.n_samples == 1000
