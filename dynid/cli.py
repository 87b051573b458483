"""The ``dynid`` command."""

from __future__ import annotations

import argparse
import sys

from .errors import DynidError

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> None:
    from .demo import run_demo

    run_demo(args.robot, seed=args.seed, periods=args.periods, rate=args.rate,
             noise=args.noise, quick=args.quick)


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
    parser = argparse.ArgumentParser(prog="dynid", description="Identify robot dynamics.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="design, simulate, identify and validate on an embedded "
                                       "robot, with no hardware")
    demo.add_argument("--robot", default="panda", help="embedded robot name or robot file")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--periods", type=int, default=2, help="excitation periods recorded")
    demo.add_argument("--rate", type=float, default=100.0, help="recording rate in Hz")
    demo.add_argument("--noise", type=float, default=0.02,
                      help="output noise as a fraction of each output's RMS")
    demo.add_argument("--quick", action="store_true", help="cheaper excitation design")
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

    register_identify(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except DynidError as exc:
        print(f"dynid: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
