"""``dynid identify`` and ``dynid validate`` on recordings written to files."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import check_physical

import dynid
from dynid.cli import main
from dynid.demo import true_parameters
from dynid.hardware import FourierReference
from dynid.identify import Processing, Recording, load_result, read_npz, save_npz, validate


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    robot = dynid.load_robot("panda")
    rng = np.random.default_rng(0)
    theta = true_parameters(robot, rng)
    reg = dynid.Regressor(robot)
    folder = tmp_path_factory.mktemp("recordings")
    paths = []
    for k in range(2):
        reference = FourierReference.random(robot, frequency=0.1, ramp=0.0, seed=k + 1)
        q, v, a = reference(np.arange(0.0, 12.0, 0.01))
        y = reg.predict(q, v, a, theta)
        y += 0.01 * rng.standard_normal(y.shape)
        rec = Recording(np.arange(len(q)) / 100, q, y, velocities=v, accelerations=a)
        paths.append(save_npz(rec, folder / f"run{k}.npz"))
    return robot, theta, paths


def test_identify_then_validate(recordings, tmp_path, capsys):
    robot, theta, (train, test) = recordings
    out = tmp_path / "result.json"
    assert main(["identify", "panda", str(train), "-o", str(out), "--method", "consistent"]) == 0
    capsys.readouterr()
    result = load_result(out)
    assert result.robot_source == "panda" and result.method == "consistent"
    check_physical(robot, result.params)
    base = dynid.base_parameters(robot)
    np.testing.assert_allclose(result.base_params, base.to_base(theta), rtol=0.05,
                               atol=1e-3 * np.abs(base.to_base(theta)).max())
    plot = tmp_path / "val.png"
    assert main(["validate", str(out), str(test), "--plot", str(plot)]) == 0
    printed = capsys.readouterr().out.split("overall relative error")[1].split()[0]
    want = validate(robot, result, read_npz(test)).overall_relative_error
    assert float(printed) == pytest.approx(want, abs=1e-3)
    assert plot.stat().st_size > 10_000


def test_processing_options_and_methods_reach_the_result(recordings, tmp_path, capsys):
    _, _, (train, _) = recordings
    out = tmp_path / "result.json"
    for method in ("ols", "wls", "gauss-markov"):
        assert main(["identify", "panda", str(train), "-o", str(out), "--method", method,
                     "--skip", "10", "--cutoff", "20", "--decimate", "5",
                     "--model-cutoff", "8"]) == 0
        result = load_result(out)
        assert result.method == method
        assert result.processing == Processing(skip=10, cutoff=20.0, decimate=5,
                                               model_cutoff=8.0)
    assert main(["identify", "panda", str(train), "-o", str(out), "--method", "consistent",
                 "--covariance", "bootstrap", "--draws", "20"]) == 0
    result = load_result(out)
    assert result.covariance_method == "bootstrap"
    assert result.diagnostics["bootstrap_draws"] == 20 and result.settings["draws"] == 20
    assert main(["identify", "panda", str(train), "-o", str(out), "--method", "consistent",
                 "--regularization", "euclidean", "--weight", "1",
                 "--covariance", "regularized"]) == 0
    assert load_result(out).covariance_method == "regularized"
    printed = capsys.readouterr().out
    assert "covariance bootstrap" in printed and "residual whiteness over" in printed
    assert f"decimated by {result.processing.decimate}" in printed
    assert main(["identify", "panda", str(train), "-o", str(out), "--cutoff", "20"]) == 0
    printed, proc = capsys.readouterr().out, load_result(out).processing
    f3, order = proc.effective_cutoff(proc.outcome.rate)
    assert f"order {order}, −3 dB at {f3:.4g} Hz" in printed  # what filtfilt really does
    assert order == 8 and f3 < 20.0 and "dead zone" in printed


def test_csv_recordings_with_units(recordings, tmp_path, capsys):
    _, _, (train, _) = recordings
    rec = dynid.identify.read_npz(train)
    header = ["t"] + [f"q{j}" for j in range(7)] + [f"dq{j}" for j in range(7)] + \
        [f"ddq{j}" for j in range(7)] + [f"tau{j}" for j in range(7)]
    rows = np.column_stack([rec.time * 1e3, np.degrees(rec.positions),
                            np.degrees(rec.velocities), np.degrees(rec.accelerations),
                            rec.output])
    csv = tmp_path / "run.csv"
    np.savetxt(csv, rows, delimiter=",", header=",".join(header), comments="")
    out = tmp_path / "r.json"
    cols = ["--columns", "time=t", "--columns", "positions=" + ",".join(header[1:8]),
            "--columns", "velocities=" + ",".join(header[8:15]),
            "--columns", "accelerations=" + ",".join(header[15:22]),
            "--columns", "output=" + ",".join(header[22:])]
    units = ["--units", "time=ms", "--units", "positions=deg", "--units", "velocities=deg/s",
             "--units", "accelerations=deg/s^2"]
    assert main(["identify", "panda", str(csv), "-o", str(out), "--method", "wls",
                 *cols, *units]) == 0
    from_npz = tmp_path / "n.json"
    assert main(["identify", "panda", str(train), "-o", str(from_npz), "--method", "wls"]) == 0
    np.testing.assert_allclose(load_result(out).base_params, load_result(from_npz).base_params,
                               rtol=1e-6)
    capsys.readouterr()


def test_cli_reports_bad_input(recordings, tmp_path, capsys):
    _, _, (train, _) = recordings
    assert main(["identify", "panda", str(train), "-o", str(tmp_path / "x.json"),
                 "--output-kind", "current", "--units", "output=A"]) == 2
    err = capsys.readouterr().err
    assert "the output is current (in A), but the model of panda predicts joint_torque" in err
    assert "give every actuator of the robot file its torque_constant" in err
    assert main(["validate", str(tmp_path / "missing.json"), str(train)]) == 2
    assert "does not exist" in capsys.readouterr().err
    csv = tmp_path / "a.csv"
    csv.write_text("t,q\n0,1\n")
    assert main(["identify", "panda", str(csv)]) == 2
    assert "CSV recordings need --columns" in capsys.readouterr().err
