"""Closed-form rigid-body rows of the Stewart platform (dynid.models.stewart.rigid) against
Pinocchio: the body regressor against pin.bodyRegressor, and the pose rows against Pinocchio's
joint-torque regressor on the cut tree projected by Gᵀ (Regressor(..., analytic=False))."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

import dynid
from dynid.models import Regressor, random_states
from dynid.models.stewart import leg_friction
from dynid.models.stewart.rigid import StewartRigidRows, body_regressor


@pytest.fixture(scope="module")
def hexapod() -> dynid.Robot:
    return dynid.load_robot("hexapod")


def test_body_regressor_is_pinocchios():
    """Pinocchio's body regressor takes the spatial acceleration; the classical acceleration of
    the frame origin is its linear part plus ω × v."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        v, a = pin.Motion(rng.standard_normal(6)), pin.Motion(rng.standard_normal(6))
        acc = a.linear + np.cross(v.angular, v.linear)
        np.testing.assert_allclose(body_regressor(acc, v.angular, a.angular),
                                   pin.bodyRegressor(v, a), rtol=1e-13, atol=1e-13)
    # Batches: each row is the single evaluation.
    acc, w, wd = rng.standard_normal((3, 4, 5, 3))
    Y = body_regressor(acc, w, wd)
    np.testing.assert_array_equal(Y[2, 3], body_regressor(acc[2, 3], w[2, 3], wd[2, 3]))


@pytest.mark.parametrize("output", ["motor_torque", "joint_torque"])
def test_closed_form_rows_equal_pinocchios_projected(hexapod, output):
    robot = hexapod.with_output(output).with_terms(
        leg_friction(hexapod.closure, {"alpha": ["coulomb"], "length": ["viscous"],
                                       "spherical": ["viscous"]}, shared=["alpha"]))
    q, v, a = random_states(robot, 700, np.random.default_rng(1), margin=0.05)  # two chunks
    fast, slow = Regressor(robot), Regressor(robot, analytic=False)
    assert fast._rigid is not None and slow._rigid is None
    want = slow(q, v, a)
    np.testing.assert_allclose(fast(q, v, a), want, rtol=0, atol=1e-12 * np.abs(want).max())


def test_closed_form_only_for_the_platform_tree_it_describes(hexapod):
    """A tree whose pose links carry parameters, or another geometry, is not the closed form's:
    the regressor falls back to Pinocchio's and gives the same rows."""
    geo = hexapod.transmission.geometry
    assert isinstance(StewartRigidRows.for_tree(hexapod.tree, geo), StewartRigidRows)
    full = replace(hexapod, tree=hexapod.tree.with_links())
    assert StewartRigidRows.for_tree(full.tree, geo) is None
    other = dynid.models.StewartGeometry(geo.base * 1.01, geo.platform, geo.stroke, geo.home)
    assert StewartRigidRows.for_tree(hexapod.tree, other) is None
    q, v, a = random_states(full, 30, np.random.default_rng(2), margin=0.05)
    Y = Regressor(full)(q, v, a)
    kept = full.parameters.indices(hexapod.parameters.names)
    np.testing.assert_allclose(Y[:, :, kept], Regressor(hexapod)(q, v, a), rtol=0,
                               atol=1e-12 * np.abs(Y).max())


def test_bodies_on_the_platform_go_through_the_closure(hexapod):
    """A body fixed at the platform's frame moves with it: an identified one has the platform's
    columns, a known one adds the platform's columns times its values (Pinocchio's path, which
    the regressor takes for robots with bodies)."""
    from dynid.models import Body, LinkInertia

    body = LinkInertia(2.0, (0.01, -0.02, 0.03), (0.02, 0.001, 0.0, 0.03, 0.002, 0.04))
    q, v, a = random_states(hexapod, 30, np.random.default_rng(3), margin=0.05)
    Y = Regressor(hexapod)(q, v, a)
    platform = Y[:, :, hexapod.parameters.link_block("platform")]
    tool = replace(hexapod, bodies=(Body("tool", "platform", body),))
    Yt = Regressor(tool)(q, v, a)
    np.testing.assert_allclose(Yt[:, :, tool.parameters.link_block("tool")], platform,
                               rtol=0, atol=1e-12 * np.abs(platform).max())
    known = replace(hexapod, bodies=(Body("tool", "platform", body, known=True),))
    Yk, y_known = Regressor(known).affine(q, v, a)
    np.testing.assert_allclose(Yk, Y, rtol=0, atol=1e-12 * np.abs(Y).max())
    np.testing.assert_allclose(y_known, platform @ body.to_pinocchio().toDynamicParameters(),
                               rtol=1e-12, atol=1e-12 * np.abs(y_known).max())
