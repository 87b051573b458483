"""Bad robot files and URDFs: bounded reading, physically wrong URDF values, mimic joints,
closure rows and their cuts, and numbers too large to compute with.

Every input here ends in a :class:`~dynid.ModelError` whose message names the file or field,
the value (abridged) and the fix, or, for the mimic joints and the massless links that are
allowed, in a robot checked against the physics (power balance).
"""

from __future__ import annotations

import copy
import json
import time

import numpy as np
import pytest
import yaml
from conftest import DATA
from mechanism_checks import power_balance_error

import dynid
from dynid import ModelError
from dynid._files import excerpt, load_yaml, read_structured
from dynid.models import Regressor, Tree, load_robot_file, random_states, robot_from_mapping
from dynid.models.library import _HERE

URDF = (DATA / "panda.urdf").read_text()
PANDA = yaml.safe_load((_HERE / "panda.yaml").read_text())


def _bomb(depth: int = 9, fanout: int = 9) -> str:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * fanout) + "]"]
    for d in range(1, depth):
        lines.append(f"a{d}: &a{d} [" + ", ".join([f"*a{d - 1}"] * fanout) + "]")
    return "\n".join(lines) + f"\nkinematics: {{modified_dh: *a{depth - 1}}}\n"


# Reading files -------------------------------------------------------------------------------
def test_alias_bomb_is_refused_quickly_with_a_short_message(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb())  # 9⁹ ≈ 4·10⁸ nodes once expanded, in about 400 bytes
    assert path.stat().st_size < 600
    start = time.perf_counter()
    with pytest.raises(ModelError, match=r"robot file '.*bomb\.yaml' is too large to read: it "
                                         r"has more than 100000 nodes once its anchors and "
                                         r"aliases are expanded \(at line \d+\)") as info:
        load_robot_file(path)
    assert time.perf_counter() - start < 1.0
    assert len(str(info.value)) < 400


def test_aliases_within_the_bound_load(tmp_path):
    """Anchors and aliases are fine in moderation: one actuator entry shared by every joint."""
    body = yaml.safe_dump({k: v for k, v in PANDA.items() if k not in ("joints", "defaults")})
    joints = "joints:\n  joint1: &act {actuator: {ratio: 100}}\n" + "".join(
        f"  joint{i}: *act\n" for i in range(2, 8))
    path = tmp_path / "aliases.yaml"
    path.write_text(body + joints)
    robot = load_robot_file(path)
    assert [d.ratio for d in robot.transmission.drives] == [100.0] * 7


@pytest.mark.parametrize("text, match", [
    ("&a [*a]\n", r"recursive alias \(line 1\)"),
    ("k: " + "[" * 100 + "]" * 100 + "\n", r"nested deeper than 64 levels"),
])
def test_recursive_and_deep_documents_are_refused(tmp_path, text, match):
    path = tmp_path / "doc.yaml"
    path.write_text(text)
    with pytest.raises(ModelError, match=r"robot file '.*doc\.yaml' is too large to read: .*"
                                         + match):
        load_robot_file(path)


@pytest.mark.parametrize("data, match", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", r"is not UTF-8 text \(byte 0x89 at offset 0\); is "
                                             r"it a binary file\? Save it as UTF-8"),
    ("name: caf\xe9\n".encode("latin-1"), r"is not UTF-8 text \(byte 0xe9 at offset 9\)"),
    (b"name: x\x00\n", r"contains NUL bytes \(offset 7\); is it a binary file"),
    ("name: x\n".encode("utf-16"), r"is UTF-16 text; save it as UTF-8"),
    (b"a: " + b"9" * 5000 + b"\n", r"is not valid YAML: Exceeds the limit \(4300 digits\)"),
])
def test_binary_and_non_utf8_files_are_refused(tmp_path, data, match):
    path = tmp_path / "robot.yaml"
    path.write_bytes(data)
    with pytest.raises(ModelError, match=r"robot file '.*robot\.yaml' " + match):
        load_robot_file(path)


def test_byte_order_mark_is_allowed(tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + (_HERE / "panda.yaml").read_bytes())
    assert load_robot_file(path).n == 7


def test_oversized_files_and_directories_are_refused(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text("# padding\n" * 120_000)  # 1.2 MB of comments
    with pytest.raises(ModelError, match=r"robot file '.*huge\.yaml' is larger than 1 MB, the "
                                         r"most a robot file may be; is it the right file\?"):
        load_robot_file(path)
    with pytest.raises(ModelError, match=r"robot file '.*' is not a regular file"):
        load_robot_file(tmp_path)


def test_json_files_are_read_with_the_same_bounds(tmp_path):
    """Result and trajectory files go through the same reader, with json.loads."""
    path = tmp_path / "result.json"

    def read():
        return read_structured(path, "result file", "JSON", json.loads, json.JSONDecodeError,
                               dynid.DataError)

    for text, match in [("[" * 100 + "]" * 100, "is too large to read: it is nested deeper "
                                                "than 64 levels"),
                        ("[" * 5000 + "]" * 5000, "is too large to read: it is nested too "
                                                  "deeply"),
                        ("9" * 5000, r"is not valid JSON: Exceeds the limit"),
                        ("{\"a\": [1, 2,]}", r"is not valid JSON: Expecting value: line 1")]:
        path.write_text(text)
        with pytest.raises(dynid.DataError, match=r"result file '.*result\.json' " + match):
            read()
    path.write_bytes(b"\xff\x00\x01")
    with pytest.raises(dynid.DataError, match="is not UTF-8 text"):
        read()
    path.write_text('{"a": [1, 2.5, {"b": null}]}')
    assert read() == {"a": [1, 2.5, {"b": None}]}


def test_excerpts_are_short():
    assert excerpt("x" * 10 ** 6) == "'" + "x" * 38 + "…" + "x" * 39 + "'"
    assert excerpt("/a/short/path.yaml") == "'/a/short/path.yaml'"
    assert len(excerpt(list(range(10 ** 6)))) < 80
    assert len(excerpt(10 ** 1000)) < 80
    nested = []
    for _ in range(1000):
        nested = [nested, nested]
    assert len(excerpt(nested)) <= 80
    assert excerpt(1.5) == "1.5"
    shared = yaml.safe_load(_bomb())  # 4·10⁸ nodes, shared: quoting it stays short and quick
    start = time.perf_counter()
    assert len(excerpt(shared)) <= 80
    assert time.perf_counter() - start < 0.1
    with pytest.raises(ValueError, match="nodes once its anchors and aliases are expanded"):
        load_yaml(_bomb())


@pytest.mark.parametrize("path, value", [
    ("joints/joint1", "x" * 10 ** 6),
    ("joints/joint1/actuator/ratio", ["y" * 1000] * 1000),
    ("links/" + "k" * 10 ** 5, {"mass": 1}),
    ("joints/joint1/friction/" + "z" * 10 ** 5, 1.0),
    ("kinematics/modified_dh/0/joint", "j" * 10 ** 5),
    ("description", {"a": list(range(10 ** 5))}),
])
def test_messages_quote_values_in_short_excerpts(path, value):
    data = copy.deepcopy(PANDA)
    keys = path.split("/")
    node = data
    for k in keys[:-1]:
        node = node[int(k) if k.isdigit() else k]
    node[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = value
    with pytest.raises(ModelError) as info:
        robot_from_mapping(data)
    assert len(str(info.value)) < 600, str(info.value)[:1000]


# URDF values ---------------------------------------------------------------------------------
INERTIA1 = ('ixx="0.70337" ixy="-0.000139" ixz="0.006772" iyy="0.70661" iyz="0.019169" '
            'izz="0.009117"')
ZERO_INERTIA = 'ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"'


@pytest.mark.parametrize("old, new, match", [
    ('mass value="4.970684"', 'mass value="-1"',
     r"link 'link1' <inertial> <mass value>: expected a mass ≥ 0 kg, found -1"),
    ('mass value="4.970684"', 'mass value="nan"',
     r"link 'link1' <inertial> <mass value>: expected a number, found 'nan'"),
    ('mass value="4.970684"', 'mass value="1e400"',
     r"link 'link1' <inertial> <mass value>: expected a finite number, found '1e400'"),
    ('mass value="4.970684"', 'mass value="0"',
     r"link 'link1' <inertial>: mass 0 with a non-zero inertia .*; a link without mass has no "
     r"inertia"),
    ('izz="0.009117"', 'izz="5"',
     r"link 'link1' <inertial> <inertia>: not a physical inertia about the centre of mass "
     r"\(principal moments .*\); they must be ≥ 0 and satisfy the triangle inequalities; "
     r"found \{'ixx': 0.70337"),
    ('ixx="0.70337"', 'ixx="-5"', r"link 'link1' <inertial> <inertia>: not a physical"),
    ('ixy="-0.000139"', 'ixy="2"', r"link 'link1' <inertial> <inertia>: not a physical"),
    ('<origin xyz="0.003875 0.002081 -0.04762"', '<origin xyz="0.003875 inf -0.04762"',
     r"link 'link1' <inertial> <origin xyz>: expected a number, found 'inf'"),
    ('<origin xyz="0 0 0.333"', '<origin xyz="nan 0 0.333"',
     r"joint 'joint1' <origin xyz>: expected a number, found 'nan'"),
    ('<origin xyz="0 0 0.333"', '<origin xyz="0 0.333"',
     r"joint 'joint1' <origin xyz>: expected three numbers, found '0 0.333'"),
    ('rpy="-1.5707963267948966 0 0"', 'rpy="-1.5707963267948966 0 -inf"',
     r"joint 'joint2' <origin rpy>: expected a number, found '-inf'"),
    ('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>',
     r"joint 'joint1' <axis xyz>: the axis is zero"),
    ('lower="-2.8973" upper="2.8973"', 'lower="1" upper="-1"',
     r"joint 'joint1' <limit>: lower 1 is above upper -1"),
    ('velocity="2.175" effort="87"', 'velocity="-2" effort="87"',
     r"joint 'joint1' <limit velocity>: expected a value ≥ 0, found -2"),
    ('<joint name="joint1" type="revolute">', '<joint name="joint1" type="floating">',
     r"joint 'joint1': type 'floating' is not supported"),
    ('<joint name="joint1" type="revolute">', '<joint name="joint1" type="ball">',
     r"joint 'joint1': type must be one of \['revolute', 'continuous', 'prismatic', 'fixed'\], "
     r"found 'ball'"),
    ('<parent link="link2"/>', '<parent link="link4"/>',
     r"link 'link4' is the child of two joints|links .* are not connected to the root link"),
    ('<parent link="link0"/>', '<parent link="link3"/>',
     r"links \['link1', .*\] are not connected to the root link 'link0': their joints form a "
     r"loop"),
    ('<child link="link1"/>', '<child link="nowhere"/>',
     r"joint 'joint1' <child link>: no link named 'nowhere'"),
    ('<link name="link2">', '<link name="link1">', r"link 'link1' is defined twice"),
    ('<robot name="panda">', '<!DOCTYPE r [<!ENTITY a "x">]><robot name="panda">',
     r"DTDs and entity declarations .* are not read"),
])
def test_physically_wrong_urdf_values_are_refused(tmp_path, old, new, match):
    assert old in URDF
    path = tmp_path / "bad.urdf"
    path.write_text(URDF.replace(old, new, 1))
    with pytest.raises(ModelError, match=r"URDF file '.*bad\.urdf': " + match):
        Tree.from_urdf(path)
    with pytest.raises(ModelError, match=r"URDF text: " + match):
        Tree.from_urdf(URDF.replace(old, new, 1))
    with pytest.raises(ModelError, match=match):
        robot_from_mapping({"kinematics": {"urdf": str(path)}})


def _massless(text: str, link: str) -> str:
    """``text`` with ``link``'s inertial replaced by a massless one."""
    old = text[text.index(f'<link name="{link}">'):]
    old = old[:old.index("</link>")]
    return text.replace(old, f'<link name="{link}"><inertial><mass value="0"/>'
                             f'<inertia {ZERO_INERTIA}/></inertial>')


def test_a_joint_that_moves_no_mass_is_refused():
    """The last joint's link massless: the joint moves nothing, its column of the mass matrix
    is zero. The same link given a prior in the robot file loads."""
    text = _massless(URDF, "link7")
    with pytest.raises(ModelError, match=r"URDF text: joint 'joint7' moves no mass: its link "
                                         r"'link7' and every link beyond it are massless"):
        Tree.from_urdf(text)
    tree = Tree.from_urdf(text, inertias={"link7": dynid.models.LinkInertia(0.5).to_pinocchio()})
    assert tree.model.inertias[7].mass == 0.5


def test_massless_links_between_joints_and_fixed_to_a_parent_load():
    """A massless link carrying massive ones (the cross of a universal joint), and a massless
    frame fixed to its parent, are fine; the robot's dynamics are consistent."""
    text = _massless(URDF, "link1")
    text = text.replace("</robot>", '<link name="marker"/><joint name="mark" type="fixed">'
                                    '<parent link="link7"/><child link="marker"/></joint>'
                                    "</robot>")
    robot = dynid.Robot(Tree.from_urdf(text))
    assert robot.parameters["link1.m"].prior == 0
    assert power_balance_error(robot, robot.prior, seed=2) < 1e-8


# Mimic joints --------------------------------------------------------------------------------
LIMIT2 = '<limit lower="-1.7628" upper="1.7628" velocity="2.175" effort="87"/>'
LIMIT3 = '<limit lower="-2.8973" upper="2.8973" velocity="2.175" effort="87"/>\n  </joint>\n' \
         '  <link name="link4">'


def _mimic(multiplier: float = 0.5, offset: float = 0.1) -> str:
    return URDF.replace(LIMIT2, LIMIT2 + f'<mimic joint="joint1" multiplier="{multiplier}" '
                                         f'offset="{offset}"/>')


def test_mimic_joint_is_a_closure_row():
    """joint2 = 0.5 joint1 + 0.1: not a coordinate; the closure holds the row, and the robot's
    regressor satisfies the power balance with the mimic joint moving."""
    tree = Tree.from_urdf(_mimic())
    assert [(m.joint, m.leader, m.multiplier, m.offset) for m in tree.mimic] == \
        [("joint2", "joint1", 0.5, 0.1)]
    robot = dynid.Robot(tree)
    assert robot.joint_names == ("joint1", "joint3", "joint4", "joint5", "joint6", "joint7")
    q = np.zeros((1, 6))
    q[0, 0] = 1.0
    np.testing.assert_allclose(robot.closure.positions(q)[0, :3], [1.0, 0.6, 0.0])
    np.testing.assert_array_equal(robot.limits.lower, [-2.8973, -2.8973, -3.0718, -2.8973,
                                                       -0.0175, -2.8973])
    assert power_balance_error(robot, robot.prior, seed=3) < 1e-8
    # The generalized force of joint1 is its own torque plus 0.5 × joint2's (virtual work).
    full = dynid.Robot(Tree.from_urdf(URDF))
    q, v, a = random_states(robot, 5, np.random.default_rng(4))
    q_t, v_t, a_t, _ = robot.closure.tree_state(q, v, a)
    tau_t = Regressor(full)(q_t, v_t, a_t) @ full.prior
    tau = Regressor(robot)(q, v, a) @ robot.prior
    np.testing.assert_allclose(tau[:, 0], tau_t[:, 0] + 0.5 * tau_t[:, 1], rtol=1e-10)
    np.testing.assert_allclose(tau[:, 1:], tau_t[:, 2:], rtol=1e-10, atol=1e-12)


def test_mimic_chains_resolve_to_the_first_leader():
    text = _mimic(2.0, 0.1).replace(LIMIT3, LIMIT3.replace(
        "/>", '/><mimic joint="joint2" multiplier="3" offset="-0.2"/>', 1), 1)
    (_, m3) = sorted(Tree.from_urdf(text).mimic, key=lambda m: m.joint)
    assert (m3.leader, m3.multiplier, m3.offset) == ("joint1", 6.0, pytest.approx(0.1))


@pytest.mark.parametrize("mimic, match", [
    ('<mimic joint="joint9"/>', r"joint 'joint2' <mimic>: expected joint= naming another joint"),
    ('<mimic joint="joint2"/>', r"joint 'joint2' <mimic>: expected joint= naming another joint"),
    ('<mimic joint="joint1" multiplier="nan"/>', r"joint 'joint2' <mimic> multiplier: expected "
                                                 r"a number, found 'nan'"),
    ('<mimic joint="joint1" multiplier="0"/>', r"multiplier: 0 keeps the joint still"),
])
def test_bad_mimic_elements_are_refused(mimic, match):
    with pytest.raises(ModelError, match=match):
        Tree.from_urdf(URDF.replace(LIMIT2, LIMIT2 + mimic))


def test_mimic_loop_is_refused():
    text = URDF.replace(LIMIT2, LIMIT2 + '<mimic joint="joint3"/>').replace(
        LIMIT3, LIMIT3.replace("/>", '/><mimic joint="joint2"/>', 1), 1)
    with pytest.raises(ModelError, match=r"follow each other in a loop; one of them must be "
                                         r"free"):
        Tree.from_urdf(text)


def test_mimic_joints_in_robot_files(tmp_path):
    path = tmp_path / "mimic.urdf"
    path.write_text(_mimic())
    kin = {"urdf": str(path)}
    robot = robot_from_mapping({"kinematics": kin,
                                "joints": {"joint2": {"friction": {"viscous": 0.3}},
                                           **{f"joint{i}": {} for i in (1, 3, 4, 5, 6, 7)}}})
    assert robot.n == 6 and robot.parameters["joint2.fv"].prior == 0.3
    # A locked leader locks its mimic joint at 0.5 × 0.4 + 0.1.
    locked = robot_from_mapping({"kinematics": {**kin, "locked": {"joint1": 0.4}}})
    assert locked.tree.joint_names == ("joint3", "joint4", "joint5", "joint6", "joint7")
    plain = robot_from_mapping({"kinematics": {"urdf": str(DATA / "panda.urdf"),
                                               "locked": {"joint1": 0.4, "joint2": 0.3}}})
    np.testing.assert_allclose(locked.tree.model.jointPlacements[1].homogeneous,
                               plain.tree.model.jointPlacements[1].homogeneous)
    # With a closure section, the mimic rows join the rows given.
    linear = robot_from_mapping({"kinematics": kin, "closure": {
        "linear": {"joint3": {"joint1": 1}}, "cuts": []}})
    np.testing.assert_array_equal(linear.closure.matrix[:3, 0], [1.0, 0.5, 1.0])
    for data, match in [
        ({"kinematics": {**kin, "locked": {"joint2": 0.1}}},
         r"locked joint 'joint2' mimics 'joint1' in the URDF; lock 'joint1' instead"),
        ({"kinematics": kin, "closure": {"basis": [f"joint{i}" for i in range(1, 8)]}},
         r"closure.basis: 'joint2' mimics 'joint1' in the URDF, so it is not a basis "
         r"coordinate"),
        ({"kinematics": kin, "closure": {"linear": {"joint2": {"joint1": 1}}, "cuts": []}},
         r"closure.linear.joint2: this joint mimics 'joint1' in the URDF, which gives its row "
         r"already"),
        ({"kinematics": kin, "closure": {"passive": ["joint3"], "cuts": []}},
         r"closure.passive: the URDF's mimic joints \['joint2'\] are linear closure rows"),
    ]:
        with pytest.raises(ModelError, match=match):
            robot_from_mapping(data)


def test_a_closure_that_ignores_a_mimic_joint_is_refused():
    tree = Tree.from_urdf(_mimic())
    with pytest.raises(ModelError, match=r"tree joint 'joint2' mimics 'joint1' \(q = "
                                         r"0.5·q_leader \+ 0.1\) in the URDF, which only a "
                                         r"linear closure can keep"):
        dynid.Robot(tree, closure=dynid.models.IdentityClosure(tree.joint_names))
    A = np.eye(7)[:, [0, 2, 3, 4, 5, 6]]
    with pytest.raises(ModelError, match=r"the closure's row of 'joint2' does not follow it"):
        dynid.Robot(tree, closure=dynid.models.LinearClosure(
            A, ["joint1", "joint3", "joint4", "joint5", "joint6", "joint7"]))


# Numbers too large, limits -------------------------------------------------------------------
@pytest.mark.parametrize("path, value, match", [
    ("joints/joint1/actuator/ratio", "1e400",
     r"joints.joint1.actuator.ratio: expected a finite number, found '1e400', which is too "
     r"large"),
    ("joints/joint1/actuator/ratio", 10 ** 400,
     r"joints.joint1.actuator.ratio: expected a finite number, found 1000.*, which is too "
     r"large"),
    ("joints/joint1/actuator/ratio", float("inf"),
     r"expected a finite number, found inf, which is infinite"),
    ("links/link1/mass", float("nan"), r"links.link1.mass: expected a number, found nan \(not "
                                       r"a number\)"),
    ("joints/joint1/friction/viscous", "(-1)**0.5",
     r"joints.joint1.friction.viscous: expected a number or an expression"),
    ("joints/joint1/friction/viscous", "-" * 1000 + "1",
     r"expected a number or an expression such as 'pi/2' or '30\*deg' \(at most 200 "
     r"characters\), found '-----"),
    ("joints/joint1/limits/position", [-1e308, 1e308],
     r"joints.joint1.limits.position: \[-1e\+308, 1e\+308\] is too large to compute with"),
    ("joints/joint1/limits/velocity", 0, r"joints.joint1.limits.velocity: expected a value > 0"),
    ("joints/joint1/limits/effort", -5, r"joints.joint1.limits.effort: expected a value > 0"),
    ("links/link1/com", [1e308, 0, 0],
     r"the model is not finite with the values of the robot file: parameter link1\.\w+ "
     r"\(prior .*\) .* check its units"),
    ("gravity", [0, 0, -1e308], r"the model is not finite .* or gravity\) is far too large"),
    ("joints/joint1/limits", {"position": [0, 100], "unit": "increments"},
     r"joints.joint1.limits.unit: joint limits are in rad \(m for a prismatic joint\); encoder "
     r"increments belong to the motor side, under actuator.limits"),
    ("joints/joint1/actuator/limits", {"position": [0, 100], "unit": "increments"},
     r"joints.joint1.actuator.limits.unit: limits in increments need the actuator's encoder"),
    ("joints/joint4/actuator", {"ratio": 100, "limits": {"position": [0, 1000]}},
     r"joints.joint4.actuator.limits.position: the motor range \[0, 1000\] rad does not overlap "
     r"the motor positions \[-307.18, -6.98\] rad of the joint's limits \[-3.072, -0.0698\]; "
     r"no position satisfies both. Check the motor's zero"),
    ("joints/1", {}, r"joints: keys must be strings, found int 1; YAML reads it as a number or "
                     r"a boolean: quote it"),
    ("name", False, r"name: expected a non-empty string, found False; YAML reads it as a "
                    r"number or a boolean"),
])
def test_numbers_beyond_reason_are_refused(path, value, match):
    data = copy.deepcopy(PANDA)
    keys = path.split("/")
    node = data
    for k in keys[:-1]:
        node = node[k]
    node[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = value
    with pytest.raises(ModelError, match=match):
        robot_from_mapping(data)


def test_huge_encoder_resolution_is_only_a_number():
    """An integer beyond 64 bits is still a finite resolution, so it loads and round-trips."""
    data = copy.deepcopy(PANDA)
    data["defaults"] = {"actuator": {"encoder": {"increments_per_turn":
                                                 99999999999999999999999}}}
    robot = robot_from_mapping(data)
    assert robot.transmission.increments_per_turn[0] == 1e23


def test_robot_limits_name_the_coordinate():
    tree = Tree.from_urdf(URDF)
    lim = dynid.models.Limits.unbounded(7)
    lim.lower[2], lim.upper[2] = 1.0, 1.0
    with pytest.raises(ModelError, match=r"limits: every lower position limit must be below "
                                         r"the upper one; joint3 has \[1, 1\]"):
        dynid.Robot(tree, limits=lim)


def test_friction_and_screw_entries_without_quantities_model_nothing():
    """``friction: {}`` (or smoothing alone) and ``screw: {}`` give no term, as documented:
    quantities left out are not modelled."""
    data = copy.deepcopy(PANDA)
    data["joints"]["joint5"]["friction"] = {"smoothing": 0.01}
    data["joints"]["joint6"]["friction"] = {}
    names = robot_from_mapping(data).parameters.names
    assert not any(n.startswith(("joint5.f", "joint6.f")) for n in names)
    ariane = yaml.safe_load((_HERE / "ariane.yaml").read_text())
    ariane["defaults"]["actuator"]["screw"] = {}
    assert not any(n.endswith(".mt") for n in robot_from_mapping(ariane).parameters.names)


def test_huge_inertias_are_checked_without_overflow():
    from dynid.models import LinkInertia

    LinkInertia(1.0, (0, 0, 0), (1e300, 0, 0, 1e300, 0, 1e300))
    with pytest.raises(ModelError, match=r"inertia: not a physical inertia"):
        LinkInertia(1.0, (0, 0, 0), (1e300, 0, 0, 1e300, 0, 1e308))
    with pytest.raises(ModelError, match=r"mass: expected a finite value, found inf"):
        LinkInertia(float("inf"))


def test_documents_with_too_many_values_are_refused(tmp_path):
    path = tmp_path / "wide.yaml"
    path.write_text("kinematics: [" + "0," * 150_000 + "0]\n")
    with pytest.raises(ModelError, match=r"is too large to read: it has more than 100000 values "
                                         r"\(lists, mappings and scalars; at line 1\)"):
        load_robot_file(path)


def test_long_urdf_chains_load_in_linear_time():
    """2000 links, each joint mimicking the previous one: checks and mimic chains are walked
    once, not once per joint."""
    parts = ['<robot name="chain"><link name="l0"/>']
    for i in range(1, 2001):
        mimic = f'<mimic joint="j{i - 1}" multiplier="1.001"/>' if i > 1 else ""
        parts.append(
            f'<link name="l{i}"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" '
            f'izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j{i}" '
            f'type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/><origin xyz="0.1 0 '
            f'0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" velocity="1" effort="1"/>'
            f"{mimic}</joint>")
    start = time.perf_counter()
    tree = Tree.from_urdf("".join(parts) + "</robot>")
    assert time.perf_counter() - start < 5.0
    last = tree.mimic[-1]
    assert last.leader == "j1" and last.multiplier == pytest.approx(1.001 ** 1999)
    assert dynid.Robot(tree).n == 1


# Attached bodies -----------------------------------------------------------------------------
BODY = {"name": "weight", "parent": "link2", "xyz": [-0.15, 0, 0], "rpy": [0, 0, 0],
        "mass": 3.0, "com": [0, 0, 0.01], "inertia": [0.002, 0, 0, 0.002, 0, 0.003]}


@pytest.mark.parametrize("key, value, match", [
    ("parent", "link9", r"bodies\[1\].parent: no link or frame named 'link9' in the tree \(the "
                        r"fixed base cannot carry a body\); links and frames are \['link1', "),
    ("parent", "base", r"bodies\[1\].parent: no link or frame named 'base'"),
    ("parent", "universe", r"bodies\[1\].parent: 'universe' is fixed to the world, so a body on "
                           r"it moves with no joint and has no effect on the model; attach the "
                           r"body to a moving link"),
    ("parent", "joint3", r"bodies\[1\].parent: 'joint3' is a joint, not a link"),
    ("parent", 3, r"bodies\[1\].parent: expected a non-empty string, found 3"),
    ("mass", -1.0, r"bodies\[1\].mass: expected a value ≥ 0, found -1.0"),
    ("mass", float("nan"), r"bodies\[1\].mass: expected a number, found nan \(not a number\)"),
    ("mass", "1e400", r"bodies\[1\].mass: expected a finite number, found '1e400'"),
    ("inertia", [-0.002, 0, 0, 0.002, 0, 0.003],
     r"bodies\[1\].inertia: not a physical inertia about the centre of mass \(principal "
     r"moments .*\); they must be ≥ 0 and satisfy the triangle inequalities"),
    ("inertia", [0.001, 0, 0, 0.001, 0, 0.003], r"bodies\[1\].inertia: not a physical inertia"),
    ("inertia", [0.002, 0, 0, 0.002, 0], r"bodies\[1\].inertia: expected a list of 6 numbers"),
    ("com", [0, float("inf"), 0], r"bodies\[1\].com\[1\]: expected a finite number, found inf"),
    ("xyz", [0, float("inf"), 0], r"bodies\[1\].xyz\[1\]: expected a finite number, found inf, "
                                  r"which is infinite"),
    ("rpy", [0, 0, float("nan")], r"bodies\[1\].rpy\[2\]: expected a number, found nan"),
    ("xyz", [0, 0], r"bodies\[1\].xyz: expected a list of 3 numbers, found a list of 2"),
    ("name", "weight", r"bodies\[1\].name: body 'weight' is named twice; body names must be "
                       r"unique"),
    ("name", "link3", r"bodies\[1\].name: 'link3' is already the name of a link; a body's "
                      r"parameters are named after it"),
    ("name", "joint2", r"bodies\[1\].name: 'joint2' is already the name of a joint or frame"),
    ("name", "flange", r"bodies\[1\].name: 'flange' is already the name of a joint or frame"),
    ("name", "motor1", r"bodies\[1\].name: 'motor1' is already the name of an actuator, "
                       r"spring or cable"),
    ("known", "yes", r"bodies\[1\].known: expected true or false, found 'yes'"),
    ("mas", 1.0, r"bodies\[1\].mas: unknown key; did you mean 'mass'\?"),
])
def test_bad_bodies_are_refused(key, value, match):
    data = copy.deepcopy(PANDA)
    data["joints"]["joint1"]["actuator"]["name"] = "motor1"
    second = {**BODY, "name": "payload", "parent": "link6", "known": True, key: value}
    data["bodies"] = [BODY, second]
    with pytest.raises(ModelError, match=match):
        robot_from_mapping(data)


@pytest.mark.parametrize("bodies, match", [
    ({"weight": BODY}, r"bodies: expected a list of \{name, parent, xyz, rpy, mass, com, "
                       r"inertia\}, found \{'weight'"),
    ([{k: v for k, v in BODY.items() if k != "mass"}], r"bodies\[0\]: missing required key "
                                                       r"'mass'"),
    ([{k: v for k, v in BODY.items() if k != "parent"}], r"bodies\[0\]: missing required key "
                                                         r"'parent'"),
    ([[1, 2]], r"bodies\[0\]: expected a mapping"),
])
def test_malformed_bodies_sections_are_refused(bodies, match):
    with pytest.raises(ModelError, match=match):
        robot_from_mapping({**PANDA, "bodies": bodies})


def test_bodies_too_large_to_compute_with_are_refused():
    far = {**BODY, "mass": 1e306, "xyz": [1e3, 0, 0]}
    with pytest.raises(ModelError, match=r"bodies\[0\]: body 'weight' \(mass 1e\+306 kg, pose "
                                         r"xyz \[1000.0, 0.0, 0.0\]\) is too large to compute "
                                         r"with; check the units"):
        robot_from_mapping({**PANDA, "bodies": [far]})
    heavy = {**BODY, "mass": 1e300, "known": True}
    with pytest.raises(ModelError, match=r"bodies: the known bodies \['weight'\] give a model "
                                         r"that is not finite"):
        robot_from_mapping({**PANDA, "gravity": [0, 0, -1e10], "bodies": [heavy]})


def test_bodies_on_the_urdf_root_link_or_a_fixed_link():
    """A URDF's root link is fixed to the world; a link the URDF fixes to a moving link (the
    flange) carries a body like its moving link."""
    data = {"kinematics": {"urdf": str(DATA / "panda.urdf")}}
    with pytest.raises(ModelError, match=r"bodies\[0\].parent: 'link0' is fixed to the world"):
        robot_from_mapping({**data, "bodies": [{**BODY, "parent": "link0"}]})
    robot = robot_from_mapping({**data, "bodies": [{**BODY, "parent": "flange"}]})
    assert robot.parameters.links[-1] == "weight"


def test_bodies_built_in_python_are_checked():
    from dynid.models import Body, LinkInertia

    weight = LinkInertia(1.0)
    for kwargs, match in [
        (dict(xyz=(0.0, np.inf, 0.0)), r"body 'w': xyz must be three finite numbers"),
        (dict(rpy=(0.0, 0.0)), r"body 'w': rpy must be three finite numbers, found \(0.0, 0.0\)"),
        (dict(xyz="abc"), r"body 'w': xyz must be three finite numbers, found 'abc'"),
        (dict(known="yes"), r"body 'w': known must be True or False, found 'yes'"),
    ]:
        with pytest.raises(ModelError, match=match):
            Body("w", "link2", weight, **kwargs)
    with pytest.raises(ModelError, match=r"body 'w': inertia must be a LinkInertia"):
        Body("w", "link2", 1.0)
    with pytest.raises(ModelError, match=r"body name: expected a non-empty string, found ''"):
        Body("", "link2", weight)
    tree = Tree.from_urdf(URDF)
    with pytest.raises(ModelError, match=r"bodies\[0\].parent: no link or frame named 'link9'"):
        dynid.Robot(tree, bodies=(Body("w", "link9", weight),))
    with pytest.raises(ModelError, match=r"bodies\[0\]: expected a Body, found dict"):
        dynid.Robot(tree, bodies=({"name": "w"},))
    assert dynid.Robot(tree, bodies=Body("w", "link2", weight)).parameters.links[-1] == "w"
