"""The ``dynid`` command on bad input: exit status 2 with a clear message and no traceback,
checked before anything is computed; 1 (an internal error) only for a defect in dynid."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import QUICK, arm_files, closed_loop_files

from dynid.cli import main
from dynid.identify import load_result


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A two-joint robot file, a recording of it (NPZ and CSV) and a result file."""
    folder = tmp_path_factory.mktemp("cli")
    robot_file, robot, npz = arm_files(folder, csv=True)
    csv = folder / "run.csv"
    result = folder / "result.json"
    assert main(["identify", str(robot_file), str(npz), "-o", str(result), "--method",
                 "ols"]) == 0
    excitation, loop = closed_loop_files(folder, robot)
    text = loop.read_text()
    (folder / "panda-loop.yaml").write_text(text.replace("robot: arm2", "robot: panda"))
    (folder / "three-drives.yaml").write_text(
        text + "  motor3: {position: 30.0, velocity: 0.5, integral: 30.0}\n")
    (folder / "fast-loop.yaml").write_text(text.replace("control_rate: 100.0",
                                                        "control_rate: 250.0"))
    return {"robot": str(robot_file), "npz": str(npz), "csv": str(csv), "result": str(result),
            "folder": folder, "excitation": str(excitation), "loop": str(loop)}


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    """Commands whose output is refused never write; the others write into tmp_path."""
    monkeypatch.chdir(tmp_path)


def _run(argv, capsys) -> tuple[int, str]:
    """Exit status and standard error of ``dynid argv`` (argparse's usage errors included)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def _csv_columns(positions="shoulder,elbow", output="tau_shoulder,tau_elbow"):
    return ["--columns", "time=t", "--columns", f"positions={positions}", "--columns",
            f"output={output}"]


def test_help_documents_the_exit_status(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "exit status:" in out and "2  bad input or usage" in out
    assert "1  internal error: a defect in dynid" in out


def test_internal_errors_exit_1_with_one_paragraph(monkeypatch, capsys):
    import dynid.models

    def broken():
        raise RuntimeError("something inside dynid broke")

    monkeypatch.setattr(dynid.models, "embedded_robots", broken)
    monkeypatch.delenv("DYNID_DEBUG", raising=False)
    code, err = _run(["robots"], capsys)
    assert code == 1
    assert err.startswith("dynid: internal error: RuntimeError: something inside dynid broke")
    assert "defect in dynid" in err and "Traceback" not in err
    for argv in (["--debug", "robots"], ["robots", "--debug"]):
        code, err = _run(argv, capsys)
        assert code == 1 and "Traceback (most recent call last)" in err
    monkeypatch.setenv("DYNID_DEBUG", "1")
    code, err = _run(["robots"], capsys)
    assert code == 1 and "Traceback (most recent call last)" in err


def test_os_errors_on_user_paths_exit_2(monkeypatch, capsys):
    import dynid.models

    def denied():
        raise PermissionError(13, "Permission denied", "/data/run1.npz")

    monkeypatch.setattr(dynid.models, "embedded_robots", denied)
    code, err = _run(["robots"], capsys)
    assert code == 2 and err == "dynid: error: /data/run1.npz: Permission denied\n"


def test_binary_and_damaged_files_exit_2(files, tmp_path, capsys):
    binary = tmp_path / "robot.yaml"
    binary.write_bytes(bytes(range(256)) * 8)
    code, err = _run(["info", str(binary)], capsys)
    assert code == 2 and "robot.yaml" in err and "UTF-8" in err
    for name in ("run.csv", "run.npz", "result.json"):
        (tmp_path / name).write_bytes(bytes(range(256)) * 8)
    code, err = _run(["identify", files["robot"], str(tmp_path / "run.npz"), "-o",
                      str(tmp_path / "r.json")], capsys)
    assert code == 2 and "run.npz: not an NPZ archive" in err
    code, err = _run(["identify", files["robot"], str(tmp_path / "run.csv"), "-o",
                      str(tmp_path / "r.json"), *_csv_columns()], capsys)
    assert code == 2 and "run.csv: not a UTF-8 text file" in err
    code, err = _run(["validate", str(tmp_path / "result.json"), files["npz"]], capsys)
    assert code == 2 and "result.json" in err and "UTF-8" in err
    data = (files["folder"] / "run.npz").read_bytes()
    (tmp_path / "half.npz").write_bytes(data[: len(data) * 2 // 3])
    code, err = _run(["validate", files["result"], str(tmp_path / "half.npz")], capsys)
    assert code == 2 and "half.npz: not an NPZ archive" in err


def test_a_result_with_text_for_a_number_exits_2(files, tmp_path, capsys):
    data = json.loads(Path(files["result"]).read_text())
    data["base"]["values"][1] = "0.5 kg"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, err = _run(["validate", str(bad), files["npz"]], capsys)
    assert code == 2
    assert err == ("dynid: error: bad.json: base.values[1]: expected a finite number, found "
                   "'0.5 kg'\n")


@pytest.fixture
def nothing_computed(monkeypatch):
    """Fail the test if a command gets as far as processing data or designing."""
    import dynid.identify.data
    import dynid.trajectories.design

    def computed(*args, **kwargs):
        raise AssertionError("the command computed before checking where its results go")

    monkeypatch.setattr(dynid.identify.data.IdentificationData, "__init__", computed)
    monkeypatch.setattr(dynid.identify.validation, "validate", computed)
    monkeypatch.setattr(dynid.trajectories.design, "design_excitation", computed)


@pytest.mark.parametrize(("argv", "message"), [
    (["identify", "{robot}", "{npz}", "-o", "{tmp}/missing/r.json"],
     r"-o '.*missing/r.json': the folder '.*missing' does not exist"),
    (["identify", "{robot}", "{npz}", "-o", "{tmp}"], r"-o '.*' is a folder; give a file name"),
    (["identify", "{robot}", "{npz}", "-o", "{npz}"],
     r"-o '.*run.npz' is also an input of the command; writing it would overwrite that input"),
    (["identify", "{robot}", "{npz}", "-o", "{robot}"], r"is also an input of the command"),
    (["validate", "{result}", "{npz}", "--plot", "{tmp}/missing/v.png"],
     r"--plot '.*missing/v.png': the folder '.*missing' does not exist"),
    (["validate", "{result}", "{npz}", "--plot", "{tmp}/v.xyz"],
     r"--plot '.*v.xyz': unknown image format '.xyz'; end the name with one of .*\.png"),
    (["validate", "{result}", "{npz}", "{npz}", "--plot", "{tmp}/v.png"],
     r"two recordings have the same file name"),
    (["design", "{robot}", "-o", "{tmp}/missing/t.json", *QUICK],
     r"-o '.*missing/t.json': the folder '.*missing' does not exist"),
    (["design", "{robot}", "-o", "{tmp}/t.json", "--plot", "{tmp}/missing/t.png", *QUICK],
     r"--plot '.*missing/t.png': the folder"),
    (["design", "{robot}", "-o", "{tmp}/t.json", "--plot", "{tmp}/t.json", *QUICK],
     r"--plot '.*t.json': unknown image format '.json'"),
    (["payload", "{result}", "{npz}", "--link", "link2", "-o", "{tmp}/missing/p.json"],
     r"-o '.*missing/p.json': the folder '.*missing' does not exist"),
    (["gains", "{robot}", "{npz}", "{csv}", "--link", "link2", "--payload-mass", "1", "-o",
      "{npz}"], r"-o '.*run.npz' is also an input of the command"),
    (["identify", "{robot}", "{npz}", "--method", "ols", "--essential", "--validation", "{csv}",
      "-o", "{csv}"], r"-o '.*run.csv' is also an input of the command"),
])
def test_outputs_are_checked_before_computing(files, tmp_path, capsys, nothing_computed, argv,
                                              message):
    import re

    argv = [a.format(tmp=tmp_path, **files) for a in argv]
    code, err = _run(argv, capsys)
    assert code == 2, err
    assert re.search(message, err), err
    assert "Traceback" not in err


def test_a_failed_write_leaves_the_previous_result(files, tmp_path, monkeypatch, capsys):
    from dynid.identify.result import IdentificationResult

    out = tmp_path / "result.json"
    out.write_text("the previous result")

    def full(self, path):
        Path(path).write_text("half a res")
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(IdentificationResult, "save", full)
    code, err = _run(["identify", files["robot"], files["npz"], "-o", str(out), "--method",
                      "ols"], capsys)
    assert code == 2 and "No space left on device" in err
    assert out.read_text() == "the previous result"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


@pytest.mark.parametrize(("argv", "message"), [
    (["demo", "--rate", "0"], r"--rate: expected a finite number in \[20, 2000\], found 0"),
    (["demo", "--rate", "nan"], r"--rate: expected a finite number"),
    (["demo", "--periods", "-2"], r"--periods: expected a whole number from 1 to 20"),
    (["demo", "--periods", "1000000000"], r"--periods: expected a whole number from 1 to 20"),
    (["demo", "--noise", "-0.1"], r"--noise: expected a finite number in \[0, 10\]"),
    (["demo", "--noise", "inf"], r"--noise: expected a finite number"),
    (["demo", "--seed", "-1"], r"--seed: expected a whole number from 0 to 4294967295"),
    (["demo", "--seed", "1.5"], r"--seed: expected a whole number, found '1.5'"),
    (["identify", "{robot}", "{npz}", "--mass-bounds", "nan"],
     r"--mass-bounds: expected a finite number in \[0, 1\], found nan"),
    (["identify", "{robot}", "{npz}", "--decimate", str(10**30)],
     r"--decimate: expected a whole number from 1 to 10000, found '1000000000000000000000000000"),
    (["identify", "{robot}", "{npz}", "--cutoff", "-5"], r"--cutoff: expected a finite number "
                                                         r"in \[0.01, 1e\+06\], found -5 \(or "
                                                         r"auto or none\)"),
    (["identify", "{robot}", "{npz}", "--cutoff", "1e-320"], r"--cutoff: expected a finite"),
    (["identify", "{robot}", "{npz}", "--period", "1e308"], r"--period: expected a finite"),
    (["identify", "{robot}", "{npz}", "--epsilon", "inf"], r"--epsilon: expected a finite"),
    (["identify", "{robot}", "{npz}", "--total-mass", "5", "nan"], r"--total-mass: expected"),
    (["identify", "{robot}", "{npz}", "--order", "0"], r"--order: expected a whole number"),
    (["identify", "{robot}", "{npz}", "--skip", "-1"], r"--skip: expected a whole number"),
    (["validate", "{result}", "{npz}", "--period", "0"], r"--period: expected a finite number"),
    (["design", "{robot}", "--harmonics", str(10**12)], r"--harmonics: expected a whole number "
                                                        r"from 1 to 50"),
    (["design", "{robot}", "--periods", str(10**9)], r"--periods: expected a whole number"),
    (["design", "{robot}", "--samples", "1e9"], r"--samples: expected a whole number, found"),
    (["design", "{robot}", "--margin", "1"], r"--margin: expected a finite number in \[0, 1\)"),
    (["design", "{robot}", "--rate", "-100"],
     r"--rate: expected a finite number in \(0, 1e\+06\], found -100"),
    (["design", "{robot}", "--seed", "x"], r"--seed: expected a whole number, found 'x'"),
    (["identify", "{robot}", "{npz}", "--method", "ols", "--essential", "-0.01"],
     r"--essential: expected a finite number in \(0, 1e\+06\], found -0.01"),
    (["identify", "{robot}", "{npz}", "--method", "ols", "--essential", "nan"],
     r"--essential: expected a finite number"),
    (["payload", "{result}", "{npz}", "--link", "link2", "--draws", "1"],
     r"--draws: expected a whole number from 2 to 100000"),
    (["payload", "{result}", "{npz}", "--link", "link2", "--xyz", "0", "inf", "0"],
     r"--xyz: expected a finite number"),
    (["gains", "{robot}", "{npz}", "{csv}", "--link", "link2", "--payload-mass", "nan"],
     r"--payload-mass: expected a finite number in \(0, 1e\+06\], found nan"),
    (["gains", "{robot}", "{npz}", "{csv}", "--link", "link2", "--payload-mass", "1",
      "--trajectory-tolerance", "0"], r"--trajectory-tolerance: expected a finite number"),
])
def test_numeric_options_are_refused_as_they_are_parsed(files, capsys, nothing_computed, argv,
                                                       message):
    import re

    code, err = _run([a.format(**files) for a in argv], capsys)
    assert code == 2
    assert re.search(r"error: argument " + message, err), err


@pytest.mark.parametrize(("argv", "message"), [
    (["identify", "{robot}", "{npz}", "--total-mass", "5", "1"],
     r"--total-mass 5 1: expected LOW ≤ HIGH"),
    (["design", "{robot}", "--noise", "1,nan", *QUICK], r"--noise '1,nan': expected comma-"
                                                        r"separated standard deviations"),
    (["design", "{robot}", "--fixed", "elbow=inf", *QUICK], r"--fixed 'elbow=inf': expected a "
                                                            r"finite position"),
    (["identify", "{robot}", "{csv}", "--columns", "torque=a"], r"--columns 'torque=a': unknown "
                                                                r"signal 'torque'"),
    (["identify", "{robot}", "{npz}", "--units", "positions"], r"--units: expected SIGNAL=VALUE"),
    (["identify", "{robot}", "{npz}", "--method", "ols", "--essential", "--friction",
      "stribeck"], r"--essential: the essential parameters are chosen among the linear"),
    (["identify", "{robot}", "{npz}", "--essential"], r"--essential: refits by weighted least "
                                                      r"squares; give --method ols, wls or "
                                                      r"gauss-markov \(found consistent\)"),
    (["identify", "{robot}", "{npz}", "--validation", "{csv}"],
     r"--validation: the recordings that choose the essential parameters; give --essential"),
    (["gains", "{robot}", "{npz}", "{npz}", "--link", "link2", "--payload-mass", "1"],
     r".*run.npz: the same file as the run without the payload"),
    (["identify", "{robot}", "{npz}", "--method", "iv", "--excitation", "{excitation}",
      "--loop", "{loop}", "--friction", "stribeck"],
     r"--method iv: the closed-loop estimators take Coulomb friction"),
    (["identify", "{robot}", "{npz}", "--method", "iv"],
     r"--method iv: .* e.g. --excitation excitation.json --loop loop.yaml"),
    (["identify", "{robot}", "{npz}", "--method", "didim", "--excitation", "{excitation}"],
     r"--method didim: .*--loop loop.yaml \(see --help for the loop file\)"),
    (["identify", "{robot}", "{npz}", "--method", "ols", "--loop", "{loop}"],
     r"--loop: applies to --method iv or didim, not ols"),
    (["identify", "{robot}", "{npz}", "--method", "iv", "--excitation", "{excitation}",
      "--loop", "{folder}/none.yaml"], r"--loop '.*none.yaml': no such file"),
    (["identify", "{robot}", "{npz}", "--method", "iv", "--excitation", "{loop}",
      "--loop", "{loop}"], r"trajectory file '.*loop.yaml' is not valid JSON"),
    (["identify", "{robot}", "{npz}", "--method", "iv", "--excitation", "{excitation}",
      "--loop", "{folder}/panda-loop.yaml"],
     r"closed-loop settings '.*panda-loop.yaml': the gains are for robot 'panda', not 'arm2'"),
    (["identify", "{robot}", "{npz}", "--method", "iv", "--excitation", "{excitation}",
      "--loop", "{folder}/three-drives.yaml"],
     r"closed-loop settings .*: drives: 3 given for the robot's 2 actuators "
     r"\['motor1', 'motor2'\]; missing \[\], unknown \['motor3'\]"),
    (["identify", "{robot}", "{npz}", "--method", "didim", "--excitation", "{excitation}",
      "--loop", "{folder}/fast-loop.yaml"],
     r"recording 1: 100 Hz, where the drives of .* record at 250 Hz"),
    (["identify", "{robot}", "{npz}", "--method", "iv", "--excitation", "{excitation}",
      "--loop", "{loop}", "--trim", "10"], r"--trim: the closed-loop estimators"),
])
def test_values_checked_by_the_commands(files, capsys, nothing_computed, argv, message):
    import re

    code, err = _run([a.format(**files) for a in argv], capsys)
    assert code == 2
    assert re.search(r"^dynid: error: " + message, err), err


def test_csv_columns_are_matched_to_the_joints_by_name(files, tmp_path, capsys):
    out_in_order, out_swapped = tmp_path / "a.json", tmp_path / "b.json"
    common = [files["robot"], files["csv"], "--method", "ols", "--cutoff", "none",
              "--decimate", "1"]
    assert main(["identify", *common, "-o", str(out_in_order), *_csv_columns()]) == 0
    assert main(["identify", *common, "-o", str(out_swapped),
                 *_csv_columns("elbow,shoulder", "tau_elbow,tau_shoulder")]) == 0
    np.testing.assert_allclose(load_result(out_swapped).base_params,
                               load_result(out_in_order).base_params, rtol=1e-10)
    capsys.readouterr()
    code, err = _run(["identify", *common, "-o", str(out_swapped),
                      *_csv_columns("elbow,elbow")], capsys)
    assert code == 2
    assert "run.csv: names: expected 2 unique names, one per column, found 'elbow' at " \
        "columns [0, 1]" in err
    code, err = _run(["identify", *common, "-o", str(out_swapped),
                      *_csv_columns("tau_shoulder,elbow")], capsys)
    assert code == 2
    assert ("run.csv: names: the columns are named after the joints of robot arm2 (shoulder, "
            "elbow), but 'tau_shoulder' is not one of its joints") in err
