"""Recordings: validation of every bad input, units, saturation, CSV and NPZ readers."""

from __future__ import annotations

import numpy as np
import pytest

import dynid
from dynid.identify import Recording, read_csv, read_npz, save_npz


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
    with pytest.raises(dynid.DataError, match=r"do not match output_kind 'current'"):
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
