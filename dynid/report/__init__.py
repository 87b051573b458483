"""Identification reports: one self-contained HTML file per result.

::

    import dynid
    robot = dynid.load_robot("panda")
    result = dynid.load_result("result.json")
    dynid.write_report(robot, result, {"run1.npz": dynid.read_npz("run1.npz")}, "report.html",
                       validation={"run2.npz": dynid.read_npz("run2.npz")})

The numbers it shows are available on their own: :func:`consistency` (pseudo-inertia
eigenvalues, total mass, bounds) and :func:`conditioning` (condition numbers of the base
regressor).
"""

from .conditioning import Conditioning, conditioning
from .consistency import Consistency, consistency
from .report import write_report

__all__ = ["Conditioning", "Consistency", "conditioning", "consistency", "write_report"]
