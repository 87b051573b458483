"""The extended regressor against RNEA plus directly computed friction and motor terms."""

from __future__ import annotations

import copy

import numpy as np
import pinocchio as pin
import pytest
from conftest import DATA, random_theta, reference_output
from numerics import sum_rounding

import dynid
from dynid.models import Regressor, random_robot, random_states

TOL = 1e-10


def check(robot: dynid.Robot, seed: int = 0, n: int = 40) -> None:
    rng = np.random.default_rng(seed)
    q, v, a = random_states(robot, n, rng)
    theta = random_theta(robot, rng)
    got = Regressor(robot)(q, v, a) @ theta
    want = reference_output(robot, theta, q, v, a)
    assert got.shape == want.shape == (n, robot.n)
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err < TOL, f"{robot.name}: relative error {err:.3g}"


@pytest.mark.parametrize("output", ["joint_torque", "motor_torque"])
def test_panda_matches_rnea(panda, output):
    check(panda.with_output(output))


def test_panda_has_no_current_output(panda):
    """The Panda file gives no torque constants."""
    with pytest.raises(dynid.ModelError, match="torque constant"):
        panda.with_output("current")


@pytest.mark.parametrize("n_joints", range(1, 8))
@pytest.mark.parametrize("output", ["joint_torque", "motor_torque", "current"])
def test_random_serial_robots_match_rnea(n_joints, output):
    robot = random_robot(n_joints, seed=10 + n_joints, prismatic=0.4, friction=True,
                         motors=True, output=output)
    check(robot, seed=n_joints)


def test_random_robots_include_prismatic_joints():
    types = {t for n in range(1, 8) for t in
             random_robot(n, seed=10 + n, prismatic=0.4).tree.joint_types}
    assert types == {"revolute", "prismatic"}


@pytest.mark.parametrize("seed", range(4))
def test_branched_tree_matches_rnea(seed):
    robot = random_robot(8, seed=seed, branched=True, prismatic=0.3, friction=True, motors=True,
                         output="motor_torque")
    parents = {robot.tree.model.parents[j] for j in range(1, robot.tree.model.njoints)}
    assert len(parents) < robot.tree.n, "the generator should branch"
    check(robot, seed=seed)


def test_smooth_sign_matches_direct_computation():
    robot = random_robot(4, seed=5, friction=True, motors=True, smoothing=0.05)
    check(robot)


def test_chunks_and_predict_agree_with_one_call(panda):
    rng = np.random.default_rng(1)
    q, v, a = random_states(panda, 50, rng)
    reg = Regressor(panda, chunk_size=7)
    Y = reg(q, v, a)
    stacked = np.concatenate([Y_chunk for _, Y_chunk in reg.chunks(q, v, a)])
    np.testing.assert_array_equal(stacked, Y)
    # Y θ chunk by chunk and at once are sums of the same products in orders that the BLAS
    # chooses by size: they agree to the rounding of such sums, not to a relative 1e-12.
    miss = np.abs(reg.predict(q, v, a, panda.prior) - Y @ panda.prior)
    assert np.all(miss <= sum_rounding(np.abs(Y) @ np.abs(panda.prior), len(panda.prior)))


def test_single_sample_is_accepted(panda):
    q = np.zeros(7)
    assert Regressor(panda)(q, q, q).shape == (1, 7, len(panda.parameters))


def test_dh_and_urdf_descriptions_give_the_same_regressor(panda):
    """The Panda from its modified-DH table and from a URDF of franka_description's origins."""
    urdf = dynid.Robot(dynid.models.Tree.from_urdf(DATA / "panda.urdf"))
    dh = panda.with_terms(())
    assert urdf.parameters.names == dh.parameters.names
    rng = np.random.default_rng(2)
    q, v, a = random_states(dh, 30, rng)
    Y_dh, Y_urdf = Regressor(dh)(q, v, a), Regressor(urdf)(q, v, a)
    assert np.abs(Y_dh - Y_urdf).max() < TOL * np.abs(Y_dh).max()
    np.testing.assert_allclose(urdf.prior, dh.prior, atol=1e-12)


def _f(x) -> str:
    return repr(float(x))


def _origin(T: np.ndarray) -> str:
    rpy = pin.rpy.matrixToRpy(T[:3, :3])
    return (f'<origin xyz="{_f(T[0, 3])} {_f(T[1, 3])} {_f(T[2, 3])}" '
            f'rpy="{_f(rpy[0])} {_f(rpy[1])} {_f(rpy[2])}"/>')


def _rot(axis: str, t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    R = {"x": [[1, 0, 0], [0, c, -s], [0, s, c]], "z": [[c, -s, 0], [s, c, 0], [0, 0, 1]]}[axis]
    T = np.eye(4)
    T[:3, :3] = R
    return T


def _trans(x=0.0, z=0.0) -> np.ndarray:
    T = np.eye(4)
    T[0, 3], T[2, 3] = x, z
    return T


def _kk(row) -> np.ndarray:
    return (_rot("z", row.gamma) @ _trans(z=row.b) @ _rot("x", row.alpha) @ _trans(x=row.d)
            @ _rot("z", row.theta) @ _trans(z=row.r))


@pytest.mark.parametrize("seed", range(3))
def test_random_modified_dh_matches_a_urdf_written_from_matrices(seed):
    """A random branched modified-DH tree against a URDF whose joint origins are computed here
    from the Khalil–Kleinfinger matrix product with plain numpy."""
    rng = np.random.default_rng(100 + seed)
    rows, inertias = [], {}
    for j in range(6):
        parent = f"link{rng.integers(1, j + 1)}" if j > 1 else ""
        rows.append(dynid.models.DHJoint(
            f"joint{j + 1}", type=rng.choice(["revolute", "prismatic"]), parent=parent,
            alpha=rng.uniform(-3, 3), d=rng.uniform(-0.3, 0.3), r=rng.uniform(-0.3, 0.3),
            theta=rng.uniform(-3, 3), gamma=rng.uniform(-3, 3) if parent else 0.0,
            b=rng.uniform(-0.2, 0.2) if parent else 0.0))
        inertias[f"link{j + 1}"] = dynid.models.library.random_inertia(rng)
    tree = dynid.models.build_tree(rows, inertias=inertias, gravity=(0.0, 9.81, 0.0))
    xml = ['<robot name="r"><link name="base"/>']
    for j, row in enumerate(rows):
        m = inertias[f"link{j + 1}"]
        c, I = m.com, m.inertia
        xml.append(
            f'<link name="link{j + 1}"><inertial><origin xyz="{c[0]} {c[1]} {c[2]}"/>'
            f'<mass value="{m.mass}"/><inertia ixx="{I[0]}" ixy="{I[1]}" ixz="{I[2]}" '
            f'iyy="{I[3]}" iyz="{I[4]}" izz="{I[5]}"/></inertial></link>')
        parent = row.parent or (f"link{j}" if j else "base")
        xml.append(f'<joint name="{row.name}" type="{row.type}">{_origin(_kk(row))}'
                   f'<parent link="{parent}"/><child link="link{j + 1}"/>'
                   '<axis xyz="0 0 1"/><limit lower="-4" upper="4" effort="1" velocity="1"/>'
                   '</joint>')
    xml.append("</robot>")
    urdf_tree = dynid.models.Tree.from_urdf("".join(xml), gravity=np.array([0.0, 9.81, 0.0]))
    robot, other = dynid.Robot(tree), dynid.Robot(urdf_tree)
    # The URDF parser orders a tree's joints depth-first; compare by name.
    order = [other.joint_names.index(name) for name in robot.joint_names]
    cols = other.parameters.indices(robot.parameters.names)
    q, v, a = random_states(robot, 20, rng)
    Y1 = Regressor(robot)(q, v, a)
    Y2 = Regressor(other)(*(x[:, np.argsort(order)] for x in (q, v, a)))[:, order][:, :, cols]
    assert np.abs(Y1 - Y2).max() < TOL * np.abs(Y1).max()


def test_modified_dh_placements_follow_khalil_kleinfinger():
    """Each joint placement equals Rz(γ) Tz(b) Rx(α) Tx(d) Rz(θ) Tz(r) of its row."""
    rows = [dynid.models.DHJoint("j1", r=0.2, theta=0.3),
            dynid.models.DHJoint("j2", type="prismatic", alpha=-np.pi / 2, d=0.1, theta=0.7,
                                 r=0.05),
            dynid.models.DHJoint("j3", parent="link1", gamma=0.4, b=0.15, alpha=0.9, d=-0.2,
                                 theta=-1.1, r=0.3)]
    tree = dynid.models.build_tree(rows)
    for j, row in enumerate(rows, start=1):
        np.testing.assert_allclose(tree.model.jointPlacements[j].homogeneous, _kk(row),
                                   atol=1e-14)
    assert tree.model.parents[3] == 1


def test_classic_dh_forward_kinematics_matches_matrix_product():
    """Classic DH: link frame i is the product of Rz(θ+q) Tz(d) Tx(a) Rx(α) (Tz(d+q) if
    prismatic) up to i, and the tool adds its own row."""
    table = [("revolute", 0.1, 0.4, 0.0, np.pi / 2), ("prismatic", 0.3, 0.2, 0.25, -np.pi / 2),
             ("revolute", -0.2, 0.0, 0.35, 0.3)]
    rows = [dynid.models.DHJoint(f"j{i}", type=t, theta=th, d=d, a=a, alpha=al)
            for i, (t, th, d, a, al) in enumerate(table, start=1)]
    tool = dynid.models.DHJoint("tool", d=0.1, a=0.05)
    tree = dynid.models.build_tree(rows, convention="classic", tool=tool)
    model, data = tree.model, tree.model.createData()
    q = np.array([0.4, 0.12, -0.8])
    pin.framesForwardKinematics(model, data, q)
    T = np.eye(4)
    for i, (t, th, d, a, al) in enumerate(table):
        qi = q[i]
        T = T @ _rot("z", th + (qi if t == "revolute" else 0)) \
            @ _trans(z=d + (qi if t == "prismatic" else 0)) @ _trans(x=a) @ _rot("x", al)
        got = data.oMf[model.getFrameId(f"link{i + 1}")].homogeneous
        np.testing.assert_allclose(got, T, atol=1e-12)
    T = T @ _trans(z=0.1) @ _trans(x=0.05)
    np.testing.assert_allclose(data.oMf[model.getFrameId("tool")].homogeneous, T, atol=1e-12)


def test_classic_dh_robot_matches_rnea():
    rows = [dynid.models.DHJoint(f"j{i}", type=t, theta=0.2 * i, d=0.1 * i, a=0.3, alpha=0.7)
            for i, t in enumerate(["revolute", "prismatic", "revolute", "revolute"], start=1)]
    rng = np.random.default_rng(4)
    inertias = {f"link{i}": dynid.models.library.random_inertia(rng) for i in range(1, 5)}
    tree = dynid.models.build_tree(rows, convention="classic", inertias=inertias)
    check(dynid.Robot(tree))


def test_continuous_urdf_joints_take_angles():
    xml = ('<robot name="c"><link name="b"/><link name="l"><inertial><origin xyz="0.2 0 0"/>'
           '<mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>'
           '</inertial></link><joint name="j" type="continuous"><parent link="b"/>'
           '<child link="l"/><axis xyz="0 1 0"/></joint></robot>')
    robot = dynid.Robot(dynid.models.Tree.from_urdf(xml))
    assert robot.tree.model.nq == 2 and robot.n == 1
    check(robot)
    # Holding 2 kg at 0.2 m along x against gravity -z: gravity's moment about y is
    # r × F = (0.2, 0, 0) × (0, 0, -2 g) = +0.4 g, so the joint applies -0.4 g.
    y = Regressor(robot)(np.zeros(1), np.zeros(1), np.zeros(1)) @ robot.prior
    np.testing.assert_allclose(y, [[-2 * 9.81 * 0.2]], rtol=1e-12)


@pytest.mark.parametrize("bad, match", [
    (dict(q=np.zeros((5, 6))), r"q: expected an array of shape \(N, 7\)"),
    (dict(v=np.zeros((4, 7))), "same number of samples"),
    (dict(a=np.full((5, 7), np.nan)), "a: non-finite value"),
    (dict(q=np.zeros((5, 7, 1))), "q: expected an array of shape"),
])
def test_bad_states_raise(panda, bad, match):
    states = dict(q=np.zeros((5, 7)), v=np.zeros((5, 7)), a=np.zeros((5, 7)))
    states.update(bad)
    with pytest.raises(dynid.DataError, match=match):
        Regressor(panda)(**states)


def test_predict_checks_parameter_length(panda):
    with pytest.raises(dynid.DataError, match="theta: expected a vector of length 91"):
        Regressor(panda).predict(np.zeros(7), np.zeros(7), np.zeros(7), np.zeros(5))


@pytest.mark.parametrize("seed", range(3))
def test_branched_trees_are_ordered_depth_first(seed):
    """Pinocchio's CRBA needs each subtree's joints to be consecutive: the mass matrix it gives
    must equal the one from RNEA with unit accelerations (and zero velocity and gravity)."""
    robot = random_robot(9, seed=seed, branched=True, prismatic=0.3)
    model = robot.tree.model.copy()
    model.gravity.linear = np.zeros(3)
    data = model.createData()
    for j in range(1, model.njoints):
        subtree = [k for k in range(j, model.njoints) if j in _ancestors(model, k)]
        assert subtree == list(range(j, j + len(subtree)))
    q = random_states(robot, 1, np.random.default_rng(seed))[0][0]
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    columns = [pin.rnea(model, data, q, np.zeros(robot.n), e) for e in np.eye(robot.n)]
    np.testing.assert_allclose(M, np.array(columns).T, atol=1e-12)


def _ancestors(model, k):
    out = []
    while k:
        out.append(k)
        k = model.parents[k]
    return out


@pytest.mark.parametrize("output", ["joint_torque", "motor_torque", "current"])
def test_motor_offsets_reach_the_joints_through_the_transmission_transpose(output):
    """A constant friction torque on each motor (``motorX.fom``), on the Panda with a coupled
    wrist like the Stäubli TX40's (motor 7 turns with joints 6 and 7: q_m7 = N7 (q6 + q7)).
    The offsets' share of the output is ``Kᵀ f`` at the joints with ``K = C diag(N)`` written
    here, ``f`` at the motors, ``f / k_T`` as current; and the power balance holds."""
    import yaml
    from mechanism_checks import power_balance_error

    from dynid.models import robot_from_mapping
    from dynid.models.library import _HERE

    ratios = np.array([100.0, -100.0, 80.0, 80.0, 50.0, 50.0, 40.0])
    constants = np.linspace(0.05, 0.11, 7)
    offsets = np.array([0.3, -0.2, 0.1, 0.05, -0.04, 0.02, 0.03])
    coupling = np.eye(7)
    coupling[6, 5] = ratios[6] / ratios[5]
    data = yaml.safe_load((_HERE / "panda.yaml").read_text())
    data.update(output=output, transmission={"coupling": coupling.tolist()})
    plain = copy.deepcopy(data)
    for j in range(7):
        act = {"name": f"m{j + 1}", "ratio": float(ratios[j]), "rotor_inertia": 1e-5,
               "viscous": 1e-4, "torque_constant": float(constants[j])}
        plain["joints"][f"joint{j + 1}"]["actuator"] = act
        data["joints"][f"joint{j + 1}"]["actuator"] = {**act, "offset": float(offsets[j])}
    robot, plain = robot_from_mapping(data), robot_from_mapping(plain)
    params = robot.parameters
    fom = params.indices(f"m{j + 1}.fom" for j in range(7))
    np.testing.assert_array_equal(params.priors[fom], offsets)
    assert {(params[i].unit, params[i].group, params[i].lower) for i in fom} == \
        {("N·m", "actuator", -np.inf)}
    rng = np.random.default_rng(8)
    q, v, a = random_states(robot, 20, rng)
    theta = random_theta(robot, rng)
    Y, Y_plain = Regressor(robot)(q, v, a), Regressor(plain)(q, v, a)
    theta_plain = theta[params.indices(plain.parameters.names)]
    share = Y @ theta - Y_plain @ theta_plain
    f = theta[fom]
    want = {"joint_torque": f @ (coupling @ np.diag(ratios)), "motor_torque": f,
            "current": f / constants}[output]
    # Both products round like sums of their terms' magnitudes; the rest is the offsets'.
    bound = sum_rounding(np.abs(Y) @ np.abs(theta) + np.abs(Y_plain) @ np.abs(theta_plain),
                         len(theta)) + 1e-12 * np.abs(want)
    assert np.all(np.abs(share - want) <= bound)
    assert power_balance_error(robot, robot.prior, seed=9) < 1e-8
