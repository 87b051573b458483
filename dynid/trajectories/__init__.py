"""Excitation trajectories: Fourier series, constraints, design criteria, optimizers.

    from dynid.trajectories import DesignSettings, design_excitation, save_trajectory
    design = design_excitation(robot, DesignSettings(harmonics=6, frequency=0.1))
    design.trajectory.sample(rate=200.0)          # what the drives play
    save_trajectory("traj.json", design)          # trajectory, every setting, a summary

Plots: :func:`dynid.trajectories.plot.plot_trajectory` (imports matplotlib).
"""

from .constraints import CartesianBox, Report, Violation
from .criteria import ConditionNumber, DOptimal, Information, condition_numbers
from .design import Design, design_excitation
from .efforts import EffortConstraint
from .feasibility import build_constraints, check
from .fourier import FourierTrajectory, Samples
from .information import trajectory_information
from .io import TrajectoryFile, load_trajectory, read_trajectory_file, save_trajectory
from .optimizers import Optimizer, available_optimizers, get_optimizer
from .settings import DesignSettings
from .spaces import DesignSpace, basis_motion

__all__ = [
    "CartesianBox",
    "ConditionNumber",
    "DOptimal",
    "Design",
    "DesignSettings",
    "DesignSpace",
    "EffortConstraint",
    "FourierTrajectory",
    "Information",
    "Optimizer",
    "Report",
    "Samples",
    "TrajectoryFile",
    "Violation",
    "available_optimizers",
    "basis_motion",
    "build_constraints",
    "check",
    "condition_numbers",
    "design_excitation",
    "get_optimizer",
    "load_trajectory",
    "read_trajectory_file",
    "save_trajectory",
    "trajectory_information",
]
