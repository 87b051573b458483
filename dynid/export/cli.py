"""The ``dynid export`` command: an identification result as a URDF and a MuJoCo model.

::

    dynid export result.json --urdf panda_identified.urdf --mjcf panda_identified.xml
    dynid export result.json --params parameters.yaml          # names, units, σ (or .json)
    dynid export result.json --urdf panda.urdf --into franka_description/panda.urdf

The robot is the one the result records (``robot_source``), or ``--robot``. The files are
checked before anything is computed. The command prints what each file holds and what the
format could not hold; non-physical parameters are refused unless ``--project`` writes their
nearest physically consistent values (and prints how far they moved).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .._arguments import check_output
from ..errors import DataError

__all__ = ["register"]

_EXAMPLE = """\
example:
  dynid identify panda run.npz -o result.json
  dynid export result.json --urdf panda_identified.urdf --mjcf panda_identified.xml
  dynid export result.json --params parameters.yaml     # a parameter file (or .json)
  dynid export result.json --urdf panda.urdf --into franka_description/panda.urdf
"""


def _export(args: argparse.Namespace) -> None:
    from ..identify.result import load_result_and_robot
    from .mjcf import write_mjcf
    from .parameters import save_parameters
    from .urdf import write_urdf

    targets = [(path, option) for path, option in ((args.urdf, "--urdf"),
                                                    (args.mjcf, "--mjcf"),
                                                    (args.params, "--params")) if path]
    if not targets:
        raise DataError("dynid export: nothing to write; give --urdf FILE, --mjcf FILE, "
                        "--params FILE or several, e.g. dynid export result.json --urdf "
                        "robot.urdf")
    if args.params and Path(args.params).suffix.lower() not in (".yaml", ".yml", ".json"):
        raise DataError(f"--params {args.params}: expected a .yaml, .yml or .json file name")
    if args.into is not None and not Path(args.into).is_file():
        raise DataError(f"--into {args.into}: no such URDF file")
    inputs = [args.result, *([args.robot] if args.robot and Path(args.robot).is_file() else [])]
    for path, option in targets:
        check_output(path, option, inputs=inputs)
    resolved = [Path(path).resolve() for path, _ in targets]
    if len(set(resolved)) < len(resolved):
        raise DataError("two of --urdf, --mjcf and --params name the same file; give each its "
                        "own, e.g. --urdf robot.urdf --mjcf robot.xml")
    result, robot = load_result_and_robot(args.result, args.robot)
    print(f"robot        {robot!r}")
    params = result
    for path, option in targets:
        if option == "--params":
            print(f"wrote {save_parameters(result, path, robot=robot)} (parameters with units "
                  "and σ, base parameters, the model and the settings)")
            continue
        write = write_urdf if option == "--urdf" else write_mjcf
        out = write(robot, params, path, project=args.project, into=args.into)
        if args.into is None:
            params = out.params  # projected once: the second file gets the same values
        print(out.summary())


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``export`` command to the ``dynid`` parser."""
    cmd = sub.add_parser(
        "export", help="write an identification result as a URDF and a MuJoCo model (MJCF)",
        description="Write the identified parameters into a URDF (Pinocchio, Gazebo, Drake,\n"
                    "ROS) and a MuJoCo model (MJCF). Prints what each file holds and what its\n"
                    "format cannot hold (closed loops, couplings, motor friction, springs...).",
        epilog=_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("result", help="result file written by dynid identify")
    cmd.add_argument("--robot", default=None,
                     help="robot name or file (default: the one recorded in the result)")
    cmd.add_argument("--urdf", default=None, metavar="FILE", help="URDF file to write")
    cmd.add_argument("--mjcf", default=None, metavar="FILE", help="MuJoCo model to write")
    cmd.add_argument("--params", default=None, metavar="FILE",
                     help="parameter file to write (.yaml, .yml or .json): names, units, "
                          "values, σ, base parameters, the model and the settings")
    cmd.add_argument("--into", default=None, metavar="URDF",
                     help="write into this URDF of the robot (e.g. the manufacturer's, with "
                          "its meshes) instead of its own; its joints must match the model's")
    cmd.add_argument("--project", action="store_true",
                     help="write the nearest physically consistent values of parameters that "
                          "are not physical (default: refuse them)")
    cmd.set_defaults(func=_export)
