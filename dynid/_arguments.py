"""Argument types and output checks shared by the ``dynid`` commands.

Numeric options are checked as they are parsed (argparse ``type=`` functions): a value that is
not a number, not finite or out of its range is a usage error, reported before anything is
computed. Files a command writes are checked before it computes (:func:`check_output`) and
written through a temporary file (:func:`replacing`), so a failed write leaves an existing file
as it was.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ._files import excerpt
from .errors import DataError

__all__ = ["check_output", "number", "replacing", "whole", "word_or"]


def number(low: float | None = None, high: float | None = None, *, above: bool = False,
           below: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite float in ``[low, high]`` (``above``/``below``: the bound
    itself excluded)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, found {excerpt(text)}"
                                             ) from None
        if not math.isfinite(value) or not _within(value, low, high, above, below):
            raise argparse.ArgumentTypeError(f"expected a finite number "
                                             f"{_span(low, high, above, below)}, found {text}")
        return value

    parse.__name__ = "number"  # argparse names the type in its messages
    return parse


def whole(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer in ``[low, high]``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, found "
                                             f"{excerpt(text)}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}, "
                                             f"found {excerpt(text, 40)}")
        return value

    parse.__name__ = "whole number"
    return parse


def word_or(parse: Callable[[str], object], **words: object) -> Callable[[str], object]:
    """An argparse type: one of the ``words`` (each stands for its value), else ``parse``."""
    def parse_or_word(text: str) -> object:
        if text.lower() in words:
            return words[text.lower()]
        try:
            return parse(text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{exc} (or {' or '.join(words)})") from None

    parse_or_word.__name__ = getattr(parse, "__name__", "value")
    return parse_or_word


def _within(value: float, low, high, above: bool, below: bool) -> bool:
    if low is not None and (value < low or (above and value == low)):
        return False
    return not (high is not None and (value > high or (below and value == high)))


def _span(low, high, above: bool, below: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if above else '['}{low:g}, {high:g}{')' if below else ']'}"
    if low is not None:
        return f"{'>' if above else '≥'} {low:g}"
    if high is not None:
        return f"{'<' if below else '≤'} {high:g}"
    return ""


def check_output(path: str | Path, option: str, *, inputs: Iterable[str | Path] = (),
                 suffixes: Iterable[str] | None = None) -> Path:
    """Check, before computing, that a command can write ``path`` (given by ``option``): its
    folder exists and is writable, it is not a folder nor a device or pipe (which the write,
    through a temporary file renamed over it, would replace), not one of the ``inputs`` (which
    it would overwrite), and its suffix is one of ``suffixes`` (when given, without the
    dot)."""
    path = Path(path)
    name = excerpt(str(path), 200)
    folder = path.parent
    if not folder.exists():
        raise DataError(f"{option} {name}: the folder {excerpt(str(folder), 200)} does not "
                        "exist; create it first or write elsewhere")
    if not folder.is_dir():
        raise DataError(f"{option} {name}: {excerpt(str(folder), 200)} is not a folder")
    if path.is_dir():
        raise DataError(f"{option} {name} is a folder; give a file name")
    if path.exists() and not path.is_file():
        raise DataError(f"{option} {name} is not a regular file (a device or a pipe?); give "
                        "the name of a file to write")
    if not os.access(path if path.exists() else folder, os.W_OK):
        raise DataError(f"{option} {name}: no permission to write there")
    if suffixes is not None:
        allowed = sorted(suffixes)
        if path.suffix.lower().lstrip(".") not in allowed:
            raise DataError(f"{option} {name}: unknown image format "
                            f"{excerpt(path.suffix or '(no suffix)')}; end the name with one of "
                            f"{', '.join('.' + s for s in allowed)}")
    for other in inputs:
        other = Path(other)
        if path.exists() and other.exists() and path.resolve() == other.resolve():
            raise DataError(f"{option} {name} is also an input of the command; writing it "
                            "would overwrite that input. Give another file name")
    return path


@contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """A temporary path next to ``path`` (same suffix) to write to; it replaces ``path`` when
    the block succeeds and is removed when it fails, so ``path`` is never left half written."""
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.partial{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def image_suffixes() -> tuple[str, ...]:
    """The image formats matplotlib writes (``png``, ``pdf``, ``svg``...)."""
    from matplotlib.backend_bases import FigureCanvasBase

    return tuple(FigureCanvasBase.get_supported_filetypes())
