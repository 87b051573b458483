"""Closures: a four-bar solved by the loop closure against its closed form, a parallelogram as a
linear closure from a robot file, finite differences, energy balance and cut frames."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from mechanism_checks import Trajectory, cut_distance, cut_motion, power_balance_error
from numerics import assert_derivative, derivative

import dynid
from dynid.models import DHJoint, Regressor, Robot, build_tree, joint_friction, robot_from_mapping
from dynid.models.cuts import Cut, add_frame, cut_residuals
from dynid.models.library import random_inertia
from dynid.models.loops import LoopClosure

CRANK, COUPLER, ROCKER, GROUND = 0.1, 0.35, 0.3, 0.4


def four_bar_tree(rocker: float = ROCKER, *, split: bool = False):
    """Crank at the origin, coupler on the crank's tip, rocker pivoted on the ground at
    (GROUND, 0); the loop is cut at the coupler–rocker hinge, all axes along z.

    With ``split`` the coupler's end is a fourth link, hinged at the rocker's tip (joint
    ``coupler_end``), and the loop is to be cut by welding it to the coupler (frames
    ``coupler_tip`` and ``coupler_end_root``)."""
    rng = np.random.default_rng(7)
    rows = [DHJoint("crank"), DHJoint("coupler", parent="link1", d=CRANK),
            DHJoint("rocker", parent="base", d=GROUND)]
    if split:
        rows.append(DHJoint("coupler_end", parent="link3", d=rocker))
    tree = build_tree(rows, inertias={f"link{i + 1}": random_inertia(rng, 0.1)
                                      for i in range(len(rows))},
                      gravity=(0.0, -9.81, 0.0))

    add_frame(tree.model, "coupler_tip", "link2", pin.SE3(np.eye(3), np.array([COUPLER, 0, 0])))
    add_frame(tree.model, "rocker_tip", "link3", pin.SE3(np.eye(3), np.array([rocker, 0, 0])))
    if split:
        add_frame(tree.model, "coupler_end_root", "link4", pin.SE3.Identity())
    return tree


def closed_form(theta1: np.ndarray) -> np.ndarray:
    """Tree positions of the four-bar (upper branch) by intersecting two circles."""
    A = CRANK * np.stack([np.cos(theta1), np.sin(theta1)], axis=1)
    D = np.array([GROUND, 0.0])
    d = np.linalg.norm(D - A, axis=1)
    along = (COUPLER ** 2 - ROCKER ** 2 + d ** 2) / (2 * d)
    h = np.sqrt(COUPLER ** 2 - along ** 2)
    u = (D - A) / d[:, None]
    B = A + along[:, None] * u + h[:, None] * np.stack([-u[:, 1], u[:, 0]], axis=1)
    coupler = np.arctan2(B[:, 1] - A[:, 1], B[:, 0] - A[:, 0]) - theta1
    rocker = np.arctan2(B[:, 1], B[:, 0] - GROUND)
    wrap = lambda x: np.angle(np.exp(1j * x))  # noqa: E731
    return np.stack([theta1, wrap(coupler), wrap(rocker)], axis=1)


def four_bar_robot(kind: str = "revolute") -> Robot:
    """The four-bar with its loop cut by a ``revolute`` or ``point`` joint at the coupler–rocker
    hinge, or (``weld``) on the split coupler; crank friction, and rocker friction on the tree."""
    tree = four_bar_tree(split=kind == "weld")
    ref = closed_form(np.array([0.0]))[0]
    reference = {"coupler": ref[1], "rocker": ref[2]}
    frames = ("coupler_tip", "rocker_tip")
    if kind == "weld":  # the coupler's end keeps the coupler's direction: θ1 + θ2 − θ3
        reference["coupler_end"] = ref[1] - ref[2]
        frames = ("coupler_tip", "coupler_end_root")
    closure = LoopClosure(tree, ["crank"], [Cut(frames, kind)], reference=reference)
    terms = (joint_friction("crank", 0, viscous=0.3, coulomb=0.2, smoothing=0.05),
             joint_friction("rocker", 2, space="tree", viscous=0.1, coulomb=0.05,
                            smoothing=0.05))
    from dynid.models import Limits
    lim = Limits.unbounded(1)
    lim = Limits(np.array([-1.5]), np.array([1.5]), lim.velocity, lim.acceleration, lim.effort)
    return Robot(tree, name=f"four-bar ({kind} cut)", closure=closure, terms=terms, limits=lim)


@pytest.fixture(scope="module")
def four_bar() -> Robot:
    return four_bar_robot()


CUT_KINDS = ["revolute", "point", "weld"]


@pytest.mark.parametrize("kind", CUT_KINDS)
def test_loop_closure_matches_the_closed_form(kind):
    robot = four_bar_robot(kind)
    q = np.linspace(-1.5, 1.5, 31)[:, None]
    q_t = robot.closure.positions(q)
    expected = closed_form(q[:, 0])
    np.testing.assert_allclose(q_t[:, :3], expected, atol=1e-10)
    if kind == "weld":
        wrap = np.angle(np.exp(1j * (q_t[:, 3] - (expected[:, 0] + expected[:, 1]
                                                  - expected[:, 2]))))
        np.testing.assert_allclose(wrap, 0.0, atol=1e-10)


@pytest.mark.parametrize("kind", CUT_KINDS)
def test_cut_residuals_measure_known_gaps(kind):
    """Turning the rocker by δ off the closed loop moves its tip 2 r sin(δ/2) away from the
    coupler's (hinge and point cuts: the z axes stay parallel); turning the coupler's end by δ
    about the weld point leaves the origins together and the frames δ apart in rotation."""
    robot = four_bar_robot(kind)
    q_t = robot.closure.positions(np.linspace(-1.2, 1.2, 5)[:, None])
    assert cut_residuals(robot.tree, robot.closure.cuts, q_t).max() < 1e-10
    delta = np.array([1e-3, -0.02, 0.1, 0.3, -0.5])
    moved = q_t.copy()
    if kind == "weld":
        moved[:, 3] += delta
        expected = np.abs(delta)
    else:
        moved[:, 2] += delta
        expected = 2 * ROCKER * np.abs(np.sin(delta / 2))
    np.testing.assert_allclose(cut_residuals(robot.tree, robot.closure.cuts, moved)[:, 0],
                               expected, rtol=1e-9)


@pytest.mark.parametrize("kind", CUT_KINDS)
def test_loop_closure_keeps_cut_frames_together_in_motion(kind):
    robot = four_bar_robot(kind)
    q, v, a = Trajectory(robot, seed=1, fraction=0.9)(np.linspace(0, 4, 40))
    q_t, v_t, a_t, _ = robot.closure.tree_state(q, v, a)
    assert cut_distance(robot, q_t).max() < 1e-10
    vel, acc = cut_motion(robot, q_t, v_t, a_t)
    assert vel.max() < 1e-10 and acc.max() < 1e-9


@pytest.mark.parametrize("kind", CUT_KINDS)
def test_loop_closure_jacobian_and_drift_match_finite_differences(kind):
    closure = four_bar_robot(kind).closure
    rng = np.random.default_rng(2)
    q = rng.uniform(-1.4, 1.4, (10, 1))
    v = rng.standard_normal((10, 1))
    _, v_t, a_t, _ = closure.tree_state(q, v, np.zeros_like(q))
    # Along q + v t: the tree positions change at G v, and the tree velocities G(q + v t) v
    # (no basis acceleration) at Ġ v.
    one = np.ones(1)
    assert_derivative(v_t, derivative(lambda t: closure.positions(q + t * v), 0 * one, one),
                      what="G v")
    assert_derivative(a_t, derivative(lambda t: closure.tree_state(q + t * v, v, 0 * v)[1],
                                      0 * one, one), what="Ġ v")


def test_four_bar_power_balance(four_bar):
    rng = np.random.default_rng(3)
    theta = four_bar.prior.copy()
    theta[four_bar.parameters.where(group="friction")] *= rng.uniform(0.5, 2.0, 4)
    assert power_balance_error(four_bar, theta, seed=4, fraction=0.9) < 1e-8


def test_loop_regressor_is_tree_regressor_projected(four_bar):
    """Gᵀ Y_t: the projection of Pinocchio's tree regressor is what the model outputs."""

    q, v, a = Trajectory(four_bar, seed=5)(np.linspace(0, 2, 5))
    q_t, v_t, a_t, G = four_bar.closure.tree_state(q, v, a)
    model, data = four_bar.tree.model, four_bar.tree.model.createData()
    tau_t = np.array([pin.rnea(model, data, *s) for s in zip(q_t, v_t, a_t, strict=True)])
    y = Regressor(four_bar.with_terms(()))(q, v, a) @ four_bar.with_terms(()).prior
    np.testing.assert_allclose(y[:, 0], np.einsum("ntb,nt->nb", G, tau_t)[:, 0], rtol=1e-10)


def test_four_bar_that_cannot_close_is_refused():
    tree = four_bar_tree(rocker=0.02)  # |coupler − rocker| exceeds the pivot distance
    with pytest.raises(dynid.ModelError, match="closure does not close"):
        LoopClosure(tree, ["crank"], [Cut(("coupler_tip", "rocker_tip"), "revolute")])


PARALLELOGRAM = {
    "name": "parallelogram",
    "gravity": [0, -9.81, 0],
    "kinematics": {
        "modified_dh": [
            {"joint": "crank1", "link": "crank1"},
            {"joint": "coupler", "link": "coupler", "parent": "crank1", "d": 0.3},
            {"joint": "crank2", "link": "crank2", "parent": "base", "d": 0.2},
        ],
        "frames": [{"name": "coupler_end", "parent": "coupler", "xyz": [0.2, 0, 0]},
                   {"name": "crank2_end", "parent": "crank2", "xyz": [0.3, 0, 0]}],
    },
    "links": {"crank1": {"mass": 1.0, "com": [0.15, 0, 0], "inertia": [0, 0, 0, 0.01, 0, 0.01]},
              "coupler": {"mass": 0.5, "com": [0.1, 0.02, 0],
                          "inertia": [0.001, 0, 0, 0.002, 0, 0.002]},
              "crank2": {"mass": 0.8, "com": [0.12, 0, 0.01],
                         "inertia": [0.001, 0, 0, 0.008, 0, 0.008]}},
    "closure": {"basis": ["crank1"], "linear": {"coupler": {"crank1": -1},
                                                "crank2": {"crank1": 1}},
                "cuts": [{"frames": ["coupler_end", "crank2_end"], "type": "revolute"}]},
    "joints": {"crank1": {"limits": {"position": [-2, 2]},
                          "friction": {"viscous": 0.2, "coulomb": 0.1, "smoothing": 0.02},
                          "actuator": {"ratio": 50, "rotor_inertia": 2e-5}},
               "crank2": {"friction": {"viscous": 0.05}}},
}


def test_parallelogram_from_a_robot_file():
    robot = robot_from_mapping(PARALLELOGRAM)
    assert robot.n == 1 and robot.tree.n == 3
    assert robot.parameters["crank2.fv"].group == "friction"
    q, v, a = Trajectory(robot, seed=6, fraction=0.9)(np.linspace(0, 3, 30))
    q_t, v_t, a_t, _ = robot.closure.tree_state(q, v, a)
    assert cut_distance(robot, q_t).max() < 1e-10
    vel, acc = cut_motion(robot, q_t, v_t, a_t)
    assert vel.max() < 1e-10 and acc.max() < 1e-9
    assert power_balance_error(robot, robot.prior, seed=7, fraction=0.9) < 1e-8


def test_parallelogram_base_parameters():
    """A parallelogram's coupler only translates: its rotational inertia adds to the cranks',
    which turn together, so all Izz and all first moments along the cranks group."""
    robot = robot_from_mapping(PARALLELOGRAM)
    base = dynid.base_parameters(robot)
    # One rotation (the crank angle) under gravity: inertia about z, and the two components of
    # the total first moment, plus viscous and Coulomb joint friction (crank2's viscous
    # friction has the same column as crank1's), plus the rotor inertia, which groups with the
    # link inertia (a constant ratio): 1 + 2 + 2 = 5.
    assert base.rank == 5


@pytest.mark.parametrize("edit, match", [
    ({"crank2": {"crank1": 0.9}}, r"closure does not close: cut coupler_end/crank2_end"),
    ({"crank2": {"crank1": 1, "offset": 0.1}}, r"closure does not close"),
    ({"crank2": {"crank9": 1}}, r"closure.linear.crank2.crank9: unknown key"),
    ({"crank3": {"crank1": 1}}, r"closure.linear.crank3: no such tree joint"),
])
def test_bad_linear_closures_are_refused(edit, match):
    data = {**PARALLELOGRAM, "closure": {**PARALLELOGRAM["closure"],
                                         "linear": {"coupler": {"crank1": -1}, **edit}}}
    with pytest.raises(dynid.ModelError, match=match):
        robot_from_mapping(data)


def test_cut_to_a_missing_frame_is_refused():
    data = {**PARALLELOGRAM, "closure": {**PARALLELOGRAM["closure"],
                                         "cuts": [{"frames": ["coupler_end", "nowhere"]}]}}
    with pytest.raises(dynid.ModelError, match=r"frame 'nowhere' is not in the tree"):
        robot_from_mapping(data)
