"""POST /v1/plans and /v1/recommendations answer exactly what `linkwise plan|recommend --json`
prints for the same workload, take a stored probe report in place of the catalog's claims, and
name the field of a bad workload."""
import json

import pytest

import requests

from conftest import REPO, run_cli
from reports import h100_node_report

EXAMPLES = REPO / "data" / "examples"
PLAN_FILE = EXAMPLES / "pretrain-llama3.1-70b-p5.json"
RECOMMEND_FILE = EXAMPLES / "recommend-llama3.1-70b.json"


def post(server, path, body, **params):
    return requests.post(server.url + path, data=json.dumps(body), params=params, timeout=60,
                         headers={"Content-Type": "application/json"})


def test_plan_is_the_cli_plan(server):
    workload = json.loads(PLAN_FILE.read_text())
    r = post(server, "/v1/plans", workload)
    assert r.status_code == 200, r.text
    cli = json.loads(run_cli("plan", str(PLAN_FILE), "--json", "--db", str(server.db)).stdout)
    assert r.json() == cli
    plan = r.json()
    assert plan["instance"] == "aws:p5.48xlarge" and plan["gpus"] == 128
    assert plan["bandwidth_source"]["intra_node"].startswith("claimed")


def test_recommendations_are_the_cli_recommendations(server):
    workload = json.loads(RECOMMEND_FILE.read_text())
    r = post(server, "/v1/recommendations", workload, top=3)
    assert r.status_code == 200, r.text
    cli = json.loads(run_cli("recommend", str(RECOMMEND_FILE), "--top", "3", "--json", "--db", str(server.db)).stdout)
    assert r.json() == cli
    assert 1 <= len(r.json()["results"]) <= 3


def test_plan_with_a_stored_probe_report(server):
    report = h100_node_report(200, 3000)  # a weak NVLink all-reduce: 200 GB/s busbw
    up = requests.post(server.url + "/v1/probe-reports", data=json.dumps(report), timeout=30,
                       params={"instance": "aws:p5.48xlarge"},
                       headers={"Content-Type": "application/json", "Authorization": "Bearer " + server.key})
    assert up.status_code == 201, up.text
    workload = json.loads(PLAN_FILE.read_text())
    claimed = post(server, "/v1/plans", workload).json()
    measured = post(server, "/v1/plans", workload, probe_report=up.json()["id"])
    assert measured.status_code == 200, measured.text
    m = measured.json()
    assert f"stored probe report {up.json()['id']}" in m["bandwidth_source"]["intra_node"]
    assert m["links"]["intra_node_busbw_gbytes_per_s"] != claimed["links"]["intra_node_busbw_gbytes_per_s"]


def test_a_probe_report_of_another_machine_is_refused(server):
    # An 8 x H100 report stands in for the claims of H100 machines only.
    report = h100_node_report(360, 3000)
    up = requests.post(server.url + "/v1/probe-reports", data=json.dumps(report), timeout=30,
                       params={"instance": "aws:p5.48xlarge"},
                       headers={"Content-Type": "application/json", "Authorization": "Bearer " + server.key})
    assert up.status_code == 201, up.text
    rid = up.json()["id"]
    b200 = json.loads(PLAN_FILE.read_text())
    b200["hardware"] = {"instance": "aws:p6-b200.48xlarge", "nodes": 16}
    r = post(server, "/v1/plans", b200, probe_report=rid)
    assert r.status_code == 400 and r.json()["field"] == "probe_report", r.text
    assert "H100" in r.json()["detail"] and "B200" in r.json()["detail"], r.text
    custom = dict(b200, hardware={"custom": {"gpu_model": "A100-SXM4-80GB", "gpu_count": 8,
                                             "intra_node_fabric": "nvswitch", "network_type": "infiniband",
                                             "network_gbits_per_s": 1600}, "nodes": 16})
    r = post(server, "/v1/plans", custom, probe_report=rid)
    assert r.status_code == 400 and r.json()["field"] == "probe_report", r.text
    # Over several machines: applied to the H100 ones, a warning on the others.
    search = json.loads(RECOMMEND_FILE.read_text())
    search.pop("hardware", None)
    search["constraints"] = {"instances": ["aws:p5.48xlarge", "aws:p6-b200.48xlarge"]}
    r = post(server, "/v1/recommendations", search, probe_report=rid, per="instance")
    assert r.status_code == 200, r.text
    for plan in r.json()["results"]:
        h100 = plan["gpu_model"].startswith("H100")
        assert plan["bandwidth_source"]["hbm"].startswith("measured") == h100
        assert any("probe report not applied" in w for w in plan["warnings"]) != h100


def test_bad_workloads_name_the_field(server):
    workload = json.loads(PLAN_FILE.read_text())
    unknown = dict(workload, model={"preset": "no-such-model"})
    r = post(server, "/v1/plans", unknown)
    # An unknown reference inside the body: 422, not 404 (the URL names an endpoint that exists).
    assert r.status_code == 422 and r.json()["field"] == "model.preset", r.text
    assert r.json()["type"] == "urn:linkwise:problem:unknown_reference"
    r = post(server, "/v1/recommendations", dict(json.loads(RECOMMEND_FILE.read_text()),
                                                 hardware={"instance": "aws:p99.none"}))
    assert r.status_code == 422 and r.json()["field"] == "hardware.instance", r.text
    bad_layout = json.loads(PLAN_FILE.read_text())
    bad_layout["layout"]["dp"] = 3
    r = post(server, "/v1/plans", bad_layout)
    assert r.status_code == 400 and r.json()["field"].startswith("layout"), r.text
    r = post(server, "/v1/plans", dict(workload, colour="red"))
    assert r.status_code == 400 and "colour" in r.json()["field"], r.text
    r = post(server, "/v1/recommendations", json.loads(RECOMMEND_FILE.read_text()), top=0)
    assert r.status_code == 400 and r.json()["field"] == "top", r.text
    r = post(server, "/v1/plans", workload, probe_report=999999)
    assert r.status_code == 400 and r.json()["field"] == "probe_report", r.text
    r = requests.post(server.url + "/v1/recommendations", data="{", timeout=10,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["field"] == "body", r.text


@pytest.mark.parametrize("field, value", [
    ("vcpus", 0), ("vcpus", -8), ("vcpus", 2**31), ("vcpus", 1e300), ("vcpus", 9.5), ("vcpus", "96"), ("vcpus", True),
    ("memory_gib", 0), ("memory_gib", -1), ("memory_gib", 1e300), ("memory_gib", "2048"), ("memory_gib", [1]),
])
def test_a_custom_host_field_out_of_range_is_a_400_naming_it(server, field, value):
    """The host a custom machine states (CPU offload's step and memory): every bad value is refused."""
    workload = {"model": {"preset": "llama3.1-8b"},
                "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 64, "tokens": 1e9, "offload": "optimizer"},
                "hardware": {"custom": {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
                                        field: value}},
                "layout": {"tp": 1, "pp": 1, "zero": 3}}
    r = post(server, "/v1/plans", workload)
    assert r.status_code == 400 and r.json()["field"] == "hardware.custom." + field, r.text


def test_a_custom_host_times_the_offload_step_and_checks_its_memory(server):
    workload = {"model": {"preset": "llama3.1-8b"},
                "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 64, "tokens": 1e9, "offload": "optimizer"},
                "hardware": {"custom": {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
                                        "vcpus": 96, "memory_gib": 1024}},
                "layout": {"tp": 1, "pp": 1, "zero": 3}}
    full = post(server, "/v1/plans", workload).json()
    workload["hardware"]["custom"]["vcpus"] = 24
    quarter = post(server, "/v1/plans", workload).json()
    # A quarter of the reference host's threads: the host step takes 4x; the PCIe part is the same.
    assert quarter["time_s"]["offload"] > full["time_s"]["offload"] * 2
    workload["hardware"]["custom"]["memory_gib"] = 16
    small = post(server, "/v1/plans", workload).json()
    assert small["fits"] is False and small["why_not"][0].startswith("host memory:")


def test_grad_reduce_dtype_halves_the_gradient_buffer_and_a_bad_one_is_named(server):
    """job.grad_reduce_dtype bf16 keeps Megatron-Core's gradients in 2 bytes a parameter, not 4; a value
    it does not know, or a stack that keeps its own (DeepSpeed), is a 400 naming the field."""
    workload = json.loads(PLAN_FILE.read_text())
    fp32 = post(server, "/v1/plans", workload).json()
    workload["job"]["grad_reduce_dtype"] = "bf16"
    bf16 = post(server, "/v1/plans", workload).json()
    assert bf16["memory_gb"]["gradients"] == pytest.approx(fp32["memory_gb"]["gradients"] / 2, rel=1e-9)
    assert bf16["memory_gb"]["total"] < fp32["memory_gb"]["total"]
    for job in ({"grad_reduce_dtype": "fp8"}, {"grad_reduce_dtype": "bf16", "framework": "deepspeed"}):
        r = post(server, "/v1/plans", dict(workload, job=dict(workload["job"], **job)))
        assert r.status_code == 400 and r.json()["field"] == "job.grad_reduce_dtype", r.text


def test_a_fused_loss_keeps_less_of_the_logits(server):
    """job.loss fused: Transformer Engine's cross-entropy under the default profile (ZeRO-1 here) keeps
    6 bytes per vocab entry of the logits, not 10; an unknown loss is named."""
    workload = json.loads(PLAN_FILE.read_text())
    # No pipeline: the logits sit beside the layers' activations on every GPU.
    workload["layout"].update(pp=1, dp=16, virtual_stages=1)
    eager = post(server, "/v1/plans", workload).json()
    workload["job"]["loss"] = "fused"
    fused = post(server, "/v1/plans", workload).json()
    assert fused["memory_gb"]["activations"] < eager["memory_gb"]["activations"]
    r = post(server, "/v1/plans", dict(workload, job=dict(workload["job"], loss="chunked")))
    assert r.status_code == 400 and r.json()["field"] == "job.loss", r.text


def test_lora_targets_and_an_fp8_base_are_the_same_fields_over_rest(server):
    """job.lora_targets attention leaves the MLP frozen (fewer adapter states); job.lora_base fp8 halves
    the base weights and needs fp8 GEMMs, or the 400 names it."""
    workload = {"model": {"preset": "llama3.1-8b"}, "hardware": {"instance": "aws:p5.48xlarge"},
                "job": {"kind": "lora", "seq_len": 4096, "global_batch": 64, "tokens": 1e8, "precision": "fp8"},
                "layout": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1}}
    every = post(server, "/v1/plans", workload).json()
    attention = post(server, "/v1/plans", dict(workload, job=dict(workload["job"], lora_targets="attention"))).json()
    assert attention["memory_gb"]["optimizer"] < every["memory_gb"]["optimizer"]
    assert attention["memory_gb"]["activations"] < every["memory_gb"]["activations"]
    fp8 = post(server, "/v1/plans", dict(workload, job=dict(workload["job"], lora_base="fp8"))).json()
    assert fp8["memory_gb"]["weights"] < 0.51 * every["memory_gb"]["weights"]
    r = post(server, "/v1/plans", dict(workload, job=dict(workload["job"], lora_base="fp8", precision="bf16")))
    assert r.status_code == 400 and r.json()["field"] == "job.lora_base", r.text


@pytest.mark.parametrize("field", ["grad_reduce_dtype", "loss", "lora_targets", "lora_base"])
@pytest.mark.parametrize("value", [0, -1, 2**31, 1e300, True, [], {}, "", "BF16"])
def test_the_new_job_switches_refuse_bad_values_by_name(server, field, value):
    """job.grad_reduce_dtype, job.loss, job.lora_targets and job.lora_base take only their spellings:
    a number, a boolean, an array, an object or an unknown string is a 400 naming the field."""
    job = {"kind": "lora", "seq_len": 4096, "global_batch": 64, "tokens": 1e8, "precision": "fp8"}
    if field in ("grad_reduce_dtype", "loss"):
        job = {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e8, "precision": "fp8"}
    workload = {"model": {"preset": "llama3.1-8b"}, "hardware": {"instance": "aws:p5.48xlarge"},
                "job": dict(job, **{field: value}), "layout": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1}}
    r = post(server, "/v1/plans", workload)
    assert r.status_code == 400 and r.json()["field"] == "job." + field, r.text


@pytest.mark.parametrize("value", [0, -1, 2**31, 1e300, True, [], {}, "", "8", 2.5, 3])
def test_dp_shard_refuses_bad_values_by_name(server, value):
    """layout.dp_shard, hybrid sharding's group: a whole number of ranks that divides dp. Anything else,
    or a group below dp at ZeRO 0, is a 400 naming the field."""
    workload = {"model": {"preset": "llama3.1-8b"}, "hardware": {"instance": "aws:p5.48xlarge", "nodes": 2},
                "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e8},
                "layout": {"tp": 1, "pp": 1, "dp": 16, "micro_batch": 1, "zero": 3, "dp_shard": value}}
    r = post(server, "/v1/plans", workload)
    assert r.status_code == 400 and r.json()["field"] == "layout.dp_shard", r.text
    workload["layout"].update(zero=0, dp_shard=8)
    r = post(server, "/v1/plans", workload)
    assert r.status_code == 400 and r.json()["field"] == "layout.dp_shard", r.text


def test_a_hybrid_plan_is_the_cli_plan_and_reads_back(server, tmp_path):
    """A plan with layout.dp_shard: REST answers what the CLI prints, the layout carries dp_shard, and
    the printed layout plans again to the same step."""
    workload = {"model": {"preset": "llama3.1-8b"}, "hardware": {"instance": "aws:p5.48xlarge", "nodes": 2},
                "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e8},
                "layout": {"tp": 1, "pp": 1, "dp": 16, "micro_batch": 1, "zero": 3, "dp_shard": 8}}
    r = post(server, "/v1/plans", workload)
    assert r.status_code == 200, r.text
    path = tmp_path / "hybrid.json"
    path.write_text(json.dumps(workload))
    assert r.json() == json.loads(run_cli("plan", str(path), "--json", "--db", str(server.db)).stdout)
    assert r.json()["layout"]["dp_shard"] == 8
    again = post(server, "/v1/plans", dict(workload, layout=r.json()["layout"])).json()
    assert again["step_time_s"] == r.json()["step_time_s"]


@pytest.mark.parametrize("job, field", [
    ({"framework": "auto", "offload": "optimizer", "grad_reduce_dtype": "fp32"}, "job.grad_reduce_dtype"),
    ({"framework": "hf-accelerate", "offload": "optimizer"}, "job.offload"),
])
def test_a_stack_that_would_not_heed_the_input_is_a_400_naming_the_field(server, job, field):
    """auto with the optimizer offloaded at ZeRO-3 is DeepSpeed's ZeRO-Offload, which reduces in 16 bits;
    Accelerate's FSDP plugin offloads the parameters with the optimizer states: the same refusals as Python."""
    workload = {"model": {"preset": "llama3.1-8b"}, "hardware": {"instance": "aws:p5.48xlarge", "nodes": 2},
                "job": dict({"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e8}, **job),
                "layout": {"tp": 1, "pp": 1, "dp": 16, "micro_batch": 1, "zero": 3}}
    r = post(server, "/v1/plans", workload)
    assert r.status_code == 400 and r.json()["field"] == field, r.text


def test_cached_answer_is_compressed_for_a_later_gzip_client(server):
    """An answer first sent plain is compressed when a client later accepts gzip, and is the same JSON."""
    import gzip as gz
    workload = json.loads(RECOMMEND_FILE.read_text())
    workload["description"] = "first asked without gzip"
    body = json.dumps(workload)
    plain = requests.post(server.url + "/v1/recommendations", data=body, timeout=60,
                          headers={"Content-Type": "application/json", "Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "Content-Encoding" not in plain.headers
    raw = requests.post(server.url + "/v1/recommendations", data=body, timeout=60, stream=True,
                        headers={"Content-Type": "application/json", "Accept-Encoding": "gzip"})
    assert raw.status_code == 200 and raw.headers["Content-Encoding"] == "gzip"
    compressed = raw.raw.read()
    assert len(compressed) < len(plain.content) / 3
    assert gz.decompress(compressed) == plain.content


def test_concurrent_distinct_recommendations_all_answered(server):
    """More searches than cores at once: every one is answered (the search gate lets each through)
    with the answer the same workload gets alone."""
    from concurrent.futures import ThreadPoolExecutor
    presets = ["llama3.1-8b", "llama2-13b", "mistral-7b", "qwen2.5-72b"]

    def workload(i):
        return {"description": f"concurrent {i}", "model": {"preset": presets[i % len(presets)]},
                "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 256, "tokens": 1e11, "precision": "bf16"},
                "constraints": {"max_nodes": 8}}

    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda i: post(server, "/v1/recommendations", workload(i), top=2), range(32)))
    assert all(r.status_code == 200 for r in answers), [r.text for r in answers if r.status_code != 200]
    for i in range(len(presets)):
        alone = post(server, "/v1/recommendations", dict(workload(i), description="alone"), top=2).json()
        assert answers[i].json()["results"] == alone["results"]


def test_an_empty_answer_says_why_and_the_cli_prints_it(server, tmp_path):
    workload = json.loads(RECOMMEND_FILE.read_text())
    workload.setdefault("constraints", {})["deadline_hours"] = 0.01
    workload["job"]["tokens"] = workload["job"].get("tokens") or 1e10
    r = post(server, "/v1/recommendations", workload)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["results"] == [] and body["rejected"], body
    assert all(x["reason"] in {"memory", "deadline", "budget", "network_unknown", "unpriced", "latency_target",
                               "constraint", "unsupported"} for x in body["rejected"])
    assert any(x["reason"] == "deadline" and x["reasons"][0]["best_hours"] > 0.01 for x in body["rejected"])
    path = tmp_path / "impossible.json"
    path.write_text(json.dumps(workload))
    text = run_cli("recommend", str(path), "--db", str(server.db), check=False)
    assert text.returncode == 1  # nothing qualifies
    assert "no plan qualifies" in text.stdout and "deadline:" in text.stdout
    assert "against the 0.01 h deadline" in text.stdout
    assert json.loads(run_cli("recommend", str(path), "--json", "--db", str(server.db), check=False).stdout) == body


def test_per_instance_over_rest_is_the_cli(server):
    workload = json.loads(RECOMMEND_FILE.read_text())
    r = post(server, "/v1/recommendations", workload, per="instance", top=4)
    assert r.status_code == 200, r.text
    instances = [p["instance"] for p in r.json()["results"]]
    assert len(instances) == len(set(instances)) and r.json()["per"] == "instance"
    cli = json.loads(run_cli("recommend", str(RECOMMEND_FILE), "--per", "instance", "--top", "4", "--json",
                             "--db", str(server.db)).stdout)
    assert r.json() == cli
    r = post(server, "/v1/recommendations", workload, per="provider")
    assert r.status_code == 400 and r.json()["field"] == "per", r.text


def test_top_default_and_bounds_match_the_cli(server):
    workload = json.loads(RECOMMEND_FILE.read_text())
    default = post(server, "/v1/recommendations", workload).json()
    cli = json.loads(run_cli("recommend", str(RECOMMEND_FILE), "--json", "--db", str(server.db)).stdout)
    assert len(default["results"]) == len(cli["results"]) == 5
    assert post(server, "/v1/recommendations", workload, top=100).status_code == 200
    r = post(server, "/v1/recommendations", workload, top=101)
    assert r.status_code == 400 and r.json()["field"] == "top"
    over = run_cli("recommend", str(RECOMMEND_FILE), "--top", "101", "--db", str(server.db), check=False)
    assert over.returncode == 2
    assert run_cli("recommend", str(RECOMMEND_FILE), "--top", "100", "--db", str(server.db), check=False).returncode == 0


def test_recommend_text_prints_the_warnings_json_carries(server, tmp_path):
    workload = json.loads(RECOMMEND_FILE.read_text())
    workload["job"].pop("tokens", None)  # every plan then warns that job_hours is unknown
    workload.setdefault("constraints", {}).pop("deadline_hours", None)
    workload["constraints"].pop("budget_usd", None)
    if workload["constraints"].get("objective") == "cost_within_deadline":
        workload["constraints"]["objective"] = "cost"
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    doc = json.loads(run_cli("recommend", str(path), "--json", "--top", "2", "--db", str(server.db)).stdout)
    warnings = {w for p in doc["results"] for w in p["warnings"]}
    assert warnings
    text = run_cli("recommend", str(path), "--top", "2", "--db", str(server.db)).stdout
    for w in warnings:
        assert f"warning: {w}" in text


def test_healthz_and_version_agree(server):
    health = requests.get(server.url + "/healthz", timeout=10).json()
    version = run_cli("--version").stdout.strip()
    assert health["status"] == "ok" and version == f"linkwise {health['version']}"


def test_serving_engine_and_max_mode_over_rest_are_the_cli(server, tmp_path):
    """job.engine and job.concurrent "max" reach REST and CLI alike; the plan carries the engine,
    the concurrency the KV pool holds and TTFT under load; a bad engine or concurrency is a 400
    naming the field."""
    workload = json.loads((EXAMPLES / "inference-llama3.1-70b.json").read_text())
    workload["job"].update(engine="vllm", concurrent="max")
    r = post(server, "/v1/plans", workload)
    assert r.status_code == 200, r.text
    path = tmp_path / "serve.json"
    path.write_text(json.dumps(workload))
    assert r.json() == json.loads(run_cli("plan", str(path), "--json", "--db", str(server.db)).stdout)
    plan = r.json()
    assert plan["engine"] == "vllm"
    assert plan["concurrent"] == plan["max_concurrent"] > 64
    assert plan["concurrent_is_max"] is True
    assert plan["max_concurrent_limit"] == "engine_batch_limit"  # 70B on 8 H100 at TP 8: vLLM's 256, memory left
    assert plan["ttft_under_load_s"] > plan["ttft_s"] > 0
    assert plan["time_s"]["dequant"] == 0
    for job, field in (({"engine": "triton"}, "job.engine"), ({"concurrent": "all"}, "job.concurrent")):
        bad = dict(workload, job=dict(workload["job"], **job))
        r = post(server, "/v1/plans", bad)
        assert r.status_code == 400 and r.json()["field"] == field, r.text


def test_filters_that_match_nothing_say_so_in_every_front_end(server, tmp_path):
    workload = json.loads(RECOMMEND_FILE.read_text())
    workload["constraints"] = {"providers": ["gcp"], "instances": ["aws:p5.48xlarge"]}
    r = post(server, "/v1/recommendations", workload)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["results"] == [] and body["rejected"] == [] and body["skipped"] == []
    assert "constraints.providers [gcp]" in body["why_no_results"]
    assert "constraints.instances [aws:p5.48xlarge]" in body["why_no_results"]
    path = tmp_path / "nothing.json"
    path.write_text(json.dumps(workload))
    # The CLI prints the same answer and exits 1: nothing qualifies.
    as_json = run_cli("recommend", str(path), "--json", "--db", str(server.db), check=False)
    assert as_json.returncode == 1 and json.loads(as_json.stdout) == body
    as_text = run_cli("recommend", str(path), "--db", str(server.db), check=False)
    assert as_text.returncode == 1 and body["why_no_results"] in as_text.stdout
    workload.pop("constraints")
    assert post(server, "/v1/recommendations", workload, top=1).json()["why_no_results"] is None


def test_a_key_written_twice_is_a_400_naming_it(server):
    text = PLAN_FILE.read_text().replace('"model":', '"model": {"preset": "llama3.1-8b"}, "model":', 1)
    r = requests.post(server.url + "/v1/plans", data=text, timeout=60, headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert r.json()["field"] == "model"
    assert "twice" in r.json()["detail"]


# Megatron's overlaps a run can state off, on the example's interleaved Megatron-Core layout: the
# pipeline's sends (overlap_p2p_comm; pp_*) and the DDP's gradient reduction (overlap_grad_reduce; dp_*).
MEGATRON_OVERLAPS = [
    ("overlap_p2p_comm", "pp", [({"virtual_stages": 1}, {}), ({}, {"framework": "torchtitan"})]),
    ("overlap_grad_reduce", "dp", [({}, {"framework": "fsdp"}), ({"zero": 3}, {})]),
]


@pytest.mark.parametrize("field, traffic, cannot_run", MEGATRON_OVERLAPS, ids=[m[0] for m in MEGATRON_OVERLAPS])
def test_megatron_overlaps_are_echoed_and_where_they_cannot_run_named(server, field, traffic, cannot_run):
    """Echoed as planned (on by default), false exposes the whole of its traffic, and true where it
    cannot run (another stack, one chunk per stage), in serving, or a non-boolean is a 400 naming it."""
    workload = json.loads(PLAN_FILE.read_text())
    default = post(server, "/v1/plans", workload).json()
    assert default["layout"][field] is True
    off = post(server, "/v1/plans", dict(workload, layout=dict(workload["layout"], **{field: False}))).json()
    assert off["layout"][field] is False
    assert off["time_s"][traffic + "_exposed"] == pytest.approx(off["time_s"][traffic + "_comm"], rel=1e-12)
    assert off["step_time_s"] > default["step_time_s"]
    bad = [(dict(layout, **{field: True}), job) for layout, job in cannot_run]
    bad += [({field: value}, {}) for value in ("on", 0, -1, 2**31, 1e300, [True], {})]
    for layout, job in bad:
        r = post(server, "/v1/plans", dict(workload, layout=dict(workload["layout"], **layout),
                                           job=dict(workload["job"], **job)))
        assert r.status_code == 400 and r.json()["field"] == "layout." + field, r.text
    serving = {"model": {"preset": "llama3.1-8b"}, "job": {"kind": "inference", "prompt_len": 1024, "output_len": 128,
                                                            "concurrent": 8},
               "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 2, "pp": 1, field: True}}
    r = post(server, "/v1/plans", serving)
    assert r.status_code == 400 and r.json()["field"] == "layout." + field, r.text


def test_one_chunk_per_stage_echoes_blocking_sends_and_recommend_names_an_impossible_overlap(server):
    """Without interleaving the sends block (echoed false); recommend told to overlap them on a job
    pinned to pp 1 says which field cannot be met."""
    workload = json.loads(PLAN_FILE.read_text())
    one_chunk = post(server, "/v1/plans", dict(workload, layout=dict(workload["layout"], virtual_stages=1))).json()
    assert one_chunk["layout"]["overlap_p2p_comm"] is False
    r = post(server, "/v1/recommendations", dict(workload, hardware=None,
                                                 layout={"pp": 1, "overlap_p2p_comm": True},
                                                 constraints={"instances": ["aws:p5.48xlarge"], "max_nodes": 4}))
    assert r.status_code == 400 and r.json()["field"] == "layout.overlap_p2p_comm", r.text


def test_tp_comm_overlap_is_echoed_and_a_layout_that_cannot_run_it_is_named(server):
    """layout.tp_comm_overlap: the plan echoes what it planned (on by default for the example's dense
    Megatron-Core layout), false shows more of the TP collectives, and true where Transformer Engine's
    overlap cannot run (no sequence parallelism, a PyTorch stack, a non-boolean) is a 400 naming it."""
    workload = json.loads(PLAN_FILE.read_text())
    default = post(server, "/v1/plans", workload).json()
    assert default["layout"]["tp_comm_overlap"] is True
    workload["layout"]["tp_comm_overlap"] = False
    off = post(server, "/v1/plans", workload).json()
    assert off["layout"]["tp_comm_overlap"] is False
    assert off["time_s"]["tp_exposed"] > default["time_s"]["tp_exposed"]
    for layout, job in (({"tp_comm_overlap": True, "sequence_parallel": False}, {}),
                        ({"tp_comm_overlap": True}, {"framework": "fsdp"}),
                        ({"tp_comm_overlap": "on"}, {}), ({"tp_comm_overlap": 0}, {}), ({"tp_comm_overlap": -1}, {}),
                        ({"tp_comm_overlap": 2**31}, {}), ({"tp_comm_overlap": 1e300}, {}),
                        ({"tp_comm_overlap": [True]}, {}), ({"tp_comm_overlap": {}}, {})):
        r = post(server, "/v1/plans", dict(workload, layout=dict(workload["layout"], **layout),
                                           job=dict(workload["job"], **job)))
        assert r.status_code == 400 and r.json()["field"] == "layout.tp_comm_overlap", r.text
    # Serving: a training setting, only false accepted (plan and recommend alike).
    serving = {"model": {"preset": "llama3.1-8b"}, "job": {"kind": "inference", "prompt_len": 1024, "output_len": 128,
                                                            "concurrent": 8},
               "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 2, "tp_comm_overlap": True}}
    r = post(server, "/v1/plans", serving)
    assert r.status_code == 400 and r.json()["field"] == "layout.tp_comm_overlap", r.text
    r = post(server, "/v1/recommendations", dict(serving, hardware=None))
    assert r.status_code == 400 and r.json()["field"] == "layout.tp_comm_overlap", r.text
