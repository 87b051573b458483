"""Fuzzing harness of the ``dynid`` command: valid argument lists of every command, mutated.

``dynid.cli.main(argv)`` runs in-process. Whatever the arguments, it must end with exit
status 0 (success) or 2 (bad input or usage: a DynidError, or argparse's usage error), never 1
(an internal error) nor an exception, within bounded time and memory. The demo's run itself
is replaced by a stub here (its options are what is fuzzed; the run takes minutes).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import warnings
from dataclasses import replace

import numpy as np
import pytest
from conftest import DATA, QUICK, arm_files, closed_loop_files
from fuzzing import FUZZ_SETTINGS, bounded
from hypothesis import event, given
from hypothesis import strategies as st

import dynid
from dynid import demo
from dynid.cli import build_parser, main
from dynid.hardware import FourierReference
from dynid.identify import save_npz
from dynid.models import Body, LinkInertia

pytestmark = pytest.mark.fuzz


CSV = ["--columns", "time=t", "--columns", "positions=shoulder,elbow", "--columns",
       "output=tau_shoulder,tau_elbow"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """Input files of every kind, and the valid argument lists of each command."""
    folder = tmp_path_factory.mktemp("cli-fuzz")
    robot_file, robot, npz = arm_files(folder, csv=True)
    excitation, loop = closed_loop_files(folder, robot)
    (folder / "binary.bin").write_bytes(bytes(range(256)) * 16)
    (folder / "text.txt").write_text("not: [a, robot\n")
    (folder / "folder").mkdir()
    out = folder / "out"
    out.mkdir()
    paths = {"robot": str(robot_file), "npz": str(npz), "csv": str(folder / "run.csv"),
             "result": str(folder / "result.json"), "traj": str(folder / "traj.json"),
             "out": str(out), "other": str(arm_files(folder, seed=2, name="other")[2]),
             "excitation": str(excitation), "loop": str(loop), **_method_runs(folder)}
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["identify", paths["robot"], paths["npz"], "-o", paths["result"],
                     "--method", "ols"]) == 0
        assert main(["design", paths["robot"], "-o", paths["traj"], *QUICK]) == 0
        assert main(["identify", "panda", paths["panda_empty"], "-o", paths["panda_result"],
                     "--method", "wls", "--quiet"]) == 0
        assert main(["gains", paths["robot"], paths["current_empty"], paths["current_loaded"],
                     "--link", "link2", "--payload-mass", "1.5", "--com", "0.1", "0", "0",
                     "-o", paths["gains"]]) == 0
    commands = {
        "demo": ["demo", "--robot", "{robot}", "--seed", "0", "--periods", "1", "--rate", "50",
                 "--noise", "0.02", "--quick"],
        "robots": ["robots"],
        "info": ["info", "{robot}", "--base"],
        "design": ["design", "{robot}", "-o", "{out}/t.json", *QUICK],
        "design-previous": ["design", "{robot}", "-o", "{out}/t.json", "--previous", "{traj}",
                            "--criterion", "d-optimal", *QUICK],
        "identify": ["identify", "{robot}", "{npz}", "-o", "{out}/r.json", "--method", "ols",
                     "--decimate", "2"],
        "identify-csv": ["identify", "{robot}", "{csv}", "-o", "{out}/r.json", "--method",
                         "wls", *CSV],
        "identify-consistent": ["identify", "{robot}", "{npz}", "-o", "{out}/r.json",
                                "--mass-bounds", "0.5", "--epsilon", "1e-6"],
        "identify-iv": ["identify", "{robot}", "{npz}", "-o", "{out}/r.json", "--method", "iv",
                        "--excitation", "{excitation}", "--loop", "{loop}", "--decimate", "2"],
        "validate": ["validate", "{result}", "{npz}"],
        "validate-csv": ["validate", "{result}", "{csv}", "--robot", "{robot}", *CSV],
        "report": ["report", "{result}", "{npz}", "--validation", "{csv}", "--robot", "{robot}",
                   *CSV, "-o", "{out}/r.html", "--quiet"],
        "export": ["export", "{result}", "--urdf", "{out}/r.urdf", "--mjcf", "{out}/r.xml"],
        "identify-essential": ["identify", "{robot}", "{npz}", "-o", "{out}/r.json", "--method",
                               "ols", "--essential", "0.01", "--validation", "{other}"],
        "payload": ["payload", "{panda_result}", "{panda_loaded}", "--link", "flange", "-o",
                    "{out}/p.json", "--covariance", "unconstrained", "--decimate", "2"],
        "gains": ["gains", "{robot}", "{current_empty}", "{current_loaded}", "--link", "link2",
                  "--payload-mass", "1.5", "--com", "0.1", "0", "0", "-o", "{out}/g.json"],
        "report-gains": ["report", "{result}", "{npz}", "--gains", "{gains}", "-o",
                         "{out}/r.html", "--quiet"],
    }
    commands = {k: [a.format(**paths) for a in v] for k, v in commands.items()}
    values = [*VALUES, paths["robot"], paths["npz"], paths["csv"], paths["result"],
              paths["traj"], paths["excitation"], paths["loop"], str(folder / "binary.bin"),
              str(folder / "text.txt"),
              str(folder / "folder"), str(folder / "missing.npz"), f"{out}/new.json",
              f"{out}/plot.png", f"{folder}/missing/x.json", "panda", paths["gains"],
              paths["current_loaded"], paths["panda_result"], "link2", "flange", "prior"]
    parser = build_parser()
    options = {name: sorted(o for o in sub._option_string_actions if o.startswith("--"))
               for name, sub in parser._subparsers._group_actions[0].choices.items()}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(demo, "run_demo", lambda *args, **kwargs: None)
        patch.chdir(out)  # relative paths (a mutated -o, the default outputs) are written here
        yield {"commands": commands, "values": values, "options": options, "out": out,
               "paths": paths}
    shutil.rmtree(folder, ignore_errors=True)


def _method_runs(folder) -> dict[str, str]:
    """Runs for payload and drive gains: the two-joint arm's currents along one motion
    without and with a 1.5 kg box on link2, the Panda's torques without and with it on the
    flange (2 s at 100 Hz); and the names of the files the workspace writes from them."""
    arm = dynid.load_robot(DATA / "arm2.yaml")
    panda = dynid.load_robot("panda")
    t = np.arange(0.0, 4.0, 0.01)
    out = {"panda_result": str(folder / "panda.json"), "gains": str(folder / "gains.json")}
    rng = np.random.default_rng(0)
    for robot, link, key, kind, end in ((arm, "link2", "current", "current", 4.0),
                                        (panda, "flange", "panda", "joint_torque", 2.0)):
        robot = robot.with_output(kind)
        box = Body("box", link, LinkInertia(1.5, (0.1, 0.0, 0.0)), known=True)
        ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0, seed=1)
        motion = (t[t < end], *ref(t[t < end]))
        for load, model in (("empty", robot), ("loaded", replace(robot, bodies=(box,)))):
            y = dynid.Regressor(model).predict(*motion[1:], robot.prior)
            rec = dynid.Recording(motion[0], motion[1], y + 1e-3 * rng.standard_normal(
                y.shape), velocities=motion[2], accelerations=motion[3],
                names=robot.joint_names, output_kind=kind)
            out[f"{key}_{load}"] = str(save_npz(rec, folder / f"{key}-{load}.npz"))
    return out


VALUES = ["0", "-1", "1", "2", "3", "7", "0.5", "1e-320", "-0", "nan", "inf", "-inf", "1e999",
          "9" * 30, "1" + "0" * 5000, "", " ", "abc", "1,2", "1,nan", "auto", "none", "tab",
          "ols", "wls", "ml", "gauss-markov", "consistent", "iv", "didim", "SCS", "entropic",
          "euclidean",
          "actuator", "basis", "current", "motor_torque", "d-optimal", "=", "x=", "=1",
          "time=t", "time=t,t", "positions=shoulder,elbow", "positions=elbow,shoulder",
          "positions=shoulder", "positions=elbow,elbow", "output=tau_shoulder,tau_elbow",
          "positions=deg", "positions=deg,rad", "output=mA", "output=A", "positions=inc",
          "velocities=deg/s", "time=ms", "output=furlong", "torque=a", "output=positions",
          "shoulder=0.5", "elbow=nan", "wrist=1", "link2:0,0,0:1,1,1",
          "link2:-inf,-inf,-inf:inf,inf,inf", "link2:nan,0,0:1,1,1", "flange:0,0",
          "--", "-o", "--debug", "--help", "-h", "\x00", "é", "-5e-3"]


# Numbers for any option: whole ones stay small, since valid large counts (starts, samples,
# iterations) ask for long computations on purpose.
NUMBERS = st.floats().map(repr) | st.integers(-3, 12).map(str) | st.floats(1e-9, 1e3).map(repr)


@st.composite
def argument_lists(draw, workspace) -> list[str]:
    name = draw(st.sampled_from(sorted(workspace["commands"])))
    argv = list(workspace["commands"][name])
    command = argv[0]
    values = st.sampled_from(workspace["values"]) | NUMBERS
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        kind = draw(st.sampled_from(["option-value", "option-value", "value", "option",
                                     "delete", "duplicate"]))
        given = [i + 1 for i, a in enumerate(argv[:-1])
                 if a.startswith("--") and not argv[i + 1].startswith("-")]
        pos = draw(st.integers(1, max(len(argv) - 1, 1)))
        if kind == "option-value" and given:
            argv[draw(st.sampled_from(given))] = draw(values)
        elif kind == "value" and pos < len(argv):
            argv[pos] = draw(values)
        elif kind == "option":
            option = draw(st.sampled_from(workspace["options"][command]))
            extra = [option] + ([draw(values)] if draw(st.booleans()) else [])
            argv[pos + 1:pos + 1] = extra
        elif kind == "delete" and pos < len(argv):
            del argv[pos]
        elif pos < len(argv):
            argv.insert(pos, argv[pos])
    event(f"command {command}")
    return argv


def _exit_status(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", dynid.DynidWarning)
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: usage errors (2), --help (0)
            code = exc.code
    return code, err.getvalue()


@FUZZ_SETTINGS
@given(data=st.data())
def test_any_arguments_end_in_status_0_or_2(workspace, data):
    argv = data.draw(argument_lists(workspace))
    code, err = bounded(lambda: _exit_status(argv), seconds=30, megabytes=400)
    event(f"exit {code}")
    assert code in (0, 2), f"dynid {argv} exited {code}:\n{err}"
    assert "Traceback" not in err, err
    if code == 2:
        assert err.strip(), "a refusal must say why"


# Recordings of the right format whose numbers are odd, through identify and validate ------------
SCALES = [0.0, -1.0, 1e-300, 1e-12, 1e-3, 1e3, 1e10, 1e12, 1e300]


@st.composite
def odd_recordings(draw, workspace) -> dict:
    """The arrays of the workspace's recording after a few numeric edits."""
    with np.load(workspace["paths"]["npz"]) as archive:
        arrays = {k: archive[k] for k in archive.files}
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(["time", "positions", "velocities", "accelerations",
                                    "output"]))
        if key not in arrays:
            continue
        x = arrays[key].astype(float)
        kind = draw(st.sampled_from(["scale", "constant", "truncate", "jitter", "spike",
                                     "drop", "repeat"]))
        column = (slice(None), draw(st.integers(0, 1))) if x.ndim == 2 else slice(None)
        if kind == "scale":
            with np.errstate(over="ignore"):  # inf is one of the odd numbers
                x[column] *= draw(st.sampled_from(SCALES))
        elif kind == "constant":
            x[column] = draw(st.sampled_from([0.0, 1.0, -1e6]))
        elif kind == "spike":
            x[draw(st.integers(0, len(x) - 1))] = draw(st.sampled_from([1e300, -1e300, 1e-300,
                                                                        9e11, -9e11]))
        elif kind == "jitter" and key == "time":
            x = x + draw(st.floats(0, 0.02)) * np.random.default_rng(
                draw(st.integers(0, 9))).uniform(0, 0.5, x.shape) * np.diff(x[:2])[0]
        elif kind == "drop" and key in ("velocities", "accelerations"):
            del arrays[key]
            continue
        elif kind == "repeat":
            x = np.repeat(x, 2, axis=0)
        elif kind == "truncate":
            k = draw(st.integers(5, 60))
            arrays = {k2: v[:k] if k2 != "meta" else v for k2, v in arrays.items()}
            continue
        arrays[key] = x
    return arrays


PROCESSING = st.sampled_from([[], ["--cutoff", "none", "--decimate", "1"], ["--decimate", "7"],
                              ["--cutoff", "5"], ["--output-cutoff", "5"], ["--period", "2"],
                              ["--period", "2", "--harmonics-cutoff", "3"], ["--skip", "30"],
                              ["--derivatives", "positions"], ["--order", "12"],
                              ["--model-cutoff", "3"]])


@FUZZ_SETTINGS
@given(data=st.data())
def test_recordings_with_odd_numbers_end_in_status_0_or_2(workspace, data):
    path = workspace["out"] / "odd.npz"
    np.savez(path, **data.draw(odd_recordings(workspace)))
    method = data.draw(st.sampled_from(["ols", "wls", "gauss-markov", "ml", "consistent"]))
    processing = data.draw(PROCESSING)
    if data.draw(st.booleans()):
        argv = ["identify", workspace["paths"]["robot"], str(path), "-o",
                str(workspace["out"] / "odd.json"), "--method", method, *processing]
    else:
        argv = ["validate", workspace["paths"]["result"], str(path), *processing]
    code, err = bounded(lambda: _exit_status(argv), seconds=30, megabytes=400)
    event(f"{argv[0]} exit {code}")
    assert code in (0, 2), f"dynid {argv} exited {code}:\n{err}"
