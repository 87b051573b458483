"""Units per column, prismatic joints included, and columns matched to a robot's joints by name
in every reader."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dynid
from dynid.identify import Flat, Recording, read_csv, read_npz, save_npz
from dynid.models import random_states, robot_from_mapping

SLIDE = {"kinematics": {"modified_dh": [{"joint": "turn"},
                                       {"joint": "slide", "type": "prismatic"}]},
         "links": {"link1": {"mass": 1.0, "com": [0.1, 0, 0]},
                   "link2": {"mass": 0.5, "com": [0, 0, 0.1]}}}


@pytest.fixture(scope="module")
def psm():
    return dynid.load_robot("dvrk_psm")


def test_the_dvrk_insertion_motor_output_is_a_force(psm):
    """The PSM's motor 3 moves the insertion directly (unit gear, coupling row e3), so its
    motor-side effort is the insertion's generalized force, a force in N: the motor-torque
    model's row equals the joint-torque model's row of the prismatic joint at any state, and
    the unit of each output times its coordinate's velocity unit is a power (N·m/s or
    N·m·rad/s)."""
    rng = np.random.default_rng(3)
    q, v, a = random_states(psm, 20, rng)
    theta = psm.prior + 0.1 * rng.standard_normal(len(psm.parameters))
    motor = dynid.Regressor(psm).predict(q, v, a, theta)
    joint = dynid.Regressor(psm.with_output("joint_torque")).predict(q, v, a, theta)
    np.testing.assert_allclose(motor[:, 2], joint[:, 2], rtol=1e-10,
                               atol=1e-10 * np.abs(joint[:, 2]).max())
    assert psm.basis_units[2] == "m" and psm.actuator_units[2] == "m"
    assert psm.output_units == ("N·m", "N·m", "N", "N·m", "N·m", "N·m", "N·m")
    assert psm.with_output("joint_torque").output_units == psm.output_units
    for unit, effort in zip(psm.actuator_units, psm.output_units, strict=True):
        assert (unit, effort) in (("rad", "N·m"), ("m", "N"))


def test_actuators_behind_a_gear_are_rotary():
    """A prismatic joint driven through a gear (motor rad per joint m) has a rotary motor: its
    motor torque is in N·m; driven directly, its actuator is the length itself."""
    geared = robot_from_mapping({**SLIDE, "joints": {
        "turn": {"actuator": {"ratio": 10}}, "slide": {"actuator": {"ratio": 500}}}})
    assert geared.actuator_units == ("rad", "rad")
    assert geared.with_output("motor_torque").output_units == ("N·m", "N·m")
    direct = robot_from_mapping(SLIDE)
    assert direct.actuator_units == ("rad", "m")
    assert direct.with_output("motor_torque").output_units == ("N·m", "N")


@pytest.mark.parametrize(("unit", "quantity", "factor"), [
    ("cm", "position", 1e-2), ("um", "position", 1e-6), ("µm", "position", 1e-6),
    ("cm/s", "velocity", 1e-2), ("µm/s²", "acceleration", 1e-6), ("N·mm", "output", 1e-3),
    ("Nmm", "output", 1e-3), ("mN", "output", 1e-3), ("kN", "output", 1e3)])
def test_units_convert_to_si(unit, quantity, factor):
    from dynid.identify import units as U

    assert U.convert_factor(unit, quantity, "x") == pytest.approx(factor, rel=1e-15)


def test_the_default_output_unit_follows_its_coordinate():
    """Without an output unit, a column on a length is a force (N) and one on an angle a
    torque (N·m); a current is in A."""
    t = np.arange(20) * 0.01
    q = np.column_stack([np.sin(t), 10 * t])
    rec = Recording(t, q, q, units={"positions": ["deg", "mm"]})
    assert rec.units["output"] == ("N·m", "N")
    np.testing.assert_array_equal(rec.output, q)
    assert Recording(t, q, q, output_kind="current").units["output"] == ("A", "A")


def _psm_file(psm, folder, order=None):
    t = np.arange(60) * 0.01
    q = 0.1 + 0.05 * np.sin(np.outer(t, np.arange(1, psm.n + 1)))
    y = np.cos(np.outer(t, np.arange(1, psm.n + 1)))
    order = list(range(psm.n)) if order is None else order
    names = [psm.joint_names[j] for j in order]
    path = folder / "psm.csv"
    np.savetxt(path, np.column_stack([t, q[:, order], y[:, order]]), delimiter=",",
               comments="", header=",".join(["t", *names, *(f"f_{x}" for x in names)]))
    return path, q, y, {"time": "t", "positions": names, "output": [f"f_{x}" for x in names]}


def test_the_robot_gives_the_default_units_and_checks_them(psm, tmp_path):
    joint = psm.with_output("joint_torque")
    path, q, _, cols = _psm_file(psm, tmp_path)
    rec = read_csv(path, robot=joint, **cols)
    assert rec.units["positions"] == ("rad", "rad", "m", "rad", "rad", "rad", "rad")
    assert rec.units["output"] == ("N·m", "N·m", "N", "N·m", "N·m", "N·m", "N·m")
    # In actuator space, with the motor-torque model: motor 3 is the insertion, a length.
    motors = read_csv(path, robot=psm, space="actuator", **cols)
    assert motors.units["positions"][2] == "m" and motors.units["output"][2] == "N"
    mm = read_csv(path, robot=joint, units={"positions": ["deg", "deg", "mm", "deg", "deg",
                                                          "deg", "deg"]}, **cols)
    np.testing.assert_allclose(mm.positions[:, 2], q[:, 2] / 1000, rtol=1e-12)
    np.testing.assert_allclose(mm.positions[:, 0], np.radians(q[:, 0]), rtol=1e-12)
    assert mm.units["output"][2] == "N"
    with pytest.raises(dynid.DataError, match=r"psm.csv: output column 2 \(outer_insertion\) "
                       r"is in N·m, a torque, but outer_insertion of robot dvrk_psm is a force "
                       r"\(N\); .*units=\{'output': \['N·m', 'N·m', 'N', 'N·m'"):
        read_csv(path, robot=joint, units={"output": "N·m"}, **cols)
    with pytest.raises(dynid.DataError, match=r"psm.csv: positions column 2 \(outer_insertion\) "
                       r"is in rad, an angle \(revolute\), but outer_insertion of robot dvrk_psm "
                       r"is a length \(prismatic\) \(m\)"):
        read_csv(path, robot=joint, units={"positions": "rad"}, **cols)
    with pytest.raises(dynid.DataError, match=r"psm.csv: positions column 0 \(outer_yaw\) is "
                       r"in m, a length"):
        read_csv(path, robot=joint, units={"positions": "mm"}, **cols)


def test_names_match_the_joints_in_every_reader(psm, tmp_path):
    """Columns named after the joints in another order are put in the robot's order by the
    table reader with a header, with several files, and by the NPZ reader."""
    joint = psm.with_output("joint_torque")
    order = [3, 0, 6, 2, 1, 5, 4]
    path, q, y, cols = _psm_file(psm, tmp_path, order)
    rec = read_csv(path, robot=joint, **cols)
    assert rec.names == psm.joint_names
    np.testing.assert_allclose(rec.positions, q, rtol=1e-12)
    np.testing.assert_allclose(rec.output, y, rtol=1e-12)
    assert rec.units["positions"][2] == "m"
    names = [psm.joint_names[j] for j in order]
    qfile, yfile = tmp_path / "q.csv", tmp_path / "y.csv"
    np.savetxt(qfile, q[:, order], delimiter=",", header=",".join(names), comments="")
    np.savetxt(yfile, y[:, order], delimiter=",", header=",".join(names), comments="")
    split = read_csv({"positions": qfile, "output": yfile}, rate=100.0, robot=joint)
    assert split.names == psm.joint_names
    np.testing.assert_allclose(split.positions, q, rtol=1e-12)
    np.testing.assert_allclose(split.output, y, rtol=1e-12)
    flat = tmp_path / "flat.txt"
    np.savetxt(flat, q[:, order].ravel())
    np.savetxt(tmp_path / "yflat.txt", y[:, order].ravel())
    by_names = read_csv({"positions": flat, "output": tmp_path / "yflat.txt"}, rate=100.0,
                        positions=Flat(7), output=Flat(7), names=names, robot=joint)
    np.testing.assert_allclose(by_names.positions, q, rtol=1e-12)
    as_is = read_csv(path, units={"positions": ["m" if j == 2 else "rad" for j in order]},
                     **cols)  # no robot: the file's order, the file's units
    assert as_is.names == tuple(names) and as_is.units["output"][3] == "N"
    back = read_npz(save_npz(as_is, tmp_path / "psm.npz"), robot=joint)
    assert back.names == psm.joint_names
    np.testing.assert_allclose(back.output, y, rtol=1e-12)
    headerless = tmp_path / "bare.csv"
    np.savetxt(headerless, np.column_stack([q[:, order], y[:, order]]), delimiter=",")
    bare = read_csv(headerless, rate=100.0, positions=list(range(7)),
                    output=list(range(7, 14)), names=names, robot=joint)
    np.testing.assert_allclose(bare.positions, q, rtol=1e-12)
    with pytest.raises(dynid.DataError, match=r"bare.csv: names: .* 'jaws' is not one of its "
                                              r"joints \(did you mean 'jaw'\?\)"):
        read_csv(headerless, rate=100.0, positions=list(range(7)), output=list(range(7, 14)),
                 names=[*names[:2], "jaws", *names[3:]], robot=joint)
    assert math.isclose(bare.rate, 100.0)
