"""The ``dynid identify`` and ``dynid validate`` commands.

::

    dynid identify panda run1.npz run2.npz -o result.json --method consistent --cutoff 20
    dynid validate result.json run3.npz --plot validation.png
    dynid identify panda run1.npz --method wls --essential 0.01 --validation run2.npz

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
from .._progress import Steps
from ..errors import DataError
from .cli_recordings import read_recording, recording_options, report_read, trim_per_file

__all__ = ["register"]

_METHODS = ("ols", "wls", "gauss-markov", "consistent", "ml", "iv", "didim")
_CLOSED_LOOP = {"iv": "InstrumentalVariables", "didim": "DIDIM"}


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


def _check_closed_loop(args: argparse.Namespace) -> None:
    """``--excitation`` and ``--loop`` given with, and only with, the closed-loop methods."""
    given = [o for o, v in (("--excitation", args.excitation), ("--loop", args.loop)) if v]
    if args.method not in _CLOSED_LOOP:
        if given:
            raise DataError(f"{given[0]}: applies to --method iv or didim, not {args.method}")
        return
    if len(given) < 2:
        raise DataError(
            f"--method {args.method}: the closed-loop estimators simulate the experiment again: "
            "give the excitation the recordings were captured along and the drives' settings, "
            f"e.g. --excitation excitation.json --loop loop.yaml (see --help for the loop file); "
            f"from Python: {_CLOSED_LOOP[args.method]}(simulator=dynid.hardware.ClosedLoop("
            "robot, reference, duration, gains=..., control_rate=...))")
    if args.trim:
        raise DataError(f"--trim: the closed-loop estimators (--method {args.method}) simulate "
                        "the whole excitation from its start; give the recordings untrimmed "
                        "(--skip leaves samples out of the fit)")
    for option, path in (("--excitation", args.excitation), ("--loop", args.loop)):
        if not Path(path).is_file():
            raise DataError(f"{option} {excerpt(path, 200)}: no such file")


def _closed_loop(args: argparse.Namespace, robot, recordings):
    """The IV or DIDIM estimator of ``--method``, simulating the files' experiment with the
    simulator factory the ``dynid`` parser gave :func:`register` (the hardware layer's)."""
    from .didim import DIDIM
    from .iv import InstrumentalVariables

    loop = args.experiment_loop(robot, args.excitation, args.loop, recordings)
    return {"iv": InstrumentalVariables, "didim": DIDIM}[args.method](simulator=loop)


def _identify(args: argparse.Namespace) -> None:
    from ..models import load_robot
    from .cli_friction import has_nonlinear_friction
    from .data import IdentificationData

    robot_file = [args.robot] if Path(args.robot).is_file() else []
    validation = _essential_options(args)
    check_output(args.output, "-o", inputs=[*args.recordings, *validation, *robot_file])
    robot = load_robot(args.robot)
    if args.essential is not None and (args.friction or has_nonlinear_friction(robot)):
        raise DataError("--essential: the essential parameters are chosen among the linear "
                        "parameters; with sigmoid or Stribeck friction (--friction or the robot "
                        "file) identify first, then run --essential with Coulomb friction")
    processing = _processing(args)
    _check_closed_loop(args)
    if args.method in _CLOSED_LOOP and (args.friction or has_nonlinear_friction(robot)):
        raise DataError(f"--method {args.method}: the closed-loop estimators take Coulomb "
                        "friction; with sigmoid or Stribeck friction (--friction or the robot "
                        "file) use --method ols, wls or consistent")
    estimator = _estimator(args, robot) if args.method not in _CLOSED_LOOP else None
    trims = trim_per_file(args.trim, [*args.recordings, *validation])
    steps = Steps(len(args.recordings) + len(validation) + 3, "identify",
                  enabled=not args.quiet)
    recordings = []
    for p in args.recordings:
        steps.next(f"reading {Path(p).name}")
        recordings.append(read_recording(p, args, robot, trims.get(p)))
    checks = []
    for p in validation:
        steps.next(f"reading {Path(p).name}")
        checks.append(read_recording(p, args, robot, trims.get(p)))
    if estimator is None:
        _weights(args, robot)  # options of other methods refused
        estimator = _closed_loop(args, robot, recordings)
    steps.next("processing")
    friction = essential = None
    if args.friction is None and not has_nonlinear_friction(robot):
        data = IdentificationData(robot, recordings, processing=processing)
        steps.next(f"fitting ({args.method})")
        if args.essential is None:
            fitted = estimator.fit(data).result_
        else:
            from .essential import essential_parameters

            essential = essential_parameters(data, estimator, validation=checks or None,
                                             tolerance=args.essential,
                                             fixed=args.essential_fixed)
            fitted = essential.result
    else:
        from .cli_friction import fit

        steps.next(f"fitting ({args.method}, friction {args.friction or 'of the robot'})")
        est, friction = fit(args, robot, recordings, processing, estimator)
        fitted = est.result_
    source = str(Path(args.robot).resolve()) if robot_file else args.robot
    result = replace(fitted, robot_source=source)
    steps.next("writing")
    with replacing(args.output) as tmp:
        result.save(tmp)
    steps.close()
    print(f"robot        {robot!r}")
    for path, rec in zip(args.recordings, recordings, strict=True):
        report_read(path, rec)
    print(f"data         {result.n_samples} samples from {len(recordings)} recording(s)")
    print(f"method       {result.method}; {len(result.base_names)} base parameters; "
          f"covariance {result.covariance_method}")
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
    if friction is not None:
        for k, line in enumerate(friction.splitlines()):
            print(f"{'friction' if k == 0 else '':12} {line}")
    print("training RMSE " + " ".join(f"{r:.4g}" for r in result.training_rmse))
    if essential is not None:
        print()
        print(essential.summary())
    print()
    print(result.uncertainty().table())
    if result.whiteness is not None:
        print()
        print(result.whiteness.summary())
    print(f"\nwrote {args.output}")


def _essential_options(args: argparse.Namespace) -> list[str]:
    """The validation files of ``--essential``, its options checked against the method."""
    if args.essential is None:
        if args.validation:
            raise DataError("--validation: the recordings that choose the essential "
                            "parameters; give --essential too, e.g. --essential 0.01 "
                            "--validation run3.npz")
        return []
    if args.method not in ("ols", "wls", "gauss-markov"):
        raise DataError(f"--essential: refits by weighted least squares; give --method ols, "
                        f"wls or gauss-markov (found {args.method})")
    return list(args.validation or [])


def _validate(args: argparse.Namespace) -> None:
    from .result import load_result_and_robot
    from .validation import validate

    plots = _plot_targets(args)
    result, robot = load_result_and_robot(args.result, args.robot)
    # The training trims are not the validation files': each file is trimmed as --trim says.
    processing = _processing(args, replace(result.processing, skip=0))
    trims = trim_per_file(args.trim, args.recordings)
    steps = Steps(len(args.recordings), "validate", enabled=not args.quiet)
    for path, target in zip(args.recordings, plots, strict=True):
        steps.next(Path(path).name)
        recording = read_recording(path, args, robot, trims.get(path))
        val = validate(robot, result, recording, processing=processing)
        print(f"{path}:")
        report_read(path, recording)
        print(val.summary())
        if target is not None:
            with replacing(target) as tmp:
                val.plot(tmp, title=f"{Path(path).name}: {result.method}")
            print(f"wrote {target}")
    steps.close()


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


def register(sub: argparse._SubParsersAction, *, experiment_loop) -> None:
    """Add the ``identify`` and ``validate`` commands to the ``dynid`` parser.

    ``experiment_loop(robot, excitation, loop, recordings)`` builds the closed-loop simulator
    of ``--method iv|didim`` from its files; the caller supplies it, so that identification
    does not depend on the simulator (:func:`dynid.hardware.experiment_loop`)."""
    ident = sub.add_parser(
        "identify", help="identify a robot's parameters from recordings",
        epilog="examples:\n"
               "  dynid identify panda run1.csv run2.csv -o result.json\n"
               "  dynid identify ariane run.csv --method wls -o result.json\n"
               "  dynid identify arm2.yaml run.csv --method iv --excitation excitation.json "
               "--loop loop.yaml\n"
               "  dynid identify robot.yaml log.txt --columns time=0 --columns positions=1,2 "
               "--columns output=3,4 --units output=mA\n"
               "  dynid identify panda run1.csv --method wls --essential 0.01 --validation "
               "run2.csv -o essential.json\n"
               "then: dynid validate result.json run3.csv; dynid report result.json run1.csv; "
               "dynid export result.json --urdf robot.urdf",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ident.add_argument("robot", help="embedded robot name or robot file")
    ident.add_argument("recordings", nargs="+", help="recordings (.npz or .csv)")
    ident.add_argument("-o", "--output", default="result.json", help="result file (JSON)")
    ident.add_argument("--method", choices=_METHODS, default="consistent")
    recording_options(ident)
    g = ident.add_argument_group(
        "closed-loop estimators (iv, didim)",
        "Data recorded in closed loop: the drives fed back the noisy positions, which\n"
        "biases least squares. IV and DIDIM simulate the experiment again with the drives'\n"
        "loops and gains; the recordings must hold the whole excitation, from its start.\n"
        "The loop file (YAML or JSON; dynid.hardware.save_loop_settings writes one):\n"
        "  format: dynid-closed-loop\n  version: 1\n  robot: arm2\n"
        "  control_rate: 250        # Hz\n  record_every: 1          # recorded periods\n"
        "  loops: {current_bandwidth: 100, feedforward: true, encoder_increments: 4096}\n"
        "  drives:                  # per actuator: 1/s, output per rad/s, rad/s, s\n"
        "    motor1: {position: 30, velocity: 0.8, integral: 30, velocity_filter: 0}\n"
        "    motor2: {position: 30, velocity: 0.2, integral: 30}")
    g.add_argument("--excitation", default=None, metavar="FILE",
                   help="the trajectory file the recordings were captured along (dynid design)")
    g.add_argument("--loop", default=None, metavar="FILE",
                   help="the drives' closed-loop settings (see above)")
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
    g.add_argument("--covariance", choices=("auto", "regularized", "bootstrap", "unconstrained",
                                            "conditional"),
                   default="auto", help="uncertainty of the estimate (auto: bootstrap under the "
                                        "constraints when some are active; with a "
                                        "regularization, σ hold its bias)")
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
    g = ident.add_argument_group(
        "essential parameters (ols, wls, gauss-markov)",
        "Leave out the base parameter with the largest relative σ, one at a time, refitting "
        "the others, while the validation error stays within TOL (relative) of the full "
        "set's: e.g. --method wls --essential 0.01 --validation run3.npz")
    g.add_argument("--essential", type=number(0.0, 1e6, above=True), nargs="?", const=0.01,
                   default=None, metavar="TOL",
                   help="keep the essential parameters (TOL: relative increase of the "
                        "validation error allowed, default 0.01 for 1 %%)")
    g.add_argument("--validation", nargs="+", default=None, metavar="REC",
                   help="recordings the validation error is measured on (default: the last "
                        "quarter of each recording, the fits made on the rest)")
    g.add_argument("--essential-fixed", choices=("zero", "prior"), default="zero",
                   help="value of the parameters left out: zero (default) or the prior's")
    from .cli_friction import add_arguments

    add_arguments(ident)
    ident.add_argument("--quiet", action="store_true", help="no progress bar")
    ident.set_defaults(func=_identify, experiment_loop=experiment_loop)

    val = sub.add_parser(
        "validate", help="predict recordings with an identification result",
        epilog="example:\n  dynid validate result.json run3.csv --plot validation.png",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    val.add_argument("result", help="result file written by dynid identify")
    val.add_argument("recordings", nargs="+", help="recordings (.npz or .csv)")
    val.add_argument("--robot", default=None,
                     help="robot name or file (default: the one recorded in the result)")
    val.add_argument("--plot", default=None, help="write measured vs predicted to this image")
    recording_options(val)
    val.add_argument("--quiet", action="store_true", help="no progress bar")
    val.set_defaults(func=_validate)
