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


def test_probe_in_a_cuda_build_runs_or_says_there_is_no_gpu():
    if not linkwise.has_probes():
        pytest.skip("built without the CUDA probes (pip install . -Ccmake.define.LINKWISE_CUDA=ON)")
    try:
        report = linkwise.probe(quick=True, only=["topology"])
    except linkwise.UnsupportedError as error:
        assert "GPU" in str(error)
        return
    assert isinstance(report, linkwise.ProbeReport) and report.environment["gpus"]
    assert [p["name"] for p in report.probes] == ["topology"]


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



# The probes helper's labelled synthetic reports (tests/fixtures/probe/make_synthetic.py): test
# inputs written against aws:p5.48xlarge's claims, not measurements.
MEETS = FIXTURES / "synthetic-h100-meets.json"
BELOW = FIXTURES / "synthetic-h100-below.json"
VERDICT_FIELDS = ["claim", "verdict", "claimed", "claimed_unit", "claim_convention", "expected",
                  "measured", "unit", "efficiency", "min_efficiency", "measurement", "reason"]


def _verdicts(result):
    return {v.claim: v.verdict for v in result.verdicts}


def test_load_report_round_trips():
    report = linkwise.ProbeReport.load(MEETS)
    assert report.schema_version == 1
    assert report.environment["hostname"] == "synthetic-host"
    assert {p["name"] for p in report.probes} >= {"nccl", "device-memory", "host-device"}
    assert linkwise.ProbeReport.from_dict(report.to_dict()) == report
    assert json.loads(report.to_json()) == report.to_dict()
    assert "synthetic-host" in repr(report)


def test_validate_meets_and_below():
    meets = linkwise.validate(MEETS, instance="aws:p5.48xlarge")
    assert isinstance(meets, linkwise.ValidationResult)
    assert meets.instance["id"] == "aws:p5.48xlarge" and meets.instance["detected_by"] == "option"
    assert _verdicts(meets)["nvlink"] == "meets"
    assert meets.any_below is False
    below = linkwise.validate(linkwise.ProbeReport.load(BELOW), instance="aws:p5.48xlarge")
    assert _verdicts(below)["nvlink"] == "below"
    assert below.any_below is True
    nvlink = next(v for v in below.verdicts if v.claim == "nvlink")
    assert nvlink.efficiency < nvlink.min_efficiency and nvlink.unit == "GB/s"
    frame = below.to_pandas()
    assert list(frame.columns) == VERDICT_FIELDS and len(frame) == len(below.verdicts)
    assert "<table>" in below._repr_html_()


def test_validate_accepts_path_report_or_dict_alike():
    from_path = linkwise.validate(str(MEETS), instance="aws:p5.48xlarge")
    from_dict = linkwise.validate(json.loads(MEETS.read_text()), instance="aws:p5.48xlarge")
    assert from_path == from_dict


def test_validate_unknown_instance_is_a_key_error():
    with pytest.raises(KeyError) as caught:
        linkwise.validate(MEETS, instance="aws:p99.huge")
    assert "aws:p99.huge" in str(caught.value)


def test_validate_equals_cli_json():
    import subprocess
    from conftest import linkwise_bin
    path = linkwise_bin()
    if path is None:
        pytest.skip("LINKWISE_BIN is not set: no CLI to compare with")
    for report, code in ((MEETS, 0), (BELOW, 1)):
        done = subprocess.run([path, "validate", str(report), "--instance", "aws:p5.48xlarge", "--json"],
                              capture_output=True, text=True)
        assert done.returncode == code, done.stderr
        assert json.loads(done.stdout) == linkwise.validate(report, instance="aws:p5.48xlarge").to_dict()


def test_validate_fleet_is_the_core_rule_the_cli_and_service_share():
    # Issue 15: the fleet verdict is core's; synthetic reports count only when asked.
    left_out = linkwise.validate_fleet([MEETS, BELOW], instance="aws:p5.48xlarge")
    assert left_out["instance"] == "aws:p5.48xlarge"
    assert left_out["synthetic_reports"] == 2 and left_out["reports"] == 0
    fleet = linkwise.validate_fleet([MEETS, MEETS, BELOW], instance="aws:p5.48xlarge", include_synthetic=True)
    nvlink = next(c for c in fleet["claims"] if c["claim"] == "nvlink")
    assert nvlink["verdicts"]["meets"] == 2 and nvlink["verdicts"]["below"] == 1
    assert nvlink["verdict"] == "meets"
    import subprocess
    from conftest import linkwise_bin
    path = linkwise_bin()
    if path is None:
        return
    done = subprocess.run([path, "validate", "--fleet", "--include-synthetic", str(MEETS), str(MEETS), str(BELOW),
                           "--instance", "aws:p5.48xlarge", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == fleet


def test_plan_takes_measured_links_from_a_report():
    workload = {
        "model": {"preset": "llama3.1-70b"},
        "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "tokens": 2e12},
        "hardware": {"instance": "aws:p5.48xlarge", "nodes": 16},
        "layout": {"tp": 8, "pp": 4, "dp": 4, "recompute": "selective", "virtual_stages": 5},
    }
    claimed = linkwise.plan(workload)
    healthy = linkwise.plan(workload, report=MEETS)
    degraded = linkwise.plan(workload, report=linkwise.ProbeReport.load(BELOW))
    assert claimed.bandwidth_source["intra_node"].startswith("claimed")
    assert healthy.bandwidth_source["intra_node"].startswith("measured")
    assert degraded.links["intra_node_busbw_gbytes_per_s"] < healthy.links["intra_node_busbw_gbytes_per_s"]
    assert degraded.time_s.tp_comm > healthy.time_s.tp_comm
    assert degraded.step_time_s >= healthy.step_time_s
