"""Stewart–Gough platform model (Abdellatif & Heimann 2009) on the embedded PaLiDA-like hexapod:
closure, leg Jacobian, regressor against Lagrange multipliers on the cut tree, power balance,
base parameters."""

from __future__ import annotations

import itertools

import numpy as np
import pinocchio as pin
import pytest
from mechanism_checks import (
    Trajectory,
    cut_distance,
    cut_motion,
    energy_and_friction,
    model_with,
    power_balance_error,
)
from numerics import assert_derivative, derivative

import dynid
from dynid.models import Regressor, base_parameters, random_states
from dynid.models.stewart import leg_friction, rate_matrix, rotation

_WORLD = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@pytest.fixture(scope="module")
def hexapod() -> dynid.Robot:
    return dynid.load_robot("hexapod")


def states(robot, n, seed=0):
    return random_states(robot, n, np.random.default_rng(seed), margin=0.05)


def test_pose_convention_matches_the_tree_and_abdellatif_16(hexapod):
    """The platform link's placement from Pinocchio is (r, Rx Ry Rz), and ω = H φ̇ (16)."""
    q, v, _ = states(hexapod, 5)
    q_t = hexapod.closure.positions(q)
    model, data = hexapod.tree.model, hexapod.tree.model.createData()
    fid = model.getFrameId("platform")
    for k in range(5):
        pin.forwardKinematics(model, data, q_t[k], hexapod.closure.jacobian(q[k:k + 1])[0] @ v[k])
        pin.updateFramePlacements(model, data)
        R = (pin.utils.rotate("x", q[k, 3]) @ pin.utils.rotate("y", q[k, 4])
             @ pin.utils.rotate("z", q[k, 5]))
        np.testing.assert_allclose(data.oMf[fid].rotation, R, atol=1e-14)
        np.testing.assert_allclose(rotation(q[k:k + 1, 3:])[0], R, atol=1e-14)
        np.testing.assert_allclose(data.oMf[fid].translation, q[k, :3], atol=1e-14)
        w = pin.getFrameVelocity(model, data, fid, _WORLD).angular
        np.testing.assert_allclose(w, rate_matrix(q[k:k + 1, 3:])[0] @ v[k, 3:], atol=1e-12)


def test_closure_keeps_the_spherical_joints_together(hexapod):
    """Cut frames coincide, move and accelerate together (Pinocchio forward kinematics)."""
    q, v, a = states(hexapod, 40)
    assert hexapod.closure.check(hexapod.tree, q, tolerance=1e-12) < 1e-12
    q_t, v_t, a_t, _ = hexapod.closure.tree_state(q, v, a)
    assert cut_distance(hexapod, q_t).max() < 1e-12
    vel, acc = cut_motion(hexapod, q_t, v_t, a_t)
    assert vel.max() < 1e-12 * np.abs(v_t).max() * 10
    assert acc.max() < 1e-11 * (np.abs(a_t).max() + np.abs(v_t).max() ** 2)


def test_closure_jacobian_and_bias_against_finite_differences(hexapod):
    q, v, _ = states(hexapod, 3, seed=1)
    closure = hexapod.closure
    for k in range(3):
        _, G, bias = closure.evaluate(q[k:k + 1], v[k:k + 1])
        assert_derivative(G[0] @ v[k], derivative(lambda x: closure.positions(x[None])[0],
                                                  q[k], v[k]), what="G v")
        assert_derivative(bias[0], derivative(lambda x, w=v[k]: closure.jacobian(x[None])[0] @ w,
                                              q[k], v[k]), what="Ġ v")


def test_leg_jacobian_and_drift_against_finite_differences(hexapod):
    """K = ∂l/∂x and the actuator acceleration a_m = K a + K̇ v, against differences of the
    inverse kinematics l(x) computed here from the attachment points."""
    geo = hexapod.transmission.geometry

    def lengths(x):
        R = rotation(x[None, 3:])[0]
        return np.linalg.norm(x[:3] + geo.platform @ R.T - geo.base, axis=1)

    q, v, a = states(hexapod, 3, seed=2)
    q_m, v_m, a_m, K = hexapod.transmission.actuator_state(q, v, a)
    for k in range(3):
        np.testing.assert_allclose(q_m[k], lengths(q[k]), rtol=0, atol=1e-15)
        assert_derivative(v_m[k], derivative(lengths, q[k], v[k]), what="v_m")
        assert_derivative(K[k] @ v[k], derivative(lengths, q[k], v[k]), what="K v")
        drift = derivative(lambda x, w=v[k]: hexapod.transmission.jacobian(x[None])[0] @ w,
                           q[k], v[k])
        assert_derivative(a_m[k] - K[k] @ a[k], drift, what="K̇ v")


def tree_friction(robot, theta, v_t):
    """Generalized friction forces on the tree joints from the parameter values, written
    from the friction model (per-leg and shared coefficients)."""
    val = dict(zip(robot.parameters.names, theta, strict=True))
    tau = np.zeros_like(v_t)
    for i in range(6):
        for j, joint in enumerate(("alpha", "beta", "length")):
            rate = v_t[:, 6 + 3 * i + j]
            for owner in (f"leg{i + 1}_{joint}", f"legs_{joint}"):
                tau[:, 6 + 3 * i + j] += (val.get(f"{owner}.fv", 0.0) * rate
                                          + val.get(f"{owner}.fc", 0.0) * np.sign(rate))
    return tau


def lagrange_forces(robot, theta, q, v, a):
    """Leg forces by Lagrange multipliers on the cut tree: RNEA of the tree (links from θ)
    plus friction equals Sᵀ f + J_cᵀ λ, with S selecting the prismatic joints and J_c the
    point-cut Jacobian from Pinocchio's frame Jacobians; solved for (f, λ)."""
    model = model_with(robot, theta)
    data = model.createData()
    q_t, v_t, a_t, _ = robot.closure.tree_state(q, v, a)
    tau = np.array([pin.rnea(model, data, *s) for s in zip(q_t, v_t, a_t, strict=True)])
    tau += tree_friction(robot, theta, v_t)
    S = np.zeros((6, 24))
    S[np.arange(6), 8 + 3 * np.arange(6)] = 1.0
    out = np.empty((q.shape[0], 6))
    for k in range(q.shape[0]):
        pin.computeJointJacobians(model, data, q_t[k])
        pin.updateFramePlacements(model, data)
        rows = []
        for i in range(6):
            Ja = pin.getFrameJacobian(model, data, model.getFrameId(f"platform_s{i + 1}"),
                                      _WORLD)
            Jb = pin.getFrameJacobian(model, data, model.getFrameId(f"leg{i + 1}_top"), _WORLD)
            rows.append(Ja[:3] - Jb[:3])
        A = np.hstack([S.T, np.vstack(rows).T])  # (24, 6 + 18)
        out[k] = np.linalg.solve(A, tau[k])[:6]
    return out


def test_regressor_matches_lagrange_multipliers_on_the_cut_tree(hexapod):
    rng = np.random.default_rng(3)
    theta = hexapod.prior + rng.standard_normal(len(hexapod.prior))
    q, v, a = states(hexapod, 25, seed=3)
    got = Regressor(hexapod)(q, v, a) @ theta
    want = lagrange_forces(hexapod, theta, q, v, a)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * np.abs(want).max())
    # The physical priors give leg forces of the weight's order (about 160 N of moving mass).
    static = Regressor(hexapod)(q, np.zeros_like(q), np.zeros_like(q)) @ hexapod.prior
    assert np.sum(static * hexapod.transmission.geometry.legs(q).u[..., 2], axis=1).min() > 100


def test_joint_torque_output_is_the_force_on_the_pose(hexapod):
    """τ = Kᵀ τ_m: the generalized force on the pose is the legs' forces through K."""
    q, v, a = states(hexapod, 10, seed=4)
    y_m = Regressor(hexapod)(q, v, a) @ hexapod.prior
    y = Regressor(hexapod.with_output("joint_torque"))(q, v, a) @ hexapod.prior
    K = hexapod.transmission.jacobian(q)
    np.testing.assert_allclose(y, np.einsum("nji,nj->ni", K, y_m), rtol=1e-10,
                               atol=1e-10 * np.abs(y).max())


def test_power_balance_along_random_trajectories(hexapod):
    """τ_mᵀ v_m = dE/dt + dissipation, with per-leg friction at every leg joint."""
    terms = leg_friction(hexapod.closure, {"alpha": ["viscous", "coulomb"],
                                           "beta": ["viscous", "coulomb"],
                                           "length": ["viscous", "coulomb"]},
                         smoothing=0.05)
    robot = hexapod.with_terms(terms)
    rng = np.random.default_rng(5)
    for seed in range(3):
        theta = robot.prior.copy()
        theta[robot.parameters.where(group="friction")] = rng.uniform(0.5, 5.0, len(terms) * 2)
        assert power_balance_error(robot, theta, seed=seed, fraction=0.6) < 1e-7


def test_shared_and_spherical_friction_dissipate_their_power(hexapod):
    """Power of the friction columns equals the dissipation written from the joints' relative
    velocities: shared Coulomb at the universal joints (Σ r |α̇_i|), viscous and Coulomb
    friction at the spherical joints (c |ω_rel|², r |ω_rel| with ω_rel = ω_platform − ω_rod,
    angular velocities from Pinocchio)."""
    terms = leg_friction(hexapod.closure, {"alpha": ["coulomb"],
                                           "spherical": ["viscous", "coulomb"]},
                         shared=["alpha"])
    robot = hexapod.with_terms(terms)
    q, v, a = states(robot, 8, seed=6)
    Y = Regressor(robot)(q, v, a)
    cols = robot.parameters.indices(["legs_alpha.fc", "leg3_spherical.fv"])
    v_m = robot.transmission.actuator_state(q, v, a)[1]
    power = np.einsum("nip,ni->np", Y[:, :, cols], v_m)
    q_t, v_t, _, _ = robot.closure.tree_state(q, v, a)
    np.testing.assert_allclose(power[:, 0], np.abs(v_t[:, 6::3]).sum(axis=1), rtol=1e-10)
    model, data = robot.tree.model, robot.tree.model.createData()
    expected = []
    for k in range(q.shape[0]):
        pin.forwardKinematics(model, data, q_t[k], v_t[k])
        pin.updateFramePlacements(model, data)
        w = [pin.getFrameVelocity(model, data, model.getFrameId(f), _WORLD).angular
             for f in ("platform", "leg3_rod")]
        expected.append(np.linalg.norm(w[0] - w[1]))
    np.testing.assert_allclose(power[:, 1], np.square(expected), rtol=1e-10)
    coulomb = np.einsum("nip,ni->np", Y[:, :, robot.parameters.indices(["leg3_spherical.fc"])],
                        v_m)[:, 0]
    np.testing.assert_allclose(coulomb, expected, rtol=1e-10)


def test_energy_check_sees_a_wrong_model(hexapod):
    """The power balance fails for a model whose legs have the wrong inertia: the check can
    fail."""
    theta = hexapod.prior.copy()
    traj = Trajectory(hexapod, 0, 0.5)
    q, v, a = traj(np.linspace(0.1, 1.0, 5))
    E, _ = energy_and_friction(hexapod.with_terms(()), theta[hexapod.parameters.where(
        group="link")], q, v)
    assert np.all(np.isfinite(E))
    wrong = hexapod.prior.copy()
    wrong[hexapod.parameters.index("leg1_rod.m")] *= 3
    y = Regressor(hexapod)(q, v, a) @ wrong
    assert np.abs(y - lagrange_forces(hexapod, theta, q, v, a)).max() > 1.0


def test_base_parameters_of_the_hexapod(hexapod):
    """102 base parameters: per leg 13 (cross, stator and slider combined by the universal and
    prismatic joints), the platform's 10 (with the sliders' masses) and the 14 friction
    coefficients of Table I. The five virtual links of the pose joints carry no parameters."""
    base = base_parameters(hexapod)
    assert base.rank == 102
    assert base_parameters(hexapod, seed=1, n_samples=400).rank == 102
    kept = [hexapod.parameters[i] for i in base.independent]
    assert sum(p.group == "link" and p.owner.startswith("leg1_") for p in kept) == 13
    assert sum(p.group == "link" and p.owner == "platform" for p in kept) == 10
    assert sum(p.group == "friction" for p in kept) == 14


def test_massless_links_are_dropped_not_zeroed(hexapod):
    """Declaring the pose chain's five virtual links massless removes their 50 columns and the
    10 base parameters they added (zero in truth); the other columns are unchanged."""
    from dataclasses import replace

    from dynid.models.stewart.platform import PLATFORM_LINKS

    assert hexapod.tree.massless == PLATFORM_LINKS[:5]
    full = replace(hexapod, tree=hexapod.tree.with_links())  # every link carries parameters
    assert len(full.parameters) - len(hexapod.parameters) == 50
    assert base_parameters(full).rank - base_parameters(hexapod).rank == 10
    assert not any(n.startswith(PLATFORM_LINKS[:5]) for n in hexapod.parameters.names)
    q, v, a = states(hexapod, 12, seed=8)
    Y_full = Regressor(full)(q, v, a)
    kept = full.parameters.indices(hexapod.parameters.names)
    np.testing.assert_allclose(Regressor(hexapod)(q, v, a), Y_full[:, :, kept], rtol=1e-12,
                               atol=1e-12 * np.abs(Y_full).max())
    # The dropped columns are those of links with zero prior: the prediction is the same.
    np.testing.assert_allclose(Y_full @ full.prior, Regressor(hexapod)(q, v, a) @ hexapod.prior,
                               rtol=1e-12, atol=1e-9)


def test_embedded_hexapod_pose_box_is_reachable_and_well_conditioned(hexapod):
    lim = hexapod.limits
    corners = np.array([np.where(c, lim.upper, lim.lower)
                        for c in itertools.product([0, 1], repeat=6)])
    mid = 0.5 * (lim.lower + lim.upper)
    grid = np.vstack([corners, mid, (corners + mid) / 2])
    lengths = dynid.models.stewart.check_poses(hexapod, grid)
    lo, hi = hexapod.transmission.geometry.stroke
    assert lengths.min() > lo and lengths.max() < hi
    assert hexapod.actuator_units == ("m",) * 6 and hexapod.output_units == ("N",) * 6
    assert hexapod.transmission.tolerance < hexapod.transmission.resolution


def test_mass_matrix_on_the_pose_is_the_kinetic_energy_of_the_tree(hexapod):
    """M(x) from the model's output is symmetric, positive definite, and ½ vᵀ M v is the
    kinetic energy of the cut tree moving with v_t = G v (Pinocchio)."""
    from dynid.models.dynamics import Dynamics

    robot = hexapod.with_output("joint_torque")
    q, v, _ = states(robot, 6, seed=7)
    M = Dynamics(robot, robot.prior).mass_matrix(q)
    np.testing.assert_allclose(M, np.swapaxes(M, 1, 2), rtol=0, atol=1e-12 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() > 0
    model = model_with(robot, robot.prior)
    data = model.createData()
    q_t, v_t, _, _ = robot.closure.tree_state(q, v, np.zeros_like(q))
    T = [pin.computeKineticEnergy(model, data, c, w) for c, w in zip(q_t, v_t, strict=True)]
    np.testing.assert_allclose(0.5 * np.einsum("ni,nij,nj->n", v, M, v), T, rtol=1e-10)


def test_docstring_examples_of_the_geometry_and_the_builder_run():
    import doctest

    from dynid.models.stewart import geometry, platform, rigid

    for module in (geometry, platform, rigid):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0
