"""What the closed-loop estimators share: the simulator they take, their start, and the
simulated runs processed like the data.

Data recorded in closed loop carry noise in the positions that the drives fed back: the
command, which is the measured output, then correlates with the noise of the regressor, and
least squares is biased. The closed-loop estimators (:class:`~dynid.identify.
InstrumentalVariables`, :class:`~dynid.identify.DIDIM`) take away that correlation with a
simulation of the same experiment: same reference, same controller, the robot's model with
the current estimate, no noise.

A simulator is any callable ``params (p,) → recordings``: given standard parameters, the
noise-free recording of each of the data's recordings (same samples), holding at least the
basis positions and the output the drives applied. :class:`~dynid.hardware.ClosedLoop` is one,
built from the drives' loops and the reference; this package depends on none. A simulator
may also have a ``settings()`` method whose dictionary goes to the result file.

The simulated positions go through the data's processing (filter, differentiation), without
its delay compensation (the simulated channels have no delay); the rows built from them are
decimated and masked as the data's rows are (:meth:`~dynid.identify.IdentificationData.rows`
with ``states``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import DataError, DynidError, SolverError
from ._coloured import autocovariance, sandwich
from .data import CompressedData, IdentificationData
from .estimators import Estimator, ols, weighted_fit, wls_weighting
from .recording import Recording

__all__ = ["ClosedLoopSimulator", "check_simulator", "coloured_information", "simulated_states",
           "start_estimate"]


@runtime_checkable
class ClosedLoopSimulator(Protocol):
    """The closed loop of the experiment: standard parameters (p,) → one noise-free recording
    per recording of the data (basis positions and the applied output, same samples)."""

    def __call__(self, params: np.ndarray) -> Sequence[Recording]: ...


def check_simulator(simulator, name: str) -> None:
    """Raise unless ``simulator`` is callable."""
    if not callable(simulator):
        raise DataError(f"{name}: simulator: expected a callable params → recordings (the "
                        f"closed loop of the experiment), found {type(simulator).__name__}; "
                        f"e.g. {name}(simulator=dynid.hardware.ClosedLoop(robot, reference, "
                        "duration, gains=simulation.gains))")


def simulator_settings(simulator) -> dict | str:
    """The simulator's settings for a result file: its ``settings()``, else its text."""
    settings = getattr(simulator, "settings", None)
    return settings() if callable(settings) else repr(simulator)


def common_params(estimator) -> dict:
    """The settings IV and DIDIM share, as their ``get_params`` reports them."""
    start = estimator.start if isinstance(estimator.start, str) else estimator.start.method
    return {"simulator": simulator_settings(estimator.simulator), "start": start,
            "weighted": estimator.weighted, "tolerance": estimator.tolerance,
            "segment": estimator.segment}


def check_data(data: CompressedData, name: str) -> IdentificationData:
    """Closed-loop estimators need the recordings themselves, not only a compressed system."""
    if not isinstance(data, IdentificationData):
        raise DataError(f"{name}: expected IdentificationData (the recordings, which the "
                        f"simulated runs are compared with), found {type(data).__name__}; "
                        f"e.g. {name}(simulator=loop).fit(IdentificationData(robot, recordings))")
    return data


def start_estimate(data: IdentificationData, start, weighted: bool, name: str
                   ) -> tuple[np.ndarray, np.ndarray, str]:
    """The start estimate (b,), each output's weight σ (n,) (ones unweighted) and the start's
    name: ``"ols"``, ``"wls"`` or the estimate of an :class:`Estimator` given."""
    system = data.system()
    sigma = np.ones(data.robot.n)
    if weighted:
        sigma = np.sqrt(np.diag(wls_weighting(data, system).covariance))
    if isinstance(start, Estimator):
        return start.fit(data).base_params_, sigma, start.method
    if start == "ols":
        return ols(system)[0], sigma, "ols"
    if start == "wls":
        return weighted_fit(system, np.diag(sigma**2))[0], sigma, "wls"
    raise DataError(f"{name}: start: expected 'ols', 'wls' or an estimator, found {start!r}; "
                    f"e.g. {name}(simulator=loop, start=PhysicallyConsistent())")


def simulated_states(data: IdentificationData, simulator, base_params: np.ndarray, *,
                     name: str, iteration: int) -> list[Recording]:
    """The closed loop simulated with base parameters ``base_params`` (through the standard
    parameters closest to the prior), processed like the data: one processed recording per
    recording of the data."""
    robot = data.robot
    params = data.base.from_base(base_params, robot.prior)
    try:
        runs = list(simulator(params))
    except DynidError as exc:
        raise SolverError(
            f"{name}: the closed loop simulated with the estimate of iteration {iteration} "
            f"failed ({exc}); the estimate makes an unstable or non-physical model. Start "
            f"from a physically consistent estimate, e.g. {name}(simulator=loop, "
            "start=PhysicallyConsistent()), or record data that determine the parameters "
            "better") from None
    if len(runs) != len(data.recordings):
        raise DataError(f"{name}: the simulator gave {len(runs)} recordings for the data's "
                        f"{len(data.recordings)}; simulate the closed loop of every recording")
    processing = replace(data.processing, delay=None)
    out = []
    for k, (run, rec) in enumerate(zip(runs, data.recordings, strict=True)):
        if not isinstance(run, Recording):
            raise DataError(f"{name}: the simulator gave {type(run).__name__} for recording "
                            f"{k + 1}; expected a Recording")
        if run.n_samples != rec.n_samples or not np.isclose(run.rate, rec.rate, rtol=1e-6):
            raise DataError(f"{name}: simulated recording {k + 1} has {run.n_samples} samples "
                            f"at {run.rate:.6g} Hz, the data's {rec.n_samples} at "
                            f"{rec.rate:.6g} Hz; simulate the same duration, control_rate and "
                            "record_every as the experiment")
        positions = Recording(run.time, run.positions, run.output, space=run.space,
                              output_kind=robot.output, names=run.names, units=run.units)
        out.append(processing.apply(positions, robot))
    return out


def coloured_information(data: IdentificationData, states: Sequence[Recording], w: np.ndarray,
                         residuals: Sequence[np.ndarray], segment: int) -> np.ndarray:
    """The covariance (b, b) of ``Σ_t X_tᵀ e_t``, ``X_t`` the regressor rows at the simulated
    ``states`` weighted by ``w`` (n,) and masked as the data's, ``e`` the output error whose
    autocovariance the weighted ``residuals`` (one (N, n) array per recording) give
    (:func:`~dynid.identify._coloured.autocovariance`, :func:`~dynid.identify._coloured.
    sandwich`)."""
    gamma = autocovariance(residuals, fitted=data.base.rank, segment=segment)
    return sum(sandwich((X * (w * keep)[..., None] for X, _, keep in
                         data.rows([rec], states=[at])), gamma)
               for rec, at in zip(data.processed, states, strict=True))
