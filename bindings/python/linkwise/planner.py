"""The planner from Python: will a job fit, how fast, at what cost, and which layout.
A Workload is the planner's JSON contract (README, "Planner"); plan() evaluates one layout,
recommend() searches instances and layouts. The C++ core does the work with the GIL released."""

from __future__ import annotations

import copy
import errno
import html as _html
import json
import os
import warnings
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
    naming the field, an unknown preset or instance ``linkwise.UnknownReferenceError`` (also a
    ValueError) naming the field."""

    __slots__ = ("_data",)

    def __init__(self, model: Union[str, Mapping[str, Any]], job: Mapping[str, Any],
                 hardware: Union[str, Mapping[str, Any], None] = None,
                 layout: Optional[Mapping[str, Any]] = None,
                 constraints: Optional[Mapping[str, Any]] = None, *,
                 catalog: Optional[Catalog] = None) -> None:
        # Copied where they are mappings; anything else goes to the core as given, which names the
        # field it expected an object in (not Python's TypeError from dict()).
        def copied(value: Any) -> Any:
            return dict(value) if isinstance(value, Mapping) else value
        data: JsonDict = {
            "model": {"preset": model} if isinstance(model, str) else copied(model),
            "job": copied(job),
        }
        if hardware is not None:
            data["hardware"] = {"instance": hardware} if isinstance(hardware, str) else copied(hardware)
        if layout is not None:
            data["layout"] = copied(layout)
        if constraints is not None:
            data["constraints"] = copied(constraints)
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
            # The core's reader and parser, as the CLI's: a file over 4 MiB (or /dev/zero) and a
            # key written twice (which json.load would keep silently, last one winning) are errors
            # naming the workload, like invalid JSON.
            path = os.fspath(source)
            if isinstance(source, str) and source.lstrip().startswith("{"):
                # JSON text, not a path: say so, rather than "no such file" with the text as its name.
                raise TypeError("Workload.from_json takes a contract dict or a JSON file's path; for JSON "
                                "text pass json.loads(text)")
            if not os.path.exists(path):  # Python's own error for a missing file, as open() gives
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
            document = _core.read_json(path, "workload")
        if not isinstance(document, Mapping):
            from ._errors import InvalidInputError
            raise InvalidInputError("workload: expected a JSON object", field="workload")
        # Missing or unknown fields are the core's to judge, and nesting too: checked before the
        # copy, whose recursion a 100k-deep dict would exhaust (RecursionError, not the contract's error).
        _core.check_workload(dict(document), _catalog_core(catalog))
        workload = cls.__new__(cls)
        workload._data = copy.deepcopy(dict(document))
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
    dequant = Field[float]("QLoRA: NF4 dequantisation of the base weights before every GEMM (part of compute), s.")
    offload = Field[float]("CPU offload, added to the step: PCIe transfers of gradients and weights and the "
                           "host's optimizer step, s.")
    exposed_comm = Field[float]("Communication not hidden behind compute, s: the sum of the *_exposed parts.")
    tp_exposed = Field[float]("The part of tp_comm compute does not hide, s.")
    cp_exposed = Field[float]("The part of cp_comm compute does not hide, s.")
    pp_exposed = Field[float]("The part of pp_comm compute does not hide, s.")
    dp_exposed = Field[float]("The part of dp_comm compute does not hide, s.")
    ep_exposed = Field[float]("The part of ep_comm compute does not hide, s.")


class Layout(Record):
    """How the job is split: ``plan.layout``."""

    __slots__ = ()
    _summary = ("tp", "pp", "dp", "zero")

    tp = Field[int]("Tensor-parallel degree.")
    pp = Field[int]("Pipeline-parallel degree.")
    cp = Field[int]("Context-parallel degree.")
    dp = Field[int]("Data-parallel degree.")
    dp_shard = Field[int](
        "Data-parallel ranks the ZeRO states are sharded over (hybrid sharding: dp / dp_shard copies; dp when "
        "fully sharded)."
    )
    micro_batch = Field[int]("Micro-batch size, sequences.")
    zero = Field[int]("ZeRO stage, 0-3.")
    recompute = Field[str]("Activation recompute: 'none', 'selective' or 'full'.")
    recompute_layer_fraction = Field[float]("With recompute 'full': the share of layers checkpointed (1 = every layer).")
    sequence_parallel = Field[bool]("Sequence parallelism with TP.")
    virtual_stages = Field[int]("Virtual pipeline stages per GPU.")
    ep = Field[int]("Expert-parallel degree (MoE; 1 for dense models).")
    etp = Field[int]("Expert tensor-parallel degree (MoE).")
    edp = Field[int]("Expert data-parallel degree: tp x cp x dp / (ep x etp).")
    overlap_a2a = Field[bool]("Whether the MoE all-to-all is hidden behind another micro-batch's compute.")
    dualpipe = Field[bool]("DualPipe's bidirectional pipeline schedule (MoE training, DeepSeek-V3).")
    tp_comm_overlap = Field[bool](
        "Transformer Engine's TP communication overlap (Megatron-Core's userbuffers; on by default where it can run)."
    )
    overlap_p2p_comm = Field[bool](
        "Pipeline sends overlapped with compute (Megatron-Core's interleaved schedule, DualPipe; on where it can run)."
    )
    overlap_grad_reduce = Field[bool](
        "Megatron-Core's DDP overlap of the gradient reduction and parameter gather (on where it can run)."
    )


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
    memory_verdict = Field[str]("'fits', 'tight' (fits but inside the memory model's measured error band: may OOM) or 'no'.")
    offload_host_checked = Field[Optional[bool]]("CPU offload only (None without it): whether the node's host memory "
                                                 "and vCPUs are known, so the offloaded states were checked against "
                                                 "the host; recommend() ranks False after the others.")
    memory_error_band = Field[float]("The memory model's error band, a fraction of the predicted total.")
    memory_margin_gb = Field[float]("Capacity minus total memory per GPU, GB (negative: does not fit).")
    why_not = Field[List[str]]("Why it does not fit or meet the constraints, in words; empty when it does.")
    why_not_reasons = Field[List[str]]("The class of each why_not entry: memory, deadline, budget, "
                                       "latency_target, constraint (the vocabulary of recommend's rejected).")
    memory_gb = Field[MemoryBreakdown]("Memory per GPU, GB.", MemoryBreakdown)
    step_time_s = Field[float]("Time of one optimizer step (training) or one batch, s.")
    time_s = Field[TimeBreakdown]("The step's time by part, s.", TimeBreakdown)
    tokens_per_s = Field[float]("Tokens per second, whole job: trained tokens, or for inference generated output tokens.")
    interval = Field[Dict[str, Any]](
        "p10-p90 interval: {'level', 'step_time_s': {'p10', 'p90'}, 'job_hours' (or None), 'tokens_per_s', 'cost_usd' (or None), "
        "'usd_per_million_tokens' (or None), 'basis', 'widened'} from calibration residuals of comparable runs.")
    model_tflops_per_gpu = Field[float]("Model FLOPs achieved per GPU, TFLOP/s.")
    hardware_tflops_per_gpu = Field[float]("Hardware FLOPs (with recompute) per GPU, TFLOP/s.")
    mfu = Field[float]("Model FLOPs utilisation, 0-1.")
    price_usd_per_hour = Field[Optional[float]]("Price of all nodes, USD per hour; None without a price.")
    job_hours = Field[Optional[float]]("Wall-clock time of the whole job, hours.")
    cost_usd = Field[Optional[float]]("Cost of the job, USD; None without a price.")
    usd_per_million_tokens = Field[Optional[float]]("USD per million tokens as tokens_per_s counts them (inference: "
                                                    "output tokens); None without a price.")
    meets_deadline = Field[Optional[bool]]("Whether the job ends before the constraints' deadline.")
    within_budget = Field[Optional[bool]]("Whether the job costs at most the constraints' budget.")
    bottleneck = Field[str]("The link or resource that dominates, in words.")
    bandwidth_source = Field[JsonDict]("Where each bandwidth came from (intra_node, inter_node, hbm): "
                                       "'claimed: catalog ...' or 'measured: probe report ...'.")
    links = Field[JsonDict]("Effective link bandwidths used: intra_node_busbw_gbytes_per_s, "
                            "inter_node_gbytes_per_s_per_gpu (None when the catalog states no network).")
    warnings = Field[List[str]]("Caveats of this estimate.")
    kv_cache_precision = Field[Optional[str]]("Inference: the KV cache's precision ('bf16', 'fp16', 'fp8').")
    ttft_s = Field[Optional[float]]("Inference: time to first token, s.")
    tpot_s = Field[Optional[float]]("Inference: time per output token at the plan's concurrency (the decode steps "
                                    "with the other requests' prefill chunks sharing them), s.")
    decode_tokens_per_s = Field[Optional[float]]("Inference: output tokens per second of the decode steps alone "
                                                  "(concurrent / step_time_s; tpot_s also counts the prefills).")
    meets_latency_target = Field[Optional[bool]]("Inference: whether the latency target is met.")
    ttft_under_load_s = Field[Optional[float]]("Inference: mean time to first token when one replica's "
                                               "requests start together (queued, chunked prefill), plus the "
                                               "wait for a slot of those beyond the engine's KV pool, s.")
    engine = Field[Optional[str]]("Inference: the serving engine profile used ('vllm', 'sglang', 'tensorrt-llm'; job.engine auto: "
                                  "'tensorrt-llm' on NVIDIA GPUs, 'vllm' on AMD).")
    framework = Field[Optional[str]]("Training: the stack the step was planned as (job.framework; auto: "
                                     "'megatron-core' below ZeRO-3, 'fsdp' with compiled blocks at ZeRO-3, "
                                     "'deepspeed' at ZeRO-3 where job.offload is 'optimizer', 'hf-accelerate' "
                                     "for QLoRA below ZeRO-3).")
    concurrent = Field[Optional[int]]("Inference: sequences decoded together, whole job.")
    max_concurrent = Field[Optional[int]]("Inference: the most sequences the engines run together, whole "
                                          "job: what their KV pools hold or their batch limit, whichever is "
                                          "lower (job.concurrent \"max\" plans at it).")
    max_concurrent_limit = Field[Optional[str]]("Inference: what sets max_concurrent: 'kv_pool' (the KV cache "
                                                "is full) or 'engine_batch_limit' (the engine's cap on "
                                                "sequences per step: job.engine_batch_limit where set, else "
                                                "vLLM's max_num_seqs 256, TensorRT-LLM's max_batch_size 2048).")
    concurrent_is_max = Field[Optional[bool]]("Inference: True when job.concurrent was \"max\".")
    why = Field[Optional[str]]("recommend(): why this plan ranks here, in words.")

    def _repr_html_(self) -> str:
        """The answer first (verdict, instance x nodes, layout, hours, cost, bottleneck), then
        memory per GPU in stacking order, the step's time, throughput and where the bandwidths
        came from; rounded, with units."""
        return _plan_html(self._data)

    def plot(self, kind: str = "memory", ax: Any = None) -> Any:
        """A bar chart of this plan's memory per GPU (``kind="memory"``, stacked in the order
        weights, gradients, optimizer, activations, KV cache, overhead, against the capacity) or
        of its step time by part (``kind="time"``). Returns the matplotlib Axes."""
        return PlanList([self]).plot(kind, ax=ax)


class PlanList(RecordList[Plan]):
    """Plans, best first (``linkwise.recommend``); ``to_pandas()`` flattens nested objects into
    "memory_gb.total", "time_s.compute", "layout.tp" ... columns."""

    _item = Plan
    _flatten = True
    _columns = ("instance", "nodes", "layout.tp", "layout.pp", "layout.dp", "layout.zero",
                "fits", "job_hours", "cost_usd", "bottleneck")

    def to_pandas(self) -> Any:
        """A DataFrame, one row per plan, in the order of the HTML view: the answer (instance,
        nodes, fits, hours, cost, bottleneck), the layout, memory per GPU in stacking order, the
        step's time by part, then the rest; nested objects as "memory_gb.total" ... columns."""
        frame = super().to_pandas()
        if not self:
            # An empty answer is an empty frame with the plan's columns, and says why: a warning
            # (the reason also rides in frame.attrs["why_no_results"]), never a silent blank.
            frame = frame.reindex(columns=list(PLAN_COLUMNS))
            frame.attrs["why_no_results"] = self.why_no_results
            warnings.warn("no plan: " + (self.why_no_results or "the search returned none"), stacklevel=2)
            return frame
        first = [c for c in PLAN_COLUMNS if c in frame.columns]
        return frame[first + [c for c in frame.columns if c not in first]]

    def plot(self, kind: str = "memory", ax: Any = None) -> Any:
        """Charts of the plans (matplotlib, imported here): ``"memory"`` memory per GPU stacked
        by part with each capacity, ``"time"`` step time by part, ``"pareto"`` cost against job
        time with the Pareto front (plans no other beats on both) joined. Returns the Axes."""
        try:
            import matplotlib.pyplot as plt  # type: ignore[import-untyped, unused-ignore]
        except ImportError as error:
            raise ImportError("plot() needs matplotlib: pip install 'linkwise[notebooks]'") from error
        if kind not in ("memory", "time", "pareto"):
            raise ValueError(f"kind: expected 'memory', 'time' or 'pareto', got {kind!r}")
        if not self:  # an empty chart would say nothing; the search's reason does
            raise ValueError("no plan to plot: " + (self.why_no_results or "the list is empty"))
        if ax is None:
            _, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(self) + 3), 4))
        labels = [f"{p.nodes} x {p.instance}\n{_layout_words(p['layout'], p['job_kind'] == 'inference')}" for p in self]
        if kind == "pareto":
            points = [(p.job_hours, p.cost_usd, f"{p.nodes} x {p.instance}") for p in self
                      if p.job_hours is not None and p.cost_usd is not None]
            if not points:
                raise ValueError("plot('pareto') needs job_hours and cost_usd: give job.tokens and use priced instances")
            ax.scatter([h for h, _, _ in points], [c for _, c, _ in points], color="tab:gray", label="plans")
            front = pareto_front(points)
            ax.plot([h for h, _, _ in front], [c for _, c, _ in front], "o-", color="tab:red", label="Pareto front")
            for h, c, name in front:
                ax.annotate(name, (h, c), textcoords="offset points", xytext=(4, 4), fontsize=8)
            ax.set_xlabel("job time (h)")
            ax.set_ylabel("job cost (USD)")
            ax.legend()
            return ax
        parts = MEMORY_PARTS if kind == "memory" else TIME_PARTS
        key = "memory_gb" if kind == "memory" else "time_s"
        bottom = [0.0] * len(self)
        for part in parts:
            values = [float(p[key].get(part) or 0.0) for p in self]
            ax.bar(range(len(self)), values, bottom=bottom, label=part)
            bottom = [b + v for b, v in zip(bottom, values)]
        if kind == "memory":
            ax.scatter(range(len(self)), [p["memory_gb"]["capacity"] for p in self], marker="_", s=600,
                       color="black", label="capacity", zorder=3)
            ax.set_ylabel("memory per GPU (GB)")
        else:
            ax.set_ylabel("time per step (s)")
        ax.set_xticks(range(len(self)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.legend(fontsize=8)
        return ax

    def __init__(self, items: Sequence[Any], search: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(items)
        self._search: JsonDict = dict(search or {})

    @property
    def search(self) -> JsonDict:
        """What the search did: evaluated, feasible, pruned_subtrees, hardware_considered,
        skipped, objective, model (the rest of ``linkwise recommend --json``)."""
        return copy.deepcopy(self._search)

    @property
    def rejected(self) -> List[JsonDict]:
        """Instance types with no qualifying plan and why: [{"instance", "gpu_model", "reason",
        "reasons": [{"reason", "count", "detail", "best_hours"?...}]}]. Reasons: memory, deadline,
        budget, network_unknown, unpriced, latency_target, constraint (the workload's constraints), unsupported
        (the GPU cannot run the job as asked) (as Plan.why_not_reasons)."""
        return copy.deepcopy(self._search.get("rejected", []))

    @property
    def why_no_results(self) -> Optional[str]:
        """Why the list is empty, in words (``why_no_results`` of ``linkwise recommend --json``);
        None when it holds plans."""
        return self._search.get("why_no_results") or None

    def to_contract(self) -> JsonDict:
        """The whole ``linkwise recommend --json`` document: {"results": [...], **search}."""
        return {"results": self.to_dict(), **copy.deepcopy(self._search)}

    # An empty answer says why where it is shown (a notebook cell, repr()), as the CLI and the web
    # page do, not only in .search.
    def __repr__(self) -> str:
        text = super().__repr__()
        return text + ("\nno plan: " + self.why_no_results if not self and self.why_no_results else "")

    def _repr_html_(self) -> str:
        html = super()._repr_html_()
        if not self and self.why_no_results:
            html += "<p><strong>No plan:</strong> " + _html.escape(self.why_no_results) + "</p>"
        return html


# The order of a plan's fields in its HTML view and to_pandas(): the answer, then the details.
PLAN_COLUMNS = (
    "instance", "nodes", "gpus", "gpu_model", "fits", "job_hours", "cost_usd", "usd_per_million_tokens",
    "bottleneck", "why", "layout.tp", "layout.pp", "layout.cp", "layout.dp", "layout.micro_batch",
    "layout.zero", "layout.recompute", "layout.sequence_parallel", "layout.virtual_stages",
    "memory_gb.weights", "memory_gb.gradients", "memory_gb.optimizer", "memory_gb.activations",
    "memory_gb.kv_cache", "memory_gb.overhead", "memory_gb.total", "memory_gb.capacity", "memory_margin_gb",
    "step_time_s", "time_s.compute", "time_s.tp_comm", "time_s.cp_comm", "time_s.pp_comm",
    "time_s.pp_bubble", "time_s.dp_comm", "time_s.exposed_comm", "tokens_per_s", "mfu",
    "model_tflops_per_gpu", "hardware_tflops_per_gpu", "price_usd_per_hour", "meets_deadline",
    "within_budget", "why_not", "why_not_reasons", "warnings", "model", "job_kind", "precision",
    "gpus_per_node", "custom_hardware")
MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "kv_cache", "overhead")
# The parts of a step that add up to it: compute (dequantisation within it), the pipeline bubble,
# each communication's exposed part (what compute does not hide) and CPU offload.
TIME_PARTS = ("compute", "pp_bubble", "tp_exposed", "cp_exposed", "pp_exposed", "dp_exposed", "ep_exposed", "offload")
# Each communication's whole time beside its exposed part.
EXPOSED_OF = {"tp_exposed": "tp_comm", "cp_exposed": "cp_comm", "pp_exposed": "pp_comm", "dp_exposed": "dp_comm",
              "ep_exposed": "ep_comm"}


def pareto_front(points: Sequence[Any]) -> List[Any]:
    """The points (x, y, ...) no other point beats on both x and y (lower is better), by x."""
    front: List[Any] = []
    for point in sorted(points, key=lambda p: (p[0], p[1])):
        if not front or point[1] < front[-1][1]:
            front.append(point)
    return front


def _layout_words(layout: Mapping[str, Any], serving: bool = False) -> str:
    words = f"tp={layout.get('tp')} pp={layout.get('pp')} dp={layout.get('dp')}"
    if layout.get("cp", 1) != 1:
        words += f" cp={layout['cp']}"
    if layout.get("ep", 1) != 1 or layout.get("etp", 1) != 1:  # mixture-of-experts: the experts' grid
        words += f" ep={layout.get('ep')} etp={layout.get('etp')}"
    if serving:  # the training settings say nothing of a serving engine
        return words
    return words + f" zero={layout.get('zero')}"


def _num(value: Any, unit: str = "", digits: int = 1) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:,.{digits}f}{(' ' + unit) if unit else ''}"


def _plan_html(d: Mapping[str, Any]) -> str:
    import html as _html
    esc = _html.escape
    layout = d.get("layout") or {}
    mem = d.get("memory_gb") or {}
    time_s = d.get("time_s") or {}
    serving = d.get("job_kind") == "inference"
    verdict = "fits" if d.get("fits") else "does not fit"
    if d.get("memory_verdict") == "tight":
        verdict = "tight: fits, but inside the memory model's error band (it may run out of memory)"
    if d.get("fits") and d.get("why_not"):
        verdict += ", but misses a constraint"
    rows: List[Any] = [
        ("verdict", verdict + ("" if not d.get("why_not") else ": " + "; ".join(d["why_not"]))),
        ("hardware", f"{d.get('nodes')} x {d.get('instance')} ({d.get('gpus')} x {d.get('gpu_model')})"),
        ("layout", _layout_words(layout, serving) + ("" if serving else f" micro_batch={layout.get('micro_batch')} "
                                                                         f"recompute={layout.get('recompute')}")),
        ("job time", _num(d.get("job_hours"), "h")),
        ("cost", "unknown" if d.get("cost_usd") is None else f"${d['cost_usd']:,.0f}"),
        ("bottleneck", d.get("bottleneck")),
    ]
    if d.get("why"):
        rows.append(("why", d["why"]))
    rows.append(("memory per GPU", ""))
    rows += [(f"  {part}", _num(mem.get(part), "GB")) for part in MEMORY_PARTS]
    rows.append(("  total / capacity", f"{_num(mem.get('total'), 'GB')} of {_num(mem.get('capacity'), 'GB')}"))
    rows.append((f"step time", _num(d.get("step_time_s"), "s", 3)))
    for part in TIME_PARTS:
        if not time_s.get(part) and not time_s.get(EXPOSED_OF.get(part, part)):
            continue
        value = _num(time_s.get(part), "s", 3)
        if part in EXPOSED_OF:  # exposed, of its whole time
            value += f" exposed of {_num(time_s.get(EXPOSED_OF[part]), 's', 3)}"
        rows.append((f"  {EXPOSED_OF.get(part, part)}", value))
    if time_s.get("dequant"):
        rows.append(("  (dequantisation, within compute)", _num(time_s.get("dequant"), "s", 3)))
    rows += [
        ("tokens/s", _num(d.get("tokens_per_s"), "", 0)),
        ("MFU", "unknown" if d.get("mfu") is None else f"{100 * d['mfu']:.1f}%"),
        ("price", "unknown" if d.get("price_usd_per_hour") is None else f"${d['price_usd_per_hour']:,.2f}/h"),
        ("USD per million output tokens" if d.get("job_kind") == "inference" else "USD per million tokens",
         _num(d.get("usd_per_million_tokens"), "", 3)),
    ]
    if d.get("ttft_s") is not None:
        rows += [("time to first token", _num(d.get("ttft_s"), "s", 3)),
                 ("time to first token under load", _num(d.get("ttft_under_load_s"), "s", 3)),
                 ("time per output token", _num(1000 * d["tpot_s"], "ms", 2))]
    rows += [(f"warning", w) for w in d.get("warnings") or []]
    source = d.get("bandwidth_source") or {}
    rows += [(f"bandwidth: {k.replace('_', '-')}", v) for k, v in source.items()]
    body = "".join(f"<tr><th style='text-align:left'>{esc(str(k))}</th><td style='text-align:left'>"
                   f"{esc(str(v))}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


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
    active_params_b, context_tokens (the context its publisher states; plans warn beyond it) and the
    source of each."""
    return _core.models()


def plan(workload: Union[Workload, Mapping[str, Any]], catalog: Optional[Catalog] = None,
         report: Any = None) -> Plan:
    """Evaluates the workload's one layout on its hardware (``linkwise plan``). ``report``: a
    ProbeReport (or its path) whose measured bandwidths replace the catalog's claims."""
    return Plan(_core.plan(_workload_dict(workload), _catalog_core(catalog), _report_dict(report)))


def recommend(workload: Union[Workload, Mapping[str, Any]], top: int = _core.default_top,
              catalog: Optional[Catalog] = None, report: Any = None, per: Optional[str] = None) -> PlanList:
    """Searches instances x nodes x layouts for the workload and returns the ``top`` best plans
    by the constraints' objective (``linkwise recommend``). ``top``: 1 to 100 (default 5, as the
    CLI's --top and REST's ?top=). ``per``: ``"instance"`` or ``"gpu"`` returns the best plan of
    each instance type or GPU model instead, ranked (CLI --per, REST ?per=).

    When nothing qualifies the list is empty and ``.rejected`` says why, per instance type."""
    if isinstance(top, bool) or not isinstance(top, int):
        raise TypeError(f"top: expected an integer, got {type(top).__name__}")
    if per is not None and not isinstance(per, str):
        raise TypeError(f"per: expected 'instance', 'gpu' or None, got {type(per).__name__}")
    found = _core.recommend(_workload_dict(workload), _catalog_core(catalog), top, _report_dict(report),
                            per or "none")
    results = found.pop("results")
    return PlanList(results, search=found)
