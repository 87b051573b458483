"""Drive gains by the payload method: two runs of one trajectory, without and with a known
payload, give each actuator's torque per ampere.

Synthetic runs (the model's currents along a Fourier motion with Gaussian noise, derivatives
as recorded) make many seeds cheap; one test runs the closed loop of
:func:`dynid.hardware.simulate`. The truth is the robot's torque constants; the σ are checked
against the scatter over seeds.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from conftest import current_run as run  # the model's current, noise σ 0.02 A

import dynid
from dynid.demo import true_parameters
from dynid.errors import DataError, DynidWarning, ModelError
from dynid.hardware import FourierReference, SensorNoise, simulate, smooth_coulomb
from dynid.identify import (
    WLS,
    DriveGains,
    IdentificationData,
    Recording,
    identify_drive_gains,
    identify_payload,
)
from dynid.identify.gains import with_torque_constants
from dynid.models import Body, LinkInertia, random_robot

NOISE = 0.02  # A
BOX = Body("box", "link4", LinkInertia(2.0, (0.05, 0.02, -0.03),
                                       (0.01, 0.001, 0.0, 0.012, 0.0, 0.008)),
           xyz=(0.1, 0.0, 0.0), known=True)


@pytest.fixture(scope="module")
def arm():
    """A random 4-joint arm with gear motors and current output (its torque constants are
    the truth), its true parameters and a Fourier motion sampled at 100 Hz."""
    robot = random_robot(4, seed=2, friction=True, motors=True, output="current")
    theta = true_parameters(robot, np.random.default_rng(0))
    ref = FourierReference.random(robot, harmonics=4, frequency=0.5, periods=3, seed=2)
    t = np.arange(0.0, 6.0, 0.01)
    return robot, theta, (t, *ref(t))




def pair(robot, theta, motion, rng=None, payload=BOX):
    return (run(robot, theta, motion, rng),
            run(replace(robot, bodies=(payload,)), theta, motion, rng))


def test_exact_runs_give_the_torque_constants(arm):
    robot, theta, motion = arm
    gains = identify_drive_gains(robot, *pair(robot, theta, motion), BOX)
    assert isinstance(gains, DriveGains) and dynid.identify_drive_gains is identify_drive_gains
    np.testing.assert_allclose(gains.gains, robot.transmission.torque_constants, rtol=1e-9)
    # The base parameters come in torque units: those of the same robot outputting torque.
    torque = dynid.base_parameters(robot.with_output("motor_torque"))
    assert gains.base_names == torque.names
    np.testing.assert_allclose(gains.base_params, torque.to_base(theta), rtol=1e-7,
                               atol=1e-9 * np.abs(theta).max())
    assert gains.units == ("N·m/A",) * 4 and gains.payload_effect > 100


def test_sigma_matches_the_scatter_over_seeds(arm):
    """60 seeds: the standardized errors of the gains have unit RMS and no bias beyond their
    σ; the currents' noise σ comes back."""
    robot, theta, motion = arm
    truth = robot.transmission.torque_constants
    rng = np.random.default_rng(11)
    z, noise = [], []
    for _ in range(60):
        gains = identify_drive_gains(robot, *pair(robot, theta, motion, rng), BOX)
        z.append((gains.gains - truth) / gains.sigma)
        noise.append(gains.noise_sigma)
    z = np.array(z)
    assert 0.8 < np.sqrt(np.mean(z**2)) < 1.2
    assert np.abs(z.mean(axis=0)).max() < 4 / np.sqrt(len(z))
    np.testing.assert_allclose(np.mean(noise, axis=0), NOISE, rtol=0.03)


def test_closed_loop_gains_and_the_torques_they_give():
    """Closed loop with measured currents: the gains within 1 % and their σ; the robot
    identified with them has the true parameters within their σ, where the nominal torque
    constants (10 % off) put them 10 % off."""
    robot = random_robot(3, seed=5, friction=True, motors=True, output="current",
                         smoothing=0.05)
    theta = true_parameters(robot, np.random.default_rng(0))
    box = Body("box", "link3", LinkInertia(1.5, (0.0, 0.03, 0.05), (0.004, 0, 0, 0.005, 0,
                                                                        0.003)), known=True)
    ref = FourierReference.random(robot, harmonics=4, frequency=0.5, periods=3, seed=2)
    noise = SensorNoise(output_std=0.01, output_step=0.001)
    empty = simulate(robot, theta, ref, 6.0, control_rate=400, noise=noise, seed=1)
    full = simulate(replace(robot, bodies=(box,)), theta, ref, 6.0, control_rate=400,
                    noise=noise, seed=2)
    truth = robot.transmission.torque_constants
    nominal = with_torque_constants(robot, 1.1 * truth)
    gains = identify_drive_gains(nominal, empty.measured[0], full.measured[0], box)
    error = gains.gains / truth - 1
    assert np.abs(error).max() < 0.01
    assert np.all(np.abs(gains.gains - truth) < 5 * gains.sigma)
    base = dynid.base_parameters(robot)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)  # the closed loop's residual colour
        fit = WLS().fit(IdentificationData(gains.robot(nominal), empty.measured[0], base=base))
        off = WLS().fit(IdentificationData(nominal, empty.measured[0], base=base))
    big = np.argmax(np.abs(base.to_base(theta)))
    assert abs(fit.base_params_[big] / base.to_base(theta)[big] - 1) < 0.02
    assert abs(off.base_params_[big] / base.to_base(theta)[big] - 1.1) < 0.02
    # The currents as torques: the model of the same robot outputting motor torque.
    torques = gains.torques(empty.truth[0])
    assert torques.output_kind == "motor_torque" and torques.units["output"] == ("N·m",) * 3
    np.testing.assert_allclose(torques.output, empty.truth[0].output * gains.gains)
    model = dynid.Regressor(robot.with_output("motor_torque")).predict(
        torques.positions, torques.velocities, torques.accelerations, theta)
    assert np.max(np.abs(model - torques.output)) < 0.01 * np.abs(model).max()


def test_panda_with_three_kilograms():
    """The study of ``benchmarks/methods.py`` on two seeds of a shorter run: the Panda's drive
    gains within 1 % (RMS over actuators) with a 3 kg box on the flange, and the box
    identified as a payload from a robot identified without it (the benchmark's 50 seeds:
    0.26 %, 0.02 % and 0.2 mm)."""
    panda = smooth_coulomb(dynid.load_robot("panda"), joint=0.05)
    truth = np.array([0.12, 0.11, 0.13, 0.10, 0.08, 0.09, 0.07])
    robot = with_torque_constants(panda, truth)
    theta = true_parameters(robot, np.random.default_rng(0))
    box = Body("box", "flange", LinkInertia(3.0, (0.02, -0.01, 0.05),
                                            (0.012, 0.001, 0.0, 0.015, 0.0, 0.008)), known=True)
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, seed=1)
    noise = SensorNoise(output_std=0.01, output_step=0.001)
    empty = simulate(robot, theta, ref, 6.0, control_rate=500, noise=noise, runs=2, seed=3)
    full = simulate(replace(robot, bodies=(box,)), theta, ref, 6.0, control_rate=500,
                    noise=noise, runs=2, seed=4)
    base = dynid.base_parameters(robot)
    for e, f in zip(empty.measured, full.measured, strict=True):
        gains = identify_drive_gains(panda, e, f, box)  # joint torque, no torque constants
        assert np.sqrt(np.mean((gains.gains / truth - 1) ** 2)) < 0.01
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DynidWarning)  # the closed loop's residual colour
            result = WLS().fit(IdentificationData(robot, e, base=base)).result_
            payload = identify_payload(robot, result, f, "flange", name="box")
        assert abs(payload.mass / 3.0 - 1) < 0.005
        assert np.linalg.norm(payload.com - np.array(box.inertia.com)) < 0.002


# Bad input -----------------------------------------------------------------------------------
def test_runs_without_a_payload_change(arm):
    robot, theta, motion = arm
    rng = np.random.default_rng(5)
    empty = run(robot, theta, motion, rng)
    again = run(robot, theta, motion, rng)
    with pytest.raises(DataError, match=r"shows .almost. no effect of the payload"):
        identify_drive_gains(robot, empty, again, BOX)


def test_runs_of_different_trajectories(arm):
    robot, theta, motion = arm
    empty = run(robot, theta, motion, np.random.default_rng(1))
    other = FourierReference.random(robot, harmonics=4, frequency=0.5, periods=3, seed=9)
    t = motion[0]
    moved = run(replace(robot, bodies=(BOX,)), theta, (t, *other(t)))
    with pytest.raises(DataError, match=r"loaded: joint\d follows another trajectory .* "
                                        "tolerance 10 %"):
        identify_drive_gains(robot, empty, moved, BOX)
    shorter = run(replace(robot, bodies=(BOX,)), theta, tuple(x[:300] for x in motion))
    with pytest.raises(DataError, match=r"loaded: it lasts 2\.99 s and empty 5\.99 s"):
        identify_drive_gains(robot, empty, shorter, BOX)
    with pytest.raises(DataError, match="trajectory_tolerance: expected a fraction > 0"):
        identify_drive_gains(robot, empty, empty, BOX, trajectory_tolerance=0)


def test_a_current_that_does_not_follow_the_motion(arm):
    robot, theta, motion = arm
    rng = np.random.default_rng(3)
    empty, full = pair(robot, theta, motion, rng)
    noise = [replace(r, output=np.column_stack([r.output[:, :2], rng.standard_normal(
        len(r.time)), r.output[:, 3]])) for r in (empty, full)]
    with pytest.raises(DataError, match=r"the gain of motor3 is .* not determined"):
        identify_drive_gains(robot, *noise, BOX)


def test_bad_arguments(arm):
    robot, theta, motion = arm
    empty, full = pair(robot, theta, motion, np.random.default_rng(2))
    with pytest.raises(DataError, match="robot: expected a Robot"):
        identify_drive_gains("arm", empty, full, BOX)
    with pytest.raises(ModelError, match="payload: expected a Body"):
        identify_drive_gains(robot, empty, full, 2.0)
    with pytest.raises(DataError, match="its mass is 0 kg"):
        identify_drive_gains(robot, empty, full, replace(BOX, inertia=LinkInertia()))
    torque = replace(empty, output_kind=None, units={"output": "N·m"})
    with pytest.raises(DataError, match="empty: expected a recording of currents"):
        identify_drive_gains(robot, torque, full, BOX)
    renamed = replace(full, names=("a", "b", "c", "d"))
    with pytest.raises(DataError, match="loaded: its coordinates"):
        identify_drive_gains(robot, empty, renamed, BOX)


def test_bad_uses_of_the_gains(arm):
    robot, theta, motion = arm
    empty, full = pair(robot, theta, motion, np.random.default_rng(2))
    gains = identify_drive_gains(robot, empty, full, BOX)
    with pytest.raises(DataError, match="expected a recording of currents, found "
                                        "motor_torque"):
        gains.torques(gains.torques(empty))
    with pytest.raises(DataError, match="3 outputs, but the gains are of 4 actuators"):
        gains.torques(Recording(empty.time, empty.positions[:, :3], empty.output[:, :3],
                                output_kind="current"))
    with pytest.raises(DataError, match="the robot the gains were identified on"):
        gains.robot(random_robot(3, seed=5, motors=True))
    model = gains.robot(robot)
    np.testing.assert_array_equal(model.transmission.torque_constants, gains.gains)
    assert robot.transmission.torque_constants is not model.transmission.torque_constants
