"""The README's examples run as written, and its robot-file reference names every key."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from dynid.models import Regressor, _mechanisms, random_states, robot_from_mapping, robotfile

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
ROBOT_FILES = README[README.index("## Robot files\n"):README.index("## Excitation trajectories")]
CAPTURE = README[README.index("## Capture on the drives\n"):README.index("## Identification\n")]


def _blocks(lang: str, text: str = README) -> list[str]:
    return [part.split("```")[0] for part in text.split(f"```{lang}\n")[1:]]


def test_python_examples_run():
    for block in _blocks("python"):
        exec(compile(block, "README.md", "exec"), {})


def test_every_yaml_example_is_a_robot_file_or_a_drives_file():
    assert _blocks("yaml") == _blocks("yaml", ROBOT_FILES) + _blocks("yaml", CAPTURE)


def test_drives_file_example_loads(tmp_path):
    from dynid.hardware import DriveSettings

    (block,) = _blocks("yaml", CAPTURE)
    path = tmp_path / "drives.yaml"
    path.write_text(block)
    (tmp_path / "drive.eds").write_text("")  # named by the example; read only when opened
    robot = robot_from_mapping(yaml.safe_load(_blocks("yaml", ROBOT_FILES)[0]))  # 3 axes
    settings = DriveSettings.from_file(path, robot)
    assert settings.rate == 500 and settings.mapping.receive == ("target_position",
                                                                 "torque_offset")
    assert settings.nodes[0].dictionary == tmp_path / "drive.eds"
    assert settings.scalings[1].rated == 2.5 and settings.scalings[2].resolution == 1e-6


@pytest.mark.parametrize("block", _blocks("yaml", ROBOT_FILES),
                         ids=[yaml.safe_load(b)["name"] for b in _blocks("yaml", ROBOT_FILES)])
def test_robot_file_examples_load_and_evaluate(block):
    robot = robot_from_mapping(yaml.safe_load(block))
    q, v, a = random_states(robot, 5, np.random.default_rng(0), margin=0.05)
    assert np.all(np.isfinite(Regressor(robot).predict(q, v, a, robot.prior)))


def test_robot_file_examples_describe_what_they_say():
    robots = {r.name: r for r in (robot_from_mapping(yaml.safe_load(b))
                                  for b in _blocks("yaml", ROBOT_FILES))}
    arm = robots["myarm"]
    assert arm.output == "current" and arm.n == 3
    assert arm.tree.joint_types == ("revolute", "revolute", "prismatic")
    assert arm.parameters["motor1.fom"].prior == 2.0e-3
    wrist = robots["coupled_wrist"]
    np.testing.assert_allclose(wrist.transmission.jacobian(np.zeros((1, 3)))[0, 2], [0, 32, 32])
    assert "motor1.mt" in robots["lever_joint"].parameters
    assert robots["parallelogram"].n == 1 and robots["parallelogram"].tree.n == 3
    assert {"roll.k", "balance.k", "q1_cable.c2"} <= set(robots["sprung_arm"].parameters.names)
    weights = robots["arm_with_weights"]
    assert weights.parameters.links == ("link1", "link2", "link3", "counterweight")
    assert [b.known for b in weights.bodies] == [False, True]


KEYS = {
    "top level": robotfile._TOP, "kinematics": robotfile._KIN,
    "modified_dh": robotfile._ROW["modified_dh"], "dh": robotfile._ROW["dh"],
    "joints": robotfile._JOINT, "limits": robotfile._LIMITS, "friction": robotfile._FRICTION,
    "actuator": robotfile._ACTUATOR, "encoder": robotfile._ENCODER,
    "frames": _mechanisms._FRAME, "closure": _mechanisms._CLOSURE, "cuts": _mechanisms._CUT,
    "lever": _mechanisms._LEVER, "screw": _mechanisms._SCREW, "springs": _mechanisms._SPRING,
    "cables": _mechanisms._CABLE, "bodies": _mechanisms._BODY,
}


@pytest.mark.parametrize("section", sorted(KEYS))
def test_robot_file_reference_names_every_key(section):
    missing = [k for k in KEYS[section] if f"`{k}`" not in ROBOT_FILES
               and f" {k}:" not in ROBOT_FILES and f"{{{k}:" not in ROBOT_FILES]
    assert not missing, f"README's robot-file section does not describe {section} {missing}"
