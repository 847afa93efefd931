#!/usr/bin/env python3
"""check_mpi_report.py LINKWISE REPORT: the report written by the two-rank MPI run on one machine
holds the host-only probe's results, and `linkwise validate` reads it: the network claim cannot be
checked (both ranks on one host), the GPU claims cannot be checked (no GPU), exit 0."""
import json
import subprocess
import sys

linkwise, path = sys.argv[1], sys.argv[2]
report = json.load(open(path))
assert report["schema_version"] == 1
assert report["note"] is None, "a measured report carries no test note"
env = report["environment"]
assert env["ranks"] == 2 and env["nodes"] == 1, env
assert env["gpus"] == [], "host-only run records no GPU"
(probe,) = report["probes"]
assert probe["name"] == "mpi-host-bandwidth" and probe["status"] == "ok", probe
metrics = {(r["metric"], r["labels"].get("direction")) for r in probe["results"]}
assert ("mpi-host-bandwidth", "unidirectional") in metrics, metrics
assert ("mpi-host-bandwidth", "bidirectional") in metrics, metrics
assert ("mpi-host-latency", None) in metrics, metrics
for r in probe["results"]:
    assert r["labels"]["same_node"] == "true", r["labels"]
    assert r["stats"]["count"] == len(r["samples"]) >= 5
    assert all(x > 0 for x in r["samples"]), r
    if r["unit"] == "GB/s":
        assert r["counting"] in ("one-direction", "both-directions-added"), r

run = subprocess.run([linkwise, "validate", path, "--instance", "aws:p5.48xlarge", "--json"],
                     capture_output=True, text=True)
assert run.returncode == 0, (run.returncode, run.stderr)
verdicts = {v["claim"]: v for v in json.loads(run.stdout)["verdicts"]}
assert verdicts["network"]["verdict"] == "cannot-check", verdicts["network"]
assert "one host" in verdicts["network"]["reason"], verdicts["network"]
for claim in ("nvlink", "hbm", "pcie"):
    assert verdicts[claim]["verdict"] == "cannot-check" and "host-only" in verdicts[claim]["reason"]
print("mpi report ok:", len(probe["results"]), "results")
