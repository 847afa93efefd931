"""Answers that explain themselves, from Python: the rejected summary, per=, the shared top bounds,
the version, and a Plan's HTML view and DataFrame in the order a person reads them."""

import pathlib
import subprocess

import pytest

import linkwise
from conftest import linkwise_bin

JOB = {"kind": "pretrain", "seq_len": 4096, "global_batch": 256, "tokens": 1e11}
SMALL = {"model": {"preset": "llama3.1-8b"},
         "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 32, "tokens": 1e9},
         "constraints": {"gpu_models": ["H100"], "max_nodes": 2}}


def test_an_empty_answer_says_why():
    workload = {"model": {"preset": "llama3.1-70b"}, "job": JOB,
                "constraints": {"gpu_models": ["H100"], "max_nodes": 2, "deadline_hours": 1}}
    plans = linkwise.recommend(workload)
    assert len(plans) == 0
    rejected = plans.rejected
    assert rejected and rejected == plans.search["rejected"]
    reasons = {r["reason"] for r in rejected}
    assert reasons <= {"memory", "deadline", "budget", "network_unknown", "unpriced", "latency_target", "constraint",
                       "unsupported"}
    deadline = [r for r in rejected if r["reason"] == "deadline"]
    assert deadline, rejected
    first = deadline[0]["reasons"][0]
    assert first["reason"] == "deadline" and first["best_hours"] > 1 and first["count"] > 0


def test_per_instance_returns_one_plan_per_instance_type():
    plans = linkwise.recommend(SMALL, top=5, per="instance")
    instances = [p.instance for p in plans]
    assert len(instances) == len(set(instances)) == 5
    assert plans.search["per"] == "instance"
    by_gpu = linkwise.recommend(SMALL, top=5, per="gpu")
    assert len({p.gpu_model for p in by_gpu}) == len(by_gpu)
    with pytest.raises(linkwise.InvalidInputError) as caught:
        linkwise.recommend(SMALL, per="provider")
    assert caught.value.field == "per"


def test_top_has_the_cli_and_rest_default_and_bounds():
    assert len(linkwise.recommend(SMALL)) == 5  # the default
    assert len(linkwise.recommend(SMALL, top=100)) > 5
    with pytest.raises(linkwise.InvalidInputError):
        linkwise.recommend(SMALL, top=101)
    with pytest.raises(linkwise.InvalidInputError):
        linkwise.recommend(SMALL, top=0)


def test_version_is_the_projects():
    assert linkwise.__version__ and linkwise.__version__[0].isdigit()
    path = linkwise_bin()
    if path is None:
        pytest.skip("LINKWISE_BIN is not set")
    done = subprocess.run([path, "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"linkwise {linkwise.__version__}"


def test_plan_html_puts_the_answer_first_and_memory_in_stacking_order():
    plan = linkwise.recommend(SMALL, top=1)[0]
    page = plan._repr_html_()
    order = [page.index(word) for word in ("verdict", "hardware", "layout", "job time", "cost", "bottleneck",
                                           "weights", "gradients", "optimizer", "activations", "kv_cache",
                                           "overhead", "total / capacity", "step time")]
    assert order == sorted(order)
    assert " GB" in page and " h<" in page and "$" in page
    assert page.index("bottleneck") < page.index("bandwidth: intra-node")


def test_plan_html_shows_the_experts_grid_the_exposed_time_and_a_tight_verdict():
    """A MoE serving plan's layout names its expert grid and no training settings; the step's rows
    are the parts that add up to it (each communication exposed, of its whole); CPU offload is one
    of them; a tight plan says tight, not plainly "fits"."""
    repo = pathlib.Path(__file__).resolve().parents[2] / "data" / "examples"
    serving = linkwise.plan(linkwise.Workload.from_json(repo / "inference-deepseek-v3-fp4-b200.json"))
    page = serving._repr_html_()
    assert f"ep={serving.layout['ep']}" in page and "zero=" not in page and "micro_batch=" not in page
    assert "exposed of" in page
    parts = ("compute", "pp_bubble", "tp_exposed", "cp_exposed", "pp_exposed", "dp_exposed", "ep_exposed", "offload")
    assert sum(serving.time_s[part] for part in parts) == pytest.approx(serving.step_time_s)
    offload = linkwise.plan(linkwise.Workload.from_json(repo / "finetune-llama3.1-70b-deepspeed-offload.json"))
    assert offload.time_s["offload"] > 0 and "offload" in offload._repr_html_()
    tight = dict(SMALL, model={"params_b": 174}, hardware={"instance": "lambda:gpu_1x_b200_sxm6", "nodes": 1},
                 job={"kind": "inference", "precision": "fp8", "prompt_len": 256, "output_len": 256, "concurrent": 8},
                 layout={"tp": 1, "pp": 1})
    tight.pop("constraints", None)
    tight_plan = linkwise.plan(tight)
    assert tight_plan.memory_verdict == "tight" and "tight: fits, but inside" in tight_plan._repr_html_()


def test_workload_parts_of_the_wrong_type_are_the_contracts_error_naming_the_field():
    with pytest.raises(linkwise.InvalidInputError) as caught:
        linkwise.Workload(5, job={"kind": "pretrain"})
    assert caught.value.field == "model"
    with pytest.raises(linkwise.InvalidInputError) as caught:
        linkwise.Workload("llama3.1-70b", job=[1])
    assert caught.value.field == "job"


def test_to_pandas_columns_follow_the_html_order():
    frame = linkwise.recommend(SMALL, top=3).to_pandas()
    columns = list(frame.columns)
    assert columns[:6] == ["instance", "nodes", "gpus", "gpu_model", "fits", "job_hours"]
    memory = [c for c in columns if c.startswith("memory_gb.")]
    assert memory[:6] == ["memory_gb.weights", "memory_gb.gradients", "memory_gb.optimizer",
                          "memory_gb.activations", "memory_gb.kv_cache", "memory_gb.overhead"]
    assert columns.index("layout.tp") < columns.index("memory_gb.weights") < columns.index("time_s.compute")
    assert columns != sorted(columns)


def test_plot_helpers_draw():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg", force=True)  # the test process has no display; notebooks set nothing
    plans = linkwise.recommend(SMALL, top=4)
    for kind in ("memory", "time", "pareto"):
        ax = plans.plot(kind)
        assert ax.has_data()
    assert plans[0].plot("memory").has_data()
    with pytest.raises(ValueError):
        plans.plot("pie")
    assert linkwise.planner.pareto_front([(1, 5), (2, 3), (3, 4), (4, 1)]) == [(1, 5), (2, 3), (4, 1)]


def test_every_example_workload_validates_against_the_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    import json
    import pathlib
    repo = pathlib.Path(__file__).resolve().parents[2]
    schema = json.loads((repo / "data" / "schema" / "workload.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    examples = sorted((repo / "data" / "examples").glob("*.json"))
    assert examples
    for path in examples:
        document = json.loads(path.read_text())
        assert list(validator.iter_errors(document)) == [], path.name
        linkwise.Workload.from_json(document)  # and the core reads it
    bad = json.loads(examples[0].read_text())
    bad["job"]["kind"] = "train"
    assert list(validator.iter_errors(bad))
    # The training profile fields the core reads are in the schema, with the core's values and rules:
    # an unknown framework, and CPU offload on a LoRA job, are refused by both.
    offload = json.loads((repo / "data" / "examples" / "finetune-llama3.1-70b-deepspeed-offload.json").read_text())
    assert {"framework", "optimizer", "offload"} <= offload["job"].keys()
    unknown = json.loads(json.dumps(offload))
    unknown["job"]["framework"] = "megatron"
    assert list(validator.iter_errors(unknown))
    with pytest.raises(ValueError, match="job.framework"):
        linkwise.Workload.from_json(unknown)
    lora = json.loads((repo / "data" / "examples" / "lora-llama2-70b-qlora.json").read_text())
    lora["job"]["offload"] = "optimizer"
    assert list(validator.iter_errors(lora))
    with pytest.raises(ValueError, match="job.offload"):
        linkwise.Workload.from_json(lora)
