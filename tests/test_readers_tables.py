"""Text tables as real robots write them: no header, no time column, whitespace, columns by
index, signals flattened row-major, one recording from several files, per-file trims; and
every bad input of those, refused with the file, the row or column and an example call."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import dataset

import dynid
from dynid.identify import Flat, Trim, read_csv, read_npz, save_npz


def _signals(N=80, n=3):
    t = np.arange(N) * 0.01
    q = np.column_stack([np.sin((j + 1) * t) for j in range(n)])
    y = np.column_stack([np.cos((j + 2) * t) for j in range(n)])
    return t, q, y


def test_a_whitespace_table_without_header_read_by_index(tmp_path):
    t, q, y = _signals()
    path = tmp_path / "log.txt"
    np.savetxt(path, np.column_stack([t, y, q]), fmt="%.17g")  # spaces, no header
    rec = read_csv(path, delimiter=None, time=0, positions=[4, 5, 6], output=[1, 2, 3])
    np.testing.assert_array_equal(rec.time, t)
    np.testing.assert_array_equal(rec.positions, q)
    np.testing.assert_array_equal(rec.output, y)
    assert rec.names == ("joint1", "joint2", "joint3")
    tabs = tmp_path / "tabs.txt"
    tabs.write_text("\n".join("\t ".join(f"{x!r}" for x in row) for row in
                              np.column_stack([t, y, q]).tolist()) + "\n\n")
    np.testing.assert_array_equal(read_csv(tabs, delimiter=None, time=0, positions=[4, 5, 6],
                                           output=[1, 2, 3]).positions, q)


def test_a_comma_table_without_header_or_time_column(tmp_path):
    t, q, y = _signals()
    path = tmp_path / "log.csv"
    np.savetxt(path, np.column_stack([q, y]), delimiter=",", fmt="%.17g")
    rec = read_csv(path, rate=100.0, positions=[0, 1, 2], output=[3, 4, 5])
    np.testing.assert_allclose(rec.time, t, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(rec.positions, q)
    assert rec.history == ("read log.csv (positions, output)", "time from the sample rate, "
                           "100 Hz (t = k / rate, k counted from the start of the positions' "
                           "file)")
    # header=False: a first row of numbers is a sample (also detected without it).
    assert read_csv(path, header=False, rate=100.0, positions=[0, 1, 2],
                    output=[3, 4, 5]).n_samples == 80


@pytest.mark.parametrize("layout", ["column", "line", "wrapped", "in_a_column", "quoted"])
def test_flattened_signals(tmp_path, layout):
    """Seven values per sample, row-major: one per line, all on one line, wrapped ten to a
    line (the last line shorter, after a blank line and a header), in one column of a table
    with a header, or quoted on one line."""
    _, q, y = _signals(N=30, n=7)
    qpath, ypath = tmp_path / "q.txt", tmp_path / "tau.txt"
    if layout == "column":
        np.savetxt(qpath, q.ravel(), fmt="%.17g")
    elif layout == "line":
        np.savetxt(qpath, q.ravel()[None], fmt="%.17g", delimiter=",")
    elif layout == "wrapped":
        flat = [f"{x!r}" for x in q.ravel().tolist()]
        qpath.write_text("\nq\n" + "\n".join(" ".join(flat[k:k + 10])
                                             for k in range(0, len(flat), 10)))
    elif layout == "quoted":
        qpath.write_text(",".join(f'"{x!r}"' for x in q.ravel().tolist()))
    else:
        np.savetxt(qpath, np.column_stack([q.ravel(), np.arange(q.size)]), fmt="%.17g",
                   delimiter=",", header="q,index", comments="")
    np.savetxt(ypath, y.ravel(), fmt="%.17g")
    spec = Flat(7, "q") if layout == "in_a_column" else Flat(7)
    rec = read_csv({"positions": qpath, "output": ypath}, rate=100.0, positions=spec,
                   output=Flat(7), delimiter=None if layout in ("column", "wrapped") else ",")
    np.testing.assert_array_equal(rec.positions, q)
    np.testing.assert_array_equal(rec.output, y)


def test_flattened_signals_that_do_not_fit_are_refused(tmp_path):
    _, q, y = _signals(N=30, n=7)
    qpath, ypath = tmp_path / "q.txt", tmp_path / "tau.txt"
    np.savetxt(qpath, q.ravel()[:-1])
    np.savetxt(ypath, y.ravel())
    files = {"positions": qpath, "output": ypath}
    with pytest.raises(dynid.DataError, match=r"q.txt \(positions\): 209 values in the file, "
                                              r"not a multiple of Flat\(n=7\)"):
        read_csv(files, rate=100.0, positions=Flat(7), output=Flat(7), delimiter=None)
    qpath.write_text("0.1 0.2\n0.3 oops\n")
    with pytest.raises(dynid.DataError, match=r"q.txt: row 2: 'oops' is not a number \(the file "
                                              r"is read as one flat stream of numbers\)"):
        read_csv(files, rate=100.0, positions=Flat(7), output=Flat(7), delimiter=None)
    with pytest.raises(dynid.DataError, match=r"Flat: expected n ≥ 1 values per sample .* "
                                              r"e.g. Flat\(7\)"):
        Flat(0)
    both = tmp_path / "both.txt"
    np.savetxt(both, np.column_stack([q.ravel(), y.ravel()]))
    with pytest.raises(dynid.DataError, match=r"both.txt: positions is read as every value of "
                                              r"the file \(Flat\(7\)\), so the file cannot also "
                                              r"hold output"):
        read_csv(both, rate=100.0, positions=Flat(7), output=[1], delimiter=None)


def test_one_recording_from_several_files(tmp_path):
    """Positions with a header in one file, torques without one in another, time in a third;
    each signal not given columns takes every column of its file."""
    t, q, y = _signals()
    np.savetxt(tmp_path / "q.csv", q, delimiter=",", header="a,b,c", comments="")
    np.savetxt(tmp_path / "tau.csv", y, delimiter=",")
    np.savetxt(tmp_path / "t.csv", 1000 * t)
    files = {"time": tmp_path / "t.csv", "positions": tmp_path / "q.csv",
             "output": tmp_path / "tau.csv"}
    rec = read_csv(files, units={"time": "ms"})
    np.testing.assert_allclose(rec.time, t, rtol=1e-12)
    np.testing.assert_array_equal(rec.positions, q)
    np.testing.assert_array_equal(rec.output, y)
    assert rec.names == ("a", "b", "c")
    picked = read_csv(files, positions=["c", "a"], output=[2, 0], units={"time": "ms"})
    np.testing.assert_array_equal(picked.positions, q[:, [2, 0]])
    np.testing.assert_array_equal(picked.output, y[:, [2, 0]])


def test_trims_per_file(tmp_path):
    """Each file is trimmed by its own trim, in samples or seconds: here the torque log starts
    5 samples before the position log and ends 3 samples after it."""
    t, q, y = _signals(N=100)
    np.savetxt(tmp_path / "q.csv", q[:95], delimiter=",")
    np.savetxt(tmp_path / "tau.csv", np.vstack([np.zeros((5, 3)), y[:95], np.ones((3, 3))]),
               delimiter=",")
    files = {"positions": tmp_path / "q.csv", "output": tmp_path / "tau.csv"}
    rec = read_csv(files, rate=100.0, trim={"positions": Trim(20, 5), "output": "25:8"})
    np.testing.assert_array_equal(rec.positions, q[20:90])
    np.testing.assert_array_equal(rec.output, y[20:90])
    np.testing.assert_allclose(rec.time, t[20:90], rtol=1e-12)
    assert "tau.csv: trimmed 25 samples at the start and 8 at the end (25:8)" in rec.history
    seconds = read_csv(files, rate=100.0, trim={"positions": "0.2s:0.05s",
                                                "output": ("0.25s", "0.08s")})
    np.testing.assert_array_equal(seconds.positions, rec.positions)
    with pytest.raises(dynid.DataError, match=r"q.csv \+ tau.csv: the signals of one recording "
                       r"need the same number of samples, found positions 75 \(in q.csv\), "
                       r"output 103 \(in tau.csv\); trim the files to the same span"):
        read_csv(files, rate=100.0, trim={"positions": "20"})
    # One file, one trim, in seconds from its time column; the end too.
    single = tmp_path / "run.csv"
    np.savetxt(single, np.column_stack([t, q, y]), delimiter=",", header="t,a,b,c,x,y,z",
               comments="")
    cols = {"time": "t", "positions": ["a", "b", "c"], "output": ["x", "y", "z"]}
    part = read_csv(single, trim="0.5s:0.1s", **cols)
    np.testing.assert_array_equal(part.positions, q[50:90])
    np.testing.assert_array_equal(part.time, t[50:90])
    np.testing.assert_array_equal(read_npz(save_npz(read_csv(single, **cols), tmp_path / "r"),
                                           trim=Trim(50, 10)).positions, q[50:90])
    assert part.trim("0.1s", 5).n_samples == 25
    assert part.trim("10:5").n_samples == 25


@pytest.mark.parametrize(("trim", "message"), [
    ("abc", r"trim start: expected a whole number of samples ≥ 0 or seconds as text ending in "
            r"'s', found 'abc'; e.g. Trim\(500, 20\)"),
    ("1:2:3", r"trim '1:2:3': expected START\[:END\]"),
    ("-5", r"trim start: expected a whole number of samples"),
    (0.5, r"trim: expected a Trim, 'START\[:END\]' or \(start, end\), found 0.5"),
    ((1.5, 0), r"trim start: expected a whole number of samples ≥ 0 .* found 1.5"),
    ("60:30", r"run.csv: trim 60:30 drops 60 \+ 30 of its 80 samples \(\w+\), leaving fewer "
              r"than 10; trim less"),
    ({"torque": 5}, r"trim: 'torque' is not a signal read \(time, positions, output\)"),
    ("1e400s", r"trim start: expected a whole number of samples"),
])
def test_bad_trims_are_refused(tmp_path, trim, message):
    t, q, y = _signals()
    path = tmp_path / "run.csv"
    np.savetxt(path, np.column_stack([t, q, y]), delimiter=",", header="t,a,b,c,x,y,z",
               comments="")
    with pytest.raises(dynid.DataError, match=message):
        read_csv(path, time="t", positions=["a", "b", "c"], output=["x", "y", "z"], trim=trim)


def test_signals_of_one_file_share_its_trim(tmp_path):
    _, q, y = _signals()
    path = tmp_path / "run.csv"
    np.savetxt(path, np.column_stack([q, y]), delimiter=",")
    with pytest.raises(dynid.DataError, match=r"trim: run.csv holds positions, output, trimmed "
                                              r"differently \(positions 5:0, output 0:0\)"):
        read_csv({"positions": path, "output": path}, rate=100.0, positions=[0, 1, 2],
                 output=[3, 4, 5], trim={"positions": 5, "output": 0})
    rec = read_csv({"positions": path, "output": path}, rate=100.0, positions=[0, 1, 2],
                   output=[3, 4, 5], trim={"positions": 5})
    np.testing.assert_array_equal(rec.output, y[5:])


def _table(tmp_path, header=True):
    t, q, y = _signals()
    path = tmp_path / "run.csv"
    np.savetxt(path, np.column_stack([t, q, y]), delimiter=",", comments="",
               header="t,a,b,c,x,y,z" if header else "")
    return path


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"positions": [1, 2, 9]}, r"run.csv \(positions\): column index 9 is outside the file's 7 "
                               r"columns \(0 to 6\); e.g. read_csv\('run.csv', positions=\['t', "
                               r"'a', 'b'\], ...\)"),
    ({"positions": ["a", "b"], "header": False}, r"run.csv \(positions\): no header row, so no "
                                                 r"column is named 'a'; give columns by index"),
    ({"positions": [-1]}, r"positions: expected a list of column names or indices \(0 = first "
                          r"column\), one per coordinate, or Flat\(n\), found \[-1\]"),
    ({"positions": "a"}, r"positions: expected a list of column names or indices"),
    ({"time": 1.5}, r"time: expected a column name or index \(0 = first column\), found 1.5"),
    ({"rate": 100.0}, r"run.csv: give the time column or rate=, not both"),
    ({"time": None}, r"run.csv: no time column; give the sample rate, e.g. rate=5000.0 "
                     r"\(--rate 5000\), or the time column, e.g. time='t'"),
    ({"time": None, "rate": -3}, r"rate: expected the sample rate in Hz, a number from 0.001 "
                                 r"to 1e6, found -3; e.g. rate=1000.0"),
    ({"time": None, "rate": "fast"}, r"rate: expected the sample rate in Hz"),
    ({"positions": None}, r"run.csv: positions: give its columns, e.g. read_csv\('run.csv', "
                          r"time='t', positions=\['q1', 'q2'\]"),
    ({"header": "yes"}, r"header: expected True, False or None \(detect it\), found 'yes'"),
    ({"delimiter": "ab"}, r"delimiter: expected one character .* or None for columns separated "
                          r"by spaces or tabs, found 'ab'; e.g. delimiter=';'"),
    ({"delimiter": ";", "positions": [1, 2, 3]}, r"run.csv \(positions\): column index 1 is "
                                                 r"outside the file's 1 columns \(0 to 0\); the "
                                                 r"first row is one field: are the columns "
                                                 r"separated by ','\? Pass delimiter=','"),
    ({"timestamps": "fix"}, r"timestamps: expected one of check, strict, resample, uniform, "
                            r"keep, found 'fix'"),
    ({"column_map": [[1]]}, r"column_map: expected a ColumnMap, found \[\[1\]\]"),
])
def test_bad_table_arguments_are_refused(tmp_path, kwargs, message):
    path = _table(tmp_path)
    args = {"time": 0, "positions": [1, 2, 3], "output": [4, 5, 6], **kwargs}
    with pytest.raises(dynid.DataError, match=message):
        read_csv(path, **args)


def test_whitespace_files_read_with_commas_say_so(tmp_path):
    path = tmp_path / "log.txt"
    np.savetxt(path, np.column_stack(_signals()))
    with pytest.raises(dynid.DataError, match=r"log.txt \(positions\): column index 1 is "
                       r"outside the file's 1 columns \(0 to 0\); the first row is one field: "
                       r"are the columns separated by spaces\? Pass delimiter=None"):
        read_csv(path, time=0, positions=[1, 2, 3], output=[4, 5, 6])


def test_bad_cells_and_rows_name_their_line(tmp_path):
    path = tmp_path / "bare.csv"
    path.write_text("0,1,2\n\n0.01,1,2\n0.02,x,2\n" + "".join(f"{k / 100},1,2\n"
                                                            for k in range(3, 20)))
    with pytest.raises(dynid.DataError, match=r"bare.csv: row 4, column 1: 'x' is not a number"):
        read_csv(path, time=0, positions=[1], output=[2])
    path.write_text("0,1,2\n0.01,1\n")
    with pytest.raises(dynid.DataError, match=r"bare.csv: row 2 has 2 fields, row 1 has 3"):
        read_csv(path, time=0, positions=[1], output=[2])
    path.write_text("")
    with pytest.raises(dynid.DataError, match=r"bare.csv: expected samples, found 0 rows"):
        read_csv(path, header=False, time=0, positions=[1], output=[2])


@pytest.mark.parametrize(("files", "kwargs", "message"), [
    ({"positions": "q.csv"}, {}, r"files: no file for output; e.g. read_csv\(\{'positions': "
                                 r"'q.csv', 'output': 'tau.csv'\}, rate=1000.0\)"),
    ({"positions": "q.csv", "output": "tau.csv", "torque": "q.csv"}, {},
     r"files: unknown signals \['torque'\]"),
    ({"positions": "q.csv", "output": "tau.csv"}, {"velocities": [0, 1, 2]},
     r"velocities: columns given, but no file for velocities"),
    ({"positions": "q.csv", "output": "missing.csv"}, {}, r"missing.csv'? does not exist"),
    ({"positions": "q.csv", "output": "tau.csv", "time": "q.csv"}, {},
     r"q.csv \(time\): 3 columns; say which is the time, e.g. time='t' or time=0"),
])
def test_bad_file_mappings_are_refused(tmp_path, files, kwargs, message):
    _, q, y = _signals()
    np.savetxt(tmp_path / "q.csv", q, delimiter=",")
    np.savetxt(tmp_path / "tau.csv", y, delimiter=",")
    with pytest.raises(dynid.DataError, match=message):
        read_csv({k: tmp_path / v for k, v in files.items()}, rate=None if "time" in files
                 else 100.0, **kwargs)


def test_the_staubli_tx40_data_in_one_call():
    """The FIGAROH TX40 run: motor positions and motor torques in two files (header
    Joint_1..Joint_6, no time column, 5 kHz), read in one call with the gear and wrist
    coupling map and the URDF's offsets of joints 2 and 3. Compared with the dataset's
    conversion computed here from its README: q = Rq⁻¹ q_m, then q2 − π/2, q3 + π/2;
    τ = Rt τ_m with Rt = Rqᵀ."""
    root = dataset("staubli_tx40_figaroh") / "data"
    N = np.array([32, 32, 45, -48, 45, 32.0])
    Rq = np.diag(N)
    Rq[5, 4] = N[5]
    tx40 = dynid.ColumnMap(Rq, joint_offset=[0, -np.pi / 2, np.pi / 2, 0, 0, 0])
    rec = read_csv({"positions": root / "pos_read_data.csv", "output": root / "curr_data.csv"},
                   rate=5000.0, column_map=tx40, trim="20:20")
    qm = np.loadtxt(root / "pos_read_data.csv", delimiter=",", skiprows=1)[20:-20]
    tm = np.loadtxt(root / "curr_data.csv", delimiter=",", skiprows=1)[20:-20]
    q = np.linalg.solve(Rq, qm.T).T + np.array([0, -np.pi / 2, np.pi / 2, 0, 0, 0])
    Rt = np.diag(N)
    Rt[4, 5] = N[5]
    tau = tm @ Rt.T
    assert rec.n_samples == 45000 - 40 and rec.rate == pytest.approx(5000.0, rel=1e-12)
    assert rec.time[0] == pytest.approx(20 / 5000.0, rel=1e-12)
    np.testing.assert_allclose(rec.positions, q, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(rec.output, tau, rtol=1e-13, atol=1e-11)
    # The README's joint torque RMS / max, N·m (rounded as published).
    np.testing.assert_allclose(np.sqrt(np.mean(rec.output ** 2, axis=0)),
                               [31.7, 33.0, 12.2, 5.7, 8.3, 5.0], atol=0.051)
    np.testing.assert_allclose(np.abs(rec.output).max(axis=0), [94, 95, 34, 12, 22, 13],
                               atol=0.51)
    # Power is preserved: τ · q̇ on the joints equals τ_m · q̇_m on the motors.
    qd_m = np.gradient(qm, axis=0) * 5000.0
    qd = np.gradient(rec.positions, axis=0) * 5000.0
    np.testing.assert_allclose(np.sum(rec.output * qd, axis=1), np.sum(tm * qd_m, axis=1),
                               rtol=1e-9, atol=1e-9 * np.abs(tm * qd_m).sum(axis=1).max())


def test_archive_arrays_of_the_wrong_shape_are_refused(tmp_path):
    t, q, y = _signals()
    path = tmp_path / "odd.npz"
    np.savez(path, time=t[:, None], positions=q, output=y)
    with pytest.raises(dynid.DataError, match=r"odd.npz: array for time has shape \(80, 1\); "
                                              r"expected \(N,\)"):
        read_npz(path)
    np.savez(path, time=t, positions=q[None], output=y)
    with pytest.raises(dynid.DataError, match=r"odd.npz: array for positions has shape "
                                              r"\(1, 80, 3\); expected \(N, n\)"):
        read_npz(path)
    np.savez(path, positions=q, output=y)
    rec = read_npz(path, rate=100.0, trim="0.1s")  # no time array: the rate
    np.testing.assert_array_equal(rec.positions, q[10:])
    with pytest.raises(dynid.DataError, match=r"odd.npz \(time\): no column 'time'"):
        read_npz(path)
    with pytest.raises(dynid.DataError, match=r"Flat: expected a column name or index \(0 = "
                                              r"first\), found 1.5"):
        Flat(2, 1.5)


def test_a_numpy_savetxt_header_is_read(tmp_path):
    t, q, y = _signals()
    path = tmp_path / "np.csv"
    np.savetxt(path, np.column_stack([t, q, y]), delimiter=",", header="t,a,b,c,x,y,z")
    assert path.read_text().startswith("# t,a,b")
    rec = read_csv(path, time="t", positions=["a", "b", "c"], output=["x", "y", "z"])
    np.testing.assert_array_equal(rec.positions, q)
