"""The bands that automatic processing derives from the recordings: the widest signal band
of the positions (or of the recorded velocities they are derived from), the band of positions
low-passed before they were recorded, and the decimation a cutoff calls for
(:meth:`~dynid.identify.processing.Processing.candidates`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ..errors import DynidWarning
from .filters import TAPS_PER_FACTOR, has_floor, rolloff_bandwidth, signal_bandwidth
from .recording import Recording

__all__ = ["KEPT", "MIN_DECIMATED", "auto_decimate", "cutoff_decimation",
           "limited_decimation", "smooth_band", "widest_band"]

#: Decimated samples an automatic decimation leaves at least, per recording.
MIN_DECIMATED = 100
#: The band an automatic decimation keeps (its new Nyquist frequency), as a fraction of the
#: positions' cutoff: there the zero-phase low-pass of order 4 passes ``1 − 1.5e-5`` of the
#: motion (``|H|² = 1 / (1 + (f / cutoff)⁸)``), so the states keep the motion undistorted
#: wherever the output keeps it, while the decimation, not the cutoff, sets the band of
#: differentiated noise in the regressor.
KEPT = 0.25


def widest_band(recordings: Sequence[Recording], sources: Sequence[str]) -> float | None:
    """The highest signal bandwidth over every coordinate and recording of the positions,
    and of the recorded velocities for the ``"velocities"`` source (the motion's band is where
    any of its measurements still stands above that measurement's noise floor: velocities
    that a drive differentiated and low-passed have a floor rising with frequency, which
    :func:`~dynid.identify.filters.signal_bandwidth` takes at its top, so they alone would
    understate the band); ``None`` (no filter) when a recording is not uniformly sampled
    (with a warning) or the spectrum is flat (samples at unrelated states, or no motion above
    the noise)."""
    best = 0.0
    for rec, source in zip(recordings, sources, strict=True):
        if not rec.is_uniform(0.05):
            warnings.warn("processing: the sample intervals vary by more than 5 %, so the "
                          "positions are not filtered and nothing is decimated; resample the "
                          "recording onto a uniform grid to filter it", DynidWarning,
                          stacklevel=5)
            return None
        signals = [rec.positions] + ([rec.velocities] if source == "velocities" else [])
        best = max([best] + [float(signal_bandwidth(x, rec.rate).max()) for x in signals])
    return best if best > 0 else None


def smooth_band(recordings: Sequence[Recording], sources: Sequence[str]) -> float | None:
    """When every coordinate of every recording has no noise floor (its spectrum keeps
    falling to the Nyquist frequency: low-passed before it was recorded), the highest
    :func:`~dynid.identify.filters.rolloff_bandwidth` over them; else ``None`` (also for
    recordings not uniformly sampled, which are neither filtered nor decimated)."""
    best = 0.0
    for rec, source in zip(recordings, sources, strict=True):
        signal = rec.velocities if source == "velocities" else rec.positions
        if rec.n_samples < 64 or not rec.is_uniform(0.05) or has_floor(signal, rec.rate).any():
            return None
        best = max(best, float(rolloff_bandwidth(signal, rec.rate).max()))
    return best if best > 0 else None


def limited_decimation(recordings: Sequence[Recording], p) -> str:
    """The note when ``p``'s decimation was limited below what its cutoff calls for
    (:func:`cutoff_decimation`) so far that the decimated output keeps content above the
    cutoff of the positions, which their low-pass removes; else ``""``."""
    if p.cutoff is None:
        return ""
    recs = [r.skip(p.skip) if p.skip else r for r in recordings]
    factor, note = cutoff_decimation(recs, p.cutoff)
    rate = min(r.rate for r in recs)
    return note if note and p.decimate == factor and rate / (2 * factor) > p.cutoff else ""


def cutoff_decimation(recordings: Sequence[Recording], cutoff: float) -> tuple[int, str]:
    """The decimation a cutoff of the positions calls for: the one that keeps :data:`KEPT`
    times the cutoff (:func:`auto_decimate`)."""
    return auto_decimate(recordings, KEPT * cutoff, f"the cutoff {cutoff:g} Hz")


def auto_decimate(recordings: Sequence[Recording], band: float, what: str = ""
                  ) -> tuple[int, str]:
    """The factor ``⌊rate / (2 band)⌋`` at the lowest rate, whose new Nyquist frequency is
    about ``band`` (Hz), at most what leaves the shortest recording ``MIN_DECIMATED`` samples
    after the decimation filter; and a note when it had to be less (``what`` names the
    setting that called for it)."""
    rate = min(r.rate for r in recordings)
    factor = max(1, int(rate // (2 * band)))
    shortest = min(r.n_samples for r in recordings)
    fits = max(1, min(factor, shortest // (TAPS_PER_FACTOR + MIN_DECIMATED)))
    if fits == factor:
        return factor, ""
    return fits, (f"{what or f'a band of {band:g} Hz'} calls for decimating by {factor}, which "
                  f"leaves fewer than {MIN_DECIMATED} samples of the shortest recording "
                  f"({shortest} samples); decimated by {fits}, so the output keeps content up "
                  f"to {rate / (2 * fits):.3g} Hz that the filtered positions attenuate. Record "
                  "longer")
