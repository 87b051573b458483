"""Identification does not depend on trajectories nor on the simulated robot: no module of
``dynid.identify`` imports ``dynid.trajectories`` or ``dynid.hardware``, at the top or inside a
function, and importing every one of them loads neither."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dynid"
FORBIDDEN = ("dynid.trajectories", "dynid.hardware")


def _imported(source: str, module: str) -> set[str]:
    """Absolute names of the modules (and of the names imported from them) that ``source``,
    the text of module ``module`` (dotted), imports anywhere, relative imports resolved."""
    package = module.split(".")
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = ".".join(package[:len(package) - node.level])
                base = f"{parent}.{base}" if base else parent
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(
                node.func, "id", None)) in ("import_module", "__import__") and node.args
              and isinstance(node.args[0], ast.Constant)):
            out.add(str(node.args[0].value))
    return out


def _forbidden(names: set[str]) -> list[str]:
    return sorted(n for n in names if n in FORBIDDEN or n.startswith(
        tuple(f + "." for f in FORBIDDEN)))


def test_the_import_scan_sees_relative_absolute_and_late_imports():
    """The scan itself: every way of importing the forbidden packages is caught."""
    module = "dynid.identify.example"
    for bad in ("from ..trajectories.spaces import basis_motion",
                "from .. import hardware",
                "import dynid.hardware.simulate",
                "def f():\n    from ..hardware import Plant",
                "import importlib\nimportlib.import_module('dynid.trajectories')"):
        assert _forbidden(_imported(bad, module)), bad
    assert not _forbidden(_imported("from ..models import Robot\nfrom . import filters",
                                    module))


@pytest.mark.parametrize("path", sorted((PACKAGE / "identify").rglob("*.py")),
                         ids=lambda p: p.name)
def test_no_identify_module_imports_trajectories_or_hardware(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    if parts[-1] == "__init__":
        module += ".__init__"  # relative imports of a package resolve against itself
    assert _forbidden(_imported(path.read_text(), module)) == []


def test_importing_every_identify_module_loads_neither():
    """In a fresh interpreter, with the ``dynid`` package registered without running its
    ``__init__`` (which imports trajectories for the public API), every module of
    ``dynid.identify`` is imported; no ``dynid.trajectories`` or ``dynid.hardware`` module may
    be loaded then."""
    code = f"""
import importlib, pkgutil, sys, types
pkg = types.ModuleType("dynid")
pkg.__path__ = [{str(PACKAGE)!r}]
sys.modules["dynid"] = pkg
import dynid.identify
for info in pkgutil.walk_packages(dynid.identify.__path__, "dynid.identify."):
    importlib.import_module(info.name)
loaded = sorted(m for m in sys.modules if m.startswith("dynid."))
assert "dynid.identify.estimators" in loaded and "dynid.models" in loaded, loaded
print("\\n".join(loaded))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert _forbidden(set(loaded)) == []
