"""Choosing the automatic processing by the whiteness of the residual.

The reported uncertainty of a least-squares estimate assumes a white residual. How the
positions are filtered decides much of its colour: a cutoff too low distorts the motion (the
model misses part of the output, slowly), one too high lets the noise of differentiated
positions into the regressor (noise that rises with frequency). So among the candidate
settings of :meth:`~dynid.identify.processing.Processing.candidates`, identification keeps the
one whose weighted least-squares residual is the whitest (among those whose decimation is
what their cutoff calls for, when there are any: one limited by a short recording keeps
output content its filtered positions miss, a bias the colour does not show): the smallest
mean of
``(log f_j)²`` over the outputs, ``f_j`` the factor by which the residual's colour moves the σ
(:class:`~dynid.identify.residuals.Whiteness`). Scores within 0.02 or 20 % of the lowest are
within the score's own sampling spread: among them the candidate nearest the 3 multiple of
the bandwidth is kept, as without a fit. When every recording states its encoders' resolution
(:attr:`~dynid.identify.recording.Recording.resolution`), the higher cutoffs among them are
tried too: the highest whose quantization error stays small against the residual (the output
error that the quantized positions cause through the processing and the model,
:func:`~dynid.identify.quantization.errors_in_variables`, at most
:data:`~dynid.identify.quantization.EIV_RATIO` of the residual's σ on every output) is kept
instead. A higher cutoff keeps a wider band of the motion (its decimation keeps a quarter of
it, :data:`~dynid.identify._bands.KEPT`), and the resolution tells how much noise that band
lets in (errors in the regressor, which bias least squares).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..errors import DataError, DynidError, DynidWarning
from ._bands import limited_decimation
from .processing import Processing
from .quantization import EIV_RATIO, errors_in_variables
from .recording import Recording
from .residuals import whiteness

__all__ = ["Candidate", "choose_processing"]

#: Scores closer than this to the lowest are ties (see :func:`choose_processing`).
TIE = 0.02
# Index of the 3 multiple among the candidates (the choice without a fit).
_PREFERRED = 1


@dataclass(frozen=True)
class Candidate:
    """A processing tried, with the whiteness score of its least-squares residual (``inf``
    when it could not be fitted) and why not."""

    processing: Processing
    score: float
    note: str = ""
    #: The quantization's output error over the residual's σ, the largest over the outputs
    #: (``None``: not measured, without a resolution or for a candidate not tied).
    quantization: float | None = None

    def to_json(self) -> dict:
        return {"cutoff": self.processing.cutoff, "decimate": self.processing.decimate,
                "score": self.score if np.isfinite(self.score) else None, "note": self.note,
                "quantization": self.quantization}


def choose_processing(robot, recordings: Sequence[Recording], processing: Processing, base
                      ) -> tuple[Processing, tuple[Candidate, ...]]:
    """The candidate settings of ``processing`` for ``recordings`` whose least-squares
    residual is the whitest, and every candidate with its score."""
    from .data import IdentificationData
    from .estimators import first_pass_covariance, gauss_markov

    options = processing.candidates(recordings)
    if len(options) == 1:
        _warn_capped(recordings, options[0])
        return options[0], ()
    tried, fits = [], []
    for option in options:
        try:
            # The model filter is looked for once, with the processing chosen.
            plain = replace(option, model_cutoff=None) if option.model_cutoff == "auto" \
                else option
            data = IdentificationData(robot, recordings, processing=plain, base=base)
            system = data.system()
            theta = gauss_markov(system, first_pass_covariance(system, diagonal=True))[0]
            residuals = data.residuals(theta)
            factor = whiteness(residuals, robot.output_names).sigma_factor
            tried.append(Candidate(option, float(np.mean(np.log(factor) ** 2))))
            fits.append((data, theta, residuals))
        except DynidError as exc:  # e.g. too few samples left for this decimation
            tried.append(Candidate(option, float("inf"), str(exc)))
            fits.append(None)
    # A candidate whose decimation had to be limited keeps output content its filtered
    # positions miss: a bias the residual's colour does not show. Such candidates are kept
    # only when every candidate is limited so.
    full = [k for k, c in enumerate(tried)
            if np.isfinite(c.score) and not limited_decimation(recordings, c.processing)]
    pool = full or list(range(len(tried)))
    best = _whitest([tried[k] for k in pool])
    if all(r.resolution is not None for r in recordings) and best.processing.cutoff is not None:
        # Higher cutoffs as white as the choice: measured, and the highest quiet one kept.
        higher = [c for c in _ties([tried[k] for k in pool])
                  if c.processing.cutoff is not None and
                  c.processing.cutoff > best.processing.cutoff]
        tried = [_with_quantization(c, fits[k]) if c in higher else c
                 for k, c in enumerate(tried)]
        quiet = [c for c in tried if c.quantization is not None and c.quantization <= EIV_RATIO]
        if quiet:
            best = max(quiet, key=lambda c: c.processing.cutoff)
    if not np.isfinite(best.score):
        raise DataError("processing: no automatic setting could be fitted ("
                        + "; ".join(f"cutoff {c.processing.cutoff:g} Hz: {c.note}"
                                    for c in tried) + "); give cutoff= and decimate=")
    _warn_capped(recordings, best.processing)
    return best.processing, tuple(tried)


def _ties(tried: Sequence[Candidate]) -> list[Candidate]:
    """The candidates whose score is within ``TIE`` (absolute) or 20 % of the lowest: not
    told apart (the score's spread over a few hundred decimated samples is about 0.02)."""
    low = min(c.score for c in tried)
    return [c for c in tried if c.score <= low + max(TIE, 0.2 * low)]


def _with_quantization(candidate: Candidate, fit) -> Candidate:
    """The candidate with its quantization error measured on its own fit
    (:func:`~dynid.identify.quantization.errors_in_variables`, without its warning: the
    chosen one warns when identified)."""
    if fit is None:
        return candidate
    data, theta, residuals = fit
    res = np.vstack(residuals)
    rms = np.sqrt(np.nanmean(res ** 2, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)
        eiv = errors_in_variables(data, theta, rms)
    if eiv is None:
        return candidate
    return replace(candidate, quantization=float(np.max(eiv["ratio"])))


def _whitest(tried: Sequence[Candidate]) -> Candidate:
    """Among the candidates with the lowest score (:func:`_ties`), the one nearest the 3
    multiple of the bandwidth (the choice without a fit,
    :meth:`~dynid.identify.processing.Processing.resolve`)."""
    ties = _ties(tried)
    index = [tried.index(c) for c in ties]
    return tried[min(index, key=lambda k: abs(k - _PREFERRED))]


def _warn_capped(recordings: Sequence[Recording], chosen: Processing) -> None:
    """Warn when the chosen cutoff's decimation had to be limited by the recordings' length
    so far that the output keeps content the filtered positions miss."""
    note = limited_decimation(recordings, chosen)
    if note:
        warnings.warn(f"processing: {note}", DynidWarning, stacklevel=5)
