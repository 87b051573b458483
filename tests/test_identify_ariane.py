"""Ground truth on the Ariane arm: ball-screw and lever actuators, motor-side hall encoders
(24 increments per motor turn), current output (Leborne).

The closed-loop simulation uses the embedded arm with its Coulomb terms smoothed. Without noise
the base parameters come back to 1e-6; with current noise the uncertainty is honest over
repeated seeds; the model with the actuator terms predicts a validation trajectory as well as
the true parameters do, the one without them does not.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import check_physical, standardized_errors

import dynid
from dynid.demo import true_parameters
from dynid.hardware import FourierReference, SensorNoise, simulate, smooth_coulomb
from dynid.identify import (
    OLS,
    WLS,
    IdentificationData,
    PhysicallyConsistent,
    Processing,
    validate,
)

RUNS = 3


@pytest.fixture(scope="module")
def ariane_case():
    # Coulomb terms smoothed (an exact sign chatters in simulation); at the motors, which turn
    # about a thousand times faster than the joints, over more than the noise of velocities
    # differenced from 24-increment hall steps, or the smoothed sign of noisy velocities is
    # biased.
    robot = smooth_coulomb(dynid.load_robot("ariane"), joint=0.02, motor=100.0)
    theta = true_parameters(robot, np.random.default_rng(0))
    noise = SensorNoise(output_std=0.02, output_step=0.001)
    ref = FourierReference.random(robot, harmonics=5, frequency=0.1, ramp=2.0, periods=2,
                                  seed=1)
    sim = simulate(robot, theta, ref, 20.0, control_rate=200, space="actuator", noise=noise,
                   runs=RUNS, seed=2)
    other = FourierReference.random(robot, harmonics=5, frequency=0.1, ramp=2.0, periods=2,
                                  seed=7)
    val = simulate(robot, theta, other, 15.0, control_rate=200, space="actuator", noise=noise,
                   seed=3)
    return robot, theta, sim, val.measured[0], dynid.base_parameters(robot)


def test_recordings_are_hall_increments_on_the_motor_side(ariane_case):
    robot, _, sim, _, _ = ariane_case
    rec = sim.measured[0]
    assert rec.space == "actuator" and rec.names == robot.actuator_names
    counts = robot.transmission.to_increments(rec.positions)
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-6)


def test_ariane_without_noise_recovers_the_base_parameters(ariane_case):
    robot, theta, sim, _, base = ariane_case
    truth = base.to_base(theta)
    est = OLS().fit(IdentificationData(robot, sim.truth[0], base=base))
    err = np.abs(est.base_params_ - truth)
    assert np.linalg.norm(err) < 1e-6 * np.linalg.norm(truth)
    nonzero = np.abs(truth) > 1e-9 * np.abs(truth).max()
    assert np.all(err[nonzero] < 1e-6 * np.abs(truth[nonzero]))


def test_ariane_with_noise_has_honest_uncertainty(ariane_case):
    robot, theta, sim, _, base = ariane_case
    truth = base.to_base(theta)
    z = standardized_errors(robot, base, sim.measured, truth)
    assert 0.7 < np.sqrt(np.mean(z**2)) < 1.3
    assert np.abs(z).max() < 4.5


def test_ariane_consistent_estimate_satisfies_every_constraint(ariane_case):
    robot, _, sim, _, base = ariane_case
    data = IdentificationData(robot, sim.measured[0], base=base,
                              processing=Processing(decimate=10))
    est = PhysicallyConsistent().fit(data)
    check_physical(robot, est.params_)  # links, COM boxes; rotor inertia, screw mass ≥ 0...


def test_actuator_terms_matter_on_a_validation_trajectory(ariane_case):
    """Leborne Table IV's comparison: the model with the actuator terms predicts the current
    as well as the true parameters; without them the error is larger."""
    robot, theta, sim, val, _ = ariane_case
    bare = robot.with_terms([t for t in robot.terms if t.space != "actuator"])
    proc = Processing(decimate=10)
    rmse = {}
    for name, model in (("with", robot), ("without", bare)):
        est = WLS().fit(IdentificationData(model, sim.measured[0], processing=proc))
        rmse[name] = validate(model, est.result_, val).rmse
    best = validate(robot, theta, val, processing=proc).rmse
    assert np.all(rmse["with"] <= 1.05 * best)
    assert rmse["without"].sum() > rmse["with"].sum()
