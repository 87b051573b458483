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

__all__ = ["MIN_DECIMATED", "auto_decimate", "limited_decimation", "smooth_band",
           "widest_band"]

#: Decimated samples an automatic decimation leaves at least, per recording.
MIN_DECIMATED = 100


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
    """The note when ``p``'s decimation was limited below what its cutoff calls for, so that
    the decimated output keeps content above the cutoff of the positions; else ``""``."""
    if p.cutoff is None:
        return ""
    recs = [r.skip(p.skip) if p.skip else r for r in recordings]
    factor, note = auto_decimate(recs, p.cutoff)
    rate = min(r.rate for r in recs)
    return note if note and p.decimate == factor and rate / (2 * factor) > p.cutoff else ""


def auto_decimate(recordings: Sequence[Recording], cutoff: float) -> tuple[int, str]:
    """``⌊rate / cutoff⌋`` at the lowest rate, at most what leaves the shortest recording
    ``MIN_DECIMATED`` samples after the decimation filter; and a note when it had to be
    less."""
    rate = min(r.rate for r in recordings)
    factor = max(1, int(rate // cutoff))
    shortest = min(r.n_samples for r in recordings)
    fits = max(1, min(factor, shortest // (TAPS_PER_FACTOR + MIN_DECIMATED)))
    if fits == factor:
        return factor, ""
    return fits, (f"the cutoff {cutoff:g} Hz calls for decimating by {factor}, which leaves "
                  f"fewer than {MIN_DECIMATED} samples of the shortest recording ({shortest} "
                  f"samples); decimated by {fits}, so the output keeps content up to "
                  f"{rate / (2 * fits):.3g} Hz that the filtered positions miss. Record longer")
