"""The σ of the unregularized physically consistent fit where a link is pressed against the
pseudo-inertias' floor ``J ≽ εI``: the face of the cone through the estimate (every entry of
``Uᵀ J U`` over an eigenspace at the floor), against the tangent directions of point masses
and rods computed by hand; a light link's floor found whatever its scale; and the reported
σ over repeated noise for a truth near the floor and for a massless truth below it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg

import dynid
from dynid.identify import IdentificationData, PhysicallyConsistent, Recording, pseudo_inertia
from dynid.identify.constrained import active_constraints, face_rows, free_subspace
from dynid.models import base_parameters, random_robot, random_states

EPS = 1e-6
FLOOR = EPS * np.array([1, 0, 0, 0, 2, 0, 2, 0, 0, 2])  # the parameters of J = εI


def _six(inertia: np.ndarray) -> np.ndarray:
    """The six entries of a symmetric 3×3 matrix in Pinocchio's order (xx, xy, yy, xz, yz,
    zz)."""
    return inertia[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]


def _point(m: float, c: np.ndarray) -> np.ndarray:
    """Ten parameters (Pinocchio order, inertia about the frame origin) of a point mass."""
    return np.r_[m, m * c, _six(m * (c @ c * np.eye(3) - np.outer(c, c)))]


def _point_tangents(m: float, c: np.ndarray) -> np.ndarray:
    """Derivatives (10, 4) of :func:`_point` by its mass and position, in closed form:
    ``∂/∂m = θ/m``, ``∂/∂c_k = [0, m e_k, m (2 c_k 1 − e_k cᵀ − c e_kᵀ)]``."""
    columns = [_point(m, c) / m]
    for k in range(3):
        e = np.eye(3)[k]
        inertia = m * (2 * c[k] * np.eye(3) - np.outer(e, c) - np.outer(c, e))
        columns.append(np.r_[0.0, m * e, _six(inertia)])
    return np.column_stack(columns)


def _same_span(a: np.ndarray, b: np.ndarray) -> None:
    assert a.shape[1] == b.shape[1]
    assert np.max(scipy.linalg.subspace_angles(a, b)) < 1e-6


def test_point_mass_parameters_are_the_pseudo_inertia_of_a_point():
    c = np.array([0.1, -0.2, 0.3])
    w = np.r_[c, 1.0]
    np.testing.assert_allclose(pseudo_inertia(_point(0.5, c)), 0.5 * np.outer(w, w),
                               atol=1e-15)
    np.testing.assert_allclose(pseudo_inertia(FLOOR), EPS * np.eye(4), atol=1e-20)


def test_face_of_a_point_mass_at_the_floor_is_moving_the_point():
    """A point mass on the floor, ``J = εI + m w wᵀ``: three eigenvalues at ε, six rows,
    and the directions they leave free are exactly those that move the point's mass and
    position (four, by hand). One row per eigenvector (the diagonal of ``Uᵀ dJ U`` only)
    leaves seven free: it takes directions that split the triple eigenvalue, taking one
    below the floor at first order, for directions along the face."""
    m, c = 0.3, np.array([0.05, -0.02, 0.12])
    theta = _point(m, c) + FLOOR
    rows = face_rows(pseudo_inertia(theta), EPS)
    assert rows.shape == (6, 10)
    free = free_subspace(np.eye(10), rows, np.ones(10))
    _same_span(free, _point_tangents(m, c))
    # A direction the diagonal rows alone allow: u1ᵀ dJ u2 ≠ 0, dJ zero elsewhere.
    U = np.linalg.eigh(pseudo_inertia(theta))[1][:, :3]
    dJ = np.outer(U[:, 0], U[:, 1]) + np.outer(U[:, 1], U[:, 0])
    direction = np.linalg.lstsq(dynid.identify.physical.PSEUDO, dJ.reshape(-1, order="F"),
                                rcond=None)[0]
    diagonal = np.array([np.kron(u, u) @ dynid.identify.physical.PSEUDO for u in U.T])
    np.testing.assert_allclose(diagonal @ direction, 0.0, atol=1e-12)
    assert np.linalg.norm(rows @ direction) > 0.5
    t = 1e-8
    lowest = np.linalg.eigvalsh(pseudo_inertia(theta + t * direction))[0]
    np.testing.assert_allclose(lowest - EPS, -t, rtol=1e-3)  # leaves the cone at first order


def test_face_of_a_rod_at_the_floor_moves_its_two_points():
    """Two point masses (a rod), ``J = εI + Σ m_i w_i w_iᵀ``: a double eigenvalue at ε,
    three rows; the free directions are those that move the two points (eight derivatives
    spanning seven directions: a rank-two 4×4 form has seven)."""
    points = [(0.2, np.array([0.1, 0.0, 0.05])), (0.4, np.array([-0.03, 0.08, 0.2]))]
    theta = sum(_point(m, c) for m, c in points) + FLOOR
    w = np.linalg.eigvalsh(pseudo_inertia(theta))
    np.testing.assert_allclose(w[:2], EPS, rtol=1e-6)
    rows = face_rows(pseudo_inertia(theta), EPS)
    assert rows.shape == (3, 10)
    moves = np.column_stack([_point_tangents(m, c) for m, c in points])
    U, s, _ = np.linalg.svd(moves, full_matrices=False)
    assert np.sum(s > 1e-9 * s[0]) == 7
    _same_span(free_subspace(np.eye(10), rows, np.ones(10)), U[:, :7])


def test_light_link_at_the_floor_is_found_whatever_its_scale():
    """A link of a few grams pressed against ε (with the solver's margin on top): its
    largest eigenvalue is 1e-4, so a slack judged only against it (1e-5 of it) misses the
    margin; judged against the floor as well it is found, with its six face rows."""
    robot = random_robot(3, seed=2, friction=True)
    params = robot.parameters
    theta = robot.prior.copy()
    margin = 1e-8
    theta[params.link_block("link3")] = _point(1e-4, np.array([0.0, 0.0, 0.2])) + \
        (1 + margin / EPS) * FLOOR
    assert np.linalg.eigvalsh(pseudo_inertia(theta[params.link_block("link3")]))[-1] < 2e-4
    rows, names = active_constraints(robot, theta, epsilon=EPS, boxes={}, masses={},
                                     total_mass=None, margin=margin)
    assert names == ["pseudo-inertia link3"] * 6
    idx = params.link_block("link3")
    np.testing.assert_allclose(np.delete(rows, idx, axis=1), 0.0)


ROBOT = random_robot(3, seed=2, friction=True)
BASE = base_parameters(ROBOT)


def _runs(link3: np.ndarray, runs: int, level: float, N: int = 200):
    """Recordings at random states, exact derivatives, output noise ``level`` times each
    output's RMS, with link 3's true parameters ``link3``; and the true base parameters."""
    theta = ROBOT.prior.copy()
    theta[ROBOT.parameters.link_block("link3")] = link3
    reg = dynid.Regressor(ROBOT)
    clean = reg.predict(*random_states(ROBOT, 500, np.random.default_rng(99)), ROBOT.prior)
    sigma = level * np.sqrt(np.mean(clean**2, axis=0))
    out = []
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        q, v, a = random_states(ROBOT, N, rng)
        y = reg.predict(q, v, a, theta) + sigma * rng.standard_normal((N, 3))
        out.append(IdentificationData(ROBOT, Recording(
            np.arange(N) * 0.01, q, y, velocities=v, accelerations=a,
            output_kind=ROBOT.output), base=BASE))
    return out, BASE.to_base(theta)


@pytest.mark.parametrize("case", ["point mass above the floor", "massless below the floor"])
def test_consistent_sigma_hold_at_the_floor(case):
    """Link 3 a point mass 2ε above the floor (a feasible truth on the edge of the cone) or
    massless (``J = 0``: a truth below the floor ``ε = 1e-6``, several σ away with data this
    clean). The reported σ (``covariance='auto'``) hold over 6 runs of repeated noise. For
    the massless truth every run warns, naming the link, and the σ hold because they carry
    the floor's pull: without it link 3's ``Izz`` errs by several σ."""
    massless = case.startswith("massless")
    link3 = np.zeros(10) if massless else _point(0.7, np.array([0.1, 0.0, 0.15])) + 3 * FLOOR
    izz = BASE.names.index("link3.Izz")
    z, z_without = [], []
    data, truth = _runs(link3, 6, 3e-6)
    for run in data:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", dynid.DynidWarning)
            est = PhysicallyConsistent(draws=40).fit(run)
        floor = [str(w.message) for w in caught if "floor epsilon" in str(w.message)]
        diagnostics = est.result_.diagnostics
        if massless:
            assert len(floor) == 1 and "(link3)" in floor[0]
            assert est.result_.covariance_method == "bootstrap"
            assert diagnostics["epsilon_links"] == ["link3"]
        else:
            assert not floor
        pull = diagnostics.get("epsilon_shift", np.zeros(len(truth)))
        variance = np.diag(est.base_cov_)
        z.append((est.base_params_ - truth) / np.sqrt(variance))
        z_without.append((est.base_params_ - truth) / np.sqrt(variance - pull**2))
    rms = np.sqrt(np.mean(np.square(z)))
    rms_without = np.sqrt(np.mean(np.square(z_without), axis=0))
    assert 0.75 < rms < 1.3
    assert np.sqrt(np.mean(np.square(z)[:, izz])) < 2.0
    if massless:
        assert rms_without[izz] > 4.0


def test_floor_move_that_cannot_be_measured_warns(monkeypatch):
    """The fit with no floor failing: the estimate and its bootstrap σ stand, and a warning
    says the σ leave the floor's move out."""
    finish = PhysicallyConsistent._finish

    def failing(self, robot, built):
        if built.epsilon == 0.0:
            raise dynid.SolverError("physically consistent estimate: CLARABEL failed")
        return finish(self, robot, built)

    monkeypatch.setattr(PhysicallyConsistent, "_finish", failing)
    (data,), _ = _runs(np.zeros(10), 1, 3e-6)
    with pytest.warns(dynid.DynidWarning, match=r"links pressed against epsilon \(link3\) "
                                                r"restrict the base parameters, and the fit "
                                                r"with no floor .* failed"):
        est = PhysicallyConsistent(draws=10).fit(data)
    assert est.result_.covariance_method == "bootstrap"
    assert "epsilon_shift" not in est.result_.diagnostics
