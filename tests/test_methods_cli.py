"""``dynid payload``, ``dynid gains``, ``dynid identify --essential`` and their files and report
sections: each command gives what the Python API gives on the same files, its file reads back
whole, and bad input exits 2 with a message that names it."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from conftest import DATA, run_cli

import dynid
from dynid.cli import main
from dynid.demo import true_parameters
from dynid.hardware import FourierReference
from dynid.identify import (
    OLS,
    EssentialParameters,
    IdentificationData,
    essential_parameters,
    identify_drive_gains,
    identify_payload,
    load_drive_gains,
    load_payload,
    load_result,
    read_npz,
    save_npz,
)
from dynid.identify.gains import with_torque_constants
from dynid.models import Body, LinkInertia

BOX = LinkInertia(1.5, (0.1, 0.02, 0.0), (0.002, 0.0, 0.0, 0.003, 0.0, 0.003))
CONSTANTS = (0.12, 0.11, 0.13, 0.10, 0.08, 0.09, 0.07)  # N·m/A


def _runs(robot, folder, prefix, payload, noise, rng, seed=1, duration=8.0):
    """Runs of ``robot`` (its priors perturbed by ±10 %) along a Fourier (``seed``)
    motion without and with ``payload``, of joint
    torques (noise ``noise[0]``) and currents (noise ``noise[1]``), saved as
    ``<prefix>torque-empty.npz``... Returns the paths."""
    t = np.arange(0.0, duration, 0.01)
    q, v, a = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0,
                                      seed=seed)(t)
    theta = true_parameters(robot, np.random.default_rng(0))
    paths = {}
    for kind, model, sigma in (("torque", robot.with_output("joint_torque"), noise[0]),
                               ("current", robot.with_output("current"), noise[1])):
        for load, m in (("empty", model), ("loaded", replace(model, bodies=(payload,)))):
            y = dynid.Regressor(m).predict(q, v, a, theta)
            y = y + sigma * rng.standard_normal(y.shape)
            rec = dynid.Recording(t, q, y, velocities=v, accelerations=a,
                                  names=robot.joint_names, output_kind=m.output)
            key = f"{prefix}{kind}-{load}"
            paths[key] = str(save_npz(rec, folder / f"{key}.npz"))
    return paths


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The two-joint arm's robot file with runs along one Fourier motion without and with a
    box on link2 (joint torques, noise 0.01 N·m; currents, noise 1e-3 A) and a torque run
    along another motion for validation; the Panda's runs with the box on its flange (its
    torque constants those of the drive-gain study); results of both identified by WLS from
    the torque run without the box."""
    folder = tmp_path_factory.mktemp("methods")
    robot_file = folder / "arm2.yaml"
    robot_file.write_text((DATA / "arm2.yaml").read_text())
    arm = dynid.load_robot(robot_file)
    panda = with_torque_constants(dynid.load_robot("panda"), CONSTANTS).with_output(
        "joint_torque")
    rng = np.random.default_rng(0)
    paths = {"robot": str(robot_file), "folder": folder}
    paths.update(_runs(arm, folder, "", Body("box", "link2", BOX, known=True), (0.01, 1e-3),
                       rng))
    paths.update(_runs(arm, folder, "other-", Body("box", "link2", BOX, known=True),
                       (0.01, 1e-3), rng, seed=2))
    paths.update(_runs(panda, folder, "panda-", Body("box", "flange", BOX, known=True),
                       (0.02, 2e-3), rng, duration=6.0))
    for name, robot, run in (("result", paths["robot"], "torque-empty"),
                             ("panda-result", "panda", "panda-torque-empty")):
        paths[name] = str(folder / f"{name}.json")
        assert main(["identify", robot, paths[run], "--method", "wls", "-o", paths[name],
                     "--quiet"]) == 0
    return paths


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_payload_command_is_the_api_and_its_file_reads_back(files, tmp_path, capsys):
    code, out, err = run_cli(["payload", files["panda-result"], files["panda-torque-loaded"],
                           "--link", "flange", "--name", "box", "-o", tmp_path / "p.json"],
                          capsys)
    assert code == 0, err
    assert "payload box on flange: mass" in out and "wrote" in out
    back = load_payload(tmp_path / "p.json")
    robot = dynid.load_robot("panda")
    api = identify_payload(robot, load_result(files["panda-result"]),
                           read_npz(files["panda-torque-loaded"], robot=robot), "flange",
                           name="box")
    np.testing.assert_allclose(back.params, api.params, rtol=1e-12)
    np.testing.assert_allclose(back.cov, api.cov, rtol=1e-12)
    assert back.fit.active == api.fit.active and back.covariance_method == api.covariance_method
    assert back.settings["recordings"] == [files["panda-torque-loaded"]]
    assert back.settings["epsilon"] == 1e-6
    assert abs(back.mass - 1.5) < 4 * back.mass_sigma
    assert dynid.load_payload is load_payload
    assert back.summary() == api.summary()


def test_gains_command_is_the_api_and_its_file_reads_back(files, tmp_path, capsys):
    code, out, err = run_cli(["gains", files["robot"], files["current-empty"],
                           files["current-loaded"], "--link", "link2", "--payload-mass", "1.5",
                           "--com", "0.1", "0.02", "0", "--inertia", "0.002", "0", "0",
                           "0.003", "0", "0.003", "-o", tmp_path / "g.json"], capsys)
    assert code == 0, err
    back = load_drive_gains(tmp_path / "g.json")
    robot = dynid.load_robot(files["robot"])
    api = identify_drive_gains(robot, read_npz(files["current-empty"], robot=robot),
                               read_npz(files["current-loaded"], robot=robot),
                               Body("payload", "link2", BOX, known=True))
    np.testing.assert_allclose(back.gains, api.gains, rtol=1e-12)
    np.testing.assert_allclose(back.joint_cov, api.joint_cov, rtol=1e-12)
    np.testing.assert_allclose(back.gains, robot.transmission.torque_constants, rtol=0.02)
    assert back.settings["payload"]["mass"] == 1.5 and back.settings["payload"]["parent"] == \
        "link2"
    assert back.summary() == api.summary() and "N·m/A" in out
    assert dynid.load_drive_gains is load_drive_gains
    assert back.robot(robot).output == "current"


def test_identify_essential_is_the_api(files, tmp_path, capsys):
    out_file = tmp_path / "ess.json"
    code, out, err = run_cli(["identify", files["robot"], files["torque-empty"], "--method", "ols",
                           "--essential", "0.02", "--validation", files["other-torque-empty"],
                           "-o", out_file, "--quiet"], capsys)
    assert code == 0, err
    assert "essential parameters:" in out and "refused" in out
    result = load_result(out_file)
    record = EssentialParameters.from_result(result)
    robot = dynid.load_robot(files["robot"])
    data = IdentificationData(robot, read_npz(files["torque-empty"], robot=robot))
    api = essential_parameters(data, OLS(), tolerance=0.02,
                               validation=read_npz(files["other-torque-empty"], robot=robot))
    assert record.steps == api.steps and record.kept == api.kept
    np.testing.assert_allclose(result.params, api.result.params, rtol=1e-12)
    # The other commands take it as any result.
    assert run_cli(["validate", out_file, files["other-torque-empty"]], capsys)[0] == 0
    code, _, err = run_cli(["export", out_file, "--urdf", tmp_path / "r.urdf"], capsys)
    assert code == 0, err
    # Held-out ends and the prior: the default validation.
    code, out, err = run_cli(["identify", files["robot"], files["torque-empty"], "--method", "wls",
                           "--essential", "--essential-fixed", "prior", "-o", out_file,
                           "--quiet"], capsys)
    assert code == 0, err
    record = EssentialParameters.from_result(load_result(out_file))
    assert (record.validation, record.fixed, record.tolerance) == ("holdout", "prior", 0.01)


def test_report_sections(files, tmp_path, capsys):
    ess, payload, gains = tmp_path / "ess.json", tmp_path / "p.json", tmp_path / "g.json"
    assert run_cli(["identify", "panda", files["panda-torque-empty"], "--method", "ols",
                 "--essential", "-o", ess, "--quiet"], capsys)[0] == 0
    assert run_cli(["payload", ess, files["panda-torque-loaded"], "--link", "flange", "-o",
                 payload], capsys)[0] == 0
    code, _, err = run_cli(["gains", "panda", files["panda-current-empty"],
                         files["panda-current-loaded"], "--link", "flange", "--payload-mass",
                         "1.5", "--com", "0.1", "0.02", "0", "--inertia", "0.002", "0", "0",
                         "0.003", "0", "0.003", "-o", gains], capsys)
    assert code == 0, err
    code, _, err = run_cli(["report", ess, files["panda-torque-empty"], "--payload", payload,
                         "--gains", gains, "-o", tmp_path / "r.html", "--quiet"], capsys)
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    sections = re.findall(r'<section id="([^"]+)"', html)
    assert sections[-4:] == ["essential", "payload", "drive-gains", "settings"]
    record = EssentialParameters.from_result(load_result(ess))
    assert record.removed and all(f"<td>{name}</td>" in html for name in record.removed)
    assert html.count("<td>left out: fixed</td>") == len(record.removed)  # base table
    assert f'data-value="{load_payload(payload).mass!r}"' in html
    for g in load_drive_gains(gains).gains:
        assert f'data-value="{float(g)!r}"' in html
    # A payload or gains of another robot.
    arm_gains = tmp_path / "arm-g.json"
    code, _, err = run_cli(["gains", files["robot"], files["current-empty"],
                         files["current-loaded"], "--link", "link2", "--payload-mass", "1.5",
                         "--com", "0.1", "0.02", "0", "-o", arm_gains], capsys)
    assert code == 0, err
    code, _, err = run_cli(["report", ess, files["panda-torque-empty"], "--gains", arm_gains,
                         "-o", tmp_path / "r.html"], capsys)
    assert code == 2 and "gains: of actuators motor1, motor2; the robot's are motor1" in err, err


# Bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("argv", "message"), [
    (["identify", "{robot}", "{torque-empty}", "--method", "ols", "--essential", "0"],
     r"argument --essential: expected a finite number in \(0, 1e\+06\], found 0"),
    (["identify", "{robot}", "{torque-empty}", "--essential", "0.01"],
     r"--essential: refits by weighted least squares; give --method ols, wls or gauss-markov "
     r"\(found consistent\)"),
    (["identify", "{robot}", "{torque-empty}", "--method", "ols", "--validation",
      "{torque-loaded}"], r"--validation: the recordings that choose the essential parameters;"
                          r" give --essential too"),
    (["identify", "{robot}", "{torque-empty}", "--method", "ols", "--essential", "1e5"],
     r"tolerance 100000: the validation error stays within it with every base parameter left "
     r"out \(the data cannot tell the model from none\)"),
    (["identify", "{robot}", "{torque-empty}", "--method", "ols", "--essential",
      "--validation", "{current-empty}"], r"validation\[0\]: recording: .*current"),
    (["payload", "{robot}", "{torque-loaded}", "--link", "link2"],
     r"result file '.*arm2.yaml' is not valid JSON"),
    (["payload", "{result}", "{torque-loaded}", "--link", "link9"], r"link9"),
    (["payload", "{result}", "{torque-loaded}", "--link", "link2"],
     r"payload payload: the run does not determine its ten parameters"),
    (["payload", "{result}", "{torque-loaded}"], r"the following arguments are required: "
                                                 r"--link"),
    (["gains", "{robot}", "{current-empty}", "{current-empty}", "--link", "link2",
      "--payload-mass", "1"], r"the same file as the run without the payload"),
    (["gains", "{robot}", "{current-empty}", "{current-loaded}", "--link", "link2",
      "--payload-mass", "0"], r"argument --payload-mass: expected a finite number in \(0"),
    (["gains", "{robot}", "{current-empty}", "{current-loaded}", "--link", "link2",
      "--payload-mass", "1", "--inertia", "1", "0", "0", "0", "0", "0"],
     r"inertia: not a physical inertia"),
    (["gains", "{robot}", "{current-empty}", "{other-current-loaded}", "--link", "link2",
      "--payload-mass", "1.5"], r"trajector"),
    (["report", "{result}", "{torque-empty}", "--payload", "{result}"],
     r"result.json: not a dynid payload file \(expected \"format\": \"dynid-payload\"\)"),
    (["report", "{result}", "{torque-empty}", "--gains", "{torque-empty}"],
     r"torque-empty.npz"),
])
def test_bad_input_exits_2(files, capsys, argv, message):
    code, _, err = run_cli([a.format(**files) for a in argv], capsys)
    assert code == 2, err
    assert re.search(message, err), err
    assert "Traceback" not in err


def test_a_damaged_essential_record_exits_2(files, tmp_path, capsys):
    import json

    path = tmp_path / "ess.json"
    assert run_cli(["identify", files["robot"], files["torque-empty"], "--method", "ols",
                 "--essential", "-o", path, "--quiet"], capsys)[0] == 0
    data = json.loads(path.read_text())
    data["diagnostics"]["essential"]["fixed"] = "half"
    path.write_text(json.dumps(data))
    code, _, err = run_cli(["report", path, files["torque-empty"], "-o", tmp_path / "r.html"],
                        capsys)
    assert code == 2 and "diagnostics.essential.fixed: expected 'zero' or 'prior', found " \
        "half" in err, err


def test_outputs_are_checked_before_computing(files, tmp_path, capsys):
    for argv in (["payload", files["result"], files["torque-loaded"], "--link", "link2", "-o",
                  files["torque-loaded"]],
                 ["gains", files["robot"], files["current-empty"], files["current-loaded"],
                  "--link", "link2", "--payload-mass", "1", "-o", tmp_path / "no" / "g.json"],
                 ["identify", files["robot"], files["torque-empty"], "--method", "ols",
                  "--essential", "--validation", files["torque-loaded"], "-o",
                  files["torque-loaded"]]):
        code, _, err = run_cli(argv, capsys)
        assert code == 2 and re.search(r"-o '.*'(: the folder| is also an input)", err), err
