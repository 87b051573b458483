"""Excitation trajectories: Fourier series, constraints, design criteria, optimizers.

    from dynid.trajectories import DesignSettings, design_excitation
    design = design_excitation(robot, DesignSettings(harmonics=6, frequency=0.1))
    design.trajectory.sample(rate=200.0)          # what the drives play
"""

from .constraints import CartesianBox, Report, Violation
from .criteria import ConditionNumber, DOptimal, Information, condition_numbers
from .design import Design, design_excitation
from .feasibility import build_constraints, check
from .fourier import FourierTrajectory, Samples
from .optimizers import Optimizer, available_optimizers, get_optimizer
from .settings import DesignSettings
from .spaces import DesignSpace

__all__ = [
    "CartesianBox",
    "ConditionNumber",
    "DOptimal",
    "Design",
    "DesignSettings",
    "DesignSpace",
    "FourierTrajectory",
    "Information",
    "Optimizer",
    "Report",
    "Samples",
    "Violation",
    "available_optimizers",
    "build_constraints",
    "check",
    "condition_numbers",
    "design_excitation",
    "get_optimizer",
]
