"""The demo's main job and the command line; the honesty of the uncertainty on the Panda's
closed-loop simulation over 50 noise seeds."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import pytest

import dynid
from dynid import DynidWarning
from dynid.cli import main
from dynid.demo import run_demo, true_parameters
from dynid.errors import DataError
from dynid.export import load_parameters
from dynid.hardware import SensorNoise, simulate, smooth_coulomb
from dynid.identify import OLS, WLS, IdentificationData
from dynid.models import Regressor, base_parameters, load_robot
from dynid.trajectories import DesignSettings, basis_motion, design_excitation


def test_the_demo_captures_identifies_validates_and_writes_every_file(tmp_path):
    """The main job, shortened: on the Ariane arm, captured over the virtual bus, the model
    with the actuator terms predicts an unseen trajectory near the true parameters' noise
    floor, the one without them does not, and every file is written and reads back."""
    lines = []
    out = run_demo("ariane", output_dir=tmp_path / "out", periods=2,
                   progress=False, echo=lines.append)
    v = out.validation
    # Within 1.5 points of the noise floor (velocities differenced from 24-increment hall
    # steps leave an error the output noise does not explain).
    assert v["with actuator models"] < v["true"] + 1.5
    assert v["consistent"] < v["true"] + 1.5
    assert v["without actuator models"] > 3 * v["with actuator models"]
    # The identified model removes most of the prior's error beyond the noise floor (a
    # ratio of the excesses: the floor itself moves with the designed trajectory).
    assert v["prior"] - v["true"] > 3 * (v["with actuator models"] - v["true"])
    # The σ are honest within a factor of about 3: below 1 where the residual is blue (the
    # differenced hall steps' noise lies near the top of the band the decimation keeps, far
    # from the motion; the whiteness test then reports the σ about 2–3 times too large).
    assert 0.3 < out.z_rms < 2.5
    for label, path in out.files.items():
        assert path.is_file() and path.stat().st_size > 0, label
    back = load_parameters(out.files["parameters"])
    np.testing.assert_array_equal(back.result.params,
                                  dynid.load_result(out.files["result"]).params)
    rec = dynid.read_csv(out.files["recording (validation)"])
    assert rec.space == "actuator" and rec.output_kind == "current"
    assert any("RMS of (estimate − truth)/σ" in line for line in lines)


def test_the_demo_refuses_an_output_folder_it_cannot_write(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(DataError, match="--output-dir"):
        run_demo(output_dir=blocker / "sub", progress=False, echo=lambda line: None)
    assert main(["demo", "--output-dir", str(blocker / "sub")]) == 2
    assert "--output-dir" in capsys.readouterr().err


def _experiment(robot: str = "panda", *, seed: int = 0, periods: int = 2, noise: float = 0.02,
               rate: float = 100.0, quick: bool = False, runs: int = 1,
               echo: Callable[[str], None] = print) -> SimpleNamespace:
    """The Panda tracking a designed excitation in closed loop (the batch simulation),
    ``runs`` noisy training runs of the same excitation."""
    rng = np.random.default_rng(seed)
    model = smooth_coulomb(load_robot(robot), joint=0.02, motor=2.0)
    base = base_parameters(model, seed=seed)
    theta = true_parameters(model, rng)
    echo(f"robot        {model!r}")
    echo(f"base         {base.rank} identifiable combinations of {len(model.parameters)} "
         "parameters")

    settings = DesignSettings(seed=seed, starts=1 if quick else 2,
                              max_iterations=20 if quick else 60, samples=40 if quick else 100)
    t0 = time.perf_counter()
    design = design_excitation(model, settings)
    period = 1.0 / design.trajectory.frequency
    echo(f"excitation   {design.trajectory.harmonics} harmonics at {1 / period:g} Hz; "
         f"condition number {design.condition['range']:.1f} (column-normalized), "
         f"worst limit margin {design.report.margin:.3f}, in {time.perf_counter() - t0:.1f} s")

    t0 = time.perf_counter()
    control = 5 * rate
    t = np.arange(0.0, period, 1.0 / rate)
    clean = Regressor(model).predict(*basis_motion(design.trajectory, model)(t), theta)
    sensors = SensorNoise(position_std=1e-5,
                          output_std=noise * np.sqrt(np.mean(clean**2, axis=0)))
    train = simulate(model, theta, design.trajectory, periods * period, control_rate=control,
                     record_every=5, noise=sensors, seed=seed + 10, runs=runs)
    gains = train.gains
    echo(f"recording    {train.measured[0].time.size} samples at {rate:g} Hz over {periods} "
         f"periods, output noise {noise:.0%} of RMS; drives at {control:g} Hz with velocity "
         f"loops of {gains.modes[0] / (2 * np.pi):.2g}–{gains.modes[1] / (2 * np.pi):.2g} Hz, "
         f"simulated in {time.perf_counter() - t0:.1f} s")
    return SimpleNamespace(model=model, base=base, theta=theta, train=train)



def test_demo_uncertainty_is_honest_over_50_seeds():
    """The Panda's closed-loop experiment with 50 noise seeds: the RMS of (θ̂ − θ)/σ̂ over
    every base parameter and seed is within 0.8–1.25 for least squares and weighted least
    squares, with the default processing chosen for each run; no error is beyond 5 σ (for
    normal errors over 3100 values that happens with probability 2e-3)."""
    exp = _experiment("panda", seed=0, periods=1, quick=True, runs=50, echo=lambda line: None)
    truth = exp.base.to_base(exp.theta)
    z = {"ols": [], "wls": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)  # an occasional coloured residual
        for rec in exp.train.measured:
            data = IdentificationData(exp.model, rec, base=exp.base)
            for est in (OLS(), WLS()):
                est.fit(data)
                z[est.method].append((est.base_params_ - truth) /
                                     np.sqrt(np.diag(est.base_cov_)))
    print("RMS of err/σ over 50 seeds × 62 base parameters: " + ", ".join(
        f"{k} {np.sqrt(np.mean(np.square(v))):.3f}" for k, v in z.items()))
    for errors in z.values():
        assert np.shape(errors) == (50, 62)
        assert 0.8 < np.sqrt(np.mean(np.square(errors))) < 1.25
        assert np.abs(errors).max() < 5


def test_cli_info_and_errors(capsys):
    assert main(["info", "panda", "--base"]) == 0
    out = capsys.readouterr().out
    assert "link3.mcx" in out and "62 base parameters" in out
    assert main(["info", "nosuchrobot"]) == 2
    assert "embedded robots are" in capsys.readouterr().err
    assert main(["robots"]) == 0
    assert "panda" in capsys.readouterr().out
