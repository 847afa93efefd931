"""The instance catalog from Python: GPU models, cloud instance types and queries over them.
Attribute names and units are the JSON contract's (README, "Fields"): GB = 10^9 bytes,
GB/s = 10^9 bytes/s, Gbit/s = 10^9 bits/s, prices in USD per hour."""

from __future__ import annotations

import os
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence

from . import _core
from ._records import Field, Record, RecordList

Sources = Dict[str, Dict[str, Any]]


class Gpu(Record):
    """A GPU model of the catalog (``catalog.gpus()``)."""

    __slots__ = ()
    _summary = ("id", "memory_gb", "bf16_dense_tflops", "nvlink_gbytes_per_s")

    id = Field[str]("GPU id, e.g. 'H100-SXM5-80GB'.")
    vendor = Field[str]("'nvidia' or 'amd'.")
    architecture = Field[str]("Architecture, e.g. 'hopper'.")
    memory_gb = Field[float]("Nominal memory per GPU in GB, as on the spec sheet (binary: 80 GB = 80 GiB).")
    hbm_gbytes_per_s = Field[float]("Memory bandwidth, GB/s (10^9 bytes/s).")
    bf16_dense_tflops = Field[Optional[float]]("Dense BF16 tensor peak, TFLOP/s (no sparsity); None where none or unpublished.")
    fp16_dense_tflops = Field[Optional[float]]("Dense FP16 tensor peak, TFLOP/s; None where none or unpublished.")
    fp8_dense_tflops = Field[Optional[float]]("Dense FP8 tensor peak, TFLOP/s; None where none or unpublished.")
    fp4_dense_tflops = Field[Optional[float]]("Dense FP4 (NVFP4/MXFP4) tensor peak, TFLOP/s; None where the GPU has no FP4.")
    nvlink_gbytes_per_s = Field[Optional[float]]("NVLink per GPU, GB/s, both directions added; None without NVLink.")
    nvlink_generation = Field[Optional[int]]("NVLink generation; None without NVLink.")
    nvlink_domain_max_gpus = Field[Optional[int]](
        "The most GPUs one NVLink (or Infinity Fabric) domain joins at full bandwidth, as the vendor "
        "states it (8 on HGX H100, 72 on GB200 NVL72); None where not stated.")
    pcie_gen = Field[Optional[int]]("PCIe generation of the host link.")
    tdp_w = Field[Optional[float]]("Board power, W.")
    sources = Field[Sources]("Fact group -> {'url', 'as_of', 'note'}: where each fact comes from.")


class Instance(Record):
    """A cloud instance type of the catalog (``catalog.instances()``, ``catalog[id]``)."""

    __slots__ = ()
    _summary = ("id", "gpu_model", "gpu_count", "intra_node_fabric", "network_gbits_per_s",
                "price_usd_per_hour", "price_usd_per_gpu_hour")

    id = Field[str]("'provider:name', e.g. 'aws:p5.48xlarge'.")
    provider = Field[str]("'aws', 'gcp', 'azure', 'oci', 'lambda', 'coreweave', ...")
    name = Field[str]("The name as the provider spells it, e.g. 'p5.48xlarge'.")
    gpu_model = Field[str]("A GPU id (see ``Catalog.gpus()``).")
    gpu_count = Field[int]("GPUs per instance.")
    gpu_memory_gb = Field[float]("Nominal memory per GPU, GB.")
    vcpus = Field[Optional[int]]("Host vCPUs.")
    memory_gib = Field[Optional[float]]("Host memory, GiB.")
    intra_node_fabric = Field[str]("'nvswitch', 'nvlink', 'pcie', 'infinity-fabric' or 'none' (one GPU).")
    nvlink_gbytes_per_s = Field[Optional[float]]("NVLink per GPU, GB/s, both directions added; None without NVLink.")
    nvlink_domain_gpus = Field[Optional[int]](
        "GPUs one GPU reaches over NVLink at nvlink_gbytes_per_s: 8 on HGX H100, 72 on a GB200 NVL72 "
        "tray rented within its rack, 1 without NVLink; None if unknown.")
    network_type = Field[str]("'efa', 'infiniband', 'roce', 'gpudirect-tcpx', 'gpudirect-tcpxo' or 'ethernet'.")
    network_gbits_per_s = Field[Optional[float]](
        "The GPU fabric between instances (the NICs NCCL uses), Gbit/s; for instances without one, "
        "their network bandwidth. Never the front-end NICs.")
    network_nics = Field[Optional[int]]("GPU-fabric NICs (p5: 32); None if unknown.")
    network_nic_gbits_per_s = Field[Optional[float]](
        "One GPU-fabric NIC, Gbit/s (p5: 100); network_nics x this = network_gbits_per_s.")
    frontend_network_gbits_per_s = Field[Optional[float]](
        "General-purpose (host/front-end) NICs, Gbit/s, not for GPU traffic; None where not stated separately.")
    gpudirect_rdma = Field[Optional[bool]]("GPUDirect RDMA between instances; None if unknown.")
    price_usd_per_hour = Field[Optional[float]]("On-demand price, USD per hour.")
    price_usd_per_gpu_hour = Field[Optional[float]]("Derived: price_usd_per_hour / gpu_count; None without a price.")
    price_region = Field[Optional[str]]("The region the price is for.")
    price_as_of = Field[Optional[str]]("Date of the price, YYYY-MM-DD.")
    spot_price_usd_per_hour = Field[Optional[float]]("Spot price, USD per hour; None if unknown.")
    regions = Field[List[str]]("Regions offering the instance.")
    sources = Field[Sources]("Fact group -> {'url', 'as_of', 'note'}: where each fact comes from.")


class GpuList(RecordList[Gpu]):
    """GPU models: a list of ``Gpu`` with ``to_pandas()``."""

    _item = Gpu
    _columns = ("id", "vendor", "architecture", "memory_gb", "hbm_gbytes_per_s", "bf16_dense_tflops",
                "nvlink_gbytes_per_s")


class InstanceList(RecordList[Instance]):
    """Instances: a list of ``Instance`` with ``to_pandas()``; columns are the contract names.
    ``excluded_unknown`` says what the query's filters hid only because a filtered field is unknown:
    ``{"gpudirect_rdma": 12}`` after ``rdma=True`` (the REST answer's field of the same name)."""

    __slots__ = ("_excluded_unknown",)
    _item = Instance
    _columns = ("id", "gpu_model", "gpu_count", "price_usd_per_gpu_hour", "intra_node_fabric",
                "nvlink_gbytes_per_s", "network_type", "network_gbits_per_s", "price_usd_per_hour")

    def __init__(self, items: Sequence[Mapping[str, Any]] | Sequence[Instance],
                 excluded_unknown: Optional[Mapping[str, int]] = None) -> None:
        super().__init__(items)
        self._excluded_unknown: Dict[str, int] = dict(excluded_unknown or {})

    @property
    def excluded_unknown(self) -> Dict[str, int]:
        """Instance field -> how many instances the query's filters hid only because that field is
        unknown (None), e.g. ``{"gpudirect_rdma": 12}`` after ``rdma=True``; empty when none. An
        instance lacking two filtered fields counts under both. A copy: changing it changes nothing."""
        return dict(self._excluded_unknown)

    def to_contract(self) -> Dict[str, Any]:
        """The whole ``linkwise instances --json`` document: {"total", "excluded_unknown", "items"}."""
        return {"total": len(self), "excluded_unknown": self.excluded_unknown, "items": self.to_dict()}

    def __getitem__(self, index: Any) -> Any:
        found = super().__getitem__(index)
        if isinstance(found, InstanceList):  # a slice: still the answer of the same query
            found._excluded_unknown = dict(self._excluded_unknown)
        return found

    def __repr__(self) -> str:
        text = super().__repr__()
        if self._excluded_unknown:
            hidden = ", ".join(f"{field} unknown ({count})" for field, count in self._excluded_unknown.items())
            text += f"\nhidden: {hidden}"
        return text


class Catalog:
    """The GPU instance catalog: ``Catalog.default()`` (shipped with the package) or
    ``Catalog.open(path)`` (a SQLite catalog database). Immutable; safe to share between threads."""

    __slots__ = ("_core", "_source")
    _default: Optional[Catalog] = None
    _default_lock = threading.Lock()

    def __init__(self, core: _core.Catalog, source: str) -> None:
        """Wraps a compiled catalog; use ``default()``, ``open()`` or ``load_data_dir()``."""
        self._core = core
        self._source = source

    @classmethod
    def default(cls) -> Catalog:
        """The catalog shipped with linkwise (loaded once, then shared)."""
        with cls._default_lock:
            if cls._default is None:
                cls._default = cls(_core.Catalog.embedded(), "embedded")
            return cls._default

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Catalog:
        """A SQLite catalog database (``linkwise`` build output or ``--db`` file)."""
        return cls(_core.Catalog.open(os.fspath(path)), os.fspath(path))

    @classmethod
    def load_data_dir(cls, data_dir: str | os.PathLike[str]) -> Catalog:
        """The reviewed text files of a data/ directory (gpus.json, instances/*.json)."""
        return cls(_core.Catalog.load_data_dir(os.fspath(data_dir)), os.fspath(data_dir))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes this catalog to a SQLite database (atomically), readable by ``Catalog.open``
        and ``linkwise --db``."""
        self._core.save(os.fspath(path))

    def instances(self, gpu: Optional[str] = None, min_gpus: Optional[int] = None,
                  fabric: Optional[str] = None, provider: Optional[str] = None,
                  max_price: Optional[float] = None, min_gpu_memory_gb: Optional[float] = None,
                  min_nvlink_gbytes_per_s: Optional[float] = None,
                  min_network_gbits_per_s: Optional[float] = None, rdma: Optional[bool] = None,
                  region: Optional[str] = None, sort: Optional[str] = None) -> InstanceList:
        """Instances matching every given filter (None: any), the same query as
        ``linkwise instances``. ``gpu`` is a GPU id or family ('H100' matches every H100);
        ``max_price`` is USD/hour on demand (instances without a price never match); ``sort`` is a
        field name, '-' in front for descending (nulls last), e.g. 'price_usd_per_gpu_hour'.
        Instances hidden only because a filtered field is unknown are counted in the result's
        ``excluded_unknown``. Raises ``linkwise.InvalidInputError`` (a ValueError) naming the filter
        for a bad value, and for a GPU or provider name that names nothing (with a suggestion)."""
        found = self._core.instances(
            gpu=gpu, min_gpus=min_gpus, fabric=fabric, provider=provider, max_price=max_price,
            min_gpu_memory_gb=min_gpu_memory_gb, min_nvlink_gbytes_per_s=min_nvlink_gbytes_per_s,
            min_network_gbits_per_s=min_network_gbits_per_s, rdma=rdma, region=region, sort=sort)
        return InstanceList(found["items"], found["excluded_unknown"])

    def gpus(self) -> GpuList:
        """Every GPU model of the catalog."""
        return GpuList(self._core.gpus())

    def gpu(self, gpu_id: str) -> Gpu:
        """One GPU model by id; ``linkwise.NotFoundError`` (a KeyError) when unknown."""
        return Gpu(self._core.gpu(_require_str(gpu_id)))

    def to_dict(self) -> Dict[str, Any]:
        """{"gpus": [...], "instances": [...]}: the whole catalog in the contract's field names."""
        return {"gpus": self._core.gpus(), "instances": self._core.instances()["items"]}

    def to_json(self, indent: Optional[int] = None) -> str:
        """The whole catalog as a JSON string (see ``to_dict``)."""
        import json
        return json.dumps(self.to_dict(), indent=indent)

    def __getitem__(self, instance_id: str) -> Instance:
        """One instance by id ('aws:p5.48xlarge'); ``linkwise.NotFoundError`` (a KeyError) when unknown."""
        return Instance(self._core.instance(_require_str(instance_id)))

    def __contains__(self, instance_id: object) -> bool:
        if not isinstance(instance_id, str):
            return False
        try:
            self._core.instance(instance_id)
        except (KeyError, ValueError):  # unknown, or a str with no UTF-8 form (a lone surrogate)
            return False
        return True

    def __len__(self) -> int:
        """The number of instance types."""
        return int(self._core.instance_count())

    def __repr__(self) -> str:
        return (f"Catalog({self._source!r}: {self._core.instance_count()} instances, "
                f"{self._core.gpu_count()} GPU models)")


def _catalog_core(catalog: Optional[Catalog]) -> Any:
    """The compiled catalog of ``catalog``, or of the shipped one when None."""
    return (catalog if catalog is not None else Catalog.default())._core


def _require_str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected an id string, got {type(value).__name__}")
    return value
