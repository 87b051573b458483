"""Exports of identified models: parameter files, URDF and MuJoCo (MJCF) files.

::

    out = dynid.write_urdf(robot, result, "robot.urdf")   # or standard parameters θ (p,)
    out = dynid.write_mjcf(robot, result, "robot.xml")
    print(out.summary())          # what the file holds; out.not_written: what it cannot
"""

from .content import Export
from .mjcf import write_mjcf
from .parameters import ParameterFile, load_parameters, save_parameters
from .urdf import urdf_text, write_urdf

__all__ = ["Export", "ParameterFile", "load_parameters", "save_parameters", "urdf_text",
           "write_mjcf", "write_urdf"]
