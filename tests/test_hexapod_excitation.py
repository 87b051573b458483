"""Pose-space Fourier excitation of the hexapod (Abdellatif (12)–(22)): a small design that
respects the pose limits and the legs' length, speed, acceleration and force limits, checked on
a grid ten times denser than the design's with leg lengths from SciPy's rotations and their
derivatives by differences; and trajectories the robot cannot follow."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dynid
from dynid import TrajectoryError
from dynid.models import Limits
from dynid.trajectories import DesignSettings, FourierTrajectory, check, design_excitation

FORCE = 55.0   # N, below the peak leg force of unconstrained small designs (about 60 N)


@pytest.fixture(scope="module")
def hexapod():
    robot = dynid.load_robot("hexapod")
    lim = robot.actuator_limits
    return replace(robot, actuator_limits=Limits(lim.lower, lim.upper, lim.velocity,
                                                 lim.acceleration, np.full(6, FORCE)))


def leg_lengths(robot, poses):
    """|r + R p_i − b_i| with R = Rx(roll) Ry(pitch) Rz(yaw) from SciPy (intrinsic XYZ)."""
    geo = robot.transmission.geometry
    R = Rotation.from_euler("XYZ", poses[:, 3:]).as_matrix()          # (N, 3, 3)
    d = poses[:, None, :3] + np.einsum("nij,kj->nki", R, geo.platform) - geo.base[None]
    return np.linalg.norm(d, axis=2)


@pytest.fixture(scope="module")
def design(hexapod):
    settings = DesignSettings(harmonics=3, frequency=0.5, ramp=1.0, samples=30,
                              max_iterations=6, starts=1, criterion="condition")
    return design_excitation(hexapod, settings)


def test_design_respects_every_limit(hexapod, design):
    traj = design.trajectory
    assert traj.space == "basis" and traj.names == hexapod.joint_names   # the pose, RPY
    assert design.report.feasible and design.rank == design.base_rank
    assert {(w.row.quantity, w.row.unit) for w in design.report.worst
            if w.row.coordinate == "leg1"} == {("position", "m"), ("velocity", "m/s"),
                                               ("acceleration", "m/s²"), ("effort", "N")}
    dt = 1e-4
    t = np.arange(0.0, traj.duration + dt / 2, dt)
    x, xd, xdd = traj.evaluate(t)
    lim = hexapod.limits
    tol = 1e-9
    assert np.all((x >= lim.lower - tol) & (x <= lim.upper + tol))
    assert np.all(np.abs(xd) <= lim.velocity + tol)
    assert np.all(np.abs(xdd) <= lim.acceleration + tol)
    legs = leg_lengths(hexapod, x)
    speed = np.gradient(legs, dt, axis=0)
    accel = np.gradient(speed, dt, axis=0)
    act = hexapod.actuator_limits
    assert np.all((legs >= act.lower - tol) & (legs <= act.upper + tol))
    assert np.all(np.abs(speed[1:-1]) <= act.velocity * (1 + 1e-5))
    assert np.all(np.abs(accel[2:-2]) <= act.acceleration * (1 + 1e-4))
    # The transmission's lengths are the same legs.
    np.testing.assert_allclose(hexapod.transmission.actuator_state(x, xd, xdd)[0], legs,
                               atol=1e-12)
    force = dynid.Regressor(hexapod).predict(x, xd, xdd, hexapod.prior)
    assert np.abs(force).max() <= FORCE * (1 + 1e-6)
    assert np.abs(force).max() > 0.5 * FORCE            # the legs do work against the limit


def test_d_optimal_design_of_the_hexapod_has_full_rank(hexapod):
    settings = DesignSettings(harmonics=3, frequency=0.5, ramp=1.0, samples=30,
                              max_iterations=4, starts=1, criterion="d-optimal",
                              noise=tuple(np.full(6, 2.0)))
    design = design_excitation(hexapod, settings)
    assert design.report.feasible
    assert design.rank == design.base_rank == dynid.base_parameters(hexapod).rank


def test_leg_out_of_stroke_is_named_with_its_time(hexapod, design):
    """A trajectory lifted 0.6 m takes the legs beyond their stroke."""
    traj = design.trajectory
    coef = traj.coefficients.copy()
    coef[2, 0] += 0.6
    lifted = FourierTrajectory(coef, traj.frequency, traj.names, ramp=traj.ramp,
                               periods=traj.periods)
    report = check(lifted, hexapod)
    legs = [v.message() for v in report.violations if v.row.group == "actuator limits"
            and v.row.quantity == "position"]
    pattern = (r"leg\d: position reaches 1\.[5-9]\d* m at t = [\d.]+ s, above the actuator "
               r"limit \[0\.75, 1\.5\] m")
    assert len(legs) >= 3 and all(re.fullmatch(pattern, m) for m in legs), legs
    with pytest.raises(TrajectoryError, match=r"z: position reaches .* above the joint limit"):
        report.raise_if_violated()


def test_singular_pose_is_named_with_its_time(hexapod):
    """Yawing up to π turns the legs through right angles to their home direction, where
    the pose has no inverse kinematics or a singular leg Jacobian."""
    coef = np.zeros((6, 3))
    coef[2, 0] = 1.0
    coef[5, 0], coef[5, 2] = np.pi / 2, np.pi / 2 * (2 * np.pi * 0.5)   # yaw = π/2 (1 − cos ωt)
    traj = FourierTrajectory(coef, 0.5, hexapod.joint_names)
    with pytest.raises(TrajectoryError, match=r"cannot take its state at t = [\d.]+ s "
                                              r"\(x = 0, y = 0, z = 1, .*yaw = "):
        check(traj, hexapod)
