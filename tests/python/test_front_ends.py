"""The Python front end agrees with the others: a probe report applies only to the machine it
measured, ids match in any case with suggestions, text with no UTF-8 form is InvalidInputError
naming the field, and each list's to_contract() is the CLI's --json document."""

import pathlib

import pytest

import linkwise
from conftest import run_cli_json

MEETS = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "probe" / "synthetic-h100-meets.json"
LLAMA_8B = {
    "model": {"preset": "llama3.1-8b"},
    "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e9},
    "layout": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1},
}


def test_a_probe_report_of_another_gpu_is_refused():
    h100 = dict(LLAMA_8B, hardware={"instance": "aws:p5.48xlarge"})
    assert linkwise.plan(h100, report=MEETS).bandwidth_source["hbm"].startswith("measured")
    with pytest.raises(linkwise.InvalidInputError) as error:
        linkwise.plan(dict(LLAMA_8B, hardware={"instance": "aws:p6-b200.48xlarge"}), report=MEETS)
    assert error.value.field == "report" and "H100" in str(error.value) and "B200" in str(error.value)


def test_ids_in_any_case_and_suggestions():
    catalog = linkwise.Catalog.default()
    assert catalog["AWS:P5.48XLARGE"].id == "aws:p5.48xlarge"
    with pytest.raises(linkwise.NotFoundError, match='did you mean "aws:p5.48xlarge"'):
        catalog["aws:p5.48xlarg"]
    with pytest.raises(linkwise.UnknownReferenceError, match='did you mean "aws:p5.48xlarge"') as error:
        linkwise.Workload.from_json(dict(LLAMA_8B, hardware={"instance": "aws:p5.48xlarg"}))
    assert error.value.field == "hardware.instance"


@pytest.mark.parametrize("call, field", [
    (lambda: linkwise.Workload.from_json(dict(LLAMA_8B, description="\ud800")), "description"),
    (lambda: linkwise.Workload.from_json({"model": {"preset": "\udfff"}, "job": LLAMA_8B["job"]}), "model.preset"),
    (lambda: linkwise.Catalog.default().instances(gpu="\ud800"), "gpu"),
    (lambda: linkwise.Catalog.default()["\ud800"], "id"),
    (lambda: linkwise.Catalog.default().gpu("\ud800"), "id"),
])
def test_text_without_utf8_form_is_invalid_input(call, field):
    with pytest.raises(linkwise.InvalidInputError) as error:
        call()
    assert error.value.field == field and "not valid Unicode" in str(error.value)
    assert "\ud800" not in linkwise.Catalog.default()  # a membership test answers False


def test_lists_to_contract_is_the_cli_json():
    catalog = linkwise.Catalog.default()
    assert catalog.gpus().to_contract() == run_cli_json("gpus")
    assert catalog.instances(gpu="H100").to_contract() == run_cli_json("instances", "--gpu", "H100")
    workload = dict(LLAMA_8B, constraints={"instances": ["aws:p5.48xlarge"], "max_nodes": 1})
    del workload["layout"]
    found = linkwise.recommend(workload, top=2)
    assert found.to_dict() == found.to_contract()["results"]
    assert set(found.to_contract()) >= {"results", "evaluated", "feasible", "rejected", "objective"}


def test_workload_files_are_read_as_the_cli_reads_them(tmp_path):
    # The core's reader: at most 4 MiB (so /dev/zero ends), a key written twice named.
    with pytest.raises(linkwise.InvalidInputError) as error:
        linkwise.Workload.from_json("/dev/zero")
    assert error.value.field == "workload" and "/dev/zero" in str(error.value)
    twice = tmp_path / "twice.json"
    twice.write_text('{"model": {"preset": "llama3.1-8b"}, "model": {"preset": "llama3.1-70b"}}')
    with pytest.raises(linkwise.InvalidInputError) as error:
        linkwise.Workload.from_json(twice)
    assert error.value.field == "model"


@pytest.mark.parametrize("field, value", [("vcpus", 0), ("vcpus", 2**31), ("vcpus", "96"), ("memory_gib", -1),
                                          ("memory_gib", float("nan")), ("memory_gib", 1e300)])
def test_a_custom_host_field_out_of_range_names_it(field, value):
    """The host a custom machine states (CPU offload): the same refusal as the CLI and REST."""
    custom = {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch", field: value}
    with pytest.raises(linkwise.InvalidInputError) as error:
        linkwise.plan(dict(LLAMA_8B, hardware={"custom": custom}))
    assert error.value.field == "hardware.custom." + field


def test_grad_reduce_dtype_is_the_same_field_in_python():
    """job.grad_reduce_dtype means what it means in the CLI and REST: bf16 halves Megatron-Core's
    gradient buffer; with DeepSpeed, which keeps its own fp32 accumulation, it is refused by name."""
    h100 = dict(LLAMA_8B, hardware={"instance": "aws:p5.48xlarge"})
    fp32 = linkwise.plan(h100)
    bf16 = linkwise.plan(dict(h100, job=dict(LLAMA_8B["job"], grad_reduce_dtype="bf16")))
    assert bf16.memory_gb.gradients == pytest.approx(fp32.memory_gb.gradients / 2, rel=1e-9)
    with pytest.raises(linkwise.InvalidInputError) as error:
        linkwise.plan(dict(h100, job=dict(LLAMA_8B["job"], grad_reduce_dtype="bf16", framework="deepspeed")))
    assert error.value.field == "job.grad_reduce_dtype"
    fused = linkwise.plan(dict(h100, job=dict(LLAMA_8B["job"], loss="fused")))
    assert fused.memory_gb.activations < fp32.memory_gb.activations
    # The reduction's time follows the same dtype as its buffer: bf16 moves less than fp32.
    assert bf16.time_s.dp_comm < fp32.time_s.dp_comm


@pytest.mark.parametrize("job, field", [
    # auto with the optimizer offloaded at ZeRO-3 is DeepSpeed's ZeRO-Offload, which reduces in 16 bits.
    ({"framework": "auto", "offload": "optimizer", "grad_reduce_dtype": "fp32"}, "job.grad_reduce_dtype"),
    # Accelerate's FSDP plugin offloads the parameters with the optimizer states.
    ({"framework": "hf-accelerate", "offload": "optimizer"}, "job.offload"),
])
def test_a_stack_that_would_not_heed_the_input_names_the_field(job, field):
    zero3 = dict(LLAMA_8B, hardware={"instance": "aws:p5.48xlarge", "nodes": 2},
                 job=dict(LLAMA_8B["job"], **job), layout={"tp": 1, "pp": 1, "dp": 16, "zero": 3})
    with pytest.raises(linkwise.InvalidInputError) as error:
        linkwise.plan(zero3)
    assert error.value.field == field


def test_tp_comm_overlap_is_the_same_field_in_python():
    """layout.tp_comm_overlap means what it means in the CLI and REST: on by default for a dense
    Megatron-Core layout with SP (said in a warning), off on request; true where it cannot run is
    refused by name."""
    h100 = dict(LLAMA_8B, hardware={"instance": "aws:p5.48xlarge"},
                layout={"tp": 4, "pp": 1, "dp": 2, "sequence_parallel": True})
    default = linkwise.plan(h100)
    assert default.layout.tp_comm_overlap is True
    assert any("layout.tp_comm_overlap not stated" in w for w in default.warnings)
    off = linkwise.plan(dict(h100, layout=dict(h100["layout"], tp_comm_overlap=False)))
    assert off.layout.tp_comm_overlap is False
    assert default.time_s.tp_exposed < off.time_s.tp_exposed
    assert default.time_s.tp_comm == pytest.approx(off.time_s.tp_comm, rel=1e-12)
    with pytest.raises(linkwise.InvalidInputError) as error:
        linkwise.plan(dict(h100, layout=dict(h100["layout"], sequence_parallel=False, tp_comm_overlap=True)))
    assert error.value.field == "layout.tp_comm_overlap"


# Megatron's two overlaps that a run can state off: the interleaved schedule's pipeline sends
# (overlap_p2p_comm; the time they expose is pp_*) and the DDP's gradient reduction
# (overlap_grad_reduce; dp_*). Each: on unless stated, false exposes the whole of its traffic, and
# true where it cannot run, or a value that is not a boolean, is refused by name.
MEGATRON_OVERLAPS = [
    ("overlap_p2p_comm", "pp", {"tp": 2, "pp": 4, "dp": 2, "virtual_stages": 2},
     [({}, {"virtual_stages": 1, "overlap_p2p_comm": True}), ({"framework": "torchtitan"}, {"overlap_p2p_comm": True})]),
    ("overlap_grad_reduce", "dp", {"tp": 1, "pp": 1, "dp": 16, "zero": 1},
     [({"framework": "fsdp"}, {"overlap_grad_reduce": True}),
      ({"framework": "auto"}, {"zero": 3, "overlap_grad_reduce": True}),  # auto's ZeRO-3: PyTorch FSDP
      ({}, {"zero": 3, "overlap_grad_reduce": False})]),  # Megatron-FSDP always overlaps
]


@pytest.mark.parametrize("field, traffic, layout, cannot_run", MEGATRON_OVERLAPS, ids=[m[0] for m in MEGATRON_OVERLAPS])
def test_megatron_overlaps_are_the_same_fields_in_python(field, traffic, layout, cannot_run):
    megatron = dict(LLAMA_8B, hardware={"instance": "aws:p5.48xlarge", "nodes": 2},
                    job=dict(LLAMA_8B["job"], framework="megatron-core"), layout=layout)
    default = linkwise.plan(megatron)
    assert getattr(default.layout, field) is True
    off = linkwise.plan(dict(megatron, layout=dict(layout, **{field: False})))
    assert getattr(off.layout, field) is False
    assert getattr(off.time_s, traffic + "_exposed") == pytest.approx(getattr(off.time_s, traffic + "_comm"), rel=1e-12)
    assert getattr(default.time_s, traffic + "_exposed") < getattr(off.time_s, traffic + "_exposed")
    not_booleans = (0, 1, -1, 2**31, 1e300, float("nan"), "false", [True], {})
    for job, edit in cannot_run + [({}, {field: value}) for value in not_booleans]:
        with pytest.raises(linkwise.InvalidInputError) as error:
            linkwise.plan(dict(megatron, job=dict(megatron["job"], **job), layout=dict(layout, **edit)))
        assert error.value.field == "layout." + field


@pytest.mark.parametrize("value", [0, -1, 2**31, 1e300, float("nan"), "x", [True], {}])
def test_a_bad_tp_comm_overlap_names_it(value):
    """layout.tp_comm_overlap takes true or false only: anything else is an error naming it."""
    h100 = dict(LLAMA_8B, hardware={"instance": "aws:p5.48xlarge"},
                layout={"tp": 4, "pp": 1, "dp": 2, "sequence_parallel": True, "tp_comm_overlap": value})
    with pytest.raises(linkwise.InvalidInputError) as error:
        linkwise.plan(h100)
    assert error.value.field == "layout.tp_comm_overlap"
