"""What the robot is: description, parameters, mechanism maps, regressor and base parameters."""

from .base import BaseParameters, base_parameters, random_states
from .bodies import Body
from .closures import Closure, IdentityClosure, LinearClosure, NonlinearClosure
from .cuts import Cut
from .dh import DHJoint, LinkInertia, build_tree
from .levers import LeverScrew, screw_dynamics
from .library import embedded_robots, load_robot, random_robot
from .linkset import LinkSet
from .loops import LoopClosure
from .parameters import LINK_KINDS, Parameter, ParameterSet
from .regressor import Regressor
from .robot import OUTPUTS, Limits, Robot
from .robotfile import load_robot_file, robot_from_mapping
from .springs import CableTorque, LinearSpring, TorsionalSpring
from .stewart import (
    LegTransmission,
    StewartClosure,
    StewartGeometry,
    check_poses,
    direct_kinematics,
    leg_friction,
    stewart_platform,
)
from .terms import CoordinateTerm, Term, armature, joint_friction, motor_dynamics
from .transmissions import Drive, Gear, Transmission
from .tree import Tree

__all__ = [
    "LINK_KINDS",
    "OUTPUTS",
    "BaseParameters",
    "Body",
    "CableTorque",
    "Closure",
    "CoordinateTerm",
    "Cut",
    "DHJoint",
    "Drive",
    "Gear",
    "IdentityClosure",
    "LegTransmission",
    "LeverScrew",
    "Limits",
    "LinearClosure",
    "LinearSpring",
    "LinkInertia",
    "LinkSet",
    "LoopClosure",
    "NonlinearClosure",
    "Parameter",
    "ParameterSet",
    "Regressor",
    "Robot",
    "StewartClosure",
    "StewartGeometry",
    "Term",
    "TorsionalSpring",
    "Transmission",
    "Tree",
    "armature",
    "base_parameters",
    "build_tree",
    "check_poses",
    "direct_kinematics",
    "embedded_robots",
    "joint_friction",
    "leg_friction",
    "load_robot",
    "load_robot_file",
    "motor_dynamics",
    "random_robot",
    "random_states",
    "robot_from_mapping",
    "screw_dynamics",
    "stewart_platform",
]
