"""ParameterSet: naming, lookup and value handling."""

from __future__ import annotations

import numpy as np
import pytest

import dynid
from dynid.models import Parameter, ParameterSet
from dynid.models.parameters import link_parameters


def test_lookup_and_groups(panda):
    params = panda.parameters
    assert params.index("link3.mcx") == 21
    assert params["link3.mcx"] is params[21]
    assert list(params.where(group="actuator")) == list(range(84, 91))
    assert params.links == tuple(f"link{i}" for i in range(1, 8))
    assert list(params.link_block("link2")) == list(range(10, 20))
    assert params[10:20].names == tuple(f"link2.{k}" for k in dynid.models.LINK_KINDS)
    assert "joint7.fc" in params and "joint7.fo" not in params
    assert repr(params) == "ParameterSet(91 parameters: 70 link, 14 friction, 7 actuator)"


def test_vectors_and_dicts(panda):
    params = panda.parameters
    values = params.vector({"link1.m": 5.0})
    assert values[0] == 5.0 and values[1] == params.priors[1]
    assert params.as_dict(values)["link1.m"] == 5.0
    with pytest.raises(dynid.ModelError, match="values missing for 90 parameters"):
        params.vector({"link1.m": 5.0}, default="error")
    with pytest.raises(dynid.ModelError, match=r"values: expected shape \(91,\)"):
        params.as_dict(np.zeros(3))


def test_unknown_names_suggest_close_ones(panda):
    with pytest.raises(dynid.ModelError, match=r"no parameter named 'link3.mxc'; did you mean"):
        panda.parameters.index("link3.mxc")


def test_invalid_sets_raise():
    with pytest.raises(dynid.ModelError, match=r"'link1\.m' appears twice"):
        ParameterSet(link_parameters("link1") + link_parameters("link1"))
    with pytest.raises(dynid.ModelError, match="group must be one of"):
        Parameter("a", "b", "kg", "mass")
    with pytest.raises(dynid.ModelError, match=r"lower bound 1 exceeds upper bound 0"):
        Parameter("a", "b", "kg", "link", lower=1, upper=0)
