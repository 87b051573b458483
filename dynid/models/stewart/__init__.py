"""Stewart–Gough platforms (6-DOF parallel robots, after Abdellatif & Heimann, Robotica 2009).

Basis coordinates are the platform pose (position and roll–pitch–yaw angles), actuator
coordinates the six leg lengths; the legs are universal–prismatic–spherical chains cut at the
spherical joints::

    robot = dynid.load_robot("hexapod")             # PaLiDA-like, forces of the legs in N
    lengths = check_poses(robot, poses, t=t)         # stroke, reach, singularity, by time
    poses = direct_kinematics(robot, lengths, t=t)   # Newton–Raphson along the samples
    Y = dynid.Regressor(robot)(poses, rates, accelerations)   # pose rates, not the twist
    robot = robot.with_terms(leg_friction(robot.closure, {"length": ["viscous"]}))
    robot = stewart_platform(geometry, ..., identical_legs=True)  # legs_cross, legs_rod …

The regressor's link columns come in closed form over all samples
(:class:`~dynid.models.stewart.rigid.StewartRigidRows`); the pose chain's virtual links are
massless (no parameters).
"""

from .checks import check_poses
from .closure import POSE_NAMES, StewartClosure
from .direct import direct_kinematics
from .friction import SharedFriction, SphericalFriction, leg_friction
from .geometry import StewartGeometry, rate_matrix, rate_matrix_derivative, rotation
from .legs import LegTransmission
from .platform import SHARED_LEG_LINKS, stewart_platform, stewart_tree
from .rigid import StewartRigidRows, body_regressor

__all__ = [
    "POSE_NAMES",
    "SHARED_LEG_LINKS",
    "LegTransmission",
    "SharedFriction",
    "SphericalFriction",
    "StewartClosure",
    "StewartGeometry",
    "StewartRigidRows",
    "body_regressor",
    "check_poses",
    "direct_kinematics",
    "leg_friction",
    "rate_matrix",
    "rate_matrix_derivative",
    "rotation",
    "stewart_platform",
    "stewart_tree",
]
