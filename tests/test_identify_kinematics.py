"""Recordings in actuator coordinates: mapped to the basis before or after filtering.

Independent references: the analytic Fourier motion (positions, velocities, accelerations in
closed form), the gear ratios, and a lever's own inverse."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import DATA

import dynid
from dynid import DataError, Processing, Recording
from dynid.hardware import FourierReference
from dynid.identify.kinematics import kinematics_order
from dynid.models.transmissions import Transmission

PERIOD, RATE, HARMONICS = 2.0, 200.0, 3


class Legs(Transmission):
    """A transmission of another kind than gears and levers (here the same gears): the kind
    whose excitation lives in basis coordinates."""


def periodic_motion(robot, periods=3, seed=2):
    """The reference's steady periods sampled at RATE: basis states and times."""
    ref = FourierReference.random(robot, harmonics=HARMONICS, frequency=1 / PERIOD, ramp=0.0,
                                  periods=periods, seed=seed)
    t = np.arange(round(periods * PERIOD * RATE)) / RATE
    return t, ref(t)


def actuator_recording(robot, t, q, v, a, output=None):
    q_m = robot.transmission.actuator_state(q, v, a)[0]
    y = np.ones((len(t), robot.n)) if output is None else output
    y = y + 1e-3 * np.random.default_rng(0).standard_normal(y.shape)  # the periods differ
    return Recording(t, q_m, y, space="actuator", names=robot.actuator_names,
                     units={"positions": robot.actuator_units}, output_kind=robot.output)


@pytest.fixture(scope="module")
def ariane():
    return dynid.load_robot("ariane")


def test_auto_order():
    arm = dynid.load_robot(DATA / "arm2.yaml")
    assert kinematics_order("auto", arm) == "after"
    legs = replace(arm, transmission=Legs(arm.transmission.drives, arm.actuator_names))
    assert kinematics_order("auto", legs) == "before"
    assert kinematics_order("after", legs) == "after"


def test_linear_transmission_either_order_gives_the_same_states():
    """Gears are linear: filtering commutes with them, so both orders agree, and they agree
    with the basis recording processed alike."""
    arm = dynid.load_robot(DATA / "arm2.yaml")
    t, (q, v, a) = periodic_motion(arm)
    rec = actuator_recording(arm, t, q, v, a)
    basis = Recording(t, q, rec.output, names=arm.joint_names, output_kind=arm.output)
    p = Processing(cutoff=5.0, decimate=1, deadzone=None)
    after = replace(p, kinematics="after").apply(rec, arm)
    before = replace(p, kinematics="before").apply(rec, arm)
    direct = p.apply(basis, arm)
    for x in ("positions", "velocities", "accelerations"):
        np.testing.assert_allclose(getattr(before, x), getattr(direct, x), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(getattr(after, x), getattr(direct, x), rtol=1e-9, atol=1e-9)
    assert before.space == after.space == "basis"
    assert before.names == arm.joint_names


def test_band_limited_basis_motion_needs_the_map_first(ariane):
    """A joint-space Fourier motion of the levers: its motor angles have harmonics beyond the
    joints' (the lever is nonlinear). Mapped first, the spectral low-pass at the joints'
    harmonics gives back the analytic states; filtered in motor space first, it does not."""
    t, (q, v, a) = periodic_motion(ariane)
    rec = actuator_recording(ariane, t, q, v, a)
    p = Processing(period=PERIOD, skip_periods=1, harmonics_cutoff=(HARMONICS + 0.5) / PERIOD)
    one = slice(0, round(PERIOD * RATE))
    errors = {}
    for order in ("before", "after"):
        out = replace(p, kinematics=order).apply(rec, ariane)
        errors[order] = [np.abs(getattr(out, x) - truth[one]).max() / np.abs(truth).max()
                         for x, truth in (("positions", q), ("velocities", v),
                                          ("accelerations", a))]
    assert max(errors["before"]) < 1e-9
    assert errors["after"][0] > 1e-6
    assert min(errors["after"][1:]) > 5e-4  # the derivatives suffer most


def test_unreachable_sample_names_its_time(ariane):
    t, (q, v, a) = periodic_motion(ariane, periods=1)
    rec = actuator_recording(ariane, t, q, v, a)
    q_m = rec.positions.copy()
    q_m[57, 1] = 1e6                                    # far beyond the lever's stroke
    bad = rec.with_signals(positions=q_m)
    for order in ("before", "after"):
        p = Processing(cutoff=None, decimate=1, deadzone=None, kinematics=order)
        with pytest.raises(DataError, match=rf"at t = {t[57]:.6g} s \(.*motor2 = 1e\+06.*\) "
                                            r"map to no basis position of robot ariane"):
            p.apply(bad, ariane)


def test_bad_setting():
    with pytest.raises(DataError, match=r"kinematics: expected one of 'auto', 'before', "
                                        r"'after', found 'first'"):
        Processing(kinematics="first")


def test_setting_round_trips_through_a_result_file():
    p = Processing(period=PERIOD, kinematics="before")
    assert Processing.from_dict(p.to_dict()) == p
