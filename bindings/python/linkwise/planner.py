"""The planner from Python: will a job fit, how fast, at what cost, and which layout.
A Workload is the planner's JSON contract (README, "Planner"); plan() evaluates one layout,
recommend() searches instances and layouts. The C++ core does the work with the GIL released."""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _core
from ._records import Field, Record, RecordList
from .catalog import Catalog, _catalog_core

JsonDict = Dict[str, Any]


class Workload:
    """A job for the planner: ``model``, ``job``, and for plan() ``hardware`` and ``layout``;
    ``constraints`` for recommend(). Each is the contract's object, e.g.

        Workload(model={"preset": "llama3.1-70b"},
                 job={"kind": "finetune", "seq_len": 4096, "global_batch": 64, "tokens": 1e9},
                 hardware={"instance": "aws:p5.48xlarge", "nodes": 2})

    ``model`` may also be a preset name ("llama3.1-70b") and ``hardware`` an instance id.
    The core checks the document when the Workload is made, against ``catalog`` (default: the
    shipped one) for instance ids: a bad one raises ``linkwise.InvalidInputError`` (a ValueError)
    naming the field, an unknown preset or instance ``linkwise.NotFoundError`` (a KeyError)."""

    __slots__ = ("_data",)

    def __init__(self, model: Union[str, Mapping[str, Any]], job: Mapping[str, Any],
                 hardware: Union[str, Mapping[str, Any], None] = None,
                 layout: Optional[Mapping[str, Any]] = None,
                 constraints: Optional[Mapping[str, Any]] = None, *,
                 catalog: Optional[Catalog] = None) -> None:
        data: JsonDict = {
            "model": {"preset": model} if isinstance(model, str) else dict(model),
            "job": dict(job),
        }
        if hardware is not None:
            data["hardware"] = {"instance": hardware} if isinstance(hardware, str) else dict(hardware)
        if layout is not None:
            data["layout"] = dict(layout)
        if constraints is not None:
            data["constraints"] = dict(constraints)
        _core.check_workload(data, _catalog_core(catalog))
        self._data = data

    @classmethod
    def from_json(cls, source: Union[Mapping[str, Any], str, os.PathLike[str]], *,
                  catalog: Optional[Catalog] = None) -> Workload:
        """A Workload from a contract dict, or from a JSON file's path (data/examples/*.json),
        checked like ``Workload(...)``."""
        if isinstance(source, Mapping):
            document: Any = source
        else:
            with open(os.fspath(source), encoding="utf-8") as handle:
                try:
                    document = json.load(handle)
                except json.JSONDecodeError as error:
                    from ._errors import InvalidInputError
                    raise InvalidInputError(f"{os.fspath(source)}: not valid JSON: {error}") from None
        if not isinstance(document, Mapping):
            from ._errors import InvalidInputError
            raise InvalidInputError("workload: expected a JSON object", field="workload")
        workload = cls.__new__(cls)
        workload._data = copy.deepcopy(dict(document))
        # Missing or unknown fields are the core's to judge.
        _core.check_workload(workload._data, _catalog_core(catalog))
        return workload

    def replace(self, *, catalog: Optional[Catalog] = None, **changes: Any) -> Workload:
        """A copy with some top-level objects replaced: ``w.replace(hardware={...}, layout=None)``
        (None removes one); checked like ``Workload(...)``."""
        data = copy.deepcopy(self._data)
        for key, value in changes.items():
            if value is None:
                data.pop(key, None)
            else:
                data[key] = copy.deepcopy(dict(value)) if isinstance(value, Mapping) else value
        return Workload.from_json(data, catalog=catalog)

    @property
    def model(self) -> JsonDict:
        """The model object ({"preset": ...}, {"params_b": ...} or explicit shapes)."""
        return copy.deepcopy(self._data["model"])

    @property
    def job(self) -> JsonDict:
        """The job object (kind, seq_len, global_batch, tokens, precision, ...)."""
        return copy.deepcopy(self._data["job"])

    @property
    def hardware(self) -> Optional[JsonDict]:
        """The hardware object ({"instance": ..., "nodes": ...} or {"custom": {...}}), or None."""
        return copy.deepcopy(self._data.get("hardware"))

    @property
    def layout(self) -> Optional[JsonDict]:
        """The layout object (tp, pp, cp, dp, micro_batch, zero, recompute, ...), or None."""
        return copy.deepcopy(self._data.get("layout"))

    @property
    def constraints(self) -> Optional[JsonDict]:
        """The search constraints of recommend(), or None."""
        return copy.deepcopy(self._data.get("constraints"))

    def to_dict(self) -> JsonDict:
        """The contract dict, as `linkwise plan WORKLOAD.json` reads it."""
        return copy.deepcopy(self._data)

    def to_json(self, indent: Optional[int] = None) -> str:
        """The contract as a JSON string."""
        return json.dumps(self._data, indent=indent)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workload) and other._data == self._data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Workload({json.dumps(self._data)})"


class MemoryBreakdown(Record):
    """Memory per GPU, GB (10^9 bytes): ``plan.memory_gb``."""

    __slots__ = ()
    _summary = ("total", "capacity")

    weights = Field[float]("Weights, GB per GPU.")
    gradients = Field[float]("Gradients, GB per GPU.")
    optimizer = Field[float]("Optimizer states (and master weights), GB per GPU.")
    activations = Field[float]("Activations held for the backward pass, GB per GPU.")
    kv_cache = Field[float]("Inference KV cache, GB per GPU.")
    overhead = Field[float]("Framework and allocator allowance, GB per GPU.")
    total = Field[float]("Sum of the above, GB per GPU.")
    capacity = Field[float]("Usable GPU memory, GB.")


class TimeBreakdown(Record):
    """One step's time, seconds: ``plan.time_s``."""

    __slots__ = ()
    _summary = ("compute", "exposed_comm")

    compute = Field[float]("Compute, s.")
    tp_comm = Field[float]("Tensor-parallel collectives on the intra-node fabric, s.")
    cp_comm = Field[float]("Context-parallel exchanges, s.")
    pp_comm = Field[float]("Pipeline point-to-point transfers, s.")
    pp_bubble = Field[float]("Pipeline bubble, s.")
    dp_comm = Field[float]("Data-parallel gradient reduction (and ZeRO gathers), s.")
    ep_comm = Field[float]("Expert-parallel all-to-all (MoE dispatch and combine), s.")
    exposed_comm = Field[float]("Communication not hidden behind compute, s.")


class Layout(Record):
    """How the job is split: ``plan.layout``."""

    __slots__ = ()
    _summary = ("tp", "pp", "dp", "zero")

    tp = Field[int]("Tensor-parallel degree.")
    pp = Field[int]("Pipeline-parallel degree.")
    cp = Field[int]("Context-parallel degree.")
    dp = Field[int]("Data-parallel degree.")
    micro_batch = Field[int]("Micro-batch size, sequences.")
    zero = Field[int]("ZeRO stage, 0-3.")
    recompute = Field[str]("Activation recompute: 'none', 'selective' or 'full'.")
    sequence_parallel = Field[bool]("Sequence parallelism with TP.")
    virtual_stages = Field[int]("Virtual pipeline stages per GPU.")
    ep = Field[int]("Expert-parallel degree (MoE; 1 for dense models).")
    etp = Field[int]("Expert tensor-parallel degree (MoE).")
    edp = Field[int]("Expert data-parallel degree: tp x cp x dp / (ep x etp).")
    overlap_a2a = Field[bool]("Whether the MoE all-to-all is hidden behind another micro-batch's compute.")


class Plan(Record):
    """A planned job on one instance type and layout (``linkwise.plan``, ``linkwise.recommend``):
    fit, memory and time breakdowns, throughput, cost and the bottleneck, in the contract's names
    (``linkwise plan --json``)."""

    __slots__ = ()
    _summary = ("fits", "step_time_s", "job_hours", "cost_usd", "bottleneck")

    model = Field[str]("The model's name (preset) or shape summary.")
    params_b = Field[float]("The model's parameters, billions (MoE: all experts).")
    active_params_b = Field[float]("Parameters one token passes through, billions (MoE: top_k experts).")
    job_kind = Field[str]("'pretrain', 'finetune', 'lora' or 'inference'.")
    precision = Field[str]("'bf16', 'fp16', 'fp8' or 'fp4'.")
    instance = Field[Optional[str]]("Catalog instance id; None for custom hardware.")
    gpu_model = Field[str]("GPU id.")
    custom_hardware = Field[bool]("True when the hardware is a custom (on-premises) instance.")
    nodes = Field[int]("Instances (nodes).")
    gpus_per_node = Field[int]("GPUs per node.")
    gpus = Field[int]("GPUs in all.")
    nvlink_domain_gpus = Field[int]("GPUs one GPU reaches over NVLink (more than gpus_per_node on NVL72).")
    layout = Field[Layout]("The layout evaluated.", Layout)
    fits = Field[bool]("Whether the layout fits in GPU memory.")
    memory_margin_gb = Field[float]("Capacity minus total memory per GPU, GB (negative: does not fit).")
    why_not = Field[List[str]]("Why it does not fit or meet the constraints, in words; empty when it does.")
    memory_gb = Field[MemoryBreakdown]("Memory per GPU, GB.", MemoryBreakdown)
    step_time_s = Field[float]("Time of one optimizer step (training) or one batch, s.")
    time_s = Field[TimeBreakdown]("The step's time by part, s.", TimeBreakdown)
    tokens_per_s = Field[float]("Tokens per second, whole job.")
    model_tflops_per_gpu = Field[float]("Model FLOPs achieved per GPU, TFLOP/s.")
    hardware_tflops_per_gpu = Field[float]("Hardware FLOPs (with recompute) per GPU, TFLOP/s.")
    mfu = Field[float]("Model FLOPs utilisation, 0-1.")
    price_usd_per_hour = Field[Optional[float]]("Price of all nodes, USD per hour; None without a price.")
    job_hours = Field[Optional[float]]("Wall-clock time of the whole job, hours.")
    cost_usd = Field[Optional[float]]("Cost of the job, USD; None without a price.")
    usd_per_million_tokens = Field[Optional[float]]("USD per million tokens; None without a price.")
    meets_deadline = Field[Optional[bool]]("Whether the job ends before the constraints' deadline.")
    within_budget = Field[Optional[bool]]("Whether the job costs at most the constraints' budget.")
    bottleneck = Field[str]("The link or resource that dominates, in words.")
    bandwidth_source = Field[JsonDict]("Where each bandwidth came from (intra_node, inter_node, hbm): "
                                       "'claimed: catalog ...' or 'measured: probe report ...'.")
    links = Field[JsonDict]("Effective link bandwidths used: intra_node_busbw_gbytes_per_s, "
                            "inter_node_gbytes_per_s_per_gpu.")
    warnings = Field[List[str]]("Caveats of this estimate.")
    kv_cache_precision = Field[Optional[str]]("Inference: the KV cache's precision ('bf16', 'fp16', 'fp8').")
    ttft_s = Field[Optional[float]]("Inference: time to first token, s.")
    tpot_s = Field[Optional[float]]("Inference: time per output token, s.")
    decode_tokens_per_s = Field[Optional[float]]("Inference: decode throughput, tokens/s.")
    meets_latency_target = Field[Optional[bool]]("Inference: whether the latency target is met.")
    why = Field[Optional[str]]("recommend(): why this plan ranks here, in words.")


class PlanList(RecordList[Plan]):
    """Plans, best first (``linkwise.recommend``); ``to_pandas()`` flattens nested objects into
    "memory_gb.total", "time_s.compute", "layout.tp" ... columns."""

    _item = Plan
    _flatten = True
    _columns = ("instance", "nodes", "layout.tp", "layout.pp", "layout.dp", "layout.zero",
                "fits", "job_hours", "cost_usd", "bottleneck")

    def __init__(self, items: Sequence[Any], search: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(items)
        self._search: JsonDict = dict(search or {})

    @property
    def search(self) -> JsonDict:
        """What the search did: evaluated, feasible, pruned_subtrees, hardware_considered,
        skipped, objective, model (the rest of ``linkwise recommend --json``)."""
        return copy.deepcopy(self._search)

    def to_contract(self) -> JsonDict:
        """The whole ``linkwise recommend --json`` document: {"results": [...], **search}."""
        return {"results": self.to_dict(), **copy.deepcopy(self._search)}


def _workload_dict(workload: Union[Workload, Mapping[str, Any]]) -> JsonDict:
    if isinstance(workload, Workload):
        return workload._data
    if isinstance(workload, Mapping):
        return dict(workload)  # plan_json / recommend_json check it
    raise TypeError(f"expected a linkwise.Workload or a dict, got {type(workload).__name__}")


def _report_dict(report: Any) -> Optional[JsonDict]:
    if report is None:
        return None
    from .probes import _report_document
    return _report_document(report)


def models() -> List[JsonDict]:
    """The model presets (``linkwise models --json``): name, shapes, attention, moe, params_b,
    active_params_b and the source of each."""
    return _core.models()


def plan(workload: Union[Workload, Mapping[str, Any]], catalog: Optional[Catalog] = None,
         report: Any = None) -> Plan:
    """Evaluates the workload's one layout on its hardware (``linkwise plan``). ``report``: a
    ProbeReport (or its path) whose measured bandwidths replace the catalog's claims."""
    return Plan(_core.plan(_workload_dict(workload), _catalog_core(catalog), _report_dict(report)))


def recommend(workload: Union[Workload, Mapping[str, Any]], top: int = 10,
              catalog: Optional[Catalog] = None, report: Any = None) -> PlanList:
    """Searches instances x nodes x layouts for the workload and returns the ``top`` best plans
    by the constraints' objective (``linkwise recommend``)."""
    if isinstance(top, bool) or not isinstance(top, int):
        raise TypeError(f"top: expected an integer, got {type(top).__name__}")
    found = _core.recommend(_workload_dict(workload), _catalog_core(catalog), top, _report_dict(report))
    results = found.pop("results")
    return PlanList(results, search=found)
