"""Real data: the Stäubli TX40 run of FIGAROH's example against its published base parameters.

The published regroupings are expressed through this model's base parameters (each checked
identifiable), so any choice of base gives the same comparison. Compared: the regroupings
published with a relative standard deviation below 10 %.
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import dataset

import dynid
from dynid import datasets
from dynid.identify import OLS, WLS, IdentificationData


@pytest.fixture(scope="module")
def tx40():
    root = dataset("staubli_tx40_figaroh")
    robot = datasets.tx40_robot(root)
    table = datasets.figaroh_table(root, robot)
    rec = datasets.tx40_recording(root, robot)
    return robot, rec, table, IdentificationData(robot, rec, base=table.base,
                                                 processing=datasets.TX40_PROCESSING)


def test_published_regroupings_are_this_models_base_parameters(tx40):
    """60 published regroupings for 60 base parameters here: ``F`` is square and invertible,
    so the two bases describe the same identifiable set."""
    robot, _, table, _ = tx40
    assert table.functionals.shape == (60, table.base.rank) == (60, 60)
    assert np.linalg.cond(table.functionals) < 1e6
    # The data set's settings hold priors close to its published drive terms: through the
    # mapping of FIGAROH's symbols (Ia5 = N5² Jm5 + N6² Jm6, fv5 and fv6 holding N6² fvm6,
    # fsm6 = |N6| fcm6), each well-determined one lands within 8 %.
    prior = table.functionals @ table.base.to_base(robot.prior)
    drive = table.is_drive_term() & table.well_determined("ols")
    rel = np.abs(prior - table.values["ols"]) / np.abs(table.values["ols"])
    assert drive.sum() == 15 and rel[drive].max() < 0.08


@pytest.mark.parametrize("method", ["ols", "wls"])
def test_identified_base_parameters_match_the_published_ones(tx40, method):
    """With the published script's processing choices (TX40_PROCESSING: its decimation
    instants, its dead zone), every well-determined regrouping lands within 5 % and 1.5
    published σ. The published figures carry two defects of their pipeline (joint 6's
    acceleration left at zero, each joint's regressor rows shifted against its torques), which
    alone move them by a median of 0.5–0.6 % (benchmarks/realdata.py), so the median is
    asserted at 1 %."""
    _, _, table, data = tx40
    est = (OLS() if method == "ols" else WLS()).fit(data)
    dev = table.deviations(est.result_.base_params, method)
    good = table.well_determined(method)
    z = dev / table.relative_std[method]
    print(f"{method}: median {np.median(dev[good]):.2f} %, worst {dev[good].max():.2f} %, "
          f"worst {z[good].max():.2f} published σ")
    assert np.median(dev[good]) <= 1.0
    assert dev[good].max() <= 5.0  # 4.31 % (OLS) and 3.02 % (WLS) measured
    assert dev[good & table.is_drive_term()].max() <= 5.0
    assert z[good].max() <= 1.5  # every well-determined regrouping within 1.5 published σ


def test_the_published_dead_zone_is_the_processing_used(tx40):
    """TX40_DEADZONE is the data set's own ``dq_lim_def`` (read here from its settings)."""
    import yaml

    root = dataset("staubli_tx40_figaroh")
    settings = yaml.safe_load((root / "config" / "TX40_config.yaml").read_text())
    published = settings["identification"]["robot_params"][0]["dq_lim_def"]
    np.testing.assert_allclose(datasets.TX40_DEADZONE, published, rtol=1e-12)
    p = datasets.TX40_PROCESSING
    assert p.deadzone == datasets.TX40_DEADZONE and p.rest is None
    assert (p.cutoff, p.decimate, p.skip) == (25.0, 100, 20)


@pytest.mark.parametrize("deadzone, rest", [(datasets.TX40_DEADZONE, None), ("auto", "auto")])
def test_the_final_rest_does_not_bias_the_coulomb_friction(tx40, deadzone, rest):
    """The run ends with 1.3 s at rest: left in, it pulls joint 1's Coulomb friction low; the
    published dead zone, and dynid's automatic dead zone and rest exclusion, each keep it at
    the published value."""
    robot, rec, table, _ = tx40
    i = table.names.index("fs1")
    data = IdentificationData(robot, rec, base=table.base, processing=replace(
        datasets.TX40_PROCESSING, deadzone=deadzone, rest=rest))
    kept = table.functionals[i] @ OLS().fit(data).base_params_
    plain = IdentificationData(robot, rec, base=table.base,
                               processing=replace(datasets.TX40_PROCESSING, deadzone=None))
    biased = table.functionals[i] @ OLS().fit(plain).base_params_
    published = table.values["ols"][i]
    print(f"fs1: {kept:.3f} with exclusion, {biased:.3f} without, published {published:.3f}")
    assert abs(kept - published) < 0.02 * published
    assert biased < 0.9 * published


def test_bad_dataset_folders_are_named(tmp_path):
    with pytest.raises(dynid.DataError, match=r"not the data set's folder: missing "
                                              r"urdf/tx40_mdh_modified.urdf"):
        datasets.tx40_robot(tmp_path)
    with pytest.raises(dynid.DataError, match=r"missing data/measurements_1\.npz"):
        datasets.kuka_recordings(tmp_path)


def test_a_regrouping_this_model_cannot_identify_is_refused(tx40, tmp_path):
    robot, _, _, _ = tx40
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "TX40_bp_5.csv").write_text("Izz6,1.0,1.0,1.0,1.0\n"
                                                         "m1,1.0,1.0,1.0,1.0\n")
    with pytest.raises(dynid.DataError, match=r"'m1' is not identifiable"):
        datasets.figaroh_table(tmp_path, robot)
    (tmp_path / "reference" / "TX40_bp_5.csv").write_text("Izz9,1.0,1.0,1.0,1.0\n")
    with pytest.raises(dynid.DataError, match="unknown parameter symbol 'Izz9'"):
        datasets.figaroh_table(tmp_path, robot)


def _replica():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "_figaroh_replica.py"
    spec = importlib.util.spec_from_file_location("_figaroh_replica", path)
    replica = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(replica)
    return replica


def test_dynid_is_the_defect_free_recomputation_with_its_two_own_choices(tx40):
    """What separates dynid (``TX40_PROCESSING``) from the published pipeline without its
    defects is two choices: dynid's FIR decimation filter rather than ``scipy.signal.decimate``
    (Chebyshev, twice by 10), and the dead zone tested on the velocity at each kept sample
    rather than on the decimated velocity. With both, the independent recomputation gives
    dynid's OLS and single-pass WLS regroupings within 1e-3 (1e-4 measured) where published
    with σ < 10 %, and within 1 % of a published σ everywhere. Each choice alone moves the
    median deviation from the published table by about 0.1 point, up or down
    (``benchmarks/realdata.py``)."""
    robot, _, table, data = tx40
    root = dataset("staubli_tx40_figaroh")
    recomputed = _replica().published_pipeline(root, robot, table.base, defects=False,
                                               decimation="fir", deadzone_at="sample")
    ours = (OLS().fit(data).base_params_, WLS(iterations=1).fit(data).base_params_)
    F = table.functionals
    for k, method in enumerate(("ols", "wls")):
        got, want = F @ ours[k], F @ recomputed[k]
        good = table.well_determined(method)
        assert np.max(np.abs(got - want)[good] / np.abs(want[good])) < 1e-3
        sigma = table.relative_std[method] / 100 * np.abs(table.values[method])
        assert np.max(np.abs(got - want) / sigma) < 0.01


def test_the_published_table_is_its_pipeline_with_two_defects(tx40):
    """``benchmarks/_figaroh_replica.py`` recomputes the published identification step by step
    with this model's regressor. With the published script's two defects (joint 6's
    acceleration left at zero, each joint's regressor rows 2(j−1) samples ahead of its
    torques) it gives all 60 published OLS and WLS values to their printed digits (the
    poorly determined ones within 1 % of their published σ); without
    them, motor 6's rotor inertia seen at joint 6 (Iam6) moves by more than 20 %."""
    robot, _, table, _ = tx40
    replica = _replica()
    root = dataset("staubli_tx40_figaroh")
    with_defects = replica.published_pipeline(root, robot, table.base, defects=True)
    for k, method in enumerate(("ols", "wls")):
        published = table.values[method]
        sigma = table.relative_std[method] / 100 * np.abs(published)
        off = np.abs(table.functionals @ with_defects[k] - published)
        # printed to 6 decimals; the poorly determined ones within 1 % of their σ
        assert np.all(off <= 2e-6 + 2e-3 * np.abs(published) + 0.01 * sigma)
    fixed = table.functionals @ replica.published_pipeline(root, robot, table.base,
                                                           defects=False)[1]
    i = table.names.index("Iam6")
    assert abs(fixed[i] / table.values["wls"][i] - 1) > 0.2
