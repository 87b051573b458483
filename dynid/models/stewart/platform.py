"""The rigid-body tree and robot of a Stewart–Gough platform.

The Pinocchio tree holds

* the platform joint, six one-degree-of-freedom joints in a chain: prismatic ``x``, ``y``,
  ``z`` along the base axes, then revolute ``roll`` (x), ``pitch`` (y′), ``yaw`` (z″), so that
  their coordinates are exactly the pose of :mod:`~dynid.models.stewart.geometry` (the basis
  coordinates) and the last one carries the ``platform`` link (frame at the platform origin).
  The five links between them are virtual and massless (``x_slide``, ``y_slide``, ``z_slide``,
  ``roll_link``, ``pitch_link``): they carry no parameters (:meth:`~dynid.models.tree.Tree.
  with_links`), so the model's link blocks are the platform's and the legs';
* per leg ``i``, a universal joint at ``b_i`` (revolute ``leg{i}_alpha`` about the joint
  frame's x axis carrying the cross ``leg{i}_cross``, then ``leg{i}_beta`` about the moved y
  axis carrying the cylinder ``leg{i}_cylinder``) and the prismatic actuator joint
  ``leg{i}_length`` along the leg carrying the rod ``leg{i}_rod``. The rod's frame is at the
  spherical joint's centre, so its coordinate is the leg length.

Each leg loop is cut at its spherical joint: a point cut between the frames
``platform_s{i}`` (the point ``p_i`` on the platform) and ``leg{i}_top`` (the rod's frame).

With identical legs (``identical_legs=True``) the six crosses, cylinders and rods share one set
of parameters each (``legs_cross``, ``legs_cylinder``, ``legs_rod``): 40 link parameters in
all, as in Abdellatif Table I, where the legs are alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from ..cuts import Cut, add_frame
from ..dh import LinkInertia
from ..robot import Limits, Robot
from ..terms import Term
from ..tree import Tree
from .closure import POSE_NAMES, StewartClosure
from .geometry import StewartGeometry
from .legs import LegTransmission

__all__ = ["LEG_LINKS", "PLATFORM_LINKS", "SHARED_LEG_LINKS", "stewart_platform", "stewart_tree"]

#: Links of the platform chain; only the last is a body.
PLATFORM_LINKS = ("x_slide", "y_slide", "z_slide", "roll_link", "pitch_link", "platform")
#: Links of each leg, after its joints alpha, beta, length.
LEG_LINKS = ("cross", "cylinder", "rod")
#: The links shared by identical legs: group name → the six legs' links.
SHARED_LEG_LINKS = {f"legs_{k}": tuple(f"leg{i + 1}_{k}" for i in range(6)) for k in LEG_LINKS}

_PLATFORM_JOINTS = (pin.JointModelPX, pin.JointModelPY, pin.JointModelPZ, pin.JointModelRX,
                    pin.JointModelRY, pin.JointModelRZ)
_LEG_JOINTS = (("alpha", pin.JointModelRX), ("beta", pin.JointModelRY),
               ("length", pin.JointModelPZ))


def stewart_tree(geometry: StewartGeometry, *, platform: LinkInertia, cross: LinkInertia,
                 cylinder: LinkInertia, rod: LinkInertia,
                 gravity: Sequence[float] = (0.0, 0.0, -9.81),
                 identical_legs: bool = False) -> tuple[Tree, tuple[Cut, ...]]:
    """The cut tree of the platform (module docstring) and its six spherical-joint cuts.

    Inertias are priors in each link's frame (every leg alike): the platform's about its frame
    at the platform origin; the cross's and cylinder's about the universal joint's centre
    (z along the leg); the rod's about the spherical joint's centre (z along the leg, the rod
    below it at negative z). The platform chain's virtual links are massless; with
    ``identical_legs`` the legs' links share their parameters (:data:`SHARED_LEG_LINKS`).
    """
    model = pin.Model()
    model.gravity.linear = np.asarray(gravity, dtype=float)
    links = []
    body_frame = {0: 0}  # joint id → the frame of the link it carries (0: the universe)

    def add(parent: int, joint, name: str, link: str, placement: pin.SE3,
            inertia: LinkInertia | None) -> int:
        jid = model.addJoint(parent, joint(), placement, name)
        body = inertia.to_pinocchio() if inertia is not None else pin.Inertia.Zero()
        model.appendBodyToJoint(jid, body, pin.SE3.Identity())
        frame = model.addJointFrame(jid, body_frame[parent])
        body_frame[jid] = model.addBodyFrame(link, jid, pin.SE3.Identity(), frame)
        links.append(link)
        return jid

    parent = 0
    for k, (name, joint) in enumerate(zip(POSE_NAMES, _PLATFORM_JOINTS, strict=True)):
        parent = add(parent, joint, name, PLATFORM_LINKS[k], pin.SE3.Identity(),
                     platform if k == 5 else None)
    inertias = (cross, cylinder, rod)
    for i in range(6):
        parent = 0
        placement = pin.SE3(geometry.leg_frames[i], geometry.base[i])
        for k, (name, joint) in enumerate(_LEG_JOINTS):
            parent = add(parent, joint, f"leg{i + 1}_{name}", f"leg{i + 1}_{LEG_LINKS[k]}",
                         placement if k == 0 else pin.SE3.Identity(), inertias[k])
    tree = Tree.from_model(model, tuple(links)).with_links(
        massless=PLATFORM_LINKS[:5], shared=SHARED_LEG_LINKS if identical_legs else None)
    cuts = []
    for i in range(6):
        add_frame(model, f"platform_s{i + 1}", "platform",
                  pin.SE3(np.eye(3), geometry.platform[i]))
        add_frame(model, f"leg{i + 1}_top", f"leg{i + 1}_rod", pin.SE3.Identity())
        cuts.append(Cut((f"platform_s{i + 1}", f"leg{i + 1}_top"), "point",
                        f"spherical{i + 1}"))
    return tree, tuple(cuts)


def stewart_platform(geometry: StewartGeometry, *, platform: LinkInertia, cross: LinkInertia,
                     cylinder: LinkInertia, rod: LinkInertia,
                     gravity: Sequence[float] = (0.0, 0.0, -9.81), name: str = "stewart",
                     friction: dict | None = None, shared_friction: Sequence[str] = (),
                     friction_priors: dict | None = None, smoothing: float = 0.0,
                     output: str = "motor_torque", pose_limits: Limits | None = None,
                     actuator_limits: Limits | None = None, scale: float = 1.0,
                     zero: float = 0.0, torque_constants: Sequence[float] | None = None,
                     resolution: float | None = None, terms: Sequence[Term] = (),
                     identical_legs: bool = False) -> Robot:
    """A Stewart–Gough platform robot: basis coordinates the pose, actuators the six legs.

    Parameters
    ----------
    geometry
        Attachment points, stroke and home pose.
    platform, cross, cylinder, rod
        Inertial priors (see :func:`stewart_tree`).
    friction, shared_friction, friction_priors, smoothing
        Friction of the legs' joints (:func:`~dynid.models.stewart.friction.leg_friction`).
    output
        ``"motor_torque"`` (the legs' forces, N, when ``scale`` is 1), ``"current"`` or
        ``"joint_torque"`` (generalized forces on the pose).
    pose_limits, actuator_limits
        Limits of the pose and of the legs (default: the stroke, no rate limits).
    scale, zero, torque_constants, resolution
        The legs' transmission (:class:`~dynid.models.stewart.legs.LegTransmission`).
    terms
        Further terms (e.g. motor dynamics on the actuator coordinates).
    identical_legs
        The six legs' crosses, cylinders and rods share one set of parameters each
        (``legs_cross``, ``legs_cylinder``, ``legs_rod``; their columns summed over the legs).

    Examples
    --------
    >>> geo = StewartGeometry.symmetric(0.5, 0.2, base_gap=0.35, platform_gap=0.3,
    ...                                 height=0.9, stroke=(0.7, 1.2))
    >>> body = LinkInertia(1.0, (0, 0, 0), (0.01, 0, 0, 0.01, 0, 0.01))
    >>> robot = stewart_platform(geo, platform=body, cross=body, cylinder=body, rod=body)
    >>> robot.joint_names
    ('x', 'y', 'z', 'roll', 'pitch', 'yaw')
    >>> len(robot.parameters), robot.parameters.links[:2]      # pose links massless
    (190, ('platform', 'leg1_cross'))
    >>> alike = stewart_platform(geo, platform=body, cross=body, cylinder=body, rod=body,
    ...                          identical_legs=True)
    >>> alike.parameters.links
    ('platform', 'legs_cross', 'legs_cylinder', 'legs_rod')
    """
    from .friction import leg_friction

    tree, cuts = stewart_tree(geometry, platform=platform, cross=cross, cylinder=cylinder,
                              rod=rod, gravity=gravity, identical_legs=identical_legs)
    closure = StewartClosure(geometry, cuts)
    closure.check(tree, geometry.home[None], tolerance=1e-9)  # the tree's legs meet the platform
    names = tuple(f"leg{i + 1}" for i in range(6))
    transmission = LegTransmission(geometry, names, scale=scale, zero=zero,
                                   torque_constants=torque_constants, resolution=resolution)
    all_terms = list(terms)
    if friction:
        all_terms += leg_friction(closure, friction, shared=shared_friction,
                                  priors=friction_priors, smoothing=smoothing)
    if actuator_limits is None:
        lo, hi = (scale * (s - zero) for s in geometry.stroke)
        inf = np.full(6, np.inf)
        actuator_limits = Limits(np.full(6, min(lo, hi)), np.full(6, max(lo, hi)), inf, inf,
                                 inf)
    return Robot(tree, name=name, closure=closure, transmission=transmission,
                 terms=tuple(all_terms), output=output, limits=pose_limits,
                 actuator_limits=actuator_limits)
