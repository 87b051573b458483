"""The recording options of ``dynid identify`` and ``dynid validate``: trims per file, tables
without a header or time column, recordings split over files, column maps, time stamps."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import arm_files, run_cli

import dynid
from dynid.cli import main
from dynid.identify import (
    ColumnMap,
    Processing,
    load_result,
    read_csv,
    read_npz,
    validate,
)

FAST = ["--method", "ols", "--cutoff", "none", "--decimate", "1"]


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    """The two-joint arm, its file, and two recordings (NPZ) of different motions."""
    folder = tmp_path_factory.mktemp("readers_cli")
    paths = []
    for seed in (1, 2):
        robot_file, robot, npz = arm_files(folder, seed=seed, name=f"run{seed}")
        paths.append(npz)
    return robot, str(robot_file), [str(p) for p in paths], folder


def test_validate_trims_each_file_as_told_not_as_the_training(arm, tmp_path, capsys):
    """The training's --skip stays with the training: validate uses each file whole unless
    --trim trims it, and says what it used."""
    robot, robot_file, (train, test), _ = arm
    result = tmp_path / "r.json"
    code, out, _ = run_cli(["identify", robot_file, train, "-o", str(result), "--skip", "100",
                         *FAST], capsys)
    assert code == 0 and load_result(result).processing.skip == 100
    code, out, _ = run_cli(["validate", str(result), test], capsys)
    assert code == 0
    assert f"recording    {test}: 400 samples at 100 Hz; used as recorded" in out
    whole = validate(robot, load_result(result), read_npz(test),
                     processing=Processing(cutoff=None, decimate=1))
    printed = float(out.split("overall relative error")[1].split()[0])
    assert printed == pytest.approx(whole.overall_relative_error, abs=1e-3)
    code, out, _ = run_cli(["validate", str(result), test, "--trim", f"{test}=1s:50"], capsys)
    assert code == 0
    assert "trimmed 100 samples at the start and 50 at the end (1s:50)" in out
    part = validate(robot, load_result(result), read_npz(test).trim(100, 50),
                    processing=Processing(cutoff=None, decimate=1))
    printed = float(out.split("overall relative error")[1].split()[0])
    assert printed == pytest.approx(part.overall_relative_error, abs=1e-3)


def test_trims_per_training_file(arm, tmp_path, capsys):
    robot, robot_file, (one, two), _ = arm
    out_file = tmp_path / "r.json"
    code, out, _ = run_cli(["identify", robot_file, one, two, "-o", str(out_file), "--trim",
                         "run1.npz=30:10", "--trim", f"{two}=0.5s", *FAST], capsys)
    assert code == 0, out
    assert f"recording    {one}: 360 samples at 100 Hz; run1.npz: trimmed 30 samples at the " \
        "start and 10 at the end (30:10)" in out
    assert "run2.npz: trimmed 50 samples at the start and 0 at the end (0.5s:0)" in out
    want = dynid.OLS().fit(dynid.IdentificationData(
        robot, [read_npz(one, trim="30:10"), read_npz(two, trim="50")],
        processing=Processing(cutoff=None, decimate=1))).base_params_
    np.testing.assert_allclose(load_result(out_file).base_params, want, rtol=1e-9)


@pytest.mark.parametrize(("trim", "message"), [
    ("other.npz=5", r"--trim 'other.npz=5': 'other.npz' is none of the recordings"),
    ("run1.npz=5:x", r"trim end: expected a whole number of samples ≥ 0 or seconds as text "
                     r"ending in 's', found 'x'"),
    ("run1.npz=395", r"run1.npz: trim 395:0 drops 395 \+ 0 of its 400 samples"),
])
def test_bad_trims_exit_2(arm, tmp_path, capsys, trim, message):
    import re

    _, robot_file, (one, _), _ = arm
    code, _, err = run_cli(["identify", robot_file, one, "-o", str(tmp_path / "r.json"),
                         "--trim", trim, *FAST], capsys)
    assert code == 2 and re.search(r"^dynid: error: .*" + message, err), err
    assert not (tmp_path / "r.json").exists()


def test_tables_without_header_time_split_or_mapped(arm, tmp_path, capsys):
    """The same recording as a whitespace table without header or time column, as two files,
    and as motor angles behind gears with a column-map file, identifies as the NPZ does."""
    _, robot_file, (one, _), _ = arm
    rec = read_npz(one)
    reference = tmp_path / "npz.json"
    assert main(["identify", robot_file, one, "-o", str(reference), *FAST]) == 0
    want = load_result(reference).base_params
    bare = tmp_path / "bare.txt"
    np.savetxt(bare, np.column_stack([np.degrees(rec.positions), rec.velocities,
                                      rec.accelerations, rec.output]), fmt="%.17g")
    q = tmp_path / "q.csv"
    np.savetxt(q, rec.positions, delimiter=",", fmt="%.17g", header="a,b", comments="")
    tau = tmp_path / "tau.csv"
    np.savetxt(tau, rec.output, delimiter=",", fmt="%.17g")
    gears = ColumnMap(np.diag([50.0, -30.0]), joint_offset=[0.1, 0.0])
    motors = tmp_path / "motors.csv"
    np.savetxt(motors, np.column_stack([rec.time, gears.to_columns(rec.positions),
                                        rec.output / [50.0, -30.0]]), delimiter=",",
               fmt="%.17g", header="t,m1,m2,e1,e2", comments="")
    mapfile = tmp_path / "gears.yaml"
    mapfile.write_text("matrix: [[50, 0], [0, -30]]\njoint_offset: [0.1, 0]\n")
    runs = {
        "bare": [str(bare), "--delimiter", "space", "--header", "no", "--rate", "100",
                 "--columns", "positions=0,1", "--columns", "velocities=2,3", "--columns",
                 "accelerations=4,5", "--columns", "output=6,7", "--units", "positions=deg"],
        "split": [f"positions={q},output={tau}", "--rate", "100"],
        "mapped": [str(motors), "--columns", "time=t", "--columns", "positions=m1,m2",
                   "--columns", "output=e1,e2", "--column-map", str(mapfile)],
    }
    for name, args in runs.items():
        out = tmp_path / f"{name}.json"
        code, printed, err = run_cli(["identify", robot_file, *args, "-o", str(out), *FAST],
                                  capsys)
        assert code == 0, err
        # Differentiated positions (split, mapped) identify close to the recorded derivatives.
        rtol = 1e-6 if name == "bare" else 0.05
        np.testing.assert_allclose(load_result(out).base_params, want, rtol=rtol,
                                   atol=rtol * np.abs(want).max())
    assert "columns mapped to coordinates by a 2×2 column map" in printed
    code, _, err = run_cli(["identify", robot_file, "positions=q.csv;output=tau.csv", *FAST],
                        capsys)
    assert code == 2 and "recording 'positions=q.csv;output=tau.csv': expected a file, or " \
        "SIGNAL=FILE pairs separated by commas" in err
    code, _, err = run_cli(["identify", robot_file, str(bare), "--delimiter", "space", *FAST],
                        capsys)
    assert code == 2 and "bare.txt: CSV recordings need --columns for ['output', " \
        "'positions', 'time'] (or --rate for a file without a time column)" in err


def test_time_stamps_from_the_command_line(arm, tmp_path, capsys):
    _, robot_file, (one, _), _ = arm
    rec = read_npz(one)
    jittered = rec.time + np.random.default_rng(4).uniform(-2e-3, 2e-3, rec.n_samples)
    path = tmp_path / "jitter.csv"
    np.savetxt(path, np.column_stack([jittered, rec.positions, rec.output]), delimiter=",",
               fmt="%.17g", header="t,a,b,y1,y2", comments="")
    cols = ["--columns", "time=t", "--columns", "positions=a,b", "--columns", "output=y1,y2"]
    code, _, err = run_cli(["identify", robot_file, str(path), *cols, "--timestamps", "strict",
                         *FAST], capsys)
    assert code == 2 and "jitter.csv (time): irregular time stamps: 400 stamps" in err
    code, out, err = run_cli(["identify", robot_file, str(path), *cols, "--timestamps", "uniform",
                           "-o", str(tmp_path / "u.json"), *FAST], capsys)
    assert code == 0 and "time stamps replaced by their least-squares line" in out
    assert read_csv(path, time="t", positions=["a", "b"], output=["y1", "y2"],
                    timestamps="uniform").is_uniform(1e-9)


def test_help_documents_the_trim_syntax(capsys):
    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--trim [FILE=]START[:END]" in out and "run1.csv=500:20" in out
    assert "validate does not apply it; use --trim per file" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--trim", "run1.npz=5", "--trim", "run1.npz=6"], r"--trim: .*run1.npz trimmed twice"),
    (["--columns", "positions=flat:x"], r"--columns positions='flat:x': expected flat:N or "
                                        r"flat:N:COL \(N values per sample\), e.g. "
                                        r"positions=flat:7"),
    (["--columns", "time=a,b", "--columns", "positions=a", "--columns", "output=b"],
     r"--columns time='a,b': expected one column"),
    (["--rate", "0"], r"argument --rate: expected a finite number in \[0.001, 1e\+06\]"),
    (["--timestamps", "fix"], r"argument --timestamps: invalid choice: 'fix'"),
])
def test_bad_recording_options_exit_2(arm, tmp_path, capsys, args, message):
    import re

    _, robot_file, (one, _), folder = arm
    table = folder / "t.csv"
    table.write_text("a,b\n" + "\n".join(f"{k},{k}" for k in range(20)))
    target = str(table) if "--columns" in args else one
    code, _, err = run_cli(["identify", robot_file, target, "-o", str(tmp_path / "r.json"),
                         *args, *FAST], capsys)
    assert code == 2 and re.search(message, err), err
