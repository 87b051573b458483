"""The ``dynid identify`` and ``dynid validate`` commands.

::

    dynid identify panda run1.npz run2.npz -o result.json --method consistent --cutoff 20
    dynid validate result.json run3.npz --plot validation.png

Recordings are dynid NPZ archives, other NPZ archives (``--keys output=torques``) or CSV files
(``--columns time=t --columns positions=q1,q2,q3 --columns output=i1,i2,i3``), with units
(``--units positions=deg --units output=mA``, or one per column: ``--units positions=deg,deg,mm``).
Columns named after the robot's joints (actuators with ``--space actuator``) are matched to
them by name, in any order.

Numeric options are checked as they are parsed, and the files a command writes (``-o``,
``--plot``) before it computes.
"""

from __future__ import annotations

import argparse
from dataclasses import fields, replace
from pathlib import Path

from .._arguments import check_output, image_suffixes, number, replacing, whole, word_or
from .._files import excerpt
from ..errors import DataError

__all__ = ["register"]

_METHODS = ("ols", "wls", "gauss-markov", "consistent", "ml")
_SIGNALS = ("time", "positions", "velocities", "accelerations", "output")


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    out = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise DataError(f"{option}: expected SIGNAL=VALUE, found {excerpt(item)}")
        key = key.strip()
        if key not in _SIGNALS:
            raise DataError(f"{option} {excerpt(item)}: unknown signal {excerpt(key)}; "
                            f"expected one of {', '.join(_SIGNALS)}")
        if key in out:
            raise DataError(f"{option}: {key} given twice")
        out[key] = value.strip()
    return out


def _units(values: list[str] | None) -> dict[str, str | list[str]]:
    """``--units`` values: one unit per signal, or one per column separated by commas."""
    return {k: [u.strip() for u in v.split(",")] if "," in v else v
            for k, v in _pairs(values, "--units").items()}


def _recording_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("recordings")
    g.add_argument("--keys", action="append", metavar="SIGNAL=ARRAY",
                   help="NPZ array holding a signal (time, positions, velocities, "
                        "accelerations, output)")
    g.add_argument("--columns", action="append", metavar="SIGNAL=COL[,COL...]",
                   help="CSV columns of a signal (time=t, positions=q1,q2,...)")
    g.add_argument("--delimiter", default=",", type=_delimiter,
                   help="field separator of CSV files (default ','; 'tab' for tabs)")
    g.add_argument("--units", action="append", metavar="SIGNAL=UNIT",
                   help="unit of a signal (deg, mm, ms, mA, inc, ...)")
    g.add_argument("--space", choices=("basis", "actuator"), default=None,
                   help="where the positions were measured (default: basis)")
    g.add_argument("--output-kind", choices=("joint_torque", "motor_torque", "current"),
                   default=None, help="what the output signal is (default: from its unit)")
    g = parser.add_argument_group("processing")
    # Processing options are left out of the namespace unless given (SUPPRESS), so that
    # "none" can stand for None.
    hz = number(0.01, 1e6)
    g.add_argument("--skip", type=whole(0, 10**9), default=argparse.SUPPRESS,
                   help="samples dropped at the start")
    g.add_argument("--cutoff", type=word_or(hz, auto="auto", none=None),
                   default=argparse.SUPPRESS, metavar="HZ|auto|none",
                   help="Butterworth low-pass of the positions, Hz")
    g.add_argument("--order", type=whole(1, 20), default=argparse.SUPPRESS,
                   help="order of that filter (1 to 20)")
    g.add_argument("--derivatives", choices=("auto", "positions", "velocities", "recorded"),
                   default=argparse.SUPPRESS, help="velocities and accelerations from the "
                   "positions, from recorded velocities (filtered, differentiated), as "
                   "recorded, or auto (default: as recorded, else velocities, else positions)")
    speeds = word_or(lambda text: tuple(number(0.0)(x) for x in text.split(",")),
                     auto="auto", none=None)
    g.add_argument("--deadzone", type=speeds, default=argparse.SUPPRESS,
                   metavar="V[,V...]|auto|none", help="leave out a joint's rows where its speed "
                   "is below V rad/s (m/s); one value, or one per joint")
    g.add_argument("--rest", type=word_or(number(0.0, 1e6, above=True), auto="auto", none=None),
                   default=argparse.SUPPRESS, metavar="S|auto|none",
                   help="leave out spans of S s or more with every joint in its dead zone")
    g.add_argument("--output-cutoff", type=word_or(hz, none=None), default=argparse.SUPPRESS,
                   metavar="HZ|none", help="low-pass of the output, Hz (default: not filtered)")
    g.add_argument("--decimate", type=word_or(whole(1, 10_000), auto="auto"),
                   default=argparse.SUPPRESS, metavar="N|auto",
                   help="filter regressor and output alike and keep 1 sample in N (1 to 10000)")
    g.add_argument("--period", type=number(0.0, 1e6, above=True), default=argparse.SUPPRESS,
                   help="period of a periodic excitation, s (averages the periods)")
    g.add_argument("--harmonics-cutoff", type=hz, default=argparse.SUPPRESS,
                   help="frequency-domain low-pass of the averaged period, Hz")


def _delimiter(text: str) -> str:
    """``--delimiter``: one character; ``tab`` or ``\\t`` for a tab."""
    return "\t" if text in ("tab", "\\t") else text


def _read(path: str, args: argparse.Namespace, robot):
    from .readers import read_csv, read_npz

    units = _units(args.units)
    if Path(path).suffix.lower() == ".csv":
        cols = _pairs(args.columns, "--columns")
        missing = {"time", "positions", "output"} - set(cols)
        if missing:
            raise DataError(f"{path}: CSV recordings need --columns for {sorted(missing)}")
        split = {k: [c.strip() for c in v.split(",")] for k, v in cols.items()}
        if "," in cols["time"]:
            raise DataError(f"--columns time={excerpt(cols['time'])}: expected one column")
        return read_csv(path, time=cols["time"], positions=split["positions"],
                        output=split["output"], velocities=split.get("velocities"),
                        accelerations=split.get("accelerations"), units=units,
                        space=args.space or "basis", output_kind=args.output_kind, robot=robot,
                        delimiter=args.delimiter)
    return read_npz(path, keys=_pairs(args.keys, "--keys"), units=units or None,
                    space=args.space, output_kind=args.output_kind, robot=robot)


def _processing(args: argparse.Namespace, base=None):
    from .processing import Processing

    # The processing options are named as the settings they give, and present only when given.
    given = {f.name: getattr(args, f.name) for f in fields(Processing) if hasattr(args, f.name)}
    return replace(base, **given) if base is not None else Processing(**given)


def _estimator(args: argparse.Namespace):
    from .consistent import PhysicallyConsistent
    from .estimators import OLS, WLS, GaussMarkov
    from .likelihood import MaximumLikelihood

    plain = {"ols": OLS, "wls": WLS, "gauss-markov": GaussMarkov, "ml": MaximumLikelihood}
    if args.method in plain:
        return plain[args.method]()
    total = tuple(args.total_mass) if args.total_mass else None
    if total is not None and total[0] > total[1]:
        raise DataError(f"--total-mass {total[0]:g} {total[1]:g}: expected LOW ≤ HIGH")
    return PhysicallyConsistent(epsilon=args.epsilon, mass_bounds=args.mass_bounds,
                                total_mass=total, com_margin=args.com_margin,
                                regularization=args.regularization, weight=args.weight,
                                solver=args.solver, covariance=args.covariance,
                                draws=args.draws)


def _identify(args: argparse.Namespace) -> None:
    from ..models import load_robot
    from .data import IdentificationData

    robot_file = [args.robot] if Path(args.robot).is_file() else []
    check_output(args.output, "-o", inputs=[*args.recordings, *robot_file])
    robot = load_robot(args.robot)
    processing = _processing(args)
    estimator = _estimator(args)
    recordings = [_read(p, args, robot) for p in args.recordings]
    data = IdentificationData(robot, recordings, processing=processing)
    est = estimator.fit(data)
    source = str(Path(args.robot).resolve()) if robot_file else args.robot
    result = replace(est.result_, robot_source=source)
    with replacing(args.output) as tmp:
        result.save(tmp)
    print(f"robot        {robot!r}")
    print(f"data         {result.n_samples} samples from {len(recordings)} recording(s)")
    print(f"method       {result.method}; {data.base.rank} base parameters; covariance "
          f"{result.covariance_method}")
    proc = result.processing
    print(f"processing   cutoff {'none' if proc.cutoff is None else f'{proc.cutoff:g} Hz'}, "
          f"decimated by {proc.decimate}")
    if result.solver.get("lmi_min_eigenvalue") is not None:
        print(f"solver       {result.solver['solver']} {result.solver['status']}, smallest "
              f"pseudo-inertia eigenvalue {result.solver['lmi_min_eigenvalue']:.3g}")
    print("training RMSE " + " ".join(f"{r:.4g}" for r in result.training_rmse))
    print()
    print(result.uncertainty().table())
    if result.whiteness is not None:
        print()
        print(result.whiteness.summary())
    print(f"\nwrote {args.output}")


def _validate(args: argparse.Namespace) -> None:
    from ..models import load_robot
    from .result import load_result
    from .validation import validate

    plots = _plot_targets(args)
    result = load_result(args.result)
    source = args.robot or result.robot_source
    if source is None:
        raise DataError(f"{args.result}: the result does not say which robot file it came "
                        "from; pass --robot")
    robot = load_robot(source)
    if robot.output != result.output:
        robot = robot.with_output(result.output)
    processing = _processing(args, result.processing)
    for path, target in zip(args.recordings, plots, strict=True):
        val = validate(robot, result, _read(path, args, robot), processing=processing)
        print(f"{path}:")
        print(val.summary())
        if target is not None:
            with replacing(target) as tmp:
                val.plot(tmp, title=f"{Path(path).name}: {result.method}")
            print(f"wrote {target}")


def _plot_targets(args: argparse.Namespace) -> list[Path | None]:
    """The image written per recording by ``validate --plot``, checked before validating."""
    if not args.plot:
        return [None] * len(args.recordings)
    target = Path(args.plot)
    if len(args.recordings) == 1:
        targets = [target]
    else:
        targets = [target.with_name(f"{target.stem}-{Path(p).stem}{target.suffix}")
                   for p in args.recordings]
    inputs = [args.result, *args.recordings]
    for t in targets:
        check_output(t, "--plot", inputs=inputs, suffixes=image_suffixes())
    if len(set(targets)) < len(targets):
        raise DataError("--plot: two recordings have the same file name, so their plots would "
                        "overwrite each other; rename one")
    return targets


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``identify`` and ``validate`` commands to the ``dynid`` parser."""
    ident = sub.add_parser("identify", help="identify a robot's parameters from recordings")
    ident.add_argument("robot", help="embedded robot name or robot file")
    ident.add_argument("recordings", nargs="+", help="recordings (.npz or .csv)")
    ident.add_argument("-o", "--output", default="result.json", help="result file (JSON)")
    ident.add_argument("--method", choices=_METHODS, default="consistent")
    _recording_options(ident)
    g = ident.add_argument_group("physically consistent estimate")
    g.add_argument("--epsilon", type=number(0.0, 1e3, above=True), default=1e-6,
                   help="smallest pseudo-inertia eigenvalue (> 0)")
    g.add_argument("--mass-bounds", type=number(0.0, 1.0), default=None, metavar="R",
                   help="bound every link mass to (1 ± R) times its prior (0 ≤ R ≤ 1)")
    g.add_argument("--total-mass", type=number(0.0, 1e6), nargs=2, metavar=("LOW", "HIGH"),
                   help="bounds of the total mass, kg")
    g.add_argument("--com-margin", type=number(0.0, 1e3), default=0.1,
                   help="margin of the centre-of-mass boxes, m")
    g.add_argument("--regularization", choices=("euclidean", "entropic"), default=None)
    g.add_argument("--weight", type=number(0.0, 1e12), default=1.0,
                   help="regularization weight (≥ 0)")
    g.add_argument("--solver", choices=("CLARABEL", "SCS"), default="CLARABEL")
    g.add_argument("--covariance", choices=("auto", "bootstrap", "unconstrained", "conditional"),
                   default="auto", help="uncertainty of the estimate (auto: bootstrap under the "
                                        "constraints when some are active)")
    g.add_argument("--draws", type=whole(2, 100_000), default=200,
                   help="bootstrap draws")
    ident.set_defaults(func=_identify)

    val = sub.add_parser("validate", help="predict recordings with an identification result")
    val.add_argument("result", help="result file written by dynid identify")
    val.add_argument("recordings", nargs="+", help="recordings (.npz or .csv)")
    val.add_argument("--robot", default=None,
                     help="robot name or file (default: the one recorded in the result)")
    val.add_argument("--plot", default=None, help="write measured vs predicted to this image")
    _recording_options(val)
    val.set_defaults(func=_validate)
