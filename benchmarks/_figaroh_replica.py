"""The published TX40 identification recomputed step by step, with and without its defects.

FIGAROH's example script (``examples/staubli_TX40/identification.py`` of figaroh-plus, the
pipeline that wrote ``reference/TX40_bp_5.csv``) does, at 5 kHz:

1. joint positions ``q = Rq⁻¹ q_m``; a 4th-order Butterworth designed at ``ts·100/2`` of
   Nyquist (25 Hz), forward and backward (odd padding of 12 samples), and 20 samples dropped
   at each end; then the MDH zero;
2. velocities by forward differences ``(q[k+1] − q[k]) / ts`` and accelerations by
   ``numpy.gradient`` of them, for the joints ``range(nq − 1)`` only: **joint 6's acceleration
   is left at zero** (a loop bound meant for a floating base). The positions lose two samples,
   the velocities one;
3. the regressor stacked joint by joint (all samples of joint 1's row, then joint 2's...); the
   torques ``τ = Rt τ_m`` lose 20 samples at each end, so they have two samples more per joint
   than the regressor, and the regressor's joint blocks are cut with the torques' length:
   **joint j's regressor rows run 2(j−1) samples ahead of its torques**, and the last 2j rows
   of joint j's block come from the next joint's rows;
4. per joint, the torque and every regressor column decimated by 10 twice
   (``scipy.signal.decimate``, zero phase), keeping samples 0, 100, 200... of the trimmed run;
5. per joint, the rows whose decimated velocity (its viscous-friction column) is below the
   settings' ``dq_lim_def`` left out;
6. OLS, then one WLS pass with ``σ_j² = ‖r_j‖² / n_j`` from the OLS residual.

Here the same steps run with this model's base regressor (:class:`dynid.models.Regressor`;
with joint 6's acceleration at zero it holds FIGAROH's columns: ``Ia5`` on ``q̈5`` of row 5,
``Iam6`` on ``q̈5`` of row 6). ``defects=True`` keeps the two defects in bold and the
forward differences; ``defects=False`` differentiates by central differences
(``numpy.gradient``), keeps joint 6's acceleration and aligns every joint's rows with its
torques; everything else is the same.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy import signal

from dynid import datasets
from dynid.identify.data import _plan, decimate
from dynid.models import BaseParameters, Regressor, Robot

#: ``dq_lim_def`` of the data set's settings (``config/TX40_config.yaml``), rad/s.
DQ_LIM = datasets.TX40_DEADZONE
TS = 2e-4
BORDER = 20  # samples dropped at each end after the position filter (5 × the order)


def _load(root: Path, robot: Robot) -> tuple[np.ndarray, np.ndarray]:
    """Joint positions (unfiltered, before the MDH zero) and joint torques of the run."""
    K = robot.transmission.jacobian(np.zeros((1, robot.n)))[0]  # q_m = K q
    q_m = np.loadtxt(root / "data" / "pos_read_data.csv", delimiter=",", skiprows=1)
    tau_m = np.loadtxt(root / "data" / "curr_data.csv", delimiter=",", skiprows=1)
    return np.linalg.solve(K, q_m.T).T, tau_m @ K  # τ = Kᵀ τ_m


def _states(q_raw: np.ndarray, defects: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b, a = signal.butter(4, TS * 100.0 / 2, "low")
    q = signal.filtfilt(b, a, q_raw, axis=0, padtype="odd", padlen=12)[BORDER:-BORDER]
    q = q + np.asarray(datasets.TX40_ZERO)
    if not defects:
        v = np.gradient(q, TS, axis=0)
        return q, v, np.gradient(v, TS, axis=0)
    v = np.diff(q, axis=0) / TS
    acc = np.gradient(v, axis=0, edge_order=1) / TS
    acc[:, 5] = 0.0
    return q[:-2], v[:-1], acc[:-1]


def _decimate(x: np.ndarray) -> np.ndarray:
    for _ in range(2):
        x = signal.decimate(x, 10, zero_phase=True, axis=0)
    return x


def _decimate_fir(x: np.ndarray) -> np.ndarray:
    return decimate(x, 100)[1]


def published_pipeline(root: str | Path, robot: Robot, base: BaseParameters, *,
                       defects: bool = True, decimation: str = "chebyshev",
                       deadzone_at: str = "decimated", start: int = 0
                       ) -> tuple[np.ndarray, np.ndarray]:
    """OLS and WLS base parameters (in ``base``) of the published pipeline on the TX40 run.

    Without the defects, two of its choices can be dynid's instead: ``decimation="fir"``
    (dynid's decimation filter, :func:`dynid.identify.data.decimate`, which keeps the samples
    ``L, L + 100, ...`` away from the ends by its half length ``L``, rather than
    ``scipy.signal.decimate``'s Chebyshev filters twice) and ``deadzone_at="sample"`` (the
    dead zone tested on the velocity at each kept sample rather than on the decimated
    velocity). ``start`` samples dropped at the run's start move the decimation instants
    (the published script keeps samples 0, 100, 200... of its trimmed run)."""
    if defects and (decimation, deadzone_at) != ("chebyshev", "decimated"):
        raise ValueError("the published pipeline with its defects has its own choices only")
    root = Path(root)
    q_raw, tau_raw = (x[start:] for x in _load(root, robot))
    q, v, a = _states(q_raw, defects)
    Yb = np.concatenate([base.regressor(Y) for _, Y in Regressor(robot).chunks(q, v, a)])
    tau = tau_raw[BORDER:-BORDER]
    n, m = Yb.shape[0], tau.shape[0]
    rows, outputs = [], []
    for j in range(robot.n):
        if defects:  # the stacked regressor cut with the torques' length per joint
            stacked = Yb.transpose(1, 0, 2).reshape(robot.n * n, -1)
            speed = np.zeros(robot.n * n)
            speed[j * n:(j + 1) * n] = v[:, j]
            W, vj = stacked[j * m:(j + 1) * m], speed[j * m:(j + 1) * m]
        else:
            W, vj = Yb[:, j], v[:, j]
        vj_raw = vj
        dec = _decimate if decimation == "chebyshev" else _decimate_fir
        y = dec(tau[:, j])
        W, vj = dec(W)[:len(y)], dec(vj)[:len(y)]
        if deadzone_at == "sample":
            vj = vj_raw[_plan(len(vj_raw), 100)[2]] if decimation == "fir" else vj_raw[::100]
        keep = np.abs(vj) >= DQ_LIM[j]
        rows.append(W[keep])
        outputs.append(y[keep])
    W, y = np.vstack(rows), np.concatenate(outputs)
    ols = np.linalg.lstsq(W, y, rcond=None)[0]
    scale = np.concatenate([np.full(len(yj), 1 / np.sqrt(np.mean((yj - Wj @ ols) ** 2)))
                            for Wj, yj in zip(rows, outputs, strict=True)])
    wls = np.linalg.lstsq(W * scale[:, None], y * scale, rcond=None)[0]
    return ols, wls
