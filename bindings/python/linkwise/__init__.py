"""linkwise: choose cloud GPUs by their links.

A sourced catalog of GPU instances (NVLink, NVSwitch, PCIe, EFA/InfiniBand/RoCE, prices), a
planner that predicts memory, time and cost of a job on each, and probes that measure the links.
The C++ core does the work (linkwise._core); this package gives it Pythonic names. Field names
and units are the JSON contract shared with the ``linkwise`` CLI (``--json``) and the REST service.

    >>> import linkwise
    >>> linkwise.Catalog.default().instances(gpu="H100", min_gpus=8, fabric="nvswitch")
"""

from . import _core
from ._errors import (Error, InvalidInputError, NotFoundError, UnknownReferenceError,
                      UnsupportedError)
from .catalog import Catalog, Gpu, GpuList, Instance, InstanceList
from .planner import (Layout, MemoryBreakdown, Plan, PlanList, TimeBreakdown, Workload, models,
                      plan, recommend)
from .probes import (ProbeReport, ValidationResult, Verdict, VerdictList, has_probes, probe, validate,
                     validate_fleet)

__version__: str = _core.__version__  # the project version (CMakeLists.txt), as `linkwise --version`

__all__ = [
    "Catalog", "Error", "Gpu", "GpuList", "Instance", "InstanceList", "InvalidInputError",
    "Layout", "MemoryBreakdown", "NotFoundError", "Plan", "PlanList", "TimeBreakdown", "UnknownReferenceError", "Workload",
    "models", "plan", "recommend", "ProbeReport", "UnsupportedError", "ValidationResult", "Verdict",
    "VerdictList", "__version__", "has_probes", "probe", "validate",
    "validate_fleet",
]
