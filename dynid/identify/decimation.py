"""Parallel decimation of the regressor and the output.

Decimation (``Processing(decimate=D)``) filters the regressor columns and the output with the
same zero-phase FIR low-pass and keeps one sample in D (Gautier's parallel decimation): the
model ``y = Y θ`` is linear in θ, so it still holds after the filter, while the high-frequency
content that the estimated accelerations cannot follow is removed from both sides alike. The
filter has ``16 D + 1`` symmetric taps (Hamming window) and its cutoff at the new Nyquist
frequency: its aliased power response sums to one within a few percent, so white output noise
stays white after decimation (the correlation of neighbouring decimated samples is 0.05, and
the noise variance at low frequencies, which sets the parameters' uncertainty, is the
variance per sample within 5 %). It is applied chunk by chunk with an overlap of half its
length, which gives exactly the samples of a single pass over the whole recording.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from .filters import _signal, decimation_filter

__all__ = ["decimate", "decimated_flags", "decimation_filter"]


def _plan(n_samples: int, factor: int) -> tuple[np.ndarray, int, np.ndarray, int]:
    """Decimation of ``n_samples`` by ``factor``: the filter, its half length ``L`` (a multiple
    of ``factor``), the kept samples (the filter's centres, ``L`` away from the ends) and the
    first of them in the output of ``upfirdn(h, x, down=factor)``."""
    h = decimation_filter(factor)
    L = (len(h) - 1) // 2
    centers = np.arange(L, n_samples - L, factor)
    if not len(centers):
        raise DataError(f"decimate: {n_samples} samples are too few for factor {factor} (the "
                        f"filter spans {len(h)} samples)")
    return h, L, centers, 2 * L // factor


def decimate(x: np.ndarray, factor: int) -> tuple[np.ndarray, np.ndarray]:
    """Filter ``x`` (N, ...) with :func:`decimation_filter` and keep one sample in ``factor``.

    Returns the kept sample indices (the filter's centres, away from the ends by half its
    length) and the filtered values there, as
    :class:`~dynid.identify.data.IdentificationData` does with the regressor and the output.
    """
    h, _, centers, first = _plan(x.shape[0], factor)
    return centers, _signal().upfirdn(h, x, down=factor, axis=0)[first:first + len(centers)]


def decimated_flags(flags: np.ndarray, factor: int) -> np.ndarray:
    """Which samples kept by :func:`decimate` have a flagged sample (N,) in their window."""
    h, _, centers, first = _plan(flags.shape[0], factor)
    counts = _signal().upfirdn(np.ones(len(h)), flags.astype(float), down=factor)
    return counts[first:first + len(centers)] > 0
