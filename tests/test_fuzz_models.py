"""Fuzzing the robot-file and URDF loaders: every input, however malformed, ends in a robot or a
:class:`~dynid.DynidError`, within bounded time and memory.

Inputs start from the embedded robot files, the four-bar of the mechanism tests, the Panda
URDF and the Panda with attached bodies, motor offsets and a coupled wrist, mutated in their
structure (keys deleted, renamed or added, values replaced by numbers of every size, NaN,
strings, expressions, lists and mappings), in their bytes, or generated from scratch (random
YAML and XML, alias bombs). ``DYNID_FUZZ=1`` selects the long run (see
``fuzzing.py``).
"""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from conftest import DATA
from fuzzing import FUZZ_SETTINGS, bounded, tree_paths
from hypothesis import assume, event, given
from hypothesis import strategies as st
from test_mechanisms_files import FOUR_BAR

import dynid
from dynid.models import Tree, load_robot_file, robot_from_mapping
from dynid.models.library import _HERE

# Numerical warnings on odd input would reach users as noise: they fail here.
pytestmark = [pytest.mark.fuzz, pytest.mark.filterwarnings("error::RuntimeWarning")]

SETTINGS = FUZZ_SETTINGS
SECONDS, MEGABYTES = 20.0, 150.0
URDF = (DATA / "panda.urdf").read_text()
_LIMIT2 = '<limit lower="-1.7628" upper="1.7628" velocity="2.175" effort="87"/>'
URDFS = [URDF, URDF.replace(_LIMIT2, _LIMIT2 + '<mimic joint="joint1" multiplier="-0.5"/>')]
SEEDS = {p.stem: yaml.safe_load(p.read_text()) for p in sorted(_HERE.glob("*.yaml"))}
SEEDS["four_bar"] = FOUR_BAR
SEEDS["panda_urdf"] = {**SEEDS["panda"], "kinematics": {"urdf": str(DATA / "panda.urdf")}}
# Attached bodies (identified and known), motor-side offsets and a coupled wrist.
SEEDS["panda_bodies"] = copy.deepcopy(SEEDS["panda"])
SEEDS["panda_bodies"]["bodies"] = [
    {"name": "weight", "parent": "link2", "xyz": [-0.15, 0, 0], "rpy": [0, 0.2, 0],
     "mass": 3.0, "com": [0, 0, 0.01], "inertia": [0.002, 0, 0, 0.002, 0, 0.003]},
    {"name": "tool", "parent": "flange", "xyz": [0, 0, 0.05], "mass": 0.8, "known": True}]
SEEDS["panda_bodies"]["transmission"] = {"coupling": [
    [1.0 if i == j else 0.5 if (i, j) == (6, 5) else 0.0 for j in range(7)] for i in range(7)]}
for _j, _entry in enumerate(SEEDS["panda_bodies"]["joints"].values()):
    _entry.setdefault("actuator", {})["offset"] = 0.01 * (_j - 3)
TEXTS = {p.stem: p.read_text() for p in sorted(_HERE.glob("*.yaml"))}

ODD = [0, -1, 1, 0.5, -1e-9, 1e308, -1e308, 5e-324, float("nan"), float("inf"), -float("inf"),
       10 ** 400, -(10 ** 30), 2 ** 63, "1e400", "-1e400", "pi/0", "0/0", "-pi/2", "30*deg",
       "9**9**9", "(-1)**0.5", "1" * 300, "(" * 300 + "1", "-" * 500 + "1", "", " ", "nan",
       ".inf", "x", "joint1", "link1", "revolute", "prismatic", "increments", "current", True,
       None, [], {}, [0, 0], [0, 0, 0], [1, 2, 3, 4, 5, 6], [[1]], {"x": 1}, "é" * 50]
SCALARS = st.one_of(st.sampled_from(ODD), st.integers(), st.floats(), st.text(max_size=20),
                    st.booleans(), st.none())
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=7), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12)


def _mutate(data, draw) -> object:
    """Apply one structural mutation to ``data`` (a copy is mutated and returned)."""
    data = copy.deepcopy(data)
    paths = list(tree_paths(data))
    path = draw(st.sampled_from(paths))
    kind = draw(st.sampled_from(["replace", "replace", "replace", "delete", "rename", "add",
                                 "wrap", "duplicate", "scale", "scale"]))
    if kind == "scale":  # a plausible file with one number off: the deeper code paths
        numeric = [p for p in paths if p and isinstance(_at(data, p), int | float)
                   and not isinstance(_at(data, p), bool)]
        if not numeric:
            return data
        path = draw(st.sampled_from(numeric))
    if not path:
        return draw(VALUES) if kind == "replace" else data
    parent = data
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    if kind == "replace":
        parent[key] = draw(VALUES)
    elif kind == "delete":
        del parent[key]
    elif kind == "rename" and isinstance(parent, dict):
        parent[draw(st.one_of(st.text(max_size=12), st.sampled_from(
            [str(key)[:-1], str(key) + "s", str(key).upper(), "joint1", "link1"])))] = \
            parent.pop(key)
    elif kind == "add" and isinstance(parent[key], dict):
        parent[key][draw(st.text(max_size=12))] = draw(VALUES)
    elif kind == "wrap":
        parent[key] = draw(st.sampled_from([[parent[key]], {"value": parent[key]},
                                            str(parent[key])[:50]]))
    elif kind == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[key]))
    elif kind == "scale":
        factor = draw(st.sampled_from([-1.0, 0.0, 1e-9, 0.1, 0.5, 0.99, 1.01, 2.0, 10.0, 1e3,
                                       1e6, 1e12]))
        parent[key] = parent[key] * factor + draw(st.sampled_from([0.0, 0.0, 1e-3, 1.0]))
    return data


def _at(data, path):
    for k in path:
        data = data[k]
    return data


def _loads(fn) -> None:
    """``fn()`` returns a robot or raises a DynidError, within the bounds."""
    try:
        robot = bounded(fn, seconds=SECONDS, megabytes=MEGABYTES)
    except dynid.DynidError as exc:
        message = str(exc)
        assert len(message) < 3000, f"message of {len(message)} characters"
        event(f"refused: {type(exc).__name__}")
    else:
        assert isinstance(robot, dynid.Robot)
        event("loaded")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


# Robot files ---------------------------------------------------------------------------------
@SETTINGS
@given(st.sampled_from(sorted(SEEDS)), st.integers(1, 4), st.data())
def test_mutated_robot_mappings(seed, count, data):
    value = SEEDS[seed]
    for _ in range(count):
        value = _mutate(value, data.draw)
    _loads(lambda: robot_from_mapping(value, base_dir=DATA))


@SETTINGS
@given(st.sampled_from(sorted(SEEDS)), st.data())
def test_mutated_robot_files_through_yaml(workdir, seed, data):
    value = _mutate(SEEDS[seed], data.draw)
    try:
        text = yaml.safe_dump(value, allow_unicode=True)
    except yaml.YAMLError:
        assume(False)
    path = workdir / "mutated.yaml"
    path.write_text(text, encoding="utf-8")
    _loads(lambda: load_robot_file(path))


@SETTINGS
@given(st.sampled_from(sorted(TEXTS)), st.lists(st.tuples(
    st.integers(0, 10 ** 6), st.sampled_from(["flip", "insert", "delete", "chunk"]),
    st.binary(min_size=1, max_size=8)), min_size=1, max_size=6))
def test_robot_files_with_mutated_bytes(workdir, seed, edits):
    data = bytearray(TEXTS[seed].encode())
    for position, kind, payload in edits:
        i = position % (len(data) + 1)
        if kind == "flip" and i < len(data):
            data[i] ^= payload[0] or 1
        elif kind == "insert":
            data[i:i] = payload
        elif kind == "delete":
            del data[i:i + len(payload)]
        else:  # a chunk of the file repeated: duplicated keys, broken indentation
            data[i:i] = data[i:i + 40 * len(payload)]
    path = workdir / "bytes.yaml"
    path.write_bytes(bytes(data))
    _loads(lambda: load_robot_file(path))


@SETTINGS
@given(VALUES)
def test_random_yaml_documents(workdir, value):
    path = workdir / "random.yaml"
    path.write_text(yaml.safe_dump(value, allow_unicode=True), encoding="utf-8")
    _loads(lambda: load_robot_file(path))


@SETTINGS
@given(st.integers(2, 12), st.integers(2, 9), st.booleans())
def test_alias_bombs_are_refused_quickly(workdir, fanout, depth, mapping):
    lines = ["a0: &a0 [" + ", ".join(["lol"] * fanout) + "]"]
    for d in range(1, depth):
        refs = ", ".join([f"*a{d - 1}"] * fanout)
        lines.append(f"a{d}: &a{d} " + ("{" + ", ".join(f"k{i}: *a{d - 1}" for i in
                                                          range(fanout)) + "}" if mapping
                                         else f"[{refs}]"))
    lines.append(f"kinematics: *a{depth - 1}")
    path = workdir / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    expanded = sum(fanout ** d for d in range(depth + 1))
    try:
        bounded(lambda: load_robot_file(path), seconds=2, megabytes=20)
    except dynid.ModelError as exc:
        assert len(str(exc)) < 1000
        if expanded > 200_000:
            assert "aliases are expanded" in str(exc)


# URDF --------------------------------------------------------------------------------------
def _mutate_urdf(draw) -> str:
    root = ET.fromstring(draw(st.sampled_from(URDFS)))
    elements = list(root.iter())
    for _ in range(draw(st.integers(1, 4))):
        el = draw(st.sampled_from(elements))
        kind = draw(st.sampled_from(["attribute", "attribute", "remove", "duplicate", "tag",
                                     "add"]))
        if kind == "attribute" and el.attrib:
            name = draw(st.sampled_from(sorted(el.attrib)))
            el.set(name, draw(st.one_of(
                st.sampled_from(["nan", "inf", "-1", "0", "1e400", "0 0", "0 0 0", "1 2 3 4",
                                 "-0.5 0.5 nan", "joint1", "link1", "link0", "fixed",
                                 "continuous", "floating", "revolute", "prismatic", "", "abc",
                                 "1e308 1e308 1e308"]),
                st.floats().map(repr), st.text(max_size=12))))
        elif kind == "remove":
            for parent in elements:
                if el in list(parent):
                    parent.remove(el)
                    break
        elif kind == "duplicate":
            for parent in elements:
                if el in list(parent):
                    parent.append(copy.deepcopy(el))
                    break
        elif kind == "tag":
            el.tag = draw(st.sampled_from(["link", "joint", "inertial", "mimic", "limit",
                                           "origin", "axis", "x"]))
        elif kind == "add":
            el.append(ET.Element(draw(st.sampled_from(["mimic", "limit", "origin", "axis",
                                                       "inertial", "mass", "parent"])),
                                 {draw(st.sampled_from(["joint", "xyz", "value", "link",
                                                        "multiplier"])): draw(st.sampled_from(
                                     ["joint1", "joint3", "0 0 1", "2", "link2", "nan"]))}))
    return ET.tostring(root, encoding="unicode")


@SETTINGS
@given(st.data())
def test_mutated_urdf_trees(data):
    text = _mutate_urdf(data.draw)
    _loads(lambda: dynid.Robot(Tree.from_urdf(text)))


@SETTINGS
@given(st.data(), st.sampled_from([{}, {"locked": {"joint1": 0.3}}, {"locked": {"joint7": 0}}]))
def test_mutated_urdf_in_robot_files(workdir, data, extra):
    path = workdir / "mutated.urdf"
    path.write_text(_mutate_urdf(data.draw), encoding="utf-8")
    robot = {**SEEDS["panda_urdf"], "kinematics": {"urdf": str(path), **extra}}
    if "locked" in extra:
        robot["joints"] = {k: v for k, v in robot["joints"].items() if k not in extra["locked"]}
    _loads(lambda: robot_from_mapping(robot))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 10 ** 6), st.binary(min_size=1, max_size=6)),
                min_size=1, max_size=6))
def test_urdf_with_mutated_bytes(workdir, edits):
    data = bytearray(URDF.encode())
    for position, payload in edits:
        i = position % (len(data) + 1)
        data[i:i + len(payload) % 3] = payload
    path = workdir / "bytes.urdf"
    path.write_bytes(bytes(data))
    _loads(lambda: dynid.Robot(Tree.from_urdf(path)))


XML_NAMES = st.sampled_from(["robot", "link", "joint", "inertial", "mass", "inertia", "origin",
                             "parent", "child", "axis", "limit", "mimic"])


@st.composite
def _xml(draw, depth=0):
    tag = draw(XML_NAMES)
    attrs = draw(st.dictionaries(st.sampled_from(["name", "type", "link", "value", "xyz", "rpy",
                                                  "joint", "lower", "upper", "velocity",
                                                  "effort", "ixx", "iyy", "izz"]),
                                 st.sampled_from(["a", "b", "1", "0", "-1", "nan", "0 0 1",
                                                  "revolute", "fixed", "continuous"]),
                                 max_size=4))
    children = draw(st.lists(_xml(depth + 1), max_size=3)) if depth < 3 else []
    el = ET.Element(tag, attrs)
    el.extend(children)
    return el


@SETTINGS
@given(_xml())
def test_random_xml(element):
    text = ET.tostring(element, encoding="unicode")
    _loads(lambda: dynid.Robot(Tree.from_urdf(text)))


@SETTINGS
@given(st.binary(max_size=2000))
def test_binary_robot_files(workdir, data):
    path = workdir / "binary.yaml"
    path.write_bytes(data)
    _loads(lambda: load_robot_file(path))
