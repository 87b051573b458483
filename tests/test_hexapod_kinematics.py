"""Direct kinematics of the hexapod and its bad inputs: unreachable and singular poses, lengths
without an assembly, malformed arguments and robot files."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml
from mechanism_checks import Trajectory

import dynid
from dynid.models import Regressor, random_states, robot_from_mapping
from dynid.models.dh import LinkInertia
from dynid.models.stewart import (
    StewartGeometry,
    check_poses,
    direct_kinematics,
    leg_friction,
    stewart_platform,
)

HEXAPOD_FILE = dynid.models.library._HERE / "hexapod.yaml"


@pytest.fixture(scope="module")
def hexapod() -> dynid.Robot:
    return dynid.load_robot("hexapod")


def trajectory(robot, n=3000, rate=1000.0, seed=0):
    t = np.arange(n) / rate
    return (t, *Trajectory(robot, seed, fraction=0.8)(t))


def test_direct_after_inverse_kinematics_is_the_identity_along_a_trajectory(hexapod):
    t, q, _, _ = trajectory(hexapod)
    lengths = check_poses(hexapod, q, t=t)
    x = direct_kinematics(hexapod, lengths, t=t)
    tol = hexapod.transmission.tolerance
    # inverse ∘ direct: the legs of the solved poses are the given lengths within tolerance.
    assert np.abs(hexapod.closure.legs(x).length - lengths).max() < tol
    # direct ∘ inverse: the pose itself, within the tolerance times the Jacobian's gain.
    K = hexapod.transmission.jacobian(q)
    gain = np.linalg.norm(np.linalg.inv(K), 2, axis=(1, 2)).max()
    assert np.abs(x - q).max() < 6 * gain * tol
    assert tol < hexapod.transmission.resolution


def test_direct_kinematics_of_unordered_poses_from_the_home_pose(hexapod):
    """Random poses over the whole pose box, out of any order: every one is found (a block's
    first-order start is off, so the samples are solved again from the home pose)."""
    q = random_states(hexapod, 500, np.random.default_rng(1))[0]
    lengths = hexapod.closure.legs(q).length
    x = direct_kinematics(hexapod.transmission.geometry, lengths, tolerance=1e-11)
    assert np.abs(hexapod.closure.legs(x).length - lengths).max() < 1e-11
    assert np.abs(x - q).max() < 1e-9


def test_basis_state_inverts_actuator_state(hexapod):
    """Leg lengths, speeds and accelerations back to the pose, its rates and accelerations."""
    _, q, v, a = trajectory(hexapod, n=400, seed=2)
    q_m, v_m, a_m, _ = hexapod.transmission.actuator_state(q, v, a)
    q2, v2, a2 = hexapod.transmission.basis_state(q_m, v_m, a_m)
    np.testing.assert_allclose(q2, q, rtol=0, atol=1e-8)
    np.testing.assert_allclose(v2, v, rtol=0, atol=1e-7 * np.abs(v).max())
    np.testing.assert_allclose(a2, a, rtol=0, atol=1e-7 * np.abs(a).max())


def test_direct_kinematics_names_the_time_of_lengths_without_an_assembly(hexapod):
    t, q, _, _ = trajectory(hexapod, n=10)
    lengths = hexapod.closure.legs(q).length
    lengths[6] = [0.75, 1.5, 0.75, 1.5, 0.75, 1.5]  # within the stroke, no assembly
    with pytest.raises(dynid.DataError, match=r"no pose found at sample 6 \(t = 0\.006 s\) "
                                              r"for leg lengths \[0\.75, 1\.5"):
        direct_kinematics(hexapod, lengths, t=t)
    x = direct_kinematics(hexapod, lengths, t=t, strict=False)
    assert np.all(np.isnan(x[6])) and np.all(np.isfinite(np.delete(x, 6, axis=0)))


def test_direct_kinematics_refuses_lengths_outside_the_stroke(hexapod):
    t, q, _, _ = trajectory(hexapod, n=10)
    lengths = hexapod.closure.legs(q).length
    lengths[3, 2] = 1.6
    with pytest.raises(dynid.DataError, match=r"sample 3 \(t = 0\.003 s\) leg 3 has length "
                                              r"1\.6 m, outside the stroke \[0\.75, 1\.5\]"):
        direct_kinematics(hexapod, lengths, t=t)
    with pytest.raises(dynid.DataError, match=r"at sample 3 leg 3 has length"):
        direct_kinematics(hexapod, lengths)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"lengths": np.ones((4, 5))}, r"lengths: expected shape \(N, 6\), m, found \(4, 5\)"),
    ({"t": np.zeros(3)}, r"t: expected 4 times, one per sample, found shape \(3,\)"),
    ({"tolerance": 0.0}, r"tolerance: expected a length > 0 \(m\), found 0"),
    ({"start": np.zeros(5)}, r"start: expected a finite pose of 6 values, found \(5,\)"),
])
def test_direct_kinematics_bad_arguments(hexapod, kwargs, message):
    args = {"lengths": np.full((4, 6), 1.1), **kwargs}
    with pytest.raises(dynid.DataError, match=message):
        direct_kinematics(hexapod, **args)


def test_direct_kinematics_needs_a_stewart_platform(panda):
    with pytest.raises(dynid.DataError, match="expected a StewartGeometry or a Stewart"):
        direct_kinematics(panda, np.ones((1, 6)))
    with pytest.raises(dynid.ModelError, match="expected a Stewart platform robot"):
        check_poses(panda, np.zeros((1, 6)))


def test_unreachable_pose_on_a_trajectory_names_its_time(hexapod):
    t = np.linspace(0.0, 1.0, 11)
    q = np.tile(hexapod.transmission.geometry.home, (11, 1))
    q[:, 2] += np.linspace(0.0, 0.6, 11)  # rises 0.6 m: the legs run out of stroke
    with pytest.raises(dynid.TrajectoryError, match=r"at sample (\d+) \(t = 0\.\d+ s\) is "
                                                    r"unreachable: leg 1 \(leg1\) would be "
                                                    r"1\.5\d* m long, outside its stroke"):
        check_poses(hexapod, q, t=t)


def test_unreachable_pose_without_inverse_kinematics(hexapod):
    """A leg at right angles to its universal joint's home direction has no joint angles."""
    geo = hexapod.transmission.geometry
    q = geo.home.copy()
    # Platform point 1 moved onto the plane through b_1 normal to its home leg direction.
    u0 = geo.leg_frames[0][:, 2]
    q[:3] += geo.base[0] + 0.5 * geo.leg_frames[0][:, 0] - (geo.home[:3] + geo.platform[0])
    assert abs(np.dot(q[:3] + geo.platform[0] - geo.base[0], u0)) < 1e-12
    with pytest.raises(dynid.TrajectoryError, match=r"sample 0 \(t = 2 s\) is unreachable: a "
                                                    r"leg is at right angles"):
        check_poses(hexapod, q[None], t=[2.0])
    with pytest.raises(dynid.ModelError, match="no inverse kinematics at pose"):
        Regressor(hexapod)(q[None], np.zeros((1, 6)), np.zeros((1, 6)))


def test_singular_pose_on_a_trajectory_names_its_time(hexapod):
    """Turning the platform by 90° about z makes this geometry singular (det K changes sign
    there), while every leg stays within its stroke."""
    geo = hexapod.transmission.geometry
    yaw = np.linspace(0.0, 0.6 * np.pi, 13)
    q = np.tile(geo.home, (13, 1))
    q[:, 5] = yaw
    det = np.linalg.det(geo.legs(q).K)
    assert np.sign(det[9]) != np.sign(det[11])  # the singularity is crossed at 90°
    lengths = geo.legs(q).length
    assert lengths.min() > geo.stroke[0] and lengths.max() < geo.stroke[1]
    t = 0.1 * np.arange(13)
    with pytest.raises(dynid.TrajectoryError, match=r"at sample 10 \(t = 1 s\) is singular: "
                                                    r"the condition number"):
        check_poses(hexapod, q, t=t)
    with pytest.raises(dynid.ModelError, match="singular pose"):
        Regressor(hexapod)(q, np.zeros_like(q), np.zeros_like(q))


def test_check_poses_shapes(hexapod):
    with pytest.raises(dynid.DataError, match=r"poses: expected an array of shape \(N, 6\)"):
        check_poses(hexapod, np.zeros((3, 5)))
    with pytest.raises(dynid.DataError, match="t: expected a vector of length 2"):
        check_poses(hexapod, np.tile(hexapod.transmission.geometry.home, (2, 1)), t=[0.0])


def _file():
    return yaml.safe_load(HEXAPOD_FILE.read_text())


@pytest.mark.parametrize(("path", "value", "message"), [
    (("kinematics", "stewart", "stroke"), [1.5, 0.75],
     r"stroke: expected 0 < lower < upper \(m\), found \(1\.5, 0\.75\)"),
    (("kinematics", "stewart", "base"), [[0, 0, 0]] * 6,
     r"kinematics.stewart: give either 'symmetric' or the points"),
    (("links", "rod", "mass"), -1.0, r"links.rod.mass"),
    (("friction", "wrist"), {"coulomb": 1.0}, r"friction.*wrist"),
    (("friction", "shared"), ["spherical"], r"friction.shared\[0\]"),
    (("joints", "x", "limits", "position"), [0.1, -0.1],
     r"joints.x.limits.position: expected \[lower, upper\] with lower < upper"),
    (("actuators", "limits", "velocity"), 0.0, r"actuators.limits.velocity"),
    (("output",), "current", r"output: current output needs actuators.torque_constant"),
    (("links", "platform", "mass"), 1e308, r"parameter platform.m \(prior 1e\+308 kg\) takes"),
    (("gravity",), [0, 0, -1e308], r"the model is not finite"),
])
def test_bad_hexapod_files(path, value, message):
    data = copy.deepcopy(_file())
    entry = data
    for key in path[:-1]:
        entry = entry[key]
    entry[path[-1]] = value
    with pytest.raises(dynid.ModelError, match=message):
        robot_from_mapping(data)


def test_hexapod_file_with_explicit_points_is_the_same_robot(hexapod):
    geo = hexapod.transmission.geometry
    data = _file()
    data["kinematics"]["stewart"] = {"base": geo.base.tolist(),
                                     "platform": geo.platform.tolist(),
                                     "home": geo.home.tolist(), "stroke": list(geo.stroke)}
    robot = robot_from_mapping(data)
    q, v, a = random_states(hexapod, 5, np.random.default_rng(0))
    np.testing.assert_allclose(Regressor(robot)(q, v, a), Regressor(hexapod)(q, v, a),
                               rtol=1e-12, atol=1e-9)


def test_bad_geometry_and_friction_options(hexapod):
    geo = hexapod.transmission.geometry
    with pytest.raises(dynid.ModelError, match=r"platform: expected finite values of shape "
                                               r"\(6, 3\), found shape \(5, 3\)"):
        StewartGeometry(geo.base, geo.platform[:5], geo.stroke, geo.home)
    flat = geo.base.copy()  # every platform point on the base circle, platform in its plane
    with pytest.raises(dynid.ModelError, match=r"home pose .* is singular"):
        StewartGeometry(flat, flat, (0.1, 2.0), np.array([0, 0, 1.0, 0, 0, 0]))
    with pytest.raises(dynid.ModelError, match=r"leg 1 is 1\.09\d* m long at the home pose "
                                               r".*, outside the stroke \[1\.2, 1\.5\] m"):
        StewartGeometry(geo.base, geo.platform, (1.2, 1.5), geo.home)
    with pytest.raises(dynid.ModelError, match="legs at the home pose are not finite"):
        StewartGeometry(geo.base * 1e300, geo.platform, geo.stroke, geo.home * 1e300)
    with pytest.raises(dynid.ModelError, match="leg friction 'knee'"):
        leg_friction(hexapod.closure, {"knee": ["coulomb"]})
    with pytest.raises(dynid.ModelError, match=r"'beta' is named but has no friction kinds"):
        leg_friction(hexapod.closure, {"alpha": ["coulomb"]}, shared=["beta"])
    body = LinkInertia(1.0, (0, 0, 0), (0.01, 0, 0, 0.01, 0, 0.01))
    with pytest.raises(dynid.ModelError, match="scale"):
        stewart_platform(geo, platform=body, cross=body, cylinder=body, rod=body, scale=0.0)


def test_rotary_motors_on_screws(hexapod):
    """With a screw (lead 10 mm, gear 2:1) the actuators are motor angles 2π·2 (l − l₀)/lead;
    by power balance the motor torque is the leg force over that scale, and the current the
    torque over k_T."""
    data = _file()
    data["actuators"]["screw"] = {"lead": 0.01, "ratio": 2, "zero": 0.75}
    data["actuators"]["torque_constant"] = 0.5
    data["output"] = "current"
    robot = robot_from_mapping(data)
    scale = 2 * np.pi * 2 / 0.01
    assert robot.actuator_units == ("rad",) * 6 and robot.output_units == ("A",) * 6
    np.testing.assert_allclose(robot.actuator_limits.upper, scale * 0.75)
    _, q, v, a = trajectory(hexapod, n=50, seed=3)
    q_m, v_m, a_m, _ = robot.transmission.actuator_state(q, v, a)
    legs = hexapod.closure.legs(q)
    np.testing.assert_allclose(q_m, scale * (legs.length - 0.75), rtol=1e-13)
    force = Regressor(hexapod)(q, v, a) @ hexapod.prior
    current = Regressor(robot)(q, v, a) @ robot.prior
    np.testing.assert_allclose(current * 0.5 * scale, force, rtol=1e-10,
                               atol=1e-10 * np.abs(force).max())
    q2, v2, _ = robot.transmission.basis_state(q_m, v_m, a_m)
    np.testing.assert_allclose(q2, q, rtol=0, atol=1e-8)
    np.testing.assert_allclose(v2, v, rtol=0, atol=1e-7 * np.abs(v).max())
    data["actuators"]["screw"] = {"lead": 0.0}
    with pytest.raises(dynid.ModelError, match=r"actuators.screw.lead"):
        robot_from_mapping(data)


def test_motor_terms_through_the_screws_keep_the_power_balance():
    """Rotor inertia and motor friction on the motor angles reach the pose through K: the
    power balance holds, and the joint-torque output is Kᵀ times the motor torques."""
    from mechanism_checks import power_balance_error

    from dynid.models import motor_dynamics

    data = _file()
    data["actuators"]["screw"] = {"lead": 0.01, "ratio": 2, "zero": 0.75}
    base = robot_from_mapping(data)
    terms = [motor_dynamics(f"leg{i + 1}", i, inertia=2e-4, viscous=1e-3) for i in range(6)]
    robot = base.with_terms([*base.terms, *terms])
    theta = robot.prior.copy()
    assert power_balance_error(robot, theta, seed=1, fraction=0.6) < 1e-7
    q, v, a = random_states(robot, 6, np.random.default_rng(4), margin=0.05)
    y_m = Regressor(robot)(q, v, a) @ theta
    y = Regressor(robot.with_output("joint_torque"))(q, v, a) @ theta
    K = robot.transmission.jacobian(q)
    np.testing.assert_allclose(y, np.einsum("nji,nj->ni", K, y_m), rtol=1e-10,
                               atol=1e-10 * np.abs(y).max())
