"""The demo pipeline and the command line."""

from __future__ import annotations

from dynid.cli import main
from dynid.demo import run_demo


def test_demo_pipeline_is_honest_and_reaches_the_noise_floor():
    """Design, closed-loop simulation, identification and validation on the Panda: the
    reported uncertainty matches the actual errors, every link is physical, and the identified
    models predict an unseen trajectory as well as the true parameters do."""
    lines = []
    out = run_demo("panda", periods=1, quick=True, echo=lines.append)
    assert out["rank"] == 62
    assert 0.6 < out["z_rms"] < 1.6
    assert out["lmi_min"] >= 1e-6 - 1e-9
    floor = out["validation_true"]
    assert out["validation_least_squares"] < 1.15 * floor
    assert out["validation_consistent"] < 1.15 * floor
    assert out["validation_prior"] > 1.3 * floor


def test_cli_info_and_errors(capsys):
    assert main(["info", "panda", "--base"]) == 0
    out = capsys.readouterr().out
    assert "link3.mcx" in out and "62 base parameters" in out
    assert main(["info", "nosuchrobot"]) == 2
    assert "embedded robots are" in capsys.readouterr().err
    assert main(["robots"]) == 0
    assert "panda" in capsys.readouterr().out
