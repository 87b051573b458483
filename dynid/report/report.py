"""The identification report: one self-contained HTML file that says what was identified, how
well it predicts, how well it is determined and whether it is physical.

Sections: a summary; the trajectory of every recording; measured against predicted output on
the identification and the validation recordings; error tables; the parameters with their
uncertainty; the physical consistency checks; condition numbers; the residual's whiteness;
the essential parameters' steps, a payload and drive gains when there are; and the
settings. See :func:`write_report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from .._arguments import check_output, replacing
from .._files import excerpt
from .._progress import Steps
from ..errors import DataError
from ..identify.data import check_informative, check_recording
from ..identify.gains import DriveGains
from ..identify.payload import Payload
from ..identify.recording import Recording
from ..identify.result import IdentificationResult
from ..identify.validation import Validation, validate
from ..models import Robot
from .conditioning import Conditioning, conditioning
from .consistency import Consistency, consistency
from .friction import friction_html
from .html import Cell, Section, figure, heading, page, paragraph, table
from .methods import method_sections
from .settings import settings_html
from .tables import (
    POOR,
    base_table,
    bound_table,
    conditioning_table,
    error_table,
    link_table,
    standard_table,
    training_table,
    whiteness_table,
)

__all__ = ["write_report"]

#: Seconds a report takes before its progress bar appears.
PROGRESS_DELAY = 1.0

def write_report(robot: Robot, result: IdentificationResult,
                 recordings: Recording | Sequence[Recording] | Mapping[str, Recording],
                 path: str | Path, *,
                 validation: Recording | Sequence[Recording] | Mapping[str, Recording] = (),
                 title: str | None = None, progress: bool = False,
                 payload: Payload | None = None, gains: DriveGains | None = None) -> Path:
    """Write the report of an identification as one self-contained HTML file.

    The file needs nothing else: the style is inline, the figures are PNG images embedded in
    it, and every text is escaped. Long signals are thinned for the figures (at most
    :data:`~dynid.report.plots.MAX_POINTS` points per line, keeping each line's envelope), so
    the size grows with the number of recordings and outputs, not with their length: about
    210 kB for the 7-joint panda with one identification and one validation recording
    (figures of 20–45 kB), 110 kB for the 3-joint Ariane arm; it takes a second or two.

    Parameters
    ----------
    robot
        The identified robot (its parameters must be the result's).
    result
        The identification result (:class:`~dynid.identify.result.IdentificationResult`, or
        :func:`dynid.load_result` of a result file).
    recordings
        The recordings it was identified from, as recorded: a recording, a list, or a
        mapping label → recording (labels such as file names are shown in the report).
        Processed as the result's processing says, they give the measured against predicted
        outputs, the errors on the identification data and the condition numbers.
    path
        The HTML file to write. Its folder is checked before anything is computed, and the
        file is replaced only once the report is complete.
    validation
        Other recordings to validate on, processed as the result's processing says but
        without its ``skip`` (as ``dynid validate`` does).
    title
        Title of the report (default: ``"Identification of <robot name>"``).
    progress
        Draw a progress bar on standard error once the report has taken more than a second.
    payload, gains
        A payload identified on this robot (:func:`~dynid.identify.identify_payload`,
        :func:`dynid.load_payload`) and drive gains (:func:`~dynid.identify.
        identify_drive_gains`, :func:`dynid.load_drive_gains`), each shown in its own
        section. A result fitted on essential parameters
        (:func:`~dynid.identify.essential_parameters`) has a section of its steps.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> result = dynid.PhysicallyConsistent().fit(dynid.IdentificationData(robot, [run1])
    ...                                          ).result_
    >>> dynid.write_report(robot, result, {"run1.npz": run1}, "report.html",
    ...                    validation={"run2.npz": run2})
    PosixPath('report.html')
    """
    path = check_output(path, "path")
    check_model(robot, result)
    train = _named(recordings, "recordings", "identification")
    test = _named(validation, "validation", "validation")
    if not train:
        raise DataError("recordings: expected at least one identification recording, found "
                        "none; e.g. write_report(robot, result, [rec], 'report.html')")
    for which, group in (("recordings", train), ("validation", test)):
        for label, rec in group.items():
            group[label] = _fits(robot, rec, f"{which} {excerpt(label, 200)}")
    extra = method_sections(robot, result, payload, gains)
    steps = Steps(2 * (len(train) + len(test)) + 3, "report", enabled=progress,
                  delay=PROGRESS_DELAY)
    try:
        sections = _contents(robot, result, train, test, steps)
        sections[-1:-1] = extra  # before the settings
        html = page(title if title is not None else f"Identification of {robot.name}",
                    sections, subtitle=f"{result.method} estimate of {robot!r}")
        with replacing(path) as tmp:
            tmp.write_text(html, encoding="utf-8")
        steps.done = steps.total
    finally:
        steps.close()
    return path


def _contents(robot: Robot, result: IdentificationResult, train: dict[str, Recording],
              test: dict[str, Recording], steps: Steps) -> list[Section]:
    """The sections of the report."""
    from . import plots  # matplotlib, imported when a report is written

    validations: dict[tuple[str, str], Validation] = {}
    for kind, group, processing in (("identification", train, result.processing),
                                    ("validation", test, replace(result.processing, skip=0))):
        for label, rec in group.items():
            steps.next(f"validate {label}")
            validations[(kind, label)] = validate(robot, result, rec, processing=processing)
    steps.next("condition numbers")
    cond = conditioning(robot, result, list(train.values()))
    checks = consistency(robot, result.params)
    figures = []
    steps.next("trajectory figure")
    traj = plots.png(plots.trajectory_figure(
        {f"{kind} {label}": rec for kind, group in (("identification", train),
                                                    ("validation", test))
         for label, rec in group.items()}))
    for (kind, label), val in validations.items():
        steps.next(f"figure {label}")
        figures.append(figure(plots.png(plots.output_figure(val, f"{kind}: {label}")),
                              alt=f"measured and predicted output, {label}",
                              caption=f"{kind} recording {label}: measured (grey) and "
                                      "predicted (red) output", id=f"output-{len(figures)}"))
    steps.next("write")
    return [
        Section("summary", "Summary", _summary(robot, result, train, test, validations, cond,
                                               checks)),
        Section("trajectory", "Trajectory",
                figure(traj, alt="positions over time", id="trajectory-figure",
                       caption="positions of every recording, as recorded")),
        Section("outputs", "Measured and predicted output", "\n".join(figures)),
        Section("errors", "Prediction errors", _errors(robot, result, validations)),
        Section("parameters", "Parameters", _parameters(robot, result)),
        Section("consistency", "Physical consistency", _consistency(checks)),
        Section("conditioning", "Condition numbers", _conditioning(cond)),
        Section("whiteness", "Residual whiteness", _whiteness(result)),
        *([Section("friction", "Friction", friction_html(result))]
          if result.solver.get("friction") else []),
        Section("settings", "Settings", settings_html(result)),
    ]


def check_model(robot: Robot, result: IdentificationResult) -> None:
    """Raise :class:`~dynid.errors.DataError` unless ``result`` is an identification result
    of ``robot``: the same parameters and the same output."""
    if not isinstance(robot, Robot):
        raise DataError(f"robot: expected a Robot, found {excerpt(robot)}; e.g. "
                        "dynid.load_robot('panda')")
    if not isinstance(result, IdentificationResult):
        raise DataError(f"result: expected an IdentificationResult, found {excerpt(result)}; "
                        "read a result file with dynid.load_result('result.json')")
    if tuple(result.names) != robot.parameters.names:
        differ = sorted(set(robot.parameters.names) ^ set(result.names))[:5]
        raise DataError(f"result: its parameters are not those of robot {robot.name} "
                        f"(differences: {differ or 'their order'}); pass the robot it was "
                        f"identified on (the result names {excerpt(result.robot)})")
    if robot.output != result.output:
        raise DataError(f"result: it predicts {result.output} but robot {robot.name} outputs "
                        f"{robot.output}; pass robot.with_output({result.output!r})")


def _named(value, what: str, prefix: str) -> dict[str, Recording]:
    """Recordings as a dict label → recording."""
    if isinstance(value, Recording):
        value = [value]
    if isinstance(value, Mapping):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, Sequence) and not isinstance(value, str):
        items = [(f"{prefix} {k + 1}", v) for k, v in enumerate(value)]
    else:
        raise DataError(f"{what}: expected a Recording, a list of them or a mapping label → "
                        f"Recording, found {excerpt(value)}")
    for label, rec in items:
        if not isinstance(rec, Recording):
            raise DataError(f"{what} {excerpt(label, 200)}: expected a Recording, found "
                            f"{excerpt(rec)}; read files with dynid.read_npz or "
                            "dynid.read_csv")
    return dict(items)


def _fits(robot: Robot, rec: Recording, where: str) -> Recording:
    """The recording with its columns in the robot's order; errors name ``where``."""
    try:
        rec = check_recording(robot, rec, reorder=True)
        check_informative([rec])
    except DataError as exc:
        raise DataError(f"{where}: {exc}") from None
    return rec


def _summary(robot, result, train, test, validations, cond: Conditioning,
             checks: Consistency) -> str:
    units = sorted(set(robot.output_units))
    u = result.uncertainty()
    poor = int(((u.relative_std > POOR) & (u.std > 0)).sum())  # σ 0: left out, fixed
    white = result.whiteness
    source = result.robot_source or result.robot
    facts = [["robot", robot.name + (f" ({source})" if source != robot.name else "")],
             ["coordinates", ", ".join(robot.joint_names)],
             ["output", f"{result.output} [{', '.join(units)}]"],
             ["method", f"{result.method}; covariance {result.covariance_method}"],
             ["parameters", f"{len(result.names)} standard, {len(result.base_names)} base"],
             ["samples fitted", Cell(result.n_samples)],
             ["poorly determined base parameters", f"{poor} of {len(u.names)} (σ/|θ| > "
                                                   f"{POOR:g} %)"],
             ["physically consistent", "yes" if checks.physical else
              "no: " + "; ".join(checks.failures())],
             ["residual white", "not tested" if white is None else
              "yes" if white.white else "no: the σ are off (see Residual whiteness)"],
             ["column-scaled condition number", Cell(cond.scaled)]]
    rows = []
    for (kind, label), val in validations.items():
        rec = (train if kind == "identification" else test)[label]
        rows.append([kind, label, Cell(rec.n_samples), Cell(float(rec.time[-1] - rec.time[0])),
                     Cell(rec.rate), Cell(val.overall_relative_error)])
    parts = [table(["", "value"], facts, id="summary-facts"),
             table(["data", "recording", "samples", "duration s", "rate Hz",
                    "overall relative error %"], rows, id="recordings")]
    if cond.samples != result.n_samples:
        parts.append(paragraph(f"The identification recordings give {cond.samples} samples "
                               f"once processed, the result was fitted on {result.n_samples}: "
                               "are they the recordings it was identified from?", note=True))
    return "\n".join(parts)


def _errors(robot, result, validations) -> str:
    return "\n".join([
        paragraph("RMSE √(mean (ŷ − y)²) and relative error 100 ‖ŷ − y‖ / ‖y‖ of each "
                  "output over each recording, processed as the result says (the overall "
                  "relative error is over every output: 100 ‖Ŷ − Y‖_F / ‖Y‖_F)."),
        error_table(validations),
        heading("The fit's own residual"),
        paragraph("RMSE over the rows the estimator used (after decimation, without the rows "
                  "left out near zero velocity).", note=True),
        training_table(result, robot.output_units)])


def _parameters(robot, result) -> str:
    return "\n".join([
        paragraph(f"σ from the estimate's covariance ({result.covariance_method}); flagged "
                  f"as poorly determined above σ/|θ| = {POOR:g} %. Base parameters are the "
                  "identifiable combinations of the standard parameters."),
        heading("Base parameters"), base_table(result),
        heading("Standard parameters"),
        paragraph("σ of the identifiable part of each standard parameter; the part no data "
                  "determine comes from the prior.", note=True),
        standard_table(result, robot.prior)])


def _consistency(checks: Consistency) -> str:
    return "\n".join([
        paragraph("Each link's ten parameters are physical when its 4×4 pseudo-inertia "
                  "[[½ tr(Ī) 1 − Ī, h], [hᵀ, m]] is positive definite (all eigenvalues λ > 0)."
                  f" Total mass {checks.total_mass:.4g} kg (prior {checks.prior_total_mass:.4g}"
                  " kg)."),
        link_table(checks), heading("Bounded parameters"),
        bound_table(checks) if checks.bounds else paragraph("none", note=True)])


def _conditioning(cond: Conditioning) -> str:
    parts = [paragraph("Condition numbers of the base regressor on the identification data "
                       "as processed, raw and with unit-norm columns (the figure to compare "
                       "between experiments), and of the base estimate's correlation matrix."),
             conditioning_table(cond)]
    if not cond.same_base:
        parts.append(paragraph("The regressor's columns are the robot's base parameters, "
                               "which differ from the result's.", note=True))
    return "\n".join(parts)


def _whiteness(result: IdentificationResult) -> str:
    white = result.whiteness
    if white is None:
        return paragraph("Not tested: the result holds no whiteness test (data given in "
                         "compressed form).", note=True)
    verdict = "The residual is white: the σ hold." if white.white else white.message()
    return "\n".join([
        paragraph(f"Ljung–Box test over {white.lags} lags of the residual ({white.n_samples} "
                  "samples); the σ factor estimates how much larger the true σ are than the "
                  "reported ones. " + verdict),
        whiteness_table(white)])

