"""Identical legs of the hexapod (one shared set of link parameters, Abdellatif Table I) and
massless links: parameter sets, regressor columns against the per-leg model through Pinocchio,
Lagrange multipliers, base parameters, estimators, consistency, exports, and bad input."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import yaml
from conftest import check_physical
from test_hexapod import lagrange_forces

import dynid
from dynid.models import Regressor, Tree, base_parameters, random_states, robot_from_mapping
from dynid.models.library import _HERE
from dynid.models.linkset import LinkSet
from dynid.models.stewart.platform import LEG_LINKS, SHARED_LEG_LINKS

FILE = yaml.safe_load((_HERE / "hexapod.yaml").read_text())


@pytest.fixture(scope="module")
def own() -> dynid.Robot:
    return dynid.load_robot("hexapod")


@pytest.fixture(scope="module")
def shared() -> dynid.Robot:
    return robot_from_mapping({**FILE, "identical_legs": True})


def expand(own, shared, theta):
    """Per-leg parameters of the model with its own link blocks from the shared values."""
    out = np.empty(len(own.parameters))
    for name, value in zip(shared.parameters.names, theta, strict=True):
        owner, kind = name.split(".")
        if owner in SHARED_LEG_LINKS:
            for link in SHARED_LEG_LINKS[owner]:
                out[own.parameters.index(f"{link}.{kind}")] = value
        else:
            out[own.parameters.index(name)] = value
    return out


def states(robot, n, seed):
    return random_states(robot, n, np.random.default_rng(seed), margin=0.05)


def test_identical_legs_carry_one_set_of_link_parameters(own, shared):
    assert shared.parameters.links == ("platform", "legs_cross", "legs_cylinder", "legs_rod")
    assert len(shared.parameters.where(group="link")) == 40
    assert len(shared.parameters) == len(own.parameters) - 150
    np.testing.assert_array_equal(shared.link_counts, [1, 6, 6, 6])
    # Every leg link takes the shared block; the pose chain's virtual links are zero.
    values = shared.link_values(shared.prior)
    np.testing.assert_array_equal(values, own.link_values(own.prior))
    assert not np.any(values[:5])


def test_shared_columns_are_the_legs_columns_summed(own, shared):
    """Against the per-leg model evaluated through Pinocchio's regressor (analytic=False)."""
    q, v, a = states(own, 40, seed=0)
    Y = Regressor(shared)(q, v, a)
    Y_own = Regressor(own, analytic=False)(q, v, a)
    P, Po = shared.parameters, own.parameters
    for group, links in SHARED_LEG_LINKS.items():
        want = sum(Y_own[:, :, Po.link_block(link)] for link in links)
        np.testing.assert_allclose(Y[:, :, P.link_block(group)], want, rtol=0,
                                   atol=1e-12 * np.abs(Y_own).max())
    rest = [n for n in P.names if n.split(".")[0] not in SHARED_LEG_LINKS]
    np.testing.assert_allclose(Y[:, :, P.indices(rest)], Y_own[:, :, Po.indices(rest)],
                               rtol=0, atol=1e-12 * np.abs(Y_own).max())


def test_identical_legs_regressor_matches_lagrange_multipliers(own, shared):
    rng = np.random.default_rng(1)
    theta = shared.prior * rng.uniform(0.5, 1.5, len(shared.prior))
    q, v, a = states(shared, 20, seed=1)
    want = lagrange_forces(own, expand(own, shared, theta), q, v, a)
    got = Regressor(shared)(q, v, a) @ theta
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * np.abs(want).max())


def test_identical_legs_base_parameters_and_abdellatif_table_I(shared):
    """37 base parameters: 23 rigid-body and Table I's 14 friction coefficients. Under the
    paper's assumptions (the cross's centre of mass at the joint centre, the other centres of
    mass on the leg's and the platform's axes, principal axes along the frames) the rigid-body
    columns left have rank 10: Table I's p1 … p10."""
    base = base_parameters(shared)
    assert base.rank == 37
    kept = [shared.parameters[i] for i in base.independent]
    assert sum(p.group == "link" for p in kept) == 23
    assert sum(p.group == "friction" for p in kept) == 14
    assert "platform.m + 6·legs_rod.m" in base.names  # p10 = m_E + 6 m_3
    q, v, a = states(shared, 400, seed=2)
    Y = Regressor(shared)(q, v, a).reshape(-1, len(shared.parameters))
    axial = ("m", "mcz", "Ixx", "Iyy", "Izz")
    names = ([f"platform.{k}" for k in axial] + [f"legs_cross.{k}" for k in axial if k != "mcz"]
             + [f"legs_{b}.{k}" for b in LEG_LINKS[1:] for k in axial])
    s = np.linalg.svd(Y[:, shared.parameters.indices(names)], compute_uv=False)
    assert np.sum(s > 1e-9 * s[0]) == 10


def test_estimators_consistency_and_files_on_identical_legs(tmp_path):
    from dynid.export import load_parameters, save_parameters, urdf_text
    from dynid.identify import OLS, IdentificationData, PhysicallyConsistent, Recording
    from dynid.report.consistency import consistency

    (tmp_path / "legs.yaml").write_text(yaml.safe_dump({**FILE, "identical_legs": True}))
    shared = dynid.load_robot(tmp_path / "legs.yaml")
    theta = shared.prior * 1.05
    q, v, a = states(shared, 300, seed=3)
    y = Regressor(shared).predict(q, v, a, theta)
    y += 1e-6 * np.random.default_rng(4).standard_normal(y.shape)  # white, far below N
    rec = Recording(np.arange(300) * 0.01, q, y, velocities=v, accelerations=a,
                    names=shared.joint_names, units={"positions": list(shared.basis_units)},
                    output_kind=shared.output)
    base = base_parameters(shared)
    data = IdentificationData(shared, rec, base=base)
    truth = base.to_base(theta)
    for estimator in (OLS(), PhysicallyConsistent()):
        est = estimator.fit(data)
        np.testing.assert_allclose(est.base_params_, truth, rtol=0,
                                   atol=1e-5 * np.abs(truth).max())
    check_physical(shared, est.params_)
    assert set(est.result_.solver["lmi_eigenvalues"]) == set(shared.parameters.links)
    total = consistency(shared, theta).total_mass
    m = {k: theta[shared.parameters.index(f"{k}.m")] for k in shared.parameters.links}
    assert total == pytest.approx(m["platform"] + 6 * (m["legs_cross"] + m["legs_cylinder"]
                                                      + m["legs_rod"]), rel=1e-12)
    path = save_parameters(est.result_, tmp_path / "identified.yaml", robot=shared)
    back = load_parameters(path)
    assert back.robot.parameters.names == shared.parameters.names
    np.testing.assert_array_equal(back.result.params, est.params_)
    text = urdf_text(shared, est.params_)
    assert text.count('<mass value="') >= 19  # the platform and the 18 leg links
    from dynid.report import write_report

    write_report(shared, est.result_, {"run": rec}, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert "legs_rod" in page and "x_slide" not in page


@pytest.mark.parametrize(("massless", "shared_links", "match"), [
    (["nope"], None, r"massless\[0\]: no link 'nope' in the tree"),
    ([], {"platform": ["leg1_rod", "leg2_rod"]}, r"shared\['platform'\]: a group needs a name"),
    ([], {"rods": ["leg1_rod"]}, r"shared\['rods'\]: expected two or more different links"),
    ([], {"rods": ["leg1_rod", "leg9_rod"]}, r"shared\['rods'\]: no link 'leg9_rod'"),
    (["x_slide"], {"slides": ["x_slide", "y_slide"]}, "link 'x_slide' is already massless"),
    ([], {"a": ["leg1_rod", "leg2_rod"], "b": ["leg2_rod", "leg3_rod"]},
     "link 'leg2_rod' is already in group 'a'"),
])
def test_bad_link_sets_are_named(own, massless, shared_links, match):
    with pytest.raises(dynid.ModelError, match=match):
        own.tree.with_links(massless=massless, shared=shared_links)


def test_every_link_massless_is_refused():
    with pytest.raises(dynid.ModelError, match="every link of the tree is massless"):
        LinkSet.build(("a", "b"), massless=("a", "b"))


def test_massless_links_with_inertia_and_unlike_shared_links_are_refused(own):
    with pytest.raises(dynid.ModelError, match=r"massless link 'leg1_rod' has inertia in the "
                                               r"model \(mass 1 kg"):
        own.tree.with_links(massless=["leg1_rod"])
    model = own.tree.model.copy()
    model.inertias[own.tree.link_names.index("leg2_rod") + 1].mass = 2.0
    tree = Tree.from_model(model, own.tree.link_names)
    with pytest.raises(dynid.ModelError, match=r"links 'leg1_rod' and 'leg2_rod' share "
                                               "parameters but their priors differ"):
        tree.with_links(shared={"rods": [f"leg{i}_rod" for i in range(1, 7)]})
    # A robot built on a tree keeps its link set: the count follows the tree.
    assert len(replace(own, tree=own.tree.with_links(massless=own.tree.massless[:2]))
               .parameters) == len(own.parameters) + 30


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_identical_legs_in_a_robot_file_must_be_a_boolean(value):
    with pytest.raises(dynid.ModelError, match="identical_legs: expected true or false"):
        robot_from_mapping({**FILE, "identical_legs": value})
