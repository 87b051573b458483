"""Stribeck friction identified from the closed-loop simulator (:func:`dynid.hardware.
simulate`: cascaded drive loops, quantized encoders, output noise): the loose version of the
friction study of ``benchmarks/methods.py`` on a small arm and a few seeds."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dynid.demo import true_parameters
from dynid.errors import DynidWarning
from dynid.hardware import FourierReference, SensorNoise, simulate, smooth_coulomb
from dynid.identify import WLS, IdentificationData, Processing
from dynid.identify.friction import identify_friction
from dynid.models import random_robot
from dynid.models.friction import with_friction

TRUE_V = {"joint1": 0.06, "joint2": 0.1, "joint3": 0.08}  # rad/s


@pytest.fixture(scope="module")
def runs():
    """A random 3-joint arm with Stribeck friction on every joint (static 1.6 times Coulomb,
    sign smoothed over 0.01 rad/s) and three closed-loop runs of 6 s at 500 Hz."""
    robot = smooth_coulomb(with_friction(random_robot(3, seed=2, friction=True), "stribeck",
                                         velocities=TRUE_V), joint=0.01)
    theta = true_parameters(robot, np.random.default_rng(0))
    names = robot.parameters.names
    for owner in TRUE_V:
        theta[names.index(f"{owner}.fs")] = 1.6 * theta[names.index(f"{owner}.fc")]
    ref = FourierReference.random(robot, harmonics=4, frequency=0.3, seed=1)
    sim = simulate(robot, theta, ref, 6.0, control_rate=500, runs=3, seed=3,
                   noise=SensorNoise(output_std=0.01, output_step=0.001))
    return robot, sim.measured


def test_closed_loop_runs_give_the_stribeck_velocities(runs):
    robot, measured = runs
    start = with_friction(robot, "stribeck", velocities=0.3)
    processing = Processing(deadzone=None)
    for rec in measured:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DynidWarning)  # the closed loop colours the residual
            data = IdentificationData(start, rec, processing=processing)
            processing = data.processing
            fit = identify_friction(data, WLS())
        assert fit.converged
        for owner, v in TRUE_V.items():
            error = fit.velocities[owner] / v - 1
            z = (fit.velocities[owner] - v) / fit.sigma[owner]
            assert abs(error) < 0.3, (owner, error)   # measured: 14, 3, 13 %
            assert abs(z) < 3, (owner, z)             # measured: |z| ≤ 1.5


def test_a_dead_zone_over_the_stribeck_speeds_warns(runs):
    robot, measured = runs
    data = IdentificationData(with_friction(robot, "stribeck", velocities=0.3), measured[0],
                              processing=Processing(deadzone=[0.05, 0.0, 0.05]))
    with pytest.warns(DynidWarning, match=r"friction of joint1: the dead zone 0.05 leaves out "
                                          r"the rows below it.*Processing\(deadzone=None\)"):
        identify_friction(data, WLS())
