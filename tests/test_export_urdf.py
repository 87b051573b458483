"""URDF export: the file read back by Pinocchio reproduces dynid's model of what it holds, the
source URDF's other content is kept, what URDF cannot hold is named, and bad input is refused
before anything is computed or written.

The reference is independent of the export's code: Pinocchio's RNEA on the file it reads, plus
``damping · v + friction · sgn(v) + armature · a`` with the damping and friction Pinocchio reads
and the armature ``r² · rotor inertia`` read from the transmissions by the test; it is compared
with dynid's regressor restricted to the parameters URDF holds (links, ``fv``, ``fc``, ``Ia``,
``Jm`` behind a gear).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from conftest import DATA, arm_files, dataset

import dynid
from dynid.demo import true_parameters
from dynid.hardware import FourierReference
from dynid.identify import pseudo_inertia
from dynid.models import Tree, robot_from_mapping
from dynid.models.library import random_inertia

DRAKE = "{http://drake.mit.edu}"
#: Parameter kinds a URDF holds besides the links (friction, drive inertia).
WRITTEN = ("fv", "fc", "Ia", "Jm")


def urdf_torque(text: str, gravity: np.ndarray, names, q, v, a) -> np.ndarray:
    """Joint torques (N, n) of the URDF ``text`` for the joints ``names`` (columns of q, v, a):
    Pinocchio's RNEA, the damping and friction it reads, and the armature of the
    transmissions (``r² · drake:rotor_inertia``)."""
    model = pin.buildModelFromXML(text)
    model.gravity.linear = gravity
    data = model.createData()
    armature = np.zeros(model.nv)
    for tr in ET.fromstring(text).findall("transmission"):
        act = tr.find("actuator")
        rotor = act.find(f"{DRAKE}rotor_inertia")
        if rotor is not None:
            r = float(act.find("mechanicalReduction").text)
            jm = model.joints[model.getJointId(tr.find("joint").get("name"))]
            armature[jm.idx_v] = r * r * float(rotor.get("value"))
    cols = [list(names).index(model.names[j]) for j in range(1, model.njoints)]
    out = np.zeros_like(q)
    for k in range(len(q)):
        qk = np.zeros(model.nq)
        for j, c in enumerate(cols, start=1):
            jm = model.joints[j]
            qk[jm.idx_q:jm.idx_q + jm.nq] = (np.cos(q[k, c]), np.sin(q[k, c])) if jm.nq == 2 \
                else q[k, c]
        vk, ak = v[k, cols], a[k, cols]
        out[k, cols] = (pin.rnea(model, data, qk, vk, ak) + model.damping * vk
                        + model.friction * np.sign(vk) + armature * ak)
    return out


def held(robot: dynid.Robot, theta: np.ndarray) -> np.ndarray:
    """``theta`` with every parameter a URDF does not hold set to zero."""
    keep = np.array([p.group == "link" or p.kind in WRITTEN for p in robot.parameters])
    return np.where(keep, theta, 0.0)


def round_trip_error(robot: dynid.Robot, theta: np.ndarray, path) -> tuple[float, float]:
    """Largest difference between the exported URDF's torques and dynid's along a random
    Fourier trajectory, and the largest torque."""
    out = dynid.write_urdf(robot, theta, path)
    np.testing.assert_array_equal(out.params, theta)
    ref = FourierReference.random(robot, harmonics=3, frequency=0.4, ramp=0.0, seed=4)
    q, v, a = ref(np.linspace(0.0, 2.5, 60))
    tau = urdf_torque(path.read_text(), robot.tree.model.gravity.linear, robot.joint_names,
                      q, v, a)
    expected = dynid.Regressor(robot.with_output("joint_torque")).predict(
        q, v, a, held(robot, theta))
    return float(np.abs(tau - expected).max()), float(np.abs(expected).max())


def urdf_robot(**extra) -> dynid.Robot:
    """The Panda read from tests/data/panda.urdf, with friction, gear motors, a locked
    joint and two bodies (one known, one identified)."""
    data = {"name": "panda_urdf",
            "kinematics": {"urdf": str(DATA / "panda.urdf"), "locked": {"joint7": 0.3}},
            "joints": {f"joint{i}": {"friction": {"viscous": 0.1 * i, "coulomb": 0.3},
                                     "actuator": {"ratio": 50 + i, "rotor_inertia": 2e-4}}
                       for i in range(1, 7)},
            "bodies": [{"name": "payload", "parent": "flange", "xyz": [0, 0, 0.05],
                        "mass": 0.5, "com": [0, 0.01, 0.02], "known": True},
                       {"name": "weight", "parent": "link2", "xyz": [-0.1, 0, 0.02],
                        "rpy": [0.1, 0.2, 0.3], "mass": 1.0, "com": [0, 0, 0.01],
                        "inertia": [0.001, 0, 0, 0.002, 0, 0.0025]}], **extra}
    return robot_from_mapping(data)


def panda_with_bodies() -> dynid.Robot:
    """The DH Panda with a counterweight on link2 and a known tool on the flange frame."""
    panda = dynid.load_robot("panda")
    rng = np.random.default_rng(5)
    bodies = (dynid.models.Body("counterweight", "link2", random_inertia(rng, 0.05),
                                xyz=(-0.15, 0.0, 0.02), rpy=(0.3, -0.2, 0.1)),
              dynid.models.Body("tool", "flange", random_inertia(rng, 0.05), xyz=(0, 0, 0.1),
                                known=True))
    return replace(panda, bodies=bodies)


@pytest.mark.parametrize("case", ["panda", "urdf", "bodies", "random"])
def test_exported_urdf_reproduces_dynid(case, tmp_path):
    robot = {"panda": lambda: dynid.load_robot("panda"), "urdf": urdf_robot,
             "bodies": panda_with_bodies,
             "random": lambda: dynid.random_robot(6, seed=3, prismatic=0.3, branched=True,
                                                  friction=True, motors=True)}[case]()
    theta = true_parameters(robot, np.random.default_rng(1))
    error, scale = round_trip_error(robot, theta, tmp_path / "robot.urdf")
    assert error <= 1e-9 * max(scale, 1.0), (error, scale)
    assert scale > 1.0  # the trajectory loads the joints


def test_urdf_holds_friction_transmissions_and_reads_back_in_dynid(tmp_path):
    robot = dynid.load_robot("panda")
    path = tmp_path / "panda.urdf"
    dynid.write_urdf(robot, robot.prior, path)
    root = ET.parse(path).getroot()
    joint2 = next(j for j in root.findall("joint") if j.get("name") == "joint2")
    assert float(joint2.find("dynamics").get("damping")) == 0.2
    assert float(joint2.find("dynamics").get("friction")) == 0.8
    tr = next(t for t in root.findall("transmission") if t.find("joint").get("name") == "joint5")
    act = tr.find("actuator")
    assert tr.find("type").text == "transmission_interface/SimpleTransmission"
    assert float(act.find("mechanicalReduction").text) == 100.0
    assert float(act.find(f"{DRAKE}gear_ratio").get("value")) == 100.0
    # the armature 0.04 of joint 5 is r² times the rotor inertia written
    assert np.isclose(100.0 ** 2 * float(act.find(f"{DRAKE}rotor_inertia").get("value")), 0.04,
                      rtol=1e-15)
    tree = Tree.from_urdf(path)  # dynid's own checks of a URDF pass
    assert tree.joint_names == robot.tree.joint_names
    assert "flange" in {f.name for f in tree.model.frames}
    low, up, vel, eff = tree.limits()
    for got, want in ((low, robot.limits.lower), (up, robot.limits.upper),
                      (vel, robot.limits.velocity), (eff, robot.limits.effort)):
        np.testing.assert_array_equal(got, want)


def test_unbounded_limits_and_continuous_joints_read_back(tmp_path):
    robot = dynid.random_robot(3, seed=2)
    lim = replace(robot.limits, lower=np.array([-np.inf, -1.0, -np.inf]),
                  upper=np.array([np.inf, 1.0, np.inf]))
    robot = replace(robot, limits=lim)
    path = tmp_path / "r.urdf"
    dynid.write_urdf(robot, robot.prior, path)
    types = {j.get("name"): j.get("type") for j in ET.parse(path).getroot().findall("joint")}
    assert types == {"joint1": "continuous", "joint2": "revolute", "joint3": "continuous"}
    low, up, vel, eff = Tree.from_urdf(path).limits()
    assert low[1] == -1.0 and up[1] == 1.0 and np.isinf(low[0]) and np.isinf(up[2])
    assert np.all(np.isinf(vel)) and np.all(np.isinf(eff))  # random robots have none


def test_source_urdf_content_is_kept(tmp_path):
    extra = ('<visual><geometry><mesh filename="meshes/link3.stl"/></geometry></visual>'
             '<collision><geometry><cylinder radius="0.06" length="0.2"/></geometry>'
             '</collision>')
    text = (DATA / "panda.urdf").read_text().replace(
        '<link name="link3">', '<link name="link3">' + extra).replace(
        "</robot>", '<gazebo reference="link3"><material>Gazebo/Orange</material></gazebo>'
                    "</robot>")
    src = tmp_path / "src"
    src.mkdir()
    (src / "panda.urdf").write_text(text)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    robot = robot_from_mapping({"kinematics": {"urdf": str(src / "panda.urdf")}})
    dynid.write_urdf(robot, robot.prior, out_dir / "panda.urdf")
    written = (out_dir / "panda.urdf").read_text()
    root = ET.fromstring(written)
    assert [el.get("name") for el in root.findall("link")] == \
        [el.get("name") for el in ET.fromstring(text).findall("link")]
    link3 = next(el for el in root.findall("link") if el.get("name") == "link3")
    assert link3.find("collision/geometry/cylinder").get("radius") == "0.06"
    assert link3.find("visual/geometry/mesh").get("filename") == "../src/meshes/link3.stl"
    assert root.find("gazebo/material").text == "Gazebo/Orange"
    assert "franka_description" in written  # the source's comment


def test_fixed_links_and_locked_joints_are_lumped(tmp_path):
    robot = urdf_robot()
    out = dynid.write_urdf(robot, robot.prior, tmp_path / "u.urdf")
    root = ET.parse(tmp_path / "u.urdf").getroot()
    joint7 = next(j for j in root.findall("joint") if j.get("name") == "joint7")
    assert joint7.get("type") == "fixed" and joint7.find("axis") is None
    link7 = next(el for el in root.findall("link") if el.get("name") == "link7")
    assert link7.find("inertial") is None
    assert any("link6" in line and "link7" in line for line in out.written)
    assert {el.get("name") for el in root.findall("link")} >= {"payload", "weight"}


@pytest.mark.parametrize("tree", ["urdf", "dh"])
def test_mimic_joints_are_written(tree, tmp_path):
    if tree == "dh":
        robot, expected = dynid.load_robot("dvrk_psm"), {
            ("pitch_front_joint", "outer_pitch", -1.0, 0.0),
            ("pitch_intermediate_joint", "outer_pitch", -1.0, 0.0),
            ("pitch_bottom_joint", "outer_pitch", 1.0, 0.0),
            ("pitch_top_joint", "outer_pitch", 1.0, 0.0),
            ("counterweight_joint", "outer_insertion", 1.0, 0.0)}
    else:
        path = tmp_path / "mimic.urdf"
        path.write_text((DATA / "panda.urdf").read_text().replace(
            '<child link="link7"/>',
            '<child link="link7"/><mimic joint="joint5" multiplier="-0.5" offset="0.1"/>'))
        robot = dynid.Robot(Tree.from_urdf(path))
        expected = {("joint7", "joint5", -0.5, 0.1)}
    out = dynid.write_urdf(robot, robot.prior, tmp_path / "out.urdf")
    written = {(j.get("name"), m.get("joint"), float(m.get("multiplier")),
                float(m.get("offset"))) for j in ET.parse(tmp_path / "out.urdf").getroot()
               .findall("joint") for m in j.findall("mimic")}
    assert written == expected
    assert any(line.startswith("mimic joints") for line in out.written)


def test_what_urdf_cannot_hold_is_named(tmp_path):
    ariane = dynid.write_urdf("ariane", dynid.load_robot("ariane").prior, tmp_path / "a.urdf")
    text = "\n".join(ariane.not_written)
    for name in ("motor1", "motor2", "motor3"):
        assert f"{name} drives" in text and "LeverScrew" in text
    for kind in ("motor1.Jm", "motor1.fvm", "motor1.mt", "motor1.fct", "torque constants"):
        assert kind in text
    psm = dynid.write_urdf("dvrk_psm", dynid.load_robot("dvrk_psm").prior, tmp_path / "p.urdf")
    text = "\n".join(psm.not_written)
    for part in ("coupling", "roll_spring.k", "jaw1_joint", "outer_yaw.fo", "motor6.fvm"):
        assert part in text
    assert dynid.write_urdf("panda", dynid.load_robot("panda").prior,
                            tmp_path / "p7.urdf").not_written == ()
    arm = dynid.load_robot(DATA / "arm2.yaml")
    assert any(line.startswith("gravity (0, -9.81, 0)") for line in
               dynid.write_urdf(arm, arm.prior, tmp_path / "arm.urdf").not_written)


def test_kuka_dataset_urdf_round_trip(tmp_path):
    path = dataset("kuka_lwr4_flobaroid") / "urdf" / "kuka_lwr4.urdf"
    robot = robot_from_mapping({"kinematics": {"urdf": str(path)}, "joints": {
        f"lwr_{i}_joint": {"friction": {"viscous": 0.5, "coulomb": 0.2},
                           "actuator": {"ratio": 160, "rotor_inertia": 3e-5}}
        for i in range(7)}})
    theta = true_parameters(robot, np.random.default_rng(2))
    error, scale = round_trip_error(robot, theta, tmp_path / "kuka.urdf")
    assert error <= 1e-9 * scale
    root = ET.parse(tmp_path / "kuka.urdf").getroot()
    assert len(root.findall(".//mesh")) == len(ET.parse(path).getroot().findall(".//mesh"))
    names = [t.get("name") for t in root.findall("transmission")]
    assert names == [f"lwr_{i}_joint_transmission" for i in range(7)]


# Non-physical parameters ---------------------------------------------------------------------
def _unphysical(robot):
    theta = robot.prior.copy()
    P = robot.parameters
    theta[P.index("link3.Ixx")] = -0.05
    theta[P.index("joint2.fc")] = -0.1
    return theta


def test_non_physical_parameters_are_refused(tmp_path):
    robot = dynid.load_robot("panda")
    path = tmp_path / "x.urdf"
    with pytest.raises(dynid.DataError, match=r"link3 \(mass 3\.22[0-9]* kg.*eigenvalue -0\.0\d+ "
                                              r"< 0.*joint2\.fc = -0\.1 N·m.*project=True"):
        dynid.write_urdf(robot, _unphysical(robot), path)
    assert not path.exists()
    theta = robot.prior.copy()
    theta[robot.parameters.index("link5.m")] = 0.0
    with pytest.raises(dynid.DataError, match="link5"):
        dynid.urdf_text(robot, theta)


def test_projection_writes_the_nearest_physical_values(tmp_path):
    robot = dynid.load_robot("panda")
    P = robot.parameters
    theta = _unphysical(robot)
    out = dynid.write_urdf(robot, theta, tmp_path / "x.urdf", project=True)
    block = P.link_block("link3")
    assert set(out.moved) <= {P.names[i] for i in block} | {"joint2.fc"}
    assert "link3.Ixx" in out.moved and out.moved["joint2.fc"] == (-0.1, pytest.approx(0, abs=1e-7))
    changed = np.flatnonzero(out.params != theta)
    assert set(changed) <= {*block, P.index("joint2.fc")}
    assert out.distance == pytest.approx(np.linalg.norm(out.params - theta), rel=1e-12)
    for link in P.links:  # physical now
        assert np.linalg.eigvalsh(pseudo_inertia(out.params[P.link_block(link)]))[0] >= 0
    assert out.params[P.index("joint2.fc")] >= 0
    # a projection onto a convex set: (θ − θ*) · (y − θ*) ≤ 0 for every physical block y
    rng = np.random.default_rng(0)
    x0, x = theta[block], out.params[block]
    for y in [robot.prior[block]] + [random_inertia(rng).to_pinocchio().toDynamicParameters()
                                     for _ in range(20)]:
        assert (x0 - x) @ (y - x) <= 1e-6 * np.linalg.norm(x0 - x) * np.linalg.norm(y - x)
    error, _ = round_trip_error(robot, out.params, tmp_path / "y.urdf")
    assert error < 1e-9 * 50


# Bad input -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """An OLS result of the two-joint arm (tests/data/arm2.yaml)."""
    robot_file, robot, npz = arm_files(tmp_path_factory.mktemp("arm"))
    data = dynid.IdentificationData(robot, [dynid.read_npz(npz)])
    return replace(dynid.OLS().fit(data).result_, robot_source=str(robot_file))


def test_result_of_another_robot_is_refused(result, tmp_path):
    with pytest.raises(dynid.DataError, match=r"result of robot 'arm2': its 22 parameters do "
                                              r"not match the \d+ of robot 'panda'.*robot_source"):
        dynid.write_urdf("panda", result, tmp_path / "x.urdf")
    out = dynid.write_urdf(result.robot_source, result, tmp_path / "arm.urdf")
    assert out.params.shape == (22,)


@pytest.mark.parametrize("params, match", [
    (np.zeros(5), r"expected the 91 standard parameters of robot 'panda'.*found shape \(5,\)"),
    (np.full(91, np.nan), r"found non-finite or non-numeric values"),
    ("missing.json", r"result file '.*missing\.json' does not exist"),
    ({"m": 1}, r"expected an IdentificationResult, a result file or a vector of 91 values, "
               r"found dict"),
])
def test_bad_params_are_refused(params, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(dynid.DataError, match=match):
        dynid.write_urdf("panda", params, tmp_path / "x.urdf")


def test_unreadable_robot_and_result_files_are_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(dynid.DataError, match=r"result file '.*bad\.json' is not valid JSON"):
        dynid.write_urdf("panda", bad, tmp_path / "x.urdf")
    with pytest.raises(dynid.ModelError, match=r"robot file '.*nothere\.yaml' does not exist"):
        dynid.write_urdf(tmp_path / "nothere.yaml", np.zeros(3), tmp_path / "x.urdf")
    (tmp_path / "robot.yaml").write_bytes(b"\x00\x01binary")
    with pytest.raises(dynid.ModelError, match=r"robot\.yaml"):
        dynid.write_urdf(tmp_path / "robot.yaml", np.zeros(3), tmp_path / "x.urdf")


def test_output_path_is_checked_before_anything_else(tmp_path):
    (tmp_path / "file.txt").write_text("")
    cases = [(tmp_path / "no" / "x.urdf", r"the folder .*no' does not exist"),
             (tmp_path / "file.txt" / "x.urdf", r"file\.txt' is not a folder"),
             (tmp_path, r"is a folder; give a file name")]
    for path, match in cases:  # the parameters are wrong too: the path is named first
        with pytest.raises(dynid.DataError, match=r"URDF file .*" + match):
            dynid.write_urdf("panda", np.zeros(3), path)


def test_rotor_inertias_of_uncoupled_motors_are_written_beside_a_coupling(tmp_path):
    coupling = np.eye(6)
    coupling[5, 4] = 0.5  # motor 6 moves joints 5 and 6 (a coupled wrist)
    robot = urdf_robot(transmission={"coupling": coupling.tolist()})
    theta = true_parameters(robot, np.random.default_rng(2))
    out = dynid.write_urdf(robot, theta, tmp_path / "coupled.urdf")
    text = "\n".join(out.not_written)
    assert "coupling of motor6" in text and "motor6.Jm" in text
    assert all(f"motor{k}.Jm" not in text for k in range(1, 6))
    held_theta = held(robot, theta)
    held_theta[robot.parameters.index("motor6.Jm")] = 0.0
    ref = FourierReference.random(robot, harmonics=3, frequency=0.4, ramp=0.0, seed=4)
    q, v, a = ref(np.linspace(0.0, 2.5, 40))
    tau = urdf_torque((tmp_path / "coupled.urdf").read_text(),
                      robot.tree.model.gravity.linear, robot.joint_names, q, v, a)
    # The joint-side model of what the file holds: motor 6's rotor is left out.
    expected = dynid.Regressor(robot.with_output("joint_torque")).predict(q, v, a, held_theta)
    assert np.abs(tau - expected).max() <= 1e-9 * max(np.abs(expected).max(), 1.0)
