"""``dynid identify --friction``: Stribeck and sigmoid friction from the command line, their
velocities in the result file, and the robot rebuilt with them by validate, report and
export; bad friction options and result entries exit with status 2 and a clear message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

import dynid
from dynid.hardware import FourierReference
from dynid.models.friction import with_friction

DATA = Path(__file__).parent / "data"
TRUE_V = {"shoulder": 0.1, "elbow": 0.05}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The two-joint arm with Coulomb friction (robot file), and two recordings of its truth
    with Stribeck friction on the shoulder and sigmoid friction on the elbow."""
    folder = tmp_path_factory.mktemp("friction")
    text = (DATA / "arm2.yaml").read_text().replace("friction: {viscous: 0.1}",
                                                    "friction: {viscous: 0.1, coulomb: 0.3}")
    robot_file = folder / "arm.yaml"
    robot_file.write_text(text)
    robot = dynid.load_robot(robot_file)
    truth = with_friction(robot, {"shoulder": "stribeck", "elbow": "sigmoid"},
                          velocities=TRUE_V)
    theta = truth.prior.copy()
    theta[truth.parameters.names.index("shoulder.fs")] = 0.6
    runs = []
    for seed in (1, 2):
        ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0, seed=seed)
        t = np.arange(0.0, 8.0, 0.005)
        q, v, a = ref(t)
        y = dynid.Regressor(truth).predict(q, v, a, theta)
        y += 0.01 * np.random.default_rng(seed).standard_normal(y.shape)
        runs.append(str(dynid.identify.save_npz(
            dynid.Recording(t, q, y, velocities=v, accelerations=a, names=robot.joint_names),
            folder / f"run{seed}.npz")))
    return str(robot_file), runs, folder


def test_identify_with_friction_per_joint_then_validate_report_export(files, capsys):
    robot_file, (train, test), folder = files
    out = folder / "r.json"
    code, printed, err = run_cli(["identify", robot_file, train, "-o", str(out), "--method", "wls",
                               "--friction", "shoulder=stribeck,elbow=sigmoid", "--deadzone",
                               "0", "--quiet"], capsys)
    assert code == 0, err
    assert "shoulder: stribeck velocity" in printed
    friction = json.loads(out.read_text())["solver"]["friction"]
    assert friction["models"] == {"shoulder": "stribeck", "elbow": "sigmoid"}
    for owner, v in TRUE_V.items():
        assert abs(friction["velocities"][owner] - v) < 5 * friction["sigma"][owner]
    code, printed, err = run_cli(["validate", str(out), test, "--quiet"], capsys)
    assert code == 0, err
    report = folder / "report.html"
    code, _, err = run_cli(["report", str(out), train, "--validation", test, "-o", str(report),
                         "--quiet"], capsys)
    assert code == 0, err
    assert 'id="friction-models"' in report.read_text()
    code, printed, err = run_cli(["export", str(out), "--urdf", str(folder / "x.urdf")], capsys)
    assert code == 0, err
    assert "the stribeck shape is left out (shoulder.fs)" in printed


def test_identify_with_friction_auto_holds_out_the_last_recording(files, capsys):
    robot_file, (train, test), folder = files
    out = folder / "auto.json"
    code, _printed, err = run_cli(["identify", robot_file, train, test, "-o", str(out), "--method",
                               "ols", "--friction", "auto", "--deadzone", "0", "--quiet"],
                              capsys)
    assert code == 0, err
    friction = json.loads(out.read_text())["solver"]["friction"]
    assert friction["models"] == {"shoulder": "stribeck", "elbow": "sigmoid"}
    assert set(friction["selection"]["validation_rmse"]) == {"coulomb", "sigmoid", "stribeck"}


@pytest.mark.parametrize("options, message", [
    (["--friction", "shoulder=lugre"], "unknown model 'lugre' for shoulder"),
    (["--friction", "wrist=stribeck"], "'wrist' has no Coulomb friction"),
    (["--friction", "stribek"], "neither a model .* nor JOINT=MODEL"),
    (["--friction", "auto"], "give at least two recordings"),
    (["--friction", "stribeck", "--friction-bounds", "0", "1"],
     "lower velocity bound must be > 0"),
    (["--friction", "stribeck", "--friction-bounds", "0.5", "0.1"],
     "must exceed the lower one 0.5")])
def test_bad_friction_options_exit_2(files, capsys, options, message):
    robot_file, (train, _), folder = files
    code, _, err = run_cli(["identify", robot_file, train, "-o", str(folder / "bad.json"),
                         "--quiet", *options], capsys)
    assert code == 2
    assert __import__("re").search(message, err), err


def test_a_result_with_a_bad_friction_entry_exits_2(files, capsys):
    robot_file, (train, test), folder = files
    out = folder / "r2.json"
    assert run_cli(["identify", robot_file, train, "-o", str(out), "--method", "ols",
                 "--friction", "elbow=sigmoid", "--quiet"], capsys)[0] == 0
    data = json.loads(out.read_text())
    data["solver"]["friction"]["models"]["elbow"] = "lugre"
    bad = folder / "bad_result.json"
    bad.write_text(json.dumps(data))
    code, _, err = run_cli(["validate", str(bad), test, "--quiet"], capsys)
    assert code == 2
    assert "solver.friction" in err and "unknown model 'lugre'" in err


def test_a_robot_file_declaring_stribeck_friction_is_identified_without_options(files, capsys):
    robot_file, (train, _), folder = files
    text = Path(robot_file).read_text()
    declared = folder / "declared.yaml"
    declared.write_text(text.replace(
        "friction: {viscous: 0.1, coulomb: 0.3}",
        "friction: {viscous: 0.1, coulomb: 0.3, model: stribeck, velocity: 0.3, static: 0.4}",
        1))
    robot = dynid.load_robot(declared)
    assert [p.name for p in robot.parameters if p.owner == "shoulder"] == \
        ["shoulder.fv", "shoulder.fc", "shoulder.fs"]
    assert robot.parameters[robot.parameters.names.index("shoulder.fs")].prior == 0.4
    out = folder / "declared.json"
    code, _, err = run_cli(["identify", str(declared), train, "-o", str(out), "--method",
                               "ols", "--deadzone", "0", "--quiet"], capsys)
    assert code == 0, err
    friction = json.loads(out.read_text())["solver"]["friction"]
    assert friction["models"] == {"shoulder": "stribeck", "elbow": "coulomb"}
    assert abs(friction["velocities"]["shoulder"] - TRUE_V["shoulder"]) < 0.02


@pytest.mark.parametrize("entry, message", [
    ({"coulomb": 0.3, "model": "lugre"}, r"friction.model: expected one of coulomb, sigmoid, "
                                         r"stribeck, found 'lugre'"),
    ({"coulomb": 0.3, "model": "sigmoid", "static": 1.0}, "a sigmoid friction has no static"),
    ({"coulomb": 0.3, "velocity": 0.1}, "a coulomb friction has no velocity"),
    ({"viscous": 0.1, "model": "stribeck"}, "a stribeck friction needs its coulomb value"),
    ({"coulomb": 0.3, "model": "stribeck", "velocity": 0.0}, r"friction.velocity: .*> 0")])
def test_bad_friction_entries_of_a_robot_file_raise(entry, message):
    import yaml

    data = yaml.safe_load((DATA / "arm2.yaml").read_text())
    data["joints"]["elbow"]["friction"] = entry
    with pytest.raises(dynid.ModelError, match=message):
        dynid.models.robot_from_mapping(data)
