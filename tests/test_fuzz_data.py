"""Fuzzing harness of the file readers: CSV and NPZ recordings and result files.

The readers' arguments are drawn too: columns by name, by index or flattened, headers,
delimiters, sample rates, trims, time-stamp modes, column maps, recordings split over two
files and time stamps with jitter, repeats, steps back and gaps.

Each test mutates a valid file (written from a small synthetic recording, or by an
identification) and reads it back: every input must end in a value or a
:class:`dynid.DynidError`, within bounded time and memory. ``make fuzz`` runs the long version
(``DYNID_FUZZ=1``).
"""

from __future__ import annotations

import copy
import io
import json
import math
import warnings
import zipfile

import numpy as np
import pytest
from fuzzing import FUZZ_SETTINGS, bounded, tree_paths
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dynid
from dynid.identify import (
    OLS,
    Flat,
    IdentificationData,
    IdentificationResult,
    Processing,
    Recording,
    Trim,
    read_csv,
    read_npz,
    save_npz,
)
from dynid.identify.data import check_recording
from dynid.identify.result import load_result
from dynid.models.library import random_robot

pytestmark = pytest.mark.fuzz

SECONDS, MEGABYTES = 5.0, 64.0
JOINTS = ("joint1", "joint2")


@pytest.fixture(scope="module")
def robot():
    return random_robot(2, seed=5)


def _recording(robot, N=40) -> Recording:
    t = np.arange(N) * 0.01
    q = np.column_stack([np.sin(2 * t), np.cos(3 * t)])
    y = dynid.Regressor(robot).predict(q, 2 * q, -4 * q, robot.prior)
    return Recording(t, q, y, velocities=2 * q, names=robot.joint_names)


def _expect_value_or_dynid_error(fn):
    """Run ``fn`` within the bounds; a DynidError is a fine answer to bad input."""
    try:
        value = bounded(fn, seconds=SECONDS, megabytes=MEGABYTES)
    except dynid.DynidError as exc:
        event(f"refused: {type(exc).__name__}")
        return None
    event("read")
    return value


# Mutations shared by the text formats ----------------------------------------------------------
TOKENS = ["", "nan", "NaN", "inf", "-inf", "1e999", "-1e999", "1e-320", "0", "-0", "1e308",
          "abc", '"', '""', "1,2", "\x00", "\ufeff", " ", "\t", "9" * 400, "0x10", "1_000",
          "١٢", "None", "true", "[1]", "{}", "é", "\r", "\n", ",", ";", "joint1", "joint2",
          "tau", "t"]


@st.composite
def byte_edits(draw, data: bytes) -> bytes:
    """``data`` with a few random byte-level edits: flips, insertions, deletions, cuts."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, max(len(out) - 1, 0)))
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "repeat"]))
        if kind == "flip" and out:
            out[pos] = draw(st.integers(0, 255))
        elif kind == "insert":
            out[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del out[pos:pos + draw(st.integers(1, 16))]
        elif kind == "truncate":
            del out[pos:]
        else:
            out[pos:pos] = out[pos:pos + draw(st.integers(1, 64))] * draw(st.integers(1, 4))
    return bytes(out)


# CSV -------------------------------------------------------------------------------------------
HEADER = ["t", "joint1", "joint2", "tau1", "tau2", "note"]


def _csv_rows(robot) -> list[list[str]]:
    rec = _recording(robot)
    rows = [HEADER]
    for k in range(rec.n_samples):
        rows.append([repr(float(rec.time[k])), *map(repr, rec.positions[k].tolist()),
                     *map(repr, rec.output[k].tolist()), "ok"])
    return rows


@st.composite
def csv_files(draw, robot) -> bytes:
    rows = copy.deepcopy(_csv_rows(robot))
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2, 3]))):
        r = draw(st.integers(0, len(rows) - 1))
        kind = draw(st.sampled_from(["cell", "cell", "drop_row", "dup_row", "drop_cell",
                                     "add_cell", "swap_rows", "text"]))
        row = rows[r]
        if kind == "cell" and row:
            row[draw(st.integers(0, len(row) - 1))] = draw(
                st.sampled_from(TOKENS) | st.text(max_size=12) | st.floats().map(repr))
        elif kind == "drop_row" and len(rows) > 1:
            del rows[r]
        elif kind == "dup_row":
            rows.insert(r, list(row))
        elif kind == "drop_cell" and row:
            del row[draw(st.integers(0, len(row) - 1))]
        elif kind == "add_cell":
            row.append(draw(st.sampled_from(TOKENS)))
        elif kind == "swap_rows":
            s = draw(st.integers(0, len(rows) - 1))
            rows[r], rows[s] = rows[s], rows[r]
        else:
            rows[r] = [draw(st.text(max_size=30))]
    sep = draw(st.sampled_from([",", ",", ",", ",", ";", ", ", "\t"]))
    text = "\n".join(sep.join(row) for row in rows)
    if draw(st.integers(0, 3)) == 0:
        text = "\ufeff" + text
    data = text.encode(draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "latin-1", "utf-16"])),
                       errors="replace")
    return draw(byte_edits(data)) if draw(st.integers(0, 3)) == 0 else data


# Column mappings and units: valid ones half of the time.
COLUMNS = st.fixed_dictionaries({
    "positions": st.sampled_from([["joint1", "joint2"], ["joint2", "joint1"]]),
    "output": st.sampled_from([["tau1", "tau2"], ["tau2", "tau1"]]),
    "time": st.just("t"),
}) | st.fixed_dictionaries({
    "positions": st.sampled_from([["joint1"], ["joint1", "jont2"], ["tau1", "tau2"],
                                  ["joint1", "joint1"], ["joint1", "joint2", "tau1"]]),
    "output": st.sampled_from([["tau1", "tau2"], ["tau1"], ["note", "tau2"]]),
    "time": st.sampled_from(["t", "joint1", "missing"]),
})
UNITS = st.sampled_from([{}, {"time": "ms"}, {"positions": "deg", "velocities": "deg/s"}]) | \
    st.dictionaries(
        st.sampled_from(["time", "positions", "velocities", "output", "torque"]),
        st.sampled_from(["s", "ms", "deg", "rad", "mm", "A", "mA", "N·m", "inc", "furlong", "",
                         ["deg", "rad"], ["rad"], ["A", "N·m"]]), max_size=3)


# The readers' other arguments: valid ones most of the time, and the odd bad one.
INDEX_COLUMNS = st.fixed_dictionaries({
    "positions": st.sampled_from([[1, 2], [2, 1], [1], [1, 9], [-1, 2], [1.0, 2], Flat(2),
                                  Flat(2, 1), Flat(3), None]),
    "output": st.sampled_from([[3, 4], [4, 3], [3], [5, 3], Flat(2, "tau1"), None]),
    "time": st.sampled_from([0, 0, "t", 7, None, 1.5]),
})
TRIMS = st.sampled_from([None, None, 0, 5, "3:2", "0.05s", "0.1s:0.02s", (2, 1), Trim(1, "0.01s"),
                         "40", "100:100", "abc", "1:2:3", -3, 2.5, ("1s", "x"),
                         {"positions": 2, "output": 2}, {"positions": 1}, {"torque": 1}])
TIMESTAMPS = st.sampled_from(["check"] * 3 + ["strict", "resample", "uniform", "keep", "fix"])
MAPS = st.sampled_from([None] * 4 + [np.eye(2), [[1, 0], [1, 1]], [[2, 0], [0, -3]],
                                      [[1, 1], [1, 1]], np.eye(3), [[np.nan, 0], [0, 1]],
                                      "not a map"])
RATES = st.sampled_from([None] * 4 + [100.0, 0.0, -5.0, math.nan, 1e9, "fast", True])


def _map(value):
    """A column map from a drawn matrix (its errors are part of the answer)."""
    if value is None or isinstance(value, str):
        return value
    return dynid.ColumnMap(value)


@FUZZ_SETTINGS
@given(data=st.data())
def test_csv_reader_takes_any_file(tmp_path_factory, robot, data):
    path = tmp_path_factory.mktemp("csv") / "run.csv"
    path.write_bytes(data.draw(csv_files(robot)))
    columns = data.draw(COLUMNS | INDEX_COLUMNS)
    units = data.draw(UNITS)
    with_robot = data.draw(st.booleans())
    space = data.draw(st.sampled_from(["basis"] * 4 + ["actuator"]))
    delimiter = data.draw(st.sampled_from([","] * 6 + [";", "ab", "", None]))
    extra = {"header": data.draw(st.sampled_from([None, None, True, False, "yes"])),
             "rate": data.draw(RATES), "trim": data.draw(TRIMS),
             "timestamps": data.draw(TIMESTAMPS)}
    cmap = data.draw(MAPS)

    def read():
        rec = read_csv(path, **columns, units=units, space=space, delimiter=delimiter,
                       robot=robot if with_robot else None, column_map=_map(cmap), **extra)
        return check_recording(robot, rec, reorder=True)

    _expect_value_or_dynid_error(read)


@st.composite
def split_files(draw, robot, folder) -> dict:
    """A recording's positions and torques in two files, each with or without a header, one
    maybe flattened, either maybe damaged."""
    rec = _recording(robot)
    files = {}
    for key, values in (("positions", rec.positions), ("output", rec.output)):
        layout = draw(st.sampled_from(["header", "bare", "spaces", "flat", "flat_line"]))
        if layout == "header":
            text = "a,b\n" + "\n".join(f"{x!r},{y!r}" for x, y in values.tolist())
        elif layout == "bare":
            text = "\n".join(f"{x!r},{y!r}" for x, y in values.tolist())
        elif layout == "spaces":
            text = "\n".join(f"{x!r}  {y!r}" for x, y in values.tolist())
        elif layout == "flat":
            text = "\n".join(repr(x) for x in values.ravel().tolist())
        else:
            text = ",".join(repr(x) for x in values.ravel().tolist())
        data = text.encode()
        if draw(st.integers(0, 2)) == 0:
            data = draw(byte_edits(data))
        path = folder / f"{key}.txt"
        path.write_bytes(data)
        files[key] = path
    return files


@FUZZ_SETTINGS
@given(data=st.data())
def test_split_recordings_take_any_files(tmp_path_factory, robot, data):
    files = data.draw(split_files(robot, tmp_path_factory.mktemp("split")))
    columns = {key: data.draw(st.sampled_from([None, None, Flat(2), [0, 1], [1], ["a", "b"]]))
               for key in ("positions", "output")}
    extra = {"rate": data.draw(st.sampled_from([100.0, 100.0, None, -1.0])),
             "trim": data.draw(TRIMS), "timestamps": data.draw(TIMESTAMPS),
             "delimiter": data.draw(st.sampled_from([",", ",", None])),
             "header": data.draw(st.sampled_from([None, None, True, False]))}
    with_robot = data.draw(st.booleans())
    cmap = data.draw(MAPS)

    def read():
        rec = read_csv(files, **columns, column_map=_map(cmap),
                       robot=robot if with_robot else None, **extra)
        return check_recording(robot, rec, reorder=True)

    _expect_value_or_dynid_error(read)


@st.composite
def jittered_times(draw, n: int) -> np.ndarray:
    """Time stamps with jitter, repeats, steps back and gaps."""
    t = np.arange(n) * 0.01
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(1, n - 1))
        kind = draw(st.sampled_from(["jitter", "repeat", "back", "gap", "nan"]))
        if kind == "jitter":
            t = t + draw(st.floats(0, 0.006)) * np.sin(np.arange(n) * 1.7)
        elif kind == "repeat":
            t[k] = t[k - 1]
        elif kind == "back":
            t[k] = t[k - 1] - draw(st.floats(0, 0.05))
        elif kind == "gap":
            t[k:] += draw(st.floats(0, 0.2))
        else:
            t[k] = math.nan
    return t


@FUZZ_SETTINGS
@given(data=st.data())
def test_any_time_stamps_end_in_a_recording_or_an_error(tmp_path_factory, robot, data):
    rec = _recording(robot)
    path = tmp_path_factory.mktemp("stamps") / "run.csv"
    t = data.draw(jittered_times(rec.n_samples))
    np.savetxt(path, np.column_stack([t, rec.positions, rec.output]), delimiter=",",
               header="t,joint1,joint2,tau1,tau2", comments="")
    mode = data.draw(TIMESTAMPS)

    def read():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dynid.DynidWarning)
            out = read_csv(path, time="t", positions=["joint1", "joint2"],
                           output=["tau1", "tau2"], timestamps=mode)
        if mode in ("resample", "uniform"):
            assert out.is_uniform(1e-6)
        return out

    _expect_value_or_dynid_error(read)


# NPZ -------------------------------------------------------------------------------------------
DTYPES = st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.uint8, np.bool_,
                          np.complex128, np.float16, "<U4", "S3", "datetime64[s]"])
ARRAYS = hnp.arrays(DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, max_side=45),
                    elements=None)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
                        st.text(max_size=8), kids, max_size=4), max_leaves=12)
META_KEYS = ["space", "output_kind", "names", "units", "output_limits", "output_covariance",
             "colour"]


def _npz_bytes(arrays: dict, compressed: bool) -> bytes:
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    return buffer.getvalue()


@st.composite
def npz_files(draw, robot, folder) -> bytes:
    valid = save_npz(_recording(robot), folder / "valid.npz")
    with np.load(valid) as archive:
        arrays = {k: archive[k] for k in archive.files}
    kind = draw(st.sampled_from(["arrays", "meta", "bytes"]))
    if kind == "bytes":
        return draw(byte_edits(valid.read_bytes()))
    if kind == "arrays":
        for _ in range(draw(st.integers(1, 3))):
            key = draw(st.sampled_from(["time", "positions", "output", "velocities",
                                        "accelerations", "meta", "other"]))
            if draw(st.booleans()):
                arrays[key] = draw(ARRAYS)
            else:
                arrays.pop(key, None)
    else:
        meta = json.loads(str(arrays["meta"]))
        for _ in range(draw(st.integers(1, 3))):
            key = draw(st.sampled_from(META_KEYS))
            if draw(st.booleans()):
                meta[key] = draw(JSON)
            else:
                meta.pop(key, None)
        text = json.dumps(meta) if draw(st.integers(0, 4)) else draw(st.text(max_size=40))
        arrays["meta"] = np.array(text)
    return _npz_bytes(arrays, draw(st.booleans()))


@FUZZ_SETTINGS
@given(data=st.data())
def test_npz_reader_takes_any_file(tmp_path_factory, robot, data):
    folder = tmp_path_factory.mktemp("npz")
    path = folder / "run.npz"
    path.write_bytes(data.draw(npz_files(robot, folder)))
    keys = data.draw(st.sampled_from([None, {}, {"output": "positions"}, {"time": "meta"},
                                      {"torque": "output"}, {"time": "other"}]))
    with_robot = data.draw(st.booleans())
    units = data.draw(st.sampled_from([None, {}, {"output": "mA"}, {"positions": "deg"}]))
    extra = {"rate": data.draw(RATES), "trim": data.draw(TRIMS),
             "timestamps": data.draw(TIMESTAMPS)}
    cmap = data.draw(MAPS)

    def read():
        rec = read_npz(path, keys=keys, robot=robot if with_robot else None, units=units,
                       column_map=_map(cmap), **extra)
        return check_recording(robot, rec, reorder=True)

    _expect_value_or_dynid_error(read)


def test_npz_arrays_larger_than_the_archive_are_refused(tmp_path):
    """A header that claims more data than the archive holds is refused before any memory is
    taken for it."""
    path = tmp_path / "huge.npz"
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(8))
    header = buffer.getvalue().replace(b"(8,)", b"(10000000000,)".ljust(4))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("time.npy", header)
        archive.writestr("positions.npy", header)
        archive.writestr("output.npy", header)
    with pytest.raises(dynid.DataError, match=r"huge.npz: array '\w+' claims shape "
                                              r"\(10000000000,\)"):
        bounded(lambda: read_npz(path), seconds=2, megabytes=16)


# Result files ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def result_json(robot):
    t = np.arange(200) * 0.01
    q = np.column_stack([np.sin(2 * t), np.cos(3 * t)])
    v, a = np.column_stack([2 * np.cos(2 * t), -3 * np.sin(3 * t)]), -np.array([4, 9]) * q
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    y += 1e-3 * np.random.default_rng(1).standard_normal(y.shape)
    rec = Recording(t, q, y, velocities=v, accelerations=a)
    est = OLS().fit(IdentificationData(robot, rec, processing=Processing(cutoff=None,
                                                                         decimate=1)))
    return json.loads(json.dumps(est.result_.to_json(), default=float))


@st.composite
def result_files(draw, base) -> bytes:
    data = copy.deepcopy(base)
    paths = list(tree_paths(data, width=3))[1:]  # the first rows and columns are enough
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        parent = data
        try:
            for key in path[:-1]:
                parent = parent[key]
            kind = draw(st.sampled_from(["number", "number", "replace", "delete", "add"]))
            if kind == "number" and isinstance(parent[path[-1]], int | float):
                parent[path[-1]] = draw(st.floats() | st.integers())
            elif kind in ("number", "replace"):
                parent[path[-1]] = draw(JSON | st.sampled_from(
                    [math.nan, math.inf, -1, 0, 10**400, "1.5", [], {}, [[1.0]], True]))
            elif kind == "delete":
                del parent[path[-1]]
            elif isinstance(parent, dict):
                parent[draw(st.text(max_size=12))] = draw(JSON)
            elif isinstance(parent, list):
                parent.append(draw(JSON))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed or replaced this path
    text = json.dumps(data)
    return draw(byte_edits(text.encode())) if draw(st.integers(0, 5)) == 0 else text.encode()


@FUZZ_SETTINGS
@given(data=st.data())
def test_result_loader_takes_any_file(tmp_path_factory, robot, result_json, data):
    path = tmp_path_factory.mktemp("result") / "result.json"
    path.write_bytes(data.draw(result_files(result_json)))

    def load():
        result = load_result(path)
        assert isinstance(result, IdentificationResult)
        result.uncertainty()
        result.standard_uncertainty()
        return result

    _expect_value_or_dynid_error(load)
