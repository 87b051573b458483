"""Tendon and gear coupling matrices: the Stäubli TX40's wrist (joints 5–6) on the real FIGAROH
data set, against the conversion its README documents."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import dataset
from mechanism_checks import power_balance_error

from dynid import datasets
from dynid.models import Regressor, random_states

N = np.array([32.0, 32.0, 45.0, -48.0, 45.0, 32.0])  # gear ratios of the README, written out


@pytest.fixture(scope="module")
def tx40():
    """The TX40 of :mod:`dynid.datasets` (the data set's URDF, gear ratios N and the wrist
    coupling: motor 6 turns with joints 5 and 6, q_m6 = N6 (q5 + q6), written as
    q_m = C (N ⊙ q) with C[5, 4] = N6/N5), with motor torque as its output."""
    return datasets.tx40_robot(dataset("staubli_tx40_figaroh")).with_output("motor_torque")


def test_tx40_coupling_matches_the_readme(tx40):
    """q_motor = Rq q with Rq = diag(N), Rq[5, 4] = N6; τ_joint = Rt τ_motor with Rt = diag(N),
    Rt[4, 5] = N6 (README of the data set)."""
    Rq = np.diag(N)
    Rq[5, 4] = N[5]
    Rt = np.diag(N)
    Rt[4, 5] = N[5]
    q = np.random.default_rng(0).uniform(-1, 1, (5, 6))
    np.testing.assert_allclose(tx40.transmission.jacobian(q), np.broadcast_to(Rq, (5, 6, 6)))
    tau_m = np.random.default_rng(1).standard_normal((5, 6, 1))
    gp = tx40.transmission.actuator_state(q, q, q)[3]
    np.testing.assert_allclose(tx40.transmission.to_basis(tau_m, gp)[..., 0],
                               tau_m[..., 0] @ Rt.T, rtol=1e-12)


def test_tx40_measured_motor_positions_map_to_joints(tx40):
    """The recorded motor positions become joint positions Rq⁻¹ q_motor, and the wrist joints
    then stay in a physical range while motor 6 alone turns much further."""
    path = dataset("staubli_tx40_figaroh") / "data" / "pos_read_data.csv"
    q_motor = np.loadtxt(path, delimiter=",", skiprows=1, max_rows=4000)
    q = tx40.transmission.basis_state(q_motor, 0 * q_motor, 0 * q_motor)[0]
    Rq = np.diag(N)
    Rq[5, 4] = N[5]
    np.testing.assert_allclose(q, np.linalg.solve(Rq, q_motor.T).T, rtol=1e-12, atol=1e-12)
    assert np.abs(q).max() < 2 * np.pi


def test_tx40_motor6_columns_are_figaroh_coupling_terms(tx40):
    """Motor 6's rotor inertia seen at the joints is N6² (q̈5 + q̈6) on both wrist rows, the sum
    of a diagonal term and FIGAROH's coupling column [q̈6 on row 5, q̈5 on row 6]; its Coulomb
    friction has sign(q̇5 + q̇6), as the README describes."""
    robot = tx40.with_output("joint_torque")
    q, v, a = random_states(robot, 30, np.random.default_rng(2))
    Y = Regressor(robot)(q, v, a)
    jm = Y[:, :, robot.parameters.index("motor6.Jm")]
    np.testing.assert_allclose(jm[:, 4], N[5] ** 2 * (a[:, 4] + a[:, 5]), rtol=1e-12)
    np.testing.assert_allclose(jm[:, 5], N[5] ** 2 * (a[:, 4] + a[:, 5]), rtol=1e-12)
    np.testing.assert_allclose(jm[:, :4], 0.0)
    fc = Y[:, :, robot.parameters.index("motor6.fcm")]
    np.testing.assert_allclose(fc[:, 4], abs(N[5]) * np.sign(v[:, 4] + v[:, 5]), rtol=1e-12)


def test_tx40_power_balance(tx40):
    theta = tx40.prior * np.random.default_rng(3).uniform(0.5, 1.5, len(tx40.prior))
    assert power_balance_error(tx40, theta, seed=4) < 1e-8
