"""Base parameters: counts known in closed form, reconstruction, mappings and names."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_theta

import dynid
from dynid.models import (
    DHJoint,
    Gear,
    Regressor,
    Robot,
    Transmission,
    base_parameters,
    build_tree,
    joint_friction,
    motor_dynamics,
    random_robot,
    random_states,
)
from dynid.models.library import random_inertia


def planar(n: int, gravity, *, friction=False, motors=False, seed=0) -> Robot:
    """A planar arm of n revolute joints with parallel z axes, random links."""
    rng = np.random.default_rng(seed)
    lengths = (0.0, 0.3, 0.25, 0.4, 0.35)
    rows = [DHJoint(f"joint{j + 1}", d=lengths[j]) for j in range(n)]
    inertias = {f"link{j + 1}": random_inertia(rng) for j in range(n)}
    tree = build_tree(rows, inertias=inertias, gravity=gravity)
    terms = []
    if friction:
        terms += [joint_friction(f"joint{j + 1}", j, viscous=0.1, coulomb=0.2) for j in range(n)]
    trans = None
    if motors:
        trans = Transmission([Gear(50.0 + 10 * j) for j in range(n)],
                             [f"motor{j + 1}" for j in range(n)])
        terms += [motor_dynamics(f"motor{j + 1}", j, inertia=1e-5, viscous=1e-4, coulomb=1e-3)
                  for j in range(n)]
    return Robot(tree, transmission=trans, terms=tuple(terms))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_horizontal_planar_arm_count(n):
    """Planar nR arm with vertical axes (gravity along the axes) and joint friction.

    Only planar motion about parallel z axes is possible, so each link's dynamics depends on
    Izz_j, mcx_j, mcy_j and m_j alone. Each mass m_j moves to the links before it (it acts as a
    point mass at joint j), leaving Izz_j, mcx_j, mcy_j per link: 3n. Link 1 rotates about a
    fixed vertical axis, and gravity does no work, so mcx_1 and mcy_1 only load the base: 3n - 2.
    Viscous and Coulomb friction add two independent columns per joint: 3n - 2 + 2n.
    """
    base = base_parameters(planar(n, (0, 0, -9.81), friction=True))
    assert base.rank == 3 * n - 2 + 2 * n


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_vertical_planar_arm_with_gear_motors_count(n):
    """Planar nR arm in a vertical plane (gravity perpendicular to the axes), gear motors.

    As above, but gravity makes mcx_1 and mcy_1 identifiable: 3n link parameters. The rotor
    inertia of motor j adds r_j² q̈_j to joint j only; for j = 1 that is the column of Izz_1
    (whose column is q̈_1 on joint 1 and nothing else), so Jm_1 groups with it, while for j ≥ 2
    Izz_j also loads joints 1..j-1: n - 1 new parameters. Motor viscous and Coulomb friction
    (no joint friction modelled) add 2n: 3n + (n - 1) + 2n = 6n - 1.
    """
    base = base_parameters(planar(n, (0, -9.81, 0), motors=True))
    assert base.rank == 6 * n - 1
    izz1 = next(name for name in base.names if name.startswith("link1.Izz"))
    assert izz1.endswith(" + 2500·motor1.Jm")


def test_joint_and_motor_friction_of_one_gear_group():
    """Joint viscous friction f_v q̇ and motor viscous friction r² f_vm q̇ have proportional
    columns; so have the Coulomb terms (sgn(r q̇) = sgn q̇ for r > 0). Each pair is one base
    parameter ``joint.fv + r²·motor.fvm`` and ``joint.fc + r·motor.fc``."""
    robot = planar(2, (0, -9.81, 0), friction=True, motors=True)
    base = base_parameters(robot)
    assert base.rank == 6 * 2 - 1
    assert "joint2.fv + 3600·motor2.fvm" in base.names
    assert "joint2.fc + 60·motor2.fcm" in base.names


def test_cartesian_robot_count():
    """Three mutually orthogonal prismatic joints. No link rotates, so first moments and
    inertias have no effect; joint j carries (m_j + ... + m_n)(a_j - g·z_j), so the three
    masses are identifiable, and nothing else: 3 parameters."""
    rows = [DHJoint("joint1", type="prismatic"),
            DHJoint("joint2", type="prismatic", alpha=-np.pi / 2, theta=np.pi / 2, d=0.1),
            DHJoint("joint3", type="prismatic", alpha=-np.pi / 2, d=0.2, r=0.1)]
    rng = np.random.default_rng(0)
    tree = build_tree(rows, inertias={f"link{j}": random_inertia(rng) for j in (1, 2, 3)},
                      gravity=(1.0, -3.0, -9.0))
    data = tree.model.createData()
    pin.framesForwardKinematics(tree.model, data, np.zeros(3))
    axes = np.array([data.oMi[j].rotation[:, 2] for j in (1, 2, 3)])
    np.testing.assert_allclose(axes @ axes.T, np.eye(3), atol=1e-12)
    base = base_parameters(Robot(tree))
    assert base.rank == 3
    assert base.names == ("link1.m", "link2.m", "link3.m")
    assert not base.grouping.any()


def test_planar_grouping_names():
    """Horizontal 3R arm with links 0.3 and 0.25 m: the classical groupings
    ZZ1R = Izz1 + 0.3²(m2 + m3), ZZ2R = Izz2 + 0.25² m3, MX1R irrelevant (no gravity),
    MX2R = mcx2 + 0.25 m3."""
    base = base_parameters(planar(3, (0, 0, -9.81)))
    assert base.names == ("link1.Izz + 0.09·link2.m + 0.09·link3.m",
                          "link2.mcx + 0.25·link3.m", "link2.mcy",
                          "link2.Izz + 0.25²·link3.m", "link3.mcx", "link3.mcy", "link3.Izz")


def test_panda_base_parameters(panda):
    """The Panda's 7 revolute joints with a vertical first axis have 7n - 6 = 43 base inertial
    parameters: each link keeps 7 (m, mcz and Iyy group into earlier links), except link 1,
    which rotates about a fixed vertical axis and keeps only Izz. Friction adds 14. The armature
    of joint 1 groups with Izz1; that of joint 2 with Izz2, since axis 2 is perpendicular to
    axis 1 and link 2's angular velocity about z_2 is q̇_2 alone. 5 remain."""
    base = base_parameters(panda)
    assert base.rank == 43 + 14 + 5
    assert base.names[0] == "link1.Izz + link2.Iyy + motor1.Ia"
    assert any(name.endswith("link7.m + motor2.Ia") for name in base.names)


@pytest.mark.parametrize("robot_factory", [
    lambda: dynid.load_robot("panda"),
    lambda: random_robot(6, seed=1, prismatic=0.3, friction=True, motors=True),
    lambda: random_robot(7, seed=2, branched=True, friction=True, motors=True,
                         output="current"),
])
def test_base_regressor_reproduces_full_prediction(robot_factory):
    robot = robot_factory()
    base = base_parameters(robot, seed=0)
    rng = np.random.default_rng(99)  # states unseen by the base-parameter computation
    q, v, a = random_states(robot, 30, rng)
    theta = random_theta(robot, rng)
    Y = Regressor(robot)(q, v, a)
    full = Y @ theta
    reduced = base.regressor(Y) @ base.to_base(theta)
    assert np.abs(full - reduced).max() < 1e-9 * np.abs(full).max()
    np.testing.assert_allclose(base.matrix @ theta, base.to_base(theta), rtol=1e-12, atol=1e-12)


def test_standard_base_round_trip(panda):
    """``from_base`` gives standard parameters with the requested base parameters, and the
    smallest change from the prior that does: ``θ − π`` lies in the row space of ``B``
    (orthogonal to every change the base parameters cannot see)."""
    base = base_parameters(panda)
    rng = np.random.default_rng(3)
    B = base.matrix
    for prior in (None, random_theta(panda, rng)):
        theta_b = base.to_base(random_theta(panda, rng))
        theta = base.from_base(theta_b, prior)
        np.testing.assert_allclose(base.to_base(theta), theta_b, rtol=1e-10, atol=1e-12)
        change = theta - (panda.prior if prior is None else prior)
        coef = np.linalg.lstsq(B.T, change, rcond=None)[0]
        assert np.linalg.norm(B.T @ coef - change) < 1e-10 * np.linalg.norm(change)


def test_result_does_not_depend_on_the_seed(panda):
    a, b = base_parameters(panda, seed=0), base_parameters(panda, seed=7)
    assert a.names == b.names
    np.testing.assert_allclose(a.grouping, b.grouping, atol=1e-9)


def test_bad_inputs(panda):
    base = base_parameters(panda)
    with pytest.raises(dynid.DataError, match="theta: expected a vector of length 91"):
        base.to_base(np.zeros(3))
    with pytest.raises(dynid.DataError, match="theta_b: expected a vector of length 62"):
        base.from_base(np.zeros(3))
    with pytest.raises(dynid.ModelError, match="regressor: expected 91 columns"):
        base.regressor(np.zeros((2, 7, 5)))


def test_random_states_keep_the_margin_inside_the_limits(panda):
    """Positions are drawn over the limits less ``margin`` of the range at each end, over
    ±π (less the margin) for a coordinate without limits."""
    from dataclasses import replace

    lim = panda.limits
    lower, upper = lim.lower.copy(), lim.upper.copy()
    lower[0], upper[0] = -np.inf, np.inf
    robot = replace(panda, limits=replace(lim, lower=lower, upper=upper))
    q = random_states(robot, 2000, np.random.default_rng(0), margin=0.2)[0]
    lo, hi = np.r_[-np.pi, lim.lower[1:]], np.r_[np.pi, lim.upper[1:]]
    assert np.all(q >= lo + 0.2 * (hi - lo)) and np.all(q <= hi - 0.2 * (hi - lo))
    assert np.all(q.min(axis=0) < lo + 0.25 * (hi - lo))   # and the range is still covered
    assert np.all(q.max(axis=0) > hi - 0.25 * (hi - lo))
