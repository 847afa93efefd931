"""Probe reports for the tests, built here as labelled test inputs (note: "synthetic test input").

Every result repeats one value, so its statistics are that value (stddev and spread 0) and need no
second implementation of the probe statistics here. The figures are chosen to land on either side
of validate's thresholds, not measured on any machine.
"""
import copy


def _result(metric, value, counting, labels, nbytes=1 << 30):
    samples = [value] * 5
    return {"metric": metric, "unit": "GB/s", "counting": counting, "bytes": nbytes, "labels": labels,
            "samples": samples,
            "stats": {"count": 5, "median": value, "min": value, "max": value, "mean": value, "stddev": 0.0,
                      "p5": value, "p95": value, "spread": 0.0}}


def _gpu(index):
    return {"index": index, "name": "NVIDIA H100 80GB HBM3", "uuid": None, "pci_bus_id": None, "numa_node": None,
            "compute_capability": "9.0", "memory_bytes": 85899345920, "l2_bytes": None, "sm_count": 132,
            "pcie_link_gen": 5, "pcie_link_width": 16, "pcie_max_link_gen": 5, "pcie_max_link_width": 16,
            "sm_clock_mhz": None, "memory_clock_mhz": None, "power_limit_w": None, "ecc_enabled": None,
            "nvlink_active_links": None}


def h100_node_report(allreduce_busbw_gbytes_per_s: float, device_copy_gbytes_per_s: float, gpus: int = 8) -> dict:
    """An 8-GPU H100 node's report: NCCL all-reduce busbw over all GPUs and a device-memory copy."""
    return {
        "schema_version": 1,
        "note": "synthetic test input",
        "environment": {
            "created_at": "2026-01-01T00:00:00Z", "hostname": "test-node", "linkwise_version": "0.1.0",
            "quick": True, "nodes": 1, "ranks": 1, "driver_version": None, "cuda_runtime_version": None,
            "nccl_version": None, "mpi_library_version": None, "virtual_machine": None, "hypervisor": None,
            "dmi_sys_vendor": None, "dmi_product_name": None, "cloud_provider": None, "cloud_instance_type": None,
            "gpus": [_gpu(i) for i in range(gpus)], "p2p_access": None,
        },
        "probes": [
            {"name": "nccl", "description": "NCCL collectives", "status": "ok", "reason": None, "duration_s": 1.0,
             "results": [_result("nccl-busbw", allreduce_busbw_gbytes_per_s, "one-direction",
                                 {"collective": "all-reduce", "ranks": str(gpus), "nodes": "1"})]},
            {"name": "device-memory", "description": "device memory copy", "status": "ok", "reason": None,
             "duration_s": 1.0,
             "results": [_result("device-copy", device_copy_gbytes_per_s, "read+write",
                                 {"gpu": str(i), "method": "copy-engine"}) for i in range(gpus)]},
        ],
    }


def with_cloud_metadata(report: dict, provider: str, instance_type: str) -> dict:
    out = copy.deepcopy(report)
    out["environment"]["cloud_provider"] = provider
    out["environment"]["cloud_instance_type"] = instance_type
    return out
