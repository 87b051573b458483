"""Reading the project's text files (robot, URDF, trajectory and result files) with clear errors.

Every file is read with bounds, so that a wrong or hostile file ends in a short, clear error
instead of exhausting memory:

* its size (:data:`MAX_BYTES`; robot files pass a smaller bound);
* its encoding: UTF-8 text (a byte-order mark is allowed), no NUL bytes;
* for YAML, the number of nodes once anchors and aliases are expanded (:data:`MAX_NODES`, which
  stops "alias bombs": a few hundred bytes whose aliases expand to millions of nodes), recursive
  aliases and the nesting depth (:data:`MAX_DEPTH`);
* for JSON, the nesting depth.

Messages that quote a value from a file quote an :func:`excerpt` of it.
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Callable
from pathlib import Path

import yaml

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "StructureError", "excerpt", "load_json",
           "load_yaml", "name_list", "read_structured", "read_text"]

#: Largest file read (bytes): far above any robot, trajectory or result file dynid writes.
MAX_BYTES = 16 * 2 ** 20
#: Largest number of YAML nodes, counted with every alias expanded.
MAX_NODES = 100_000
#: Deepest nesting of lists and mappings in a YAML or JSON file.
MAX_DEPTH = 64

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 3, 8, 8, 6
_REPR.maxset = _REPR.maxfrozenset = _REPR.maxdeque = _REPR.maxarray = 8
_REPR.maxstring, _REPR.maxlong, _REPR.maxother = 60, 40, 60


def excerpt(value: object, limit: int = 80) -> str:
    """A short ``repr`` of ``value`` for a message: nested containers, long strings and huge
    numbers are abridged, so a message never quotes more than about ``limit`` characters."""
    if isinstance(value, str):  # a string keeps its start and its end (a file name)
        text = repr(value if len(value) <= 2 * limit else value[:limit] + value[-limit:])
        if len(text) > limit:
            text = text[:(limit - 1) // 2] + "…" + text[-(limit // 2):]
        return text
    try:
        text = _REPR.repr(value)
    except Exception:  # an object whose repr fails is named by its type
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def name_list(values: object, limit: int = 300) -> str:
    """A list of names for a message, ``['a', 'b', …]``: every name while they fit in about
    ``limit`` characters, then how many more there are."""
    items = [excerpt(str(v), 60) for v in values]
    shown, size = [], 0
    for item in items:
        if size + len(item) > limit:
            return "[" + ", ".join(shown) + f", … ({len(items) - len(shown)} more)]"
        shown.append(item)
        size += len(item) + 2
    return "[" + ", ".join(shown) + "]"


class StructureError(ValueError):
    """A YAML or JSON document is larger or deeper than the bounds allow."""


def read_text(path: str | Path, what: str, error: type[Exception], *,
              max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of the file at ``path``; a missing, unreadable, oversized or binary file
    raises ``error`` naming ``what`` and the path."""
    path = Path(path)
    name = excerpt(str(path), 200)
    try:
        if not path.exists():
            raise error(f"{what} {name} does not exist")
        if not path.is_file():
            raise error(f"{what} {name} is not a regular file (a directory or a device?)")
        with path.open("rb") as stream:
            data = stream.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"{what} {name} could not be read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise error(f"{what} {name} is larger than {_size(max_bytes)}, the most a {what} may "
                    f"be; is it the right file?")
    return decode(data, f"{what} {name}", error)


def decode(data: bytes, where: str, error: type[Exception]) -> str:
    """UTF-8 text of ``data`` (a leading byte-order mark is dropped)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise error(f"{where} is UTF-16 text; save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{where} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                    f"{exc.start}); is it a binary file? Save it as UTF-8") from None
    if "\x00" in text:
        raise error(f"{where} contains NUL bytes (offset {text.index(chr(0))}); is it a binary "
                    "file?")
    return text


def _size(n: int) -> str:
    return f"{n / 2 ** 20:g} MB" if n >= 2 ** 20 else f"{n / 2 ** 10:g} kB"


# YAML with bounded expansion ------------------------------------------------------------------
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _check_nodes(root: yaml.Node, max_nodes: int, max_depth: int) -> None:
    """Count the nodes of the document with aliases expanded (aliases share node objects),
    without expanding them: each node's expanded size is computed once."""
    size: dict[int, int] = {}
    active: set[int] = set()
    count = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            active.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in children)
            count += 1
            line = node.start_mark.line + 1
            if count > max_nodes:
                raise StructureError(f"it has more than {max_nodes} values (lists, mappings and "
                                     f"scalars; at line {line}): is it the right file?")
            if size[key] > max_nodes:
                raise StructureError(f"it has more than {max_nodes} nodes once its anchors and "
                                     f"aliases are expanded (at line {line}): aliases of lists "
                                     "of aliases multiply; write the values out or reuse fewer "
                                     "levels of aliases")
            continue
        if key in size:
            continue
        if key in active:
            raise StructureError(f"it has a recursive alias (line {node.start_mark.line + 1}): "
                                 "an anchor used inside its own value")
        active.add(key)
        if len(active) > max_depth:
            raise StructureError(f"it is nested deeper than {max_depth} levels (line "
                                 f"{node.start_mark.line + 1})")
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def load_yaml(text: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> object:
    """Parse one YAML document with the safe loader, refusing documents whose expanded size or
    nesting exceeds the bounds (:class:`StructureError`)."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node, max_nodes, max_depth)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load_json(text: str, *, max_depth: int = MAX_DEPTH) -> object:
    """Parse JSON, refusing documents nested deeper than ``max_depth``."""
    data = json.loads(text)
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > max_depth:
                raise StructureError(f"it is nested deeper than {max_depth} levels")
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, depth + 1) for v in items if isinstance(v, dict | list))
    return data


# The loaders callers pass, mapped to their bounded versions.
_BOUNDED: dict[Callable, Callable] = {yaml.safe_load: load_yaml, json.loads: load_json}


def read_structured(path: str | Path, what: str, language: str, parse: Callable[[str], object],
                    syntax_error: type[Exception] | tuple[type[Exception], ...],
                    error: type[Exception], *, max_bytes: int = MAX_BYTES) -> object:
    """Parse the file at ``path`` with ``parse``; a missing, oversized or binary file, a
    ``syntax_error`` or a document beyond the bounds raises ``error`` naming ``what`` (e.g.
    ``"robot file"``), the path and the ``language``.

    ``yaml.safe_load`` and ``json.loads`` are replaced by :func:`load_yaml` and
    :func:`load_json`, which bound the document's expanded size and depth.
    """
    text = read_text(path, what, error, max_bytes=max_bytes)
    parse = _BOUNDED.get(parse, parse)
    name = excerpt(str(path), 200)
    try:
        return parse(text)
    except error:
        raise
    except StructureError as exc:
        raise error(f"{what} {name} is too large to read: {exc}") from None
    except RecursionError:
        raise error(f"{what} {name} is too large to read: it is nested too deeply") from None
    except (syntax_error, ValueError, OverflowError) as exc:
        raise error(f"{what} {name} is not valid {language}: "
                    f"{_short(str(exc), 400)}") from None


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
