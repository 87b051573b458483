"""Optimizer backends behind one interface, found by name and imported when first used.

==============  ==========================================================  =================
name            backend                                                     needs
==============  ==========================================================  =================
``ipopt``       IPOPT (interior point, limited-memory BFGS) through CasADi  casadi (default)
``slsqp``       SciPy's sequential least squares programming                scipy
``pyoptsparse`` pyOptSparse's optimizers (SLSQP by default)                 pyoptsparse
==============  ==========================================================  =================
"""

from __future__ import annotations

import importlib

from ...errors import SolverError, TrajectoryError
from .base import Optimizer, OptimizerResult, Problem

__all__ = ["OPTIMIZERS", "Optimizer", "OptimizerResult", "Problem", "available_optimizers",
           "get_optimizer"]

#: name → (module, class), imported lazily.
OPTIMIZERS = {
    "ipopt": ("dynid.trajectories.optimizers.ipopt", "IpoptOptimizer"),
    "slsqp": ("dynid.trajectories.optimizers.slsqp", "SlsqpOptimizer"),
    "pyoptsparse": ("dynid.trajectories.optimizers.pyoptsparse", "PyOptSparseOptimizer"),
}


def _class(name: str) -> type[Optimizer]:
    if name not in OPTIMIZERS:
        raise TrajectoryError(f"optimizer: expected one of {tuple(OPTIMIZERS)}, found {name!r}")
    module, cls = OPTIMIZERS[name]
    try:
        return getattr(importlib.import_module(module), cls)
    except ImportError as exc:
        raise SolverError(f"optimizer {name!r} is not available ({exc}); install it or choose "
                          f"one of {available_optimizers()}") from None


def get_optimizer(name: str, *, max_iterations: int = 60, tolerance: float = 1e-6
                  ) -> Optimizer:
    """The optimizer called ``name`` (see the table above) with its settings."""
    return _class(name)(max_iterations=max_iterations, tolerance=tolerance)


def available_optimizers() -> tuple[str, ...]:
    """Names of the backends whose packages can be imported here."""
    out = []
    for name, (module, _) in OPTIMIZERS.items():
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        out.append(name)
    return tuple(out)
