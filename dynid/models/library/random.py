"""Random serial and branched robots, seeded, for tests and benchmarks."""

from __future__ import annotations

import numpy as np

from ..dh import DHJoint, LinkInertia, build_tree
from ..robot import Robot
from ..terms import joint_friction, motor_dynamics
from ..transmissions import Gear, Transmission

__all__ = ["random_inertia", "random_robot"]


def random_inertia(rng: np.random.Generator, scale: float = 0.3) -> LinkInertia:
    """A physically consistent random link: positive mass, triangle-inequality inertia."""
    mass = rng.uniform(0.5, 5.0)
    com = rng.uniform(-scale, scale, 3)
    # Principal moments of a random box, hence triangle inequalities with margin.
    sides = rng.uniform(0.05, 0.4, 3)
    moments = mass / 12 * np.array([sides[1] ** 2 + sides[2] ** 2, sides[0] ** 2 + sides[2] ** 2,
                                    sides[0] ** 2 + sides[1] ** 2])
    rot, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    tensor = rot @ np.diag(moments) @ rot.T
    return LinkInertia(mass, tuple(com), (tensor[0, 0], tensor[0, 1], tensor[0, 2],
                                          tensor[1, 1], tensor[1, 2], tensor[2, 2]))


def random_robot(n_joints: int, *, seed: int = 0, prismatic: float = 0.0,
                 branched: bool = False, friction: bool = False, motors: bool = False,
                 output: str = "joint_torque", smoothing: float = 0.0) -> Robot:
    """A random robot from a modified DH table.

    Parameters
    ----------
    n_joints
        Number of joints.
    seed
        Random seed.
    prismatic
        Probability that a joint is prismatic.
    branched
        Attach each link to a random earlier link instead of the previous one.
    friction, motors
        Add joint friction (viscous, Coulomb, offset) and gear motors (random ratio, rotor
        inertia, motor friction, torque constant) with random priors.
    output
        Model output (see :data:`~dynid.models.robot.OUTPUTS`).
    smoothing
        Coulomb sign smoothing velocity of the friction terms.
    """
    rng = np.random.default_rng(seed)
    rows, links = [], {}
    for j in range(n_joints):
        kind = "prismatic" if rng.uniform() < prismatic else "revolute"
        parent = f"link{rng.integers(0, j) + 1}" if branched and j > 1 else ""
        rows.append(DHJoint(
            name=f"joint{j + 1}", type=kind, link=f"link{j + 1}", parent=parent,
            alpha=rng.choice([0.0, np.pi / 2, -np.pi / 2, rng.uniform(-np.pi, np.pi)]),
            d=rng.uniform(-0.4, 0.4), r=rng.uniform(-0.4, 0.4), theta=rng.uniform(-np.pi, np.pi),
            gamma=rng.uniform(-np.pi, np.pi) if parent else 0.0,
            b=rng.uniform(-0.2, 0.2) if parent else 0.0,
            lower=-0.5 if kind == "prismatic" else -np.pi,
            upper=0.5 if kind == "prismatic" else np.pi))
        links[f"link{j + 1}"] = random_inertia(rng)
    gravity = rng.standard_normal(3)
    tree = build_tree(rows, inertias=links, gravity=9.81 * gravity / np.linalg.norm(gravity))
    terms = []
    # Coordinates follow the tree's (depth-first) order; row j of the table is joint{j + 1}.
    at = {name: i for i, name in enumerate(tree.joint_names)}
    if friction:
        for j in range(n_joints):
            terms.append(joint_friction(f"joint{j + 1}", at[f"joint{j + 1}"],
                                        linear=rows[j].type == "prismatic",
                                        viscous=rng.uniform(0.01, 1), coulomb=rng.uniform(0.01, 1),
                                        offset=rng.uniform(-0.2, 0.2), smoothing=smoothing))
    transmission = None
    if motors:
        ratios = rng.choice([-1, 1], n_joints) * rng.uniform(5, 150, n_joints)
        transmission = Transmission([Gear(r) for r in ratios],
                                    [f"motor{i + 1}" for i in range(n_joints)],
                                    torque_constants=rng.uniform(0.02, 0.5, n_joints))
        for i in range(n_joints):
            terms.append(motor_dynamics(f"motor{i + 1}", i, inertia=rng.uniform(1e-6, 1e-4),
                                        viscous=rng.uniform(1e-6, 1e-4),
                                        coulomb=rng.uniform(1e-4, 1e-2), smoothing=smoothing))
    name = f"random{n_joints}{'b' if branched else ''}-{seed}"
    return Robot(tree, name=name, transmission=transmission, terms=tuple(terms), output=output)
