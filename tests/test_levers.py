"""Ball-screw and lever actuators (Leborne (3)–(9), (14)–(17)) on the embedded Ariane arm."""

from __future__ import annotations

import copy

import numpy as np
import pinocchio as pin
import pytest
import yaml
from mechanism_checks import model_with, power_balance_error
from numerics import assert_derivative, derivative

import dynid
from dynid.models import LeverScrew, Regressor, base_parameters, random_states, robot_from_mapping

ARIANE_FILE = dynid.models.library._HERE / "ariane.yaml"


@pytest.fixture(scope="module")
def ariane() -> dynid.Robot:
    return dynid.load_robot("ariane")


def lever_geometry(lever: LeverScrew, q, v, a):
    """Cylinder length, speed, acceleration and the signed lever arm ``l2 sin α`` from the two
    hinge points in the joint's plane: P1 at l1 on the preceding link, P2 at l2 on the driven
    link, at angle q + β from P1."""
    P1 = np.stack([np.full_like(q, lever.l1), np.zeros_like(q)], axis=1)
    th = q + lever.beta
    e, n = np.stack([np.cos(th), np.sin(th)], axis=1), np.stack([-np.sin(th), np.cos(th)], 1)
    P2 = lever.l2 * e
    dP2 = lever.l2 * v[:, None] * n
    ddP2 = lever.l2 * (a[:, None] * n - v[:, None] ** 2 * e)
    d = P2 - P1
    qp = np.linalg.norm(d, axis=1)
    dqp = np.sum(d * dP2, axis=1) / qp
    ddqp = (np.sum(dP2 * dP2, axis=1) + np.sum(d * ddP2, axis=1) - dqp ** 2) / qp
    u = d / qp[:, None]  # direction in which the cylinder pushes on P2
    arm = P2[:, 0] * u[:, 1] - P2[:, 1] * u[:, 0]  # (P2 × u)_z = l2 sin α
    return qp, dqp, ddqp, arm


def test_lever_model_matches_leborne_equations(ariane):
    """Motor current from the regressor against Leborne (2)–(4) evaluated directly: the joint
    torque (RNEA + joint friction) is τ_l = l2 sin α F_BS (4); the screw torque follows from (3),
    F_BS = (2π/p) τ_s − I_BS q̈_p − f_sBS sgn q̇_p − f_vBS q̇_p; the motor gives τ_s through the gear,
    k_T i = J_m q̈_m + f_vm q̇_m + f_cm sgn q̇_m + τ_s / r, with q̇_m = (2π r / p) q̇_p."""
    rng = np.random.default_rng(0)
    q, v, a = random_states(ariane, 40, rng)
    theta = ariane.prior * rng.uniform(0.5, 1.5, len(ariane.prior))
    got = Regressor(ariane)(q, v, a) @ theta
    val = dict(zip(ariane.parameters.names, theta, strict=True))
    model = model_with(ariane, theta)
    data = model.createData()
    tau = np.array([pin.rnea(model, data, *s) for s in zip(q, v, a, strict=True)])
    for j, joint in enumerate(ariane.joint_names):
        tau[:, j] += val[f"{joint}.fv"] * v[:, j] + val[f"{joint}.fc"] * np.sign(v[:, j])
    for j, lever in enumerate(ariane.transmission.drives):
        m = ariane.actuator_names[j]
        qp, dqp, ddqp, arm = lever_geometry(lever, q[:, j], v[:, j], a[:, j])
        F_bs = tau[:, j] / arm                                                   # (4)
        tau_s = lever.pitch / (2 * np.pi) * (F_bs + val[f"{m}.mt"] * ddqp       # (3)
                                             + val[f"{m}.fct"] * np.sign(dqp)
                                             + val[f"{m}.fvt"] * dqp)
        k = 2 * np.pi * lever.ratio / lever.pitch
        q_m = ariane.transmission.actuator_state(q, v, a)[0][:, j]
        np.testing.assert_allclose(q_m, k * (qp - lever.length_at_zero), rtol=1e-12, atol=1e-9)
        vm, am = k * dqp, k * ddqp
        motor = (val[f"{m}.Jm"] * am + val[f"{m}.fvm"] * vm + val[f"{m}.fcm"] * np.sign(vm)
                 + tau_s / lever.ratio)
        want = motor / ariane.transmission.torque_constants[j]
        np.testing.assert_allclose(got[:, j], want, rtol=1e-10, atol=1e-12 * np.abs(want).max())


def test_current_gain_is_leborne_k(ariane):
    """Leborne (9), (14)–(15): K(q) = k_T (2π r / p) l2 sin α per lever, and i = K(q)⁻¹ τ with τ
    the joint-side model (links, joint friction and the actuators seen from the joints)."""
    rng = np.random.default_rng(1)
    q, v, a = random_states(ariane, 25, rng)
    gain = ariane.transmission.current_gain(q)
    for j, lever in enumerate(ariane.transmission.drives):
        arm = lever_geometry(lever, q[:, j], v[:, j], a[:, j])[3]
        want = ariane.transmission.torque_constants[j] * 2 * np.pi * lever.ratio / lever.pitch
        np.testing.assert_allclose(gain[:, j, j], want * arm, rtol=1e-12)
    assert np.all(gain[:, ~np.eye(3, dtype=bool)] == 0)
    current = Regressor(ariane)(q, v, a) @ ariane.prior
    torque = Regressor(ariane.with_output("joint_torque"))(q, v, a) @ ariane.prior
    np.testing.assert_allclose(np.einsum("nij,nj->ni", gain, current), torque, rtol=1e-10)


def test_each_lever_contributes_three_base_parameters(ariane):
    """Leborne (16)–(17): rotor inertia and translating mass, and the two pairs of frictions,
    have proportional columns (q_p is affine in q_m), so each lever's six actuator parameters
    are three base parameters, J_m + c² m_t, f_vm + c² f_vt, f_cm + |c| f_ct, c = p / (2π r)."""
    base = base_parameters(ariane)
    bare = base_parameters(ariane.with_terms(
        [t for t in ariane.terms if t.space != "actuator"]))
    assert base.rank - bare.rank == 3 * 3
    for j, lever in enumerate(ariane.transmission.drives):
        m, c = ariane.actuator_names[j], lever.lead
        params = ariane.parameters
        for kept, grouped, coef in (("Jm", "mt", c * c), ("fvm", "fvt", c * c),
                                    ("fcm", "fct", abs(c))):
            row = list(base.independent).index(params.index(f"{m}.{kept}"))
            col = list(base.dependent).index(params.index(f"{m}.{grouped}"))
            np.testing.assert_allclose(base.grouping[row, col], coef, rtol=1e-6)
            assert np.count_nonzero(base.grouping[:, col]) == 1
    assert base.rank == 30


def test_ariane_power_balance(ariane):
    assert power_balance_error(ariane, ariane.prior, seed=2) < 1e-8


def test_motor_space_round_trip_and_table_iii(ariane):
    """Motor ranges of Leborne Table III (increments) map onto its joint ranges (deg), and the
    joint velocity limits are the motor limits divided by the smallest ratio dq_m/dq."""
    trans, lim = ariane.transmission, ariane.limits
    ends = np.array([lim.lower, lim.upper])
    counts = trans.to_increments(trans.actuator_state(ends, 0 * ends, 0 * ends)[0])
    np.testing.assert_allclose(counts, [[0, 0, 0], [20850, 6810, 26750]], atol=0.5)
    q = np.linspace(lim.lower, lim.upper, 2001)
    ratio = np.abs(np.diagonal(trans.jacobian(q), axis1=1, axis2=2)).min(axis=0)
    joint_speed = np.degrees(ariane.actuator_limits.velocity / ratio)
    np.testing.assert_allclose(joint_speed[[0, 2]], [28, 25], rtol=1e-3)
    assert abs(joint_speed[1] / 9 - 1) < 0.07
    rng = np.random.default_rng(3)
    q, v, a = random_states(ariane, 30, rng)
    back = trans.basis_state(*trans.actuator_state(q, v, a)[:3])
    for x, y in zip(back, (q, v, a), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-10)


def test_motor_positions_out_of_reach(ariane):
    """Beyond the cylinder's stroke (length above l1 + l2) the inverse map raises, or, when not
    strict, gives NaN for those samples only."""
    trans = ariane.transmission
    q_m = trans.actuator_state(*random_states(ariane, 4, np.random.default_rng(5)))[0]
    q_m[1, 0] = 1e9
    zero = np.zeros_like(q_m)
    with pytest.raises(dynid.ModelError, match="beyond the cylinder's reach"):
        trans.basis_state(q_m, zero, zero)
    q, v, _ = trans.basis_state(q_m, zero, zero, strict=False)
    assert np.isnan(q[1, 0]) and np.isnan(v[1, 0])
    assert np.all(np.isfinite(np.delete(q, 1, axis=0))) and np.all(np.isfinite(q[1, 1:]))


def test_out_of_reach_message_names_joint_value_range_and_units(ariane):
    """The message says which joint, which motor position and sample, the reach of the
    cylinder and of the joint's limits, in rad on the motor side, and what to check."""
    lever = ariane.transmission.drives[1]
    lo, hi = lever.reach()
    assert lo < 0 < hi   # motor position 0 is within the stroke
    q_m = np.zeros((3, 3))
    q_m[2, 1] = 1e6
    with pytest.raises(dynid.ModelError, match=(
            r"^joints.joint2.actuator.lever: motor position 1e\+06 rad \(sample 2 of 3\) of "
            r"joint 'joint2' is beyond the cylinder's reach: the lever reaches motor positions "
            rf"from {lo:.6g} to {hi:.6g} rad \(cylinder lengths \|l1 − l2\| = 0.464 m to "
            r"l1 \+ l2 = 0.61 m; length 0.4841 m at motor position 0\); the joint's limits "
            r"\[0.1222, 1.641\] rad are motor positions -?[\d.]+ to [\d.]+ rad. Check the "
            r"motor's zero \(length_at_zero, the encoder's zero\) and that positions are motor "
            r"angles in rad")):
        ariane.transmission.basis_state(q_m, 0 * q_m, 0 * q_m)
    # The joint's limits map inside the reach.
    ends = lever.evaluate(np.array(lever.limits))[0]
    assert lo < ends.min() and ends.max() < hi


def test_lever_at_a_dead_point_is_refused():
    data = yaml.safe_load(ARIANE_FILE.read_text())
    bad = copy.deepcopy(data)
    bad["joints"]["joint2"]["actuator"]["lever"]["beta"] = "100*deg"  # q + β reaches 180°
    with pytest.raises(dynid.ModelError, match=r"joints.joint2.actuator.lever: .*lever at a "
                                               r"dead point at joint angle 1.396"):
        robot_from_mapping(bad)
    with pytest.raises(dynid.ModelError, match="lever at a dead point"):
        LeverScrew(0.3, 0.05, 0.2, 0.002, 10, limits=(-0.5, 0.5))
    with pytest.raises(dynid.ModelError, match="lever at a dead point"):
        LeverScrew(0.3, 0.05, 0.2, 0.002, 10).evaluate(np.array([0.1, -0.2]))


@pytest.mark.parametrize("path, value, match", [
    ("lever/pitch", 0.0, r"joints.joint1.actuator.lever.pitch: expected a value > 0"),
    ("lever/l3", 0.1, r"joints.joint1.actuator.lever.l3: unknown key"),
    ("screw/mas", 0.1, r"joints.joint1.actuator.screw.mas: unknown key; did you mean 'mass'"),
    ("screw/mass", -1.0, r"joints.joint1.actuator.screw.mass: expected a value ≥ 0"),
])
def test_bad_lever_entries_are_refused(path, value, match):
    data = yaml.safe_load(ARIANE_FILE.read_text())
    data["joints"]["joint1"]["actuator"]["screw"] = {"mass": 0.4}
    node = data["joints"]["joint1"]["actuator"]
    key, leaf = path.split("/")
    node[key][leaf] = value
    with pytest.raises(dynid.ModelError, match=match):
        robot_from_mapping(data)


def test_screw_without_lever_is_refused():
    data = yaml.safe_load(ARIANE_FILE.read_text())
    del data["joints"]["joint1"]["actuator"]["lever"]
    with pytest.raises(dynid.ModelError, match="screw parameters need a lever"):
        robot_from_mapping(data)


def test_lever_velocities_and_accelerations_match_finite_differences(ariane):
    """q̇_m = K q̇ and q̈_m = K q̈ + K̇ q̇ against the time derivatives of the motor positions
    and velocities along q(t) = q + v t + a t²/2."""
    q, v, a = random_states(ariane, 20, np.random.default_rng(6))
    trans = ariane.transmission

    def motor(t, k):
        x = q + v * t + 0.5 * a * t * t
        return trans.actuator_state(x, v + a * t, 0 * x)[k]

    _, v_m, a_m, _ = trans.actuator_state(q, v, a)
    zero, one = np.zeros(1), np.ones(1)
    assert_derivative(v_m, derivative(lambda t: motor(t, 0), zero, one), what="q̇_m")
    assert_derivative(a_m, derivative(lambda t: motor(t, 1), zero, one), what="q̈_m")


def test_end_of_reach_is_a_dead_point(ariane):
    """At the longest cylinder (l1 + l2) the lever is stretched out: the inverse map gives NaN
    there when not strict, instead of failing the batch."""
    trans, lever = ariane.transmission, ariane.transmission.drives[0]
    g_end = lever.scale * (lever.l1 + lever.l2 - lever.length_at_zero)
    q_m = np.array([[g_end, 0.0, 0.0], [0.5 * g_end, 0.0, 0.0]])
    zero = np.zeros_like(q_m)
    q, v, _ = trans.basis_state(q_m, zero, zero, strict=False)
    assert np.isnan(q[0, 0]) and np.isnan(v[0, 0]) and np.isfinite(q[1, 0])
