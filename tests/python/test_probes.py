"""Probe reports from Python: probe() without CUDA/GPU, loading and checking reports, validate."""

import json
import pathlib

import pytest

import linkwise

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "probe"


def test_probe_without_cuda_build_or_gpu_is_unsupported():
    if linkwise.has_probes():
        pytest.skip("built with the CUDA probes: probe() may run here")
    with pytest.raises(linkwise.UnsupportedError) as caught:
        linkwise.probe(quick=True)
    error = caught.value
    assert isinstance(error, RuntimeError) and isinstance(error, linkwise.Error)
    assert error.kind == "unsupported"
    assert "LINKWISE_CUDA=ON" in str(error)


def test_probe_with_an_unknown_name_is_a_value_error_naming_only():
    with pytest.raises(ValueError) as caught:
        linkwise.probe(only=["no-such-probe"])
    assert caught.value.field == "only" and "no-such-probe" in str(caught.value)


def test_load_missing_report_is_an_error(tmp_path):
    with pytest.raises(linkwise.Error):
        linkwise.ProbeReport.load(tmp_path / "missing.json")


def test_malformed_report_is_a_value_error_naming_the_field(tmp_path):
    with pytest.raises(ValueError) as caught:
        linkwise.ProbeReport.from_dict({"schema_version": 1})
    assert caught.value.field
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"schema_version": "one", "environment": {}, "probes": []}))
    with pytest.raises(linkwise.InvalidInputError) as caught:
        linkwise.ProbeReport.load(path)
    assert "schema_version" in caught.value.field

