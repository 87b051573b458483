"""Encoder quantization: the resolution a recording carries (checked, kept through reading,
writing, reordering and capture), and the output error that differentiating quantized
positions causes, measured against the error the quantization itself causes."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from conftest import DATA

import dynid
from dynid.hardware import FourierReference, RecordingWriter, SensorNoise, simulate
from dynid.identify import (
    OLS,
    IdentificationData,
    Processing,
    Recording,
    load_result,
    read_csv,
    read_npz,
    resolution_from_increments,
    save_npz,
)


def _quantize(q: np.ndarray, step) -> np.ndarray:
    return step * np.round(q / step)


def test_resolution_from_increments():
    np.testing.assert_allclose(resolution_from_increments([4096, 2 ** 18]),
                               2 * np.pi / np.array([4096, 2 ** 18]), rtol=1e-15)
    np.testing.assert_allclose(resolution_from_increments(4096, gear_ratio=[100, 50]),
                               2 * np.pi / (4096 * np.array([100, 50])), rtol=1e-15)
    for bad in (0, -4096, np.nan):
        with pytest.raises(dynid.DataError, match=r"increments_per_turn: expected numbers > 0"):
            resolution_from_increments(bad)
    with pytest.raises(dynid.DataError, match=r"gear_ratio: expected numbers > 0, found 0"):
        resolution_from_increments(4096, gear_ratio=0)


def _recording(resolution=None, n=2, N=50, **options) -> Recording:
    t = np.arange(N) * 1e-3
    q = np.sin(np.outer(t, np.arange(1, n + 1)))
    return Recording(t, q, q + 1, resolution=resolution, **options)


def test_a_recording_checks_and_keeps_its_resolution():
    rec = _recording(1e-3)
    np.testing.assert_array_equal(rec.resolution, [1e-3, 1e-3])
    rec = _recording([1e-3, 2e-3], names=["a", "b"])
    assert rec.reordered([1, 0]).resolution.tolist() == [2e-3, 1e-3]
    assert rec.select(slice(5, 40)).resolution.tolist() == [1e-3, 2e-3]
    assert rec.trim(3, 3).resolution.tolist() == [1e-3, 2e-3]
    assert rec.with_signals(positions=rec.positions + 1).resolution.tolist() == [1e-3, 2e-3]
    # In SI units whatever the positions' units.
    assert _recording(1e-3, units={"positions": "deg"}).resolution.tolist() == [1e-3, 1e-3]
    assert _recording(None).resolution is None
    for bad in (0.0, -1e-3, np.nan, np.inf):
        with pytest.raises(dynid.DataError, match=r"resolution of column 1 \(b\): expected the "
                                                  r"encoder step, a finite number > 0 in rad "
                                                  rf"\(m for a linear axis\), found {bad:g}; "
                                                  r"e.g. resolution=resolution_from_incr"):
            _recording([1e-3, bad], names=["a", "b"])
    with pytest.raises(dynid.DataError, match=r"resolution: expected one value or 2 \(one per "
                                              r"coordinate\), found shape \(3,\)"):
        _recording([1e-3] * 3)
    with pytest.raises(dynid.DataError, match=r"resolution: expected the encoder step .* "
                                              r"found 'fine'"):
        _recording("fine")


def test_files_carry_the_resolution(tmp_path):
    """A dynid CSV recording and a dynid NPZ archive carry the resolution; options given win;
    columns put in a robot's order take theirs along."""
    t = np.arange(100) * 1e-3
    q = np.column_stack([np.sin(t), np.cos(t)])
    step = resolution_from_increments([4096, 2 ** 18])
    path = tmp_path / "run.csv"
    with RecordingWriter(path, names=["elbow", "shoulder"], output_kind="joint_torque",
                         space="basis", resolution=step) as w:
        w.append_many(t, _quantize(q, step), q)
    assert json.loads(path.read_text().splitlines()[0][len("# dynid recording "):])[
        "resolution"] == step.tolist()
    rec = read_csv(path)
    np.testing.assert_array_equal(rec.resolution, step)
    np.testing.assert_array_equal(read_csv(path, resolution=1e-4).resolution, [1e-4, 1e-4])
    arm = dynid.load_robot(DATA / "arm2.yaml")  # shoulder, then elbow
    matched = read_csv(path, robot=arm)
    assert matched.names == ("shoulder", "elbow")
    np.testing.assert_array_equal(matched.resolution, step[::-1])
    back = read_npz(save_npz(rec, tmp_path / "run.npz"))
    np.testing.assert_array_equal(back.resolution, step)
    assert read_npz(save_npz(_recording(None), tmp_path / "none.npz")).resolution is None
    # Refused before the file is made, naming it.
    with pytest.raises(dynid.DataError, match=r"recording file bad.csv: resolution of column 0 "
                                              r"\(a\): expected the encoder step.*found 0"):
        RecordingWriter(tmp_path / "bad.csv", names=["a"], output_kind="current", resolution=0)
    assert not (tmp_path / "bad.csv").exists()


def test_malformed_resolution_in_a_recording_file(tmp_path):
    path = tmp_path / "bad.csv"
    with RecordingWriter(path, names=["a", "b"], output_kind="current",
                         resolution=[1e-3, 1e-3]) as w:
        w.append_many(np.arange(20) * 1e-3, np.zeros((20, 2)), np.ones((20, 2)))
    lines = path.read_text().splitlines(keepends=True)
    for value in ("[0.001, 0]", "[0.001]", '[0.001, "x"]'):
        path.write_text(lines[0].replace("[0.001, 0.001]", value) + "".join(lines[1:]))
        with pytest.raises(dynid.DataError, match=r"bad.csv, line 1 \(dynid recording "
                                                  r"metadata\): resolution: expected the "
                                                  r"encoder step .* of each of the 2 "):
            read_csv(path)


def test_simulated_recordings_carry_their_encoder_step():
    robot = dynid.load_robot(DATA / "arm2.yaml")
    ref = FourierReference.random(robot, harmonics=2, frequency=1.0, seed=0)
    step = 2 * np.pi / 4096
    sim = simulate(robot, robot.prior, ref, 1.0, control_rate=200,
                   noise=SensorNoise(position_step=step))
    rec = sim.measured[0]
    np.testing.assert_array_equal(rec.resolution, [step, step])
    assert np.allclose(rec.positions / step, np.round(rec.positions / step), atol=1e-6)
    assert sim.truth[0].resolution is None


# Errors in variables ---------------------------------------------------------------------------
def _arm(counts: int, output_noise: float = 0.0, seed: int = 0):
    """The two-joint arm along a Fourier motion sampled at 1 kHz for 10 s, its torques from the
    model (with white noise of ``output_noise`` N·m), and two recordings of it: positions
    quantized to ``counts`` a turn (carrying that resolution), and exact."""
    robot = dynid.load_robot(DATA / "arm2.yaml")
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0, seed=1)
    t = np.arange(0, 10, 1e-3)
    q, v, a = ref(t)
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    y = y + output_noise * np.random.default_rng(seed).standard_normal(y.shape)
    step = resolution_from_increments(counts)
    quantized = Recording(t, _quantize(q, step), y, names=robot.joint_names, resolution=step)
    exact = Recording(t, q, y, names=robot.joint_names)
    return robot, quantized, exact


# Exact torques have no noise floor, so identification would look for a model filter (an
# output low-passed before it was recorded); these tests study the regressor's errors alone.
PROCESSING = Processing(cutoff=8.0, decimate=50, deadzone=None, model_cutoff=None)


def test_errors_in_variables_measure_what_quantization_does_to_the_output():
    """Exact torques, positions from a 2¹⁴-increment encoder (2–3 increments a sample at
    speed): at the true parameters, the difference between the residuals of quantized and of
    exact positions is the output error the quantization causes. It depends on where the
    encoder's zero falls (the rounding errors of a smooth motion are not independent); over
    eight such offsets its RMS is the reported σ (from one white quantization error drawn at
    random) within 30 %. It is most of the residual (the torques are exact), so
    identification warns."""
    robot, quantized, exact = _arm(2 ** 14)
    base = dynid.base_parameters(robot)
    with pytest.warns(dynid.DynidWarning, match=r"differentiating the quantized positions puts "
                                                r"errors into the regressor .* shoulder σ"):
        data = IdentificationData(robot, quantized, processing=PROCESSING, base=base)
        result = OLS().fit(data).result_
    eiv = result.diagnostics["errors_in_variables"]
    truth = base.matrix @ robot.prior
    ref = IdentificationData(robot, exact, processing=PROCESSING, base=base).residuals(truth)[0]
    step = quantized.resolution
    square = []
    for offset in np.arange(8) / 8:
        positions = _quantize(exact.positions + offset * step, step) - offset * step
        moved = PROCESSING.apply(exact.with_signals(positions=positions))
        square.append(np.nanmean((data.residuals(truth, [moved])[0] - ref) ** 2, axis=0))
    actual = np.sqrt(np.mean(square, axis=0))
    print(f"reported σ {eiv['sigma']}, actual {actual} (per offset "
          f"{np.sqrt(square).round(5).tolist()}), residual {eiv['residual_sigma']}")
    assert eiv["outputs"] == ["shoulder", "elbow"]
    np.testing.assert_allclose(eiv["sigma"], actual, rtol=0.3)
    np.testing.assert_allclose(eiv["residual_sigma"], result.training_rmse)
    assert min(eiv["ratio"]) > 0.3


def test_errors_in_variables_small_against_output_noise(tmp_path):
    """A fine encoder (2²⁰ a turn) and 0.05 N·m of output noise: the quantization's output
    error is a small part of the residual, and nothing warns; the result file keeps it."""
    robot, quantized, _ = _arm(2 ** 20, output_noise=0.05)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*quantized positions",
                                category=dynid.DynidWarning)
        result = OLS().fit(IdentificationData(robot, quantized, processing=PROCESSING)).result_
    eiv = result.diagnostics["errors_in_variables"]
    assert max(eiv["ratio"]) < 0.05
    back = load_result(result.save(tmp_path / "result.json"))
    assert back.diagnostics["errors_in_variables"]["sigma"] == eiv["sigma"]


def test_no_resolution_no_report():
    robot, _, exact = _arm(2 ** 14)
    result = OLS().fit(IdentificationData(robot, exact, processing=PROCESSING)).result_
    assert "errors_in_variables" not in result.diagnostics


def test_actuator_positions_lose_their_resolution_in_basis_space():
    """Processed into basis coordinates through a transmission, the positions are no longer
    the encoder's readings: the processed recording states no resolution."""
    robot = dynid.load_robot(DATA / "arm2.yaml")
    t = np.arange(200) * 1e-3
    q_m = 50 * np.column_stack([np.sin(t), np.cos(t)])
    rec = Recording(t, q_m, np.ones_like(q_m) + t[:, None], space="actuator",
                    resolution=resolution_from_increments(4096))
    out = Processing(cutoff=None, decimate=1, deadzone=None).apply(rec, robot)
    assert out.space == "basis" and out.resolution is None
