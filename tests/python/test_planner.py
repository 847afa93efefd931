"""linkwise.Workload, plan() and recommend(): the planner's contract from Python, its errors,
and agreement with `linkwise plan/recommend --json`."""

import json
import os
import re
import subprocess
import threading

import pytest

import linkwise
from conftest import linkwise_bin

PRETRAIN_70B_P5 = {
    "model": {"preset": "llama3.1-70b"},
    "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "tokens": 2e12, "precision": "bf16"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 16},
    "layout": {"tp": 8, "pp": 4, "cp": 1, "dp": 4, "micro_batch": 1, "zero": 1, "recompute": "selective",
               "sequence_parallel": True, "virtual_stages": 5},
}
RECOMMEND_70B = {
    "model": {"preset": "llama3.1-70b"},
    "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "tokens": 1e12, "precision": "bf16"},
    "constraints": {"max_nodes": 64, "deadline_hours": 720, "objective": "cost_within_deadline"},
}
PLAN_FIELDS = ["fits", "memory_gb", "step_time_s", "time_s", "tokens_per_s", "model_tflops_per_gpu",
               "hardware_tflops_per_gpu", "mfu", "job_hours", "cost_usd", "usd_per_million_tokens",
               "bottleneck", "layout", "instance", "nodes"]


def test_workload_from_arguments_and_from_json(tmp_path):
    w = linkwise.Workload("llama3.1-70b", job=PRETRAIN_70B_P5["job"], hardware="aws:p5.48xlarge",
                          layout={"tp": 8, "pp": 1, "dp": 1})
    assert w.model == {"preset": "llama3.1-70b"}
    assert w.hardware == {"instance": "aws:p5.48xlarge"}
    assert w.constraints is None
    assert linkwise.Workload.from_json(w.to_dict()) == w
    path = tmp_path / "w.json"
    path.write_text(json.dumps(PRETRAIN_70B_P5))
    from_file = linkwise.Workload.from_json(path)
    assert from_file.to_dict() == PRETRAIN_70B_P5
    assert json.loads(from_file.to_json()) == PRETRAIN_70B_P5
    moved = from_file.replace(hardware={"instance": "gcp:a3-megagpu-8g", "nodes": 16})
    assert moved.hardware["instance"] == "gcp:a3-megagpu-8g" and moved.layout == from_file.layout
    assert from_file.hardware["instance"] == "aws:p5.48xlarge"  # replace() copies
    assert "hardware" not in from_file.replace(hardware=None, layout=None).to_dict()


BAD_DOCUMENTS = [
    ({"job": {"kind": "pretrain", "seq_len": -8, "global_batch": 512, "tokens": 1e12}}, "job.seq_len"),
    ({"job": {"kind": "dance", "seq_len": 8192, "global_batch": 512, "tokens": 1e12}}, "job.kind"),
    ({"model": {"layers": 0, "hidden": 8192, "heads": 64}}, "model.layers"),
    ({"job": {"kind": "pretrain", "seq_len": object(), "global_batch": 512, "tokens": 1e12}}, "job.seq_len"),
    ({"job": {"kind": "pretrain", "seq_len": float("nan"), "global_batch": 512, "tokens": 1e12}}, "job.seq_len"),
    ({"hardware": {"instance": "aws:p5.48xlarge", "nodes": 0}}, "hardware.nodes"),
    # The engine's sequence cap is a serving input: on a training job, or below 1, an error naming it.
    ({"job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "engine_batch_limit": 256}},
     "job.engine_batch_limit"),
    ({"job": {"kind": "inference", "prompt_len": 128, "output_len": 128, "engine_batch_limit": 0}},
     "job.engine_batch_limit"),
    ({"job": {"kind": "inference", "prompt_len": 128, "output_len": 128, "engine_batch_limit": 2 ** 31}},
     "job.engine_batch_limit"),
    ({"job": {"kind": "inference", "prompt_len": 128, "output_len": 128, "engine_batch_limit": "256"}},
     "job.engine_batch_limit"),
    ({"job": {"kind": "inference", "prompt_len": 128, "output_len": 128, "engine_batch_limit": float("nan")}},
     "job.engine_batch_limit"),
    ({"job": {"kind": "inference", "prompt_len": 128, "output_len": 128, "engine_batch_limit": -1}},
     "job.engine_batch_limit"),
    # A custom shape's context window: a whole number of tokens from 1 to 2^30.
    *[({"model": {"params_b": 7, "context_tokens": bad}}, "model.context_tokens")
      for bad in (0, -1, 2 ** 31, 1e300, float("nan"), 2.5, "8192", [8192])],
]
BAD_LAYOUTS = [
    # Hybrid sharding's group: a whole number of ranks from 1 that divides dp (3 does not divide 4).
    *[({"layout": {"tp": 8, "pp": 4, "dp": 4, "zero": 1, "dp_shard": bad}}, "layout.dp_shard")
      for bad in (0, -1, 2 ** 31, 1e300, float("nan"), 2.5, "2", [2], True, 3)],
    # Below dp it shards ZeRO states: none at zero 0.
    ({"layout": {"tp": 8, "pp": 4, "dp": 4, "zero": 0, "dp_shard": 2}}, "layout.dp_shard"),
    ({"layout": {"tp": 8, "pp": 4, "dp": 3}}, "layout"),
    ({"layout": {"tp": 8, "pp": 4, "dp": 4, "recompute": "sometimes"}}, "layout.recompute"),
    ({"layout": {"tp": 3, "pp": 1}, "hardware": {"instance": "aws:p5.48xlarge", "nodes": 3}}, "layout.tp"),
]


@pytest.mark.parametrize("change, field", BAD_DOCUMENTS)
def test_bad_workload_is_a_value_error_naming_the_field(change, field):
    document = {**PRETRAIN_70B_P5, **change}
    with pytest.raises(ValueError) as caught:
        linkwise.Workload.from_json(document)
    error = caught.value
    assert isinstance(error, linkwise.InvalidInputError)
    assert error.field.startswith(field), (error.field, str(error))
    assert field in str(error)


@pytest.mark.parametrize("change, field", BAD_DOCUMENTS + BAD_LAYOUTS)
def test_plan_of_a_bad_workload_is_a_value_error_naming_the_field(change, field):
    with pytest.raises(ValueError) as caught:
        linkwise.plan({**PRETRAIN_70B_P5, **change})
    assert caught.value.field.startswith(field), (caught.value.field, str(caught.value))


def test_a_deeply_nested_workload_is_the_contract_error_not_a_recursion_error():
    deep = {}
    node = deep
    for _ in range(100_000):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(linkwise.InvalidInputError) as caught:
        linkwise.Workload.from_json({**PRETRAIN_70B_P5, "model": deep})
    assert "nested deeper than" in str(caught.value)


def test_unknown_preset_or_instance_is_an_unknown_reference():
    with pytest.raises(ValueError) as caught:
        linkwise.Workload("llama9-1t", job=PRETRAIN_70B_P5["job"])
    assert isinstance(caught.value, linkwise.UnknownReferenceError)
    assert not isinstance(caught.value, KeyError)
    assert caught.value.kind == "unknown_reference"
    assert caught.value.field == "model.preset" and "llama9-1t" in str(caught.value)
    with pytest.raises(linkwise.UnknownReferenceError) as caught:
        linkwise.Workload.from_json({**PRETRAIN_70B_P5, "hardware": {"instance": "aws:p99", "nodes": 1}})
    assert caught.value.field.startswith("hardware")


def test_workload_file_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError):
        linkwise.Workload.from_json(bad)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(ValueError):
        linkwise.Workload.from_json(listed)
    with pytest.raises(FileNotFoundError):
        linkwise.Workload.from_json(tmp_path / "missing.json")


def test_plan_is_sane():
    plan = linkwise.plan(linkwise.Workload.from_json(PRETRAIN_70B_P5))
    assert isinstance(plan, linkwise.Plan)
    assert plan.fits is True and plan.why_not == []
    assert plan.instance == "aws:p5.48xlarge" and plan.nodes == 16 and plan.gpus == 128
    assert (plan.layout.tp, plan.layout.pp, plan.layout.dp) == (8, 4, 4)
    memory = plan.memory_gb
    assert isinstance(memory, linkwise.MemoryBreakdown)
    assert 0 < memory.weights < memory.total <= memory.capacity
    parts = memory.weights + memory.gradients + memory.optimizer + memory.activations + \
        memory.kv_cache + memory.overhead
    assert parts == pytest.approx(memory.total, rel=1e-6)
    assert isinstance(plan.time_s, linkwise.TimeBreakdown)
    assert 0 < plan.time_s.compute <= plan.step_time_s
    assert plan.tokens_per_s > 0 and 0 < plan.mfu < 1
    assert plan.job_hours > 0 and plan.cost_usd > 0
    assert plan.job_hours == pytest.approx(2e12 / plan.tokens_per_s / 3600, rel=1e-3)
    assert isinstance(plan.bottleneck, str) and plan.bottleneck
    assert set(PLAN_FIELDS) <= set(plan.to_dict())
    # Every layout key of the contract is a typed, documented field of Layout.
    declared = {name for name, value in vars(linkwise.Layout).items() if isinstance(value, linkwise._records.Field)}
    assert set(plan.to_dict()["layout"]) == declared
    # And every time_s key of TimeBreakdown, the exposed parts among them, which sum to exposed_comm.
    declared = {name for name, value in vars(linkwise.TimeBreakdown).items() if isinstance(value, linkwise._records.Field)}
    assert set(plan.to_dict()["time_s"]) == declared
    exposed = [getattr(plan.time_s, part + "_exposed") for part in ("tp", "cp", "pp", "dp", "ep")]
    assert sum(exposed) == pytest.approx(plan.time_s.exposed_comm, rel=1e-9)
    assert json.loads(plan.to_json()) == plan.to_dict()
    assert "bottleneck" in plan._repr_html_() and "Plan(" in repr(plan)


def test_more_network_bandwidth_never_slows_a_custom_plan():
    def custom(gbits):
        return {**PRETRAIN_70B_P5, "hardware": {"custom": {
            "gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
            "nvlink_gbytes_per_s": 900, "network_type": "infiniband", "network_gbits_per_s": gbits},
            "nodes": 16}}
    times = [linkwise.plan(custom(g)).step_time_s for g in (100, 400, 3200)]
    assert times[0] >= times[1] >= times[2] > 0


def test_plan_that_does_not_fit_still_has_a_time():
    tight = {**PRETRAIN_70B_P5, "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1},
             "layout": {"tp": 8, "pp": 1, "dp": 1, "zero": 0, "recompute": "none"}}
    plan = linkwise.plan(tight)
    assert plan.fits is False and plan.why_not
    assert plan.memory_gb.total > plan.memory_gb.capacity
    assert plan.step_time_s > 0


def test_recommend_returns_ranked_fitting_plans():
    plans = linkwise.recommend(linkwise.Workload.from_json(RECOMMEND_70B), top=5)
    assert isinstance(plans, linkwise.PlanList)
    assert 0 < len(plans) <= 5
    assert all(p.why.startswith(f"#{i} ") for i, p in enumerate(plans, start=1))
    assert all(p.fits and p.job_hours <= 720 and p.cost_usd > 0 for p in plans)
    costs = [p.cost_usd for p in plans]
    assert costs == sorted(costs)
    assert plans.search["evaluated"] >= plans.search["feasible"] >= len(plans)
    assert plans.search["objective"] == "cost_within_deadline"
    frame = plans.to_pandas()
    assert len(frame) == len(plans)
    assert {"instance", "nodes", "cost_usd", "memory_gb.total", "time_s.compute", "layout.tp"} <= set(frame.columns)
    assert "<table>" in plans._repr_html_()


def test_recommend_arguments():
    with pytest.raises(TypeError):
        linkwise.recommend(RECOMMEND_70B, top="5")
    with pytest.raises(TypeError):
        linkwise.recommend("llama3.1-70b")
    with pytest.raises(ValueError):
        linkwise.recommend(RECOMMEND_70B, top=0)


def test_recommend_from_threads_gives_the_same_answer():
    # The core runs with the GIL released: concurrent calls must not disturb each other.
    expected = linkwise.recommend(RECOMMEND_70B, top=3).to_dict()
    results = [None] * 4

    def work(i):
        results[i] = linkwise.recommend(RECOMMEND_70B, top=3).to_dict()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results)


def _cli(*args):
    path = linkwise_bin()
    if path is None:
        pytest.skip("LINKWISE_BIN is not set: no CLI to compare with")
    done = subprocess.run([path, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_plan_and_recommend_equal_cli_json(tmp_path):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(PRETRAIN_70B_P5))
    assert linkwise.plan(PRETRAIN_70B_P5).to_dict() == _cli("plan", str(plan_file), "--json")
    rec_file = tmp_path / "recommend.json"
    rec_file.write_text(json.dumps(RECOMMEND_70B))
    assert linkwise.recommend(RECOMMEND_70B, top=4).to_contract() == \
        _cli("recommend", str(rec_file), "--top", "4", "--json")


def test_models_and_a_moe_plan_share_the_contract():
    models = {m["name"]: m for m in linkwise.models()}
    assert models["deepseek-v3"]["moe"]["top_k"] == 8
    p = linkwise.plan({"model": {"preset": "deepseek-v3"},
                       "job": {"kind": "inference", "precision": "fp4", "prompt_len": 2048, "output_len": 512,
                               "concurrent": 64},
                       "hardware": {"instance": "aws:p6-b200.48xlarge"}, "layout": {"tp": 8, "pp": 1, "ep": 8}})
    assert p.layout.ep == 8 and p.layout.edp == 1
    assert p.fits and p.active_params_b < p.params_b
    assert p.time_s.ep_comm > 0 and p.kv_cache_precision == "bf16"
    with pytest.raises(linkwise.InvalidInputError) as err:
        linkwise.plan({"model": {"preset": "deepseek-v3"},
                       "job": {"kind": "inference", "precision": "fp4", "prompt_len": 8, "output_len": 8},
                       "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 8, "pp": 1, "ep": 8}})
    assert err.value.field == "job.precision"


def test_serving_fields_are_plan_attributes():
    """The serving contract (engine, concurrent "max", TTFT under load) and QLoRA's dequantisation
    time read as Plan attributes with the values of the JSON."""
    workload = {
        "model": {"preset": "llama3.1-8b"},
        "job": {"kind": "inference", "prompt_len": 1024, "output_len": 256, "concurrent": "max", "engine": "sglang"},
        "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1},
        "layout": {"tp": 1, "pp": 1},
    }
    plan = linkwise.plan(linkwise.Workload.from_json(workload))
    d = plan.to_dict()
    assert plan.engine == d["engine"] == "sglang"
    assert plan.concurrent == plan.max_concurrent == d["max_concurrent"] > 8
    assert plan.concurrent_is_max is True and d["concurrent_is_max"] is True
    assert plan.max_concurrent_limit == d["max_concurrent_limit"] == "kv_pool"  # SGLang has no batch limit
    assert plan.ttft_under_load_s == d["ttft_under_load_s"] > plan.ttft_s > 0
    assert plan.time_s.dequant == 0
    with pytest.raises(ValueError, match="job.engine"):
        linkwise.plan(linkwise.Workload.from_json(dict(workload, job=dict(workload["job"], engine="triton"))))
    qlora = linkwise.plan(linkwise.Workload.from_json({
        "model": {"preset": "llama2-7b"},
        "job": {"kind": "lora", "seq_len": 2048, "global_batch": 16, "tokens": 1e8, "lora_base": "4bit"},
        "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}, "layout": {"tp": 1, "pp": 1}}))
    assert 0 < qlora.time_s.dequant < qlora.time_s.compute


def test_workload_file_with_a_key_written_twice_is_refused_naming_it(tmp_path):
    twice = tmp_path / "twice.json"
    twice.write_text('{"model": {"preset": "llama3.1-8b"}, "model": {"preset": "llama3.1-70b"},'
                     ' "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64}}')
    with pytest.raises(ValueError) as caught:
        linkwise.Workload.from_json(twice)
    assert caught.value.field == "model" and "twice" in str(caught.value)


def test_an_empty_answer_says_why_where_it_is_shown():
    """A search with no plan names its reason in repr() and the notebook's HTML, as the CLI and the
    web page do, and as .why_no_results; JSON text given as a path is a clear TypeError."""
    empty = linkwise.recommend(linkwise.Workload("llama3.1-70b", job={"kind": "pretrain", "seq_len": 4096,
                                                                       "global_batch": 256, "tokens": 1e11},
                                                 constraints={"deadline_hours": 1}))
    assert len(empty) == 0 and empty.why_no_results
    assert empty.why_no_results == empty.search["why_no_results"]
    assert "no plan: " + empty.why_no_results in repr(empty)
    assert "No plan:" in empty._repr_html_()
    # Its chart and its frame say so too: plot() refuses with the reason, to_pandas() warns with it
    # and returns the plan's columns without rows.
    pytest.importorskip("matplotlib")
    with pytest.raises(ValueError, match="no plan to plot: " + re.escape(empty.why_no_results)):
        empty.plot("time")
    pytest.importorskip("pandas")
    with pytest.warns(UserWarning, match="no plan: " + re.escape(empty.why_no_results)):
        frame = empty.to_pandas()
    assert len(frame) == 0 and "instance" in frame.columns and "layout.tp" in frame.columns
    assert frame.attrs["why_no_results"] == empty.why_no_results
    some = linkwise.recommend(RECOMMEND_70B, top=1)
    assert len(some) == 1 and some.why_no_results is None and "no plan:" not in repr(some)
    with pytest.raises(TypeError, match="json.loads"):
        linkwise.Workload.from_json('{"model": {"preset": "llama3.1-8b"}}')
