"""The identification report: one self-contained HTML file whose numbers are the result's and
``dynid.validate``'s, checked by reading the file back with ``html.parser``.

The data are simulated with a known truth: the panda driven along random Fourier motions,
outputs from the true parameters plus noise. Every figure is decoded as a PNG (signature,
chunk CRCs, the image data inflated to the size its header states); the pseudo-inertia
eigenvalues are recomputed from the result's parameters with numpy, the condition numbers from
the dense base regressor.
"""

from __future__ import annotations

import base64
import os
import struct
import subprocess
import sys
import zlib
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import arm_files

import dynid
from dynid.cli import main
from dynid.demo import true_parameters
from dynid.hardware import FourierReference
from dynid.identify import OLS, IdentificationData, Processing, Recording, save_npz, validate
from dynid.report import report as report_module
from dynid.report.plots import envelope

SECTIONS = ["summary", "trajectory", "outputs", "errors", "parameters", "consistency",
            "conditioning", "whiteness", "settings"]
PROCESSING = Processing(cutoff=None, decimate=1, deadzone=None)


# Reading the report back --------------------------------------------------------------------
class _Page(HTMLParser):
    """Sections, images, the title and every table (header, then rows of (text, value))."""

    def __init__(self):
        super().__init__()
        self.sections, self.images, self.tables = [], [], {}
        self.title, self._in_title = "", False
        self._table = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.sections.append(attrs["id"])
        elif tag == "img":
            self.images.append(attrs["src"])
        elif tag == "title":
            self._in_title = True
        elif tag == "table":
            self._table = self.tables.setdefault(attrs["id"], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            value = attrs.get("data-value")
            self._cell = ["", None if value is None else float(value)]

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._cell is not None:
            self._cell[0] += data

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append(tuple(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None


def _read(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _rows(page: _Page, table: str) -> list[dict[str, tuple[str, float | None]]]:
    header, *rows = page.tables[table]
    names = [h[0] for h in header]
    return [dict(zip(names, row, strict=True)) for row in rows]


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG, after checking its signature, every chunk's CRC, and that
    its image data inflate to the size the header states (no imaging library)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        chunks.setdefault(kind, []).append(body)
        pos += 12 + length
    assert pos == len(data) and b"IEND" in chunks
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][0][:10])
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    row = 1 + -(-width * channels * depth // 8)  # a filter byte, then the packed pixels
    assert len(zlib.decompress(b"".join(chunks[b"IDAT"]))) == height * row
    return width, height


def _close(shown: str, value: float) -> bool:
    """The text a reader sees rounds ``value`` to 4 significant digits."""
    return float(shown.replace("−", "-")) == pytest.approx(value, rel=1e-3, abs=1e-12)


# Data ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def case(tmp_path_factory):
    robot = dynid.load_robot("panda")
    rng = np.random.default_rng(0)
    theta = true_parameters(robot, rng)
    reg = dynid.Regressor(robot)
    recs = []
    for seed in (1, 2):
        t = np.arange(0.0, 5.0, 0.01)
        q, v, a = FourierReference.random(robot, frequency=0.2, ramp=0.0, seed=seed)(t)
        y = reg.predict(q, v, a, theta) + 0.02 * rng.standard_normal((len(t), robot.n))
        recs.append(Recording(t, q, y, names=robot.joint_names))
    result = OLS().fit(IdentificationData(robot, recs[0], processing=PROCESSING)).result_
    path = dynid.write_report(robot, result, {"run1.npz": recs[0]},
                              tmp_path_factory.mktemp("report") / "report.html",
                              validation={"run <2>.npz": recs[1]})
    return robot, result, recs, path, _read(path)


# The page -----------------------------------------------------------------------------------
def test_every_section_is_there_and_nothing_is_outside_the_file(case):
    *_, path, page = case
    assert page.sections == SECTIONS
    text = path.read_text(encoding="utf-8")
    for outside in ('src="http', "href=\"http", "<link", "<script", "url("):
        assert outside not in text
    assert all(src.startswith("data:image/png;base64,") for src in page.images)
    assert page.title == "Identification of panda"
    assert "run &lt;2&gt;.npz" in text and "run <2>.npz" not in text  # labels are escaped
    assert path.stat().st_size < 600_000


def test_every_figure_is_a_png(case):
    *_, page = case
    assert len(page.images) == 3  # the trajectory, then one per recording
    for src in page.images:
        width, height = _png_size(base64.b64decode(src.split(",", 1)[1], validate=True))
        assert 400 <= width <= 1200 and 150 <= height <= 1500


def test_error_table_is_validate(case):
    robot, result, (train, test), _, page = case
    rows = _rows(page, "errors")
    expected = {("identification", "run1.npz"): validate(robot, result, train),
                ("validation", "run <2>.npz"): validate(robot, result, test)}
    assert len(rows) == sum(robot.n + 1 for _ in expected)
    for row in rows:
        val = expected[(row["data"][0], row["recording"][0])]
        name = row["output"][0]
        if name == "overall":
            rmse = np.sqrt(np.mean((val.predicted - val.measured) ** 2))
            relative = val.overall_relative_error
        else:
            j = val.names.index(name)
            rmse, relative = val.rmse[j], val.relative_error[j]
            assert row["unit"][0] == "N·m"
        for key, want in (("RMSE", rmse), ("relative error %", relative)):
            shown, value = row[key]
            assert value == pytest.approx(want, rel=1e-9)
            assert _close(shown, want)
    for row, rmse in zip(_rows(page, "training-rmse"), result.training_rmse, strict=True):
        assert row["RMSE"][1] == pytest.approx(rmse, rel=1e-12)


def test_parameters_and_sigma_are_the_result(case):
    robot, result, _, _, page = case
    base = _rows(page, "base")
    sigma_b = np.sqrt(np.diag(result.base_cov))
    assert [r["base parameter"][0] for r in base] == list(result.base_names)
    np.testing.assert_allclose([r["value"][1] for r in base], result.base_params, rtol=1e-12)
    np.testing.assert_allclose([r["σ"][1] for r in base], sigma_b, rtol=1e-12)
    relative = 100 * sigma_b / np.abs(result.base_params)
    np.testing.assert_allclose([r["σ/|θ| %"][1] for r in base], relative, rtol=1e-9)
    assert [r["note"][0] == "poorly determined" for r in base] == list(relative > 10)
    standard = _rows(page, "standard")
    assert [r["parameter"][0] for r in standard] == list(result.names)
    np.testing.assert_allclose([r["value"][1] for r in standard], result.params, rtol=1e-12)
    np.testing.assert_allclose([r["σ"][1] for r in standard], np.sqrt(np.diag(result.cov)),
                               rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose([r["prior"][1] for r in standard], robot.prior, rtol=1e-12)
    # link1's mass and first moments never move the panda's output (joint 1 is vertical)
    unused = ~np.any(result.base_matrix != 0, axis=0)
    assert unused[robot.parameters.index("link1.m")]
    assert [r["note"][0].startswith("no effect") for r in standard] == list(unused)


def _pseudo_inertia(block: np.ndarray) -> np.ndarray:
    """``[[Σ, h], [hᵀ, m]]`` with ``Σ = ∫ r rᵀ dm = ½ tr(I) 1 − I`` (I about the origin)."""
    m, h, (ixx, ixy, iyy, ixz, iyz, izz) = block[0], block[1:4], block[4:]
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    second = np.eye(3) * (ixx + iyy + izz) / 2 - inertia
    return np.block([[second, h[:, None]], [h[None, :], np.array([[m]])]])


def test_pseudo_inertia_eigenvalues_are_numpy_s(case):
    robot, result, _, path, page = case
    params = robot.parameters
    links = _rows(page, "links")
    assert [r["link"][0] for r in links] == list(params.links)
    for row, link in zip(links, params.links, strict=True):
        block = result.params[params.link_block(link)]
        eig = np.linalg.eigvalsh(_pseudo_inertia(block))
        shown = [row[f"λ{k}"][1] for k in range(1, 5)]
        np.testing.assert_allclose(shown, eig, rtol=1e-9, atol=1e-12 * np.abs(eig).max())
        assert row["pseudo-inertia"][0] == ("physical" if eig[0] > 0 else "not physical")
        assert row["mass kg"][1] == block[0]
        np.testing.assert_allclose([row[f"com {c} m"][1] for c in "xyz"], block[1:4] / block[0],
                                   rtol=1e-12)
    masses = sum(result.params[params.index(f"{link}.m")] for link in params.links)
    assert f"Total mass {masses:.4g} kg" in path.read_text(encoding="utf-8")
    bounds = _rows(page, "bounds")
    assert {r["parameter"][0] for r in bounds} == {
        p.name for p in params if p.group != "link" and p.lower == 0}


def test_condition_numbers_are_those_of_the_dense_base_regressor(case):
    robot, result, (train, _), _, page = case
    processed = PROCESSING.apply(train, robot)
    base = dynid.base_parameters(robot)
    Y, _ = dynid.Regressor(robot).affine(processed.positions, processed.velocities,
                                         processed.accelerations)
    W = base.regressor(Y).reshape(-1, base.rank)  # the dense (N n, b) matrix
    rows = {r["condition number"][0]: r["value"][1] for r in _rows(page, "conditioning")}
    assert rows["base regressor, raw"] == pytest.approx(np.linalg.cond(W), rel=1e-6)
    scaled = np.linalg.cond(W / np.linalg.norm(W, axis=0))
    assert rows["base regressor, column-scaled"] == pytest.approx(scaled, rel=1e-6)
    assert rows["regressor rows"] == W.shape[0]
    assert rows["correlation matrix of the base estimate"] == pytest.approx(
        result.uncertainty().condition, rel=1e-12)


def test_whiteness_and_settings_are_the_result_s(case):
    _, result, _, _, page = case
    white = result.whiteness
    rows = _rows(page, "whiteness")
    np.testing.assert_allclose([r["lag-1 ρ"][1] for r in rows], white.autocorrelation[0],
                               rtol=1e-12)
    np.testing.assert_allclose([r["p"][1] for r in rows], white.p_value, rtol=1e-12)
    np.testing.assert_allclose([r["σ factor"][1] for r in rows], white.sigma_factor,
                               rtol=1e-12)
    processing = {r["setting"][0]: r["value"] for r in _rows(page, "settings-processing")}
    assert processing["cutoff"][0] == processing["deadzone"][0] == "None"
    assert processing["rate"][1] == pytest.approx(100.0)
    estimator = {r["setting"][0]: r["value"][0] for r in _rows(page, "settings-estimator")}
    assert estimator["method"] == "ols" and estimator["covariance"] == result.covariance_method
    solver = {r["setting"][0]: r["value"][1] for r in _rows(page, "settings-solver")}
    assert solver["time"] == pytest.approx(result.solver["time"], rel=1e-12)


def test_a_non_physical_estimate_is_flagged(case, tmp_path):
    robot, result, (train, _), _, _ = case
    params = robot.parameters
    theta = robot.prior.copy()  # physical
    theta[params.index("link4.m")] = -1.0
    theta[params.index("joint2.fv")] = -0.5
    page = _read(dynid.write_report(robot, replace(result, params=theta), [train],
                                    tmp_path / "bad.html", title="<b>bad & worse</b>"))
    assert page.title == "<b>bad & worse</b>"
    assert "<b>" not in (tmp_path / "bad.html").read_text(encoding="utf-8")
    verdict = {r["link"][0]: r["pseudo-inertia"][0] for r in _rows(page, "links")}
    assert verdict["link4"] == "not physical"
    assert sum(v == "not physical" for v in verdict.values()) == 1
    bounds = {r["parameter"][0]: r["bounds"][0] for r in _rows(page, "bounds")}
    assert bounds["joint2.fv"] == "outside"
    assert sum(v == "outside" for v in bounds.values()) == 1
    facts = {r[""][0]: r["value"][0] for r in _rows(page, "summary-facts")}
    assert facts["physically consistent"].startswith("no: link4: pseudo-inertia eigenvalue")
    assert "joint2.fv = −0.5" in facts["physically consistent"].replace("-", "−")
    recordings = _rows(page, "recordings")
    assert [r["recording"][0] for r in recordings] == ["identification 1"]


def test_bad_input_is_refused_before_anything_is_computed(case, tmp_path, monkeypatch):
    robot, result, (train, _), _, _ = case
    out = tmp_path / "r.html"

    def fail(*args, **kwargs):
        raise AssertionError("computed before the input was checked")

    monkeypatch.setattr(report_module, "validate", fail)
    with pytest.raises(dynid.DataError, match=r"the folder .*missing.* does not exist"):
        dynid.write_report(robot, "not a result", [train], tmp_path / "missing" / "r.html")
    with pytest.raises(dynid.DataError, match=r"dir\.html' is a folder; give a file name"):
        (tmp_path / "dir.html").mkdir()
        dynid.write_report(robot, result, [train], tmp_path / "dir.html")
    with pytest.raises(dynid.DataError, match=r"expected an IdentificationResult.*load_result"):
        dynid.write_report(robot, result.to_json(), [train], out)
    arm = dynid.load_robot(Path(__file__).parent / "data" / "arm2.yaml")
    with pytest.raises(dynid.DataError, match=r"not those of robot arm2.*identified on"):
        dynid.write_report(arm, result, [train], out)
    with pytest.raises(dynid.DataError, match=r"predicts joint_torque.*with_output\('joint_"):
        dynid.write_report(robot.with_output("motor_torque"), result, [train], out)
    with pytest.raises(dynid.DataError, match=r"at least one identification recording"):
        dynid.write_report(robot, result, [], out)
    with pytest.raises(dynid.DataError, match=r"validation 'v': expected a Recording.*read_npz"):
        dynid.write_report(robot, result, [train], out, validation={"v": train.positions})
    with pytest.raises(dynid.DataError, match=r"recordings: expected a Recording, a list"):
        dynid.write_report(robot, result, "run1.npz", out)
    two = Recording(train.time, train.positions[:, :2], train.output[:, :2])
    with pytest.raises(dynid.DataError, match=r"validation 'validation 1': recording: 2 "
                                              r"coordinates.*robot panda has 7"):
        dynid.write_report(robot, result, [train], out, validation=[two])
    long = "/lab/" + "a-long-folder-name/" * 8 + "run.npz"  # a file is named whole
    with pytest.raises(dynid.DataError) as error:
        dynid.write_report(robot, result, {long: two}, out)
    assert f"recordings {long!r}: recording: 2 coordinates" in str(error.value)
    still = Recording(train.time, train.positions, np.ones_like(train.output))
    with pytest.raises(dynid.DataError, match=r"recordings 'identification 1': .*output of "
                                              r"joint1 is 1 in all"):
        dynid.write_report(robot, result, [still], out)
    assert not out.exists()


def test_the_progress_bar_appears_only_after_its_delay(case, tmp_path, capsys, monkeypatch):
    robot, result, (train, _), _, _ = case
    dynid.write_report(robot, result, [train], tmp_path / "a.html", progress=False)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(report_module, "PROGRESS_DELAY", 0.0)
    dynid.write_report(robot, result, [train], tmp_path / "b.html", progress=True)
    assert "report" in capsys.readouterr().err


@pytest.mark.parametrize("N", [5, 1200, 1201, 4999, 10_000])
def test_envelope_keeps_every_run_s_extremes(N):
    rng = np.random.default_rng(N)
    t = np.sort(rng.uniform(0, 10, N))
    y = np.cumsum(rng.standard_normal((N, 3)), axis=0)
    ts, ys = envelope(t, y, limit=1200)
    assert ys.shape[0] <= 1200 and ys.shape[1] == 3
    for j in range(3):
        index = np.searchsorted(t, ts[:, j])
        np.testing.assert_array_equal(y[index, j], ys[:, j])  # real samples, in time order
        assert np.all(np.diff(index) >= 0)
        assert ys[:, j].min() == y[:, j].min() and ys[:, j].max() == y[:, j].max()
    if N > 1200:
        k = -(-2 * N // 1200)
        for start in range(0, N, k):  # every run keeps its own extremes
            run = y[start:start + k, 0]
            kept = ys[(ts[:, 0] >= t[start]) & (ts[:, 0] <= t[min(start + k, N) - 1]), 0]
            assert run.min() in kept and run.max() in kept


# The command --------------------------------------------------------------------------------
def _dynid(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(dynid.__file__).parents[1])}
    return subprocess.run([sys.executable, "-m", "dynid.cli", *args], capture_output=True,
                          text=True, env=env, timeout=300, check=False)


@pytest.fixture(scope="module")
def files(case, tmp_path_factory):
    _, _, (train, test), _, _ = case
    folder = tmp_path_factory.mktemp("cli")
    paths = [save_npz(rec, folder / name) for rec, name in ((train, "run1.npz"),
                                                            (test, "run2.npz"))]
    result = folder / "result.json"
    assert main(["identify", "panda", str(paths[0]), "-o", str(result), "--method",
                           "ols"]) == 0
    return folder, result, paths


def test_the_command_writes_the_report(files, capsys):
    capsys.readouterr()
    folder, result, (train, test) = files
    out = folder / "report.html"
    done = _dynid("report", str(result), str(train), "--validation", str(test), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout
    page = _read(out)
    assert page.sections == SECTIONS and len(page.images) == 3
    robot, res = dynid.load_robot("panda"), dynid.load_result(result)
    want = validate(robot, res, dynid.read_npz(test), processing=replace(res.processing, skip=0))
    overall = [r for r in _rows(page, "errors") if r["data"][0] == "validation"
               and r["output"][0] == "overall"]
    assert overall[0]["recording"][0] == str(test)
    assert overall[0]["relative error %"][1] == pytest.approx(want.overall_relative_error,
                                                              rel=1e-9)


def test_the_command_refuses_bad_input_with_exit_2(files, tmp_path):
    _, result, (train, _) = files
    out = tmp_path / "report.html"
    done = _dynid("report", str(tmp_path / "none.json"), str(train), "-o", str(out))
    assert done.returncode == 2 and "none.json' does not exist" in done.stderr
    arm_robot, _, arm = arm_files(tmp_path)
    done = _dynid("report", str(result), str(arm), "-o", str(out))
    assert done.returncode == 2, done.stderr
    assert f"recordings '{arm}': recording: 2 coordinates (shoulder, elbow), but robot " \
           "panda has 7" in done.stderr
    done = _dynid("report", str(result), str(train), "--robot", str(arm_robot), "-o", str(out))
    assert done.returncode == 2 and "not those of robot arm2" in done.stderr
    # The output is checked first: with a missing result too, the output is what is named.
    done = _dynid("report", str(tmp_path / "none.json"), str(train), "-o",
                  str(tmp_path / "nowhere" / "report.html"))
    assert done.returncode == 2 and "-o" in done.stderr and "does not exist" in done.stderr
    assert "nowhere" in done.stderr and "none.json" not in done.stderr
    done = _dynid("report", str(result), str(train), "-o", str(result))
    assert done.returncode == 2 and "also an input" in done.stderr
    assert not out.exists()


def test_a_file_name_with_a_nul_is_refused(files, capsys):
    _, result, (train, _) = files  # a NUL cannot pass through a process's arguments
    assert main(["report", str(result), str(train), "-o", "r\x00.html"]) == 2
    assert "-o 'r\\x00.html': a file name cannot hold a NUL character" in capsys.readouterr().err


def test_a_failed_report_leaves_the_previous_file(case, tmp_path, monkeypatch):
    robot, result, (train, _), _, _ = case
    out = tmp_path / "report.html"
    out.write_text("the previous report")

    def broken(fig):
        raise RuntimeError("no image")

    monkeypatch.setattr("dynid.report.plots.png", broken)
    with pytest.raises(RuntimeError, match="no image"):
        dynid.write_report(robot, result, [train], out)
    assert out.read_text() == "the previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
