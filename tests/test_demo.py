"""The demo pipeline and the command line."""

from __future__ import annotations

import numpy as np

from dynid.cli import main
from dynid.demo import run_demo
from dynid.identify.system import LinearSystem


def test_demo_recovers_exact_parameters_without_noise():
    out = run_demo("panda", duration=20, rate=50, noise=1e-9, echo=lambda s: None)
    assert out["rank"] == 62
    assert np.max(out["relative_error"]) < 1e-5


def test_demo_with_noise_is_at_the_noise_floor():
    out = run_demo("panda", duration=30, rate=100, noise=0.02, seed=3, echo=lambda s: None)
    assert out["within_3sigma"] > 0.9
    np.testing.assert_allclose(out["rmse_over_noise"], 1.0, atol=0.1)


def test_compressed_system_matches_dense_least_squares():
    rng = np.random.default_rng(0)
    W, y = rng.standard_normal((500, 8)), rng.standard_normal(500)
    system = LinearSystem(8)
    for start in range(0, 500, 37):
        system.add(W[start:start + 37], y[start:start + 37])
    theta, res, *_ = np.linalg.lstsq(W, y, rcond=None)
    np.testing.assert_allclose(system.solve(), theta, rtol=1e-10)
    np.testing.assert_allclose(system.residual_norm2(theta), res[0], rtol=1e-10)
    np.testing.assert_allclose(system.residual_norm2(np.zeros(8)), y @ y, rtol=1e-10)


def test_cli_info_and_errors(capsys):
    assert main(["info", "panda", "--base"]) == 0
    out = capsys.readouterr().out
    assert "link3.mcx" in out and "62 base parameters" in out
    assert main(["info", "nosuchrobot"]) == 2
    assert "embedded robots are" in capsys.readouterr().err
    assert main(["robots"]) == 0
    assert "panda" in capsys.readouterr().out
