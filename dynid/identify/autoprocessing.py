"""Automatic processing settings chosen for recordings: the candidate cutoffs and
decimations of :meth:`~dynid.identify.processing.Processing.candidates`, and the one
:meth:`~dynid.identify.processing.Processing.resolve` takes without a fit.

The bands come from the raw recordings (:mod:`dynid.identify._bands`): ``B``, the highest
signal bandwidth of the positions over every coordinate and recording (and of the recorded
velocities where the accelerations come from them). With an automatic decimation each
candidate keeps a band of ``m B / 2`` for ``m`` in 1, 1.5, 2, 3 (its new Nyquist frequency),
with the positions' cutoff at that band over :data:`~dynid.identify._bands.KEPT`; with a given
decimation the cutoff itself is ``m B``. Cutoffs stay below 80 % of the Nyquist frequency.
Positions low-passed before they were recorded (no noise floor) get no filter of their own:
their candidates are decimations alone, to the same multiples of their band.
Identification chooses among the candidates by the whiteness of the residual
(:func:`~dynid.identify.choice.choose_processing`).

Both functions take the settings first and are bound as the methods
:meth:`~dynid.identify.processing.Processing.candidates` and
:meth:`~dynid.identify.processing.Processing.resolve`, which their docstrings speak of.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ._bands import (
    KEPT,
    auto_decimate,
    cutoff_decimation,
    limited_decimation,
    smooth_band,
    widest_band,
)
from .recording import Recording
from .states import derivative_source

if TYPE_CHECKING:
    from .processing import Processing

__all__ = ["candidates", "resolve"]

# Automatic decimations tried: the band each keeps (its Nyquist frequency), in multiples of
# half the positions' signal bandwidth; the cutoff of the positions is that band over KEPT.
_BAND_MULTIPLES = (1.0, 1.5, 2.0, 3.0)


def candidates(settings: Processing,
               recordings: Recording | Sequence[Recording]) -> list[Processing]:
    """Settings with the automatic ones replaced, for ``recordings`` (raw, as recorded):
    decimations that keep ½, ¾, 1 and 1.5 times the signal bandwidth ``B`` of the
    positions (the highest over every coordinate and recording, and over the recorded
    velocities where the accelerations come from them), ``⌊rate / (m B)⌋`` for ``m`` in 1,
    1.5, 2, 3, each with the cutoff ``2 m B`` four times the band it keeps (at most 80 %
    of the Nyquist frequency; no ``m`` whose ``m B`` reaches 80 % of it is tried), so
    that the positions' low-pass leaves the kept band undistorted and the decimation alone
    sets how much differentiated noise the regressor keeps; the decimation is the one the
    cutoff calls for (:func:`~dynid.identify._bands.cutoff_decimation`, ``⌊2 rate /
    cutoff⌋``). With a given decimation the cutoff is what limits the band, and is ``m B``
    instead. One candidate when nothing is automatic,
    with a period, when the signals need no filter, or when every recording's velocities
    and accelerations are used as recorded (no cutoff, no decimation)."""
    if settings.resolved:
        return [settings]
    recs = (recordings,) if isinstance(recordings, Recording) else tuple(recordings)
    if settings.period is not None:
        return [replace(settings, cutoff=None if settings.cutoff == "auto" else settings.cutoff,
                        decimate=1 if settings.decimate == "auto" else settings.decimate)]
    recs = tuple(r.skip(settings.skip) if settings.skip else r for r in recs)
    sources = [derivative_source(r, settings.derivatives) for r in recs]
    if settings.cutoff == "auto" and all(s == "recorded" for s in sources):
        cutoffs = [None]  # states recorded with their derivatives are used as they are
    elif settings.cutoff == "auto":
        band = widest_band(recs, sources)
        nyquist = min(r.rate for r in recs) / 2
        # With a given decimation the cutoff limits the band itself (at m B).
        scale = 1 / (2 * KEPT) if settings.decimate == "auto" else 1.0
        cutoffs = list(dict.fromkeys(
            float(f"{min(m * band * scale, 0.8 * nyquist):.3g}")
            for m in _BAND_MULTIPLES if band is not None and m * band < 0.8 * nyquist)) \
            or [None]
        smooth = smooth_band(recs, sources) if cutoffs == [None] else None
        if smooth is not None and settings.decimate == "auto":
            # Low-passed before they were recorded: no filter of their own, the
            # regressor and the output decimated alike to the motion's band.
            factors = sorted({auto_decimate(recs, m * smooth / 2)[0]
                              for m in _BAND_MULTIPLES if m * smooth < 0.8 * nyquist},
                             reverse=True)
            return [replace(settings, cutoff=None, decimate=d) for d in factors] or \
                [replace(settings, cutoff=None, decimate=1)]
    else:
        cutoffs = [settings.cutoff]
    decimate = settings.decimate
    return [replace(settings, cutoff=c, decimate=decimate if decimate != "auto" else
                    1 if c is None else cutoff_decimation(recs, c)[0]) for c in cutoffs]


def resolve(settings: Processing, recordings: Recording | Sequence[Recording]) -> Processing:
    """These settings with the automatic ones chosen for ``recordings`` without a fit:
    the candidate (:meth:`candidates`) whose cutoff is 3 times the positions' signal
    bandwidth (keeping ¾ of it; or the nearest), or the next higher one whose decimation a
    short
    recording does not limit. Identification chooses among the candidates by the
    whiteness of the residual (:func:`~dynid.identify.choice.choose_processing`)."""
    options = candidates(settings, recordings)
    recs = (recordings,) if isinstance(recordings, Recording) else tuple(recordings)
    preferred = options[min(1, len(options) - 1):]
    # Passed over where a short recording limits the decimation (see limited_decimation).
    return next((p for p in preferred if not limited_decimation(recs, p)), preferred[0])
