"""The capture's schedule: quintic ramps (closed form) and the limit checks before motion."""

import numpy as np
import pytest

from dynid.errors import TrajectoryError
from dynid.hardware.motion import plan, quintic
from dynid.hardware.reference import FourierReference
from dynid.models import load_robot


def test_quintic_meets_its_boundary_conditions_and_is_consistent():
    t = np.linspace(0.0, 2.0, 4001)
    start, end = np.array([0.0, 1.0]), np.array([1.0, -1.0])
    v0, a0 = np.array([0.5, 0.0]), np.array([0.1, 0.0])
    q, v, a = quintic(start, end, 2.0, t, v0=v0, a0=a0)
    assert np.allclose(q[0], start) and np.allclose(v[0], v0) and np.allclose(a[0], a0)
    assert np.allclose(q[-1], end) and np.allclose(v[-1], 0, atol=1e-12)
    assert np.allclose(a[-1], 0, atol=1e-12)
    # Derivatives against central differences of the positions (error O(h²)).
    h = t[1] - t[0]
    assert np.max(np.abs((q[2:] - q[:-2]) / (2 * h) - v[1:-1])) < 1e-5
    assert np.max(np.abs((v[2:] - v[:-2]) / (2 * h) - a[1:-1])) < 1e-4
    # Rest to rest: the peak speed of the quintic is 15/8 Δ/T (its closed form).
    q, v, _ = quintic(np.zeros(1), np.ones(1), 2.0, t)
    assert np.max(v) == pytest.approx(15 / 8 / 2.0, rel=1e-6)


@pytest.fixture(scope="module")
def panda_reference():
    robot = load_robot("panda")
    return robot, FourierReference.random(robot, seed=3)


def _actuators(robot, q):
    zero = np.zeros((1, robot.n))
    return robot.transmission.actuator_state(np.atleast_2d(q), zero, zero)[0][0]


def test_plan_ramps_from_the_present_position_and_records_the_trajectory(panda_reference):
    robot, ref = panda_reference
    rate = 200.0
    start = _actuators(robot, ref.offsets + 0.2)
    s = plan(robot, ref, rate, start)
    assert np.allclose(s.targets[0], start)
    # The recorded cycles are the trajectory sampled at the rate, from its time 0.
    motion = ref.evaluate(np.arange(s.recorded.stop - s.recorded.start) / rate)
    q_m = robot.transmission.actuator_state(*motion)[0]
    assert np.allclose(s.targets[s.recorded], q_m, rtol=1e-12, atol=1e-12)
    assert s.ramp_in >= 1.0
    # The ramp out ends at rest: its last steps do not move.
    assert np.allclose(s.targets[-1], s.targets[-2], atol=1e-9)


def test_plan_refuses_before_anything_moves(panda_reference):
    robot, ref = panda_reference
    lim = robot.limits
    outside = np.where(np.isfinite(lim.upper), lim.upper + 0.1, 10.0)
    with pytest.raises(TrajectoryError, match="present position violates"):
        plan(robot, ref, 200.0, _actuators(robot, outside))
    fast = ref.scaled(5.0)
    with pytest.raises(TrajectoryError, match="the trajectory violates"):
        plan(robot, fast, 200.0, _actuators(robot, ref.offsets))
    with pytest.raises(TrajectoryError, match="rate"):
        plan(robot, ref, 0.0, _actuators(robot, ref.offsets))
