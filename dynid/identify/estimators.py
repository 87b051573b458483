"""Linear estimators of the base parameters: OLS, WLS and Gauss–Markov.

Every estimator follows scikit-learn's conventions: settings are keyword-only constructor
arguments, :meth:`Estimator.fit` takes an :class:`~dynid.identify.data.IdentificationData`,
validates, solves and returns ``self``; what it learned ends in ``_``:

``base_params_``, ``base_cov_``
    base parameter estimate (b,) and covariance (b, b);
``params_``, ``cov_``
    standard parameters (p,) and covariance (p, p) (see
    :class:`~dynid.identify.result.IdentificationResult` for how they relate to the base ones);
``noise_covariance_``
    output noise covariance (n, n) of one sample that weighted the estimate (given or
    estimated from residuals);
``weighting_``
    for weighted estimates, the :class:`~dynid.identify.weights.Weighting`: the σ, where
    they came from, and for σ iterated from the residuals the passes and whether they
    settled (also in the result's ``solver["weighting"]``);
``result_``
    the :class:`~dynid.identify.result.IdentificationResult`.

The estimators work on the compressed system, never on raw rows. With ``W`` the stacked base
regressor, ``y`` the outputs and ``Σ`` the output noise covariance of one sample:

* OLS: ``θ = argmin ‖W θ − y‖``, ``P = (WᵀW)⁻¹ (Σ_ij Σ̂_ij W_iᵀ W_j) (WᵀW)⁻¹`` with ``Σ̂``
  the residual covariance of the outputs (``σ² (WᵀW)⁻¹`` when they share one noise level);
* WLS: each output weighted by ``1/σ_j``, the σ given or estimated from the residuals: a
  first pass weighted by the OLS residuals (Gautier), then passes weighted by the previous
  residuals until the σ settle (:mod:`dynid.identify.weights`); its covariance is the same
  sandwich for its weighting, with each output's residual covariance taken over its own
  degrees of freedom;
* Gauss–Markov (Abdellatif (9)–(10)): ``θ = (Wᵀ Σ⁻¹ W)⁻¹ Wᵀ Σ⁻¹ y`` and
  ``P = (Wᵀ Σ⁻¹ W)⁻¹``, with the full ``Σ`` given, taken from period averaging, or estimated
  from first-pass residuals.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from .._blas import single_threaded
from ..errors import DataError, DynidWarning, SolverError
from .data import CompressedData, IdentificationData
from .quantization import errors_in_variables
from .residuals import Whiteness, whiteness
from .result import IdentificationResult
from .system import JointSystem, LinearSystem, RankDeficient
from .weights import (
    MAX_ITERATIONS,
    TOLERANCE,
    Weighting,
    check_iterations,
    check_noise_covariance,
    given,
    iterate,
)

__all__ = ["OLS", "WLS", "Estimator", "GaussMarkov"]


class Estimator:
    """Base class: subclasses implement :meth:`_estimate`."""

    method = "estimator"

    @single_threaded
    def fit(self, data: CompressedData) -> Estimator:
        """Estimate the parameters from ``data`` (:class:`~dynid.identify.data.
        IdentificationData` or :class:`~dynid.identify.data.CompressedData`); returns
        ``self``."""
        if not isinstance(data, CompressedData):
            raise DataError(f"fit: expected IdentificationData, found {type(data).__name__}; "
                            "wrap the robot and recordings in IdentificationData(robot, "
                            "recordings)")
        start = time.perf_counter()
        try:
            out = self._estimate(data)
        except RankDeficient as exc:
            names = ", ".join(data.base.names[c] for c in exc.columns)
            raise SolverError(f"{exc}; the least determined base parameters: {names}") from None
        # The system and processing of the estimate: the data's, unless the estimator chose
        # its own (maximum likelihood picks the filter).
        system = out["system"] if "system" in out else data.system()
        processing = out.get("processing", data.processing)
        base = data.base
        self.base_params_ = out["base_params"]
        self.base_cov_ = out["base_cov"]
        B = base.matrix
        if "params" in out:
            self.params_ = out["params"]
        else:
            self.params_ = base.from_base(self.base_params_, data.robot.prior)
        Bp = np.linalg.pinv(B)
        self.cov_ = Bp @ self.base_cov_ @ Bp.T
        self.noise_covariance_ = out["noise_covariance"]
        gram = system.residuals_gram(B @ self.params_)
        rmse = np.sqrt(np.diag(gram) / np.maximum(system.rows, 1))  # over each output's rows
        solver = dict(out.get("solver", {}))
        solver["time"] = time.perf_counter() - start
        if "weighting" in out:
            self.weighting_ = out["weighting"]
            solver["weighting"] = self.weighting_.to_json()
        diagnostics = dict(out.get("diagnostics", {}))
        white = residual_whiteness(data, out.get("residuals"),
                                   warn=not out.get("colour_in_covariance", False))
        if white is not None:
            diagnostics["whiteness"] = white.to_json()
        if getattr(data, "candidates", ()):
            diagnostics["processing_candidates"] = [c.to_json() for c in data.candidates]
        if isinstance(data, IdentificationData) and "processing" not in out:
            eiv = errors_in_variables(data, self.base_params_, rmse)
            if eiv is not None:
                diagnostics["errors_in_variables"] = eiv
        params = data.robot.parameters
        self.result_ = IdentificationResult(
            method=self.method, robot=data.robot.name, output=data.robot.output,
            names=params.names, units=tuple(p.unit for p in params), params=self.params_,
            cov=self.cov_, base_names=base.names, base_matrix=B, base_params=B @ self.params_,
            base_cov=self.base_cov_, noise_covariance=self.noise_covariance_,
            training_rmse=rmse, n_samples=system.n_samples, robot_source=data.robot.source,
            output_names=data.robot.output_names, settings=self.get_params(),
            processing=processing, solver=solver,
            covariance_method=out.get("covariance_method", "sandwich"), diagnostics=diagnostics)
        return self

    def get_params(self) -> dict:
        """The estimator's settings (constructor arguments)."""
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def _estimate(self, data: CompressedData) -> dict:
        """``base_params``, ``base_cov``, ``noise_covariance`` and optionally ``params``,
        ``solver``, ``covariance_method``, ``diagnostics``, ``colour_in_covariance`` (the
        covariance holds the residual's colour: no warning of it), and the ``system``,
        ``processing`` and ``residuals`` (per recording) when they are not the data's."""
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def residual_whiteness(data: CompressedData, residuals: list[np.ndarray] | None = None, *,
                       warn: bool = True) -> Whiteness | None:
    """The whiteness test of the data's output noise (``None`` without the data's rows), with
    a warning when it is coloured (unless ``warn`` is false: an estimator whose covariance
    takes the colour into account).

    It tests the residual of the weighted least-squares fit (outputs weighted by their noise
    level) whatever the estimator: that residual is the best image of the noise, and every
    estimator's uncertainty rests on the noise being white. (An unweighted fit's residual on a
    quiet output carries the slow error that the noisy outputs leave in the estimate, which
    is no colour of the noise.) An estimator that chose its own data (maximum likelihood)
    gives its ``residuals`` instead.
    """
    if residuals is None:
        if not isinstance(data, IdentificationData):
            return None
        system = data.system()
        theta = gauss_markov(system, first_pass_covariance(system, diagonal=True))[0]
        residuals = data.residuals(theta)
    if sum(len(e) for e in residuals) < 20:
        return None
    white = whiteness(residuals, data.robot.output_names)
    if warn and not white.white:
        warnings.warn(f"identification: {white.message()}", DynidWarning, stacklevel=4)
    return white


def ols(system: JointSystem) -> tuple[np.ndarray, LinearSystem, float]:
    """OLS solution, the unweighted system and the residual variance per row."""
    stacked = system.system()
    theta = stacked.solve()
    dof = stacked.n_rows - stacked.n_params
    if dof <= 0:
        raise DataError(f"identification: {stacked.n_rows} rows for {stacked.n_params} base "
                        "parameters; record more samples")
    return theta, stacked, stacked.residual_norm2(theta) / dof


def first_pass_covariance(system: JointSystem, *, diagonal: bool) -> np.ndarray:
    """Output noise covariance from the residuals of an OLS fit (diagonal or full)."""
    theta, _, _ = ols(system)
    cov = system.residual_covariance(theta)
    if diagonal:
        cov = np.diag(np.diag(cov))
    if np.any(np.diag(cov) <= 0):
        zero = int(np.argmin(np.diag(cov)))
        raise DataError(f"output {zero}: the first-pass residual is zero; a weighted estimate "
                        "needs noise on every output (use OLS)")
    return cov


def gauss_markov(system: JointSystem, covariance: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, LinearSystem]:
    """Gauss–Markov estimate and its covariance for a known output covariance (n, n)."""
    whitened = system.system(covariance=covariance)
    theta = whitened.solve()
    return theta, whitened.inverse_information(), whitened


class OLS(Estimator):
    """Ordinary least squares on the base parameters.

    Its covariance is the sandwich ``(WᵀW)⁻¹ (Σ_ij Σ̂_ij W_iᵀ W_j) (WᵀW)⁻¹`` with ``Σ̂`` the
    residual covariance of the outputs: honest when the outputs' noise levels differ (as
    torques of large and small joints do), where ``σ² (WᵀW)⁻¹`` would not be.
    """

    method = "ols"

    def __init__(self) -> None:
        pass

    def _estimate(self, data):
        system = data.system()
        theta, _, sigma2 = ols(system)
        noise = system.residual_covariance(theta)
        return {"base_params": theta, "base_cov": system.covariance(np.eye(system.n_outputs),
                                                                    noise),
                "noise_covariance": sigma2 * np.eye(system.n_outputs)}


class WLS(Estimator):
    """Weighted least squares: each output weighted by the inverse of its noise standard
    deviation σ.

    By default the σ come from the residuals and are iterated until they settle: a first pass
    weighted by the OLS residuals, then each pass weighted by the residuals of the previous
    one, until every σ changes by less than ``tolerance`` (relative). The OLS residual of a
    quiet output carries the noise of the loud ones; the passes take it out. Or the σ are
    given, and fixed.

    Its covariance is the sandwich with the full residual covariance of the outputs (see
    :meth:`~dynid.identify.system.JointSystem.covariance`), so it stays honest when the
    outputs' noise is correlated or the σ given are wrong; each output's residual variance is
    taken over its own degrees of freedom ``N − h_j`` (its share of the fit's leverage, see
    :mod:`dynid.identify.weights`).

    Parameters
    ----------
    iterations
        ``"auto"`` (default): weighted passes until the σ settle, at most
        ``max_iterations``, with a :class:`~dynid.errors.DynidWarning` naming the outputs
        whose σ did not; an integer k: exactly k passes (1: the single pass weighted by the
        OLS residuals).
    tolerance
        Relative change of every σ below which the passes stop.
    max_iterations
        Most passes for ``"auto"``.
    sigma
        Noise standard deviation of each output (n,), in the output's unit (N·m, A...): fixed
        weights ``1/σ_j`` instead of σ from the residuals.
    noise_covariance
        Or the outputs' noise covariance (n, n) of one sample: each sample's outputs weighted
        by its inverse.

    Examples
    --------
    >>> est = WLS().fit(data)                                    # doctest: +SKIP
    >>> est.weighting_.sigma, est.weighting_.iterations          # doctest: +SKIP
    (array([0.21, 0.19, 0.02]), 4)
    >>> WLS(iterations=1).fit(data)                              # doctest: +SKIP
    >>> WLS(sigma=[0.5, 0.5, 0.05]).fit(data)                    # doctest: +SKIP
    """

    method = "wls"

    def __init__(self, *, iterations: int | str = "auto", tolerance: float = TOLERANCE,
                 max_iterations: int = MAX_ITERATIONS, sigma: np.ndarray | None = None,
                 noise_covariance: np.ndarray | None = None):
        self.iterations, self.tolerance = iterations, tolerance
        self.max_iterations = max_iterations
        self.sigma, self.noise_covariance = sigma, noise_covariance

    def _estimate(self, data):
        system = data.system()
        weighting = wls_weighting(data, system, sigma=self.sigma,
                                  noise_covariance=self.noise_covariance,
                                  iterations=self.iterations, tolerance=self.tolerance,
                                  max_iterations=self.max_iterations)
        theta, cov, _ = weighted_fit(system, weighting.covariance)
        return {"base_params": theta, "base_cov": cov,
                "noise_covariance": weighting.covariance, "weighting": weighting}


def wls_weighting(data: CompressedData, system: JointSystem, *, sigma=None,
                  noise_covariance=None, iterations: int | str = "auto",
                  tolerance: float = TOLERANCE, max_iterations: int = MAX_ITERATIONS,
                  iterations_name: str = "iterations") -> Weighting:
    """The weighting of :class:`WLS` with these settings: the σ given, or iterated from the
    residuals (``iterations_name``: how messages call ``iterations``)."""
    check_iterations(iterations, tolerance, max_iterations, name=iterations_name)
    names = data.robot.output_names
    V = given(sigma, noise_covariance, names, iterations=iterations,
              labels=("sigma", "noise_covariance", iterations_name))
    if V is not None:
        return Weighting(V, "given")
    return iterate(system, first_pass_covariance(system, diagonal=True), names,
                   iterations=iterations, tolerance=tolerance, max_iterations=max_iterations)


def weighted_fit(system: JointSystem, weighting: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The estimate weighted by the output covariance ``weighting`` (n, n), its sandwich
    covariance, and the residual covariance of the outputs (over each output's own degrees
    of freedom) that the sandwich holds."""
    theta = system.system(covariance=weighting).solve()
    noise = system.residual_covariance(theta, weighting=weighting)
    return theta, system.covariance(weighting, noise), noise


class GaussMarkov(Estimator):
    """Gauss–Markov estimate with a full output noise covariance (Abdellatif (9)).

    Parameters
    ----------
    covariance
        The output noise covariance (n, n) of one sample; ``"recordings"`` to use the one
        known from period averaging; ``"residuals"`` to estimate it from first-pass OLS
        residuals; ``"auto"`` (default): the recordings' when known, else the residuals'.
    """

    method = "gauss-markov"

    def __init__(self, *, covariance: str | np.ndarray = "auto"):
        self.covariance = covariance

    def _estimate(self, data):
        system = data.system()
        cov = resolve_covariance(self.covariance, data, system)
        theta, P, _ = gauss_markov(system, cov)
        return {"base_params": theta, "base_cov": P, "noise_covariance": cov,
                "covariance_method": "gauss-markov"}


def weighting_covariance(weighting: str, data: CompressedData, system: JointSystem,
                         **wls) -> Weighting:
    """The output weighting an estimate weighted by ``weighting`` uses: ``"ols"``,
    ``σ² I`` with ``σ²`` the OLS residual variance; ``"wls"``, as :class:`WLS` with the
    settings ``wls`` (``sigma``, ``noise_covariance``, ``iterations``); ``"gauss-markov"``,
    as :class:`GaussMarkov` (``covariance="auto"``)."""
    if weighting == "ols":
        return Weighting(ols(system)[2] * np.eye(system.n_outputs), "ols")
    if weighting == "wls":
        return wls_weighting(data, system, **wls)
    if weighting == "gauss-markov":
        return Weighting(resolve_covariance("auto", data, system), "gauss-markov")
    raise DataError(f"weighting: expected 'wls', 'ols' or 'gauss-markov', found {weighting!r}")


def resolve_covariance(setting, data: CompressedData, system: JointSystem) -> np.ndarray:
    """The output covariance an estimator setting asks for (see :class:`GaussMarkov`)."""
    if isinstance(setting, str):
        if setting not in ("auto", "recordings", "residuals"):
            raise DataError(f"covariance: expected 'auto', 'recordings', 'residuals' or a "
                            f"matrix, found {setting!r}")
        known = data.output_covariance
        if setting == "recordings" and known is None:
            raise DataError("covariance='recordings': the recordings carry no output "
                            "covariance; average periods (Processing(period=...)) or use "
                            "'residuals'")
        if setting != "residuals" and known is not None:
            return known
        return first_pass_covariance(system, diagonal=False)
    names = data.robot.output_names
    return check_noise_covariance(setting, names, name="covariance",
                                  example="covariance=np.diag([" + ", ".join(
                                      ["0.1"] * len(names)) + "]) ** 2")
