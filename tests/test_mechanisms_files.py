"""Mechanism sections of robot files: a loop closure described in YAML, springs and cables, and
their malformed entries."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from mechanism_checks import cut_distance, power_balance_error
from test_closures import COUPLER, CRANK, GROUND, ROCKER, closed_form

import dynid
from dynid.models import CableTorque, LinearSpring, TorsionalSpring, robot_from_mapping

REF = closed_form(np.array([0.0]))[0]

FOUR_BAR = {
    "name": "four-bar",
    "gravity": [0, -9.81, 0],
    "kinematics": {
        "modified_dh": [
            {"joint": "crank", "link": "crank_link"},
            {"joint": "coupler", "link": "coupler_link", "parent": "crank_link", "d": CRANK},
            {"joint": "rocker", "link": "rocker_link", "parent": "base", "d": GROUND},
        ],
        "frames": [{"name": "coupler_tip", "parent": "coupler_link", "xyz": [COUPLER, 0, 0]},
                   {"name": "rocker_tip", "parent": "rocker_link", "xyz": [ROCKER, 0, 0]}],
    },
    "links": {"crank_link": {"mass": 0.5, "com": [0.05, 0, 0]},
              "coupler_link": {"mass": 1.0, "com": [0.17, 0.01, 0],
                               "inertia": [0.001, 0, 0, 0.01, 0, 0.01]},
              "rocker_link": {"mass": 0.8, "com": [0.15, 0, 0],
                              "inertia": [0.001, 0, 0, 0.006, 0, 0.006]}},
    "closure": {"passive": ["coupler", "rocker"],
                "reference": {"coupler": float(REF[1]), "rocker": float(REF[2])},
                "cuts": [{"frames": ["coupler_tip", "rocker_tip"], "type": "revolute"}]},
    "joints": {"crank": {"limits": {"position": [-1.5, 1.5]},
                         "friction": {"viscous": 0.1}},
               "rocker": {"friction": {"viscous": 0.05}}},
    "springs": [{"name": "crank_spring", "joint": "crank", "type": "torsional",
                 "stiffness": 2.0, "rest": 0.2},
                {"name": "rocker_spring", "joint": "rocker", "type": "linear", "a": 0.1,
                 "b": 0.2, "gamma": 0.3, "rest_length": 0.15, "stiffness": 30.0}],
    "cables": [{"name": "crank_cable", "joint": "crank", "coefficients": [0.1, -0.2, 0.05]}],
}


def test_loop_closure_from_a_robot_file():
    robot = robot_from_mapping(FOUR_BAR)
    assert robot.n == 1 and robot.tree.n == 3
    q = np.linspace(-1.5, 1.5, 13)[:, None]
    np.testing.assert_allclose(robot.closure.positions(q), closed_form(q[:, 0]), atol=1e-10)
    assert cut_distance(robot, robot.closure.positions(q)).max() < 1e-10
    kinds = {type(t) for t in robot.terms}
    assert {TorsionalSpring, LinearSpring, CableTorque} <= kinds
    assert robot.parameters["rocker_spring.k"].unit == "N/m"
    assert robot.parameters["crank_cable.c2"].unit == "N·m/rad^2"
    spaces = {t.parameters[0].name: t.space for t in robot.terms}
    assert spaces["rocker_spring.k"] == "tree" and spaces["crank_spring.k"] == "basis"
    assert power_balance_error(robot, robot.prior, seed=1, fraction=0.9) < 1e-8


def _with(path: str, value):
    data = copy.deepcopy(FOUR_BAR)
    keys = [int(k) if k.isdigit() else k for k in path.split("/")]
    node = data
    for k in keys[:-1]:
        node = node[k]
    node[keys[-1]] = value
    return data


@pytest.mark.parametrize("path, value, match", [
    ("springs/0/stiffness", -1.0, r"springs\[0\].stiffness: expected a value ≥ 0"),
    ("springs/0/joint", "elbow", r"springs\[0\].joint: no such coordinate"),
    ("springs/0/type", "helical", r"springs\[0\].type: expected one of"),
    ("springs/0/a", 0.1, r"springs\[0\].a: belongs to a linear spring"),
    ("springs/1/rest_length", -0.1, r"rocker_spring.rest_length: expected a length > 0"),
    ("springs/1/stifness", 1.0, r"springs\[1\].stifness: unknown key; did you mean "
                                r"'stiffness'"),
    ("cables/0/coefficients", [], r"cables\[0\].coefficients: expected a list"),
    ("closure/reference/coupler", 2.5, r"closure does not close|assembl"),
    ("closure/passive", ["coupler"], r"determine only|closure does not close"),
    ("closure/linear", {"rocker": {"crank": 1}}, r"either 'linear' rows or 'passive'"),
    ("joints/coupler", {"limits": {"position": [0, 1]}},
     r"joints.coupler.limits: a passive tree joint .* takes friction only"),
    ("closure/reference", {"nope": 1}, r"closure.reference.nope: no such tree joint"),
    ("closure/passive", ["crank", "coupler", "rocker"],
     r"closure: every tree joint is passive or given a row; at least one must be a basis"),
    ("closure/cuts/0/frames", ["coupler_tip", "coupler_tip"],
     r"closure.cuts\[0\].frames: expected two different frames, found 'coupler_tip' twice"),
])
def test_bad_mechanism_entries_are_refused(path, value, match):
    with pytest.raises(dynid.ModelError, match=match):
        robot_from_mapping(_with(path, value))


def test_embedded_mechanism_robots_are_listed():
    assert {"ariane", "dvrk_psm", "dvrk_mtm"} <= set(dynid.embedded_robots())


PSM = dynid.models.library._HERE / "dvrk_psm.yaml"


def _psm() -> dict:
    import yaml

    return yaml.safe_load(PSM.read_text())


def test_closure_rows_need_their_cuts_or_a_statement_that_there_is_no_loop():
    """Rows without cuts cannot be checked against any loop: the file must name the cut (so a
    wrong row of a parallelogram is caught when it loads) or say ``cuts: []`` (a coupling)."""
    data = _psm()
    del data["closure"]["cuts"]
    with pytest.raises(dynid.ModelError, match=r"closure: rows are given under 'linear' but no "
                                               r"'cuts': if the rows close a loop .* write "
                                               r"'cuts: \[\]' to say so"):
        robot_from_mapping(data)
    data["closure"]["cuts"] = []
    assert robot_from_mapping(data).closure.cuts == ()
    # With the cuts, a wrong row of the parallelogram is caught.
    data = _psm()
    data["closure"]["linear"]["pitch_top_joint"] = {"outer_pitch": -1}
    with pytest.raises(dynid.ModelError, match=r"closure does not close: cut "
                                               r"intermediate_back_pin/top_pin"):
        robot_from_mapping(data)


def test_cuts_that_close_no_loop_of_the_rows_are_refused():
    data = _psm()
    data["kinematics"]["frames"] += [{"name": "yaw_pin", "parent": "yaw_link"},
                                     {"name": "back_pin", "parent": "pitch_back"},
                                     {"name": "back_pin2", "parent": "pitch_back",
                                      "xyz": [0.1, 0, 0]}]
    data["closure"]["cuts"].append({"frames": ["back_pin", "back_pin2"], "type": "point"})
    with pytest.raises(dynid.ModelError, match=r"closure.cuts\[2\]: frames 'back_pin' and "
                                               r"'back_pin2' are on the same link, so the cut "
                                               r"closes no loop"):
        robot_from_mapping(data)
    data["closure"]["cuts"][2] = {"frames": ["yaw_pin", "back_pin"]}
    with pytest.raises(dynid.ModelError, match=r"closure.cuts\[2\]: the loop it closes runs "
                                               r"through joints \['outer_pitch'\], none of them "
                                               r"given a row under 'closure.linear'"):
        robot_from_mapping(data)
    four_bar = copy.deepcopy(FOUR_BAR)
    four_bar["kinematics"]["frames"].append({"name": "crank_tip", "parent": "crank_link"})
    four_bar["closure"]["cuts"].append({"frames": ["crank_tip", "coupler_tip"]})
    with pytest.raises(dynid.ModelError, match=r"closure.cuts\[1\]: the loop it closes runs "
                                               r"through joints \['coupler'\], none of them "
                                               r"listed under 'closure.passive'"):
        robot_from_mapping({**four_bar, "closure": {**four_bar["closure"],
                                                    "passive": ["rocker"]}})
