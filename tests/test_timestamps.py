"""Irregular time stamps: measured, reported, refused or made uniform as asked, never taken as
uniform without a word."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import dataset

import dynid
from dynid.identify import Recording, read_csv, read_npz, resample, time_report


def _file(tmp_path, t, q, name="run.csv"):
    path = tmp_path / name
    np.savetxt(path, np.column_stack([t, q, 2 * q]), delimiter=",", fmt="%.17g",
               header="t,q1,q2,y1,y2", comments="")
    return path


COLS = {"time": "t", "positions": ["q1", "q2"], "output": ["y1", "y2"]}


def test_the_report_gives_the_numbers():
    """Steps alternating h + 2ε and h − 2ε have median h and jitter exactly 2ε (RMS and max);
    a repeated stamp, a step back and a gap of four missing samples are found where they
    were put."""
    h, eps = 0.005, 2e-4
    t = np.arange(201) * h + eps * (-1.0) ** np.arange(201)
    report = time_report(t)
    assert report.median_step == pytest.approx(h, rel=1e-12)
    assert report.jitter_rms == pytest.approx(2 * eps, rel=1e-9)
    assert report.jitter_max == pytest.approx(2 * eps, rel=1e-9)
    assert report.rate == pytest.approx(200.0, rel=1e-12) and not report.is_regular()
    assert report.is_regular(tolerance=0.2)
    bad = np.arange(100) * h
    bad[70:] += 4 * h                        # four samples missing before sample 70
    bad = np.insert(bad, 50, bad[49] - 1e-4)  # a step back at 50
    bad = np.insert(bad, 30, bad[29])        # a repeated stamp at 30
    report = time_report(bad)
    assert report.duplicates == (30,) and report.backwards == (51,)
    assert [(k, round(length / h, 9)) for k, _, length in report.gaps] == [(72, 5.0)]
    text = report.summary()
    assert "1 duplicated stamps (at samples 30)" in text
    assert "1 steps back in time (at samples 51)" in text
    assert "25 ms before sample 72 (0.345 s after the start)" in text
    assert time_report(np.arange(1000) * 1e-3).is_regular()  # rounding of k·h is regular


def test_jitter_is_kept_with_a_warning_and_refused_when_strict(tmp_path):
    rng = np.random.default_rng(0)
    t = np.arange(300) * 0.005 + rng.uniform(-5e-4, 5e-4, 300)
    q = np.column_stack([np.sin(t), np.cos(t)])
    path = _file(tmp_path, t, q)
    with pytest.warns(dynid.DynidWarning, match=r"run.csv \(time\): irregular time stamps: 300 "
                      r"stamps, median step .* ms .*jitter RMS .* % of a step\), max .*The "
                      r"stamps are kept as recorded \(not uniform\); to make them uniform read "
                      r"with timestamps='resample' .* or timestamps='uniform'"):
        rec = read_csv(path, **COLS)
    np.testing.assert_array_equal(rec.time, t)
    assert rec.history[-1].startswith("irregular time stamps kept: 300 stamps")
    with pytest.raises(dynid.DataError, match=r"run.csv \(time\): irregular time stamps: .* The "
                       r"samples cannot be taken as uniform; read with timestamps='resample'"):
        read_csv(path, timestamps="strict", **COLS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_csv(path, timestamps="keep", **COLS).history == (
            "read run.csv (time, positions, output)",)


@pytest.mark.parametrize(("edit", "message"), [
    ("duplicate", r"1 duplicated stamps \(at samples 40\)\. The samples cannot be taken as "
                  r"uniform; read with timestamps='resample'"),
    ("gap", r"1 gaps of more than 1.5 steps \(50 ms before sample 40 .*trim the file around a "
            r"gap \(trim='START:END'\), or read it with timestamps='keep'"),
    ("back", r"1 steps back in time \(at samples 40\).*samples out of order are not repaired"),
])
def test_duplicates_gaps_and_steps_back_are_refused_by_default(tmp_path, edit, message):
    t = np.arange(100) * 0.01
    if edit == "duplicate":
        t = np.insert(t, 40, t[39])
    elif edit == "gap":
        t[40:] += 0.04
    else:
        t[40] = t[39] - 0.001
    q = np.column_stack([np.sin(t), np.cos(t)])
    with pytest.raises(dynid.DataError, match=r"run.csv \(time\): irregular time stamps: .*"
                                              + message):
        read_csv(_file(tmp_path, t, q), **COLS)


def test_resampling_interpolates_onto_a_uniform_grid(tmp_path):
    """Sinusoids sampled at jittered stamps, resampled with the cubic spline, match the same
    sinusoids at the grid's times to the spline's error bound ``(5/384) h⁴ max|f⁗|`` (with the
    largest step as h, and twice the bound for the not-a-knot ends)."""
    rng = np.random.default_rng(1)
    h, w = 0.005, 2 * np.pi * np.array([1.0, 3.0])
    t = np.arange(400) * h + rng.uniform(-1e-3, 1e-3, 400)
    q = np.sin(np.outer(t, w))
    rec = read_csv(_file(tmp_path, t, q), timestamps="resample", **COLS)
    assert rec.is_uniform(1e-9)
    step = np.diff(rec.time).mean()
    report = time_report(t)
    assert step == pytest.approx(report.mean_step, rel=1e-9)
    bound = 2 * 5 / 384 * np.diff(t).max() ** 4 * w ** 4
    assert "counted from the first sample" in rec.history[-1]
    err = np.abs(rec.positions - np.sin(np.outer(t[0] + rec.time, w))).max(axis=0)
    assert np.all(err <= bound), (err, bound)
    np.testing.assert_allclose(rec.output, 2 * rec.positions, rtol=1e-12, atol=1e-12)
    assert rec.history[-1].startswith(f"resampled onto a uniform grid at {1 / step:.6g} Hz "
                                      "(cubic spline through the samples)")


def test_resampling_averages_duplicates_and_fills_short_gaps_only(tmp_path):
    t = np.arange(60) * 0.01
    q = np.column_stack([t, 3 * t])                # linear: every interpolant is exact
    dup_t = np.insert(t, 20, t[20])
    dup_q = np.insert(q, 20, q[20] + [1.0, -1.0], axis=0)  # the repeat is off by ±1
    rec = read_csv(_file(tmp_path, dup_t, dup_q), timestamps="resample", **COLS)
    assert rec.n_samples == 60
    np.testing.assert_allclose(rec.positions[20], q[20] + [0.5, -0.5], rtol=1e-12)
    np.testing.assert_allclose(rec.positions[[5, 40]], q[[5, 40]], rtol=1e-9, atol=1e-12)
    short = np.delete(t, [30, 31])                 # a gap of 3 steps: filled
    filled = read_csv(_file(tmp_path, short, np.delete(q, [30, 31], axis=0), "short.csv"),
                      timestamps="resample", **COLS)
    np.testing.assert_allclose(filled.positions, q, rtol=1e-9, atol=1e-12)
    long = np.delete(t, [30, 31, 32, 33])          # a gap of 5 steps: refused
    with pytest.raises(dynid.DataError, match=r"long.csv \(time\): irregular time stamps: .*1 "
                       r"gaps are longer than 3 steps, the first 50 ms at 0.29 s after the "
                       r"start; interpolating across them would invent the missing samples"):
        read_csv(_file(tmp_path, long, np.delete(q, [30, 31, 32, 33], axis=0), "long.csv"),
                 timestamps="resample", **COLS)
    back = t.copy()
    back[10] = back[9] - 1e-3
    with pytest.raises(dynid.DataError, match=r"Resampling needs stamps in order"):
        read_csv(_file(tmp_path, back, q, "back.csv"), timestamps="resample", **COLS)


def test_uniform_stamps_recover_the_sampling_grid(tmp_path):
    """Samples taken every 5 ms, stamped with up to ±1.5 ms of jitter: the least-squares line
    through the stamps has the grid's step within six standard errors of the jitter
    (σ√12/N^{3/2}); the time is counted from the first sample; the samples are untouched."""
    rng = np.random.default_rng(2)
    N, h = 2000, 0.005
    grid = 1.46e9 + np.arange(N) * h                 # absolute stamps, as loggers write them
    stamps = grid + rng.uniform(-1.5e-3, 1.5e-3, N)
    q = np.column_stack([np.sin(np.arange(N) * h), np.cos(np.arange(N) * h)])
    rec = read_csv(_file(tmp_path, stamps, q), timestamps="uniform", **COLS)
    sigma = 1.5e-3 / np.sqrt(3)
    slope_error = 6 * sigma * np.sqrt(12) / N ** 1.5
    assert np.abs(np.diff(rec.time) - h).max() <= slope_error
    assert rec.time[0] == 0 and np.abs(rec.time - (grid - grid[0])).max() <= N * slope_error
    np.testing.assert_array_equal(rec.positions, q)
    assert rec.history[-1].startswith("time stamps replaced by their least-squares line, "
                                      "200")
    lost = np.delete(stamps, 1000)                   # a lost sample is not jitter
    with pytest.raises(dynid.DataError, match=r"The stamps are not a constant rate with jitter: "
                       r"sample \d+ is .* off the fitted line, half a step or more"):
        read_csv(_file(tmp_path, lost, np.delete(q, 1000, axis=0), "lost.csv"),
                 timestamps="uniform", **COLS)


def test_resample_a_recording_at_another_rate():
    t = np.arange(500) * 0.002
    rng = np.random.default_rng(3)
    t[1:-1] += rng.uniform(-2e-4, 2e-4, 498)
    q = np.column_stack([np.sin(2 * np.pi * t), np.cos(2 * np.pi * t)])
    rec = Recording(t, q, q, velocities=2 * np.pi * q[:, ::-1] * [1, -1])
    out = resample(rec, 100.0)
    np.testing.assert_allclose(np.diff(out.time), 0.01, rtol=1e-9)
    np.testing.assert_allclose(out.positions, np.column_stack(
        [np.sin(2 * np.pi * out.time), np.cos(2 * np.pi * out.time)]), atol=1e-7)
    np.testing.assert_allclose(out.velocities[:, 0], 2 * np.pi * np.cos(2 * np.pi * out.time),
                               atol=1e-5)
    assert out.history == ("resampled onto a uniform grid at 100 Hz (cubic interpolation)",)
    lin = resample(rec, 100.0, method="linear")
    assert np.abs(lin.positions - out.positions).max() < 1e-3
    with pytest.raises(dynid.DataError, match=r"method: expected one of cubic, linear"):
        resample(rec, method="quintic")
    with pytest.raises(dynid.DataError, match=r"rate: expected a sample rate > 0 in Hz"):
        resample(rec, -1.0)


def test_the_kuka_stamps(tmp_path):
    """The KUKA LWR4+ logs (200 Hz, stamped with jitter): reported with their numbers, the
    default keeps them with a warning, 'strict' refuses them, 'uniform' and 'resample' give a
    uniform grid at 200 Hz."""
    root = dataset("kuka_lwr4_flobaroid") / "data"
    path = root / "measurements_1.npz"
    keys = {"time": "times", "output": "torques"}
    with np.load(path) as archive:
        times = archive["times"]
    dt = np.diff(times)
    report = time_report(times)
    assert report.median_step == np.median(dt)
    assert report.jitter_max == pytest.approx(np.abs(dt - np.median(dt)).max(), rel=1e-12)
    assert report.jitter_max > 1e-3 and not report.duplicates and not report.gaps
    with pytest.warns(dynid.DynidWarning, match=r"measurements_1.npz \(time\): irregular time "
                      r"stamps: 5027 stamps, median step 5 ms \(200.0\d+ Hz\), jitter RMS .*, "
                      r"max 1.56 ms \(31 %\)"):
        kept = read_npz(path, keys=keys)
    assert not kept.is_uniform()
    with pytest.raises(dynid.DataError, match=r"measurements_1.npz \(time\): irregular"):
        read_npz(path, keys=keys, timestamps="strict")
    for mode in ("uniform", "resample"):
        rec = read_npz(path, keys=keys, timestamps=mode, trim=500)
        assert rec.is_uniform(1e-9) and rec.rate == pytest.approx(200.0, rel=2e-4)
        assert rec.n_samples in (4526, 4527)
        assert rec.history[1] == ("measurements_1.npz: trimmed 500 samples at the start and 0 "
                                  "at the end (500:0)")


def test_stamps_that_cannot_be_measured_or_resampled_are_refused():
    from dynid.identify.timestamps import resampled

    with pytest.raises(dynid.DataError, match=r"time: expected at least 2 stamps to measure "
                                              r"their steps, found 1"):
        time_report([0.0])
    with pytest.raises(dynid.DataError, match=r"time: every stamp is the same; is the time "
                                              r"column the right one\?"):
        time_report(np.zeros(20))
    t = np.array([0.0, 0.01, 0.02, 0.025])
    with pytest.raises(dynid.DataError, match=r"time: 3 distinct stamps are too few for a "
                                              r"cubic interpolation"):
        resampled(t[:3], {"positions": np.zeros((3, 1))}, 0.01)
    q = np.ones((4, 2))
    q[2, 1] = np.nan
    with pytest.raises(dynid.DataError, match=r"time: positions: non-finite value nan at sample "
                                              r"2; remove or repair it before resampling"):
        resampled(t, {"positions": q}, 0.01)
    with pytest.raises(dynid.DataError, match=r"resample: expected a step > 0 s, found -1"):
        resampled(t, {"positions": np.ones((4, 1))}, -1.0)
