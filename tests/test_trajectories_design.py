"""Designed trajectories: every constraint on a dense grid (checked here with the robot's own
limits and Pinocchio, not with the design's checker), full-rank base regressors on the Panda and
the Ariane arm, reproducibility, backends, and every infeasible or bad request."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import dynid
from dynid import SolverError, TrajectoryError
from dynid.models import Limits, Regressor, Robot, base_parameters, random_robot
from dynid.trajectories import (
    CartesianBox,
    DesignSettings,
    DesignSpace,
    FourierTrajectory,
    basis_motion,
    build_constraints,
    check,
    design_excitation,
    get_optimizer,
)
from dynid.trajectories.assembly import assemble
from dynid.trajectories.information import trajectory_information

FAST = dict(samples=24, max_iterations=20, starts=1)
DENSE = 20001   # samples over the executed duration for the independent checks
TOL = 1e-9


def within(x, lower, upper, what):
    lower = np.broadcast_to(lower, x.shape)
    upper = np.broadcast_to(upper, x.shape)
    bad = (x < lower - TOL * np.maximum(1, np.abs(lower))) | \
          (x > upper + TOL * np.maximum(1, np.abs(upper)))
    assert not bad.any(), f"{what} outside its limits at {np.argwhere(bad)[:3].tolist()}"


def dense_states(robot: Robot, traj: FourierTrajectory):
    """Times, joint states and actuator states (SI) at DENSE samples, with the robot's own
    maps."""
    t = np.linspace(0, traj.duration, DENSE)
    x, xd, xdd = traj.evaluate(t)
    trans = robot.transmission
    if traj.space == "basis":
        q, v, a = x, xd, xdd
        qm, vm, am, _ = trans.actuator_state(q, v, a)
    else:
        if traj.unit == "increments":
            x = trans.from_increments(x)
            xd, xdd = (trans.from_increments(y, derivative=True) for y in (xd, xdd))
        qm, vm, am = x, xd, xdd
        q, v, a = trans.basis_state(qm, vm, am)
    return t, (q, v, a), (qm, vm, am)


def assert_dense_feasible(robot: Robot, traj: FourierTrajectory):
    """Joint and actuator limits at every one of DENSE samples, with the robot's own maps."""
    t, joint, actuator = dense_states(robot, traj)
    for lim, (p, s, c), where in ((robot.limits, joint, "joint"),
                                  (robot.actuator_limits, actuator, "actuator")):
        within(p, lim.lower, lim.upper, f"{where} position")
        within(s, -lim.velocity, lim.velocity, f"{where} velocity")
        within(c, -lim.acceleration, lim.acceleration, f"{where} acceleration")
    return t, joint[0]


def dense_margin(robot: Robot, traj: FourierTrajectory) -> float:
    """Worst margin of the joint and actuator limits at DENSE samples, as a fraction of each
    limit's half range (of the limit itself for velocities and accelerations)."""
    _, joint, actuator = dense_states(robot, traj)
    worst = np.inf
    for lim, (p, s, c) in ((robot.limits, joint), (robot.actuator_limits, actuator)):
        for j in range(robot.n):
            lo, hi = lim.lower[j], lim.upper[j]
            if np.isfinite(lo) and np.isfinite(hi):
                worst = min(worst, np.min(np.minimum(hi - p[:, j], p[:, j] - lo)) / ((hi - lo) / 2))
            for x, bound in ((s[:, j], lim.velocity[j]), (c[:, j], lim.acceleration[j])):
                if np.isfinite(bound):
                    worst = min(worst, np.min(bound - np.abs(x)) / bound)
    return worst


def full_rank(robot: Robot, traj: FourierTrajectory) -> int:
    reg = Regressor(robot)
    base = base_parameters(reg)
    t = traj.ramp + (np.arange(500) + 0.5) * traj.period / 500
    x, xd, xdd = traj.evaluate(t)
    if traj.space == "actuator":
        trans = robot.transmission
        if traj.unit == "increments":
            x = trans.from_increments(x)
            xd, xdd = (trans.from_increments(y, derivative=True) for y in (xd, xdd))
        x, xd, xdd = trans.basis_state(x, xd, xdd)
    W = base.regressor(reg(x, xd, xdd)).reshape(-1, base.rank)
    W = W / np.linalg.norm(W, axis=0)
    return np.linalg.matrix_rank(W, tol=1e-8 * np.linalg.norm(W, 2)), base.rank


def d_optimal_score(robot, traj, settings, columns, previous_rows):
    """``−log det(w WᵀW + M_0)`` of a design, from the base regressor at the criterion
    samples computed here with the robot's regressor, ``M_0 = previous_rowsᵀ previous_rows``."""
    n = settings.samples
    t = traj.ramp + (np.arange(n) + 0.5) * traj.period / n
    W = Regressor(robot)(*traj.evaluate(t))[:, :, columns].reshape(-1, len(columns))
    w = settings.rate * traj.period * traj.periods / n
    R = np.linalg.qr(np.vstack([np.sqrt(w) * W, previous_rows]), mode="r")
    return -2 * np.sum(np.log(np.abs(np.diag(R))))


def criterion_value(robot, traj, settings):
    """The criterion of a basis-space design at its samples, from the robot's regressor:
    the condition number of the base regressor with columns divided by their range, or
    ``−log det(w WᵀW)``."""
    base = base_parameters(robot)
    if settings.criterion == "d-optimal":
        return d_optimal_score(robot, traj, settings, base.independent,
                               np.zeros((0, base.rank)))
    n = settings.samples
    t = traj.ramp + (np.arange(n) + 0.5) * traj.period / n
    W = Regressor(robot)(*traj.evaluate(t))[:, :, base.independent].reshape(-1, base.rank)
    return np.linalg.cond(W / (W.max(axis=0) - W.min(axis=0)))


@pytest.mark.parametrize("criterion", ["condition", "d-optimal"])
def test_panda_design(panda, criterion):
    """D-optimal design pushes every amplitude to its limits and needs more iterations to
    come back inside them (Abdellatif, section 4)."""
    settings = DesignSettings(criterion=criterion, **{**FAST, "max_iterations": 60})
    design = design_excitation(panda, settings)
    traj = design.trajectory
    rank, b = full_rank(panda, traj)
    assert rank == b == design.rank == design.base_rank
    assert_dense_feasible(panda, traj)
    # The design's own dense check reports the worst margin found here too (its grid is
    # coarser: 4000 samples per period).
    assert design.report.feasible
    assert design.report.margin == pytest.approx(dense_margin(panda, traj), abs=1e-4)
    # Starts and ends each period at rest (Swevers' boundary), and is periodic.
    q, v, a = traj.evaluate([0.0, traj.period])
    np.testing.assert_allclose(v, 0, atol=1e-12)
    np.testing.assert_allclose(a, 0, atol=1e-12)
    np.testing.assert_allclose(q[0], q[1], atol=1e-12)
    # The score is the criterion at the optimizer's samples, and it improved on the random
    # feasible start (by 0.5 in log cond, or in −log det per base parameter).
    assert design.score == pytest.approx(criterion_value(panda, traj, settings), rel=1e-9)
    asm = assemble(panda, settings)
    start = asm.trajectory(asm.start(np.random.default_rng(settings.seed)))
    before = criterion_value(panda, start, settings)
    if criterion == "condition":
        assert np.log(design.score) < np.log(before) - 0.5
    else:
        assert design.score < before - 0.5 * design.rank


@pytest.mark.parametrize("criterion", ["condition", "d-optimal"])
def test_ariane_design_in_motor_space(criterion):
    """Leborne's setting: 3 motors, 5 harmonics, 80 s period, encoder increments (Table III)."""
    robot = dynid.load_robot("ariane")
    settings = DesignSettings(space="actuator", unit="increments", harmonics=5,
                              frequency=1 / 80, criterion=criterion, **FAST)
    design = design_excitation(robot, settings)
    traj = design.trajectory
    assert traj.space == "actuator" and traj.unit == "increments"
    assert traj.names == robot.actuator_names
    rank, b = full_rank(robot, traj)
    assert rank == b == design.rank
    assert_dense_feasible(robot, traj)
    # Table III in increments: motor 2 within [0, 6810], at most 600 inc/s.
    s = traj.sample(10.0)
    assert s.q[:, 1].min() >= -1e-6 and s.q[:, 1].max() <= 6810 + 1e-6
    assert np.abs(s.v[:, 1]).max() <= 600 + 1e-6
    # The joint motion a simulation tracks, through the levers.
    trans = robot.transmission
    q, v, a = basis_motion(traj, robot)(s.t)
    qm, vm, am, _ = trans.actuator_state(q, v, a)
    np.testing.assert_allclose(trans.to_increments(qm), s.q, atol=1e-6)
    np.testing.assert_allclose(trans.to_increments(vm, derivative=True), s.v, atol=1e-6)
    np.testing.assert_allclose(trans.to_increments(am, derivative=True), s.a, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_ariane_d_optimal_starts_run_until_their_iteration_limit(seed):
    """The optimizer's steps and gradient probes cross the end of a lever's reach: those
    samples count as far outside the limits, and no start stops on an invalid number."""
    robot = dynid.load_robot("ariane")
    settings = DesignSettings(space="actuator", unit="increments", harmonics=5,
                              frequency=1 / 80, criterion="d-optimal", seed=seed)
    design = design_excitation(robot, settings)
    for start in design.starts:
        assert start.status in ("Solve_Succeeded", "Solved_To_Acceptable_Level",
                                "Maximum_Iterations_Exceeded"), start
        assert start.accepted
    assert_dense_feasible(robot, design.trajectory)


def test_same_seed_same_trajectory(panda):
    a = design_excitation(panda, DesignSettings(seed=3, **FAST))
    b = design_excitation(panda, DesignSettings(seed=3, **FAST))
    c = design_excitation(panda, DesignSettings(seed=4, **FAST))
    np.testing.assert_array_equal(a.trajectory.coefficients, b.trajectory.coefficients)
    assert not np.allclose(a.trajectory.coefficients, c.trajectory.coefficients)


def test_progress_bar(panda, capsys):
    design_excitation(panda, DesignSettings(**{**FAST, "max_iterations": 5}), progress=True)
    err = capsys.readouterr().err
    assert "design panda:" in err and "/5 " in err and "best condition" in err


def test_slsqp_backend(panda):
    design = design_excitation(panda, DesignSettings(optimizer="slsqp", **FAST))
    assert design.rank == design.base_rank
    assert_dense_feasible(panda, design.trajectory)


def test_pyoptsparse_backend(panda):
    pytest.importorskip("pyoptsparse")
    design = design_excitation(panda, DesignSettings(optimizer="pyoptsparse", **FAST))
    assert design.rank == design.base_rank
    assert_dense_feasible(panda, design.trajectory)
    # SLSQP's own message, and one gradient per iteration up to the limit.
    start = design.starts[0]
    assert start.status in ("Optimization terminated successfully.",
                            "Iteration limit exceeded",
                            "Positive directional derivative for linesearch"), start
    assert 1 <= start.iterations <= FAST["max_iterations"] + 1


def quadratic_problem():
    """min (x − 1)² + (y − 2)² subject to x + y ≤ 2 within [−5, 5]²: optimum (0.5, 1.5)."""
    from dynid.trajectories.optimizers import Problem

    target = np.array([1.0, 2.0])
    return Problem(np.zeros(2), np.full(2, -5.0), np.full(2, 5.0),
                   lambda x: float(np.sum((x - target) ** 2)), lambda x: 2 * (x - target),
                   lambda x: np.array([x.sum() - 2.0]), lambda x: np.ones((1, 2)), 1)


def test_pyoptsparse_slsqp_reaches_a_known_optimum_and_reports_its_stop():
    pytest.importorskip("pyoptsparse")
    result = get_optimizer("pyoptsparse", tolerance=1e-10).minimize(quadratic_problem())
    assert result.converged and result.status == "Optimization terminated successfully."
    np.testing.assert_allclose(result.x, [0.5, 1.5], atol=1e-6)
    assert result.value == pytest.approx(0.5, abs=1e-6)
    # The iteration limit stops at the current iterate, for the design's checks to judge.
    stopped = get_optimizer("pyoptsparse", max_iterations=1).minimize(quadratic_problem())
    assert not stopped.converged and stopped.status == "Iteration limit exceeded"


def test_pyoptsparse_failure_statuses_raise():
    """Inform codes that mean the run itself broke raise; no inform code at all too."""
    pytest.importorskip("pyoptsparse")
    from types import SimpleNamespace

    from pyoptsparse.pyOpt_solution import SolutionInform

    from dynid.trajectories.optimizers.pyoptsparse import _inform

    for code, text in ((2, "More equality constraints than independent variables"),
                       (1, "Function evaluation required (f & c)")):
        with pytest.raises(SolverError, match=f"SLSQP failed with inform {code}"):
            _inform(SimpleNamespace(optInform=SolutionInform(code, text)), "SLSQP")
    with pytest.raises(SolverError, match="returned no inform code"):
        _inform(SimpleNamespace(optInform=None), "SLSQP")
    assert _inform(SimpleNamespace(optInform=SolutionInform(8, "Positive directional "
                                   "derivative for linesearch")), "SLSQP")[0] == 8


def test_pyoptsparse_notices_become_warnings_except_bound_clipping(capsys):
    pytest.importorskip("pyoptsparse")
    from pyoptsparse.pyOpt_error import pyOptSparseWarning

    from dynid.errors import DynidWarning
    from dynid.trajectories.optimizers.pyoptsparse import _pass_on

    pyOptSparseWarning("Values in x were outside bounds during a minimize step, clipping to "
                       "bounds")
    pyOptSparseWarning("Hot start file does not exist. Performing a regular start")
    with pytest.warns(DynidWarning, match=r"^pyOptSparse: Hot start file does not exist\. "
                                          r"Performing a regular start$") as caught:
        _pass_on(capsys.readouterr().out)
    assert len(caught) == 1


def test_missing_pyoptsparse_is_reported():
    try:
        import pyoptsparse  # noqa: F401
    except ImportError:
        with pytest.raises(SolverError, match="optimizer 'pyoptsparse' is not available"):
            get_optimizer("pyoptsparse")
    else:
        pytest.skip("pyOptSparse is installed")


def test_ramp_and_cartesian_box(panda):
    """Wang's amplitude ramp and workspace box: the flange stays above z = 0.25 m at every
    dense sample (forward kinematics by Pinocchio here), the trajectory starts and ends at
    rest."""
    box = CartesianBox("flange", (-np.inf, -np.inf, 0.25), (np.inf, np.inf, np.inf))
    settings = DesignSettings(boundary="ramp", ramp=2.0, periods=2, cartesian=(box,), **FAST)
    design = design_excitation(panda, settings)
    traj = design.trajectory
    assert traj.duration == pytest.approx(4.0 + 20.0)
    _, q = assert_dense_feasible(panda, traj)
    model = panda.tree.model
    data, fid = model.createData(), model.getFrameId("flange")
    z = []
    for qk in q[::4]:
        pin.framesForwardKinematics(model, data, qk)
        z.append(data.oMf[fid].translation[2])
    assert min(z) >= 0.25 - 1e-9
    _, v, a = traj.evaluate([0.0, traj.duration])
    np.testing.assert_allclose(v, 0, atol=1e-12)
    np.testing.assert_allclose(a, 0, atol=1e-12)


def test_previous_information(panda):
    """The information of a trajectory is Σ WᵀW over its recorded samples, and a design
    completes it, with every coordinate free or with one held still."""
    first = design_excitation(panda, DesignSettings(**FAST)).trajectory
    info = trajectory_information(panda, first, rate=20.0)
    reg = Regressor(panda)
    base = base_parameters(reg)
    s = first.sample(20.0)
    W = base.regressor(reg(s.q, s.v, s.a)).reshape(-1, base.rank)
    M = W.T @ W
    np.testing.assert_allclose(info.matrix, M, rtol=1e-9, atol=1e-9 * np.abs(M).max())
    assert info.samples == len(s.t)
    settings = DesignSettings(criterion="d-optimal", rate=20.0, **FAST)
    second = design_excitation(panda, settings, previous=[info])
    assert_dense_feasible(panda, second.trajectory)
    assert second.score == pytest.approx(
        d_optimal_score(panda, second.trajectory, settings, base.independent, W), rel=1e-9)

    held = DesignSettings(criterion="d-optimal", rate=20.0, fixed={"joint7": 0.5}, **FAST)
    third = design_excitation(panda, held, previous=[info])
    assert_dense_feasible(panda, third.trajectory)
    np.testing.assert_allclose(third.trajectory.evaluate(np.linspace(0, 10, 5))[0][:, 6], 0.5)
    columns = assemble(panda, held).columns
    assert third.base_rank == len(columns) < base.rank
    # The earlier rows on the columns the design can excite.
    keep = np.isin(base.independent, columns)
    assert third.score == pytest.approx(
        d_optimal_score(panda, third.trajectory, held, columns, W[:, keep]), rel=1e-9)


def test_trajectory_of_another_robot(panda):
    traj = FourierTrajectory(np.zeros((3, 3)), 0.1, ("a", "b", "c"))
    with pytest.raises(TrajectoryError, match=r"trajectory coordinates \['a', 'b', 'c'\] do not "
                       r"match the basis coordinates of robot 'panda'"):
        check(traj, panda)


def test_infeasible_trajectory_names_limit_coordinate_and_time(panda):
    """v_3 = 3 sin(6ωt) rad/s reaches −3 rad/s at t = 3T/24 = 1.25 s (a point of the 4000
    samples per period), beyond the 2.175 rad/s limit."""
    C = np.zeros((7, 13))
    C[:, 0] = (panda.limits.lower + panda.limits.upper) / 2
    C[2, 12] = 3.0
    traj = FourierTrajectory(C, 0.1, panda.joint_names)
    report = check(traj, panda)
    assert not report.feasible
    with pytest.raises(TrajectoryError, match=r"joint3: velocity reaches -3 rad/s at t = 1\.25 "
                       r"s, below the joint limit ±2\.175 rad/s"):
        report.raise_if_violated()


def test_shrink_to_the_largest_feasible_factor(panda):
    """v_3 = 3 sin(6ωt) rad/s peaks at 3 rad/s on the dense grid (t = 1.25 s), a_3 at 18ω·3
    rad/s²: the largest feasible scaling of the oscillation is the smaller of the two
    limit ratios, and the offsets are kept."""
    from dynid.trajectories.feasibility import largest_factor, shrink

    C = np.zeros((7, 13))
    C[:, 0] = (panda.limits.lower + panda.limits.upper) / 2
    C[2, 12] = 3.0
    traj = FourierTrajectory(C, 0.1, panda.joint_names)
    w = 2 * np.pi * 0.1
    expected = min(panda.limits.velocity[2] / 3.0, panda.limits.acceleration[2] / (18 * w))
    limits = build_constraints(panda, DesignSpace(panda))
    out, report, factor = shrink(traj, panda, limits)
    assert expected - 2e-6 <= factor <= expected
    assert report.feasible and report.margin == check(out, panda).margin
    np.testing.assert_array_equal(out.coefficients, traj.scaled(factor).coefficients)
    np.testing.assert_array_equal(out.offsets, traj.offsets)
    assert shrink(out, panda, limits)[2] == 1.0
    # The bisection itself, on tests with known answers.
    assert largest_factor(lambda f: f <= 0.37, tol=1e-9) == pytest.approx(0.37, abs=1e-9)
    assert largest_factor(lambda f: f <= 123.4, steps=60, grow=True) == pytest.approx(123.4)
    assert largest_factor(lambda f: True) == 1.0
    assert largest_factor(lambda f: f < 0) is None


def test_units_of_a_prismatic_joint_behind_a_closure():
    """The dVRK PSM's insertion is a prismatic joint (m) and its parallelogram a closure: the
    insertion's limits and messages read m and m/s, the other joints' rad."""
    psm = dynid.load_robot("dvrk_psm")
    assert not psm.closure.is_identity
    j = psm.joint_names.index("outer_insertion")
    space = DesignSpace(psm)
    assert space.units[j] == "m"
    assert all(u == "rad" for i, u in enumerate(space.units) if i != j)
    units = {(r.coordinate, r.quantity): r.unit for c in build_constraints(psm, space)
             for r in c.rows if r.group == "joint limits"}
    assert units["outer_insertion", "position"] == "m"
    assert units["outer_insertion", "velocity"] == "m/s"
    assert units["outer_pitch", "velocity"] == "rad/s"
    C = np.zeros((psm.n, 3))
    C[:, 0] = (psm.limits.lower + psm.limits.upper) / 2
    C[j, 2] = 2 * psm.limits.velocity[j]       # ẋ = 2 v_max sin(ωt), at 5 Hz: ±22 mm
    with pytest.raises(TrajectoryError, match=r"outer_insertion: velocity reaches .* m/s at t"):
        check(FourierTrajectory(C, 5.0, psm.joint_names), psm).raise_if_violated()


def test_fixed_coordinate_outside_its_limits(panda):
    with pytest.raises(TrajectoryError, match=r"limits exclude every trajectory.*joint4: "
                       r"position reaches 0\.5 rad at t = 0 s, above the joint limit "
                       r"\[-3\.0718, -0\.0698\] rad"):
        design_excitation(panda, DesignSettings(fixed={"joint4": 0.5}, **FAST))


def test_unreachable_cartesian_box(panda):
    box = CartesianBox("flange", (-np.inf, -np.inf, 3.0), (np.inf, np.inf, np.inf))
    with pytest.raises(TrajectoryError, match=r"limits exclude every trajectory.*flange: z "
                       r"position reaches .* m at t = 0 s, below the cartesian bound"):
        design_excitation(panda, DesignSettings(cartesian=(box,), **FAST))


def test_joint_and_actuator_limits_that_do_not_overlap():
    robot = random_robot(2, seed=1, motors=True)
    ratios = np.array([d.ratio for d in robot.transmission.drives])
    ends = np.sort(np.stack([5.0 * ratios, 6.0 * ratios]), axis=0)  # joint 5..6 rad, beyond π
    inf = np.full(2, np.inf)
    disjoint = Robot(robot.tree, name="r", transmission=robot.transmission, terms=robot.terms,
                     limits=robot.limits, actuator_limits=Limits(ends[0], ends[1], inf, inf,
                                                                 inf))
    with pytest.raises(TrajectoryError, match=r"limits exclude every trajectory: joint1 must "
                       r"stay in \[-3\.14\d*, 3\.14\d*\] rad .* which do not overlap"):
        design_excitation(disjoint, DesignSettings(**FAST))


@pytest.mark.parametrize(("settings", "match"), [
    (dict(fixed={f"joint{j}": 0.0 for j in range(1, 8)}), "no free coordinate"),
    (dict(fixed={"joint9": 0.0}), r"fixed: unknown coordinates \['joint9'\]"),
    (dict(space="actuator", unit="increments"), "gives no encoder resolution"),
    (dict(unit="increments"), "unit 'increments' applies to actuator space"),
    (dict(harmonics=1), "takes two harmonics or more"),
    (dict(cartesian=(CartesianBox("hand", (0, 0, 0), (1, 1, 1)),)), "has no frame 'hand'"),
    (dict(noise=(1.0, 2.0)), "noise: expected 7 standard deviations"),
    (dict(noise=(1.0, 2.0, 0, 1, 1, 1, 1)), "noise: expected 7 standard deviations > 0"),
])
def test_bad_requests(panda, settings, match):
    with pytest.raises(TrajectoryError, match=match):
        design_excitation(panda, DesignSettings(**FAST, **settings))


def test_robot_without_free_coordinate_bounds():
    """A coordinate with no finite position, velocity or acceleration limit in either space
    gives the design no scale."""
    robot = random_robot(2, seed=2)
    free = Robot(robot.tree, name="free", limits=Limits.unbounded(2))
    with pytest.raises(TrajectoryError, match="no finite position, velocity or acceleration "
                       "limit bounds its motion"):
        design_excitation(free, DesignSettings(**FAST))


def test_zero_velocity_limit_is_rejected():
    robot = random_robot(2, seed=2)
    lim = robot.limits
    stuck = Robot(robot.tree, name="stuck", limits=Limits(lim.lower, lim.upper,
                                                            np.array([1.0, 0.0]),
                                                            lim.acceleration, lim.effort))
    with pytest.raises(TrajectoryError, match="joint2: the velocity limit must be > 0, found 0"):
        design_excitation(stuck, DesignSettings(**FAST))


def test_previous_information_of_another_robot(panda):
    other = trajectory_information(dynid.load_robot("ariane"), FourierTrajectory(
        np.c_[np.full(3, 3000.0), np.full((3, 4), 100.0)], 0.0125, ("motor1", "motor2",
                                                                  "motor3"),
        space="actuator", unit="increments"), rate=2.0)
    with pytest.raises(TrajectoryError, match="does not match the robot's 62 base parameters"):
        design_excitation(panda, DesignSettings(**FAST), previous=[other])


def test_bad_noise_covariance_is_named():
    from dynid.trajectories.criteria import noise_whitener

    with pytest.raises(dynid.TrajectoryError, match="noise: the covariance is not positive"):
        noise_whitener(np.array([[1.0, 2.0], [2.0, 1.0]]), 2)
    with pytest.raises(dynid.TrajectoryError, match=r"noise: expected a finite symmetric"):
        noise_whitener(np.array([[1.0, 0.5], [0.0, 1.0]]), 2)
    L = noise_whitener(np.array([[4.0, 1.0], [1.0, 2.0]]), 2)
    np.testing.assert_allclose(L @ np.array([[4.0, 1.0], [1.0, 2.0]]) @ L.T, np.eye(2),
                               atol=1e-12)
