"""The notebooks in ``notebooks/``: jupytext percent scripts that run headless, stored without
outputs.

Each ``notebooks/*.py`` runs as its own Python process with ``MPLBACKEND=Agg``, in a temporary
working directory, this checkout's ``dynid`` first on the path, and a time limit; it passes
when it exits with status 0 (the notebooks assert what their text states). A notebook that
needs shared real-robot datasets says so in its header, a root-level entry of the commented
YAML block (which Jupyter shows as a raw cell above the first one)::

    # ---
    # requires-dataset: kuka_lwr4_flobaroid      (or a list: [kuka_lwr4_flobaroid, ...])
    # jupyter:
    #   ...
    # ---

It is skipped when one is absent, and finds the datasets folder in the environment variable
``DYNID_DATASETS``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import DATASETS, dataset

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
#: Seconds a notebook may run (each is meant to take well under half a minute).
TIMEOUT = 240
_MARKER = re.compile(r"^# %%(?P<kind> \[markdown\])?$")


def header(text: str) -> dict:
    """The jupytext YAML header of a percent script: the commented block between the first
    two ``# ---`` lines, which must open the file."""
    lines = text.splitlines()
    if not lines or lines[0] != "# ---" or "# ---" not in lines[1:]:
        raise ValueError("expected the file to open with a jupytext header: '# ---', the "
                         "commented YAML metadata, '# ---'")
    end = lines.index("# ---", 1)
    body = []
    for number, line in enumerate(lines[1:end], start=2):
        if not (line == "#" or line.startswith("# ")):
            raise ValueError(f"line {number}: header lines are comments, found {line!r}")
        body.append(line[2:])
    meta = yaml.safe_load("\n".join(body))
    if not isinstance(meta, dict):
        raise ValueError(f"header: expected YAML entries, found {meta!r}")
    return meta


def requirements(text: str) -> list[str]:
    """Datasets a notebook declares in its header (``requires-dataset``: a name or a list)."""
    value = header(text).get("requires-dataset", [])
    names = [value] if isinstance(value, str) else value
    if not (isinstance(names, list) and all(isinstance(n, str) and n for n in names)):
        raise ValueError(f"requires-dataset: expected a dataset name or a list of names, "
                         f"found {value!r}")
    return names


def cells(text: str) -> list[tuple[str, list[str]]]:
    """Check a jupytext percent script and return its cells as (kind, lines).

    The header declares the percent format of a Python script; after it come only cells,
    each opened by ``# %%`` (code) or ``# %% [markdown]``; markdown lines are comments.
    """
    meta = header(text).get("jupyter", {})
    form = meta.get("jupytext", {}).get("text_representation", {})
    if form.get("format_name") != "percent" or form.get("extension") != ".py":
        raise ValueError(f"header: expected jupytext text_representation with extension "
                         f"'.py' and format_name 'percent', found {form}")
    if meta.get("kernelspec", {}).get("language") != "python":
        raise ValueError("header: expected a kernelspec with language 'python'")
    lines = text.splitlines()
    start = lines.index("# ---", 1) + 1
    found: list[tuple[str, list[str]]] = []
    for number, line in enumerate(lines[start:], start=start + 1):
        match = _MARKER.match(line)
        if match:
            found.append(("markdown" if match["kind"] else "code", []))
        elif not found:
            if line.strip():
                raise ValueError(f"line {number}: expected a cell marker '# %%' after the "
                                 f"header, found {line!r}")
        else:
            if found[-1][0] == "markdown" and line.strip() and not line.startswith("#"):
                raise ValueError(f"line {number}: markdown cells hold comment lines only, "
                                 f"found {line!r}")
            found[-1][1].append(line)
    if not found:
        raise ValueError("no cells: expected '# %%' and '# %% [markdown]' markers")
    for kind, body in found:
        if not any(line.strip() for line in body):
            raise ValueError(f"an empty {kind} cell")
    return found


def stored_outputs(path: Path) -> int:
    """Outputs and execution counts stored in a notebook file (``.ipynb``)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum(len(c.get("outputs", [])) + (c.get("execution_count") is not None)
               for c in nb.get("cells", []) if c.get("cell_type") == "code")


def test_the_notebooks_are_found():
    assert {p.stem for p in NOTEBOOKS} >= {"ariane_actuation", "dvrk_psm"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_a_percent_script_without_outputs(path):
    text = path.read_text(encoding="utf-8")
    kinds = [kind for kind, _ in cells(text)]
    assert kinds[0] == "markdown" and "code" in kinds
    compile(text, str(path), "exec")
    try:
        import jupytext
    except ImportError:
        pass
    else:
        nb = jupytext.reads(text, fmt="py:percent")
        assert [c.cell_type for c in nb.cells if c.cell_type != "raw"] == kinds
        assert all(not c.get("outputs") for c in nb.cells)
    paired = path.with_suffix(".ipynb")
    assert not paired.exists() or stored_outputs(paired) == 0, f"{paired.name} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path):
    for name in requirements(path.read_text(encoding="utf-8")):
        dataset(name)
    env = dict(os.environ, MPLBACKEND="Agg", DYNID_DATASETS=str(DATASETS),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")])))
    try:
        run = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{path.name} ran longer than {TIMEOUT} s")
    assert run.returncode == 0, (f"{path.name} exited with {run.returncode}:\n"
                                 f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}")


# The checks themselves, on small made-up scripts ------------------------------------------

HEADER = """# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     language: python
#     name: python3
# ---
"""


def test_requirements_are_read_from_the_header():
    assert requirements(HEADER) == []
    one = HEADER.replace("# jupyter:", "# requires-dataset: kuka_lwr4_flobaroid\n# jupyter:")
    assert requirements(one) == ["kuka_lwr4_flobaroid"]
    two = HEADER.replace("# jupyter:", "# requires-dataset: [a, b]\n# jupyter:")
    assert requirements(two) == ["a", "b"]
    with pytest.raises(ValueError, match="requires-dataset: expected a dataset name"):
        requirements(HEADER.replace("# jupyter:", "# requires-dataset: 3\n# jupyter:"))


def test_a_well_formed_script_passes():
    text = HEADER + "\n# %% [markdown]\n# # Title\n\n# %%\nx = 1\n"
    assert [kind for kind, _ in cells(text)] == ["markdown", "code"]


@pytest.mark.parametrize("text, message", [
    ("# %%\nx = 1\n", "open with a jupytext header"),
    (HEADER.replace("percent", "light") + "# %%\nx = 1\n", "format_name 'percent'"),
    (HEADER + "x = 1\n# %%\ny = 2\n", "expected a cell marker"),
    (HEADER + "# %% [markdown]\nx = 1\n", "markdown cells hold comment lines only"),
    (HEADER + "# %%\n\n# %%\nx = 1\n", "an empty code cell"),
    (HEADER + "\n", "no cells"),
])
def test_malformed_scripts_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        cells(text)


def test_stored_outputs_are_counted(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": "x"},
                    {"cell_type": "code", "source": "1", "outputs": [], "execution_count": None},
                    {"cell_type": "code", "source": "2", "execution_count": 3,
                     "outputs": [{"output_type": "execute_result"}]}]}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb))
    assert stored_outputs(path) == 2
