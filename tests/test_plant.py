"""The simulated robot stepped one control period at a time: the batch simulation is a loop
over it, drives commissioned without a trajectory hold and settle, the measured output
carries the motor's ripple, and bad inputs are refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import dynid
from dynid.demo import true_parameters
from dynid.errors import DataError
from dynid.hardware import (
    DriveLoops,
    FourierReference,
    Plant,
    SensorNoise,
    simulate,
    smooth_coulomb,
    tune_loops,
)
from dynid.hardware.drives import encoder_steps
from dynid.models.dynamics import Dynamics


def _ariane():
    robot = smooth_coulomb(dynid.load_robot("ariane"), joint=0.02, motor=100.0)
    return robot, true_parameters(robot, np.random.default_rng(1))


def _without_friction(robot, theta):
    """θ with every friction coefficient (joint, motor and screw) set to zero: the loops are
    tuned on inertia alone, and their linear behaviour is what a step shows."""
    theta = theta.copy()
    for i, p in enumerate(robot.parameters):
        if p.name.split(".")[-1] in ("fv", "fc", "fvm", "fcm", "fvt", "fct"):
            theta[i] = 0.0
    return theta


def test_stepping_a_plant_along_a_reference_is_what_simulate_records():
    """The drives given the reference on the actuator side, its velocity and the prior
    model's output as feed-forward, period by period: the measured and true signals of
    ``simulate`` (two noisy runs, actuator-side recording) are those of the stepped plant."""
    robot, theta = _ariane()
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.5, seed=2)
    noise = SensorNoise(position_std=1e-4, output_std=0.02, output_step=0.001)
    rate, steps = 200.0, 300
    sim = simulate(robot, theta, ref, steps / rate, control_rate=rate, space="actuator",
                   runs=2, noise=noise, seed=7)

    t = np.arange(steps) / rate
    motion = ref(t)
    q_m, v_m = robot.transmission.actuator_state(*motion)[:2]
    loops = DriveLoops()
    gains = tune_loops(Dynamics(robot, theta), motion, loops, rate, encoder_steps(robot, loops))
    ff = dynid.Regressor(robot).predict(*motion, robot.prior)
    plant = Plant(robot, theta, control_rate=rate, gains=gains, loops=loops, noise=noise,
                  q0=motion[0][0], v0=motion[1][0], runs=2, seed=7)
    positions, output, q, u = [], [], [], []
    for k in range(steps):
        assert plant.time == pytest.approx(t[k], abs=1e-12)
        measured = plant.sense("actuator")
        positions.append(measured[0])
        output.append(measured[1])
        q.append(plant.q)
        u.append(plant.current)
        plant.step(q_m[k], v_m[k], ff[k])
    for r in range(2):
        for mine, theirs in ((positions, sim.measured[r].positions),
                             (output, sim.measured[r].output), (q, sim.truth[r].positions),
                             (u, sim.truth[r].output)):
            np.testing.assert_allclose(np.array(mine)[:, r], theirs, rtol=1e-12, atol=1e-12)


def test_differenced_targets_track_the_reference_as_its_velocity_does():
    """Without a velocity feed-forward the drives difference successive targets, as in
    cyclic synchronous position mode (a velocity half a period late): the tracking error is
    at most half as large again as with the reference's own velocity."""
    robot = smooth_coulomb(dynid.load_robot("panda"), joint=0.02, motor=2.0)
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.5, seed=1)
    rate, steps = 500.0, 1000
    motion = ref(np.arange(steps) / rate)
    q_m, v_m = robot.transmission.actuator_state(*motion)[:2]
    loops = DriveLoops()
    gains = tune_loops(Dynamics(robot, robot.prior), motion, loops, rate,
                       encoder_steps(robot, loops))
    ff = dynid.Regressor(robot).predict(*motion, robot.prior)
    plants = [Plant(robot, robot.prior, control_rate=rate, gains=gains, loops=loops,
                    noise=SensorNoise(), q0=motion[0][0], v0=motion[1][0]) for _ in range(2)]
    errors = np.zeros((2, robot.n))
    for k in range(steps):
        plants[0].step(q_m[k], v_m[k], ff[k])
        plants[1].step(q_m[k], None, ff[k])
        reached = motion[0][min(k + 1, steps - 1)]
        errors = np.maximum(errors, [np.abs(p.q[0] - reached) for p in plants])
    assert np.all(errors[1] < 1.5 * errors[0])


@pytest.mark.parametrize("name", ["panda", "ariane"])
def test_commissioned_drives_settle_a_step_on_every_axis(name):
    """A step of 0.05 rad on every joint (the actuator targets through the transmission) from
    rest at the middle of the joint ranges, with gains commissioned over random
    configurations: each joint overshoots by less than 30 % and is within 1 % of the step
    by the time the rule of DriveLoops bounds: every root of each axis's cascade has a real
    part below −0.3 ω_s (ω_s twice its position gain), so the error falls below 1 % within
    ln(100) / (0.3 ω_s) of the slowest axis, and stays there."""
    robot = smooth_coulomb(dynid.load_robot(name), joint=0.02, motor=2.0)
    theta = _without_friction(robot, robot.prior)
    rate = 200.0 if name == "ariane" else 500.0
    plant = Plant.commissioned(robot, theta, control_rate=rate)
    lim = robot.limits
    q0 = plant.q[0].copy()
    assert np.allclose(q0, (lim.lower + lim.upper) / 2)
    goal = q0 + 0.05
    zero = np.zeros((1, robot.n))
    target = robot.transmission.actuator_state(goal[None], zero, zero)[0][0]
    settle = np.log(100) / (0.3 * 2 * plant.gains.position.min())
    t_end = settle + 1.0
    history = []
    while plant.time < t_end:
        plant.step(target)
        history.append((plant.time, plant.q[0].copy()))
    times = np.array([t for t, _ in history])
    moved = (np.array([q for _, q in history]) - q0) / 0.05
    assert np.all(moved.max(axis=0) < 1.3)
    assert np.all(np.abs(moved[times >= settle] - 1).max(axis=0) < 0.01)


def test_commissioned_drives_hold_the_robot_where_it_starts():
    """Targets at the start position: the integrals start at the output that holds the robot
    against gravity, so it stays there (to the encoder's resolution)."""
    robot, theta = _ariane()
    plant = Plant.commissioned(robot, theta, control_rate=200.0, runs=2)
    start = plant.actuator_positions().copy()
    q0 = plant.q.copy()
    for _ in range(200):
        plant.step(start)
    step = encoder_steps(robot, DriveLoops())
    assert np.all(np.abs(plant.actuator_positions() - start) < 2 * step)
    assert np.all(np.abs(plant.q - q0) < 1e-3)


def test_the_measured_output_carries_the_ripple_of_the_true_actuator_position():
    """With no noise, the measured output minus the applied one is the ripple
    ``A sin(p q_m)`` of the true actuator position, to half a quantization step; and the
    ripple is in the measurement only: the robot moves as without it."""
    robot, theta = _ariane()
    amplitude, per_turn, step = np.array([0.05, 0.03, 0.02]), 6.0, 1e-3
    plants = [Plant.commissioned(robot, theta, control_rate=200.0, noise=SensorNoise(
        output_step=step, output_ripple=ripple, ripple_per_turn=per_turn))
        for ripple in (amplitude, 0.0)]
    target = plants[0].actuator_positions()[0] + 40.0  # several ripple periods per motor
    phases = []
    for _ in range(200):
        for plant in plants:
            plant.step(target)
        np.testing.assert_array_equal(plants[0].q, plants[1].q)
        q_m = plants[0].actuator_positions()
        _, measured = plants[0].sense()
        ripple = amplitude * np.sin(per_turn * q_m)
        assert np.all(np.abs(measured - plants[0].current - ripple) <= step / 2 + 1e-12)
        phases.append(per_turn * q_m[0])
    assert np.all(np.ptp(phases, axis=0) > 2 * np.pi)  # every motor went through a period


def test_sensed_positions_on_either_side_are_the_true_ones_quantized():
    robot, theta = _ariane()
    plant = Plant.commissioned(robot, theta, control_rate=200.0)
    encoder = 2 * np.pi / robot.transmission.increments_per_turn
    actuator, _ = plant.sense("actuator")
    basis, _ = plant.sense("basis")
    assert np.all(np.abs(actuator - plant.actuator_positions()) <= encoder / 2 + 1e-12)
    assert np.all(np.abs(basis - plant.q) <= np.pi / 2 ** 20 + 1e-15)


def test_the_state_cannot_be_changed_from_outside():
    robot, theta = _ariane()
    plant = Plant.commissioned(robot, theta, control_rate=200.0)
    for array in (plant.q, plant.v, plant.a, plant.current, plant.actuator_positions()):
        with pytest.raises(ValueError):
            array[0, 0] = 1.0


def test_bad_inputs_are_refused_by_name():
    robot, theta = _ariane()
    plant = Plant.commissioned(robot, theta, control_rate=200.0, runs=2)
    good = plant.actuator_positions()
    with pytest.raises(DataError, match=r"target: expected one value per actuator, shape "
                                        r"\(3,\) or \(2, 3\), found shape \(4,\)"):
        plant.step(np.zeros(4))
    with pytest.raises(DataError, match=r"target: non-finite value nan at index \(1, 2\)"):
        plant.step(np.where([[False] * 3, [False, False, True]], np.nan, good))
    with pytest.raises(DataError, match=r"velocity: .* found shape \(3, 3\)"):
        plant.step(good, np.zeros((3, 3)))
    with pytest.raises(DataError, match=r"feedforward: non-finite value inf"):
        plant.step(good, None, np.full(3, np.inf))
    plant.step(good)  # nothing was changed by the refused calls
    assert plant.time == pytest.approx(1 / 200.0)
    assert np.all(np.abs(plant.actuator_positions() - good) < 1e-3)
    for rate in (0.0, -100.0, float("nan")):
        with pytest.raises(DataError, match=r"control_rate: expected a rate > 0 Hz, found"):
            Plant.commissioned(robot, theta, control_rate=rate)
        with pytest.raises(DataError, match=r"control_rate: expected a rate > 0 Hz, found"):
            Plant(robot, theta, control_rate=rate, gains=plant.gains, loops=DriveLoops(),
                  noise=SensorNoise(), q0=plant.q[0])
    with pytest.raises(DataError, match=r"q0: joint joint2 at 2 is outside its limits "
                                        r"\[0.122173, 1.64061\]"):
        Plant.commissioned(robot, theta, control_rate=200.0, q0=[0.0, 2.0, 3.0])
    with pytest.raises(DataError, match=r"q0: expected basis coordinates of shape \(3,\) or "
                                        r"\(2, 3\), found shape \(2,\)"):
        Plant(robot, theta, control_rate=200.0, gains=plant.gains, loops=DriveLoops(),
              noise=SensorNoise(), q0=[0.0, 1.0], runs=2)
    with pytest.raises(DataError, match=r"runs: expected a whole number ≥ 1, found 0"):
        Plant.commissioned(robot, theta, control_rate=200.0, runs=0)
    with pytest.raises(DataError, match=r"space: expected 'basis' or 'actuator', found 'motor'"):
        plant.sense("motor")
    with pytest.raises(DataError, match=r"noise.output_ripple: expected a finite number or 3"):
        Plant.commissioned(robot, theta, control_rate=200.0,
                           noise=SensorNoise(output_ripple=[0.1, 0.2]))


def test_commissioning_needs_a_speed_where_the_robot_states_no_limit():
    """A robot without velocity limits gives no peak speed for the velocity filters: the
    error names ``speed``; given, it is used."""
    robot = smooth_coulomb(dynid.random_robot(3, seed=3, friction=True), joint=0.05)
    with pytest.raises(DataError, match=r"speed: the robot states no velocity limit for "
                                        r"actuators \['motor1', 'motor2', 'motor3'\]"):
        Plant.commissioned(robot, robot.prior, control_rate=500.0)
    with pytest.raises(DataError, match=r"speed: expected a finite peak speed > 0"):
        Plant.commissioned(robot, robot.prior, control_rate=500.0, speed=[1.0, -1.0, 1.0])
    plant = Plant.commissioned(robot, robot.prior, control_rate=500.0, speed=3.0)
    assert plant.gains.velocity.shape == (3,)
    with pytest.raises(DataError, match=r"speed: expected the peak speed of each actuator"):
        tune_loops(Dynamics(robot, robot.prior), np.zeros((5, 3)), DriveLoops(), 500.0, 1e-4)


def test_commissioned_gains_follow_the_rule_over_the_configurations_drawn():
    """The same gains as tune_loops over the start and the seeded configurations, with the
    actuators' velocity limits as peak speeds; another seed draws others."""
    robot, theta = _ariane()
    plant = Plant.commissioned(robot, theta, control_rate=200.0, seed=3, states=16)
    lim = robot.limits
    start = (lim.lower + lim.upper) / 2
    drawn = np.random.default_rng(3).uniform(lim.lower, lim.upper, (15, robot.n))
    loops = DriveLoops()
    expected = tune_loops(Dynamics(robot, theta), np.vstack([start, drawn]), loops, 200.0,
                          encoder_steps(robot, loops), speed=robot.actuator_limits.velocity)
    np.testing.assert_array_equal(plant.gains.velocity, expected.velocity)
    np.testing.assert_array_equal(plant.gains.velocity_filter, expected.velocity_filter)
    other = Plant.commissioned(robot, theta, control_rate=200.0, seed=4, states=16)
    assert not np.array_equal(other.gains.velocity, plant.gains.velocity)


def test_unstable_loops_stop_with_the_time_they_diverged():
    """Loops far faster than the lags allow (a = 0.4) oscillate and grow: the step that
    leaves finite numbers raises, naming the time and what to change."""
    robot, theta = _ariane()
    plant = Plant.commissioned(robot, theta, control_rate=200.0, loops=DriveLoops(a=0.4))
    target = plant.actuator_positions() + 10.0
    with pytest.raises(DataError, match=r"the simulated robot diverged between t = .* s \(.*\): "
                                        r"its loops are unstable .* DriveLoops\(a=3.0\)"):
        for _ in range(400):
            plant.step(target)
    assert 0 < plant.time < 2.0
    assert np.all(np.isfinite(plant.q))
