"""Named model parameters.

A :class:`ParameterSet` names every parameter of a model (``link3.mcx``, ``joint2.fv``,
``motor2.Jm``) with its unit, group, prior value and bounds. Estimators, reports and
exports read it; nothing else indexes parameters by bare position.

Link parameters follow Pinocchio's order ``[m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``:
mass, first moment of mass and inertia tensor about the joint-frame origin, in the joint frame.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError

__all__ = ["GROUPS", "LINK_KINDS", "Parameter", "ParameterSet", "link_parameters"]

#: Parameter groups, in the order blocks appear in a model.
GROUPS = ("link", "friction", "actuator", "spring", "cable", "gain")

#: Kinds of the ten inertial parameters of one link, in Pinocchio's order.
LINK_KINDS = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
_LINK_UNITS = ("kg",) + ("kg·m",) * 3 + ("kg·m²",) * 6


@dataclass(frozen=True)
class Parameter:
    """One model parameter.

    Attributes
    ----------
    owner, kind
        What the parameter belongs to and which quantity it is; ``name`` is ``owner.kind``.
    unit
        SI unit, e.g. ``"kg·m²"`` or ``"N·m·s/rad"``.
    group
        One of :data:`GROUPS`.
    prior
        Prior value (from the description, a datasheet or a CAD model).
    lower, upper
        Bounds a physically consistent estimate must respect (may be infinite).
    """

    owner: str
    kind: str
    unit: str
    group: str
    prior: float = 0.0
    lower: float = -np.inf
    upper: float = np.inf

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ModelError(f"parameter {self.name}: group must be one of {GROUPS}, "
                             f"found {self.group!r}")
        if not self.lower <= self.upper:
            raise ModelError(f"parameter {self.name}: lower bound {self.lower} exceeds upper "
                             f"bound {self.upper}")

    @property
    def name(self) -> str:
        return f"{self.owner}.{self.kind}"


class ParameterSet(Sequence[Parameter]):
    """An ordered, immutable collection of uniquely named parameters."""

    def __init__(self, parameters: Iterable[Parameter]):
        self._params = tuple(parameters)
        self._index: dict[str, int] = {}
        for i, p in enumerate(self._params):
            if p.name in self._index:
                raise ModelError(f"parameter name {p.name!r} appears twice; "
                                 "owners must be unique within a model")
            self._index[p.name] = i

    # Sequence protocol --------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._params)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._params)

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return self._params[self.index(key)]
        if isinstance(key, slice):
            return ParameterSet(self._params[key])
        return self._params[key]

    def __contains__(self, key: object) -> bool:
        return key in self._index if isinstance(key, str) else key in self._params

    def __add__(self, other: ParameterSet) -> ParameterSet:
        return ParameterSet(self._params + tuple(other))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ParameterSet) and self._params == other._params

    def __hash__(self) -> int:
        return hash(self._params)

    def __repr__(self) -> str:
        groups = {g: sum(p.group == g for p in self) for g in GROUPS}
        desc = ", ".join(f"{n} {g}" for g, n in groups.items() if n)
        return f"ParameterSet({len(self)} parameters: {desc})"

    # Lookup -------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self._params)

    def index(self, name: str) -> int:  # type: ignore[override]
        """Position of the parameter called ``name``."""
        try:
            return self._index[name]
        except KeyError:
            import difflib

            close = difflib.get_close_matches(name, self._index, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ModelError(f"no parameter named {name!r}{hint}") from None

    def indices(self, names: Iterable[str]) -> np.ndarray:
        return np.array([self.index(n) for n in names], dtype=int)

    def where(self, *, group: str | None = None, owner: str | None = None,
              kind: str | None = None) -> np.ndarray:
        """Indices of the parameters matching every given attribute."""
        return np.array([i for i, p in enumerate(self._params)
                         if (group is None or p.group == group)
                         and (owner is None or p.owner == owner)
                         and (kind is None or p.kind == kind)], dtype=int)

    @property
    def links(self) -> tuple[str, ...]:
        """Owners of link blocks, in order; each has the ten :data:`LINK_KINDS`."""
        return tuple(p.owner for p in self._params if p.group == "link" and p.kind == "m")

    def link_block(self, link: str) -> np.ndarray:
        """Indices of the ten parameters of ``link`` in :data:`LINK_KINDS` order."""
        return self.indices(f"{link}.{k}" for k in LINK_KINDS)

    # Values -------------------------------------------------------------------------
    @property
    def priors(self) -> np.ndarray:
        return np.array([p.prior for p in self._params])

    @property
    def lower(self) -> np.ndarray:
        return np.array([p.lower for p in self._params])

    @property
    def upper(self) -> np.ndarray:
        return np.array([p.upper for p in self._params])

    def vector(self, values: Mapping[str, float], *, default: str = "prior") -> np.ndarray:
        """Vector of parameter values from a name → value mapping.

        Parameters missing from ``values`` take their prior (``default="prior"``) or raise
        (``default="error"``). Unknown names raise.
        """
        if default not in ("prior", "error"):
            raise ModelError(f"default: expected 'prior' or 'error', found {default!r}")
        for name in values:
            self.index(name)
        missing = [n for n in self.names if n not in values]
        if missing and default == "error":
            raise ModelError(f"values missing for {len(missing)} parameters: {missing[:5]}...")
        return np.array([float(values.get(p.name, p.prior)) for p in self._params])

    def as_dict(self, values: np.ndarray) -> dict[str, float]:
        """Name → value mapping of a parameter vector."""
        values = np.asarray(values, dtype=float)
        if values.shape != (len(self),):
            raise ModelError(f"values: expected shape ({len(self)},), found {values.shape}")
        return dict(zip(self.names, values.tolist(), strict=True))


def link_parameters(link: str, values: np.ndarray | None = None) -> list[Parameter]:
    """The ten inertial parameters of one link, with priors ``values`` (Pinocchio order)."""
    values = np.zeros(10) if values is None else np.asarray(values, dtype=float)
    return [
        Parameter(link, kind, unit, "link", float(val), lower=0.0 if kind == "m" else -np.inf)
        for kind, unit, val in zip(LINK_KINDS, _LINK_UNITS, values, strict=True)
    ]
