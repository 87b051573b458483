"""Export of a Stewart–Gough platform: the URDF is its cut tree, the MJCF closes the legs on the
platform with MuJoCo ``connect`` equalities.

The references are independent of the export's code and of dynid's projection of the tree
forces: Pinocchio's RNEA on the URDF it reads, and for the MJCF MuJoCo's own inverse dynamics of
the open tree (``mj_inverse`` with the equalities off) balanced by MuJoCo's own Jacobian of the
six connect constraints (``efc_J``): ``τ_t = S f + J_cᵀ λ`` with ``S`` the legs' prismatic
joints, solved for the leg forces ``f`` and the constraint forces ``λ``. Both are compared with
dynid's leg forces, regressor × θ.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import mujoco
import numpy as np
import pytest
import yaml
from conftest import run_cli
from test_export_mjcf import held as mujoco_held
from test_export_urdf import held as urdf_held
from test_export_urdf import urdf_torque

import dynid
from dynid.demo import true_parameters
from dynid.hardware import FourierReference, SensorNoise, measure
from dynid.identify import Processing
from dynid.models import library, robot_from_mapping
from dynid.models.stewart import leg_friction

_FREE = (mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS | mujoco.mjtDisableBit.mjDSBL_CONTACT
         | mujoco.mjtDisableBit.mjDSBL_LIMIT)


def hexapod_file(**changes) -> dynid.Robot:
    """The embedded hexapod's robot file with top-level ``changes``."""
    mapping = yaml.safe_load((Path(library.__file__).parent / "hexapod.yaml").read_text())
    return robot_from_mapping({**mapping, **changes})


def identical_legs() -> dynid.Robot:
    """The embedded hexapod with the six legs' links sharing their parameters."""
    return hexapod_file(identical_legs=True)


def screw_drives() -> dynid.Robot:
    """The hexapod driven by rotary motors turning screws (motor angles and torques)."""
    return hexapod_file(actuators={"limits": {"effort": 5.0},
                                   "screw": {"lead": 0.01, "ratio": 2, "zero": 0.8}})


ROBOTS = {"hexapod": lambda: dynid.load_robot("hexapod"), "identical_legs": identical_legs,
          "screw": screw_drives}


def trajectory(robot, n=40):
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0, seed=4)
    return ref(np.linspace(0.0, 2.0, n))


def mujoco_leg_forces(path, robot, q_t, v_t, a_t):
    """Leg forces (N, 6) that hold MuJoCo's closed model of the file at ``path`` on the tree
    states, the largest loop opening (m) and constraint velocity MuJoCo sees there."""
    model = mujoco.MjModel.from_xml_path(str(path))
    closed, open_ = int(_FREE), int(_FREE | mujoco.mjtDisableBit.mjDSBL_EQUALITY)
    model.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    data = mujoco.MjData(model)
    names = robot.tree.joint_names
    qadr = [model.joint(n).qposadr[0] for n in names]
    vadr = [model.joint(n).dofadr[0] for n in names]
    legs = [model.joint(f"leg{i + 1}_length").dofadr[0] for i in range(6)]
    S = np.zeros((model.nv, 6))
    S[legs, np.arange(6)] = 1.0
    forces, opening, speed = np.empty((len(q_t), 6)), 0.0, 0.0
    for k in range(len(q_t)):
        data.qpos[qadr], data.qvel[vadr], data.qacc[vadr] = q_t[k], v_t[k], a_t[k]
        model.opt.disableflags = closed
        mujoco.mj_forward(model, data)  # the constraints' rows at this state
        assert data.nefc == 18 and np.all(data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        J = data.efc_J[:18 * model.nv].reshape(18, model.nv).copy()
        opening = max(opening, np.abs(data.efc_pos[:18]).max())
        speed = max(speed, np.abs(J @ data.qvel).max())
        data.qacc[vadr] = a_t[k]
        model.opt.disableflags = open_
        mujoco.mj_inverse(model, data)  # the open tree's generalized forces
        solution = np.linalg.solve(np.hstack([S, J.T]), data.qfrc_inverse)
        forces[k] = solution[:6]
    return forces, opening, speed


@pytest.mark.parametrize("case", list(ROBOTS))
def test_mujoco_closed_legs_need_dynid_leg_forces(case, tmp_path):
    robot = ROBOTS[case]()
    theta = true_parameters(robot, np.random.default_rng(1))
    out = dynid.write_mjcf(robot, theta, tmp_path / "hexapod.xml")
    q, v, a = trajectory(robot)
    q_t, v_t, a_t, _ = robot.closure.tree_state(q, v, a)
    forces, opening, speed = mujoco_leg_forces(out.path, robot, q_t, v_t, a_t)
    scale = robot.transmission.scale  # leg force per unit of the drive's force or torque
    expected = scale * dynid.Regressor(robot).predict(q, v, a, mujoco_held(robot, theta))
    model = mujoco.MjModel.from_xml_path(str(out.path))
    np.testing.assert_array_equal(model.actuator_gear[:, 0], [scale] * 6)
    np.testing.assert_array_equal(model.actuator_ctrlrange[0], -robot.actuator_limits.effort[0]
                                  * np.array([1.0, -1.0]))
    # MuJoCo's connects hold at dynid's assembled states: the loops are the model's
    assert opening < 1e-12 and speed < 1e-11
    # the virtual pose links' 1e-9 kg move the forces by 2e-8 N of 80 N (physics, not rounding)
    assert np.abs(forces - expected).max() <= 1e-9 * np.abs(expected).max()


def test_mujoco_simulates_the_closed_mechanism(tmp_path):
    """From the keyframe ``home``, with the legs' motors at the forces dynid says hold the
    platform still, MuJoCo keeps the platform in place and the spherical joints closed;
    without the connect equalities the same forces let the platform fall."""
    robot = dynid.load_robot("hexapod")
    dynid.write_mjcf(robot, robot.prior, tmp_path / "hexapod.xml")
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "hexapod.xml"))
    home = robot.transmission.geometry.home[None]
    hold = dynid.Regressor(robot).predict(home, 0 * home, 0 * home, robot.prior)[0]
    pose = [model.joint(n).qposadr[0] for n in robot.joint_names]

    def run(disable):
        model.opt.disableflags = disable
        data = mujoco.MjData(model)
        mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
        mujoco.mj_forward(model, data)
        start = np.abs(data.efc_pos[:data.ne]).max(initial=0.0)
        data.ctrl[[model.actuator(f"leg{i}").id for i in range(1, 7)]] = hold
        drift = 0.0
        for _ in range(500):  # 1 s
            mujoco.mj_step(model, data)
            drift = max(drift, np.abs(data.qpos[pose] - home[0]).max())
        return start, drift, np.abs(data.efc_pos[:data.ne]).max(initial=0.0)

    start, drift, opening = run(0)
    assert start < 1e-12                        # the keyframe is assembled
    assert drift < 1e-5 and opening < 1e-6      # m, rad; m: the connects are stiff
    _, fall, _ = run(mujoco.mjtDisableBit.mjDSBL_EQUALITY)
    assert fall > 0.1


def test_urdf_is_the_cut_tree(tmp_path):
    """Pinocchio's RNEA on the URDF, with the friction it reads, projected on the legs through
    the closure gives dynid's leg forces; the file's frames close the loops at the assembled
    states; the account says the loops are cut and the pose chain virtual."""
    robot = dynid.load_robot("hexapod")
    theta = true_parameters(robot, np.random.default_rng(2))
    out = dynid.write_urdf(robot, theta, tmp_path / "hexapod.urdf")
    text = out.path.read_text()
    q, v, a = trajectory(robot, 30)
    q_t, v_t, a_t, G = robot.closure.tree_state(q, v, a)
    tau_t = urdf_torque(text, robot.tree.model.gravity.linear, robot.tree.joint_names, q_t,
                        v_t, a_t)
    K = robot.transmission.jacobian(q)
    tau = np.einsum("ntj,nt->nj", G, tau_t)  # Gᵀ τ_t
    forces = np.linalg.solve(np.swapaxes(K, 1, 2), tau[..., None])[..., 0]
    expected = dynid.Regressor(robot).predict(q, v, a, urdf_held(robot, theta))
    assert np.abs(forces - expected).max() <= 1e-9 * np.abs(expected).max()
    # shared Coulomb friction of the universal joints is written on each leg's joints
    fc = float(theta[robot.parameters.index("legs_alpha.fc")])
    assert text.count(f'friction="{fc!r}"') == 6
    loops = next(line for line in out.not_written if "spherical1 (platform_s1–leg1_top)"
                 in line)
    assert "virtual chain" in loops and "x_slide" in loops and "free joints" in loops


def test_mjcf_account_and_limits(tmp_path):
    """The MJCF says how the loops are closed and keeps no sentence about cut loops; the legs'
    stroke and drive force are their joints' range and force range; the spherical joints'
    friction, which neither format holds, is named."""
    robot = dynid.load_robot("hexapod")
    robot = robot.with_terms(leg_friction(robot.closure, {"spherical": ["viscous"]},
                                          shared=["spherical"]))
    out = dynid.write_mjcf(robot, robot.prior, tmp_path / "h.xml")
    assert any(line.startswith("the legs' loops closed by connect equalities spherical1")
               for line in out.written)
    assert not any("loops, cut" in line for line in out.not_written)
    assert [line for line in out.not_written if "legs_spherical.fv" in line] == [
        "friction of the spherical joints: they are the loops' cuts, no joint of the files "
        "(legs_spherical.fv)"]
    model = mujoco.MjModel.from_xml_path(str(out.path))
    leg = model.joint("leg3_length")
    np.testing.assert_array_equal(model.jnt_range[leg.id], [0.75, 1.5])
    np.testing.assert_array_equal(model.jnt_actfrcrange[leg.id], [-1200.0, 1200.0])
    assert [model.eq(i).name for i in range(model.neq)] == [f"spherical{i}" for i in
                                                            range(1, 7)]
    urdf = dynid.write_urdf(robot, robot.prior, tmp_path / "h.urdf")
    assert any("loops, cut" in line for line in urdf.not_written)


@pytest.mark.parametrize("write", [dynid.write_urdf, dynid.write_mjcf])
def test_into_another_urdf_is_refused(write, tmp_path):
    robot = dynid.load_robot("hexapod")
    dynid.write_urdf(robot, robot.prior, tmp_path / "other.urdf")
    target = tmp_path / "out.xml"
    with pytest.raises(dynid.ModelError, match=r"into=.*other\.urdf.*'hexapod' is a Stewart"
                                               r".*e\.g\. dynid\.write_mjcf\(robot, result"):
        write(robot, robot.prior, target, into=tmp_path / "other.urdf")
    assert not target.exists()


def test_export_command_on_a_hexapod_result(tmp_path, capsys):
    """``dynid export`` of a hexapod result (least squares, projected onto the physical set)
    writes both files and says how the loops are held;
    with ``--into`` it exits with status 2 and the reason, writing nothing."""
    robot = dynid.load_robot("hexapod")
    theta = true_parameters(robot, np.random.default_rng(3))
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0, periods=4,
                                  seed=2)
    sim = measure(robot, theta, ref, 8.0, rate=100.0, space="actuator",
                  noise=SensorNoise(position_step=1e-6, output_std=2.0))
    data = dynid.IdentificationData(robot, sim.measured[0],
                                    processing=Processing(period=2.0, harmonics_cutoff=1.75))
    result = replace(dynid.OLS().fit(data).result_, robot_source="hexapod")
    path = result.save(tmp_path / "result.json")
    code, out, err = run_cli(["export", path, "--urdf", tmp_path / "h.urdf", "--mjcf",
                              tmp_path / "h.xml", "--project"], capsys)  # OLS: not physical
    assert code == 0, err
    assert "the legs' loops closed by connect equalities spherical1" in out
    assert "cut at the spherical joints spherical1 (platform_s1–leg1_top)" in out  # the URDF's
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "h.xml"))
    assert model.neq == 6 and model.nkey == 1
    code, out, err = run_cli(["export", path, "--mjcf", tmp_path / "into.xml", "--into",
                              tmp_path / "h.urdf"], capsys)
    assert code == 2 and "is a Stewart–Gough platform" in err and "Export without into=" in err
    assert not (tmp_path / "into.xml").exists()
