"""Result files: every entry is checked against the format when a result is loaded."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import dynid
from dynid.identify import OLS, IdentificationData, Processing, Recording, load_result
from dynid.models.library import random_robot


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A result file of a small identification, and its JSON content."""
    robot = random_robot(2, seed=3)
    rng = np.random.default_rng(0)
    t = np.arange(0.0, 3.0, 0.01)
    q = np.sin(np.outer(t, np.arange(1, robot.n + 1)) + rng.uniform(0, 6, robot.n))
    v = np.cos(np.outer(t, np.arange(1, robot.n + 1)))
    a = -q
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior) + 1e-3 * rng.standard_normal(q.shape)
    rec = Recording(t, q, y, velocities=v, accelerations=a, output_kind=robot.output)
    est = OLS().fit(IdentificationData(robot, rec, processing=Processing(cutoff=None,
                                                                         decimate=1)))
    path = tmp_path_factory.mktemp("result") / "result.json"
    est.result_.save(path)
    return path, json.loads(path.read_text())


def _write(tmp_path, data) -> str:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_saved_result_loads_with_the_optional_entries(saved, tmp_path):
    path, data = saved
    result = load_result(path)
    assert result.n_samples == data["n_samples"]
    data = copy.deepcopy(data)
    data["diagnostics"]["note"] = "free-form"
    data["covariance_method"] = "sandwich"
    for key in ("robot_source", "output_names", "settings", "processing", "solver"):
        del data[key]
    assert load_result(_write(tmp_path, data)).names == result.names
    data["output_names"] = None
    assert load_result(_write(tmp_path, data)).output_names == ()
    data["diagnostics"]["whiteness"] = {"lag1": [0.1, 0.2]}
    with pytest.raises(dynid.DataError, match=r"bad.json: diagnostics.whiteness: malformed "
                                              r"entry \('names'\)"):
        load_result(_write(tmp_path, data))
    data["diagnostics"]["whiteness"] = dict(result.diagnostics["whiteness"], names=["j1"])
    with pytest.raises(dynid.DataError, match=r"diagnostics.whiteness: expected the test of 1 "
                                              r"outputs .*found shapes \(20, 2\)"):
        load_result(_write(tmp_path, data))
    names = result.diagnostics["whiteness"]["names"]
    data["diagnostics"]["whiteness"] = dict(result.diagnostics["whiteness"],
                                            names=[*names, "extra"],
                                            autocorrelation=[[0.0] * 3] * 20,
                                            statistic=[0.0] * 3, p_value=[1.0] * 3,
                                            sigma_factor=[1.0] * 3)
    with pytest.raises(dynid.DataError, match=r"diagnostics.whiteness: expected the test of 2 "
                                              r"outputs, found 3 names"):
        load_result(_write(tmp_path, data))


def _set(*keys, value):
    def mutate(data):
        target = data
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return mutate


def _drop(*keys):
    def mutate(data):
        target = data
        for k in keys[:-1]:
            target = target[k]
        del target[keys[-1]]
    return mutate


@pytest.mark.parametrize(("mutate", "message"), [
    (_set("parameters", "values", 3, value="abc"),
     r"parameters.values\[3\]: expected a finite number, found 'abc'"),
    (_set("parameters", "values", 0, value=float("nan")),
     r"parameters.values\[0\]: expected a finite number, found nan"),
    (_set("parameters", "values", 0, value=10**400),
     r"parameters.values\[0\]: expected a finite number, found 1000"),
    (_set("parameters", "values", 0, value=True),
     r"parameters.values\[0\]: expected a finite number, found True"),
    (_set("parameters", "values", value=[1.0, 2.0]),
     r"parameters.values: expected a list of numbers of length \d+, found 2"),
    (_set("parameters", "names", 1, value=7), r"parameters.names\[1\]: expected a name \(text\)"),
    (_set("parameters", "names", value="link1.m"),
     r"parameters.names: expected a list of names \(text\), found 'link1.m'"),
    (_set("base", "covariance", value=[[1.0]]),
     r"base.covariance: expected a list of rows of numbers of length \d+, found 1"),
    (_set("base", "matrix", 0, value=[1.0]),
     r"base.matrix\[0\]: expected a row of \d+ numbers \(the matrix is \d+ × \d+\)"),
    (_set("noise_covariance", value=[[1.0, "x"], [0.0, 1.0]]),
     r"noise_covariance\[0\]\[1\]: expected a finite number, found 'x'"),
    (_set("training_rmse", value=[]), r"training_rmse: expected one RMSE ≥ 0 per output"),
    (_set("n_samples", value=0), r"n_samples: expected a whole number ≥ 1, found 0"),
    (_set("n_samples", value="12"), r"n_samples: expected a whole number ≥ 1, found '12'"),
    (_set("n_samples", value=1.5), r"n_samples: expected a whole number ≥ 1, found 1.5"),
    (_set("output", value="torque"), r"output: expected one of joint_torque, motor_torque, "
                                     r"current, found 'torque'"),
    (_set("method", value=None), r"method: expected a name \(text\), found None"),
    (_set("output_names", value=["a"]), r"output_names: expected \d+ names, found \['a'\]"),
    (_set("settings", value=[1]), r"settings: expected a JSON object, found \[1\]"),
    (_set("diagnostics", value="ok"), r"diagnostics: expected a JSON object, found 'ok'"),
    (_set("covariance_method", value=3), r"covariance_method: expected a name \(text\)"),
    (_set("processing", "order", value="4"), r"processing: order: expected an integer"),
    (_set("processing", "cuttoff", value=5), r"processing: .*unknown keys \['cuttoff'\]"),
    (_set("extra", value=1), r"extra: unknown entry \(known: format, version, .*\)"),
    (_set("diagnostic", value={}), r"diagnostic: unknown entry; did you mean 'diagnostics'\?"),
    (_drop("base", "values"), r"base.values: missing entry"),
    (_drop("training_rmse"), r"training_rmse: missing entry"),
    (_set("version", value=True), r"version"),
])
def test_bad_entries_are_named_with_what_was_found(saved, tmp_path, mutate, message):
    _, data = saved
    data = copy.deepcopy(data)
    mutate(data)
    with pytest.raises(dynid.DataError, match=r"bad.json: " + message):
        load_result(_write(tmp_path, data))


def test_files_that_are_not_results(tmp_path):
    path = tmp_path / "r.json"
    for text, message in (("[1, 2]", r"not a dynid result file"),
                          ("{", r"is not valid JSON"),
                          ('{"format": "dynid-result", "version": 2}', r"version 2")):
        path.write_text(text)
        with pytest.raises(dynid.DataError, match=message):
            load_result(path)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    with pytest.raises(dynid.DataError, match=r"not UTF-8 text"):
        load_result(path)
    with pytest.raises(dynid.DataError, match=r"not a regular file"):
        load_result(tmp_path)
