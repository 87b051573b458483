"""Public real-robot data sets: their robots, their recordings and their published results.

Two data sets measured on physical robots and published with reference identifications are
described here, so that an identification can be checked against numbers obtained by others.
Neither is shipped with dynid: give the folder that holds one (its layout is the one its
README describes).

* **Stäubli TX40** (FIGAROH's example data): 9 s at 5 kHz of motor encoder positions and motor
  torques, gear ratios ``N = [32, 32, 45, −48, 45, 32]``, wrist joints 5–6 coupled (motor 6
  turns ``N6 (q5 + q6)``). Published: 60 base parameters identified by OLS and WLS with
  their relative standard deviations (``reference/TX40_bp_5.csv``).
* **KUKA LWR4+** (FloBaRoID's measurements): three 25 s runs at 200 Hz of positions,
  velocities, accelerations (derived and low-passed when recorded) and link-side joint
  torques. Published: a physically consistent fit on runs 2 + 3 predicts run 1 with a relative
  error of 2.81 %.

Example::

    from dynid import datasets
    from dynid.identify import IdentificationData, WLS
    root = "datasets/staubli_tx40_figaroh"
    robot = datasets.tx40_robot(root)
    table = datasets.figaroh_table(root, robot)
    data = IdentificationData(robot, datasets.tx40_recording(root, robot), base=table.base,
                              processing=datasets.TX40_PROCESSING)
    deviation = table.deviations(WLS().fit(data).result_.base_params, "wls")   # % per entry
    print(deviation[table.well_determined("wls")].max())
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import DataError
from .identify import ColumnMap, Processing, Recording, read_csv, read_npz
from .models import BaseParameters, Robot, base_parameters, robot_from_mapping

__all__ = ["TX40_DEADZONE", "TX40_PROCESSING", "TX40_RATIOS", "TX40_ZERO", "FigarohTable",
           "figaroh_table", "kuka_recordings", "kuka_robot", "tx40_recording", "tx40_robot"]

TX40_RATIOS = (32.0, 32.0, 45.0, -48.0, 45.0, 32.0)
"""Gear ratios of the TX40's six motors (the data set's README)."""

#: Priors of the data set's identification settings (``config/TX40_config.yaml``): joint-side
#: viscous and Coulomb friction, offset and actuator inertia per joint, and motor 6's terms
#: seen at the joints (Iam6, fvm6, fsm6).
_TX40_PRIORS = {"fv": (8.05, 5.53, 1.97, 1.11, 1.86, 0.65),
                "fs": (7.14, 8.26, 6.34, 2.48, 3.03, 0.282),
                "Ia": (0.362, 0.362, 0.0988, 0.0313, 0.0468, 0.0105),
                "offset": (0.392, 1.37, 0.326, -0.102, -0.0288, 0.127),
                "Iam6": 0.00964, "fvm6": 0.616, "fsm6": 1.95}

#: Joint-position zero of the MDH URDF against the encoders (the data set's README).
TX40_ZERO = (0.0, -np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0)

#: Dead zone of the data set's settings (``dq_lim_def`` in ``config/TX40_config.yaml``), rad/s
#: per joint: the published identification leaves out each joint's rows below these speeds.
TX40_DEADZONE = (0.05009095, 0.05009095, 0.07504916, 0.0715585, 0.05585054, 0.12217305)

#: The published identification's processing of the TX40 run, as its script does it:
#:
#: * a 4th-order Butterworth low-pass of the positions designed at 25 Hz (the script asks
#:   ``ts·100/2`` of Nyquist), forward and backward; the positions differentiated;
#: * decimation by 100 on the samples 20, 120, 220... of the run: the script drops 20 samples
#:   at each end (its filter's border) before decimating from the first sample left, so
#:   ``skip=20`` puts the decimated samples at the same instants;
#: * its dead zone, :data:`TX40_DEADZONE`, and no separate rest rule (``rest=None``): the run's
#:   final rest is below every joint's dead zone, so its rows are left out joint by joint.
#:
#: ``Processing(cutoff=25.0, decimate=100, derivatives="positions")`` with the automatic dead
#: zone and rests is dynid's own processing of the same run.
TX40_PROCESSING = Processing(cutoff=25.0, decimate=100, derivatives="positions", skip=20,
                             deadzone=TX40_DEADZONE, rest=None)


def _folder(root: str | Path, *files: str) -> Path:
    root = Path(root)
    missing = [f for f in files if not (root / f).is_file()]
    if missing:
        raise DataError(f"{root}: not the data set's folder: missing {', '.join(missing)} "
                        f"(give the folder that holds the data set's README.md)")
    return root


def tx40_robot(root: str | Path) -> Robot:
    """The TX40 from the data set's URDF with its drives: gear ratios, the wrist coupling
    ``q_m6 = N6 (q5 + q6)``, joint-side viscous and Coulomb friction and offset, and a rotor
    inertia on every motor; motor 6 also has motor-side viscous and Coulomb friction, which
    act on ``q̇5 + q̇6``. Output: joint torque. Priors from the data set's settings (actuator
    inertia ``Ia`` as ``N² Jm``)."""
    root = _folder(root, "urdf/tx40_mdh_modified.urdf")
    n_ = np.array(TX40_RATIOS)
    coupling = np.eye(6)
    coupling[5, 4] = n_[5] / n_[4]
    p = _TX40_PRIORS
    joints = {}
    for j in range(6):
        inertia = p["Iam6"] if j == 5 else p["Ia"][j] - (p["Iam6"] if j == 4 else 0.0)
        actuator = {"name": f"motor{j + 1}", "ratio": float(n_[j]),
                    "rotor_inertia": inertia / n_[j] ** 2}
        if j == 5:
            actuator.update(viscous=p["fvm6"] / n_[j] ** 2, coulomb=p["fsm6"] / abs(n_[j]))
        viscous = p["fv"][j] - (p["fvm6"] if j in (4, 5) else 0.0)  # FIGAROH's fv5, fv6 hold it
        joints[f"joint_{j + 1}"] = {
            "friction": {"viscous": viscous, "coulomb": p["fs"][j], "offset": p["offset"][j]},
            "actuator": actuator}
    return robot_from_mapping({"name": "staubli_tx40", "output": "joint_torque",
                               "kinematics": {"urdf": str(root / "urdf" /
                                                          "tx40_mdh_modified.urdf")},
                               "transmission": {"coupling": coupling.tolist()},
                               "joints": joints})


def tx40_recording(root: str | Path, robot: Robot) -> Recording:
    """The excitation run: joint positions from the motor encoders (``q = Rq⁻¹ q_m``, then the
    MDH zero :data:`TX40_ZERO`) and joint torques from the motor torques (``τ = Rt τ_m``), at
    5 kHz (the files have no time column)."""
    root = _folder(root, "data/pos_read_data.csv", "data/curr_data.csv")
    jacobian = robot.transmission.jacobian(np.zeros((1, robot.n)))[0]
    return read_csv({"positions": root / "data" / "pos_read_data.csv",
                     "output": root / "data" / "curr_data.csv"}, rate=5000.0,
                    column_map=ColumnMap(jacobian, joint_offset=TX40_ZERO), robot=robot,
                    output_kind="joint_torque")


def kuka_robot(root: str | Path) -> Robot:
    """The KUKA LWR4+ from the data set's (CAD) URDF with viscous and Coulomb friction and an
    offset on each joint (zero priors)."""
    root = _folder(root, "urdf/kuka_lwr4.urdf")
    return robot_from_mapping({
        "name": "kuka_lwr4", "kinematics": {"urdf": str(root / "urdf" / "kuka_lwr4.urdf")},
        "defaults": {"friction": {"viscous": 0.0, "coulomb": 0.0, "offset": 0.0}}})


def kuka_recordings(root: str | Path, *, skip: int = 500) -> dict:
    """Measurements 1–3 by number, without their first ``skip`` samples (FloBaRoID skips 500).
    Their velocities and accelerations are the recorded (derived, low-passed) ones. The logger
    stamped uniformly sampled data late (5 ms steps with up to 1.6 ms of jitter), so the stamps
    are replaced by their least-squares line (``timestamps="uniform"``)."""
    files = [f"data/measurements_{k}.npz" for k in (1, 2, 3)]
    root = _folder(root, *files)
    return {k: read_npz(root / f, keys={"time": "times", "output": "torques"},
                        output_kind="joint_torque", timestamps="uniform").skip(skip)
            for k, f in zip((1, 2, 3), files, strict=True)}


# Published base parameters --------------------------------------------------------------
_SYMBOL = re.compile(r"(Ixx|Ixy|Ixz|Iyy|Iyz|Izz|mx|my|mz|m|Iam|fvm|fsm|Ia|fv|fs|off)([1-6])")
_LINK = {"mx": "mcx", "my": "mcy", "mz": "mcz"}


def _tx40_symbol(symbol: str, robot: Robot) -> dict[str, float]:
    """A FIGAROH parameter of the TX40 as a combination of this model's parameters. FIGAROH
    puts the actuator inertia ``Ia_j`` on ``q̈_j`` of row ``j`` and motor 6's terms as coupling
    columns ``[q̈6, q̇6]`` on row 5 and ``[q̈5, q̇5]`` on row 6, with ``sign(q̇5 + q̇6)`` on both;
    motor 6's rotor here acts on ``N6² (q̈5 + q̈6)`` on both rows, so FIGAROH's ``Ia5`` is
    ``N5² Jm5 + N6² Jm6`` (and likewise ``fv5``, ``fv6`` hold ``N6² fvm6``)."""
    match = _SYMBOL.fullmatch(symbol)
    if match is None:
        raise DataError(f"published table: unknown parameter symbol {symbol!r}")
    kind, k = match.group(1), int(match.group(2))
    n6 = TX40_RATIOS[5]
    if kind in ("Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz", "mx", "my", "mz", "m"):
        return {f"link_{k}.{_LINK.get(kind, kind)}": 1.0}
    if kind == "Ia":
        terms = {f"motor{k}.Jm": TX40_RATIOS[k - 1] ** 2}
        return terms | ({"motor6.Jm": n6 ** 2} if k == 5 else {})
    if kind == "fv":
        return {f"joint_{k}.fv": 1.0} | ({"motor6.fvm": n6 ** 2} if k in (5, 6) else {})
    if kind in ("fs", "off"):
        return {f"joint_{k}.{'fc' if kind == 'fs' else 'fo'}": 1.0}
    if k != 6:
        raise DataError(f"published table: {symbol!r}: only motor 6 has coupling terms")
    return {"Iam": {"motor6.Jm": n6 ** 2}, "fvm": {"motor6.fvm": n6 ** 2},
            "fsm": {"motor6.fcm": abs(n6)}}[kind]


def _expression(text: str, robot: Robot) -> np.ndarray:
    """A published regrouping such as ``Izz1 + 1.0*Ia1 - 0.05*m3`` as a row over the standard
    parameters."""
    row = np.zeros(len(robot.parameters))
    body = text.replace(" ", "").replace("-", "+-")
    for part in filter(None, body.split("+")):
        sign = -1.0 if part.startswith("-") else 1.0
        factor, _, symbol = part.lstrip("-").rpartition("*")
        try:
            scale = sign * (float(factor) if factor else 1.0)
        except ValueError:
            raise DataError(f"published table: cannot read the term {part!r} of "
                            f"{text!r}") from None
        for name, coefficient in _tx40_symbol(symbol, robot).items():
            row[robot.parameters.index(name)] += scale * coefficient
    return row


@dataclass(frozen=True)
class FigarohTable:
    """FIGAROH's published TX40 base parameters, made comparable with this model's.

    Attributes
    ----------
    names
        The published regroupings (``"Izz1 + 1.0*Ia1 + …"``).
    values, relative_std
        Per method (``"ols"``, ``"wls"``): published values and relative standard deviations
        in %.
    base
        This model's base parameters.
    functionals
        ``F`` (60, b): the published regroupings as functions of this model's base parameters,
        ``published ≈ F θ_b``. Every regrouping is identifiable in this model (checked when the
        table is built), so ``F θ_b`` does not depend on how the base is chosen.
    """

    names: tuple[str, ...]
    values: dict
    relative_std: dict
    base: BaseParameters
    functionals: np.ndarray

    def deviations(self, base_params: np.ndarray, method: str) -> np.ndarray:
        """Relative deviation in % of ``F θ_b`` from the published values of ``method``."""
        got = self.functionals @ np.asarray(base_params, float)
        return 100 * np.abs(got - self.values[method]) / np.abs(self.values[method])

    def well_determined(self, method: str, max_std: float = 10.0) -> np.ndarray:
        """Mask of the regroupings published with a relative standard deviation below
        ``max_std`` %."""
        return self.relative_std[method] < max_std

    def is_drive_term(self) -> np.ndarray:
        """Mask of the friction and actuator-inertia regroupings (fv, fs, Ia, Iam6, fvm6,
        fsm6)."""
        return np.array([re.fullmatch(r"(Ia|Iam|fv|fvm|fs|fsm)\d", name) is not None
                         for name in self.names])


def figaroh_table(root: str | Path, robot: Robot, base: BaseParameters | None = None, *,
                  tolerance: float = 1e-8) -> FigarohTable:
    """Read ``reference/TX40_bp_5.csv`` and express each published regrouping through this
    model's base parameters (``robot`` from :func:`tx40_robot`). Raises :class:`DataError`
    when a regrouping is not identifiable here (the models differ)."""
    path = _folder(root, "reference/TX40_bp_5.csv") / "reference" / "TX40_bp_5.csv"
    base = base_parameters(robot) if base is None else base
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    if not rows or any(len(r) != 5 for r in rows):
        raise DataError(f"{path}: expected 5 columns per line (name, OLS value, OLS σ %, "
                        f"WLS value, WLS σ %)")
    E = np.array([_expression(r[0], robot) for r in rows])
    B = base.matrix
    F = np.linalg.lstsq(B.T, E.T, rcond=None)[0].T
    miss = np.abs(E - F @ B).max(axis=1) / np.abs(E).max(axis=1)
    if miss.max() > tolerance:
        worst = int(np.argmax(miss))
        raise DataError(f"{path}: the regrouping {rows[worst][0]!r} is not identifiable in "
                        f"this model (off by {miss[worst]:.2g}); the models differ")
    column = {m: np.array([float(r[i]) for r in rows]) for m, i in (("ols", 1), ("wls", 3))}
    std = {m: np.array([float(r[i]) for r in rows]) for m, i in (("ols", 2), ("wls", 4))}
    return FigarohTable(tuple(r[0] for r in rows), column, std, base, F)
