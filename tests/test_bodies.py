"""Bodies fixed to links without a joint, against independent computations: the same robot with
the body merged into its link by hand (Pinocchio's ``Inertia.se3Action`` and addition) through
RNEA, gravity torques from the potential energy of forward kinematics, and CRBA."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
import yaml
from conftest import DATA, check_physical, reference_output
from numerics import assert_derivative, derivative
from test_mechanisms_files import FOUR_BAR

import dynid
from dynid.models import (
    OUTPUTS,
    Body,
    LinkInertia,
    Regressor,
    random_robot,
    random_states,
    robot_from_mapping,
)
from dynid.models.bodies import parameter_map
from dynid.models.dynamics import Dynamics
from dynid.models.library import _HERE, random_inertia

TOL = 1e-10
PANDA = yaml.safe_load((_HERE / "panda.yaml").read_text())


def _rotation(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's rpy: Rz(yaw) Ry(pitch) Rx(roll), written here with numpy."""
    c, s = np.cos, np.sin
    Rx = np.array([[1, 0, 0], [0, c(roll), -s(roll)], [0, s(roll), c(roll)]])
    Ry = np.array([[c(pitch), 0, s(pitch)], [0, 1, 0], [-s(pitch), 0, c(pitch)]])
    Rz = np.array([[c(yaw), -s(yaw), 0], [s(yaw), c(yaw), 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _pose(xyz, rpy) -> pin.SE3:
    return pin.SE3(_rotation(*rpy), np.asarray(xyz, dtype=float))


def _merged(link: np.ndarray, body: np.ndarray, pose: pin.SE3) -> np.ndarray:
    """Ten parameters of a link carrying a body at ``pose``, merged by hand."""
    total = pin.Inertia.FromDynamicParameters(link) + \
        pin.Inertia.FromDynamicParameters(body).se3Action(pose)
    return total.toDynamicParameters()


def _values(inertia: LinkInertia) -> np.ndarray:
    I = np.array(inertia.inertia)[[0, 1, 2, 1, 3, 4, 2, 4, 5]].reshape(3, 3)
    return pin.Inertia(inertia.mass, np.array(inertia.com), I).toDynamicParameters()


def _theta(robot: dynid.Robot, rng: np.random.Generator) -> np.ndarray:
    """Arbitrary parameter values (linearity holds for any), masses kept away from zero so
    that the hand merging through centres of mass stays well conditioned."""
    theta = robot.prior + 0.3 * rng.standard_normal(len(robot.parameters))
    theta[robot.parameters.where(kind="m")] = rng.uniform(0.5, 3.0, len(robot.parameters.links))
    return theta


def test_parameter_map_is_se3_action():
    rng = np.random.default_rng(0)
    for _ in range(5):
        X, inertia = pin.SE3.Random(), pin.Inertia.Random()
        np.testing.assert_allclose(parameter_map(X) @ inertia.toDynamicParameters(),
                                   inertia.se3Action(X).toDynamicParameters(), atol=1e-12)
    massless = pin.Inertia(0.0, np.zeros(3), np.diag(rng.uniform(1, 2, 3)))
    X = pin.SE3.Random()
    np.testing.assert_allclose(parameter_map(X) @ massless.toDynamicParameters(),
                               massless.se3Action(X).toDynamicParameters(), atol=1e-12)


@pytest.mark.parametrize("output", OUTPUTS)
def test_identified_body_equals_the_link_merged_by_hand(output):
    """Regressor × parameters of a robot with a body equals RNEA (plus friction and motors,
    computed directly) of the robot whose link holds the body merged by hand."""
    plain = random_robot(5, seed=3, prismatic=0.3, friction=True, motors=True, output=output)
    rng = np.random.default_rng(1)
    xyz, rpy = (0.1, -0.2, 0.05), (0.4, -0.3, 1.2)
    robot = replace(plain, bodies=(Body("weight", "link3", random_inertia(rng), xyz=xyz,
                                        rpy=rpy),))
    params = robot.parameters
    assert params.names[:50] == plain.parameters.names[:50]
    assert params.names[50:60] == tuple(f"weight.{k}" for k in dynid.models.LINK_KINDS)
    assert params.links[-1] == "weight" and params["weight.m"].lower == 0.0
    np.testing.assert_allclose(params.priors[params.link_block("weight")],
                               _values(robot.bodies[0].inertia), atol=1e-15)
    theta = _theta(robot, rng)
    merged = theta[params.indices(plain.parameters.names)]
    block = plain.parameters.link_block("link3")
    merged[block] = _merged(theta[block], theta[params.link_block("weight")],
                            _pose(xyz, rpy))
    q, v, a = random_states(robot, 30, rng)
    got = Regressor(robot)(q, v, a) @ theta
    want = reference_output(plain, merged, q, v, a)
    assert np.abs(got - want).max() < TOL * np.abs(want).max()


@pytest.mark.parametrize("output", OUTPUTS)
def test_known_body_output_is_rnea_with_it_minus_without(output):
    plain = random_robot(4, seed=5, prismatic=0.3, friction=True, motors=True, output=output)
    rng = np.random.default_rng(2)
    payload = random_inertia(rng)
    xyz, rpy = (0.0, 0.1, 0.3), (-1.0, 0.2, 0.7)
    robot = replace(plain, bodies=(Body("payload", "link4", payload, xyz=xyz, rpy=rpy,
                                        known=True),))
    assert robot.parameters == plain.parameters  # a known body has no parameter
    with_it = plain.prior.copy()
    block = plain.parameters.link_block("link4")
    with_it[block] = _merged(with_it[block], _values(payload), _pose(xyz, rpy))
    q, v, a = random_states(robot, 30, rng)
    want = reference_output(plain, with_it, q, v, a) - reference_output(plain, plain.prior,
                                                                        q, v, a)
    reg = Regressor(robot, chunk_size=7)
    known = reg.known_output(q, v, a)
    assert np.abs(known - want).max() < TOL * np.abs(want).max()
    Y, y_known = reg.affine(q, v, a)
    np.testing.assert_array_equal(Y, Regressor(plain)(q, v, a))
    np.testing.assert_allclose(y_known, known, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    theta = _theta(robot, rng)
    np.testing.assert_allclose(reg.predict(q, v, a, theta), Y @ theta + y_known, rtol=1e-12,
                               atol=1e-12 * np.abs(Y @ theta).max())


def _gravity_check(robot: dynid.Robot, body: Body, seed: int) -> None:
    """The known body's output at rest, and the identified body's columns times its values,
    equal the gradient of the body's potential energy ``−m g·p_c(q)``, with ``p_c`` from
    Pinocchio's forward kinematics of the parent frame (finite differences)."""
    model, data = robot.tree.model, robot.tree.model.createData()
    fid = model.getFrameId(body.parent)
    g = model.gravity.linear
    com = np.array(body.inertia.com)

    def energy(q):
        pin.framesForwardKinematics(model, data, robot.tree.configuration(q[None])[0])
        p = (data.oMf[fid] * _pose(body.xyz, body.rpy)).act(com)
        return -body.inertia.mass * g @ p

    known = replace(robot, bodies=(replace(body, known=True),))
    ident = replace(robot, bodies=(replace(body, known=False),))
    cols = ident.parameters.link_block(body.name)
    for q in random_states(robot, 3, np.random.default_rng(seed))[0]:
        zero = np.zeros((1, robot.n))
        want = np.array([derivative(energy, q, e).value for e in np.eye(robot.n)])
        bound = [derivative(energy, q, e) for e in np.eye(robot.n)]
        for j, d in enumerate(bound):
            assert_derivative(Regressor(known).known_output(q[None], zero, zero)[0, j], d,
                              size=np.abs(want).max(), what=f"known {body.name} row {j}")
            column = Regressor(ident)(q[None], zero, zero)[0, j, cols] @ body.values
            assert_derivative(column, d, size=np.abs(want).max(), what=f"columns row {j}")


def test_bodies_on_classic_dh_links_urdf_fixed_links_and_tool_frames():
    """Where the link frame is not the joint frame (classic DH), on a link a URDF fixes to a
    moving one (the Panda's flange) and on a DH tool frame."""
    rng = np.random.default_rng(4)
    rows = [dynid.models.DHJoint(f"j{i}", type=t, theta=0.3 * i, d=0.1 * i, a=0.2, alpha=0.8)
            for i, t in enumerate(["revolute", "revolute", "prismatic", "revolute"], start=1)]
    inertias = {f"link{i}": random_inertia(rng) for i in range(1, 5)}
    tool = dynid.models.DHJoint("tool", d=0.1, a=0.05, alpha=0.3)
    classic = dynid.Robot(dynid.models.build_tree(rows, convention="classic", inertias=inertias,
                                                  tool=tool, gravity=(0.3, -2.0, -9.5)))
    body = Body("mass", "link3", LinkInertia(1.5, (0.05, -0.1, 0.2)), xyz=(0.1, 0.2, -0.1),
                rpy=(0.5, -0.4, 0.9))
    _gravity_check(classic, body, 0)
    _gravity_check(classic, replace(body, parent="link2"), 1)
    _gravity_check(classic, replace(body, parent="tool"), 2)
    urdf = robot_from_mapping({"kinematics": {"urdf": str(DATA / "panda.urdf")}})
    _gravity_check(urdf, replace(body, parent="flange"), 3)
    _gravity_check(robot_from_mapping(PANDA), replace(body, parent="flange"), 4)


def _four_bar(bodies=None, coupler=None) -> dynid.Robot:
    data = copy.deepcopy(FOUR_BAR)
    data["output"] = "motor_torque"
    data["joints"]["crank"]["actuator"] = {"ratio": -12.0, "rotor_inertia": 1e-4}
    if bodies is not None:
        data["bodies"] = bodies
    if coupler is not None:
        data["links"]["coupler_link"] = coupler
    return robot_from_mapping(data)


def test_bodies_on_a_loop_closure_equal_the_link_merged_by_hand():
    """A body on the four-bar's coupler, a link the closure moves: identified, its columns
    times any parameters equal the merged robot's; known, the prediction equals the merged
    robot's prediction. Both through a loop closure and a gear to motor torque."""
    body = {"name": "clamp", "parent": "coupler_link", "xyz": [0.1, 0.02, 0.01],
            "rpy": [0.3, 0.1, 0.5], "mass": 0.3, "com": [0.02, 0.0, 0.01],
            "inertia": [1e-4, 1e-5, 0, 2e-4, 0, 2.5e-4]}
    link = FOUR_BAR["links"]["coupler_link"]
    pose = _pose(body["xyz"], body["rpy"])
    values = _values(LinkInertia(body["mass"], tuple(body["com"]), tuple(body["inertia"])))
    total = pin.Inertia.FromDynamicParameters(_merged(_values(LinkInertia(
        link["mass"], tuple(link["com"]), tuple(link["inertia"]))), values, pose))
    I = total.inertia
    merged = _four_bar(coupler={"mass": total.mass, "com": total.lever.tolist(),
                                "inertia": [I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2],
                                            I[2, 2]]})
    known = _four_bar([{**body, "known": True}])
    ident = _four_bar([body])
    rng = np.random.default_rng(5)
    q, v, a = random_states(merged, 12, rng, margin=0.05)
    want = Regressor(merged).predict(q, v, a, merged.prior)
    got = Regressor(known).predict(q, v, a, known.prior)
    assert np.abs(got - want).max() < TOL * np.abs(want).max()
    theta = _theta(ident, rng)
    theta_merged = theta[ident.parameters.indices(merged.parameters.names)]
    block = merged.parameters.link_block("coupler_link")
    theta_merged[block] = _merged(theta[block], theta[ident.parameters.link_block("clamp")],
                                  pose)
    got = Regressor(ident)(q, v, a) @ theta
    want = Regressor(merged)(q, v, a) @ theta_merged
    assert np.abs(got - want).max() < TOL * np.abs(want).max()


def test_base_parameters_regroup_a_body_with_its_link(panda):
    """The body's columns are its link's seen through a constant map: the rank does not change,
    every body parameter is grouped into the link's base parameters, and the base values of
    any parameters equal those of the robot with the body merged by hand."""
    body = Body("weight", "link2", random_inertia(np.random.default_rng(6)),
                xyz=(-0.15, 0.0, 0.02), rpy=(0.0, 0.2, 0.0))
    robot = replace(panda, bodies=(body,))
    base, plain = dynid.base_parameters(robot), dynid.base_parameters(panda)
    assert base.rank == plain.rank
    cols = robot.parameters.link_block("weight")
    assert not set(cols) & set(base.independent)
    assert any("weight.m" in name for name in base.names)
    theta = _theta(robot, np.random.default_rng(7))
    merged = theta[robot.parameters.indices(panda.parameters.names)]
    block = panda.parameters.link_block("link2")
    merged[block] = _merged(theta[block], theta[cols], _pose(body.xyz, body.rpy))
    got, want = base.to_base(theta), plain.to_base(merged)
    assert np.abs(got - want).max() < 1e-8 * np.abs(want).max()


def test_known_body_in_the_mass_matrix_and_forward_dynamics():
    """Dynamics of a robot with a known payload: mass matrix equal to CRBA, accelerations to
    ABA, of the model whose link holds the payload."""
    plain = random_robot(4, seed=8, prismatic=0.3)
    payload = Body("payload", "link4", random_inertia(np.random.default_rng(9)),
                   xyz=(0.05, 0.0, 0.1), rpy=(0.1, 0.2, 0.3), known=True)
    robot = replace(plain, bodies=(payload,))
    model = plain.tree.model.copy()
    model.inertias[4] = model.inertias[4] + payload.inertia.to_pinocchio().se3Action(
        _pose(payload.xyz, payload.rpy))
    data = model.createData()
    rng = np.random.default_rng(10)
    q, v, tau = random_states(robot, 4, rng)
    dyn = Dynamics(robot, robot.prior)
    M, acc = dyn.mass_matrix(q), dyn.forward(q, v, 10 * tau)
    for k in range(q.shape[0]):
        crba = pin.crba(model, data, q[k])
        np.testing.assert_allclose(M[k], np.triu(crba) + np.triu(crba, 1).T, rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(acc[k], pin.aba(model, data, q[k], v[k], 10 * tau[k]),
                                   rtol=1e-9, atol=1e-9)


def test_consistent_estimate_keeps_each_body_physical():
    """The physically consistent estimate constrains the body's ten parameters on their own:
    every link and body pseudo-inertia of the estimate is positive definite, and the estimate
    reproduces the data."""
    from dynid.identify import CompressedData, PhysicallyConsistent, com_boxes

    plain = random_robot(3, seed=11, friction=True)
    robot = replace(plain, bodies=(Body("weight", "link2", LinkInertia(
        2.0, (0.0, 0.05, 0.0), (0.01, 0, 0, 0.01, 0, 0.01)), xyz=(-0.2, 0.0, 0.0)),))
    rng = np.random.default_rng(12)
    truth = robot.prior * rng.uniform(0.8, 1.2, len(robot.prior))
    reg = Regressor(robot)
    chunks = []
    for _ in range(4):
        q, v, a = random_states(robot, 200, rng)
        y = reg.predict(q, v, a, truth)
        chunks.append((q, v, a, y + 1e-3 * rng.standard_normal(y.shape)))
    data = CompressedData.from_chunks(robot, chunks)
    est = PhysicallyConsistent().fit(data)
    check_physical(robot, est.params_)
    base = data.base
    np.testing.assert_allclose(base.to_base(est.params_), base.to_base(truth), rtol=0.05,
                               atol=0.05)
    # The body has its own centre-of-mass box, in its frame: its origin and its prior COM
    # grown by the margin; a box given for it holds.
    lo, hi = com_boxes(robot, margin=0.1)["weight"]
    np.testing.assert_allclose(lo, [-0.1, -0.1, -0.1])
    np.testing.assert_allclose(hi, [0.1, 0.15, 0.1])
    box = PhysicallyConsistent(com_box={"weight": ([-0.01] * 3, [0.01] * 3)}).fit(data)
    block = box.params_[robot.parameters.link_block("weight")]
    assert np.all(np.abs(block[1:4] / block[0]) <= 0.01 + 1e-6)


@pytest.mark.parametrize("decimate", [1, 4])
def test_identification_takes_the_known_bodies_output_out(decimate):
    """Output recorded with a known payload: least squares recovers the robot's own base
    parameters (the payload's torque, computed as RNEA with minus without it, is not theirs),
    by the plain and the decimated path and from chunks."""
    from dynid.identify import OLS, CompressedData, IdentificationData, Processing, Recording

    plain = random_robot(3, seed=7, friction=True)
    payload = random_inertia(np.random.default_rng(4))
    robot = replace(plain, bodies=(Body("payload", "link3", payload, xyz=(0.0, 0.05, 0.2),
                                        known=True),))
    t = np.arange(600) * 0.01
    w = np.array([0.7, 1.1, 1.6])
    phase = np.outer(t, w) + np.array([0.1, 0.5, 0.9])
    q, v, a = np.sin(phase), np.cos(phase) * w, -np.sin(phase) * w ** 2
    y = Regressor(robot).predict(q, v, a, robot.prior)
    with_it = plain.prior.copy()
    block = plain.parameters.link_block("link3")
    with_it[block] = _merged(with_it[block], _values(payload), _pose((0.0, 0.05, 0.2), (0, 0, 0)))
    np.testing.assert_allclose(y, reference_output(plain, with_it, q, v, a), rtol=1e-9,
                               atol=1e-9 * np.abs(y).max())
    rec = Recording(t, q, y, velocities=v, accelerations=a)
    data = IdentificationData(robot, rec, processing=Processing(
        cutoff=None, decimate=decimate, deadzone=None, derivatives="recorded"))
    want = data.base.to_base(robot.prior)
    got = OLS().fit(data).base_params_
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-7 * np.abs(want).max())
    chunks = CompressedData.from_chunks(robot, [(q, v, a, y)], base=data.base)
    np.testing.assert_allclose(OLS().fit(chunks).base_params_, want, rtol=1e-7,
                               atol=1e-7 * np.abs(want).max())
