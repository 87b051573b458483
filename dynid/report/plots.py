"""The report's figures, drawn headless with matplotlib's Agg canvas and kept small.

* Long signals are thinned before they are drawn (:func:`envelope`): at most
  :data:`MAX_POINTS` per line, each run of samples replaced by its smallest and its largest
  value at their own times, so the band of a noisy signal and its peaks look as they do in
  the full signal while the image stays light.
* Figures are rendered at :data:`DPI` dots per inch and written as PNG with a colour palette
  (lines on white need few colours): about 45 kB for measured and predicted outputs of
  seven joints, 15–20 kB for three.
"""

from __future__ import annotations

import io
from collections.abc import Mapping

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..identify.recording import Recording
from ..identify.validation import Validation

__all__ = ["DPI", "MAX_POINTS", "envelope", "output_figure", "png", "trajectory_figure"]

#: Resolution of the figures, dots per inch.
DPI = 80
#: Most points drawn per line.
MAX_POINTS = 1200
# Colours of the palette the PNG images are reduced to.
_COLOURS = 64


def envelope(time: np.ndarray, values: np.ndarray, limit: int = MAX_POINTS
             ) -> tuple[np.ndarray, np.ndarray]:
    """At most ``limit`` points per column of ``values`` (N, n) that keep its envelope.

    The samples are cut into runs of ``k`` (the fewest that fit); each run gives its smallest
    and its largest value, in time order, at their own times. Returns times and values
    (M, n), column by column (the times differ between columns); unchanged (each column with
    ``time``) when N ≤ ``limit``.
    """
    time = np.asarray(time, dtype=float)
    values = np.asarray(values, dtype=float)
    values = values[:, None] if values.ndim == 1 else values
    N, n = values.shape
    if len(values) <= limit:
        return np.repeat(time[:, None], n, axis=1), values
    k = -(-2 * N // limit)  # ceil(2 N / limit): two points per run
    runs = -(-N // k)
    pad = runs * k - N
    # Pad the last run with its own last sample, which changes neither its min nor its max.
    padded = np.concatenate([values, np.repeat(values[-1:], pad, axis=0)]).reshape(runs, k, n)
    start = (np.arange(runs) * k)[:, None]
    lo = np.minimum(start + padded.argmin(axis=1), N - 1)
    hi = np.minimum(start + padded.argmax(axis=1), N - 1)
    index = np.sort(np.stack([lo, hi], axis=1), axis=1).reshape(2 * runs, n)
    return time[index], np.take_along_axis(values, index, axis=0)


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes, rendered by Agg and reduced to a palette."""
    from PIL import Image  # matplotlib's own dependency for writing images

    FigureCanvasAgg(fig)
    raw = io.BytesIO()
    fig.savefig(raw, format="png", dpi=DPI, metadata={"Software": None})
    raw.seek(0)
    with Image.open(raw) as image:
        small = image.convert("RGB").quantize(colors=_COLOURS, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    small.save(out, format="PNG")
    return out.getvalue()


def trajectory_figure(recordings: Mapping[str, Recording]) -> Figure:
    """One panel per recording: the positions of every coordinate over time, as recorded
    (basis or actuator coordinates, SI units)."""
    k = len(recordings)
    fig = Figure(figsize=(9.0, 1.9 * k + 0.7), layout="constrained")
    axes = fig.subplots(k, 1, squeeze=False)[:, 0]
    for ax, (label, rec) in zip(axes, recordings.items(), strict=True):
        t, q = envelope(rec.time, rec.positions)
        for j, name in enumerate(rec.names):
            ax.plot(t[:, j], q[:, j], lw=0.9, label=name)
        units = sorted(set(rec.units["positions"]))
        ax.set_ylabel(f"position [{', '.join(units)}]", fontsize=8)
        ax.set_title(f"{label} ({rec.space} coordinates)", fontsize=9, loc="left")
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    axes[-1].set_xlabel("time [s]", fontsize=8)
    return fig


def output_figure(validation: Validation, title: str) -> Figure:
    """One panel per output: measured and predicted over time, with the channel's RMSE and
    relative error."""
    n = validation.measured.shape[1]
    fig = Figure(figsize=(9.0, 1.3 * n + 0.8), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    tm, ym = envelope(validation.time, validation.measured)
    tp, yp = envelope(validation.time, validation.predicted)
    for j, ax in enumerate(axes):
        ax.plot(tm[:, j], ym[:, j], color="0.6", lw=1.0, label="measured")
        ax.plot(tp[:, j], yp[:, j], color="tab:red", lw=0.8, label="predicted")
        ax.set_ylabel(f"{validation.names[j]}\n[{validation.units[j]}]", fontsize=8)
        ax.set_title(f"RMSE {validation.rmse[j]:.3g} {validation.units[j]}, "
                     f"{validation.relative_error[j]:.2g} %", loc="right", fontsize=7, pad=2)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=8)
    axes[0].legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.0), frameon=False,
                   ncol=2, borderaxespad=0.0)
    axes[-1].set_xlabel("time [s]", fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig
