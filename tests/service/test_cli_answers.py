"""The command line's answers: exit codes as documented (a taken key name 2, an unknown reference 2,
validate 1 without --instance when the shared claim is below), `report show` tables, `report
upload` to a running service, field paths in report errors, and --version."""
import json
import re

from conftest import REPO, run_cli

FIXTURES = REPO / "tests" / "fixtures" / "probe"


def test_keys_create_with_a_taken_name_exits_2(tmp_path):
    db = str(tmp_path / "k.db")
    run_cli("keys", "create", "ci", "--db", db)
    again = run_cli("keys", "create", "ci", "--db", db, check=False)
    assert again.returncode == 2 and "exists already" in again.stderr


def test_validate_without_instance_exits_1_when_the_shared_claim_is_below():
    below = run_cli("validate", str(FIXTURES / "synthetic-h100-below.json"), check=False)
    assert below.returncode == 1, below.stdout + below.stderr
    assert re.search(r"nvlink .* below", below.stdout)
    assert "shared by all" in below.stdout
    meets = run_cli("validate", str(FIXTURES / "synthetic-h100-meets.json"), check=False)
    assert meets.returncode == 0, meets.stdout + meets.stderr
    doc = json.loads(run_cli("validate", str(FIXTURES / "synthetic-h100-below.json"), "--json", check=False).stdout)
    assert len(doc["instance"]["candidates"]) > 1 and doc["any_below"] is True


def test_an_unknown_reference_in_a_workload_exits_2_naming_the_field(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"model": {"preset": "no-such-model"},
                                "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 8}}))
    done = run_cli("recommend", str(path), check=False)
    assert done.returncode == 2 and "model.preset" in done.stderr


def test_report_errors_carry_the_field_path(tmp_path):
    report = json.loads((FIXTURES / "synthetic-h100-below.json").read_text())
    del report["probes"][0]["results"][0]["stats"]["median"]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(report))
    for args in (["validate", str(path)], ["report", "show", str(path)]):
        done = run_cli(*args, check=False)
        assert done.returncode == 2
        assert "probes[0].results[0].stats.median" in done.stderr, done.stderr


def test_report_show_prints_nccl_tables():
    text = run_cli("report", "show", str(FIXTURES / "synthetic-h100-below.json")).stdout
    assert "synthetic" in text
    assert re.search(r"size\s+time \(us\)\s+algbw \(GB/s\)\s+busbw \(GB/s\)", text)
    assert "NCCL all-reduce, 8 ranks on 1 node(s)" in text
    assert re.search(r"256 MiB\s+\S+\s+\S+\s+120\.00", text)  # the largest size's busbw median
    assert "device-copy" in text


def test_report_upload_posts_to_the_service(fresh_server, tmp_path):
    srv = fresh_server.start()
    key_file = tmp_path / "key"
    key_file.write_text(srv.key + "\n")
    done = run_cli("report", "upload", str(FIXTURES / "synthetic-h100-meets.json"), "--url", srv.url,
                   "--key-file", str(key_file), "--instance", "aws:p5.48xlarge")
    assert "uploaded" in done.stdout and "synthetic" in done.stdout and "/v1/probe-reports/" in done.stdout
    key_file.write_text("lw_" + "0" * 64)
    refused = run_cli("report", "upload", str(FIXTURES / "synthetic-h100-meets.json"), "--url", srv.url,
                      "--key-file", str(key_file), "--instance", "aws:p5.48xlarge", check=False)
    assert refused.returncode == 2 and "403" in refused.stderr
    srv.stop()


def test_version():
    done = run_cli("--version")
    assert re.fullmatch(r"linkwise \d+\.\d+\.\d+\n", done.stdout)


def test_instances_columns_picks_and_orders_the_table():
    text = run_cli("instances", "--gpu", "H100", "--columns", "price_usd_per_hour,id").stdout
    header = text.splitlines()[0].split()
    assert header[:3] == ["PRICE", "($/h)", "ID"] and "GPU" not in header
    bad = run_cli("instances", "--columns", "id,colour", check=False)
    assert bad.returncode == 2 and "--columns" in bad.stderr and "price_usd_per_hour" in bad.stderr
    # Every field of the contract but sources can be a column; the default table stays id to price_region.
    contract = json.loads(run_cli("instances", "--json").stdout)["items"][0]
    fields = [k for k in contract if k != "sources"]
    every = run_cli("instances", "--gpu", "H100", "--columns", ",".join(fields)).stdout.splitlines()[0]
    assert "VCPUS" in every and "REGIONS" in every and "SPOT" in every
    assert "VCPUS" not in run_cli("instances", "--gpu", "H100").stdout.splitlines()[0]
    empty = run_cli("instances", "--columns", "", check=False)
    assert empty.returncode == 2 and "--columns" in empty.stderr


def test_no_colour_codes_when_piped():
    below = run_cli("validate", str(FIXTURES / "synthetic-h100-below.json"), check=False)
    assert "\033[" not in below.stdout and "below" in below.stdout


def test_a_global_top_k_on_one_instance_type_points_to_per_instance():
    text = run_cli("recommend", str(REPO / "data/examples/recommend-llama3.1-70b.json")).stdout
    instances = {line.split()[2] for line in text.splitlines() if " x " in line and "tp=" in line}
    assert instances  # plans were printed
    # The hint is there exactly when every plan is on one instance type.
    assert ("--per instance gives the best plan of each instance type" in text) == (len(instances) == 1)
    per = run_cli("recommend", str(REPO / "data/examples/recommend-llama3.1-70b.json"), "--per", "instance").stdout
    assert "--per instance gives" not in per
