"""Exports of identified models: URDF and MuJoCo (MJCF) files.

::

    out = dynid.write_urdf(robot, result, "robot.urdf")   # or standard parameters θ (p,)
    out = dynid.write_mjcf(robot, result, "robot.xml")
    print(out.summary())          # what the file holds; out.not_written: what it cannot
"""

from .content import Export
from .mjcf import write_mjcf
from .urdf import urdf_text, write_urdf

__all__ = ["Export", "urdf_text", "write_mjcf", "write_urdf"]
