"""MJCF export: MuJoCo's inverse dynamics on the exported model agrees with dynid on the terms
both express (rigid bodies, armature, damping), the identified values are kept at full
precision, mimic joints become joint equalities, meshes MuJoCo cannot read are dropped and
named, and bad input is refused before anything is written.

Coulomb friction is MuJoCo's ``frictionloss``, a constraint force: it is disabled for the
comparison (``mjDSBL_FRICTIONLOSS``), with contacts, limits and equalities.
"""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from dataclasses import replace

import mujoco
import numpy as np
import pytest
from conftest import DATA
from test_export_urdf import panda_with_bodies, urdf_robot

import dynid
from dynid.demo import true_parameters
from dynid.hardware import FourierReference
from dynid.models import DHJoint, LinkInertia, build_tree, robot_from_mapping
from dynid.models.library import random_inertia

#: The parameter kinds MuJoCo's inverse dynamics holds besides the links (Coulomb friction is
#: a constraint there, disabled).
HELD = ("fv", "Ia", "Jm")
_OFF = (mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS | mujoco.mjtDisableBit.mjDSBL_CONTACT
        | mujoco.mjtDisableBit.mjDSBL_LIMIT | mujoco.mjtDisableBit.mjDSBL_EQUALITY)


def mujoco_torque(path, names, q, v, a) -> np.ndarray:
    """``mj_inverse`` of the MJCF at ``path`` for the joints ``names`` (columns of q, v, a)."""
    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.disableflags |= _OFF
    data = mujoco.MjData(model)
    qadr = [model.joint(n).qposadr[0] for n in names]
    vadr = [model.joint(n).dofadr[0] for n in names]
    out = np.empty_like(q)
    for k in range(len(q)):
        data.qpos[qadr], data.qvel[vadr], data.qacc[vadr] = q[k], v[k], a[k]
        mujoco.mj_inverse(model, data)
        out[k] = data.qfrc_inverse[vadr]
    return out


def held(robot: dynid.Robot, theta: np.ndarray) -> np.ndarray:
    """``theta`` with the parameters MuJoCo's inverse dynamics does not hold set to zero: a
    rotor inertia counts only behind gears (not Ariane's levers)."""
    gears = all(isinstance(d, dynid.models.Gear) for d in robot.transmission.drives)
    keep = np.array([p.group == "link" or (p.kind in HELD and (p.kind != "Jm" or gears))
                     for p in robot.parameters])
    return np.where(keep, theta, 0.0)


def panda_with_a_rod() -> dynid.Robot:
    """The Panda holding a thin rod along a skew axis: a singular inertia, not diagonal."""
    u = np.array([1.0, 2.0, 2.0]) / 3
    I = 0.02 * (np.eye(3) - np.outer(u, u))
    rod = dynid.models.Body("rod", "link6", dynid.models.LinkInertia(
        1.5, (0.0, 0.0, 0.1), (I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2])),
        known=True)
    return replace(dynid.load_robot("panda"), bodies=(rod,))


def point_mass_arm() -> dynid.Robot:
    """A three-joint arm whose middle link is a point mass (no inertia about its centre)."""
    rng = np.random.default_rng(2)
    rows = [DHJoint("j1"), DHJoint("j2", d=0.3, alpha=np.pi / 2), DHJoint("j3", d=0.25)]
    links = {"link1": random_inertia(rng), "link2": LinkInertia(2.0, (0.1, 0.05, -0.02)),
             "link3": random_inertia(rng)}
    return dynid.Robot(build_tree(rows, inertias=links), name="point")


ROBOTS = {"panda": lambda: dynid.load_robot("panda"), "urdf": urdf_robot,
          "bodies": panda_with_bodies, "rod": panda_with_a_rod, "point": point_mass_arm,
          "ariane": lambda: dynid.load_robot("ariane"),
          "random": lambda: dynid.random_robot(6, seed=3, prismatic=0.3, branched=True,
                                               friction=True, motors=True)}


@pytest.mark.parametrize("case", list(ROBOTS))
def test_mujoco_inverse_dynamics_agrees_with_dynid(case, tmp_path):
    robot = ROBOTS[case]()
    theta = true_parameters(robot, np.random.default_rng(1))
    path = tmp_path / "robot.xml"
    out = dynid.write_mjcf(robot, theta, path)
    assert out.format == "mjcf" and out.path == path
    ref = FourierReference.random(robot, harmonics=3, frequency=0.4, ramp=0.0, seed=4)
    q, v, a = ref(np.linspace(0.0, 2.5, 60))
    tau = mujoco_torque(path, robot.joint_names, q, v, a)
    expected = dynid.Regressor(robot.with_output("joint_torque")).predict(q, v, a,
                                                                         held(robot, theta))
    # written at full precision: far within the 1e-6 that MuJoCo's own six digits would give
    assert np.abs(tau - expected).max() <= 1e-9 * np.abs(expected).max()


def test_identified_values_are_kept_at_full_precision(tmp_path):
    robot = dynid.random_robot(5, seed=7, friction=True, motors=True)
    theta = true_parameters(robot, np.random.default_rng(3))
    dynid.write_mjcf(robot, theta, tmp_path / "r.xml")
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "r.xml"))
    P = robot.parameters
    ratios = np.array([d.ratio for d in robot.transmission.drives])
    for joint, link in zip(robot.tree.joint_names, robot.tree.link_names, strict=True):
        block = theta[P.link_block(link)]
        body = model.body(link)
        assert body.mass[0] == pytest.approx(block[0], rel=1e-14)
        com = model.body_ipos[body.id]  # in the body frame, which is the link's joint frame
        np.testing.assert_allclose(com, block[1:4] / block[0], rtol=1e-13, atol=1e-15)
        dof = model.joint(joint).dofadr[0]
        k = robot.joint_names.index(joint)
        assert model.dof_damping[dof] == pytest.approx(theta[P.index(f"{joint}.fv")], rel=1e-15)
        assert model.dof_frictionloss[dof] == pytest.approx(theta[P.index(f"{joint}.fc")],
                                                            rel=1e-15)
        assert model.dof_armature[dof] == pytest.approx(
            ratios[k] ** 2 * theta[P.index(f"motor{k + 1}.Jm")], rel=1e-14)
    np.testing.assert_array_equal(model.opt.gravity, robot.tree.model.gravity.linear)
    assert not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS


def test_limits_only_where_the_robot_has_them(tmp_path):
    robot = dynid.load_robot("panda")
    dynid.write_mjcf(robot, robot.prior, tmp_path / "p.xml")
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "p.xml"))
    j4 = model.joint("joint4")
    np.testing.assert_array_equal(model.jnt_range[j4.id], [-3.0718, -0.0698])
    assert model.jnt_limited[j4.id] and model.jnt_actfrclimited[j4.id]
    np.testing.assert_array_equal(model.jnt_actfrcrange[j4.id], [-87.0, 87.0])
    free = dynid.random_robot(2, seed=1)  # no velocity or effort limits
    free = type(free)(free.tree, limits=dynid.models.Limits.unbounded(2))
    dynid.write_mjcf(free, free.prior, tmp_path / "f.xml")
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "f.xml"))
    assert not np.any(model.jnt_limited) and not np.any(model.jnt_actfrclimited)


def test_mimic_joints_become_joint_equalities(tmp_path):
    robot = dynid.load_robot("dvrk_psm")
    out = dynid.write_mjcf(robot, robot.prior, tmp_path / "psm.xml")
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "psm.xml"))
    pairs = {(model.joint(int(model.eq_obj1id[i])).name, model.joint(int(model.eq_obj2id[i]))
              .name): tuple(model.eq_data[i, :2]) for i in range(model.neq)}
    assert pairs == {("pitch_front_joint", "outer_pitch"): (0.0, -1.0),
                     ("pitch_intermediate_joint", "outer_pitch"): (0.0, -1.0),
                     ("pitch_bottom_joint", "outer_pitch"): (0.0, 1.0),
                     ("pitch_top_joint", "outer_pitch"): (0.0, 1.0),
                     ("counterweight_joint", "outer_insertion"): (0.0, 1.0)}
    # its massless wrist links get a negligible mass MuJoCo needs, and the export says so
    light = next(line for line in out.written if line.startswith("moving links without"))
    assert "roll_link" in light and model.body("roll_link").mass[0] == 1e-9
    assert any("coupling" in line for line in out.not_written)


def _stl(path) -> None:
    """A binary STL tetrahedron."""
    faces = [((0, 0, 0), (1, 0, 0), (0, 1, 0)), ((0, 0, 0), (0, 0, 1), (1, 0, 0)),
             ((0, 0, 0), (0, 1, 0), (0, 0, 1)), ((1, 0, 0), (0, 0, 1), (0, 1, 0))]
    with open(path, "wb") as f:
        f.write(b"\0" * 80 + struct.pack("<I", len(faces)))
        for face in faces:
            f.write(struct.pack("<3f", 0, 0, 0))
            for p in face:
                f.write(struct.pack("<3f", *(0.05 * np.array(p))))
            f.write(b"\0\0")


def test_meshes_mujoco_cannot_read_are_dropped_and_named(tmp_path):
    src = tmp_path / "src"
    (src / "meshes").mkdir(parents=True)
    _stl(src / "meshes" / "link3.stl")
    visual = ('<visual><geometry><mesh filename="meshes/link3.stl"/></geometry></visual>'
              '<visual><geometry><mesh filename="package://panda/link4.stl"/></geometry></visual>'
              '<collision><geometry><mesh filename="meshes/missing.stl"/></geometry></collision>'
              '<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>')
    text = (DATA / "panda.urdf").read_text().replace(
        '<link name="link3">', '<link name="link3">' + visual).replace(
        "</robot>", '<mujoco><compiler meshdir="elsewhere"/></mujoco></robot>')  # replaced
    (src / "panda.urdf").write_text(text)
    robot = robot_from_mapping({"kinematics": {"urdf": str(src / "panda.urdf")}})
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = dynid.write_mjcf(robot, robot.prior, out_dir / "panda.xml")
    model = mujoco.MjModel.from_xml_path(str(out_dir / "panda.xml"))
    assert model.nmesh == 1 and model.ngeom == 2  # the readable mesh and the box
    files = [m.get("file") for m in ET.parse(out_dir / "panda.xml").getroot().iter("mesh")]
    assert files == ["../src/meshes/link3.stl"]
    dropped = next(line for line in out.not_written if line.startswith("meshes"))
    assert "package://panda/link4.stl" in dropped and "ROS package" in dropped
    assert "meshes/missing.stl" in dropped and "no such file" in dropped
    # the geometry does not change the identified inertia
    assert model.body("link3").mass[0] == pytest.approx(3.228604, rel=1e-15)


def test_ariane_names_its_lever_transmissions(tmp_path):
    out = dynid.write_mjcf("ariane", dynid.load_robot("ariane").prior, tmp_path / "a.xml")
    levers = [line for line in out.not_written if "LeverScrew" in line]
    assert [line.split()[0] for line in levers] == ["motor1", "motor2", "motor3"]
    assert any("motor1.Jm" in line for line in out.not_written)


def test_bad_input_is_refused_before_writing(tmp_path):
    robot = dynid.load_robot("panda")
    theta = robot.prior.copy()
    theta[robot.parameters.index("link2.m")] = -1.0
    with pytest.raises(dynid.DataError, match=r"link2 \(mass -1 kg.*project=True"):
        dynid.write_mjcf(robot, theta, tmp_path / "x.xml")
    assert not (tmp_path / "x.xml").exists()
    out = dynid.write_mjcf(robot, theta, tmp_path / "x.xml", project=True)
    assert out.moved["link2.m"][1] > 0 and (tmp_path / "x.xml").exists()
    with pytest.raises(dynid.DataError, match=r"MJCF file .*the folder .*nowhere' does not "
                                              "exist"):
        dynid.write_mjcf(robot, np.zeros(2), tmp_path / "nowhere" / "x.xml")
