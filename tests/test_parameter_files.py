"""Parameter files: YAML and JSON give back the same model and result; bad files are named."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from conftest import arm_files

import dynid
from dynid.errors import DataError
from dynid.export import load_parameters, save_parameters
from dynid.hardware import smooth_coulomb


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("arm")
    _, robot, npz = arm_files(folder)
    robot = smooth_coulomb(robot, joint=0.05)
    bare = robot.with_terms(robot.terms[:1])  # the model with one term left out
    rec = dynid.read_npz(npz)
    results = {m: dynid.WLS().fit(dynid.IdentificationData(m, rec)).result_
               for m in (robot, bare)}
    return folder, rec, results


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json"])
def test_a_parameter_file_gives_back_the_model_and_the_result(fitted, suffix):
    folder, rec, results = fitted
    for k, (robot, result) in enumerate(results.items()):
        path = save_parameters(result, folder / f"p{k}{suffix}", robot=robot)
        back = load_parameters(path)
        assert back.robot.parameters.names == robot.parameters.names
        assert [getattr(t, "smoothing", 0) for t in back.robot.terms] == \
            [getattr(t, "smoothing", 0) for t in robot.terms]
        assert back.robot.output == robot.output
        for name in ("params", "cov", "base_params", "base_cov", "base_matrix",
                     "noise_covariance", "training_rmse"):
            np.testing.assert_array_equal(getattr(back.result, name), getattr(result, name))
        assert back.result.base_names == result.base_names
        assert back.result.settings == result.settings
        assert back.result.processing == result.processing
        # The model given back predicts what the identified one predicts.
        np.testing.assert_array_equal(
            dynid.validate(back.robot, back.result, rec).predicted,
            dynid.validate(robot, result, rec).predicted)


def test_the_tables_are_readable_and_hold_sigma(fitted):
    folder, _, results = fitted
    robot, result = next(iter(results.items()))
    data = yaml.safe_load(save_parameters(result, folder / "p.yaml", robot=robot).read_text())
    rows = {r["name"]: r for r in data["parameters"]}
    assert rows["link1.m"]["unit"] == "kg" and rows["link1.m"]["group"] == "link"
    std = np.sqrt(np.diag(result.base_cov))
    assert [r["std"] for r in data["base"]] == pytest.approx(std, rel=1e-12)
    assert [r["name"] for r in data["base"]] == list(result.base_names)
    # A robot file is named where it is, so the file reloads from anywhere.
    assert data["robot"] == str((folder / "arm2.yaml").resolve())


def test_an_edited_value_is_what_loads(fitted):
    folder, _, results = fitted
    robot, result = next(iter(results.items()))
    path = save_parameters(result, folder / "edit.json", robot=robot)
    data = json.loads(path.read_text())
    data["parameters"][0]["value"] = 1.5
    path.write_text(json.dumps(data))
    assert load_parameters(path).result.params[0] == 1.5


def test_bad_parameter_files_are_named(fitted, tmp_path):
    _, _, results = fitted
    robot, result = next(iter(results.items()))
    with pytest.raises(DataError, match="suffix"):
        save_parameters(result, tmp_path / "p.txt", robot=robot)
    with pytest.raises(DataError, match="not those of the robot"):
        save_parameters(result, tmp_path / "p.yaml", robot=dynid.load_robot("panda"))
    path = save_parameters(result, tmp_path / "p.yaml", robot=robot)
    good = yaml.safe_load(path.read_text())

    def broken(**change):
        data = {**good, **change}
        data = {k: v for k, v in data.items() if v is not None}
        path.write_text(yaml.safe_dump(data))
        return path

    with pytest.raises(DataError, match="not a dynid parameter file"):
        load_parameters(broken(format="dynid-result"))
    with pytest.raises(DataError, match="base: missing entry"):
        load_parameters(broken(base=None))
    with pytest.raises(DataError, match=r"parameters\[0\]: expected an entry with"):
        load_parameters(broken(parameters=[{"name": "link1.m"}]))
    with pytest.raises(DataError, match=r"model.terms\[0\]: no term"):
        load_parameters(broken(model={"terms": [{"parameters": ["elbow.fq"]}]}))
    with pytest.raises(DataError, match="robot: robot 'no-such-robot': not a robot file"):
        load_parameters(broken(robot="no-such-robot"))
    with pytest.raises(DataError, match="parameter file"):
        load_parameters(tmp_path / "missing.yaml")
