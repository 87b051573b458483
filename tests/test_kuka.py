"""Real data: the KUKA LWR4+ measurements of FloBaRoID (link-side joint torque sensors).

The recordings were filtered when they were captured and carry velocities and accelerations;
FloBaRoID skips the first 500 samples of each. Its published physically consistent estimate,
identified on measurements 2 and 3, predicts measurement 1 with a relative error of 2.81 %
(README of the dataset). Its settings bound each link mass to ±50 % of the CAD prior and the
total to ±30 %; the same bounds are used here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import check_physical, dataset

from dynid import DynidWarning, base_parameters, datasets
from dynid.identify import OLS, IdentificationData, PhysicallyConsistent, Processing, validate

FLOBAROID_VALIDATION = 2.81  # %, relative error ‖τ̂ − τ‖_F / ‖τ‖_F on measurements_1


@pytest.fixture(scope="module")
def kuka():
    root = dataset("kuka_lwr4_flobaroid")
    robot = datasets.kuka_robot(root)
    return robot, datasets.kuka_recordings(root), base_parameters(robot)


def _consistent(robot):
    prior_mass = robot.prior[robot.parameters.where(kind="m")].sum()
    return PhysicallyConsistent(mass_bounds=0.5, total_mass=(0.7 * prior_mass, 1.3 * prior_mass))


def test_recordings_read_as_the_dataset_describes(kuka):
    robot, recordings, _ = kuka
    rec = recordings[1]
    assert rec.n_samples == 5027 - 500 and rec.n == robot.n == 7
    assert rec.rate == pytest.approx(200.0, rel=1e-3)
    assert rec.is_uniform()  # the logger's late stamps replaced by their least-squares line
    assert rec.velocities is not None and rec.accelerations is not None


def test_consistent_estimate_beats_the_published_validation_error(kuka):
    robot, recordings, base = kuka
    data = IdentificationData(robot, [recordings[2], recordings[3]], base=base)
    est = _consistent(robot).fit(data)
    assert est.result_.solver["status"] == "optimal"
    assert est.result_.solver["lmi_min_eigenvalue"] >= 1e-6 - 1e-9
    got = validate(robot, est.result_, recordings[1]).overall_relative_error
    assert got <= FLOBAROID_VALIDATION
    prior = validate(robot, robot.prior, recordings[1]).overall_relative_error
    assert prior > 3 * got  # the CAD model alone is far off (FloBaRoID: 9.24 % on its fit)


def test_physical_consistency_helps_on_an_unseen_trajectory(kuka):
    """Trained on measurement 1 and validated on 3 (a different, larger motion), the
    consistent estimate extrapolates better than ordinary least squares."""
    robot, recordings, base = kuka
    data = IdentificationData(robot, recordings[1], base=base)
    est = _consistent(robot).fit(data)
    check_physical(robot, est.params_)
    consistent = validate(robot, est.result_, recordings[3])
    ols = validate(robot, OLS().fit(data).result_, recordings[3])
    assert consistent.overall_relative_error < 0.6 * ols.overall_relative_error
    assert consistent.overall_relative_error < 5.0  # 4.77 % measured; 5.13 % before the
    # model filter (dynid.identify.modelband)


def test_the_model_filtered_as_the_torques_were_predicts_run_three_within_5_percent(kuka):
    """The logger low-passed the torques (6th-order Butterworth at 2 Hz, forward and backward,
    after a median filter) more than the positions (3 Hz): identification finds that filter
    on the training run alone (about 2 Hz when asked for a 6th-order one) and passes the
    regressor through it, and validation the prediction. The physically consistent estimate
    from run 1 then predicts run 3 within 5 % (4.91 % measured, 5.24 % without the filter),
    and 2 + 3 → 1 improves too (2.34 %, 2.45 % without)."""
    robot, recordings, base = kuka
    sixth = IdentificationData(robot, recordings[1], base=base, processing=Processing(order=6))
    assert sixth.processing.model_cutoff == pytest.approx(2.0, rel=0.15)
    data = IdentificationData(robot, recordings[1], base=base)
    assert data.processing.model_cutoff is not None
    est = PhysicallyConsistent().fit(data)
    assert validate(robot, est.result_, recordings[3]).overall_relative_error <= 5.0
    plain = IdentificationData(robot, recordings[1], base=base,
                               processing=Processing(model_cutoff=None))
    before = validate(robot, PhysicallyConsistent().fit(plain).result_, recordings[3])
    assert before.overall_relative_error > 5.0


def test_one_to_three_is_limited_by_what_run_one_shows(kuka):
    """Run 3 moves joints 1, 3, 5, 6 and 7 about twice as fast as run 1, so 1 → 3 is an
    extrapolation: the model fits run 3 itself within 3 % (2.10 % measured), and trained on
    runs 1 and 2 (the same trajectory twice) the consistent estimate predicts run 3 within 5 %
    (4.35 % measured, 4.91 % from run 1)."""
    robot, recordings, base = kuka
    peak = {k: abs(recordings[k].velocities).max(axis=0) for k in (1, 3)}
    assert all(peak[3][j] > 1.7 * peak[1][j] for j in (0, 2, 4, 5, 6))
    own = PhysicallyConsistent().fit(IdentificationData(robot, recordings[3], base=base))
    assert validate(robot, own.result_, recordings[3]).overall_relative_error < 3.0
    both = PhysicallyConsistent().fit(IdentificationData(robot, [recordings[1], recordings[2]],
                                                         base=base))
    assert validate(robot, both.result_, recordings[3]).overall_relative_error < 5.0


def test_masses_the_data_do_not_determine_are_named_when_left_unbounded(kuka):
    """Without mass bounds the consistent fit places the masses that enter no base parameter
    by its constraints alone (hundreds of kilograms on this 16 kg arm): it warns, naming each
    link, its mass and its prior, and the bound to give. Its masses are checked here against
    the base map independently: each named link's mass column of B is zero."""
    robot, recordings, base = kuka
    data = IdentificationData(robot, recordings[1], base=base)
    with pytest.warns(DynidWarning, match=r"enter no base parameter") as caught:
        est = PhysicallyConsistent().fit(data)
    text = next(str(w.message) for w in caught if "enter no base parameter" in str(w.message))
    params = robot.parameters
    named = [link for link in params.links if f"{link} " in text]
    assert named
    for link in named:
        i = params.index(f"{link}.m")
        assert not np.any(base.matrix[:, i])
        assert not 0.5 <= est.params_[i] / params[f"{link}.m"].prior <= 2
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*enter no base parameter")
        _consistent(robot).fit(data)
