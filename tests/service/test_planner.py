"""POST /v1/plans and /v1/recommendations answer exactly what `linkwise plan|recommend --json`
prints for the same workload, take a stored probe report in place of the catalog's claims, and
name the field of a bad workload."""
import json

import requests

from conftest import REPO, run_cli
from reports import h100_node_report

EXAMPLES = REPO / "data" / "examples"
PLAN_FILE = EXAMPLES / "pretrain-llama3.1-70b-p5.json"
RECOMMEND_FILE = EXAMPLES / "recommend-llama3.1-70b.json"


def post(server, path, body, **params):
    return requests.post(server.url + path, data=json.dumps(body), params=params, timeout=60,
                         headers={"Content-Type": "application/json"})


def test_plan_is_the_cli_plan(server):
    workload = json.loads(PLAN_FILE.read_text())
    r = post(server, "/v1/plans", workload)
    assert r.status_code == 200, r.text
    cli = json.loads(run_cli("plan", str(PLAN_FILE), "--json", "--db", str(server.db)).stdout)
    assert r.json() == cli
    plan = r.json()
    assert plan["instance"] == "aws:p5.48xlarge" and plan["gpus"] == 128
    assert plan["bandwidth_source"]["intra_node"].startswith("claimed")


def test_recommendations_are_the_cli_recommendations(server):
    workload = json.loads(RECOMMEND_FILE.read_text())
    r = post(server, "/v1/recommendations", workload, top=3)
    assert r.status_code == 200, r.text
    cli = json.loads(run_cli("recommend", str(RECOMMEND_FILE), "--top", "3", "--json", "--db", str(server.db)).stdout)
    assert r.json() == cli
    assert 1 <= len(r.json()["results"]) <= 3


def test_plan_with_a_stored_probe_report(server):
    report = h100_node_report(200, 3000)  # a weak NVLink all-reduce: 200 GB/s busbw
    up = requests.post(server.url + "/v1/probe-reports", data=json.dumps(report), timeout=30,
                       params={"instance": "aws:p5.48xlarge"},
                       headers={"Content-Type": "application/json", "Authorization": "Bearer " + server.key})
    assert up.status_code == 201, up.text
    workload = json.loads(PLAN_FILE.read_text())
    claimed = post(server, "/v1/plans", workload).json()
    measured = post(server, "/v1/plans", workload, probe_report=up.json()["id"])
    assert measured.status_code == 200, measured.text
    m = measured.json()
    assert f"stored probe report {up.json()['id']}" in m["bandwidth_source"]["intra_node"]
    assert m["links"]["intra_node_busbw_gbytes_per_s"] != claimed["links"]["intra_node_busbw_gbytes_per_s"]


def test_bad_workloads_name_the_field(server):
    workload = json.loads(PLAN_FILE.read_text())
    unknown = dict(workload, model={"preset": "no-such-model"})
    r = post(server, "/v1/plans", unknown)
    assert r.status_code == 404 and r.json()["field"] == "model.preset", r.text
    bad_layout = json.loads(PLAN_FILE.read_text())
    bad_layout["layout"]["dp"] = 3
    r = post(server, "/v1/plans", bad_layout)
    assert r.status_code == 400 and r.json()["field"].startswith("layout"), r.text
    r = post(server, "/v1/plans", dict(workload, colour="red"))
    assert r.status_code == 400 and "colour" in r.json()["field"], r.text
    r = post(server, "/v1/recommendations", json.loads(RECOMMEND_FILE.read_text()), top=0)
    assert r.status_code == 400 and r.json()["field"] == "top", r.text
    r = post(server, "/v1/plans", workload, probe_report=999999)
    assert r.status_code == 400 and r.json()["field"] == "probe_report", r.text
    r = requests.post(server.url + "/v1/recommendations", data="{", timeout=10,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["field"] == "body", r.text


def test_cached_answer_is_compressed_for_a_later_gzip_client(server):
    """An answer first sent plain is compressed when a client later accepts gzip, and is the same JSON."""
    import gzip as gz
    workload = json.loads(RECOMMEND_FILE.read_text())
    workload["description"] = "first asked without gzip"
    body = json.dumps(workload)
    plain = requests.post(server.url + "/v1/recommendations", data=body, timeout=60,
                          headers={"Content-Type": "application/json", "Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "Content-Encoding" not in plain.headers
    raw = requests.post(server.url + "/v1/recommendations", data=body, timeout=60, stream=True,
                        headers={"Content-Type": "application/json", "Accept-Encoding": "gzip"})
    assert raw.status_code == 200 and raw.headers["Content-Encoding"] == "gzip"
    compressed = raw.raw.read()
    assert len(compressed) < len(plain.content) / 3
    assert gz.decompress(compressed) == plain.content


def test_concurrent_distinct_recommendations_all_answered(server):
    """More searches than cores at once: every one is answered (the search gate lets each through)
    with the answer the same workload gets alone."""
    from concurrent.futures import ThreadPoolExecutor
    presets = ["llama3.1-8b", "llama2-13b", "mistral-7b", "qwen2.5-72b"]

    def workload(i):
        return {"description": f"concurrent {i}", "model": {"preset": presets[i % len(presets)]},
                "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 256, "tokens": 1e11, "precision": "bf16"},
                "constraints": {"max_nodes": 8}}

    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda i: post(server, "/v1/recommendations", workload(i), top=2), range(32)))
    assert all(r.status_code == 200 for r in answers), [r.text for r in answers if r.status_code != 200]
    for i in range(len(presets)):
        alone = post(server, "/v1/recommendations", dict(workload(i), description="alone"), top=2).json()
        assert answers[i].json()["results"] == alone["results"]
