"""Robot files: the embedded Panda, the URDF route, and every malformed input."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml
from conftest import DATA, dataset
from hypothesis import given
from hypothesis import strategies as st

import dynid
from dynid.models import Regressor, load_robot_file, random_states, robot_from_mapping
from dynid.models import _schema as S

PANDA_FILE = dynid.models.library._HERE / "panda.yaml"


@pytest.fixture()
def panda_data() -> dict:
    return yaml.safe_load(PANDA_FILE.read_text())


def test_panda_file_contents(panda):
    params = panda.parameters
    assert len(params) == 70 + 14 + 7
    assert params["link3.mcx"].unit == "kg·m"
    assert params["link3.Izz"].unit == "kg·m²"
    assert params["joint2.fv"].unit == "N·m·s/rad" and params["joint2.fv"].group == "friction"
    assert params["motor2.Ia"].group == "actuator" and params["motor2.Ia"].prior == 0.1
    assert params["motor2.Ia"].unit == "kg·m²" and params["motor2.Ia"].lower == 0
    assert params["link1.m"].prior == pytest.approx(4.970684)
    # mcz of link 1 is m·c_z about the joint origin
    assert params["link1.mcz"].prior == pytest.approx(4.970684 * -0.04762)
    assert panda.limits.lower[3] == -3.0718 and panda.limits.acceleration[1] == 7.5
    assert panda.output == "joint_torque"
    assert panda.tree.model.existFrame("flange")


def test_names_and_units_of_prismatic_and_motor_terms():
    data = {"kinematics": {"modified_dh": [{"joint": "slide", "type": "prismatic"}]},
            "joints": {"slide": {"friction": {"viscous": 2, "coulomb": 1, "offset": -0.5},
                                 "actuator": {"name": "m1", "ratio": 20, "rotor_inertia": 1e-4,
                                              "viscous": 1e-3, "coulomb": 1e-2,
                                              "torque_constant": 0.05}}},
            "output": "current"}
    robot = robot_from_mapping(data)
    params = robot.parameters
    assert params.names[-6:] == ("slide.fv", "slide.fc", "slide.fo", "m1.Jm", "m1.fvm", "m1.fcm")
    assert params["slide.fv"].unit == "N·s/m" and params["slide.fc"].unit == "N"
    assert params["slide.fo"].lower == -np.inf and params["slide.fv"].lower == 0
    assert params["m1.fcm"].unit == "N·m"
    assert robot.output_names == ("m1",)


def test_urdf_robot_file_matches_dh_file(tmp_path, panda):
    """The same Panda through a robot file that points at a URDF."""
    data = yaml.safe_load(PANDA_FILE.read_text())
    data["kinematics"] = {"urdf": str(DATA / "panda.urdf")}
    robot = robot_from_mapping(data, base_dir=tmp_path)
    assert robot.parameters.names == panda.parameters.names
    q, v, a = random_states(panda, 10, np.random.default_rng(0))
    Y1, Y2 = Regressor(panda)(q, v, a), Regressor(robot)(q, v, a)
    assert np.abs(Y1 - Y2).max() < 1e-10 * np.abs(Y1).max()


def test_urdf_locked_joint_and_link_override(tmp_path):
    data = {"kinematics": {"urdf": str(DATA / "panda.urdf"), "locked": {"joint7": 0.3}},
            "links": {"link6": {"mass": 2.0, "com": [0, 0, 0.1]}}}
    robot = robot_from_mapping(data)
    assert robot.n == 6 and "joint7" not in robot.joint_names
    assert robot.parameters["link6.m"].prior == 2.0


def test_kuka_dataset_urdf_loads():
    path = dataset("kuka_lwr4_flobaroid") / "urdf" / "kuka_lwr4.urdf"
    robot = robot_from_mapping({"kinematics": {"urdf": str(path)}})
    assert robot.n == 7
    assert sum(robot.parameters[f"{link}.m"].prior for link in robot.tree.link_names) > 10


def test_actuator_limits_in_increments(panda_data):
    """Leborne Table III style: motor-side limits given in encoder increments."""
    panda_data["defaults"] = {"actuator": {"encoder": {"increments_per_turn": 6, "zero": 100},
                                           "limits": {"position": [100, 20950],
                                                      "velocity": 2000, "acceleration": 20000,
                                                      "unit": "increments"}}}
    # joint4 works at negative angles: its motor turns the other way to stay in [0, 20850].
    panda_data["joints"]["joint4"]["actuator"]["ratio"] = -100
    robot = robot_from_mapping(panda_data)
    lim = robot.actuator_limits
    np.testing.assert_allclose(lim.lower, 0.0)
    np.testing.assert_allclose(lim.upper, 20850 * 2 * np.pi / 6)
    np.testing.assert_allclose(lim.velocity, 2000 * 2 * np.pi / 6)
    np.testing.assert_allclose(lim.acceleration, 20000 * 2 * np.pi / 6)
    trans = robot.transmission
    q_m = np.array([[0.0, 1.0, -2.0, 3.0, 0.5, 0.25, 10.0]])
    np.testing.assert_allclose(trans.to_increments(q_m)[0, :2], [100, 100 + 6 / (2 * np.pi)])
    np.testing.assert_allclose(trans.from_increments(trans.to_increments(q_m)), q_m)
    np.testing.assert_allclose(trans.to_increments(q_m, derivative=True)[0, 1], 6 / (2 * np.pi))
    assert np.all(np.isinf(dynid.load_robot("panda").actuator_limits.velocity))
    with pytest.raises(dynid.ModelError, match="the actuators have no encoder resolution"):
        dynid.load_robot("panda").transmission.to_increments(q_m)


def test_defaults_merge_into_joints(panda_data):
    data = panda_data
    data["defaults"] = {"friction": {"offset": 0.1}}
    robot = robot_from_mapping(data)
    assert robot.parameters["joint3.fo"].prior == 0.1
    assert robot.parameters["joint3.fv"].prior == 0.2


def test_expressions_in_numbers(panda_data):
    assert robot_from_mapping(panda_data).tree.model.jointPlacements[2].rotation[1, 2] == 1.0
    panda_data["kinematics"]["modified_dh"][1]["alpha"] = "-90*deg"
    robot = robot_from_mapping(panda_data)
    np.testing.assert_allclose(robot.tree.model.jointPlacements[2].rotation[1, 2], 1.0)


def _edit(data: dict, path: str, value, *, delete: bool = False) -> dict:
    data = copy.deepcopy(data)
    keys = [int(k) if k.isdigit() else k for k in path.split("/")]
    node = data
    for k in keys[:-1]:
        node = node[k]
    if delete:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return data


BAD = [
    ("kinematics/modified_dh/0/alhpa", 0.0, r"kinematics.modified_dh\[0\].alhpa: unknown key; "
                                            r"did you mean 'alpha'\?"),
    ("nmae", "x", r"robot file.nmae: unknown key; did you mean 'name'\?"),
    ("kinematics/urdff", "x", r"kinematics.urdff: unknown key"),
    ("links/link1/masss", 1.0, r"links.link1.masss: unknown key; did you mean 'mass'\?"),
    ("joints/joint1/frction", {}, r"joints.joint1.frction: unknown key; did you mean 'friction'"),
    ("joints/joint1/friction/viscus", 1.0, r"joints.joint1.friction.viscus: unknown key"),
    ("joints/joint1/actuator/ratoi", 1.0, r"joints.joint1.actuator.ratoi: unknown key; did you "
                                          r"mean 'ratio'"),
    ("joints/joint1/limits/velocty", 1.0, r"joints.joint1.limits.velocty: unknown key"),
    ("joints/joint8", {}, r"joints.joint8: no such joint in the kinematics"),
    ("links/link9", {"mass": 1}, r"inertial priors given for unknown links \['link9'\]"),
    ("links/link1/com", [0, 0], r"links.link1.com: expected a list of 3 numbers, found a list "
                                r"of 2"),
    ("links/link1/inertia", [1, 0, 0, 1, 0], r"links.link1.inertia: expected a list of 6"),
    ("links/link1/mass", -1.0, r"links.link1.mass: expected a value ≥ 0, found -1.0"),
    ("links/link1/inertia", [1, 0, 0, 1, 0, 5], r"links.link1.inertia: not a physical inertia"),
    ("links/link1/inertia", [-1, 0, 0, 1, 0, 1], r"links.link1.inertia: not a physical inertia"),
    ("joints/joint1/friction/viscous", -0.1, r"joints.joint1.friction.viscous: expected a "
                                             r"value ≥ 0, found -0.1"),
    ("joints/joint1/actuator/ratio", 0, r"joints.joint1.actuator.ratio: expected a non-zero"),
    ("joints/joint1/actuator/rotor_inertia", 1e-5, r"joints.joint1.actuator.armature: give "
                                                   r"either rotor_inertia"),
    ("joints/joint1/actuator/armature", -0.1, r"joints.joint1.actuator.armature: expected a "
                                              r"value ≥ 0"),
    ("joints/joint1/actuator/viscous", -1e-5, r"actuator.viscous: expected a value ≥ 0"),
    ("joints/joint1/actuator/offset", "0.1 N", r"joints.joint1.actuator.offset: expected a "
                                               r"number or an expression"),
    ("joints/joint1/actuator/offset", float("nan"), r"joints.joint1.actuator.offset: expected "
                                                    r"a number, found nan"),
    ("joints/joint1/actuator/torque_constant", -0.1, r"joints.joint1.actuator.torque_constant:"
                                                     r" expected a value > 0"),
    ("joints/joint1/actuator/torque_constant", 0.1, r"joints.joint2.actuator.torque_constant: "
                                                    r"given for some actuators but not for "
                                                    r"\['joint2'"),
    ("joints/joint1/actuator/encoder", {"increments_per_turn": 6}, r"joints.joint2.actuator."
                                                                   r"encoder: given for some"),
    ("joints/joint1/actuator/encoder", {"zero": 6}, r"joints.joint1.actuator.encoder: missing "
                                                    r"required key 'increments_per_turn'"),
    ("joints/joint1/actuator/limits", {"position": [0, 10], "unit": "increments"},
     r"joints.joint1.actuator.limits.unit: limits in increments need the actuator's encoder"),
    ("joints/joint1/actuator/limits", {"velocity": 1, "unit": "deg"},
     r"joints.joint1.actuator.limits.unit: expected one of \['si', 'increments'\]"),
    ("joints/joint1/limits/position", [1, -1], r"joints.joint1.limits.position: expected "
                                               r"\[lower, upper\] with lower < upper"),
    ("joints/joint1/limits/position", [1, 2, 3], r"limits.position: expected a list of 2"),
    ("joints/joint1/limits/velocity", 0, r"joints.joint1.limits.velocity: expected a value > 0"),
    ("kinematics/modified_dh/0/type", "spherical", r"kinematics.modified_dh\[0\].type: expected "
                                                   r"one of \['revolute', 'prismatic'\]"),
    ("kinematics/modified_dh/0/r", "0.3 + foo", r"kinematics.modified_dh\[0\].r: expected a "
                                                r"number or an expression"),
    ("kinematics/modified_dh/0/r", True, r"kinematics.modified_dh\[0\].r: expected a number"),
    ("kinematics/modified_dh/1/joint", "joint1", r"joint names must be unique"),
    ("kinematics/modified_dh/1/parent", "link5", r"joint 'joint2': parent link 'link5' is not "
                                                 r"defined before it"),
    ("kinematics/modified_dh", [], r"kinematics.modified_dh: expected a list of joint rows"),
    ("kinematics/urdf", "robot.urdf", r"kinematics: expected exactly one of 'urdf', "
                                      r"'modified_dh', 'dh', found \['urdf', 'modified_dh'\]"),
    ("kinematics/locked", {"joint1": 0}, r"kinematics.locked: locking joints applies to URDF"),
    ("output", "force", r"output: expected one of \['joint_torque', 'motor_torque', 'current'\]"),
    ("output", "current", r"output 'current' needs a torque constant for every actuator"),
    ("gravity", [0, -9.81], r"gravity: expected a list of 3 numbers"),
    ("joints/joint2/actuator/name", "motor1", r"actuator names must be unique"),
    ("joints/joint1", [1, 2], r"joints.joint1: expected a mapping"),
    ("kinematics/tool", {"name": "link1"}, r"tool frame 'link1': a link or joint of the table "
                                           r"has this name already"),
    ("kinematics/modified_dh/2/link", "link1", r"joint 'joint3': link 'link1' is already the "
                                               r"link of joint 'joint1'"),
    ("joints/joint1/limits/unit", "increments", r"joints.joint1.limits.unit: joint limits are "
                                                r"in rad"),
]


@pytest.mark.parametrize("path, value, match", BAD, ids=[b[0] + "=" + repr(b[1]) for b in BAD])
def test_bad_robot_files_raise(panda_data, path, value, match):
    with pytest.raises(dynid.ModelError, match=match):
        robot_from_mapping(_edit(panda_data, path, value))


@pytest.mark.parametrize("path, match", [
    ("joints/joint4", r"joints: joints \['joint4'\] are missing; name every joint"),
    ("kinematics", r"robot file: missing required key 'kinematics'"),
    ("kinematics/modified_dh", r"kinematics: expected exactly one of"),
    ("links/link2/mass", r"links.link2: missing required key 'mass'"),
    ("kinematics/modified_dh/0/joint", r"kinematics.modified_dh\[0\]: missing required key "
                                       r"'joint'"),
])
def test_missing_entries_raise(panda_data, path, match):
    with pytest.raises(dynid.ModelError, match=match):
        robot_from_mapping(_edit(panda_data, path, None, delete=True))


def test_file_level_errors(tmp_path):
    with pytest.raises(dynid.ModelError, match=r"robot file '.*nothere\.yaml' does not exist"):
        load_robot_file(tmp_path / "nothere.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("kinematics: [unclosed\n")
    with pytest.raises(dynid.ModelError, match="is not valid YAML"):
        load_robot_file(bad)
    with pytest.raises(dynid.ModelError, match="robot file: expected a mapping"):
        robot_from_mapping([1, 2])
    with pytest.raises(dynid.ModelError, match=r"URDF file '.*missing\.urdf' does not exist"):
        robot_from_mapping({"kinematics": {"urdf": "missing.urdf"}}, base_dir=tmp_path)
    with pytest.raises(dynid.ModelError, match="locked joint 'elbow' is not in the model"):
        robot_from_mapping({"kinematics": {"urdf": str(DATA / "panda.urdf"),
                                           "locked": {"elbow": 0}}})
    with pytest.raises(dynid.ModelError, match="embedded robots are"):
        dynid.load_robot("puma560")


def test_file_round_trip_from_disk(tmp_path, panda_data):
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump(panda_data))
    robot = dynid.load_robot(path)
    assert robot.name == "panda" and len(robot.parameters) == 91


# Property tests of the validators ------------------------------------------------------------
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@given(finite)
def test_numbers_round_trip_through_text(x):
    assert S.number(repr(x), "x") == x
    assert S.number(x, "x") == x


@given(st.integers(-720, 720), st.integers(1, 12))
def test_angle_expressions(k, m):
    assert S.number(f"{k}*pi/{m}", "x") == pytest.approx(k * np.pi / m)
    assert S.number(f"{k}*deg", "x") == pytest.approx(k * np.pi / 180)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12))
def test_any_unknown_key_is_named(key):
    allowed = ("viscous", "coulomb", "offset", "smoothing")
    if key in allowed:
        return
    with pytest.raises(dynid.ModelError, match=f"x.{key}: unknown key"):
        S.mapping({"viscous": 1.0, key: 2.0}, "x", allowed)


@given(st.text(min_size=1, max_size=20))
def test_arbitrary_text_is_a_number_or_a_clear_error(text):
    try:
        value = S.number(text, "x")
    except dynid.ModelError as exc:
        assert str(exc).startswith("x: expected")
    else:
        assert np.isfinite(value)


def test_units_of_coordinates_and_outputs(panda):
    data = {"kinematics": {"modified_dh": [{"joint": "turn"},
                                           {"joint": "slide", "type": "prismatic"}]},
            "joints": {"turn": {"actuator": {"ratio": 10, "torque_constant": 0.1}},
                       "slide": {"actuator": {"ratio": 500, "torque_constant": 0.1}}}}
    robot = robot_from_mapping(data)
    assert robot.basis_units == ("rad", "m")
    assert robot.output_units == ("N·m", "N")
    assert robot.with_output("motor_torque").output_units == ("N·m", "N·m")
    assert robot.with_output("current").output_units == ("A", "A")
    assert dynid.load_robot("dvrk_psm").basis_units[2] == "m"   # insertion, behind a closure


def test_urdf_limits_are_the_default_limits_by_both_routes():
    """A robot built from a URDF tree in Python and one from a robot file naming the URDF both
    take the position, velocity and effort limits of the URDF's <limit> tags."""
    import xml.etree.ElementTree as ET

    path = DATA / "panda.urdf"
    tags = {j.get("name"): j.find("limit") for j in ET.parse(path).getroot().iter("joint")
            if j.get("type") in ("revolute", "prismatic")}
    for robot in (dynid.Robot(dynid.models.Tree.from_urdf(path)),
                  robot_from_mapping({"kinematics": {"urdf": str(path)}})):
        lim = robot.limits
        for key, values in (("lower", lim.lower), ("upper", lim.upper),
                            ("velocity", lim.velocity), ("effort", lim.effort)):
            expected = [float(tags[name].get(key)) for name in robot.joint_names]
            np.testing.assert_array_equal(values, expected, err_msg=key)
        assert np.all(np.isinf(lim.acceleration))


def test_link_inertias_built_in_python_are_checked():
    """The URDF order [ixx, ixy, ixz, iyy, iyz, izz] as a tensor; a link breaking the triangle
    inequality (izz > ixx + iyy) or with a negative principal moment is refused wherever it
    is built, not only from a robot file."""
    from dynid.models import LinkInertia

    link = LinkInertia(2.0, (0.0, 0.1, 0.0), (0.3, 0.01, 0.02, 0.4, 0.03, 0.5))
    np.testing.assert_array_equal(link.tensor, [[0.3, 0.01, 0.02], [0.01, 0.4, 0.03],
                                                [0.02, 0.03, 0.5]])
    for inertia in [(1, 0, 0, 1, 0, 2.1), (-0.1, 0, 0, 1, 0, 1), (1, 2, 0, 1, 0, 1)]:
        with pytest.raises(dynid.ModelError, match=r"^inertia: not a physical inertia"):
            LinkInertia(1.0, (0, 0, 0), inertia)
    with pytest.raises(dynid.ModelError, match=r"^mass: expected a value ≥ 0"):
        LinkInertia(-1.0)
