"""Actuator effort limits of a design: the efforts against Pinocchio's RNEA through the gears
(conftest.reference_output), their derivatives against the mass matrix and a five-point
stencil of that reference, a design that the limits shape, and bad limits."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import DATA, reference_output

import dynid
from dynid import TrajectoryError
from dynid.models import Limits
from dynid.models.dynamics import Dynamics
from dynid.trajectories import DesignSettings, build_constraints, check, design_excitation
from dynid.trajectories.efforts import EffortConstraint
from dynid.trajectories.spaces import DesignSpace


def with_efforts(robot: dynid.Robot, effort) -> dynid.Robot:
    lim = robot.actuator_limits
    return replace(robot, actuator_limits=Limits(lim.lower, lim.upper, lim.velocity,
                                                 lim.acceleration,
                                                 np.broadcast_to(effort, (robot.n,)).copy()))


@pytest.fixture(scope="module")
def arm():
    return with_efforts(dynid.load_robot(DATA / "arm2.yaml"), [0.2, np.inf])


def states(rng, n, N=7):
    return (rng.uniform(-1.5, 1.5, (N, n)), rng.uniform(-1.5, 1.5, (N, n)),
            rng.uniform(-5, 5, (N, n)))


def test_efforts_and_their_derivatives(arm):
    rng = np.random.default_rng(3)
    q, v, a = states(rng, arm.n)
    c = EffortConstraint(arm)
    assert [r.coordinate for r in c.rows] == [arm.actuator_names[0]]   # the finite limit only
    assert c.rows[0].unit == "N·m" and c.rows[0].upper == 0.2
    motor = arm.with_output("motor_torque")
    ref = reference_output(motor, arm.prior, q, v, a)
    value, J = c.values_and_jacobian(q, v, a)
    np.testing.assert_allclose(value[:, 0], ref[:, 0], rtol=1e-10, atol=1e-12)
    # Accelerations: the motor-side mass matrix's first row.
    M = Dynamics(motor, arm.prior).mass_matrix(q)
    np.testing.assert_allclose(J[:, 0, 2], M[:, 0], rtol=1e-8, atol=1e-12)
    # Positions and velocities: a five-point stencil of the reference computation.
    h = 1e-3
    for k, shift in enumerate((lambda e: (q + e, v, a), lambda e: (q, v + e, a))):
        for j in range(arm.n):
            e = np.zeros(arm.n)
            e[j] = h
            f = [reference_output(motor, arm.prior, *shift(s * e))[:, 0] for s in (2, 1, -1, -2)]
            d = (-f[0] + 8 * f[1] - 8 * f[2] + f[3]) / (12 * h)
            np.testing.assert_allclose(J[:, 0, k, j], d, rtol=1e-6, atol=1e-8)


def test_design_respects_effort_limits(arm):
    """The limit is half the peak effort an unconstrained design needs: the constrained design
    stays within it on a dense grid computed with RNEA, and its check names the row."""
    free = with_efforts(arm, np.inf)
    settings = DesignSettings(harmonics=2, frequency=0.5, samples=24, max_iterations=25,
                              starts=1, criterion="condition")
    t = np.linspace(0, 6.0, 6001)

    def peak(robot, traj):
        q, v, a = traj.evaluate(t[t <= traj.duration])
        return np.abs(reference_output(robot.with_output("motor_torque"), robot.prior,
                                       q, v, a)[:, 0]).max()

    unconstrained = design_excitation(free, settings).trajectory
    limit = 0.5 * peak(free, unconstrained)
    limited = with_efforts(arm, [limit, np.inf])
    design = design_excitation(limited, settings)
    assert design.report.feasible
    assert peak(limited, design.trajectory) <= limit * (1 + 1e-6)
    report = check(unconstrained, limited)
    assert not report.feasible
    with pytest.raises(TrajectoryError, match=r"motor1: effort reaches .* N·m at t = .* s, "
                                              r"(above|below) the actuator limit ±"):
        report.raise_if_violated()


def test_effort_rows_only_with_finite_limits():
    robot = dynid.load_robot(DATA / "arm2.yaml")
    space = DesignSpace(robot)
    assert not any(isinstance(c, EffortConstraint) for c in build_constraints(robot, space))
    limited = with_efforts(robot, 1.0)
    assert any(isinstance(c, EffortConstraint) for c in build_constraints(limited, space))


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan])
def test_bad_effort_limit(bad):
    robot = with_efforts(dynid.load_robot(DATA / "arm2.yaml"), [bad, 1.0])
    with pytest.raises(TrajectoryError, match=r"actuator limits of motor1: the effort limit "
                                              r"must be > 0 \(inf for none\), found"):
        EffortConstraint(robot)


def test_bad_margin(arm):
    with pytest.raises(TrajectoryError, match=r"margin: expected a fraction in \[0, 1\), "
                                              r"found 1\.5"):
        EffortConstraint(arm, margin=1.5)
