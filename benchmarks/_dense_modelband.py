"""The model filter's search as dynid first did it, for timing against the current one.

For each cutoff, every recording's whole base regressor through the model filter, the kept
rows stacked with the output, and a QR factorization of ``[W y]`` whose last diagonal entry
is the least-squares residual's norm; on a geometric grid of 24 cutoffs from 0.005 to 0.8 of
the Nyquist frequency, then a bounded scalar search (``xatol`` 1e-3 on the log of the cutoff)
between the best grid point's neighbours. Same decision rules as
:func:`dynid.identify.modelband.choose_model_cutoff`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.optimize import minimize_scalar

from dynid._blas import single_thread
from dynid.identify.filters import has_floor
from dynid.identify.modelband import MIN_GAIN, filter_model, model_rows

GRID = np.geomspace(0.005, 0.8, 24)


def dense_search(regressor, base, recordings, order, keep=None):
    """The cutoff (Hz) or ``None``, with the arguments of ``choose_model_cutoff``."""
    recs = tuple(recordings)
    if any(r.n_samples < 64 or has_floor(r.output, r.rate).any() for r in recs):
        return None
    rows = [model_rows(regressor, base, r, r, None, order) for r in recs]
    masks = [np.ones(r.output.shape, bool) if keep is None else k
             for r, k in zip(recs, keep or [None] * len(recs), strict=True)]

    def residual(cutoff):
        W = np.concatenate([filter_model(Yb, r.rate, cutoff, order)[m]
                            for (Yb, _, _), r, m in zip(rows, recs, masks, strict=True)])
        y = np.concatenate([(yo - filter_model(kn, r.rate, cutoff, order))[m]
                            for (_, kn, yo), r, m in zip(rows, recs, masks, strict=True)])
        with single_thread():
            R = scipy.linalg.qr(np.column_stack([W, y]), mode="r", check_finite=False)[0]
        return float(abs(R[W.shape[1], W.shape[1]]))

    nyquist = min(r.rate for r in recs) / 2
    lowest = max(1.0 / min(r.n_samples / r.rate for r in recs), GRID[0] * nyquist)
    grid = np.array([f for f in GRID * nyquist if f >= lowest])
    unfiltered = residual(None)
    total = np.sqrt(sum(float(np.sum(yo[m] ** 2))
                        for (_, _, yo), m in zip(rows, masks, strict=True)))
    if not len(grid) or unfiltered <= 1e-6 * total:
        return None
    scores = np.array([residual(float(f)) for f in grid])
    i = int(np.argmin(scores))
    low, high = np.log(grid[max(i - 1, 0)]), np.log(grid[min(i + 1, len(grid) - 1)])
    found = minimize_scalar(lambda x: residual(float(np.exp(x))), bounds=(low, high),
                            method="bounded", options={"xatol": 1e-3})
    best, score = (float(np.exp(found.x)), found.fun) if found.fun < scores[i] else \
        (float(grid[i]), scores[i])
    return float(f"{best:.4g}") if score <= (1 - MIN_GAIN) * unfiltered else None
