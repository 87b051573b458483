"""The model filter's search: its least-squares residual per cutoff against a dense
computation (the regressor filtered whole by scipy, stacked, and solved by ``numpy.linalg.lstsq``),
and the cutoff it finds against a brute-force minimization of that dense residual."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.signal
from conftest import logged_arm
from scipy.optimize import minimize_scalar

import dynid
from dynid.identify import (
    IdentificationData,
    Processing,
    _filteredfit,
    choose_model_cutoff,
)
from dynid.identify._filteredfit import FilteredFit


def _dense_residual(rows, rates, keep, cutoff, order):
    """‖y − F(k) − F(Y) θ‖ at the rows kept, minimized over θ: scipy's filter on the whole
    regressor, the rows stacked, numpy's least squares."""
    W, t = [], []
    for (Yb, known, y), rate, k in zip(rows, rates, keep, strict=True):
        if cutoff is not None:
            sos = scipy.signal.butter(order, cutoff, fs=rate, output="sos")
            Yb = scipy.signal.sosfiltfilt(sos, Yb, axis=0)
            known = scipy.signal.sosfiltfilt(sos, known, axis=0)
        W.append(Yb[k])
        t.append((y - known)[k])
    W, t = np.concatenate(W), np.concatenate(t)
    theta = np.linalg.lstsq(W, t, rcond=None)[0]
    return float(np.linalg.norm(t - W @ theta))


def _random_rows(seed, N, n=3, b=7, rate=100.0):
    """Smooth random regressor signals with a block-triangular zero pattern (output j does not
    see the first j columns), known bodies' output on the first output only, a noisy output,
    and rows left out at random."""
    rng = np.random.default_rng(seed)
    sos = scipy.signal.butter(2, 5.0, fs=rate, output="sos")
    Yb = scipy.signal.sosfilt(sos, rng.standard_normal((N, n, b)), axis=0)
    for j in range(n):
        Yb[:, j, :j] = 0.0
    known = np.zeros((N, n))
    known[:, 0] = np.sin(np.arange(N) / rate * 3.0)
    y = Yb @ rng.standard_normal(b) + known + 0.1 * rng.standard_normal((N, n))
    keep = rng.random((N, n)) > 0.1
    return (Yb, known, y), keep


@pytest.fixture(scope="module")
def two_recordings():
    first, keep1 = _random_rows(1, 1500, rate=100.0)
    second, keep2 = _random_rows(2, 900, rate=80.0)
    return [first, second], [100.0, 80.0], [keep1, keep2]


@pytest.mark.parametrize("cutoff", [None, 0.7, 3.0, 30.0])
def test_residual_matches_the_dense_least_squares(two_recordings, cutoff):
    rows, rates, keep = two_recordings
    fit = FilteredFit(rows, rates, keep, 4)
    want = _dense_residual(rows, rates, keep, cutoff, 4)
    assert fit.residual(cutoff) == pytest.approx(want, rel=1e-9)
    assert fit.norm == pytest.approx(np.sqrt(sum(np.sum(y[k] ** 2) for (_, _, y), k
                                                 in zip(rows, keep, strict=True))), rel=1e-12)


def test_ill_conditioned_fit_is_solved_by_qr(monkeypatch):
    """A regressor whose scaled condition number is about 10⁷ (beyond what normal equations
    resolve) takes the QR path, and so does any fit when the limit is lowered: both agree
    with the dense least squares."""
    (Yb, known, y), keep = _random_rows(3, 1200)
    other = _random_rows(4, 1200)[0][0][:, :, -1]
    Yb[:, :, -1] = Yb[:, :, -2] + 1e-7 * other  # two columns almost equal
    rows = [(Yb, known, y)]
    fit = FilteredFit(rows, [100.0], [keep], 4)
    calls = []
    qr = fit._qr_residual
    monkeypatch.setattr(fit, "_qr_residual", lambda f: calls.append(1) or qr(f))
    for cutoff in (None, 3.0):
        assert fit.residual(cutoff) == pytest.approx(
            _dense_residual(rows, [100.0], [keep], cutoff, 4), rel=1e-8)
    assert len(calls) == 2
    monkeypatch.setattr(_filteredfit, "MAX_COND", 1.0)
    rows, keep = _random_rows(5, 700)
    fit = FilteredFit([rows], [100.0], [keep], 4)
    assert fit.residual(2.0) == pytest.approx(_dense_residual([rows], [100.0], [keep], 2.0, 4),
                                              rel=1e-10)


def test_search_finds_the_dense_residuals_minimum():
    """An arm's torques logged through a 6th-order Butterworth at 1.2 Hz, searched with the
    4th-order model filter: no cutoff fits exactly, and the one found is the minimizer of
    the dense residual (a fine grid, then a tight bounded search) to 0.5 %."""
    rate = 200.0
    robot, rec, _ = logged_arm(seed=7, seconds=20, rate=rate, order=6, cutoff=1.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dynid.DynidWarning)
        data = IdentificationData(robot, rec, processing=Processing(
            cutoff=None, decimate=1, derivatives="recorded", deadzone=None, model_cutoff=None))
    found = choose_model_cutoff(data.regressor, data.base, data.processed, 4)
    from dynid.identify.modelband import model_rows

    processed = data.processed[0]
    rows = [model_rows(data.regressor, data.base, processed, processed, None, 4)]
    keep = [np.ones(processed.output.shape, bool)]

    def dense(x):
        return _dense_residual(rows, [rate], keep, float(np.exp(x)), 4)

    grid = np.log(np.geomspace(0.1, 80.0, 120))
    i = int(np.argmin([dense(x) for x in grid]))
    best = np.exp(minimize_scalar(dense, bounds=(grid[i - 1], grid[i + 1]), method="bounded",
                                  options={"xatol": 1e-6}).x)
    assert 0.9 < best < 1.3
    assert found == pytest.approx(best, rel=5e-3)
