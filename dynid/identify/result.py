"""Identification results and their file format.

An :class:`IdentificationResult` holds everything a later stage needs: the standard and base
estimates with their covariances, the parameter and base-parameter names, the estimated output
noise, the estimator's and the processing's settings, and solver details. It is written as JSON
(:meth:`IdentificationResult.save`), so validation, export and reports can run on their own::

    {"format": "dynid-result", "version": 1, "method": "consistent", "robot": "panda",
     "output": "joint_torque", "parameters": {"names": [...], "units": [...],
     "values": [...], "covariance": [[...]]}, "base": {"names": [...], "matrix": [[...]],
     "values": [...], "covariance": [[...]]}, "noise_covariance": [[...]],
     "training_rmse": [...], "n_samples": 12000, "settings": {...}, "processing": {...},
     "solver": {...}}
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._files import excerpt, read_structured
from ..errors import DataError
from .processing import Processing
from .residuals import Whiteness
from .uncertainty import Uncertainty

__all__ = ["IdentificationResult", "load_result", "load_result_and_robot"]

FORMAT = "dynid-result"
VERSION = 1


@dataclass(frozen=True, eq=False)
class IdentificationResult:
    """The outcome of an identification.

    Attributes
    ----------
    method
        Estimator name (``ols``, ``wls``, ``gauss-markov``, ``consistent``, ``ml``).
    robot
        Robot name, or the robot file or embedded name it was loaded from (``robot_source``).
    output
        What the model predicts (joint_torque, motor_torque, current).
    names, units
        Standard parameter names and units (p).
    params, cov
        Standard parameter estimate (p,) and its covariance (p, p). For estimates obtained in
        base coordinates the standard parameters are the ones closest to the prior, and their
        covariance is that of the identifiable part, ``B⁺ P_b B⁺ᵀ``.
    base_names, base_matrix
        Base parameter expressions (b) and ``B`` (b, p) with ``θ_b = B θ``.
    base_params, base_cov
        Base estimate (b,) and its covariance (b, b).
    noise_covariance
        Estimated (or given) output noise covariance (n, n) used for weighting.
    training_rmse
        RMSE per output on the identification data (n,).
    n_samples
        Samples used (after processing).
    settings, processing, solver
        Estimator settings, the weights given by the user among them (``sigma``,
        ``noise_covariance``): ``WLS(**result.settings)`` for a WLS result makes its
        estimator again. The processing settings. Solver details (status, time, smallest
        pseudo-inertia eigenvalue...; ``solver["weighting"]``: the σ that weighted the
        outputs, where they came from, and for σ iterated from the residuals the passes and
        whether they settled).
    covariance_method
        How ``cov`` and ``base_cov`` were obtained: ``"sandwich"`` (least squares with the
        outputs' residual covariance), ``"gauss-markov"`` (the given or estimated noise
        covariance), ``"conditional"`` (the physically consistent estimate, conditional on
        its active constraints), ``"bootstrap"``, ``"regularized"`` (the mean squared error
        of an estimate pulled towards the prior: its variance and its bias,
        :mod:`dynid.identify.shrinkage`).
    diagnostics
        Checks of the fit: ``"whiteness"`` (the residual whiteness test, see
        :attr:`whiteness`), and for the physically consistent estimate its active
        constraints.
    """

    method: str
    robot: str
    output: str
    names: tuple[str, ...]
    units: tuple[str, ...]
    params: np.ndarray
    cov: np.ndarray
    base_names: tuple[str, ...]
    base_matrix: np.ndarray
    base_params: np.ndarray
    base_cov: np.ndarray
    noise_covariance: np.ndarray
    training_rmse: np.ndarray
    n_samples: int
    robot_source: str | None = None
    output_names: tuple[str, ...] = ()
    settings: dict = field(default_factory=dict)
    processing: Processing = field(default_factory=Processing)
    solver: dict = field(default_factory=dict)
    covariance_method: str = "sandwich"
    diagnostics: dict = field(default_factory=dict)

    @property
    def whiteness(self) -> Whiteness | None:
        """The residual whiteness test (``None`` when the residual was not available, as for
        data streamed in compressed form)."""
        entry = self.diagnostics.get("whiteness")
        return Whiteness.from_json(entry) if entry else None

    def uncertainty(self) -> Uncertainty:
        """Uncertainty of the base parameters."""
        return Uncertainty.from_covariance(self.base_names, self.base_params, self.base_cov)

    def standard_uncertainty(self) -> Uncertainty:
        """Uncertainty of the standard parameters (of their identifiable part)."""
        return Uncertainty.from_covariance(self.names, self.params, self.cov)

    def as_dict(self) -> dict[str, float]:
        """Standard parameter name → value."""
        return dict(zip(self.names, self.params.tolist(), strict=True))

    # File format -------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "format": FORMAT, "version": VERSION, "method": self.method, "robot": self.robot,
            "robot_source": self.robot_source, "output": self.output,
            "output_names": list(self.output_names),
            "parameters": {"names": list(self.names), "units": list(self.units),
                           "values": self.params.tolist(), "covariance": self.cov.tolist()},
            "base": {"names": list(self.base_names), "matrix": self.base_matrix.tolist(),
                     "values": self.base_params.tolist(),
                     "covariance": self.base_cov.tolist()},
            "noise_covariance": self.noise_covariance.tolist(),
            "training_rmse": self.training_rmse.tolist(), "n_samples": self.n_samples,
            "settings": self.settings, "processing": self.processing.to_dict(),
            "solver": self.solver, "covariance_method": self.covariance_method,
            "diagnostics": self.diagnostics,
        }

    def save(self, path: str | Path) -> Path:
        """Write the result as JSON; returns the path."""
        path = Path(path)
        path.write_text(json.dumps(self.to_json(), indent=1, default=_plain))
        return path

    @classmethod
    def from_json(cls, data: dict, where: str = "result") -> IdentificationResult:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DataError(f"{where}: not a dynid result file (expected \"format\": "
                            f"\"{FORMAT}\")")
        if data.get("version") != VERSION:
            raise DataError(f"{where}: result format version {data.get('version')}, this dynid "
                            f"reads version {VERSION}")
        _check_schema(data, where)
        try:
            par, base = data["parameters"], data["base"]
            return cls(
                method=data["method"], robot=data["robot"], output=data["output"],
                names=tuple(par["names"]), units=tuple(par["units"]),
                params=np.array(par["values"], float), cov=np.array(par["covariance"], float),
                base_names=tuple(base["names"]), base_matrix=np.array(base["matrix"], float),
                base_params=np.array(base["values"], float),
                base_cov=np.array(base["covariance"], float),
                noise_covariance=np.array(data["noise_covariance"], float),
                training_rmse=np.array(data["training_rmse"], float),
                n_samples=int(data["n_samples"]), robot_source=data.get("robot_source"),
                output_names=tuple(data.get("output_names") or ()),
                settings=data.get("settings", {}),
                processing=Processing.from_dict(data.get("processing", {})),
                solver=data.get("solver", {}),
                covariance_method=data.get("covariance_method", "sandwich"),
                diagnostics=data.get("diagnostics", {}))
        except KeyError as exc:
            raise DataError(f"{where}: missing entry {exc}") from None


def load_result(path: str | Path) -> IdentificationResult:
    """Read a result file written by :meth:`IdentificationResult.save`."""
    data = read_structured(path, "result file", "JSON", json.loads, json.JSONDecodeError, DataError)
    return IdentificationResult.from_json(data, Path(path).name)


def load_result_and_robot(path: str | Path, robot: str | Path | None = None):
    """A result file and the robot it was identified on: ``robot`` (name or robot file), or
    the one the result records, with the result's output."""
    from ..models import load_robot

    result = load_result(path)
    source = robot or result.robot_source
    if source is None:
        raise DataError(f"{path}: the result does not say which robot it came from; pass "
                        "--robot, e.g. --robot panda or --robot robot.yaml")
    model = load_robot(source)
    if model.output != result.output:
        model = model.with_output(result.output)
    if result.solver.get("friction"):
        from ..models.friction import apply_friction

        model = apply_friction(model, result.solver["friction"], f"{path}: solver.friction")
    return result, model


# The file's entries: required ones, optional ones and what each must hold.
_REQUIRED = ("format", "version", "method", "robot", "output", "parameters", "base",
             "noise_covariance", "training_rmse", "n_samples")
_OPTIONAL = ("robot_source", "output_names", "settings", "processing", "solver", "diagnostics",
             "covariance_method")
_OUTPUTS = ("joint_torque", "motor_torque", "current")


def _check_schema(data: dict, where: str) -> None:
    """Raise :class:`DataError` naming the file, the entry and what was found unless every
    entry of a result file has its type and shape: names are lists of strings, values have
    one finite number per name, covariances are square and of matching size."""
    check = _Schema(where)
    check.entries(data, "", _REQUIRED, _OPTIONAL)
    if type(data["version"]) is not int:
        raise check.fail("version", f"the integer {VERSION}", data["version"])
    for key in ("method", "robot"):
        if not isinstance(data[key], str) or not data[key]:
            raise check.fail(key, "a name (text)", data[key])
    if data["output"] not in _OUTPUTS:
        raise check.fail("output", f"one of {', '.join(_OUTPUTS)}", data["output"])
    par, base = data["parameters"], data["base"]
    check.entries(par, "parameters", ("names", "units", "values", "covariance"))
    check.entries(base, "base", ("names", "matrix", "values", "covariance"))
    p = len(check.names(par["names"], "parameters.names"))
    check.names(par["units"], "parameters.units", p, unique=False)
    check.numbers(par["values"], "parameters.values", (p,))
    check.numbers(par["covariance"], "parameters.covariance", (p, p))
    b = len(check.names(base["names"], "base.names"))
    check.numbers(base["matrix"], "base.matrix", (b, p))
    check.numbers(base["values"], "base.values", (b,))
    check.numbers(base["covariance"], "base.covariance", (b, b))
    rmse = check.numbers(data["training_rmse"], "training_rmse", (None,))
    n = len(rmse)
    if n == 0 or any(r < 0 for r in rmse):
        raise check.fail("training_rmse", "one RMSE ≥ 0 per output", data["training_rmse"])
    check.numbers(data["noise_covariance"], "noise_covariance", (n, n))
    count = data["n_samples"]
    if type(count) is not int or count < 1:
        raise check.fail("n_samples", "a whole number ≥ 1", count)
    check.optional(data, n)


class _Schema:
    """Checks of the entries of one result file; errors name the file and the entry."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, entry: str, expected: str, found: object, *, described: bool = False
             ) -> DataError:
        """The error for ``entry``; ``found`` is quoted, or given as is when ``described``."""
        found = found if described else excerpt(found)
        return DataError(f"{self.where}: {entry}: expected {expected}, found {found}")

    def entries(self, data: object, entry: str, required, optional=()) -> None:
        if not isinstance(data, dict):
            raise self.fail(entry or "the file", "a JSON object", data)
        prefix = f"{entry}." if entry else ""
        missing = [k for k in required if k not in data]
        if missing:
            raise DataError(f"{self.where}: {prefix}{missing[0]}: missing entry")
        unknown = [k for k in data if k not in required and k not in optional]
        if unknown:
            close = difflib.get_close_matches(str(unknown[0]), [*required, *optional], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise DataError(f"{self.where}: {prefix}{str(unknown[0])[:40]}: unknown "
                            f"entry{hint} (known: {', '.join([*required, *optional])})")

    def optional(self, data: dict, n: int) -> None:
        source = data.get("robot_source")
        if source is not None and (not isinstance(source, str) or not source):
            raise self.fail("robot_source", "a robot name or file (text) or null", source)
        if data.get("output_names"):
            self.names(data["output_names"], "output_names", n)
        for key in ("settings", "solver", "diagnostics", "processing"):
            if key in data and not isinstance(data[key], dict):
                raise self.fail(key, "a JSON object", data[key])
        if "covariance_method" in data and not isinstance(data["covariance_method"], str):
            raise self.fail("covariance_method", "a name (text)", data["covariance_method"])
        self.weights(data.get("settings", {}), n)
        try:
            Processing.from_dict(data.get("processing", {}))
        except (DataError, TypeError) as exc:
            raise DataError(f"{self.where}: processing: {exc}") from None
        white = data.get("diagnostics", {}).get("whiteness")
        if white is not None:
            try:
                test = Whiteness.from_json(white)
            except DataError as exc:
                raise DataError(f"{self.where}: diagnostics.{exc}") from None
            if len(test.names) != n:
                raise self.fail("diagnostics.whiteness", f"the test of {n} outputs",
                                f"{len(test.names)} names", described=True)

    def weights(self, settings: dict, n: int) -> None:
        """The weights a user gave the estimator: ``sigma``, one σ > 0 per output, or
        ``noise_covariance``, an (n, n) matrix."""
        if settings.get("sigma") is not None:
            for i, x in enumerate(self.numbers(settings["sigma"], "settings.sigma", (n,))):
                if not x > 0:
                    raise self.fail(f"settings.sigma[{i}]", "a noise σ > 0", x)
        if settings.get("noise_covariance") is not None:
            self.numbers(settings["noise_covariance"], "settings.noise_covariance", (n, n))

    def names(self, value: object, entry: str, length: int | None = None, *,
              unique: bool = True) -> list:
        if not isinstance(value, list):
            raise self.fail(entry, "a list of names (text)", value)
        for i, x in enumerate(value):
            if not isinstance(x, str):
                raise self.fail(f"{entry}[{i}]", "a name (text)", x)
        if length is not None and len(value) != length:
            raise self.fail(entry, f"{length} names", value)
        if unique and len(set(value)) != len(value):
            twice = next(x for x in value if value.count(x) > 1)
            raise self.fail(entry, "unique names", f"{excerpt(twice)} twice", described=True)
        return value

    def numbers(self, value: object, entry: str, shape: tuple) -> list:
        """Check a list (or a list of rows) of finite numbers of the given shape (``None``:
        any length); returns it."""
        rows = shape[0]
        if not isinstance(value, list) or (rows is not None and len(value) != rows):
            want = "a list of numbers" if len(shape) == 1 else "a list of rows of numbers"
            size = f" of length {rows}" if rows is not None else ""
            if isinstance(value, list):
                raise self.fail(entry, want + size, f"{len(value)}", described=True)
            raise self.fail(entry, want + size, value)
        for i, x in enumerate(value):
            if len(shape) == 2:
                if not isinstance(x, list) or len(x) != shape[1]:
                    raise self.fail(f"{entry}[{i}]", f"a row of {shape[1]} numbers (the "
                                    f"matrix is {shape[0]} × {shape[1]})", x)
                for k, y in enumerate(x):
                    if not _finite(y):
                        raise self.fail(f"{entry}[{i}][{k}]", "a finite number", y)
            elif not _finite(x):
                raise self.fail(f"{entry}[{i}]", "a finite number", x)
        return value


def _finite(x: object) -> bool:
    """Whether ``x`` is a number (not a bool) that a float holds and that is finite."""
    if not isinstance(x, int | float) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:  # an integer beyond the range of a float
        return False


def _plain(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"cannot write {type(x).__name__} to a result file")
