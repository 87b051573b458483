"""Strict checks for values read from robot files: every error names the key path and the fix."""

from __future__ import annotations

import ast
import difflib
import math
import operator
from collections.abc import Iterable, Mapping

from ..errors import ModelError

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg,
        ast.UAdd: operator.pos}
_NAMES = {"pi": math.pi, "deg": math.pi / 180.0}


class _AnyKey:
    """Accepts every key: for mappings keyed by link or joint names."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _AnyKey()


def fail(path: str, message: str) -> ModelError:
    return ModelError(f"{path}: {message}")


def mapping(value: object, path: str, allowed: Iterable[str] | _AnyKey,
            required: Iterable[str] = ()) -> dict:
    """Check that ``value`` is a mapping with only ``allowed`` keys (or :data:`ANY`) and all
    ``required`` ones. ``None`` (an empty YAML entry) is an empty mapping."""
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise fail(path, f"expected a mapping of keys to values, found {type(value).__name__} "
                         f"{value!r}")
    allowed = list(allowed) if allowed is not ANY else None
    for key in value:
        if not isinstance(key, str):
            raise fail(path, f"keys must be strings, found {key!r}")
        if allowed is not None and key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"allowed keys are {allowed}"
            raise fail(f"{path}.{key}", f"unknown key; {hint}")
    for key in required:
        if key not in value:
            raise fail(path, f"missing required key {key!r}")
    return dict(value)


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
    if isinstance(value, int | float):
        x = float(value)
    elif isinstance(value, str):
        try:
            x = _evaluate(ast.parse(value.strip(), mode="eval").body)
        except (SyntaxError, ValueError, ZeroDivisionError, OverflowError):
            raise fail(path, f"expected a number or an expression such as 'pi/2' or "
                             f"'30*deg', found {value!r}") from None
    else:
        raise fail(path, f"expected a number, found {type(value).__name__} {value!r}")
    if math.isnan(x) or (finite and math.isinf(x)):
        raise fail(path, f"expected a finite number, found {x}")
    if positive and not x > 0:
        raise fail(path, f"expected a value > 0, found {x}")
    if nonnegative and not x >= 0:
        raise fail(path, f"expected a value ≥ 0, found {x}")
    if nonzero and x == 0:
        raise fail(path, "expected a non-zero value, found 0")
    return x


def numbers(value: object, path: str, length: int, **checks) -> list[float]:
    """A list of exactly ``length`` numbers."""
    if not isinstance(value, list | tuple) or len(value) != length:
        shape = f"a list of {len(value)}" if isinstance(value, list | tuple) else repr(value)
        raise fail(path, f"expected a list of {length} numbers, found {shape}")
    return [number(x, f"{path}[{i}]", **checks) for i, x in enumerate(value)]


def text(value: object, path: str, choices: Iterable[str] | None = None) -> str:
    if not isinstance(value, str) or not value:
        raise fail(path, f"expected a non-empty string, found {value!r}")
    if choices is not None:
        choices = list(choices)
        if value not in choices:
            raise fail(path, f"expected one of {choices}, found {value!r}")
    return value
