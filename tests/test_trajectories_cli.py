"""``dynid design``: a trajectory file with every setting, a plot, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.cli import main
from dynid.trajectories import check
from dynid.trajectories.io import read_trajectory_file

QUICK = ["--starts", "1", "--max-iterations", "5", "--samples", "16", "--quiet"]


def test_design_command_writes_trajectory_settings_and_plot(tmp_path, capsys, panda):
    out, png = tmp_path / "traj.json", tmp_path / "traj.png"
    code = main(["design", "panda", "-o", str(out), "--plot", str(png), "--fixed", "joint7=0.5",
                 "--cartesian", "flange:-inf,-inf,0.2:inf,inf,inf", "--noise",
                 "1,1,1,1,0.5,0.5,0.5", "--seed", "2", *QUICK])
    assert code == 0
    printed = capsys.readouterr().out
    # joint 7 held: the parameters only its rotation excites drop out of the criterion
    assert "rank 59 of 59" in printed and "3 of the robot's 62 base parameters" in printed
    assert str(out) in printed
    f = read_trajectory_file(out)
    assert f.robot == "panda" and f.settings.fixed == {"joint7": 0.5}
    assert f.settings.cartesian[0].lower[2] == 0.2 and f.settings.seed == 2
    assert f.settings.noise == (1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5)
    assert f.summary["rank"] == 59 and f.summary["margin"] >= 0
    np.testing.assert_allclose(f.trajectory.evaluate(np.linspace(0, 10, 7))[0][:, 6], 0.5)
    assert check(f.trajectory, panda).feasible
    assert png.stat().st_size > 10_000

    # An earlier experiment to complete, read back from its file.
    second = tmp_path / "second.json"
    assert main(["design", "panda", "-o", str(second), "--previous", str(out),
                 "--criterion", "d-optimal", *QUICK]) == 0
    # ... also with a coordinate held still (fewer base parameters to complete).
    assert main(["design", "panda", "-o", str(second), "--previous", str(out),
                 "--fixed", "joint7=0.5", "--criterion", "d-optimal", *QUICK]) == 0
    assert read_trajectory_file(second).summary["base_rank"] == 59


def _usage_error(argv, capsys) -> str:
    """The message of an option argparse refuses (exit status 2)."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


def test_design_command_reports_bad_input(tmp_path, capsys):
    out = str(tmp_path / "t.json")
    assert "--harmonics: expected a whole number from 1 to 50, found '0'" in _usage_error(
        ["design", "panda", "-o", out, "--harmonics", "0", *QUICK], capsys)
    assert "--frequency: expected a finite number in (0, 1000], found -1" in _usage_error(
        ["design", "panda", "-o", out, "--frequency", "-1", *QUICK], capsys)
    assert main(["design", "panda", "-o", out, "--fixed", "joint4", *QUICK]) == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err
    assert main(["design", "panda", "-o", out, "--cartesian", "flange:0,0", *QUICK]) == 2
    assert "expected FRAME:XL,YL,ZL:XU,YU,ZU" in capsys.readouterr().err
