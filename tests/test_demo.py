"""The demo pipeline and the command line."""

from __future__ import annotations

import warnings

import numpy as np

from dynid import DynidWarning
from dynid.cli import main
from dynid.demo import experiment, run_demo
from dynid.identify import OLS, WLS, IdentificationData


def test_demo_pipeline_is_honest_and_reaches_the_noise_floor():
    """Design, closed-loop simulation, identification and validation on the Panda: the
    reported uncertainty matches the actual errors, the residual is white, every link is
    physical, and the identified models predict an unseen trajectory as well as the true
    parameters do."""
    lines = []
    out = run_demo("panda", periods=1, quick=True, echo=lines.append)
    assert out["rank"] == 62
    assert 0.8 < out["z_rms"] < 1.25
    assert 0.75 < out["sigma_factor_max"] < 1.33
    assert out["lmi_min"] >= 1e-6 - 1e-9
    floor = out["validation_true"]
    assert out["validation_least_squares"] < 1.15 * floor
    assert out["validation_consistent"] < 1.15 * floor
    assert out["validation_prior"] > 1.3 * floor
    assert any("RMS of err/σ over all 62" in line for line in lines)


def test_demo_uncertainty_is_honest_over_50_seeds():
    """The demo's experiment with 50 noise seeds: the RMS of (θ̂ − θ)/σ̂ over every base
    parameter and seed is within 0.8–1.25 for least squares and weighted least squares, with
    the default processing chosen for each run; no error is beyond 5 σ (for normal errors
    over 3100 values that happens with probability 2e-3)."""
    exp = experiment("panda", seed=0, periods=1, quick=True, runs=50, echo=lambda line: None)
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
