"""Delays between channels: the output and recorded velocities behind the positions, shifted
against closed forms, estimated on motions whose delayed channels are computed directly (the
model evaluated at ``t − d``), compensated, and refused when they cannot be trusted."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import dynid
from dynid.demo import true_parameters
from dynid.hardware import FourierReference
from dynid.identify import (
    OLS,
    Delays,
    IdentificationData,
    Processing,
    Recording,
    compensate,
    estimate_delays,
    load_result,
    validate,
)
from dynid.identify.delays import advance
from dynid.models import random_robot


def _recording(robot, theta, seed, *, rate=1000.0, duration=10.0, delay=0.0,
               velocity_delay=None, counts=2**18, noise=0.05):
    """A Fourier motion (``seed``) sampled at ``rate``: positions from an encoder of ``counts``
    per turn, the model's output at ``t − delay`` with white noise of σ ``noise``, and, with
    ``velocity_delay``, the velocities at ``t − velocity_delay`` with 0.01 rad/s of noise."""
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, ramp=0.0, seed=seed)
    t = np.arange(0.0, duration, 1 / rate)
    q = ref(t)[0]
    rng = np.random.default_rng(seed + 100)
    y = dynid.Regressor(robot).predict(*ref(t - delay), theta)
    y = y + noise * rng.standard_normal(y.shape)
    step = 2 * np.pi / counts
    v = None if velocity_delay is None else \
        ref(t - velocity_delay)[1] + 0.01 * rng.standard_normal(q.shape)
    return Recording(t, step * np.round(q / step), y, velocities=v, names=robot.joint_names,
                     output_kind=robot.output)


@pytest.fixture(scope="module")
def panda_case():
    robot = dynid.load_robot("panda")
    return robot, true_parameters(robot, np.random.default_rng(0))


# Shifting a channel ---------------------------------------------------------------------------
def test_advance_shifts_smooth_signals_by_a_fraction_of_a_sample():
    """A non-periodic sum of sines advanced by 2.5 samples is the closed form at ``t + d``
    away from the ends; a whole number of samples is an index shift; and the shift is an
    all-pass: white noise keeps its power."""
    rate, d = 1000.0, 0.0025
    t = np.arange(0, 3.3, 1 / rate)

    def f(t):
        return np.column_stack([np.sin(2 * np.pi * 0.7 * t) + 0.3 * np.cos(2 * np.pi * 3.1 * t),
                                0.5 * t + np.sin(2 * np.pi * 1.3 * t + 0.4)])

    inner = slice(100, -100)
    np.testing.assert_allclose(advance(f(t), rate, d)[inner], f(t + d)[inner], atol=2e-5)
    np.testing.assert_allclose(advance(f(t), rate, d)[20:-20], f(t + d)[20:-20], atol=2e-3)
    np.testing.assert_array_equal(advance(f(t), rate, 0.003)[:-3], f(t)[3:])
    noise = np.random.default_rng(0).standard_normal((20000, 2))
    shifted = advance(noise, rate, 0.0005)
    assert np.mean(shifted ** 2) == pytest.approx(np.mean(noise ** 2), rel=0.02)
    # A half-sample shift is not an average of neighbours (which halves white noise's power).
    assert np.mean((shifted - 0.5 * (noise + np.roll(noise, -1, axis=0))) ** 2) > 0.1


def test_compensate_aligns_the_delayed_channels_and_drops_what_has_no_data():
    rate = 1000.0
    t = np.arange(0, 4.0, 1 / rate)
    q = np.column_stack([np.sin(2 * np.pi * 0.5 * t), np.cos(2 * np.pi * 0.3 * t)])
    v = np.column_stack([np.pi * np.cos(2 * np.pi * 0.5 * (t - 0.0013)),
                         -0.6 * np.pi * np.sin(2 * np.pi * 0.3 * (t - 0.0013))])
    y = np.sin(2 * np.pi * 0.8 * (t - 0.0042))[:, None] * np.array([1.0, 2.0])
    rec = Recording(t, q, y, velocities=v)
    out = compensate(rec, Delays(output=0.0042, velocities=0.0013))
    assert out.n_samples == rec.n_samples - 5  # ⌈4.2⌉ samples have no output after the shift
    assert out.history[-1] == ("delays compensated (output 4.2 ms, velocities 1.3 ms), 0 "
                               "samples dropped at the start and 5 at the end")
    np.testing.assert_array_equal(out.time, t[:-5])
    np.testing.assert_array_equal(out.positions, q[:-5])
    inner = slice(50, -50)
    truth = np.sin(2 * np.pi * 0.8 * out.time)[:, None] * np.array([1.0, 2.0])
    np.testing.assert_allclose(out.output[inner], truth[inner], atol=1e-5)
    v_true = np.column_stack([np.pi * np.cos(np.pi * out.time),
                              -0.6 * np.pi * np.sin(0.6 * np.pi * out.time)])
    np.testing.assert_allclose(out.velocities[inner], v_true[inner], atol=1e-5)
    # An output ahead of the positions (negative delay) loses samples at the start.
    early = compensate(rec, -0.002)
    np.testing.assert_array_equal(early.time, t[2:])
    np.testing.assert_array_equal(early.output, y[:-2])
    assert compensate(rec, Delays()) is rec


# Estimating the delays ---------------------------------------------------------------------
@pytest.mark.parametrize("delay,counts", [(0.003, 2**18), (0.0025, 4096)])
def test_output_delay_is_recovered_on_the_panda(panda_case, delay, counts):
    """The output 3 ms (and 2.5 ms: a fraction of a sample) behind encoder positions of 2¹⁸
    and 4096 counts per turn at 1 kHz; the exact Coulomb sign makes the output jump at
    reversals. Recovered within 0.2 ms; the recorded velocities, 2 ms behind, too."""
    robot, theta = panda_case
    rec = _recording(robot, theta, 1, delay=delay, velocity_delay=0.002, counts=counts)
    est = estimate_delays(robot, rec, Processing(derivatives="positions"))
    print(f"output {1e3 * delay} ms at {counts} counts per turn: estimated "
          f"{1e3 * est.output:.4f} ms; velocities 2 ms: {1e3 * est.velocities:.4f} ms")
    assert est.output == pytest.approx(delay, abs=2e-4)
    assert est.velocities == pytest.approx(0.002, abs=2e-4)


def test_output_delay_is_recovered_on_a_random_robot_with_current_output():
    """A random three-joint robot with gear motors, friction and current output, sampled at
    2 kHz, its current 1.3 ms (2.6 samples) behind; two recordings share the delay."""
    robot = random_robot(3, seed=4, friction=True, motors=True, output="current")
    theta = true_parameters(robot, np.random.default_rng(1))
    recs = [_recording(robot, theta, s, rate=2000.0, duration=6.0, delay=0.0013, noise=0.01)
            for s in (3, 5)]
    est = estimate_delays(robot, recs, Processing(derivatives="positions"))
    print(f"random robot, current 1.3 ms behind: estimated {1e3 * est.output:.4f} ms")
    assert est.output == pytest.approx(0.0013, abs=2e-4)
    assert est.velocities is None


@pytest.mark.filterwarnings("ignore:identification. the residual:dynid.DynidWarning")
def test_compensation_improves_validation_and_travels_with_the_result(panda_case, tmp_path):
    """Identified on a recording whose output is 3 ms late, the model validates on another
    (late alike) about as well as a model of undelayed data once the delay is estimated and
    compensated, and far worse without. The result keeps the numbers as its processing's
    delay, so validation compensates them; its outcome records that they were estimated."""
    robot, theta = panda_case
    train, late = (_recording(robot, theta, s, delay=0.003) for s in (1, 2))
    on_time = _recording(robot, theta, 2)
    settings = {"derivatives": "positions", "cutoff": 10.0, "deadzone": None}
    errors = {}
    for delay in (None, "estimate"):
        data = IdentificationData(robot, train, processing=Processing(delay=delay, **settings))
        result = OLS().fit(data).result_
        errors[delay] = validate(robot, result, late).overall_relative_error
    clean = OLS().fit(IdentificationData(robot, _recording(robot, theta, 1),
                                         processing=Processing(**settings))).result_
    errors["no delay"] = validate(robot, clean, on_time).overall_relative_error
    print("validation error %: " + ", ".join(f"{k}: {v:.3f}" for k, v in errors.items()))
    assert errors["estimate"] < 1.2 * errors["no delay"]
    assert errors[None] > 5 * errors["estimate"]

    proc = result.processing
    assert proc.delay.output == pytest.approx(0.003, abs=2e-4) and proc.delay.velocities is None
    assert proc.outcome.delays == proc.delay
    assert "delay     output 3" in proc.summary() and "estimated and compensated" in \
        proc.summary()
    loaded = load_result(result.save(tmp_path / "result.json"))
    assert loaded.processing.delay == proc.delay
    assert loaded.processing.outcome.delays == proc.delay
    # The delay is a setting validation applies: without it the same model validates worse.
    without = validate(robot, loaded, late, processing=Processing(**settings,
                                                                  decimate=proc.decimate))
    assert without.overall_relative_error > 5 * validate(robot, loaded, late
                                                         ).overall_relative_error


def test_identify_command_estimates_and_prints_the_delay(panda_case, tmp_path, capsys):
    from dynid.cli import main

    robot, theta = panda_case
    path = dynid.identify.save_npz(_recording(robot, theta, 1, duration=6.0, delay=0.004),
                                   tmp_path / "late.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dynid.DynidWarning)
        main(["identify", "panda", str(path), "-o", str(tmp_path / "r.json"), "--method", "ols",
              "--derivatives", "positions", "--delay", "estimate", "--quiet"])
    printed = capsys.readouterr().out
    line = next(s for s in printed.splitlines() if "delay" in s)
    assert "estimated and compensated" in line
    stored = json.loads((tmp_path / "r.json").read_text())["processing"]
    assert stored["delay"] == stored["estimated_delay"]
    assert stored["delay"]["output"] == pytest.approx(0.004, abs=2e-4)
    assert f"{1e3 * stored['delay']['output']:.3g} ms" in line


# Bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("value,message", [
    ("later", r"delay: expected the output's delay in s \(e\.g\. 0\.003\), 'estimate'"),
    (float("nan"), r"delay: expected the output's delay in s .* found nan"),
    ({"outptu": 0.003}, r"delay: unknown channels \['outptu'\]; expected 'output' and "
                        r"'velocities'"),
    ({"velocities": "2ms"}, r"delay: velocities: expected a delay in s .* found '2ms'"),
])
def test_bad_delay_settings(value, message):
    with pytest.raises(dynid.DataError, match=message):
        Processing(delay=value)


def test_delays_that_cannot_be_applied_are_refused(panda_case):
    robot, theta = panda_case
    rec = _recording(robot, theta, 1, duration=2.0)
    with pytest.raises(dynid.DataError, match=r"delay: the output's delay 300 ms is longer than "
                                              r"a tenth of the record \(2000 samples, 1\.999 s\)"
                                              r".* give it in seconds"):
        Processing(delay=0.3, cutoff=None, decimate=1).apply(rec, robot)
    with pytest.raises(dynid.DataError, match=r"delay: a delay of the velocities \(2 ms\) but "
                                              r"the recording carries no velocities"):
        compensate(rec, {"output": 0.003, "velocities": 0.002})
    with pytest.raises(dynid.DataError, match=r"delay='estimate': the delays are estimated by "
                                              r"identification .* Processing\(delay=0\.003\)"):
        Processing(delay="estimate").apply(rec, robot)
    with pytest.raises(dynid.DataError, match=r"bound: 500 ms is longer than a tenth of the "
                                              r"shortest record \(1\.999 s\)"):
        estimate_delays(robot, rec, bound=0.5)
    slow = rec.with_signals(time=rec.time * 2)
    with pytest.raises(dynid.DataError, match=r"delay='estimate': the recordings are sampled at "
                                              r"different rates \(1000, 500 Hz\)"):
        estimate_delays(robot, [rec, slow])
    entry = Processing(cutoff=5.0, decimate=10).to_dict() | {"rate": 1000.0,
                                                              "estimated_delay": 0.003}
    with pytest.raises(dynid.DataError, match=r"estimated_delay: expected \{'output': s, "
                                              r"'velocities': s\}, found 0\.003"):
        Processing.from_dict(entry)


def test_an_estimate_at_the_search_bound_warns(panda_case):
    robot, theta = panda_case
    rec = _recording(robot, theta, 1, duration=4.0, delay=0.006)
    with pytest.warns(dynid.DynidWarning, match=r"the delay of the output is at the search "
                                                r"bound \(\+3 ms\): it may be longer"):
        est = estimate_delays(robot, rec, Processing(derivatives="positions"), bound=0.003)
    assert est.output == pytest.approx(0.003, rel=1e-9)
