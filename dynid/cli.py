"""The ``dynid`` command.

Exit status: 0 on success; 2 when the input or the usage is wrong (a file, option or value
dynid refuses, with a message that names it and the fix); 3 when the hardware stopped a capture
(a drive fault, missing feedback, a following error, a bus error: the motion was stopped and
the recording keeps every flushed sample); 1 on an internal error, a defect in dynid (the
traceback is shown with ``--debug`` or the environment variable ``DYNID_DEBUG``).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings

from ._arguments import number, whole
from .errors import CaptureError, DynidError, DynidWarning

__all__ = ["main"]

_EPILOG = """\
exit status:
  0  success
  2  bad input or usage: a file, option or value dynid refuses; the message names it
     and says how to fix it
  3  the hardware stopped a capture (drive fault, missing feedback, following error,
     bus error); the motion was stopped and the recording keeps every flushed sample
  1  internal error: a defect in dynid, worth reporting; --debug (or the environment
     variable DYNID_DEBUG=1) shows its traceback
"""


def _experiment_loop(robot, excitation, loop, recordings):
    """The closed-loop simulator of ``dynid identify --method iv|didim`` (the hardware layer's
    :func:`~dynid.hardware.experiment_loop`, imported when used)."""
    from .hardware.loopfile import experiment_loop

    return experiment_loop(robot, excitation, loop, recordings)

def _demo(args: argparse.Namespace) -> None:
    from .demo import output_folder, run_demo
    from .models import load_robot

    load_robot(args.robot)  # a wrong robot or folder is reported before the demo starts
    output_folder(args.output_dir)
    run_demo(args.robot, output_dir=args.output_dir, seed=args.seed, periods=args.periods,
             rate=args.rate, noise=args.noise, quick=args.quick, progress=not args.quiet)


def _robots(args: argparse.Namespace) -> None:
    from .models import embedded_robots

    print("\n".join(embedded_robots()))


def _info(args: argparse.Namespace) -> None:
    from .models import base_parameters, load_robot

    robot = load_robot(args.robot)
    print(repr(robot))
    print(f"coordinates  {', '.join(robot.joint_names)}")
    print(f"actuators    {', '.join(robot.actuator_names)}")
    print(f"\n{'parameter':<16} {'unit':<11} {'group':<9} {'prior':>12}")
    for p in robot.parameters:
        print(f"{p.name:<16} {p.unit:<11} {p.group:<9} {p.prior:12.6g}")
    if args.base:
        base = base_parameters(robot)
        print(f"\n{base.rank} base parameters:")
        for name in base.names:
            print(f"  {name}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dynid", description="Identify robot dynamics.",
                                     epilog=_EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an internal error")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser(
        "demo", help="the whole job on the simulated robot, no hardware: design, capture over "
                     "the virtual CAN bus, identify, validate, export URDF/MJCF/parameters, report",
        epilog="example:\n  dynid demo --output-dir demo-output      # the Ariane arm\n"
               "  dynid demo --robot panda --quick --output-dir panda-demo",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_argument("--robot", default="ariane", help="embedded robot name or robot file "
                                                        "(default: ariane)")
    demo.add_argument("--output-dir", default="demo-output",
                      help="folder for every file the demo writes (default: demo-output)")
    demo.add_argument("--seed", type=whole(0, 2**32 - 1), default=0)
    demo.add_argument("--periods", type=whole(1, 20), default=4,
                      help="excitation periods recorded for identification (1 to 20)")
    demo.add_argument("--rate", type=number(20.0, 2000.0), default=250.0,
                      help="drive cycle and recording rate in Hz (20 to 2000)")
    demo.add_argument("--noise", type=number(0.0, 10.0), default=0.01,
                      help="output noise as a fraction of each drive's rated value (0 to 10)")
    demo.add_argument("--quick", action="store_true", help="cheaper excitation design")
    demo.add_argument("--quiet", action="store_true", help="no progress bars")
    demo.set_defaults(func=_demo)

    robots = sub.add_parser("robots", help="list the embedded robots")
    robots.set_defaults(func=_robots)

    info = sub.add_parser("info", help="describe a robot: coordinates and parameters")
    info.add_argument("robot", help="embedded robot name or robot file")
    info.add_argument("--base", action="store_true", help="also list the base parameters")
    info.set_defaults(func=_info)

    from .trajectories.cli import add_design_parser

    add_design_parser(sub)

    from .identify.cli import register as register_identify

    register_identify(sub, experiment_loop=_experiment_loop)
    from .identify.cli_bodies import register as register_bodies

    register_bodies(sub)
    from .hardware.cli import register as register_capture

    register_capture(sub)
    from .report.cli import register as register_report

    register_report(sub)
    from .export.cli import register as register_export

    register_export(sub)
    for command in sub.choices.values():  # --debug also after the command's name
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="show the traceback of an internal error")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``dynid`` command; returns its exit status (see the module docstring)."""
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            args.func(args)
    except CaptureError as exc:
        print(f"dynid: capture stopped: {exc}", file=sys.stderr)
        return 3
    except DynidError as exc:
        print(f"dynid: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the user gave: missing, a folder, no permission, disk full
        print(f"dynid: error: {_os_error(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dynid: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        debug = args.debug or os.environ.get("DYNID_DEBUG", "") not in ("", "0")
        if debug:
            traceback.print_exc()
        print(f"dynid: internal error: {type(exc).__name__}: {exc}\nThis is a defect in "
              "dynid, not a problem with your input; please report it with the command you "
              "ran" + ("." if debug else " and the traceback that --debug (or DYNID_DEBUG=1) "
                       "shows."), file=sys.stderr)
        return 1
    return 0


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """dynid's warnings as ``dynid: warning: ...`` lines; others as Python shows them."""
    if issubclass(category, DynidWarning):
        print(f"dynid: warning: {message}", file=sys.stderr)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _os_error(exc: OSError) -> str:
    if exc.filename is None:
        return str(exc)
    where = str(exc.filename) + (f" → {exc.filename2}" if exc.filename2 else "")
    return f"{where}: {exc.strerror or exc}"


if __name__ == "__main__":
    sys.exit(main())
