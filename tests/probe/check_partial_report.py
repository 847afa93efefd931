#!/usr/bin/env python3
"""check_partial_report.py MPIEXEC LINKWISE REPORT: on a machine without a GPU, a two-rank run of
topology and the host-only MPI test measures what it can: topology is `skipped` with the reason its
filter gives (no GPU, or no CUDA in this build), mpi-host-bandwidth is `ok`, and the report is
written. Exit 77 (skipped) where a GPU is present: there topology would run."""
import glob
import json
import subprocess
import sys

mpiexec, linkwise, path = sys.argv[1:4]
if glob.glob("/dev/nvidia[0-9]*"):
    print("an NVIDIA GPU is present; this test is for machines without one")
    sys.exit(77)
run = subprocess.run([mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", "2", linkwise, "probe",
                      "--multi-node", "--only", "topology,mpi-host-bandwidth", "--quick", "--out", path],
                     capture_output=True, text=True, timeout=120)
assert run.returncode == 0, (run.returncode, run.stderr)
probes = {p["name"]: p for p in json.load(open(path))["probes"]}
assert list(probes) == ["topology", "mpi-host-bandwidth"], list(probes)
topology = probes["topology"]
assert topology["status"] == "skipped" and topology["results"] == [], topology
assert topology["reason"].startswith(("no CUDA-capable GPU found (", "the GPU probes were not built")), topology
assert probes["mpi-host-bandwidth"]["status"] == "ok", probes["mpi-host-bandwidth"]["reason"]
print("partial report ok: topology skipped:", topology["reason"])
