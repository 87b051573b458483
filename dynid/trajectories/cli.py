"""``dynid design ROBOT -o traj.json``: design an excitation trajectory from the command line."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from .._arguments import check_output, image_suffixes, number, replacing, whole
from .._files import excerpt
from ..errors import TrajectoryError
from .constraints import CartesianBox
from .criteria import CRITERIA, SCALINGS
from .fourier import SPACES, UNITS
from .optimizers import OPTIMIZERS
from .settings import BOUNDARIES, DesignSettings

__all__ = ["add_design_parser", "run_design"]

_D = DesignSettings()


def add_design_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``design`` subcommand to the ``dynid`` parser."""
    p = subparsers.add_parser("design", help="design an optimal excitation trajectory",
                              description="Design a Fourier excitation trajectory that "
                              "minimizes a criterion of the base regressor within every limit.",
                              epilog="examples:\n"
                                     "  dynid design panda -o excitation.json\n"
                                     "  dynid design ariane --space actuator --unit increments "
                                     "--frequency 0.2 -o excitation.json\n"
                                     "  dynid capture panda excitation.json --interface virtual "
                                     "-o run.csv   # then run it",
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("robot", help="embedded robot name or robot file")
    p.add_argument("-o", "--output", default="trajectory.json", help="trajectory file (JSON)")
    g = p.add_argument_group("trajectory")
    g.add_argument("--harmonics", type=whole(1, 50), default=_D.harmonics,
                   help="harmonics per coordinate (1 to 50)")
    g.add_argument("--frequency", type=number(0.0, 1e3, above=True), default=_D.frequency,
                   help="fundamental, Hz (> 0)")
    g.add_argument("--space", choices=SPACES, default=_D.space)
    g.add_argument("--unit", choices=UNITS, default=_D.unit)
    g.add_argument("--boundary", choices=BOUNDARIES, default=_D.boundary)
    g.add_argument("--ramp", type=number(0.0, 1e4), default=_D.ramp, help="ramp duration, s")
    g.add_argument("--periods", type=whole(1, 1000), default=_D.periods)
    g.add_argument("--fixed", action="append", default=[], metavar="NAME=VALUE",
                   help="hold a coordinate at a position (design units); repeatable")
    g = p.add_argument_group("constraints")
    g.add_argument("--no-joint-limits", action="store_true")
    g.add_argument("--no-actuator-limits", action="store_true")
    g.add_argument("--cartesian", action="append", default=[],
                   metavar="FRAME:XL,YL,ZL:XU,YU,ZU",
                   help="keep a frame's origin in a box (m, base frame; 'inf' for open sides); "
                        "repeatable")
    g.add_argument("--margin", type=number(0.0, 1.0, below=True), default=_D.margin,
                   help="fraction of each limit kept free, in [0, 1)")
    g = p.add_argument_group("criterion")
    g.add_argument("--criterion", choices=CRITERIA, default=_D.criterion)
    g.add_argument("--scaling", choices=SCALINGS, default=_D.scaling)
    g.add_argument("--noise", default=None, metavar="S1,S2,...",
                   help="output noise standard deviation per output")
    g.add_argument("--previous", action="append", default=[], metavar="FILE",
                   help="trajectory file of an earlier experiment to complete; repeatable")
    g.add_argument("--rate", type=number(0.0, 1e6, above=True), default=_D.rate,
                   help="drive sample rate, Hz")
    g = p.add_argument_group("optimizer")
    g.add_argument("--optimizer", choices=tuple(OPTIMIZERS), default=_D.optimizer)
    g.add_argument("--samples", type=whole(8, 10_000), default=_D.samples,
                   help="samples per period (8 to 10000)")
    g.add_argument("--max-iterations", type=whole(1, 100_000), default=_D.max_iterations)
    g.add_argument("--tolerance", type=number(0.0, 1.0, above=True), default=_D.tolerance)
    g.add_argument("--starts", type=whole(1, 1000), default=_D.starts)
    g.add_argument("--seed", type=whole(0, 2**32 - 1), default=_D.seed)
    p.add_argument("--plot", default=None, metavar="FILE.png", help="also plot the trajectory")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_design)
    return p


def _fixed(items: list[str]) -> dict[str, float]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            out[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            raise TrajectoryError(f"--fixed {excerpt(item)}: expected NAME=VALUE, e.g. "
                                  "joint4=-1.5")
        if not math.isfinite(out[name]):
            raise TrajectoryError(f"--fixed {excerpt(item)}: expected a finite position")
    return out


def _box(text: str) -> CartesianBox:
    parts = text.split(":")
    try:
        frame, lo, hi = parts
        return CartesianBox(frame, tuple(float(x) for x in lo.split(",")),
                            tuple(float(x) for x in hi.split(",")))
    except ValueError:
        raise TrajectoryError(f"--cartesian {excerpt(text)}: expected FRAME:XL,YL,ZL:XU,YU,ZU, "
                              "e.g. flange:-inf,-inf,0.1:inf,inf,inf") from None


def settings_from_args(args: argparse.Namespace) -> DesignSettings:
    noise = None
    if args.noise:
        try:
            noise = tuple(float(x) for x in args.noise.split(","))
        except ValueError:
            noise = ()
        if not noise or not all(math.isfinite(x) and x > 0 for x in noise):
            raise TrajectoryError(f"--noise {excerpt(args.noise)}: expected comma-separated "
                                  "standard deviations, finite and > 0")
    return DesignSettings(
        harmonics=args.harmonics, frequency=args.frequency, space=args.space, unit=args.unit,
        boundary=args.boundary, ramp=args.ramp, periods=args.periods,
        criterion=args.criterion, scaling=args.scaling, noise=noise, samples=args.samples,
        optimizer=args.optimizer, max_iterations=args.max_iterations,
        tolerance=args.tolerance, starts=args.starts, seed=args.seed,
        fixed=_fixed(args.fixed), joint_limits=not args.no_joint_limits,
        actuator_limits=not args.no_actuator_limits,
        cartesian=tuple(_box(c) for c in args.cartesian), margin=args.margin, rate=args.rate)


def run_design(args: argparse.Namespace) -> None:
    from ..models import load_robot
    from .design import design_excitation
    from .information import trajectory_information
    from .io import load_trajectory, save_trajectory

    settings = settings_from_args(args)
    inputs = [*args.previous, *([args.robot] if Path(args.robot).is_file() else [])]
    check_output(args.output, "-o", inputs=inputs)
    if args.plot:
        check_output(args.plot, "--plot", inputs=[*inputs, args.output],
                     suffixes=image_suffixes())
        if Path(args.plot).resolve() == Path(args.output).resolve():
            raise TrajectoryError("--plot and -o name the same file; give two file names")
    robot = load_robot(args.robot)
    previous = [trajectory_information(robot, load_trajectory(f), rate=settings.rate,
                                       noise=settings.noise) for f in args.previous]
    design = design_excitation(robot, settings, previous=previous, progress=not args.quiet)
    with replacing(args.output) as tmp:
        save_trajectory(tmp, design)
    c = design.condition
    out = sys.stdout
    out.write(f"robot          {robot!r}\n")
    out.write(f"criterion      {settings.criterion} = {design.score:.6g} at "
              f"{settings.samples} samples per period\n")
    out.write(f"condition      {c['range']:.4g} (columns by range), {c['norm']:.4g} (by norm), "
              f"{c['none']:.4g} (plain); rank {design.rank} of {design.base_rank}\n")
    if design.base_rank < design.robot_rank:
        out.write(f"               {design.robot_rank - design.base_rank} of the robot's "
                  f"{design.robot_rank} base parameters need the fixed coordinates to move\n")
    out.write(f"constraints    worst margin {design.report.margin:.4g} of the range on "
              f"{design.report.samples} samples\n")
    out.write(f"time           {design.seconds:.2f} s, {settings.starts} starts\n")
    out.write(f"written        {args.output}\n")
    if args.plot:
        from .plot import plot_trajectory

        with replacing(args.plot) as tmp:
            plot_trajectory(design.trajectory, robot, path=tmp)
        out.write(f"plot           {args.plot}\n")
