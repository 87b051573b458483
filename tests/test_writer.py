"""The append-only recording file: read back bit for bit without options, samples flushed before
a SIGKILL kept, an incomplete last row dropped with a warning, and every bad input refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import arm_files

import dynid
from dynid.cli import main
from dynid.errors import DataError, DynidWarning
from dynid.hardware.pdo import Scaling
from dynid.hardware.writer import RecordingWriter
from dynid.identify import load_result, read_npz, save_npz

NAMES = [f"motor{j + 1}" for j in range(7)]


def _motion(N=300, n=7, seed=0):
    """Times, positions from encoder increments, currents in thousandths of a rated value."""
    rng = np.random.default_rng(seed)
    scale = Scaling.from_turn(2**17, gear_ratio=101.0, zero=12345, rated=3.2)
    t = 12.5 + np.arange(N) * 1e-3 + rng.uniform(0, 1e-5, N)
    q = scale.position(rng.integers(-2**30, 2**30, (N, n)))
    y = scale.output(rng.integers(-3000, 3000, (N, n)))
    return t, q, y


def _write(path, t, q, y, **options) -> None:
    with RecordingWriter(path, names=NAMES[:q.shape[1]], output_kind="current",
                         extra=["cycle", "sync_time"], **options) as w:
        for k in range(len(t)):
            w.append(t[k], q[k], y[k], extra=[k, t[k] - 0.25])
            w.flush()


def test_read_back_bit_for_bit_without_options(tmp_path):
    t, q, y = _motion()
    path = tmp_path / "run.csv"
    _write(path, t, q, y, output_limits=[9.6] * 7, source="capture 1000 Hz, run.json")
    rec = dynid.read_csv(path)
    np.testing.assert_array_equal(rec.time, t)
    np.testing.assert_array_equal(rec.positions, q)
    np.testing.assert_array_equal(rec.output, y)
    assert rec.names == tuple(NAMES) and rec.space == "actuator"
    assert rec.output_kind == "current" and rec.units["output"] == ("A",) * 7
    np.testing.assert_array_equal(rec.output_limits, [9.6] * 7)
    assert rec.history == ("run.csv: capture 1000 Hz, run.json",
                           "read run.csv (time, positions, output)")
    lines = path.read_text().splitlines()
    assert lines[1] == ",".join(["time", *NAMES, *(f"{m}_current" for m in NAMES), "cycle",
                                 "sync_time"])
    assert lines[2].split(",")[15] == "0"  # a whole number is written as such
    assert json.loads(lines[0].removeprefix("# dynid recording "))["source"] == \
        "capture 1000 Hz, run.json"


def test_units_are_stated_and_converted_as_they_are_read(tmp_path):
    t, q, y = _motion(N=50, n=2)
    path = tmp_path / "deg.csv"
    with RecordingWriter(path, names=["a", "b"], output_kind="motor_torque",
                         units={"positions": ["deg", "mm"], "output": ["mN·m", "N"]}) as w:
        w.append_many(t, q, y)
    rec = dynid.read_csv(path)
    np.testing.assert_allclose(rec.positions, np.column_stack([np.deg2rad(q[:, 0]),
                                                               q[:, 1] / 1000]), rtol=1e-15)
    np.testing.assert_allclose(rec.output, np.column_stack([y[:, 0] / 1000, y[:, 1]]),
                               rtol=1e-15)
    assert rec.units["positions"] == ("rad", "m") and rec.units["output"] == ("N·m", "N")
    assert "a_torque" in path.read_text().splitlines()[1]
    with RecordingWriter(tmp_path / "names.csv", names=["épaule", "coude"],
                         output_kind="current", source="réglages: 1 kHz") as w:
        w.append_many(t, q, y)
    rec = dynid.read_csv(tmp_path / "names.csv")
    assert rec.names == ("épaule", "coude") and rec.history[0] == "names.csv: réglages: 1 kHz"


def test_append_many_writes_the_same_file_as_append(tmp_path):
    t, q, y = _motion(N=100)
    one, many = tmp_path / "one.csv", tmp_path / "many.csv"
    _write(one, t, q, y)
    with RecordingWriter(many, names=NAMES, output_kind="current",
                         extra=["cycle", "sync_time"]) as w:
        w.append_many(t[:40], q[:40], y[:40], np.column_stack([np.arange(40), t[:40] - 0.25]))
        w.append_many(t[40:], q[40:], y[40:], np.column_stack([np.arange(40, 100),
                                                               t[40:] - 0.25]))
        assert w.samples == 100
    # append_many's extras come as floats: the cycle reads "40.0" instead of "40".
    a = [row.split(",") for row in one.read_text().splitlines()[2:]]
    b = [row.split(",") for row in many.read_text().splitlines()[2:]]
    assert [r[:15] + r[16:] for r in a] == [r[:15] + r[16:] for r in b]
    assert [float(r[15]) for r in a] == [float(r[15]) for r in b]
    with RecordingWriter(tmp_path / "ints.csv", names=["a"], output_kind="current",
                         extra=["cycle"]) as w:
        w.append_many(t[:10], q[:10, :1], y[:10, 0], np.arange(10)[:, None])
    assert (tmp_path / "ints.csv").read_text().splitlines()[3].endswith(",1")


_CHILD = textwrap.dedent("""
    import sys, numpy as np
    from dynid.hardware.writer import RecordingWriter
    w = RecordingWriter(sys.argv[1], names=["m1", "m2", "m3"], output_kind="current",
                        extra=["cycle"])
    k = 0
    while True:
        for _ in range(7):  # a few samples between flushes
            w.append(k * 1e-3, [k * 0.1, -k * 0.2, 1.0 / (k + 1)], [np.sin(k), k, -k],
                     extra=[k])
            k += 1
        w.flush()
        print(w.flushed, flush=True)
""")


def test_a_killed_capture_keeps_every_flushed_sample(tmp_path):
    path = tmp_path / "killed.csv"
    env = {**os.environ, "PYTHONPATH": str(Path(dynid.__file__).parents[1])}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE,
                             text=True, env=env)
    try:
        flushed = 0
        while flushed < 2000:
            flushed = int(child.stdout.readline())
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    rec = dynid.read_csv(path, timestamps="strict")
    assert rec.n_samples >= flushed
    k = np.arange(rec.n_samples)
    np.testing.assert_array_equal(rec.time, k * 1e-3)
    np.testing.assert_array_equal(rec.positions, np.column_stack([k * 0.1, -k * 0.2,
                                                                  1.0 / (k + 1)]))
    np.testing.assert_array_equal(rec.output[:, 0], np.sin(k))


@pytest.mark.parametrize("tail", ["0.5,1.25,", "0.5,1.25,3.5,0.25,2", "0.5,1.25,3.5,0.25,2,7"])
def test_an_incomplete_last_row_is_dropped_with_a_warning(tmp_path, tail):
    """A last line without its line break is a row cut short, even one that parses."""
    t, q, y = _motion(N=30, n=2)
    path = tmp_path / "cut.csv"
    with RecordingWriter(path, names=["a", "b"], output_kind="current", extra=["cycle"]) as w:
        for k in range(30):
            w.append(t[k], q[k], y[k], extra=[k])
    with path.open("a") as f:
        f.write(tail)
    with pytest.warns(DynidWarning, match=r"cut.csv: line 33, the last row, has no line break"):
        rec = dynid.read_csv(path)
    np.testing.assert_array_equal(rec.positions, q)
    assert rec.history[-1].startswith("cut.csv: line 33, the last row")
    with pytest.warns(DynidWarning):  # also with column options
        assert dynid.read_csv(path, time="time", positions=["b"], output=["b_current"]
                              ).n_samples == 30


def test_options_given_win_over_the_metadata(tmp_path):
    t, q, y = _motion(N=60, n=2)
    path = tmp_path / "run.csv"
    with RecordingWriter(path, names=["a", "b"], output_kind="current") as w:
        w.append_many(t, q, y)
    rec = dynid.read_csv(path, trim="5:10", names=["x", "y"], units={"output": "mA"},
                         timestamps="uniform")
    assert rec.n_samples == 45 and rec.names == ("x", "y")
    np.testing.assert_allclose(rec.output, y[5:50] / 1000, rtol=1e-15)
    assert rec.time[0] == 0.0  # uniform stamps count from the first sample
    one = dynid.read_csv(path, time="time", positions=["b"], output=["b_current"])
    np.testing.assert_array_equal(one.positions[:, 0], q[:, 1])
    assert one.names == ("b",) and one.space == "basis"


def test_refuses_to_overwrite_a_recording(tmp_path):
    t, q, y = _motion(N=20, n=1)
    path = tmp_path / "run.csv"
    with RecordingWriter(path, names=["a"], output_kind="current") as w:
        w.append_many(t, q, y)
    before = path.read_bytes()
    with pytest.raises(DataError, match=r"run.csv: exists already.*overwrite=True"):
        RecordingWriter(path, names=["a"], output_kind="current")
    assert path.read_bytes() == before
    with RecordingWriter(path, names=["b"], output_kind="current", overwrite=True) as w:
        w.append_many(t[:12], q[:12], y[:12])
    assert dynid.read_csv(path).names == ("b",)
    with pytest.raises(DataError, match=r"cannot be created.*folder"):
        RecordingWriter(tmp_path / "no" / "run.csv", names=["a"], output_kind="current")


def test_sync_hands_the_file_to_fsync(tmp_path, monkeypatch):
    synced = []
    monkeypatch.setattr(os, "fsync", synced.append)
    w = RecordingWriter(tmp_path / "s.csv", names=["a"], output_kind="current")
    w.append(0.0, [1.0], [2.0])
    w.sync()
    assert synced == [w._file.fileno()] and w.flushed == 1
    w.close()
    w.close()
    assert w.closed
    with pytest.raises(DataError, match="closed"):
        w.append(1.0, [1.0], [2.0])


@pytest.mark.parametrize("options, message", [
    ({"names": ["a", "b,c"]}, r"names: expected a column name .*'b,c'"),
    ({"names": "ab"}, r"names: expected one name per coordinate"),
    ({"names": ["a", "a"]}, r"names"),
    ({"extra": ["a_current"]}, r"\['a_current'\] appear more than once"),
    ({"extra": "cycle"}, r"extra: expected a list of column names"),
    ({"output_kind": "torque"}, r"output_kind: expected one of"),
    ({"units": {"time": "ms"}}, r"units: expected units of positions and output \(time is in s"),
    ({"units": {"positions": "deg/s"}}, r"positions"),
    ({"output_limits": [1.0]}, r"output_limits: expected 2 values"),
    ({"space": "joint"}, r"space: expected one of"),
    ({"source": 3}, r"source: expected text"),
])
def test_bad_settings_are_refused_before_the_file_is_made(tmp_path, options, message):
    settings = {"names": ["a", "b"], "output_kind": "current", **options}
    with pytest.raises(DataError, match=message):
        RecordingWriter(tmp_path / "bad.csv", **settings)
    assert not (tmp_path / "bad.csv").exists()


def test_bad_samples_are_refused_and_nothing_is_written(tmp_path):
    path = tmp_path / "run.csv"
    w = RecordingWriter(path, names=["a", "b"], output_kind="current", extra=["cycle"])
    w.append(0.0, [1.0, 2.0], [3.0, 4.0], extra=[0])
    for args, message in [
        ((1.0, [1.0], [3.0, 4.0], [1]), r"run.csv: positions of sample 1: expected 2 values, "
                                        "found 1"),
        ((1.0, [1.0, 2.0], [3.0, 4.0]), r"extra of sample 1: expected 1 values, found 0"),
        ((0.0, [1.0, 2.0], [3.0, 4.0], [1]), r"sample 1: time 0.0 s is not after the previous "
                                             "sample's 0.0 s"),
        ((float("nan"), [1.0, 2.0], [3.0, 4.0], [1]), r"sample 1: time is nan"),
        ((1.0, [1.0, np.inf], [3.0, 4.0], [1]), r"sample 1, column 'b': inf is not a finite"),
        ((1.0, [1.0, 2.0], [3.0, 4.0], [np.nan]), r"column 'cycle': nan is not a finite"),
        ((1.0, ["x", 2.0], [3.0, 4.0], [1]), r"sample 1: expected numbers"),
    ]:
        with pytest.raises(DataError, match=message):
            w.append(*args)
    t = np.array([1.0, 2.0, 2.0])
    with pytest.raises(DataError, match=r"sample 3: time 2.0 s is not after the previous "
                                        "sample's 2.0 s"):
        w.append_many(t, np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 1)))
    with pytest.raises(DataError, match=r"positions: expected an array of shape \(N, 2\) with "
                                        r"N = 3, found \(3, 3\)"):
        w.append_many(t, np.zeros((3, 3)), np.zeros((3, 2)), np.zeros((3, 1)))
    with pytest.raises(DataError, match=r"sample 2, column 'a_current': nan"):
        w.append_many([1.0, 2.0], np.zeros((2, 2)), [[0, 0], [np.nan, 0]], [[1], [2]])
    w.close()
    assert w.samples == w.flushed == 1
    assert len(path.read_text().splitlines()) == 3


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


@pytest.mark.parametrize("edit, message", [
    (lambda m: "# dynid recording {not json\n", r"bad.csv, line 1 \(dynid recording metadata\): "
                                               "not valid JSON"),
    (lambda m: m.replace('"version": 1', '"version": 9'), r"line 1 .*version 9"),
    (lambda m: m.replace('"space"', '"spaces"'), r"line 1 .*unknown entry 'spaces'"),
    (lambda m: m.replace('"names": ["a", "b"]', '"names": "ab"'), r"line 1 .*names: expected "
                                                                  "a JSON list"),
    (lambda m: m.replace('"extra": []', '"extra": 3'), r"line 1 .*columns: expected"),
    (lambda m: m.replace('"output": ["a_current", "b_current"]', '"output": ["a_current"]'),
     r"bad.csv, line 2: header .* does not match the columns of the metadata on line 1"),
])
def test_malformed_metadata_names_the_file_and_line(tmp_path, edit, message):
    t, q, y = _motion(N=20, n=2)
    path = tmp_path / "bad.csv"
    with RecordingWriter(path, names=["a", "b"], output_kind="current") as w:
        w.append_many(t, q, y)
    lines = _lines(path)
    path.write_text(edit(lines[0]) + "".join(lines[1:]))
    with pytest.raises(DataError, match=message):
        dynid.read_csv(path)


def test_a_recording_cut_in_its_header_is_refused(tmp_path):
    path = tmp_path / "cut.csv"
    RecordingWriter(path, names=["a"], output_kind="current").close()
    path.write_text(_lines(path)[0] + "time,a,a_cu")
    with pytest.raises(DataError, match=r"cut.csv, line 2: the header row is incomplete"):
        dynid.read_csv(path)


def test_identify_and_validate_read_a_recording_without_columns(tmp_path, capsys):
    robot_file, robot, npz = arm_files(tmp_path)
    rec = read_npz(npz)  # the same samples without their recorded derivatives:
    npz = save_npz(dynid.Recording(rec.time, rec.positions, rec.output, names=rec.names),
                   tmp_path / "plain.npz")
    csv = tmp_path / "run.csv"
    with RecordingWriter(csv, names=list(robot.joint_names), output_kind="joint_torque",
                         space="basis") as w:
        w.append_many(rec.time, rec.positions, rec.output)
    fast = ["--method", "ols", "--cutoff", "none", "--decimate", "1"]
    out_csv, out_npz = tmp_path / "csv.json", tmp_path / "npz.json"
    assert main(["identify", str(robot_file), str(csv), "-o", str(out_csv), *fast]) == 0
    assert main(["identify", str(robot_file), str(npz), "-o", str(out_npz), *fast]) == 0
    np.testing.assert_array_equal(load_result(out_csv).params, load_result(out_npz).params)
    assert main(["validate", str(out_csv), str(csv)]) == 0
    assert f"recording    {csv}: 400 samples" in capsys.readouterr().out
