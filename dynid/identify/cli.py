"""The ``dynid identify`` and ``dynid validate`` commands.

::

    dynid identify panda run1.npz run2.npz -o result.json --method consistent --cutoff 20
    dynid validate result.json run3.npz --plot validation.png

Recordings are dynid NPZ archives, other NPZ archives (``--keys output=torques``) or text
tables (``--columns time=t --columns positions=q1,q2,q3 --columns output=i1,i2,i3``; columns by
index, 0 for the first, in files without a header; ``--rate 1000`` for files without a time
column), with units (``--units positions=deg --units output=mA``, or one per column:
``--units positions=deg,deg,mm``). A recording split over files of equal length is one
argument ``positions=q.csv,output=tau.csv``. Columns named after the robot's joints (actuators
with ``--space actuator``) are matched to them by name, in any order; columns that are not the
coordinates are mapped to them by ``--column-map map.yaml``.

Each recording file is trimmed as ``--trim FILE=START[:END]`` says (samples, or seconds ending
in ``s``; ``--trim START[:END]`` for every file), the training files and the validation files
alike; both commands print what they did to each file. ``identify --skip N`` stays a processing
setting of the training recordings: ``validate`` does not apply it to its files. Irregular time
stamps are refused, or made uniform as ``--timestamps`` says.

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
    g = parser.add_argument_group(
        "recordings", "A recording is a file (.npz, .csv, .txt...) or files of equal length "
                      "given as one argument SIGNAL=FILE,SIGNAL=FILE (positions=q.csv,"
                      "output=tau.csv).")
    g.add_argument("--keys", action="append", metavar="SIGNAL=ARRAY",
                   help="NPZ array holding a signal (time, positions, velocities, "
                        "accelerations, output)")
    g.add_argument("--columns", action="append", metavar="SIGNAL=COL[,COL...]",
                   help="table columns of a signal: header names or indices, 0 for the first "
                        "(time=t, positions=q1,q2 or positions=1,2); flat:N for N values per "
                        "sample flattened over the whole file (flat:N:COL in one column); a "
                        "signal in its own file and not listed takes all its columns")
    g.add_argument("--delimiter", default=",", type=_delimiter,
                   help="field separator of text tables (default ','; 'tab' for tabs, "
                        "'space' for spaces and tabs)")
    g.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="whether the first row of a table is a header (default: auto, when one "
                        "of its fields is not a number)")
    g.add_argument("--rate", type=number(1e-3, 1e6), default=None, metavar="HZ",
                   help="sample rate of files without a time column, Hz")
    g.add_argument("--trim", action="append", metavar="[FILE=]START[:END]",
                   help="samples dropped at the start and the end of a recording file: a "
                        "whole number of samples, or seconds ending in s (run1.csv=500, "
                        "run1.csv=500:20, val.npz=2.5s:1s); without FILE=, every file. "
                        "Repeat it per file")
    g.add_argument("--timestamps", choices=("check", "strict", "resample", "uniform", "keep"),
                   default="check",
                   help="irregular time stamps: check (refuse duplicates and gaps, warn of "
                        "jitter), strict (refuse any), resample (cubic spline onto a uniform "
                        "grid), uniform (stamps replaced by their least-squares line), keep")
    g.add_argument("--column-map", default=None, metavar="FILE",
                   help="YAML file of a linear map from the coordinates to the columns "
                        "(matrix, joint_offset, offset): columns that are sums of joints or "
                        "motor-side coordinates")
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
                   help="samples dropped at the start of every recording, kept in the result "
                        "as a processing setting (validate does not apply it; use --trim "
                        "per file)")
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


def _delimiter(text: str) -> str | None:
    """``--delimiter``: one character; ``tab`` or ``\\t`` for a tab, ``space`` for spaces and
    tabs."""
    if text in ("space", "spaces", "whitespace"):
        return None
    return "\t" if text in ("tab", "\\t") else text


def _column(text: str):
    """A column of ``--columns``: an index (digits) or a header name."""
    return int(text) if text.isdigit() else text


def _columns(args: argparse.Namespace) -> dict:
    """``--columns`` as reader arguments: lists of columns, or ``flat:N[:COL]``."""
    from .tables import Flat

    out = {}
    for key, value in _pairs(args.columns, "--columns").items():
        if value.startswith("flat:"):
            parts = value.split(":")
            if len(parts) not in (2, 3) or not parts[1].isdigit() or key == "time":
                raise DataError(f"--columns {key}={excerpt(value)}: expected flat:N or "
                                "flat:N:COL (N values per sample), e.g. positions=flat:7")
            out[key] = Flat(int(parts[1]), _column(parts[2]) if len(parts) == 3 else None)
        elif key == "time":
            if "," in value:
                raise DataError(f"--columns time={excerpt(value)}: expected one column")
            out[key] = _column(value)
        else:
            out[key] = [_column(c.strip()) for c in value.split(",")]
    return out


def _sources(path: str) -> str | dict[str, str]:
    """A recording argument: a file, or SIGNAL=FILE,SIGNAL=FILE for one split over files."""
    if "=" not in path or Path(path).exists():
        return path
    files = {}
    for item in path.split(","):
        key, sep, value = item.partition("=")
        if not sep or key.strip() not in _SIGNALS or not value.strip() or "=" in value:
            raise DataError(f"recording {excerpt(path)}: expected a file, or SIGNAL=FILE pairs "
                            f"separated by commas (signals: {', '.join(_SIGNALS)}), e.g. "
                            "positions=q.csv,output=tau.csv")
        files[key.strip()] = value.strip()
    return files


def _trims(values: list[str] | None, recordings: list[str]) -> dict[str, object]:
    """``--trim`` values: recording argument → trim; unknown files are refused."""
    from .trims import Trim

    out: dict[str, object] = {}
    for item in values or []:
        target, sep, text = item.rpartition("=")
        names = [r for r in recordings if sep and target in (r, Path(r).name)] if sep else \
            list(recordings)
        if sep and not names:
            raise DataError(f"--trim {excerpt(item)}: {excerpt(target)} is none of the "
                            f"recordings ({', '.join(recordings)}); give FILE=START[:END] with "
                            "a recording as listed, or START[:END] for every one")
        trim = Trim.parse(text)
        for name in names:
            if name in out and sep:
                raise DataError(f"--trim: {name} trimmed twice")
            out[name] = trim
    return out


def _read(path: str, args: argparse.Namespace, robot, trim=None):
    from .columns import load_column_map
    from .readers import read_csv, read_npz

    units = _units(args.units)
    options = {"rate": args.rate, "timestamps": args.timestamps, "robot": robot,
               "output_kind": args.output_kind,
               "column_map": load_column_map(args.column_map) if args.column_map else None}
    source = _sources(path)
    if isinstance(source, str) and Path(source).suffix.lower() == ".npz":
        return read_npz(source, keys=_pairs(args.keys, "--keys"), units=units or None,
                        space=args.space, trim=trim, **options)
    cols = _columns(args)
    if isinstance(source, str):
        missing = {"positions", "output"} - set(cols)
        if missing or ("time" not in cols and args.rate is None):
            need = sorted(missing | ({"time"} if "time" not in cols and args.rate is None
                                     else set()))
            raise DataError(f"{path}: CSV recordings need --columns for {need} (or --rate for "
                            "a file without a time column), e.g. --columns time=t --columns "
                            "positions=q1,q2 --columns output=tau1,tau2")
    header = {"auto": None, "yes": True, "no": False}[args.header]
    if isinstance(source, dict) and trim is not None:
        trim = dict.fromkeys(source, trim)
    return read_csv(source, **cols, units=units, space=args.space or "basis", header=header,
                    delimiter=args.delimiter, trim=trim, **options)


def _report_read(path: str, recording) -> None:
    """What was done to a recording as it was read, one line."""
    done = [h for h in recording.history if not h.startswith("read ")]
    print(f"recording    {path}: {recording.n_samples} samples at {recording.rate:.6g} Hz"
          + (f"; {'; '.join(done)}" if done else "; used as recorded"))


def _processing(args: argparse.Namespace, base=None):
    from .processing import Processing

    # The processing options are named as the settings they give, and present only when given.
    given = {f.name: getattr(args, f.name) for f in fields(Processing) if hasattr(args, f.name)}
    return replace(base, **given) if base is not None else Processing(**given)


def _weights(args: argparse.Namespace, robot) -> dict:
    """The estimator settings of ``--sigma``, ``--noise-covariance`` and
    ``--wls-iterations``, checked against the robot's outputs before anything is computed."""
    from .weights import given, read_numbers

    sigma = cov = None
    if args.sigma is not None:
        try:
            sigma = [float(x) for x in args.sigma.split(",")]
        except ValueError:
            if not Path(args.sigma).is_file():
                raise DataError(f"--sigma: expected comma-separated noise σ, one per output, "
                                f"or a file of them, found {excerpt(args.sigma)}") from None
            sigma = read_numbers(args.sigma, "--sigma file")
            sigma = sigma.ravel() if 1 in sigma.shape else sigma
    if args.noise_covariance is not None:
        cov = read_numbers(args.noise_covariance, "--noise-covariance file")
    iterations = args.wls_iterations or "auto"
    options = [o for o, v in (("--sigma", sigma), ("--noise-covariance", cov),
                              ("--wls-iterations", args.wls_iterations)) if v is not None]
    allowed = ("wls", "consistent") if args.wls_iterations else ("wls", "consistent",
                                                                  "gauss-markov")
    if options and args.method not in allowed:
        raise DataError(f"{options[0]}: applies to --method {' or '.join(allowed)}, not "
                        f"{args.method}")
    n = len(robot.output_names)
    V = given(sigma, cov, robot.output_names, iterations=iterations,
              labels=("--sigma", "--noise-covariance", "--wls-iterations"),
              examples=(f"--sigma {','.join(['0.1'] * n)}",
                        f"--noise-covariance FILE with {n} rows of {n} numbers"))
    if args.method not in ("wls", "consistent"):
        return {"covariance": V} if V is not None else {}
    key = "wls_iterations" if args.method == "consistent" else "iterations"
    return {key: iterations, "sigma": sigma, "noise_covariance": cov}


def _estimator(args: argparse.Namespace, robot):
    from .consistent import PhysicallyConsistent
    from .estimators import OLS, WLS, GaussMarkov
    from .likelihood import MaximumLikelihood

    weights = _weights(args, robot)
    plain = {"ols": OLS, "wls": WLS, "gauss-markov": GaussMarkov, "ml": MaximumLikelihood}
    if args.method in plain:
        return plain[args.method](**weights)
    total = tuple(args.total_mass) if args.total_mass else None
    if total is not None and total[0] > total[1]:
        raise DataError(f"--total-mass {total[0]:g} {total[1]:g}: expected LOW ≤ HIGH")
    return PhysicallyConsistent(epsilon=args.epsilon, mass_bounds=args.mass_bounds,
                                total_mass=total, com_margin=args.com_margin,
                                regularization=args.regularization, weight=args.weight,
                                solver=args.solver, covariance=args.covariance,
                                draws=args.draws, **weights)


def _identify(args: argparse.Namespace) -> None:
    from ..models import load_robot
    from .data import IdentificationData

    robot_file = [args.robot] if Path(args.robot).is_file() else []
    check_output(args.output, "-o", inputs=[*args.recordings, *robot_file])
    robot = load_robot(args.robot)
    processing = _processing(args)
    estimator = _estimator(args, robot)
    trims = _trims(args.trim, args.recordings)
    recordings = [_read(p, args, robot, trims.get(p)) for p in args.recordings]
    data = IdentificationData(robot, recordings, processing=processing)
    est = estimator.fit(data)
    source = str(Path(args.robot).resolve()) if robot_file else args.robot
    result = replace(est.result_, robot_source=source)
    with replacing(args.output) as tmp:
        result.save(tmp)
    print(f"robot        {robot!r}")
    for path, rec in zip(args.recordings, recordings, strict=True):
        _report_read(path, rec)
    print(f"data         {result.n_samples} samples from {len(recordings)} recording(s)")
    print(f"method       {result.method}; {data.base.rank} base parameters; covariance "
          f"{result.covariance_method}")
    proc = result.processing
    for k, line in enumerate(proc.summary().splitlines()):
        print(f"{'processing' if k == 0 else '':12} {line}")
    if result.solver.get("lmi_min_eigenvalue") is not None:
        print(f"solver       {result.solver['solver']} {result.solver['status']}, smallest "
              f"pseudo-inertia eigenvalue {result.solver['lmi_min_eigenvalue']:.3g}")
    if "weighting" in result.solver:
        w = result.solver["weighting"]
        passes = f", {w['iterations']} passes, {'settled' if w['settled'] else 'NOT settled'}" \
            if "iterations" in w else ""
        print(f"weights      σ {w['source']}{passes}: " + " ".join(f"{x:.4g}" for x in w["sigma"]))
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
    # The training trims are not the validation files': each file is trimmed as --trim says.
    processing = _processing(args, replace(result.processing, skip=0))
    trims = _trims(args.trim, args.recordings)
    for path, target in zip(args.recordings, plots, strict=True):
        recording = _read(path, args, robot, trims.get(path))
        val = validate(robot, result, recording, processing=processing)
        print(f"{path}:")
        _report_read(path, recording)
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
    g = ident.add_argument_group("weights of the outputs (wls, consistent; given ones also "
                                 "gauss-markov)")
    g.add_argument("--wls-iterations", type=word_or(whole(1, 1000), auto="auto"), default=None,
                   metavar="N|auto", help="weighted passes: auto (default) until every "
                                          "output's σ settles; 1: weighted by the OLS residuals")
    g.add_argument("--sigma", default=None, metavar="S1,S2,...|FILE",
                   help="noise σ of each output in its unit, or a text file of them: fixed "
                        "weights instead of σ from the residuals")
    g.add_argument("--noise-covariance", default=None, metavar="FILE",
                   help="text file of the outputs' noise covariance (n rows of n numbers): "
                        "fixed weights")
    ident.set_defaults(func=_identify)

    val = sub.add_parser("validate", help="predict recordings with an identification result")
    val.add_argument("result", help="result file written by dynid identify")
    val.add_argument("recordings", nargs="+", help="recordings (.npz or .csv)")
    val.add_argument("--robot", default=None,
                     help="robot name or file (default: the one recorded in the result)")
    val.add_argument("--plot", default=None, help="write measured vs predicted to this image")
    _recording_options(val)
    val.set_defaults(func=_validate)
