"""What the robot is: description, parameters, mechanism maps, regressor and base parameters."""

from .base import BaseParameters, base_parameters, random_states
from .closures import Closure, IdentityClosure
from .dh import DHJoint, LinkInertia, build_tree
from .library import embedded_robots, load_robot, random_robot
from .parameters import LINK_KINDS, Parameter, ParameterSet
from .regressor import Regressor
from .robot import OUTPUTS, Limits, Robot
from .robotfile import load_robot_file, robot_from_mapping
from .terms import CoordinateTerm, Term, joint_friction, motor_dynamics
from .transmissions import Drive, Gear, Transmission
from .tree import Tree

__all__ = [
    "LINK_KINDS",
    "OUTPUTS",
    "BaseParameters",
    "Closure",
    "CoordinateTerm",
    "DHJoint",
    "Drive",
    "Gear",
    "IdentityClosure",
    "Limits",
    "LinkInertia",
    "Parameter",
    "ParameterSet",
    "Regressor",
    "Robot",
    "Term",
    "Transmission",
    "Tree",
    "base_parameters",
    "build_tree",
    "embedded_robots",
    "joint_friction",
    "load_robot",
    "load_robot_file",
    "motor_dynamics",
    "random_robot",
    "random_states",
    "robot_from_mapping",
]
