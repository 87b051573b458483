"""Columns that are not joint coordinates (sums of joints, motor-side coordinates) mapped to
them as they are read, with positions, derivatives and efforts consistent: the efforts keep
the power."""

from __future__ import annotations

import numpy as np
import pytest

import dynid
from dynid.identify import ColumnMap, Recording, load_column_map, read_csv, read_npz, save_npz
from dynid.models import robot_from_mapping


def _motion(N=120, n=4, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(N) * 0.01
    f = rng.uniform(0.3, 1.5, n)
    q = np.sin(np.outer(t, f) + rng.uniform(0, 3, n))
    v = np.cos(np.outer(t, f) + rng.uniform(0, 3, n)) * f
    tau = rng.standard_normal((N, n))
    return t, q, v, tau


def _write(path, t, cols, dcols, tcols):
    n = cols.shape[1]
    header = ["t", *(f"c{j}" for j in range(n)), *(f"d{j}" for j in range(n)),
              *(f"e{j}" for j in range(n))]
    np.savetxt(path, np.column_stack([t, cols, dcols, tcols]), delimiter=",", fmt="%.17g",
               header=",".join(header), comments="")
    return {"time": "t", "positions": [f"c{j}" for j in range(n)],
            "velocities": [f"d{j}" for j in range(n)], "output": [f"e{j}" for j in range(n)]}


def test_summed_and_motor_side_columns_are_read_as_joints(tmp_path):
    """A log holding q1, q2, the bar angle q2 + q3 and the motor-side wrist angle
    q4 + 0.6697 q3, with their velocities and the efforts that do work on those columns."""
    t, q, v, tau = _motion()
    cols = np.column_stack([q[:, 0], q[:, 1], q[:, 1] + q[:, 2], q[:, 3] + 0.6697 * q[:, 2]])
    dcols = np.column_stack([v[:, 0], v[:, 1], v[:, 1] + v[:, 2], v[:, 3] + 0.6697 * v[:, 2]])
    M = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0.6697, 1.0]])
    ecols = np.linalg.solve(M.T, tau.T).T         # efforts on the columns: τ = Mᵀ τ_c
    spec = _write(tmp_path / "log.csv", t, cols, dcols, ecols)
    rec = read_csv(tmp_path / "log.csv", column_map=ColumnMap(M), **spec)
    np.testing.assert_allclose(rec.positions, q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rec.velocities, v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rec.output, tau, rtol=1e-12, atol=1e-12)
    # The same power on the columns and on the joints, sample by sample.
    np.testing.assert_allclose(np.sum(rec.output * rec.velocities, axis=1),
                               np.sum(ecols * dcols, axis=1), rtol=1e-10, atol=1e-12)
    assert rec.names == ("joint1", "joint2", "joint3", "joint4")
    assert rec.history[-1] == ("columns mapped to coordinates by a 4×4 column map: positions, "
                               "derivatives and efforts (τ = Mᵀ τ_columns)")
    # Read without the map, the file is the columns: a different recording.
    assert np.abs(read_csv(tmp_path / "log.csv", **spec).positions - q).max() > 0.1


def test_offsets_and_gears(tmp_path):
    """Motor angles behind gears with encoder offsets (per column) and joint zero offsets:
    column = M (q − joint_offset) + offset."""
    t, q, v, tau = _motion(n=3)
    ratios = np.array([50.0, -100.0, 30.0])
    joint_offset, offset = np.array([0, -np.pi / 2, 0.1]), np.array([1.0, 2.0, -3.0])
    cols = (q - joint_offset) * ratios + offset
    spec = _write(tmp_path / "m.csv", t, cols, v * ratios, tau / ratios)
    cmap = ColumnMap(np.diag(ratios), offset=offset, joint_offset=joint_offset)
    rec = read_csv(tmp_path / "m.csv", column_map=cmap, **spec)
    np.testing.assert_allclose(rec.positions, q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rec.velocities, v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rec.output, tau, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cmap.to_columns(q), cols, rtol=1e-12)
    # Units are converted before the map: the same log in degrees and mN·m.
    spec = _write(tmp_path / "deg.csv", t, np.degrees(cols), np.degrees(v * ratios),
                  1e3 * tau / ratios)
    deg = read_csv(tmp_path / "deg.csv", column_map=cmap, units={
        "positions": "deg", "velocities": "deg/s", "output": "mN·m"}, **spec)
    np.testing.assert_allclose(deg.positions, q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(deg.output, tau, rtol=1e-12, atol=1e-12)
    assert deg.units["positions"] == ("rad",) * 3 and deg.units["output"] == ("N·m",) * 3


def test_a_map_of_some_signals_only_and_currents(tmp_path):
    """Link-side torque sensors with motor-side encoders: only the positions and velocities
    are mapped. A current is per actuator and never mapped."""
    t, q, v, tau = _motion(n=2)
    M = np.array([[2.0, 0.0], [1.0, 1.0]])
    spec = _write(tmp_path / "s.csv", t, q @ M.T, v @ M.T, tau)
    rec = read_csv(tmp_path / "s.csv", column_map=ColumnMap(M, signals=("positions",
                                                                       "velocities")), **spec)
    np.testing.assert_allclose(rec.positions, q, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(rec.output, tau)
    current = read_csv(tmp_path / "s.csv", column_map=ColumnMap(M), units={"output": "A"},
                       **spec)
    np.testing.assert_array_equal(current.output, tau)
    assert current.output_kind == "current"
    assert "the output, a current, stays per actuator" in current.history[-1]


def test_a_prismatic_joint_behind_a_rotary_motor(tmp_path):
    """A slide driven by a motor turning 2000 rad per metre: the column is an angle, the joint
    a length; with the robot, the joint is in m and its effort in N, and the power is kept."""
    robot = robot_from_mapping({
        "kinematics": {"modified_dh": [{"joint": "turn"}, {"joint": "slide",
                                                            "type": "prismatic"}]},
        "links": {"link1": {"mass": 1.0, "com": [0.1, 0, 0]},
                  "link2": {"mass": 0.5, "com": [0, 0, 0.1]}}})
    t, q, v, tau = _motion(n=2)
    q[:, 1] *= 0.05
    M = np.diag([1.0, 2000.0])
    spec = _write(tmp_path / "slide.csv", t, q @ M.T, v @ M.T, np.linalg.solve(M.T, tau.T).T)
    rec = read_csv(tmp_path / "slide.csv", column_map=ColumnMap(M), robot=robot, **spec)
    assert rec.units["positions"] == ("rad", "m") and rec.units["output"] == ("N·m", "N")
    assert rec.names == robot.joint_names
    np.testing.assert_allclose(rec.positions, q, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(rec.output, tau, rtol=1e-12, atol=1e-12)
    with pytest.raises(dynid.DataError, match=r"column map: coordinate 1 is made of lengths and "
                                              r"angles, so its unit is unknown; pass robot="):
        read_csv(tmp_path / "slide.csv", column_map=ColumnMap([[1.0, 0.0], [1.0, 1.0]]),
                 units={"positions": ["mm", "rad"]}, **spec)


def test_the_npz_reader_maps_columns(tmp_path):
    t, q, v, tau = _motion(n=2)
    M = np.array([[1.0, 0.0], [1.0, 1.0]])
    rec = Recording(t, q @ M.T, np.linalg.solve(M.T, tau.T).T, velocities=v @ M.T)
    back = read_npz(save_npz(rec, tmp_path / "cols.npz"), column_map=ColumnMap(M))
    np.testing.assert_allclose(back.positions, q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(back.velocities, v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(back.output, tau, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (([[1, 0, 0], [0, 1, 0]],), {}, r"ColumnMap: expected a square matrix \(one row per column, "
                                    r"one column per coordinate\), found shape \(2, 3\); e.g."),
    (([[1, 1], [1, 1]],), {}, r"ColumnMap: the matrix is singular \(condition number .*\): the "
                              r"columns do not determine every coordinate"),
    (([[1, 0], [0, 0]],), {}, r"the matrix is singular"),
    (([[1, np.nan], [0, 1]],), {}, r"ColumnMap: expected finite numbers"),
    (([["a", 0], [0, 1]],), {}, r"ColumnMap: expected a square matrix of numbers, found"),
    ((np.eye(2),), {"offset": [1, 2, 3]}, r"ColumnMap offset: expected 2 finite numbers, one "
                                          r"per column, found \[1, 2, 3\]"),
    ((np.eye(2),), {"joint_offset": "x"}, r"ColumnMap joint_offset: expected 2 numbers"),
    ((np.eye(2),), {"signals": ("torque",)}, r"ColumnMap signals: expected some of positions, "
                                             r"velocities, accelerations, output"),
])
def test_bad_maps_are_refused(args, kwargs, message):
    with pytest.raises(dynid.DataError, match=message):
        ColumnMap(*args, **kwargs)


def test_a_map_that_does_not_fit_the_file_is_refused(tmp_path):
    t, q, v, tau = _motion(n=3)
    spec = _write(tmp_path / "w.csv", t, q, v, tau)
    with pytest.raises(dynid.DataError, match=r"w.csv: column map: it maps 2 columns, but "
                                              r"positions has 3; give one row per position "
                                              r"column"):
        read_csv(tmp_path / "w.csv", column_map=ColumnMap(np.eye(2)), **spec)
    with pytest.raises(dynid.DataError, match=r"w.csv: column map: output column 0 is in N but "
                                              r"its position is in rad; an effort on a length "
                                              r"is a force \(N\), on an angle a torque"):
        read_csv(tmp_path / "w.csv", column_map=ColumnMap(np.eye(3)), units={"output": "N"},
                 **spec)


def test_column_map_files(tmp_path):
    path = tmp_path / "tx40.yaml"
    path.write_text("# motor angles of the TX40\n"
                    "matrix:\n  - [32, 0]\n  - [0, -48]\n"
                    "joint_offset: [0, -pi/2]\noffset: [0.5, 0]\nsignals: [positions, output]\n")
    cmap = load_column_map(path)
    np.testing.assert_array_equal(cmap.matrix, [[32, 0], [0, -48]])
    np.testing.assert_allclose(cmap.joint_offset, [0, -np.pi / 2], rtol=1e-15)
    np.testing.assert_array_equal(cmap.offset, [0.5, 0])
    assert cmap.signals == ("positions", "output")
    for text, message in [
        ("offset: [1]\n", r"column map .*tx40.yaml'?: no matrix; e.g. matrix: \[\[1, 0\], "
                          r"\[1, 1\]\]"),
        ("matrix: [[1, 0], [0, x]]\n", r"tx40.yaml'?: matrix\[1\]\[1\]: expected a number or an "
                                       r"expression such as 'pi/2'"),
        ("matrix: [[1, 0], [0]]\n", r"matrix\[1\]: expected a list of 2 numbers, found a list "
                                    r"of 1"),
        ("matrix: [[1, 0], [0, 1]]\ncolour: red\n", r"tx40.yaml'?.colour: unknown key"),
        ("matrix: [[1, 2], [2, 4]]\n", r"tx40.yaml'?: ColumnMap: the matrix is singular"),
        ("matrix: 3\n", r"matrix: expected a list of rows"),
        ("matrix: [[1, 0]\n", r"column map .*tx40.yaml'? is not valid YAML"),
    ]:
        path.write_text(text)
        with pytest.raises(dynid.DataError, match=message):
            load_column_map(path)


def test_units_of_mapped_columns_are_checked(tmp_path):
    t, q, v, tau = _motion(n=2)
    spec = _write(tmp_path / "u.csv", t, q, v, tau)
    cmap = ColumnMap(np.eye(2))
    with pytest.raises(dynid.DataError, match=r"u.csv: units of velocities column 1: m/s, but "
                                              r"its position is in rad; they must measure the "
                                              r"same quantity"):
        read_csv(tmp_path / "u.csv", column_map=cmap, units={"velocities": ["rad/s", "m/s"]},
                 **spec)
    with pytest.raises(dynid.DataError, match=r"u.csv: units of positions: expected one unit or "
                                              r"2 \(text\), found \['rad'\]"):
        read_csv(tmp_path / "u.csv", column_map=cmap, units={"positions": ["rad"]}, **spec)
    with pytest.raises(dynid.DataError, match=r"unknown position unit 'furlong'"):
        read_csv(tmp_path / "u.csv", column_map=cmap, units={"positions": "furlong"}, **spec)
