"""Reading the project's text files (robot, trajectory and result files) with clear errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def read_structured(path: str | Path, what: str, language: str, parse: Callable[[str], object],
                    syntax_error: type[Exception] | tuple[type[Exception], ...],
                    error: type[Exception]) -> object:
    """Parse the file at ``path`` with ``parse``; a missing file or a ``syntax_error`` raises
    ``error`` naming ``what`` (e.g. ``"robot file"``), the path and the ``language``."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{what} {str(path)!r} does not exist")
    try:
        return parse(path.read_text())
    except syntax_error as exc:
        raise error(f"{what} {str(path)!r} is not valid {language}: {exc}") from None
