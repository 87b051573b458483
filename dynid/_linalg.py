"""Linear algebra shared by identification and excitation design."""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = ["stack_triangular"]


def stack_triangular(R: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Triangular factor of ``[R; block]``, trimmed to at most as many rows as columns: the
    QR-compressed form of rows accumulated chunk by chunk (``RᵀR`` is the Gram matrix)."""
    stacked = np.vstack([R, block])
    out = scipy.linalg.qr(stacked, mode="r", check_finite=False)[0]
    return out[:min(out.shape[0], stacked.shape[1])]
