"""Strict checks for values read from robot files: every error names the key path and the fix."""

from __future__ import annotations

import ast
import difflib
import math
import operator
from collections.abc import Iterable, Mapping

from .._files import excerpt, name_list
from ..errors import ModelError

__all__ = ["ANY", "ModelError", "excerpt", "fail", "key", "mapping", "names", "number",
           "numbers", "text"]

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg,
        ast.UAdd: operator.pos}
_NAMES = {"pi": math.pi, "deg": math.pi / 180.0}


class _AnyKey:
    """Accepts every key: for mappings keyed by link or joint names."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _AnyKey()


#: Longest number expression read (characters).
MAX_EXPRESSION = 200


def fail(path: str, message: str) -> ModelError:
    return ModelError(f"{_cut(path, 200)}: {message}")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit // 2 - 1] + "…" + text[-(limit // 2):]


def key(value: object) -> str:
    """A key of a robot file as it appears in a path (abridged when very long)."""
    return _cut(str(value), 60)


def names(values: Iterable[object], limit: int = 300) -> str:
    """A list of names for a message (abridged when very long)."""
    return name_list(values, limit)


def mapping(value: object, path: str, allowed: Iterable[str] | _AnyKey,
            required: Iterable[str] = ()) -> dict:
    """Check that ``value`` is a mapping with only ``allowed`` keys (or :data:`ANY`) and all
    ``required`` ones. ``None`` (an empty YAML entry) is an empty mapping."""
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise fail(path, f"expected a mapping of keys to values, found {type(value).__name__} "
                         f"{excerpt(value)}")
    allowed = list(allowed) if allowed is not ANY else None
    for key in value:
        if not isinstance(key, str):
            raise fail(path, f"keys must be strings, found {type(key).__name__} "
                             f"{excerpt(key)}{_quote_hint(key)}")
        if allowed is not None and key not in allowed:
            close = difflib.get_close_matches(key[:100], allowed, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"allowed keys are {allowed}"
            raise fail(f"{path}.{_cut(key, 60)}", f"unknown key; {hint}")
    for key in required:
        if key not in value:
            raise fail(path, f"missing required key {key!r}")
    return dict(value)


def _quote_hint(value: object) -> str:
    """YAML reads 1, 1.5, yes and no as numbers and booleans: say how to write a name."""
    if isinstance(value, bool | int | float):
        return "; YAML reads it as a number or a boolean: quote it (\"...\") to make it a name"
    return ""


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) \
            and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_evaluate(node.operand))
    raise ValueError


def number(value: object, path: str, *, positive: bool = False, nonnegative: bool = False,
           nonzero: bool = False, finite: bool = True) -> float:
    """A number, or an arithmetic expression of numbers, ``pi`` and ``deg`` (π/180)."""
    if isinstance(value, bool):
        raise fail(path, f"expected a number, found {value!r}")
    if isinstance(value, int):
        try:
            x = float(value)
        except OverflowError:  # beyond the largest float, about 1.8e308
            x = math.inf if value > 0 else -math.inf
    elif isinstance(value, float):
        x = value
    elif isinstance(value, str):
        x = _expression(value, path)
    else:
        raise fail(path, f"expected a number, found {type(value).__name__} {excerpt(value)}")
    if math.isnan(x):
        raise fail(path, f"expected a number, found {excerpt(value)} (not a number)")
    if finite and math.isinf(x):
        raise fail(path, f"expected a finite number, found {excerpt(value)}, which is "
                         f"{'too large' if isinstance(value, int | str) else 'infinite'}")
    if positive and not x > 0:
        raise fail(path, f"expected a value > 0, found {x}")
    if nonnegative and not x >= 0:
        raise fail(path, f"expected a value ≥ 0, found {x}")
    if nonzero and x == 0:
        raise fail(path, "expected a non-zero value, found 0")
    return x


def _expression(value: str, path: str) -> float:
    text = value.strip()
    if len(text) <= MAX_EXPRESSION:
        try:
            x = _evaluate(ast.parse(text, mode="eval").body)
            if isinstance(x, float):  # not complex (a negative number to a fractional power)
                return x
        except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError,
                RecursionError, MemoryError):
            pass
    raise fail(path, f"expected a number or an expression such as 'pi/2' or '30*deg' (at "
                     f"most {MAX_EXPRESSION} characters), found {excerpt(value)}")


def numbers(value: object, path: str, length: int, **checks) -> list[float]:
    """A list of exactly ``length`` numbers."""
    if not isinstance(value, list | tuple) or len(value) != length:
        shape = f"a list of {len(value)}" if isinstance(value, list | tuple) else excerpt(value)
        raise fail(path, f"expected a list of {length} numbers, found {shape}")
    return [number(x, f"{path}[{i}]", **checks) for i, x in enumerate(value)]


def text(value: object, path: str, choices: Iterable[str] | None = None, *,
         max_length: int = 200) -> str:
    """A non-empty string (a name, unless ``max_length`` allows free text)."""
    if not isinstance(value, str) or not value:
        raise fail(path, f"expected a non-empty string, found {excerpt(value)}"
                         f"{_quote_hint(value)}")
    if len(value) > max_length:
        raise fail(path, f"expected at most {max_length} characters, found {len(value)}: "
                         f"{excerpt(value)}")
    if choices is not None:
        choices = list(choices)
        if value not in choices:
            raise fail(path, f"expected one of {choices}, found {excerpt(value)}")
    return value
