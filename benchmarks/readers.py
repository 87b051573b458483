"""Reading logs: dynid's readers against bare ``numpy.loadtxt`` on the same files, measured side
by side (best of 3).

* A flattened log: 7 joint positions and 7 torques per sample, one value per line, 50 000
  samples (700 000 values per file).
* The Stäubli TX40 run (``../shared/datasets``): motor positions and motor torques in two CSV
  files, read in one call with the gear and coupling map and the unit checks.

Prints one ``name: value`` line per figure.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from _timing import best_of

from dynid import datasets
from dynid.identify import Flat, read_csv

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def flattened() -> None:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        files = {name: Path(folder) / f"{name}.txt" for name in ("positions", "output")}
        for path in files.values():
            np.savetxt(path, rng.standard_normal(50_000 * 7), fmt="%.6f")
        ours = best_of(lambda: read_csv(files, rate=1000.0, positions=Flat(7),
                                        output=Flat(7), delimiter=None))
        bare = best_of(lambda: [np.loadtxt(p).reshape(-1, 7) for p in files.values()])
    print(f"flattened_50k_samples_read_s: {ours:.3f}")
    print(f"flattened_50k_samples_loadtxt_s: {bare:.3f}")
    print(f"flattened_read_over_loadtxt_time_ratio: {ours / bare:.2f}")


def tx40(root: Path) -> None:
    robot = datasets.tx40_robot(root)
    ours = best_of(lambda: datasets.tx40_recording(root, robot))
    bare = best_of(lambda: [np.loadtxt(root / "data" / f, delimiter=",", skiprows=1)
                            for f in ("pos_read_data.csv", "curr_data.csv")])
    print(f"tx40_recording_read_s: {ours:.3f}")
    print(f"tx40_two_loadtxt_s: {bare:.3f}")
    print(f"tx40_read_over_loadtxt_time_ratio: {ours / bare:.2f}")


def main() -> None:
    flattened()
    root = DATASETS / "staubli_tx40_figaroh"
    if root.is_dir():
        tx40(root)
    else:
        print(f"# tx40: dataset not found in {DATASETS}")


if __name__ == "__main__":
    main()
