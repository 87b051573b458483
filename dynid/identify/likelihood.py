"""Maximum likelihood with the data filter's cutoff as an unknown (Abdellatif (23)–(24)).

For a periodic excitation the periods are averaged (Abdellatif 3.2), which gives the noise
covariances ``Σ_δδ`` of the positions and ``Σ_ηη`` of the output. The averaged positions are
low-passed in the frequency domain at a cutoff ``f_c`` (Abdellatif 3.3); what the filter removes
is the position error ``δ(f_c)`` (in the recorded coordinates: for leg lengths mapped to
poses before filtering, the leg lengths minus those of the filtered pose), and the output
error is ``η(θ, f_c) = y − Y(f_c) θ``. The negative log-likelihood

    ½ Σ_k  δ_kᵀ Σ_δδ⁻¹ δ_k + η_kᵀ Σ_ηη⁻¹ η_k                          (Abdellatif (24), p_z = f_c)

is minimized over ``θ`` and ``f_c``. For a fixed cutoff the minimum over ``θ`` is the
Gauss–Markov estimate, so the search is one-dimensional over the cutoffs a periodic signal
allows: the harmonics of the period.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import DataError
from .data import IdentificationData, pooled_covariance
from .estimators import Estimator, gauss_markov
from .kinematics import actuator_positions
from .system import RankDeficient

__all__ = ["MaximumLikelihood"]


class MaximumLikelihood(Estimator):
    """Maximum-likelihood estimate with the cutoff frequency tuned (see the module docstring).

    Parameters
    ----------
    max_harmonic
        Highest harmonic of the period tried as cutoff (default: up to a quarter of the
        sample rate, at most 60).

    After fitting, ``cutoff_`` is the chosen cutoff (Hz) and ``profile_`` maps each cutoff
    tried to its negative log-likelihood (infinite where the harmonics kept leave some base
    parameter unexcited).
    """

    method = "ml"

    def __init__(self, *, max_harmonic: int | None = None):
        self.max_harmonic = max_harmonic

    def _estimate(self, data: IdentificationData):
        if not isinstance(data, IdentificationData):
            raise DataError("maximum likelihood needs the recordings: fit IdentificationData")
        proc = data.processing
        if proc.period is None:
            raise DataError("maximum likelihood needs a periodic excitation: give the period "
                            "in the processing (Processing(period=...))")
        # The periods are averaged once; each cutoff filters and differentiates the averages.
        averages = [proc.average(rec) for rec in data.recordings]
        cov_y = pooled_covariance([avg.recording for avg in averages])
        if cov_y is None:
            raise DataError("maximum likelihood: the output does not vary between periods; "
                            "it needs measurement noise to weigh the two errors")
        P = averages[0].recording.n_samples
        top = self.max_harmonic or min(60, P // 4)
        harmonics = range(1, max(2, min(top, P // 2 - 1)) + 1)
        profile, best, refused = {}, None, None
        for k in harmonics:
            cutoff = (k + 0.5) / proc.period
            trial = replace(proc, harmonics_cutoff=cutoff, decimate=1)
            cost = 0.0
            states = [trial.states(avg.recording, data.robot) for avg in averages]
            for avg, state in zip(averages, states, strict=True):
                # δ: the measured positions minus those of the filtered motion, in the
                # recording's coordinates (leg lengths of the filtered pose for a hexapod).
                q = avg.recording.positions
                fitted = state.positions if avg.recording.space == "basis" else \
                    actuator_positions(data.robot, state.positions)
                delta = q - fitted
                cov_d = avg.position_covariance / avg.n_periods
                cost += 0.5 * float(np.sum(delta * _solve_psd(cov_d, delta.T).T))
            system = data.compress(states, decimate=1)
            try:
                theta, P_theta, whitened = gauss_markov(system, cov_y)
            except RankDeficient as exc:    # too few harmonics kept to excite every parameter
                profile[cutoff], refused = np.inf, exc
                continue
            cost += 0.5 * whitened.residual_norm2(theta)
            profile[cutoff] = cost
            if best is None or cost < profile[best[0]]:
                best = (cutoff, theta, P_theta, system, trial, states)
        if best is None:
            raise refused
        self.cutoff_, theta, P_theta, system, trial, states = best
        self.profile_ = profile
        return {"base_params": theta, "base_cov": P_theta, "noise_covariance": cov_y,
                "system": system, "processing": trial, "covariance_method": "gauss-markov",
                "residuals": data.residuals(theta, states, decimate=1),
                "solver": {"cutoff": self.cutoff_, "profile": {f"{k:.6g}": v
                                                               for k, v in profile.items()}}}


def _solve_psd(S: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``S⁻¹ b`` for a covariance that may be singular (e.g. noise-free or quantized
    coordinates): directions without variance are given a floor of 1e-12 of the largest."""
    w, V = np.linalg.eigh(S)
    floor = max(w.max(), 1e-300) * 1e-12
    return V @ ((V.T @ b) / np.maximum(w, floor)[:, None])
