"""The ``dynid export`` command, run as a user runs it (a subprocess): it writes the files and
says what they hold and leave out; bad input exits with status 2 and a message naming the fix,
before anything is written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import mujoco
import numpy as np
import pytest
from conftest import arm_files

import dynid

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "dynid.cli", "export", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The two-joint arm's robot file and an OLS result of it that records the file."""
    folder = tmp_path_factory.mktemp("export")
    robot_file, robot, npz = arm_files(folder)
    result = dynid.OLS().fit(dynid.IdentificationData(robot, [dynid.read_npz(npz)])).result_
    path = replace(result, robot_source=str(robot_file)).save(folder / "result.json")
    return {"robot": robot_file, "result": path, "folder": folder, "theta": result.params}


def test_export_writes_urdf_and_mjcf(files, tmp_path):
    done = run(str(files["result"]), "--urdf", "arm.urdf", "--mjcf", "arm.xml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "wrote arm.urdf (URDF" in done.stdout and "wrote arm.xml (MJCF" in done.stdout
    assert "not written" in done.stdout and "gravity (0, -9.81, 0)" in done.stdout
    assert "torque constants k_T of motor1, motor2" in done.stdout
    root = ET.parse(tmp_path / "arm.urdf").getroot()
    link2 = next(el for el in root.findall("link") if el.get("name") == "link2")
    theta = files["theta"]
    robot = dynid.load_robot(files["robot"])
    assert float(link2.find("inertial/mass").get("value")) == \
        theta[robot.parameters.index("link2.m")]
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "arm.xml"))
    np.testing.assert_array_equal(model.opt.gravity, [0.0, -9.81, 0.0])


def test_help_has_an_example(tmp_path):
    done = run("--help", cwd=tmp_path)
    assert done.returncode == 0 and "dynid export result.json --urdf" in done.stdout


@pytest.mark.parametrize("args, message", [
    ([], r"nothing to write; give --urdf FILE, --mjcf FILE, --params FILE or several"),
    (["--urdf", "missing/x.urdf"], r"--urdf 'missing/x\.urdf': the folder 'missing' does not "
                                   r"exist"),
    (["--urdf", "same.x", "--mjcf", "same.x"], r"name the same file"),
    (["--urdf", "x.urdf", "--robot", "panda"], r"its 22 parameters do not match the 91 of robot "
                                               r"'panda'"),
    (["--urdf", "x.urdf", "--robot", "nothere.yaml"], r"robot file 'nothere\.yaml' does not "
                                                      r"exist"),
])
def test_bad_input_exits_2(files, args, message, tmp_path):
    done = run(str(files["result"]), *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert re.search(message, done.stderr), done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.urdf").exists()


def test_a_device_or_pipe_is_not_replaced(files, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    done = run(str(files["result"]), "--urdf", "pipe", cwd=tmp_path)
    assert done.returncode == 2 and "'pipe' is not a regular file" in done.stderr
    assert (tmp_path / "pipe").is_fifo()


def test_missing_and_unreadable_result_files_exit_2(tmp_path):
    done = run("nothere.json", "--urdf", "x.urdf", cwd=tmp_path)
    assert done.returncode == 2 and "result file 'nothere.json' does not exist" in done.stderr
    (tmp_path / "bad.json").write_text(json.dumps({"format": "other"}))
    done = run("bad.json", "--urdf", "x.urdf", cwd=tmp_path)
    assert done.returncode == 2 and "not a dynid result file" in done.stderr


def test_non_physical_result_is_refused_then_projected(files, tmp_path):
    result = dynid.load_result(files["result"])
    robot = dynid.load_robot(files["robot"])
    theta = result.params.copy()
    theta[robot.parameters.index("link1.m")] = -0.5
    bad = replace(result, params=theta).save(tmp_path / "bad.json")
    done = run(str(bad), "--urdf", "x.urdf", "--mjcf", "x.xml", cwd=tmp_path)
    assert done.returncode == 2 and "link1 (mass -0.5 kg" in done.stderr
    assert "--project" in done.stderr and not (tmp_path / "x.urdf").exists()
    done = run(str(bad), "--urdf", "x.urdf", "--mjcf", "x.xml", "--project", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "projected onto the physically consistent set" in done.stdout
    assert "link1.m: -0.5 →" in done.stdout
    mass = float(next(el for el in ET.parse(tmp_path / "x.urdf").getroot().findall("link")
                      if el.get("name") == "link1").find("inertial/mass").get("value"))
    assert mass > 0
