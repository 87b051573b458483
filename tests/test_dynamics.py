"""Forward dynamics from the regressor against Pinocchio's CRBA/ABA and energy conservation."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import dynid
from dynid.models import random_robot, random_states
from dynid.models.dynamics import Dynamics


def _pinocchio_model(robot: dynid.Robot, theta: np.ndarray) -> pin.Model:
    model = robot.tree.model.copy()
    params = robot.parameters
    for j, link in enumerate(robot.tree.link_names):
        model.inertias[j + 1] = pin.Inertia.FromDynamicParameters(theta[params.link_block(link)])
    return model


def _symmetric(M: np.ndarray) -> np.ndarray:
    return np.triu(M) + np.triu(M, 1).T


@pytest.mark.parametrize("seed", range(3))
def test_mass_matrix_and_forward_dynamics_match_crba_and_aba(seed):
    robot = random_robot(5, seed=seed, prismatic=0.3, branched=seed == 2)
    rng = np.random.default_rng(seed)
    theta = robot.prior * rng.uniform(0.8, 1.2)
    q, v, tau = random_states(robot, 6, rng)
    tau *= 20.0
    model = _pinocchio_model(robot, theta)
    data = model.createData()
    dyn = Dynamics(robot, theta)
    M = dyn.mass_matrix(q)
    a = dyn.forward(q, v, tau)
    for k in range(q.shape[0]):
        qk = robot.tree.configuration(q[k:k + 1])[0]
        np.testing.assert_allclose(M[k], _symmetric(pin.crba(model, data, qk)), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(a[k], pin.aba(model, data, qk, v[k], tau[k]), rtol=1e-9,
                                   atol=1e-9)


@pytest.mark.parametrize("output", ["joint_torque", "motor_torque", "current"])
def test_forward_inverts_the_regressor_prediction(output):
    robot = random_robot(4, seed=7, friction=True, motors=True, output=output)
    rng = np.random.default_rng(1)
    q, v, a = random_states(robot, 10, rng)
    dyn = Dynamics(robot, robot.prior)
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    np.testing.assert_allclose(dyn.forward(q, v, y), a, rtol=1e-9, atol=1e-9)
    M, h = dyn.terms(q, v)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", M, a) + h, y, rtol=1e-10, atol=1e-12)


def _rk4(dyn: Dynamics, q, v, y, dt):
    def f(q, v):
        return v, dyn.forward(q, v, y)
    k1 = f(q, v)
    k2 = f(q + dt / 2 * k1[0], v + dt / 2 * k1[1])
    k3 = f(q + dt / 2 * k2[0], v + dt / 2 * k2[1])
    k4 = f(q + dt * k3[0], v + dt * k3[1])
    return (q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
            v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]))


def test_energy_balance_with_rotors_and_current_output():
    """Links plus rotors driven by constant currents: the change of kinetic plus potential
    energy equals the work of the motor torques, ``Σ k_T i r Δq``. Energies from Pinocchio
    (links) and ``½ J_m (r q̇)²`` (rotors), independently of the regressor."""
    robot = random_robot(3, seed=4, motors=True, output="current")
    theta = robot.prior.copy()
    params = robot.parameters
    theta[params.where(kind="fvm")] = theta[params.where(kind="fcm")] = 0.0  # no dissipation
    ratios = np.array([d.ratio for d in robot.transmission.drives])
    jm = theta[params.where(kind="Jm")]
    kt = robot.transmission.torque_constants
    model = _pinocchio_model(robot, theta)
    data = model.createData()

    def energy(q, v):
        qk = robot.tree.configuration(q)[0]
        links = pin.computeKineticEnergy(model, data, qk, v[0]) + \
            pin.computePotentialEnergy(model, data, qk)
        return links + 0.5 * np.sum(jm * (ratios * v[0]) ** 2)

    dyn = Dynamics(robot, theta)
    current = np.array([[0.3, -0.2, 0.1]])
    q = np.array([[0.2, -0.4, 0.7]])
    v = np.array([[0.1, 0.3, -0.2]])
    q0, e0 = q.copy(), energy(q, v)
    for _ in range(2000):
        q, v = _rk4(dyn, q, v, current, 2e-4)
    work = np.sum(kt * current[0] * ratios * (q[0] - q0[0]))
    assert abs(energy(q, v) - e0 - work) < 1e-7 * max(1.0, abs(e0))
    # The joint-space mass matrix (joint-torque output) holds the rotors' reflected inertia:
    # ½ vᵀ M v is the kinetic energy of links and rotors.
    M = Dynamics(robot.with_output("joint_torque"), theta).mass_matrix(q)[0]
    np.testing.assert_allclose(0.5 * v[0] @ M @ v[0],
                               energy(q, v) - pin.computePotentialEnergy(
                                   model, data, robot.tree.configuration(q)[0]), rtol=1e-10)


def test_bad_shapes_are_reported(panda):
    dyn = Dynamics(panda, panda.prior)
    with pytest.raises(dynid.DataError, match=r"q: expected an array of shape \(N, 7\)"):
        dyn.mass_matrix(np.zeros((3, 6)))
    with pytest.raises(dynid.DataError, match="y: expected 2 samples"):
        dyn.forward(np.zeros((2, 7)), np.zeros((2, 7)), np.zeros((3, 7)))
    with pytest.raises(dynid.DataError, match="theta: expected a vector"):
        Dynamics(panda, np.zeros(3))
