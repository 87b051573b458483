"""Which links of a tree carry inertial parameters, and which share one set.

Pinocchio's joint-torque regressor has ten columns per tree link. A model may keep fewer:

* **massless links** carry no parameters: virtual links between joints that only build up a
  multi-degree-of-freedom joint (the slides of a platform joint), fixed at zero. Their columns
  are dropped, not zeroed, so they add nothing to the parameter set, the base parameters or the
  physical-consistency constraints;
* **shared links** are identical links (the legs of a hexapod, each in its own frame) that
  carry one set of ten parameters, named after the group: their columns are summed, since
  ``Σ_j Y_j π = (Σ_j Y_j) π`` when every ``π_j`` is the same ``π``.

:class:`LinkSet` holds, per tree joint, the parameter block its link's columns go to, and
reduces Pinocchio's columns to the model's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._files import excerpt, name_list
from ..errors import ModelError

__all__ = ["LinkSet"]

_EXAMPLE = ("e.g. tree.with_links(massless=['x_slide'], shared={'legs_rod': ['leg1_rod', "
            "'leg2_rod']})")


@dataclass(frozen=True)
class LinkSet:
    """Per tree joint, the parameter block of the link it carries.

    Attributes
    ----------
    owners
        Per tree joint, the owner of its link's ten parameters: the link's own name, the name
        of the group it shares, or ``None`` for a massless link.
    names
        The parameter blocks, in the order of their first link in the tree.
    """

    owners: tuple[str | None, ...]
    names: tuple[str, ...]

    @classmethod
    def build(cls, link_names: Sequence[str], massless: Sequence[str] = (),
              shared: Mapping[str, Sequence[str]] | None = None) -> LinkSet:
        """Validate ``massless`` links and ``shared`` groups (group name → links) of a tree
        whose joints carry ``link_names``."""
        links = tuple(link_names)
        shared = dict(shared or {})
        owner: dict[str, str | None] = {link: link for link in links}
        for k, link in enumerate(massless):
            if link not in owner:
                raise ModelError(f"massless[{k}]: no link {excerpt(link)} in the tree; its "
                                 f"moving links are {name_list(links)}; {_EXAMPLE}")
            owner[link] = None
        for group, members in shared.items():
            where = f"shared[{group!r}]"
            if not isinstance(group, str) or not group or group in links:
                raise ModelError(f"{where}: a group needs a name of its own (it names the "
                                 f"shared parameters, e.g. 'legs_rod'), not a link's name; "
                                 f"{_EXAMPLE}")
            members = list(members) if not isinstance(members, str) else [members]
            if len(members) < 2 or len(set(members)) != len(members):
                raise ModelError(f"{where}: expected two or more different links, found "
                                 f"{members}; {_EXAMPLE}")
            for link in members:
                if link not in owner:
                    raise ModelError(f"{where}: no link {excerpt(link)} in the tree; its "
                                     f"moving links are {name_list(links)}")
                if owner[link] != link:
                    what = "massless" if owner[link] is None else f"in group {owner[link]!r}"
                    raise ModelError(f"{where}: link {link!r} is already {what}; a link "
                                     "carries one set of parameters")
                owner[link] = group
        owners = tuple(owner[link] for link in links)
        names = tuple(dict.fromkeys(o for o in owners if o is not None))
        if not names:
            raise ModelError(f"massless: every link of the tree is massless ({name_list(links)})"
                             "; at least one must carry parameters")
        return cls(owners, names)

    @property
    def is_trivial(self) -> bool:
        """True when every link carries its own parameters."""
        return len(self.names) == len(self.owners)

    @property
    def blocks(self) -> np.ndarray:
        """Per tree joint, the index of its link's parameter block (−1 when massless)."""
        index = {name: k for k, name in enumerate(self.names)}
        return np.array([-1 if o is None else index[o] for o in self.owners], dtype=int)

    def members(self, name: str) -> tuple[int, ...]:
        """Tree joints whose links carry the block ``name``."""
        return tuple(j for j, o in enumerate(self.owners) if o == name)

    def reduce(self, full: np.ndarray) -> np.ndarray:
        """The model's link columns (..., 10 · blocks) from Pinocchio's (..., 10 · joints):
        massless links' columns dropped, shared links' summed."""
        if self.is_trivial:
            return full
        parts = full.reshape(*full.shape[:-1], len(self.owners), 10)
        blocks = self.blocks
        first = np.array([int(np.argmax(blocks == k)) for k in range(len(self.names))])
        out = parts[..., first, :]
        for k, name in enumerate(self.names):
            for j in self.members(name)[1:]:
                out[..., k, :] += parts[..., j, :]
        return out.reshape(*full.shape[:-1], 10 * len(self.names))
