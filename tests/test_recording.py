"""Recordings: validation of every bad input, units, saturation, CSV and NPZ readers."""

from __future__ import annotations

import numpy as np
import pytest

import dynid
from dynid.identify import Recording, read_csv, read_npz, save_npz
from dynid.models import random_robot, random_states


def _signals(N=50, n=3, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(N) * 0.01
    return t, rng.standard_normal((N, n)), rng.standard_normal((N, n))


def test_units_are_converted_to_si():
    t, q, y = _signals()
    rec = Recording(t * 1e3, np.degrees(q), y * 1e3, velocities=np.degrees(q),
                    units={"time": "ms", "positions": "deg", "velocities": "deg/s",
                           "output": "mA"})
    np.testing.assert_allclose(rec.time, t)
    np.testing.assert_allclose(rec.positions, q)
    np.testing.assert_allclose(rec.velocities, q)
    np.testing.assert_allclose(rec.output, y)
    assert rec.output_kind == "current"
    assert rec.units["positions"] == ("rad",) * 3 and rec.units["output"] == ("A",) * 3
    assert rec.rate == pytest.approx(100.0) and rec.is_uniform()


def test_per_column_units_and_prismatic_joints():
    t, q, y = _signals()
    rec = Recording(t, q * [1, 1000, 1], y, units={"positions": ["rad", "mm", "rad"],
                                                   "output": ["N·m", "N", "N·m"]})
    np.testing.assert_allclose(rec.positions, q)
    assert rec.units["positions"] == ("rad", "m", "rad")


@pytest.mark.parametrize("signal", ["time", "positions", "output", "velocities"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_values_are_rejected(signal, bad):
    t, q, y = _signals()
    arrays = {"time": t, "positions": q, "output": y, "velocities": q.copy()}
    arrays[signal] = arrays[signal].copy()
    arrays[signal][7] = bad
    with pytest.raises(dynid.DataError, match=rf"{signal}: non-finite value .* at sample 7"):
        Recording(arrays["time"], arrays["positions"], arrays["output"],
                  velocities=arrays["velocities"])


def test_time_must_increase_strictly():
    t, q, y = _signals()
    back = t.copy()
    back[10] = back[8]
    with pytest.raises(dynid.DataError, match=r"time: not increasing at sample 10"):
        Recording(back, q, y)
    dup = t.copy()
    dup[10] = dup[9]
    with pytest.raises(dynid.DataError, match=r"time: duplicated value .* samples 9 and 10"):
        Recording(dup, q, y)


@pytest.mark.parametrize(("scale", "unit"), [(1e-9, "s"), (1e6, "s"), (1.0, "ns")])
def test_times_in_the_wrong_unit_are_rejected(scale, unit):
    t, q, y = _signals()
    with pytest.raises(dynid.DataError, match=r"time: the samples are .* s apart \(median\), a "
                       r"rate of .* Hz; expected 1e-06 s to 1000 s. Are the times in another "
                       r"unit\? Give it: units=\{'time': 'ms'\}"):
        Recording(t * scale, q, y, units={"time": unit})


def test_values_beyond_any_plausible_magnitude_are_rejected():
    t, q, y = _signals()
    y[5, 1] = 1e300
    with pytest.raises(dynid.DataError, match=r"output: value 1e\+300 at sample 5, column 1 "
                       r"\(joint2\) is beyond ±1e\+12 in SI units \(1 such values\)"):
        Recording(t, q, y)
    with pytest.raises(dynid.DataError, match=r"velocities: value 2e\+13 at sample 0"):
        Recording(t, q, y / 1e300, velocities=np.full_like(q, 2e16), units={
            "positions": "mm", "velocities": "mm/s"})
    Recording(t, q, y / 1e300 * 1e15, units={"output": "mA"})  # 1e12 A: the largest accepted


def test_mismatched_shapes_are_rejected():
    t, q, y = _signals()
    with pytest.raises(dynid.DataError, match=r"positions: expected an array of shape \(50, 3\)"):
        Recording(t, q[:-1], y, velocities=q[:-1])
    with pytest.raises(dynid.DataError, match="output: expected 3 channels"):
        Recording(t, q, y[:, :2])
    with pytest.raises(dynid.DataError, match=r"output: expected an array of shape \(50, N\)"):
        Recording(t, q, y[:-2])
    with pytest.raises(dynid.DataError, match=r"velocities: expected an array of shape"):
        Recording(t, q, y, velocities=q[:, :2])
    with pytest.raises(dynid.DataError, match="names: expected 3 unique names"):
        Recording(t, q, y, names=("a", "a", "b"))


def test_mismatched_units_are_rejected():
    t, q, y = _signals()
    with pytest.raises(dynid.DataError, match=r"position in deg but velocities in m/s"):
        Recording(t, q, y, velocities=q, units={"positions": "deg", "velocities": "m/s"})
    with pytest.raises(dynid.DataError, match=r"output_kind is 'current', but the output's "
                                              r"unit is N·m, a torque"):
        Recording(t, q, y, output_kind="current", units={"output": "N·m"})
    with pytest.raises(dynid.DataError, match=r"unknown position unit 'furlong'"):
        Recording(t, q, y, units={"positions": "furlong"})
    with pytest.raises(dynid.DataError, match=r"units of positions: expected one unit or 3"):
        Recording(t, q, y, units={"positions": ["rad", "rad"]})
    with pytest.raises(dynid.DataError, match=r"units: unknown signals \['torque'\]"):
        Recording(t, q, y, units={"torque": "N·m"})


def test_too_few_samples_are_rejected():
    t, q, y = _signals(N=5)
    with pytest.raises(dynid.DataError, match="too few samples, found 5, need at least 10"):
        Recording(t, q, y)


def test_saturated_output_is_flagged_with_a_warning():
    t, q, y = _signals(N=200)
    y = np.tanh(y)  # within ±1
    y[40:60, 1] = 2.5
    with pytest.warns(dynid.DynidWarning, match=r"saturated output on joint2 \(20 samples"):
        rec = Recording(t, q, y, output_limits=[10, 2.5, 10])
    assert rec.saturated[:, 1].sum() == 20 and not rec.saturated[:, [0, 2]].any()
    # Without limits, a flat run at a channel's extreme is recognised as clipping.
    with pytest.warns(dynid.DynidWarning, match="joint2"):
        rec = Recording(t, q, y)
    assert rec.saturated[:, 1].sum() == 20


def test_select_and_skip_keep_units_and_names():
    t, q, y = _signals()
    rec = Recording(t, q * [1000, 1, 1], y, units={"positions": ["mm", "rad", "rad"]},
                    names=("x", "b", "c"))
    part = rec.skip(10)
    assert part.n_samples == 40 and part.names == ("x", "b", "c")
    assert part.units["positions"] == ("m", "rad", "rad")
    np.testing.assert_allclose(part.positions, q[10:])
    with pytest.raises(dynid.DataError, match="skip: expected"):
        rec.skip(45)


def test_csv_reader_maps_columns_and_units(tmp_path):
    t, q, y = _signals(N=30, n=2)
    path = tmp_path / "run.csv"
    rows = ["stamp,a1,a2,cur1,cur2,extra"] + [
        f"{1000 * tk},{np.degrees(q1)},{np.degrees(q2)},{1e3 * y1},{1e3 * y2},0"
        for tk, (q1, q2), (y1, y2) in zip(t, q, y, strict=True)]
    path.write_text("\n".join(rows))
    rec = read_csv(path, time="stamp", positions=["a1", "a2"], output=["cur1", "cur2"],
                   units={"time": "ms", "positions": "deg", "output": "mA"})
    np.testing.assert_allclose(rec.positions, q, rtol=1e-12)
    np.testing.assert_allclose(rec.output, y, rtol=1e-12)
    assert rec.output_kind == "current" and rec.names == ("a1", "a2")
    with pytest.raises(dynid.DataError, match=r"no column 'cur3'; did you mean 'cur2', 'cur1'"):
        read_csv(path, time="stamp", positions=["a1", "a2"], output=["cur1", "cur3"])
    bad = tmp_path / "bad.csv"
    bad.write_text("t,q,y\n0,1,2\n0.1,x,3\n")
    with pytest.raises(dynid.DataError, match=r"row 3, column 'q': 'x' is not a number"):
        read_csv(bad, time="t", positions=["q"], output=["y"])
    bad.write_text("t,q,y\n0,1,2\n0.1,3\n")
    with pytest.raises(dynid.DataError, match=r"row 3 has 2 fields, the header has 3"):
        read_csv(bad, time="t", positions=["q"], output=["y"])
    bad.write_text("t,q,y\n")
    with pytest.raises(dynid.DataError, match=r"expected a header row and samples, found 1"):
        read_csv(bad, time="t", positions=["q"], output=["y"])


def test_csv_reader_reads_quoted_numbers_and_skips_text_columns(tmp_path):
    t, q, y = _signals(N=20, n=1)
    path = tmp_path / "run.csv"
    path.write_text("t,state,q,y\n" + "\n".join(
        f'{tk!r},{"moving" if k % 2 else "ok"},"{qk!r}", {yk!r} ' for k, (tk, qk, yk) in
        enumerate(zip(t.tolist(), q[:, 0].tolist(), y[:, 0].tolist(), strict=True))))
    rec = read_csv(path, time="t", positions=["q"], output=["y"])
    np.testing.assert_array_equal(rec.time, t)
    np.testing.assert_array_equal(rec.positions, q)
    np.testing.assert_array_equal(rec.output, y)
    numeric = tmp_path / "numeric.csv"
    numeric.write_text(path.read_text().replace("moving", "1").replace("ok", "0"))
    rec = read_csv(numeric, time="t", positions=["q"], output=["y"])
    np.testing.assert_array_equal(rec.positions, q)


def test_encoder_increments_need_the_robot(tmp_path):
    robot = dynid.models.robot_from_mapping({
        "kinematics": {"modified_dh": [{"joint": "j1", "d": 0, "r": 0, "alpha": 0,
                                        "theta": 0}]},
        "links": {"link1": {"mass": 1.0, "com": [0.1, 0, 0]}},
        "joints": {"j1": {"actuator": {"ratio": 50, "torque_constant": 0.1,
                                       "encoder": {"increments_per_turn": 4096,
                                                   "zero": 100}}}}})
    t = np.arange(20) * 0.01
    counts = 100 + 4096 * np.linspace(0, 2, 20)
    path = tmp_path / "inc.csv"
    path.write_text("t,m1,i1\n" + "\n".join(f"{a},{b},0.1" for a, b in zip(t, counts,
                                                                            strict=True)))
    kwargs = {"time": "t", "positions": ["m1"], "output": ["i1"],
              "units": {"positions": "inc", "output": "A"}, "space": "actuator"}
    with pytest.raises(dynid.DataError, match="encoder increments need the robot"):
        read_csv(path, **kwargs)
    rec = read_csv(path, robot=robot, **kwargs)
    np.testing.assert_allclose(rec.positions[:, 0], 2 * np.pi * np.linspace(0, 2, 20))
    robot.transmission.increments_per_turn = robot.transmission.zero_increments = None
    with pytest.raises(dynid.ModelError, match=r"no encoder resolution; give actuator\.encoder"):
        read_csv(path, robot=robot, **kwargs)


def test_npz_round_trip_and_foreign_keys(tmp_path):
    t, q, y = _signals()
    rec = Recording(t, q, y, velocities=2 * q, output_limits=[5, 5, 5], names=("a", "b", "c"))
    back = read_npz(save_npz(rec, tmp_path / "rec"))
    for key in ("time", "positions", "output", "velocities", "output_limits"):
        np.testing.assert_array_equal(getattr(back, key), getattr(rec, key))
    assert back.accelerations is None and back.names == rec.names
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, times=t, positions=q, torques=y)
    rec2 = read_npz(foreign, keys={"time": "times", "output": "torques"})
    np.testing.assert_array_equal(rec2.output, y)
    with pytest.raises(dynid.DataError, match=r"no column 'torque'; did you mean 'torques'"):
        read_npz(foreign, keys={"time": "times", "output": "torque"})
    with pytest.raises(dynid.DataError, match="does not exist"):
        read_npz(tmp_path / "missing.npz")


# Columns matched to the robot's joints by name ---------------------------------------------
ARM = """
name: arm3
kinematics:
  modified_dh:
    - {joint: shoulder, d: 0, r: 0, alpha: 0, theta: 0}
    - {joint: elbow, d: 0.5, r: 0, alpha: 0, theta: 0}
    - {joint: wrist, d: 0.4, r: 0, alpha: 0, theta: 0}
links:
  link1: {mass: 2.0, com: [0.25, 0, 0], inertia: [0.01, 0, 0, 0.05, 0, 0.05]}
  link2: {mass: 1.0, com: [0.2, 0, 0], inertia: [0.01, 0, 0, 0.03, 0, 0.03]}
  link3: {mass: 0.5, com: [0.1, 0, 0], inertia: [0.01, 0, 0, 0.01, 0, 0.01]}
joints:
  shoulder: {actuator: {ratio: 50, torque_constant: 0.1, name: m_shoulder}}
  elbow: {actuator: {ratio: 50, torque_constant: 0.1, name: m_elbow}}
  wrist: {actuator: {ratio: 20, torque_constant: 0.05, name: m_wrist}}
"""
JOINTS = ("shoulder", "elbow", "wrist")


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    path = tmp_path_factory.mktemp("robot") / "arm3.yaml"
    path.write_text(ARM)
    return dynid.load_robot(path)


def test_columns_named_after_joints_are_put_in_the_robot_order(arm):
    t = np.arange(50) * 0.01
    base = np.sin(t) + 2
    q = np.column_stack([3 * base, np.degrees(base), 2 * base])  # wrist, shoulder (deg), elbow
    rec = Recording(t, q, 10 * q, velocities=2 * q, names=("wrist", "shoulder", "elbow"),
                    units={"positions": ["rad", "deg", "rad"], "velocities": ["rad/s", "deg/s",
                                                                              "rad/s"]},
                    output_limits=[3e4, 1e4, 2e4])
    out = rec.matched(arm)
    assert out.names == JOINTS
    np.testing.assert_allclose(out.positions, base[:, None] * [1, 2, 3])
    np.testing.assert_allclose(out.velocities, 2 * base[:, None] * [1, 2, 3])
    np.testing.assert_allclose(out.output, 10 * q[:, [1, 2, 0]])
    np.testing.assert_allclose(out.output_limits, [1e4, 2e4, 3e4])
    assert out.units["positions"] == ("rad",) * 3
    in_order = out.matched(arm)
    assert in_order is out
    # IdentificationData and validate check through check_recording: it refuses another
    # order unless asked to reorder, and then returns the reordered copy.
    from dynid.identify.data import check_recording

    with pytest.raises(dynid.DataError, match=r"columns wrist, shoulder, elbow are the joints of "
                       r"robot arm3 in another order .*recording.matched\(robot\)"):
        check_recording(arm, rec)
    np.testing.assert_array_equal(check_recording(arm, rec, reorder=True).positions,
                                  out.positions)


def test_identification_and_validation_match_columns_by_name():
    """A recording whose columns name the robot's joints in another order identifies and
    validates exactly as the one in the robot's order."""
    robot = random_robot(3, seed=2, friction=True)
    rng = np.random.default_rng(0)
    q, v, a = random_states(robot, 200, rng)
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior) + 0.01 * rng.standard_normal(
        (200, 3))
    t = np.arange(200) * 0.01
    names = robot.joint_names
    ordered = Recording(t, q, y, velocities=v, accelerations=a, names=names)
    order = [2, 0, 1]
    shuffled = Recording(t, q[:, order], y[:, order], velocities=v[:, order],
                         accelerations=a[:, order], names=tuple(names[k] for k in order))
    one = dynid.OLS().fit(dynid.IdentificationData(robot, ordered)).result_
    two = dynid.OLS().fit(dynid.IdentificationData(robot, shuffled)).result_
    np.testing.assert_allclose(two.base_params, one.base_params, rtol=1e-9)
    np.testing.assert_allclose(dynid.validate(robot, one, shuffled).rmse,
                               dynid.validate(robot, one, ordered).rmse, rtol=1e-9)


def test_default_names_and_labels_are_taken_in_order(arm):
    t, q, y = _signals()
    assert Recording(t, q, y).matched(arm).names == ("joint1", "joint2", "joint3")
    labelled = Recording(t, q, y, names=("q1", "q2", "q3"))
    assert labelled.matched(arm) is labelled
    motors = Recording(t, q, y, names=("m_wrist", "m_shoulder", "m_elbow"), space="actuator")
    assert motors.matched(arm).names == ("m_shoulder", "m_elbow", "m_wrist")
    # In actuator space, columns may also be named after the joints the actuators drive.
    by_joint = Recording(t, q, y, names=("elbow", "wrist", "shoulder"), space="actuator")
    np.testing.assert_array_equal(by_joint.matched(arm).positions, q[:, [2, 0, 1]])


@pytest.mark.parametrize(("names", "message"), [
    (("shoulder", "elbw", "wrist"), r"'elbw' is not one of its joints \(did you mean 'elbow'\?\)"
                                    r"; no column for elbow"),
    (("shoulder", "elbow"), r"no column for wrist"),
    (("shoulder", "elbow", "wrist", "tool"), r"'tool' is not one of its joints"),
])
def test_unknown_or_missing_joint_names_are_refused(arm, names, message):
    t, q, y = _signals(n=len(names))
    rec = Recording(t, q, y, names=names)
    with pytest.raises(dynid.DataError, match=r"names: the columns are named after the joints "
                       r"of robot arm3 \(shoulder, elbow, wrist\), but " + message):
        rec.matched(arm)


def test_repeated_or_misplaced_names_are_refused(arm):
    t, q, y = _signals()
    with pytest.raises(dynid.DataError, match=r"found 'elbow' at columns \[0, 2\]; each "
                                              r"coordinate needs exactly one column"):
        Recording(t, q, y, names=("elbow", "wrist", "elbow"))
    with pytest.raises(dynid.DataError, match=r"names: expected a list of 3 names \(text\)"):
        Recording(t, q, y, names="abc")
    rec = Recording(t, q, y, names=("m_shoulder", "m_elbow", "m_wrist"))
    with pytest.raises(dynid.DataError, match=r"m_shoulder, m_elbow, m_wrist are actuators of "
                       r"robot arm3, but the recording holds basis coordinates .*--space "
                       r"actuator"):
        rec.matched(arm)


def test_readers_match_columns_by_name_with_the_robot(arm, tmp_path):
    t, q, y = _signals(n=3)
    order = [2, 0, 1]  # the file's columns: wrist, shoulder, elbow
    path = tmp_path / "run.csv"
    header = "t," + ",".join(JOINTS[j] for j in order) + ",y_w,y_s,y_e"
    rows = np.column_stack([t, q[:, order], y[:, order]])
    np.savetxt(path, rows, delimiter=",", header=header, comments="")
    kwargs = {"time": "t", "positions": [JOINTS[j] for j in order],
              "output": ["y_w", "y_s", "y_e"]}
    rec = read_csv(path, robot=arm, **kwargs)
    assert rec.names == JOINTS
    np.testing.assert_allclose(rec.positions, q, rtol=1e-12)
    np.testing.assert_allclose(rec.output, y, rtol=1e-12)
    assert read_csv(path, **kwargs).names == tuple(JOINTS[j] for j in order)  # no robot: as is
    npz = save_npz(read_csv(path, **kwargs), tmp_path / "run.npz")
    back = read_npz(npz, robot=arm)
    assert back.names == JOINTS
    np.testing.assert_allclose(back.positions, q, rtol=1e-12)
    with pytest.raises(dynid.DataError, match=r"run.csv: names: .* 'elbw' is not one of its "
                                              r"joints"):
        read_csv(path, robot=arm, names=("wrist", "shoulder", "elbw"), **kwargs)
    dup = tmp_path / "dup.csv"
    dup.write_text("t,q,q\n" + "\n".join(f"{k},1,2" for k in range(12)))
    with pytest.raises(dynid.DataError, match=r"column 'q' \(positions\) appears 2 times in the "
                                              r"header \(fields \[2, 3\]\)"):
        read_csv(dup, time="t", positions=["q"], output=["q"])


def test_identification_is_the_same_with_columns_in_another_order(arm, tmp_path):
    from dynid.hardware import FourierReference
    from dynid.identify import OLS, IdentificationData, Processing

    ref = FourierReference.random(arm, harmonics=3, frequency=0.5, ramp=0.0, seed=3)
    t = np.arange(0.0, 4.0, 0.01)
    q, v, a = ref(t)
    y = dynid.Regressor(arm).predict(q, v, a, arm.prior)
    y += 1e-3 * np.random.default_rng(0).standard_normal(y.shape)
    order = [1, 2, 0]
    shuffled = Recording(t, q[:, order], y[:, order], velocities=v[:, order],
                         accelerations=a[:, order], names=tuple(JOINTS[j] for j in order),
                         output_kind="joint_torque")
    back = read_npz(save_npz(shuffled, tmp_path / "s.npz"), robot=arm)
    processing = Processing(cutoff=None, decimate=1)
    want = OLS().fit(IdentificationData(arm, Recording(t, q, y, velocities=v, accelerations=a),
                                        processing=processing)).base_params_
    got = OLS().fit(IdentificationData(arm, back, processing=processing)).base_params_
    np.testing.assert_allclose(got, want, rtol=1e-9)


# Output kind and units -----------------------------------------------------------------------
def test_output_kind_and_unit_messages_name_both_fixes(arm):
    from dynid.identify.data import check_recording

    t, q, y = _signals()
    with pytest.raises(dynid.DataError, match=r"output_kind is 'joint_torque', but the output's "
                       r"unit is mA, a current. If the output is a current, set output_kind="
                       r"'current' \(--output-kind current\)"):
        Recording(t, q, y, output_kind="joint_torque", units={"output": "mA"})
    with pytest.raises(dynid.DataError, match=r"give its unit: units=\{'output': 'A'\} or 'mA' "
                       r"\(--units output=A\); if it is a torque, set output_kind='motor_torque'"):
        Recording(t, q, y, output_kind="current", units={"output": "N·m"}, space="actuator")
    current = arm.with_output("current")
    with pytest.raises(dynid.DataError, match=r"the output is joint_torque \(in N·m\), but the "
                       r"model of arm3 predicts current. If the output was recorded as a "
                       r"current, give its unit: units=\{'output': 'A'\} .*\(--units output=A\)"
                       r".* identify robot.with_output\('joint_torque'\)"):
        check_recording(current, Recording(t, q, y))
    assert check_recording(current, Recording(t, q, y, units={"output": "A"})).n == 3
    with pytest.raises(dynid.DataError, match=r"the output is current \(in A\), but the model of "
                       r"arm3 predicts joint_torque. If the output is a current, identify "
                       r"robot.with_output\('current'\)"):
        check_recording(arm, Recording(t, q, y, units={"output": "A"}))


# Damaged or foreign files ----------------------------------------------------------------------
def test_binary_and_damaged_files_are_refused_with_their_name(tmp_path):
    binary = tmp_path / "run.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(dynid.DataError, match=r"run.csv: not a UTF-8 text file \(byte 0x80 at "
                                              r"offset 128\)"):
        read_csv(binary, time="t", positions=["q"], output=["y"])
    nul = tmp_path / "nul.csv"
    nul.write_text("t,q,y\n0,1\x00,2\n")
    with pytest.raises(dynid.DataError, match=r"nul.csv: .*(NUL|not a number)"):
        read_csv(nul, time="t", positions=["q"], output=["y"])
    with pytest.raises(dynid.DataError, match=r"is not a regular file \(a directory\?\)"):
        read_csv(tmp_path, time="t", positions=["q"], output=["y"])
    with pytest.raises(dynid.DataError, match=r"positions: expected a list of column names"):
        read_csv(binary, time="t", positions="q1", output=["y"])

    t, q, y = _signals()
    good = save_npz(Recording(t, q, y), tmp_path / "good.npz")
    data = good.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(dynid.DataError, match=r"cut.npz: not an NPZ archive"):
        read_npz(cut)
    flipped = bytearray(data)
    start = data.index(b"\x93NUMPY", 100)  # an array's data, after the first member
    flipped[start + 200: start + 210] = b"\xff" * 10
    bad = tmp_path / "bad.npz"
    bad.write_bytes(bytes(flipped))
    with pytest.raises(dynid.DataError, match=r"bad.npz: .*damaged"):
        read_npz(bad)
    single = tmp_path / "single.npz"
    with single.open("wb") as f:
        np.save(f, q)
    with pytest.raises(dynid.DataError, match=r"single.npz: a single NumPy array \(.npy\)"):
        read_npz(single)
    objects = tmp_path / "objects.npz"
    np.savez(objects, time=t, positions=np.array([[{}]] * 50, dtype=object), output=y)
    with pytest.raises(dynid.DataError, match=r"objects.npz: array 'positions' holds object "
                                              r"values, expected numbers"):
        read_npz(objects)
    text = tmp_path / "text.npz"
    np.savez(text, time=t, positions=np.array(["a"] * 50), output=y)
    with pytest.raises(dynid.DataError, match=r"array 'positions' holds <U1 values"):
        read_npz(text)


@pytest.mark.parametrize(("meta", "message"), [
    ("{", r"meta: not valid JSON"),
    ("[1, 2]", r"meta: expected a JSON object, found \[1, 2\]"),
    ('{"names": "abc"}', r"meta: names: unexpected value 'abc'"),
    ('{"colour": 1}', r"meta: unknown entry 'colour'"),
    ('{"units": {"time": 5}}', r"time: expected a time unit \(text\), found 5"),
    ('{"names": [1, 2, 3]}', r"names: expected a list of 3 names \(text\)"),
    ('{"output_limits": ["a", "b", "c"]}', r"output_limits: expected numbers, found"),
    ('{"units": {"positions": ["deg", 3, "rad"]}}', r"units of positions: expected a unit or a "
                                                    r"list of units"),
])
def test_npz_meta_entries_are_checked(tmp_path, meta, message):
    t, q, y = _signals()
    path = tmp_path / "meta.npz"
    np.savez(path, time=t, positions=q, output=y, meta=np.array(meta))
    with pytest.raises(dynid.DataError, match=r"meta.npz: " + message):
        read_npz(path)


# History and trims of a recording ----------------------------------------------------------
def test_history_is_kept_and_saved(tmp_path):
    t, q, y = _signals()
    rec = Recording(t, q, y, history=["read run.csv"])
    assert rec.history == ("read run.csv",)
    part = rec.trim(5, "0.05s")
    assert part.n_samples == 40 and part.history == (
        "read run.csv", "trimmed 5 samples at the start and 5 at the end (5:0.05s)")
    np.testing.assert_array_equal(part.positions, q[5:45])
    assert part.skip(2).history == part.history  # derived recordings keep it
    back = read_npz(save_npz(part, tmp_path / "p.npz"))
    assert back.history == (*part.history, "read p.npz")
    assert rec.trim(0, 0) is rec
    with pytest.raises(dynid.DataError, match=r"history: expected a list of lines \(text\), "
                                              r"found \[1, 2\]"):
        Recording(t, q, y, history=[1, 2])
    with pytest.raises(dynid.DataError, match=r"trim 30:15: drops 30 \+ 15 of 50 samples, "
                                              r"leaving fewer than 10; trim less"):
        rec.trim(30, 15)
    with pytest.raises(dynid.DataError, match=r"trim start: expected a whole number of samples"):
        rec.trim(-1)


def test_trims_in_seconds_need_a_rate():
    from dynid.identify import Trim

    assert Trim("0.5s", 3).samples(100.0) == (50, 3)
    assert Trim.parse(" 2 : 1.5s ").samples(10.0) == (2, 15)
    with pytest.raises(dynid.DataError, match=r"trim 1s:0: seconds need the sample rate; give "
                                              r"the time column or rate=, or trim in samples"):
        Trim("1s").samples(None)
    with pytest.raises(dynid.DataError, match=r"trim 1e\+300s:0: 1e\+300s is 1e\+302 samples at "
                                              r"100 Hz, more than any recording holds"):
        Trim("1e300s").samples(100.0)
    with pytest.raises(dynid.DataError, match=r"trim: expected START\[:END\] as text, found 5"):
        Trim.parse(5)


def test_a_simulated_prismatic_actuator_reads_back_as_a_length(tmp_path):
    """Motor-side positions of actuators that move prismatic joints through unit gears are
    lengths: a simulated recording says so and reads back against the robot."""
    from dynid.hardware import FourierReference, simulate, smooth_coulomb
    from dynid.models import random_robot

    robot = smooth_coulomb(random_robot(2, seed=3, prismatic=1.0, friction=True), joint=0.05)
    assert robot.actuator_units == ("m", "m")
    ref = FourierReference.random(robot, harmonics=2, frequency=0.5, seed=1)
    rec = simulate(robot, robot.prior, ref, 1.0, control_rate=500, space="actuator").measured[0]
    assert rec.units["positions"] == ("m", "m") and rec.units["output"] == ("N", "N")
    back = read_npz(save_npz(rec, tmp_path / "sim"), robot=robot)
    np.testing.assert_array_equal(back.positions, rec.positions)
