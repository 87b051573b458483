"""``dynid identify`` with the weights of the outputs: ``--wls-iterations``, ``--sigma``
(values or a file) and ``--noise-covariance`` (a file) reach the estimator and the result;
bad values exit with status 2 and a message naming the option, before anything is
computed."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import arm_files, run_cli

import dynid
from dynid.identify import (
    OLS,
    WLS,
    GaussMarkov,
    IdentificationData,
    PhysicallyConsistent,
    load_result,
    read_npz,
)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The two-joint arm's robot file and a recording of it with unequal output noise."""
    folder = tmp_path_factory.mktemp("weights")
    robot_file, _, npz = arm_files(folder, noise=[1e-2, 1e-3])
    return {"robot": str(robot_file), "npz": str(npz), "folder": folder}


def _data(files):
    robot = dynid.load_robot(files["robot"])
    return IdentificationData(robot, read_npz(files["npz"], robot=robot))


@pytest.mark.parametrize(("options", "estimator"), [
    (["--method", "wls"], WLS()),
    (["--method", "wls", "--wls-iterations", "1"], WLS(iterations=1)),
    (["--method", "wls", "--sigma", "0.02,0.001"], WLS(sigma=[0.02, 0.001])),
    (["--method", "wls", "--sigma", "{folder}/sigma.txt"], WLS(sigma=[0.02, 0.001])),
    (["--method", "wls", "--noise-covariance", "{folder}/cov.csv"],
     WLS(noise_covariance=[[4e-4, 1e-6], [1e-6, 1e-6]])),
    (["--method", "consistent", "--wls-iterations", "2"], PhysicallyConsistent(
        wls_iterations=2)),
    (["--method", "consistent", "--sigma", "0.02,0.001"], PhysicallyConsistent(
        sigma=[0.02, 0.001])),
    (["--method", "gauss-markov", "--sigma", "0.02,0.001"], GaussMarkov(
        covariance=np.diag([0.02, 0.001]) ** 2)),
    (["--method", "ols"], OLS()),
])
def test_weight_options_reach_the_result(files, tmp_path, capsys, options, estimator):
    folder = files["folder"]
    (folder / "sigma.txt").write_text("# noise σ per joint, N·m\n0.02\n0.001\n")
    (folder / "cov.csv").write_text("4e-4, 1e-6\n1e-6, 1e-6\n")
    out = tmp_path / "result.json"
    argv = ["identify", files["robot"], files["npz"], "-o", str(out),
            *[o.format(folder=folder) for o in options]]
    code, printed, err = run_cli(argv, capsys)
    assert code == 0, err
    result = load_result(out)
    want = estimator.fit(_data(files)).result_
    np.testing.assert_allclose(result.base_params, want.base_params, rtol=1e-7,
                               atol=1e-10 * np.abs(want.base_params).max())
    assert result.settings == json.loads(json.dumps(want.settings, default=np.ndarray.tolist))
    if "weighting" in want.solver:
        assert result.solver["weighting"]["source"] == want.solver["weighting"]["source"]
        assert result.solver["weighting"].get("iterations") == \
            want.solver["weighting"].get("iterations")
        assert re.search(r"weights      σ (residuals|given)", printed)
    else:
        assert "weighting" not in result.solver and "weights " not in printed


@pytest.mark.parametrize(("options", "message"), [
    (["--method", "wls", "--sigma", "0.1"],
     r"--sigma: expected one noise σ > 0 per output \(shoulder, elbow\), in the output's unit: "
     r"2 values, found 1 values \(\[0.1\]\); e.g. --sigma 0.1,0.1"),
    (["--method", "wls", "--sigma", "0.1,nan"], r"--sigma\[1\] \(elbow\): expected a finite "
                                                r"σ > 0, found nan"),
    (["--method", "wls", "--sigma", "0.1,-1"], r"--sigma\[1\] \(elbow\): expected a finite σ"),
    (["--method", "wls", "--sigma", "0.1,abc"], r"--sigma: expected comma-separated noise σ, "
                                                r"one per output, or a file of them, found "
                                                r"'0.1,abc'"),
    (["--method", "wls", "--sigma", "{folder}/bad.txt"],
     r"--sigma file '.*bad.txt': line 2, column 2: expected a number, found 'x'"),
    (["--method", "wls", "--sigma", "{folder}"], r"--sigma: expected comma-separated noise σ"),
    (["--method", "wls", "--noise-covariance", "{folder}/missing.csv"],
     r"--noise-covariance file '.*missing.csv' does not exist"),
    (["--method", "wls", "--noise-covariance", "{folder}/ragged.csv"],
     r"--noise-covariance file '.*ragged.csv': line 2: expected 2 numbers like the first "
     r"row, found 1"),
    (["--method", "wls", "--noise-covariance", "{folder}/indefinite.csv"],
     r"--noise-covariance: expected a positive definite covariance.*shoulder and elbow "
     r"correlate by 3"),
    (["--method", "wls", "--noise-covariance", "{folder}/binary.csv"],
     r"--noise-covariance file '.*binary.csv' is not UTF-8 text"),
    (["--method", "wls", "--sigma", "0.1,0.1", "--noise-covariance", "{folder}/ragged.csv"],
     r"--noise-covariance file"),
    (["--method", "wls", "--sigma", "0.1,0.1", "--wls-iterations", "3"],
     r"--wls-iterations: the weights are given \(--sigma\), so there is nothing to iterate"),
    (["--method", "ols", "--sigma", "0.1,0.1"], r"--sigma: applies to --method wls or "
                                                r"consistent or gauss-markov, not ols"),
    (["--method", "gauss-markov", "--wls-iterations", "2"],
     r"--wls-iterations: applies to --method wls or consistent, not gauss-markov"),
])
def test_bad_weight_options_exit_2(files, tmp_path, capsys, monkeypatch, options, message):
    folder = files["folder"]
    (folder / "bad.txt").write_text("0.1\n0.2 x\n")
    (folder / "ragged.csv").write_text("1, 0\n0\n")
    (folder / "indefinite.csv").write_text("1, 3\n3, 1\n")
    (folder / "binary.csv").write_bytes(bytes(range(256)))

    def computed(*args, **kwargs):
        raise AssertionError("the command computed before checking its weights")

    monkeypatch.setattr(IdentificationData, "__init__", computed)
    argv = ["identify", files["robot"], files["npz"], "-o", str(tmp_path / "r.json"),
            *[o.format(folder=folder) for o in options]]
    code, _, err = run_cli(argv, capsys)
    assert code == 2, err
    assert re.search(r"^dynid: error: " + message, err), err
    assert "Traceback" not in err


@pytest.mark.parametrize(("value", "message"), [
    ("0", r"--wls-iterations: expected a whole number from 1 to 1000, found '0' \(or auto\)"),
    ("x", r"--wls-iterations: expected a whole number, found 'x' \(or auto\)"),
])
def test_bad_iteration_counts_are_refused_as_they_are_parsed(files, capsys, value, message):
    code, _, err = run_cli(["identify", files["robot"], files["npz"], "--wls-iterations", value],
                        capsys)
    assert code == 2
    assert re.search(r"error: argument " + message, err), err
