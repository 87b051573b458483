"""The model filter on part of a signal (``dynid.identify._chunkfilter``) against scipy's
zero-phase filter of the whole signal, and identification with the model filter chunk by
chunk against the whole recording's rows."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.signal
from conftest import logged_arm

import dynid
from dynid.identify import OLS, IdentificationData, Processing
from dynid.identify._chunkfilter import MARGIN_DECAY, filter_margin, filter_slice
from dynid.identify.modelband import model_rows

RATE = 200.0


def _signal(seed, N):
    """A random walk plus white noise: slow and fast content, (N, 2)."""
    rng = np.random.default_rng(seed)
    return 0.05 * np.cumsum(rng.standard_normal((N, 2)), axis=0) + rng.standard_normal((N, 2))


@pytest.mark.parametrize("order", [1, 2, 4, 6, 8])
@pytest.mark.parametrize("cutoff", [0.4, 1.5, 10.0, 90.0])
def test_part_filtered_with_its_margin_is_the_whole_filtered(order, cutoff):
    N = 40000
    x = _signal(order, N)
    sos = scipy.signal.butter(order, cutoff, fs=RATE, output="sos")
    whole = scipy.signal.sosfiltfilt(sos, x, axis=0)
    m = filter_margin(RATE, cutoff, order)
    calls = []

    def compute(part):
        calls.append(part)
        return x[part]

    for part in (slice(0, 300), slice(17000, 19000), slice(N - 500, N), slice(m + 3, m + 4),
                 slice(N // 2, None)):
        got = filter_slice(compute, N, part, RATE, cutoff, order)
        np.testing.assert_allclose(got, whole[part], rtol=0, atol=1e-11 * np.abs(x).max())
        start, stop, _ = part.indices(N)
        assert calls[-1] == slice(max(0, start - m), min(N, stop + m))


@pytest.mark.parametrize("cutoff", [0.5, 3.0, 40.0])
def test_margin_of_a_first_order_filter_from_its_pole(cutoff):
    """Order 1: the bilinear transform puts the pole at (1 − w) / (1 + w), w = tan(π c / fs)."""
    w = math.tan(math.pi * cutoff / RATE)
    pole = abs((1 - w) / (1 + w))
    assert filter_margin(RATE, cutoff, 1) == math.ceil(math.log(MARGIN_DECAY) / math.log(pole))


def test_margin_above_nyquist_is_refused():
    with pytest.raises(dynid.DataError, match=r"model_cutoff: 120 Hz is not below the Nyquist "
                                              r"frequency 100 Hz"):
        filter_margin(RATE, 120.0, 4)


@pytest.fixture(scope="module")
def logged():
    """An arm's RNEA torques through a 4th-order Butterworth at 5 Hz (margin 364 samples),
    40 s at 200 Hz, with exact states."""
    return logged_arm(seed=11, seconds=40, rate=RATE, order=4, cutoff=5.0)[:2]


def _data(robot, rec, **settings):
    processing = Processing(cutoff=None, decimate=settings.pop("decimate", 1),
                            derivatives="recorded", deadzone=None, model_cutoff=5.0)
    with warnings.catch_warnings():  # exact data: the residual is rounding, not noise
        warnings.simplefilter("ignore", dynid.DynidWarning)
        return IdentificationData(robot, rec, processing=processing, **settings)


def test_model_rows_of_a_part_are_the_whole_recordings(logged):
    robot, rec = logged
    data = _data(robot, rec)
    processed = data.processed[0]
    shifted = processed.with_signals(output=0.9 * processed.output)  # a "simulated" run
    for output_error in (False, True):
        whole = model_rows(data.regressor, data.base, processed, shifted, 5.0, 4, output_error)
        for part in (slice(0, 1000), slice(3000, 3100), slice(7500, None)):
            got = model_rows(data.regressor, data.base, processed, shifted, 5.0, 4,
                             output_error, rows=part)
            for g, w in zip(got, whole, strict=True):
                np.testing.assert_allclose(g, w[part], rtol=0,
                                           atol=1e-11 * max(np.abs(w).max(), 1.0))


@pytest.mark.parametrize("decimate", [1, 4])
def test_identification_chunk_by_chunk_matches_one_chunk(logged, decimate):
    """Chunks of 256 samples (each filtered with its margin) and one chunk holding the whole
    recording give the same estimate, and it is the arm's base parameters."""
    robot, rec = logged
    with warnings.catch_warnings():  # exact data: the residual is rounding, not noise
        warnings.simplefilter("ignore", dynid.DynidWarning)
        small = OLS().fit(_data(robot, rec, chunk_size=256, decimate=decimate))
        whole_data = _data(robot, rec, chunk_size=10 ** 6, decimate=decimate)
        whole = OLS().fit(whole_data)
    truth = whole_data.base.to_base(robot.prior)
    np.testing.assert_allclose(small.base_params_, whole.base_params_, rtol=0,
                               atol=1e-9 * np.abs(truth).max())
    assert np.abs(whole.base_params_ - truth).max() < 1e-7 * np.abs(truth).max()


@pytest.mark.parametrize("rows", [slice(5, 5), slice(9000, None), slice(0, 100, 2)])
def test_model_rows_of_no_consecutive_samples_are_refused(logged, rows):
    robot, rec = logged
    data = _data(robot, rec)
    processed = data.processed[0]
    with pytest.raises(dynid.DataError, match=r"model_rows: rows slice\(.*\) is not a "
                                              r"non-empty run of consecutive samples of a "
                                              r"recording of 8000; give e.g. "
                                              r"rows=slice\(0, 2048\)"):
        model_rows(data.regressor, data.base, processed, processed, 5.0, 4, rows=rows)
