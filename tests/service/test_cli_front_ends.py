"""The command line's edges: bounded file reads, readable bounds, exit 2 for bad input, nothing
written before the input is checked, a plan without a price, the GPU list's envelope."""
import json

from conftest import REPO, run_cli

PROBE = REPO / "tests" / "fixtures" / "probe"
SKYPILOT = REPO / "tests" / "fixtures" / "catalog" / "skypilot" / "lambda-vms-excerpt.csv"


def test_files_are_read_up_to_a_bound():
    for args, field in [(["plan", "/dev/zero"], "WORKLOAD"),
                        (["catalog", "coverage", "--skypilot", "/dev/zero", "--provider", "aws"], "--skypilot")]:
        done = run_cli(*args, check=False)
        assert done.returncode == 2 and f"{field}: /dev/zero is over the size limit" in done.stderr, done.stderr


def test_import_skypilot_checks_before_it_writes(tmp_path):
    db = tmp_path / "c.db"
    for args in (["/dev/zero", "--provider", "aws"], [str(SKYPILOT), "--provider", "lambda", "--as-of", "2026-13-45"]):
        done = run_cli("catalog", "import-skypilot", *args, "--db", str(db), check=False)
        assert done.returncode == 2, done.stderr
        assert "internal error" not in done.stderr and not db.exists()


def test_keys_create_checks_the_name_before_the_database(tmp_path):
    db = tmp_path / "k.db"
    done = run_cli("keys", "create", "", "--db", str(db), check=False)
    assert done.returncode == 2 and "key name" in done.stderr and not db.exists()


def test_bad_options_exit_2_with_a_readable_message(tmp_path):
    for args, words in [(["instances", "--gpu", ""], "gpu:"),
                        (["instances", "--min-gpus", "-1"], "min_gpus: expected an integer >= 0, got -1"),
                        (["instances", "--min-gpu-memory", "-1"], "min_gpu_memory_gb: expected a finite number >= 0"),
                        (["instances", "--db", str(tmp_path)], "is a directory"),
                        (["serve", "--host", "999.1.1.1", "--port", "1"], "--host"),
                        (["report", "upload", str(PROBE / "synthetic-h100-meets.json"), "--key-file",
                          "/nonexistent", "--url", "http://127.0.0.1:1"], "--key-file: no file /nonexistent")]:
        done = run_cli(*args, check=False)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)
        assert len(done.stderr) < 400, done.stderr  # no 300-digit DBL_MAX


def test_an_unreachable_service_is_said_in_words(tmp_path):
    key = tmp_path / "key"
    key.write_text("lw_" + "0" * 64)
    done = run_cli("report", "upload", str(PROBE / "synthetic-h100-meets.json"), "--key-file", str(key),
                   "--url", "http://127.0.0.1:1", check=False)
    assert done.returncode == 3 and "cannot reach http://127.0.0.1:1: the connection failed" in done.stderr


def test_a_plan_without_a_price_has_no_stray_comma(tmp_path):
    workload = json.loads((REPO / "data" / "examples" / "custom-dgx-a100-gpt3-175b.json").read_text())
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    out = run_cli("plan", str(path)).stdout
    assert not any(line.startswith(", ") for line in out.splitlines()), out
    assert "job " in out and " h" in out


def test_a_report_of_another_gpu_is_refused_by_plan(tmp_path):
    workload = {"model": {"preset": "llama3.1-8b"},
                "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e9},
                "hardware": {"instance": "aws:p6-b200.48xlarge"},
                "layout": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1}}
    path = tmp_path / "b200.json"
    path.write_text(json.dumps(workload))
    done = run_cli("plan", str(path), "--report", str(PROBE / "synthetic-h100-meets.json"), check=False)
    assert done.returncode == 2 and "H100" in done.stderr and "B200" in done.stderr, done.stderr


def test_a_malformed_report_error_names_the_report_file(tmp_path):
    workload = {"model": {"preset": "llama3.1-8b"},
                "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e9},
                "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 1, "pp": 1, "dp": 8}}
    path, report = tmp_path / "w.json", tmp_path / "e.json"
    path.write_text(json.dumps(workload))
    report.write_text("{}")
    done = run_cli("plan", str(path), "--report", str(report), check=False)
    assert done.returncode == 2 and f"--report {report}: " in done.stderr, done.stderr


def test_a_serving_plan_says_whether_it_meets_its_latency_target(tmp_path):
    workload = {"model": {"preset": "llama3.1-70b"},
                "job": {"kind": "inference", "prompt_len": 2048, "output_len": 512, "concurrent": 64,
                        "latency_target_ms": 5},
                "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 8, "pp": 1, "dp": 1}}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    out = run_cli("plan", str(path)).stdout
    # Memory fits, the target does not: "fits" is not the whole verdict.
    assert "fits (margin" in out and "but it does not qualify:\n  - latency_target:" in out, out
    assert "misses job.latency_target_ms" in out, out
    workload["job"]["latency_target_ms"] = 500
    path.write_text(json.dumps(workload))
    out = run_cli("plan", str(path)).stdout
    assert "meets job.latency_target_ms" in out and "does not qualify" not in out, out


def test_gpus_json_is_the_rest_envelope():
    doc = json.loads(run_cli("gpus", "--json").stdout)
    assert doc["total"] == len(doc["items"]) >= 15


def test_a_serving_plan_says_which_limit_sets_its_concurrency(tmp_path):
    """max_concurrent's limit in words: vLLM's sequence cap with memory left (70B on 8 H100 at TP 8),
    the KV pool where long prompts fill it first."""
    workload = json.loads((REPO / "data" / "examples" / "inference-llama3.1-70b.json").read_text())
    workload["job"].update(engine="vllm", concurrent="max")
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    out = run_cli("plan", str(path)).stdout
    assert "at most 256 (the engine's batch limit, KV memory left over)" in out, out
    workload["job"].update(prompt_len=32768, output_len=1024)
    path.write_text(json.dumps(workload))
    out = run_cli("plan", str(path)).stdout
    assert "(what its KV pool holds)" in out and "batch limit" not in out, out


def test_a_serving_plan_prices_output_tokens_and_a_training_plan_tokens():
    """A serving job's tokens/s and cost count the tokens it generates, and say so; a training job's
    count every token trained on."""
    serving = run_cli("plan", str(REPO / "data" / "examples" / "inference-llama3.1-70b.json")).stdout
    assert "per million output tokens" in serving, serving
    training = run_cli("plan", str(REPO / "data" / "examples" / "pretrain-llama3.1-70b-p5.json")).stdout
    assert "per million tokens" in training and "output tokens" not in training, training
