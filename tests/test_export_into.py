"""Identified parameters written into another URDF of the same robot (the manufacturer's):
the inertias are carried into its link frames, and a URDF whose joints or kinematics do not
match the model is refused."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_theta

import dynid
from dynid.errors import DataError

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[1]


def _pose(joint: ET.Element) -> pin.SE3:
    origin = joint.find("origin")
    xyz = np.array([float(x) for x in origin.get("xyz", "0 0 0").split()])
    rpy = np.array([float(x) for x in origin.get("rpy", "0 0 0").split()])
    return pin.SE3(pin.rpy.rpyToMatrix(rpy), xyz)


def _set_pose(joint: ET.Element, pose: pin.SE3) -> None:
    origin = joint.find("origin")
    origin.set("xyz", " ".join(f"{x:.17g}" for x in pose.translation))
    origin.set("rpy", " ".join(f"{x:.17g}" for x in pin.rpy.matrixToRpy(pose.rotation)))


def _rotated_frames(path: Path, angles: dict[str, float]) -> Path:
    """The test Panda URDF with each named joint's link frame turned about its (z) axis by
    the given angle, the next joint's origin turned back: the same robot in other frames."""
    root = ET.parse(DATA / "panda.urdf").getroot()
    joints = {j.get("name"): j for j in root.findall("joint")}
    child_of = {j.find("parent").get("link"): j for j in joints.values()}
    for name, angle in angles.items():
        joint = joints[name]
        assert joint.find("axis").get("xyz").split() == ["0", "0", "1"]
        turn = pin.SE3(pin.utils.rotate("z", angle), np.zeros(3))
        _set_pose(joint, _pose(joint) * turn)
        following = child_of[joint.find("child").get("link")]
        _set_pose(following, turn.inverse() * _pose(following))
    ET.ElementTree(root).write(path)
    return path


def _rnea(text: str, q, v, a) -> np.ndarray:
    model = pin.buildModelFromXML(text)
    data = model.createData()
    return np.array([pin.rnea(model, data, *s) for s in zip(q, v, a, strict=True)])


@pytest.fixture(scope="module")
def panda_theta():
    robot = dynid.load_robot("panda")
    theta = robot.prior.copy()
    return robot, theta


def test_parameters_go_into_another_urdf_of_the_robot_in_its_frames(panda_theta, tmp_path):
    robot, theta = panda_theta
    target = _rotated_frames(tmp_path / "other.urdf", {"joint3": 0.7, "joint5": -1.9})
    out = dynid.write_urdf(robot, theta, tmp_path / "into.urdf", into=target)
    written = out.path.read_text()
    assert "link3" in written and written.count("<inertial>") == 7
    # The rotated frames really differ from the model's: the written inertial of link3 is
    # not the one of the model's own URDF, yet the dynamics are the same.
    own = dynid.urdf_text(robot, theta)
    rng = np.random.default_rng(1)
    q, v, a = rng.uniform(-1, 1, (3, 20, robot.n))
    np.testing.assert_allclose(_rnea(written, q, v, a), _rnea(own, q, v, a), atol=1e-9,
                               rtol=0)
    link3 = ET.fromstring(written).find("link[@name='link3']/inertial/origin").get("xyz")
    link3_own = ET.fromstring(own).find("link[@name='link3']/inertial/origin").get("xyz")
    assert link3 != link3_own


def test_the_same_frames_give_the_same_inertials(panda_theta, tmp_path):
    robot, theta = panda_theta
    out = dynid.write_urdf(robot, theta, tmp_path / "same.urdf", into=DATA / "panda.urdf")
    rng = np.random.default_rng(2)
    q, v, a = rng.uniform(-1, 1, (3, 10, robot.n))
    np.testing.assert_allclose(_rnea(out.path.read_text(), q, v, a),
                               _rnea(dynid.urdf_text(robot, theta), q, v, a), atol=1e-9,
                               rtol=0)


def test_mjcf_built_from_another_urdf_keeps_the_dynamics(panda_theta, tmp_path):
    import mujoco

    robot, theta = panda_theta
    target = _rotated_frames(tmp_path / "other.urdf", {"joint2": 0.4})
    outs = [dynid.write_mjcf(robot, theta, tmp_path / f"{k}.xml", into=into)
            for k, into in (("own", None), ("into", target))]
    rng = np.random.default_rng(3)
    q, v, a = rng.uniform(-1, 1, (3, robot.n))
    forces = []
    for out in outs:
        model = mujoco.MjModel.from_xml_path(str(out.path))
        model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS
        data = mujoco.MjData(model)
        data.qpos[:], data.qvel[:], data.qacc[:] = q, v, a
        mujoco.mj_inverse(model, data)
        forces.append(data.qfrc_inverse.copy())
    np.testing.assert_allclose(forces[1], forces[0], rtol=1e-6, atol=1e-9)


def _edited(tmp_path: Path, name: str, change) -> Path:
    root = ET.parse(DATA / "panda.urdf").getroot()
    change(root)
    path = tmp_path / name
    ET.ElementTree(root).write(path)
    return path


def test_a_urdf_whose_joints_do_not_match_is_refused(panda_theta, tmp_path):
    robot, theta = panda_theta

    def rename(root):
        root.find("joint[@name='joint4']").set("name", "elbow")

    def flip(root):
        root.find("joint[@name='joint6']/axis").set("xyz", "0 0 -1")

    def prismatic(root):
        root.find("joint[@name='joint7']").set("type", "prismatic")

    def moved(root):
        origin = root.find("joint[@name='joint4']/origin")
        origin.set("xyz", "0.1 0 0")

    cases = [(rename, r"do not match the model's .*missing \['joint4'\]; not in the model "
                      r"\['elbow'\]"),
             (flip, r"joint 'joint6' does not move as in the model"),
             (prismatic, r"joint 'joint7' is prismatic there, revolute in the model"),
             (moved, r"joint '(joint4|joint5)' does not move as in the model")]
    for k, (change, match) in enumerate(cases):
        target = _edited(tmp_path, f"bad{k}.urdf", change)
        with pytest.raises(DataError, match=match):
            dynid.write_urdf(robot, theta, tmp_path / "x.urdf", into=target)
    assert not (tmp_path / "x.urdf").exists()
    with pytest.raises(dynid.ModelError, match="does not exist"):
        dynid.write_urdf(robot, theta, tmp_path / "x.urdf", into=tmp_path / "none.urdf")


def test_the_command_writes_into_a_urdf_and_a_parameter_file(tmp_path):
    robot = dynid.load_robot("panda")
    theta = random_theta(robot, np.random.default_rng(0))
    result_path = tmp_path / "result.json"
    rng = np.random.default_rng(4)
    t = np.arange(0, 6, 0.01)
    from dynid.hardware import FourierReference

    q, v, a = FourierReference.random(robot, frequency=0.3, seed=2)(t)
    y = dynid.Regressor(robot).predict(q, v, a, theta) + 0.01 * rng.standard_normal((t.size, 7))
    rec = dynid.Recording(t, q, y)
    dynid.OLS().fit(dynid.IdentificationData(robot, rec)).result_.save(result_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dynid.cli", "export", str(result_path),
                               *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300, check=False)

    done = run("--urdf", "p.urdf", "--into", str(DATA / "panda.urdf"), "--params", "p.yaml",
               "--project")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "p.urdf").is_file() and (tmp_path / "p.yaml").is_file()
    back = dynid.export.load_parameters(tmp_path / "p.yaml")
    assert back.robot.parameters.names == robot.parameters.names
    for args, message in ((("--params", "p.txt"), "--params p.txt: expected a .yaml"),
                          (("--urdf", "q.urdf", "--into", "none.urdf"), "--into none.urdf"),
                          (("--urdf", "q.yaml", "--params", "q.yaml"), "name the same file")):
        failed = run(*args)
        assert failed.returncode == 2 and message in failed.stderr, failed.stderr
        assert not (tmp_path / "q.urdf").exists() and not (tmp_path / "q.yaml").exists()
