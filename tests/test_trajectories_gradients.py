"""Derivatives used by the design, each against finite differences or a closed form."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from numerics import assert_derivative, derivative

import dynid
from dynid.models import Regressor, base_parameters, random_robot, random_states
from dynid.trajectories import CartesianBox, DesignSettings, DesignSpace
from dynid.trajectories.assembly import assemble
from dynid.trajectories.criteria import ConditionNumber, DOptimal, Information
from dynid.trajectories.sensitivity import base_regressor, regressor_vjp
from dynid.trajectories.spaces import _STEP as MAP_STEP

#: Relative accuracy of the design's own derivatives where a design space maps to the basis
#: or actuator coordinates: the map's Jacobian takes its position column from central
#: differences with a step of MAP_STEP times the coordinate's scale, whose rounding, ε/MAP_STEP
#: ≈ 2e-10 of each term, adds up over the samples (the largest seen is 6e-9 of the
#: derivative); 500 ε/MAP_STEP ≈ 1e-7 covers it and still resolves an error of 1e-5.
DESIGN_ACCURACY = 500 * np.finfo(float).eps / MAP_STEP


def scaled_matrix(rng, rows=60, n=3, b=8):
    """A random regressor whose columns span eight orders of magnitude, as in SI units."""
    return rng.standard_normal((rows, n, b)) * np.logspace(-5, 3, b)


CRITERIA = [ConditionNumber("range"), ConditionNumber("norm"), ConditionNumber("none"),
            DOptimal(), DOptimal(weight=7.0)]


@pytest.mark.parametrize("criterion", CRITERIA, ids=lambda c: f"{c.name}-"
                         f"{getattr(c, 'scaling', c.weight)}")
@pytest.mark.parametrize("with_previous", [False, True])
def test_criterion_gradient(criterion, with_previous):
    rng = np.random.default_rng(0)
    W = scaled_matrix(rng)
    if with_previous:
        criterion.previous = Information.from_regressor(scaled_matrix(rng, rows=20))
    try:
        _, G = criterion.objective(W)
        for _ in range(3):
            # Each column moves by its own size over a unit step.
            D = rng.standard_normal(W.shape) * np.abs(W).max(axis=(0, 1))
            fd = derivative(lambda w: criterion.objective(w, False)[0], W, D)
            assert_derivative(np.sum(G * D), fd, what=criterion.name)
            with pytest.raises(AssertionError):     # the check sees a gradient 1e-4 off
                assert_derivative(np.sum(G * D) * (1 + 1e-4), fd)
    finally:
        criterion.previous = None


@pytest.mark.parametrize("scaling", ["range", "norm", "none"])
def test_previous_information_is_stacking_rows(scaling):
    """A criterion with earlier information equals the criterion of the stacked regressors,
    computed directly with numpy."""
    rng = np.random.default_rng(1)
    W1, W2 = scaled_matrix(rng, rows=30), scaled_matrix(rng, rows=50)
    stacked = np.vstack([W1.reshape(-1, 8), W2.reshape(-1, 8)])
    if scaling == "range":
        scale = stacked.max(axis=0) - stacked.min(axis=0)
    elif scaling == "norm":
        scale = np.linalg.norm(stacked, axis=0)
    else:
        scale = np.ones(8)
    c = ConditionNumber(scaling, previous=Information.from_regressor(W1))
    assert c.score(W2) == pytest.approx(np.linalg.cond(stacked / scale), rel=1e-7)
    d = DOptimal(previous=Information.from_regressor(W1))
    logdet = np.linalg.slogdet(stacked.T @ stacked)[1]
    assert d.score(W2) == pytest.approx(-logdet, rel=1e-9)
    assert d.objective(W2, gradient=False)[0] == pytest.approx(-logdet / 8, rel=1e-9)


def test_information_about_some_base_parameters():
    """Restricted to some columns, the information is that of those columns of the rows."""
    rng = np.random.default_rng(2)
    W = scaled_matrix(rng, rows=30).reshape(-1, 8)
    idx = np.array([0, 2, 3, 7])
    part = Information.from_regressor(W).restrict(idx)
    M = W[:, idx].T @ W[:, idx]
    np.testing.assert_allclose(part.matrix, M, rtol=1e-9, atol=1e-12 * np.abs(M).max())
    np.testing.assert_array_equal(part.column_min, W[:, idx].min(axis=0))
    np.testing.assert_array_equal(part.column_max, W[:, idx].max(axis=0))
    assert np.allclose(part.root, np.triu(part.root))


def test_trajectory_information_over_several_chunks(panda):
    """Σ Wᵀ Σ⁻¹ W of a trajectory recorded over more samples than one regressor chunk, with
    a noise covariance, against the whitened rows stacked at once; adding information of a
    few rows (fewer than the base parameters) adds the matrices."""
    from dynid.trajectories import FourierTrajectory, trajectory_information

    rng = np.random.default_rng(7)
    C = 0.1 * rng.standard_normal((7, 9))
    C[:, 0] = (panda.limits.lower + panda.limits.upper) / 2
    traj = FourierTrajectory(C, 0.2, panda.joint_names)
    cov = np.diag(rng.uniform(0.5, 2.0, 7)) + 0.1
    info = trajectory_information(panda, traj, rate=250.0, noise=cov)
    s = traj.sample(250.0)
    reg = Regressor(panda)
    assert len(s.t) > reg.chunk_size
    base = base_parameters(reg)
    L = np.linalg.cholesky(cov)
    W = np.linalg.solve(L, reg(s.q, s.v, s.a)[:, :, base.independent]).reshape(-1, base.rank)
    M = W.T @ W
    np.testing.assert_allclose(info.matrix, M, rtol=1e-9, atol=1e-9 * np.abs(M).max())
    np.testing.assert_allclose(info.column_min, W.min(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(info.column_max, W.max(axis=0), rtol=1e-12, atol=1e-12)
    assert info.samples == len(s.t)
    few = Information.from_regressor(W[:5])
    both = info + few
    np.testing.assert_allclose(both.matrix, M + W[:5].T @ W[:5], rtol=1e-9,
                               atol=1e-9 * np.abs(M).max())
    assert both.samples == info.samples + 5


def test_regressor_sensitivities_against_finite_differences():
    """⟨G, ∂W/∂x⟩ at single samples of a random robot with friction and gear motors, output
    current, against central differences of the criterion in each state."""
    robot = random_robot(4, seed=3, friction=True, motors=True, output="current",
                         prismatic=0.3)
    reg = Regressor(robot)
    cols = base_parameters(reg).independent
    q, v, a = random_states(robot, 25, np.random.default_rng(4))
    crit = ConditionNumber("norm")
    W = base_regressor(reg, cols, q, v, a)
    _, G = crit.objective(W)
    sensitivities = regressor_vjp(reg, cols, q, v, a, G)

    def f(states):
        return crit.objective(base_regressor(reg, cols, *states), False)[0]

    states = np.stack([q, v, a])
    assert np.abs(v[[0, 11]]).min() > 1e-2      # no Coulomb sign flip within the steps (≤ 1e-3)
    for k in (0, 11):
        for kind in range(3):
            for j in range(robot.n):
                e = np.zeros_like(states)
                e[kind, k, j] = 1.0
                fd = derivative(f, states, e)
                assert_derivative(sensitivities[kind][k, j], fd,
                                  size=np.abs(sensitivities[kind]).max(),
                                  what=f"sample {k}, {'qva'[kind]}{j + 1}")


def test_lever_map_jacobian_closed_form():
    """Blocks of the motor-space → joint-space Jacobian of the Ariane arm, in encoder
    increments, against the lever's own derivatives: q = g⁻¹(q_m) gives ∂q/∂q_m = ∂q̇/∂q̇_m =
    ∂q̈/∂q̈_m = 1/g′ and ∂q̈/∂q̇_m = −2 g″ q̇ / g′²."""
    robot = dynid.load_robot("ariane")
    space = DesignSpace(robot, "actuator", "increments")
    lim = space.limits()
    rng = np.random.default_rng(5)
    x = lim.lower + (lim.upper - lim.lower) * rng.uniform(0.1, 0.9, (6, 3))
    xd = rng.uniform(-300, 300, (6, 3))
    xdd = rng.uniform(-1000, 1000, (6, 3))
    J = space.jacobian("basis", x, xd, xdd, scale=lim.upper - lim.lower)
    q, v, _ = space.basis_state(x, xd, xdd)
    gain = robot.transmission.increments_per_turn / (2 * np.pi)      # increments per rad
    for j, drive in enumerate(robot.transmission.drives):
        _, gp, gpp = drive.evaluate(q[:, j])
        for k in range(3):
            np.testing.assert_allclose(J[:, k, j, k, j], 1 / (gp * gain[j]), rtol=1e-6)
        np.testing.assert_allclose(J[:, 2, j, 1, j], -2 * gpp * v[:, j] / gp**2 / gain[j],
                                   rtol=1e-6)
        others = [i for i in range(3) if i != j]
        assert np.all(J[:, :, j][:, :, :, others] == 0)     # elementwise drives


def test_cartesian_jacobian_against_finite_differences(panda):
    box = CartesianBox("flange", (-1, -1, 0.0), (1, 1, 1.5)).bind(panda)
    q = random_states(panda, 4, np.random.default_rng(6))[0]
    J = box.jacobian(q, q, q)[:, :, 0, :]
    for j in range(panda.n):
        e = np.zeros_like(q)
        e[:, j] = 1.0               # every sample moves joint j: each sees its own column
        fd = derivative(lambda x: box.values(x, q, q), q, e)
        assert_derivative(J[:, :, j], fd, size=np.abs(J).max(), what=f"∂ flange / ∂ q{j + 1}")
    both = box.values_and_jacobian(q, q, q)
    np.testing.assert_allclose(both[0], box.values(q, q, q), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(both[1][:, :, 0, :], J, rtol=1e-12, atol=1e-12)
    assert not both[1][:, :, 1:].any()
    # and the values are the frame's origin from Pinocchio's forward kinematics
    model = panda.tree.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, q[0])
    np.testing.assert_allclose(box.values(q[:1], q[:1], q[:1])[0],
                               data.oMf[model.getFrameId("flange")].translation)


CASES = {
    "panda-basis-rest": ("panda", dict()),
    "panda-d-optimal-noise": ("panda", dict(criterion="d-optimal",
                                            noise=(1, 2, 1, 2, 0.5, 0.5, 0.3))),
    "panda-ramp-cartesian": ("panda", dict(boundary="ramp", ramp=3.0, cartesian=[
        CartesianBox("flange", (-np.inf, -np.inf, 0.2), (np.inf, np.inf, np.inf))])),
    "random-motors-actuator": ("random", dict(space="actuator", scaling="norm")),
    "random-smoothed-friction": ("smooth", dict(boundary="periodic")),
    "ariane-increments": ("ariane", dict(space="actuator", unit="increments", harmonics=5,
                                         frequency=0.0125)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_design_gradients_against_finite_differences(case):
    """Objective gradient and constraint Jacobian with respect to the optimizer variables,
    along random directions, at a random feasible start."""
    name, kw = CASES[case]
    if name == "random":
        robot = random_robot(3, seed=7, friction=True, motors=True)
    elif name == "smooth":
        robot = random_robot(3, seed=9, friction=True, smoothing=0.05, prismatic=0.5)
    else:
        robot = dynid.load_robot(name)
    asm = assemble(robot, DesignSettings(samples=24, **kw))
    rng = np.random.default_rng(8)
    x = asm.start(rng)
    p = asm.problem
    g, J = p.gradient(x), p.constraints_jacobian(x)
    # The same Jacobian when the values at x were asked for first.
    p.constraints_value(np.zeros_like(x))
    p.constraints_value(x)
    np.testing.assert_allclose(p.constraints_jacobian(x), J, rtol=1e-12, atol=1e-14)
    for _ in range(2):
        d = rng.standard_normal(len(x))
        d /= np.linalg.norm(d)
        fd = derivative(p.objective, x, d)          # the variables are of order one
        assert_derivative(g @ d, fd, accuracy=DESIGN_ACCURACY, what="objective")
        with pytest.raises(AssertionError):         # the check sees a gradient 1e-4 off
            assert_derivative((1 + 1e-4) * g @ d, fd, accuracy=DESIGN_ACCURACY)
        fdc = derivative(p.constraints_value, x, d)
        assert_derivative(J @ d, fdc, accuracy=DESIGN_ACCURACY, what="constraints")
        with pytest.raises(AssertionError):
            assert_derivative((1 + 1e-4) * J @ d, fdc, accuracy=DESIGN_ACCURACY)


def test_states_beyond_a_levers_reach_are_flagged_sample_by_sample():
    """Motor 1 of the Ariane arm swings past the end of its cylinder's stroke for part of the
    period: only those samples are unreachable, every other sample keeps the joint state that
    the lever maps it to, sample by sample."""
    from dynid.errors import ModelError
    from dynid.trajectories import FourierTrajectory
    from dynid.trajectories.feasibility import build_constraints, evaluate

    robot = dynid.load_robot("ariane")
    trans = robot.transmission
    lever = trans.drives[0]
    reach = (lever.l1 + lever.l2 - lever.length_at_zero) * lever.scale    # motor rad
    C = np.zeros((3, 5))
    C[:, 0] = (robot.actuator_limits.lower + robot.actuator_limits.upper) / 2
    C[0, 0] = reach - 300.0
    w = 2 * np.pi / 80
    C[0, 1] = 600.0 * w                       # ±600 rad about the offset: 300 rad past reach
    traj = FourierTrajectory(C, 1 / 80, robot.actuator_names, space="actuator")
    space = DesignSpace(robot, "actuator")
    t = np.linspace(0, 80, 321)
    qm, vm, am = traj.evaluate(t)
    values, rows = evaluate(build_constraints(robot, space), space, qm, vm, am)

    reachable = np.ones(len(t), bool)
    q = np.full_like(qm, np.nan)
    for k in range(len(t)):
        try:
            q[k] = trans.basis_state(qm[k:k + 1], vm[k:k + 1], am[k:k + 1])[0][0]
        except ModelError:
            reachable[k] = False
    assert 0 < reachable.sum() < len(t)
    for i, row in enumerate(rows):
        if row.group == "joint limits" and row.quantity == "position":
            j = robot.joint_names.index(row.coordinate)
            np.testing.assert_array_equal(np.isnan(values[:, i]), ~reachable if j == 0 else False)
            np.testing.assert_allclose(values[reachable, i], q[reachable, j], rtol=1e-12)


def test_design_derivatives_with_samples_beyond_reach():
    """A point whose oscillation takes the first Ariane lever past its reach at some samples:
    the objective is infinite there, and the constraint Jacobian is finite, still the
    derivative of the constraint values (the unreachable samples count as a constant), and
    the rows of the other two joints keep their directions."""
    robot = dynid.load_robot("ariane")
    asm = assemble(robot, DesignSettings(space="actuator", harmonics=5, frequency=0.0125,
                                         samples=24))
    p = asm.problem
    rng = np.random.default_rng(3)
    x = asm.start(rng)
    per = len(x) // robot.n                    # offset and harmonics of motor 1 come first
    for factor in np.linspace(1.5, 40, 80):
        far = x.copy()
        far[1:per] *= factor
        if not np.isfinite(p.objective(far)):
            break
    else:
        pytest.fail("no scaling of the start takes motor 1 beyond its lever's reach")
    J = p.constraints_jacobian(far)
    assert np.all(np.isfinite(J)) and np.all(np.isfinite(p.constraints_value(far)))
    others = [i for i, r in enumerate(p.rows)
              if r.group == "joint limits" and r.coordinate != robot.joint_names[0]]
    assert others and np.all(np.abs(J[others]).max(axis=1) > 0)
    for _ in range(2):
        d = rng.standard_normal(len(x))
        d /= np.linalg.norm(d)
        # A sample crossing the reach within a step would make the differences jump: the
        # extrapolations of the longer steps then disagree, and shorter ones are kept.
        fdc = derivative(p.constraints_value, far, d)
        assert_derivative(J @ d, fdc, accuracy=DESIGN_ACCURACY, what="constraints")
