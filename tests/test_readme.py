"""The README's examples run as written."""

from __future__ import annotations

from pathlib import Path

import yaml

from dynid.models import robot_from_mapping

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return [part.split("```")[0] for part in README.split(f"```{lang}\n")[1:]]


def test_python_examples_run():
    for block in _blocks("python"):
        exec(compile(block, "README.md", "exec"), {})


def test_robot_file_example_loads():
    (block,) = _blocks("yaml")
    robot = robot_from_mapping(yaml.safe_load(block))
    assert robot.output == "current" and robot.n == 3
    assert robot.tree.joint_types == ("revolute", "revolute", "prismatic")
