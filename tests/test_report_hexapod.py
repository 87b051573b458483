"""The identification report of a Stewart–Gough platform identified from measured leg lengths:
every section is there, and its tables hold the hexapod's parameters (the platform's and each
leg's links, the shared universal-joint friction), the leg forces' errors as ``dynid.validate``
gives them, and the pseudo-inertia verdict of every link with parameters (not the virtual pose
links). The page is read back with ``html.parser`` (the reader of ``test_report``)."""

from __future__ import annotations

import numpy as np
import pytest
from test_report import SECTIONS, _read, _rows

import dynid
from dynid.demo import true_parameters
from dynid.hardware import FourierReference, SensorNoise, measure
from dynid.identify import OLS, IdentificationData, Processing, validate

PERIOD = 2.0


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    robot = dynid.load_robot("hexapod")
    theta = true_parameters(robot, np.random.default_rng(1))
    ref = FourierReference.random(robot, harmonics=3, frequency=1 / PERIOD, ramp=0.0,
                                  periods=4, seed=1)
    sim = measure(robot, theta, ref, 4 * PERIOD, rate=100.0, space="actuator",
                  noise=SensorNoise(position_step=1e-6, output_std=2.0), runs=2)
    processing = Processing(period=PERIOD, harmonics_cutoff=3.5 / PERIOD)
    result = OLS().fit(IdentificationData(robot, sim.measured[0],
                                          processing=processing)).result_
    path = dynid.write_report(robot, result, {"run1": sim.measured[0]},
                              tmp_path_factory.mktemp("hexapod") / "report.html",
                              validation={"run2": sim.measured[1]})
    return robot, result, sim.measured, _read(path)


def test_every_section_and_the_hexapod_title(case):
    *_, page = case
    assert page.sections == SECTIONS
    assert page.title == "Identification of hexapod"


def test_parameters_are_the_hexapod_s(case):
    robot, result, _, page = case
    standard = _rows(page, "standard")
    names = [r["parameter"][0] for r in standard]
    assert names == list(robot.parameters.names) == list(result.names)
    for name in ("platform.m", "leg6_rod.Izz", "legs_alpha.fc", "leg3_length.fv"):
        assert name in names
    assert not any(n.startswith(("x_slide", "pitch_link")) for n in names)  # virtual links
    np.testing.assert_allclose([r["value"][1] for r in standard], result.params, rtol=1e-12)
    base = _rows(page, "base")
    assert [r["base parameter"][0] for r in base] == list(result.base_names)
    np.testing.assert_allclose([r["value"][1] for r in base], result.base_params, rtol=1e-12)
    links = [r["link"][0] for r in _rows(page, "links")]
    assert links == list(robot.parameters.links)


def test_leg_force_errors_are_validate_s(case):
    robot, result, (train, test), page = case
    rows = _rows(page, "errors")
    outputs = [r["output"][0] for r in rows if r["output"][0] != "overall"]
    assert outputs == [f"leg{i}" for i in range(1, 7)] * 2
    assert {r["unit"][0] for r in rows if r["output"][0] != "overall"} == {"N"}
    checked = 0
    for row in rows:
        if row["output"][0] == "overall":
            continue
        rec = train if row["data"][0] == "identification" else test
        val = validate(robot, result, rec)
        j = val.names.index(row["output"][0])
        assert row["RMSE"][1] == pytest.approx(val.rmse[j], rel=1e-9)
        checked += 1
    assert checked == 12
