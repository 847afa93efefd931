"""Every error of the service is RFC 9457 problem+json naming the field at fault, and none of
them disturbs the server (it answers /healthz after each)."""
import json
import socket

import pytest
import requests

from conftest import run_cli
from reports import h100_node_report

PROBLEM_FIELDS = {"type", "title", "status", "detail", "instance", "field"}


def assert_problem(r, status, field=None, detail_has=None):
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"] == "application/problem+json"
    body = r.json()
    assert set(body) == PROBLEM_FIELDS
    assert body["status"] == status
    assert body["type"].startswith("urn:linkwise:problem:")
    if field is not None:
        assert body["field"] == field, body
    if detail_has is not None:
        assert detail_has in body["detail"], body
    return body


def post(server, path, body=None, key=None, content_type="application/json", data=None, params=None):
    headers = {"Content-Type": content_type} if content_type else {}
    if key:
        headers["Authorization"] = "Bearer " + key
    if data is None and body is not None:
        data = json.dumps(body)
    return requests.post(server.url + path, data=data, headers=headers, params=params, timeout=30)


@pytest.mark.parametrize("params,field", [
    ({"colour": "red"}, "colour"),
    ({"min_gpus": "eight"}, "min_gpus"),
    ({"min_gpus": "-1"}, "min_gpus"),
    ({"min_gpu_memory_gb": "80GB"}, "min_gpu_memory_gb"),
    ({"min_network_gbits_per_s": "nan"}, "min_network_gbits_per_s"),
    ({"max_price": "-3"}, "max_price"),
    ({"fabric": "infiniband"}, "fabric"),
    ({"rdma": "yes"}, "rdma"),
    ({"sort": "colour"}, "sort"),
    ({"limit": "1001"}, "limit"),
    ({"offset": "-5"}, "offset"),
    ({"gpu": ""}, "gpu"),
    ({"gpu": "A100-40GB"}, "gpu"),
    ({"provider": "gpc"}, "provider"),
])
def test_bad_instance_query_names_the_parameter(server, params, field):
    r = requests.get(server.url + "/v1/instances", params=params, timeout=10)
    assert_problem(r, 400, field=field)


def test_unknown_gpu_or_provider_suggests_the_closest_name(server):
    r = requests.get(server.url + "/v1/instances", params={"gpu": "A100-40GB"}, timeout=10)
    assert_problem(r, 400, field="gpu", detail_has='"A100-SXM4-40GB"?')
    r = requests.get(server.url + "/v1/instances", params={"provider": "gpc"}, timeout=10)
    assert_problem(r, 400, field="provider", detail_has='did you mean "gcp"?')


def test_repeated_query_parameter(server):
    r = requests.get(server.url + "/v1/instances?gpu=H100&gpu=A100", timeout=10)
    assert_problem(r, 400, field="gpu", detail_has="more than once")


def test_query_parameter_on_endpoint_without_any(server):
    assert_problem(requests.get(server.url + "/healthz?verbose=1", timeout=10), 400, field="verbose")


def test_unknown_path_is_404(server):
    body = assert_problem(requests.get(server.url + "/v2/instances", timeout=10), 404)
    assert body["instance"] == "/v2/instances"
    assert_problem(requests.get(server.url + "/index.php", timeout=10), 404)
    assert_problem(requests.get(server.url + "/v1/instances/aws:p5.48xlarge/extra/segments", timeout=10), 404)


def test_unknown_instance_is_404(server):
    assert_problem(requests.get(server.url + "/v1/instances/aws:no-such-type", timeout=10), 404, field="id")
    assert_problem(requests.get(server.url + "/v1/instances/aws:no-such-type/validation", timeout=10), 404,
                   field="id")
    assert_problem(requests.get(server.url + "/v1/probe-reports/999999", timeout=10), 404, field="id")
    assert_problem(requests.get(server.url + "/v1/probe-reports/not-a-number", timeout=10), 404, field="id")


@pytest.mark.parametrize("method,path,allowed", [
    ("DELETE", "/v1/instances", "GET, HEAD"),
    ("POST", "/healthz", "GET, HEAD"),
    ("PUT", "/v1/instances/aws:p5.48xlarge", "GET, HEAD"),
    ("PATCH", "/v1/gpus", "GET, HEAD"),
    ("GET", "/v1/plans", "POST"),
    ("DELETE", "/v1/probe-reports", "GET, HEAD, POST"),
])
def test_wrong_method_is_405_with_allow(server, method, path, allowed):
    r = requests.request(method, server.url + path, timeout=10)
    assert_problem(r, 405)
    assert r.headers["Allow"] == allowed


def test_body_over_limit_is_413(server):
    big = b'{"pad": "' + b"x" * (5 * 1024 * 1024) + b'"}'
    r = post(server, "/v1/probe-reports", data=big, key=server.key)
    assert_problem(r, 413, field="body")
    assert requests.get(server.url + "/healthz", timeout=10).status_code == 200


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_wrong_content_type_is_415(server, content_type):
    r = post(server, "/v1/probe-reports", body=h100_node_report(380, 2900), key=server.key,
             content_type=content_type, params={"instance": "aws:p5.48xlarge"})
    assert_problem(r, 415, field="Content-Type")


def test_content_type_with_charset_is_json(server):
    r = post(server, "/v1/probe-reports", body=h100_node_report(380, 2900), key=server.key,
             content_type="application/json; charset=utf-8", params={"instance": "aws:p5.48xlarge"})
    assert r.status_code == 201, r.text


@pytest.mark.parametrize("data,detail", [
    (b"{not json", "not valid JSON"),
    (b"", "empty body"),
    (b"[1, 2]", "expected a JSON object"),
    (b"[" * 100 + b"]" * 100, "nested deeper"),
])
def test_bad_json_is_400_naming_the_body(server, data, detail):
    r = post(server, "/v1/probe-reports", data=data, key=server.key, params={"instance": "aws:p5.48xlarge"})
    assert_problem(r, 400, field="body", detail_has=detail)


@pytest.mark.parametrize("kind,key", [("pretrain", "seq_len"), ("pretrain", "global_batch"),
                                       ("inference", "prompt_len"), ("inference", "output_len")])
def test_a_required_job_size_given_as_null_is_a_400_naming_it(server, kind, key):
    job = ({"kind": "pretrain", "seq_len": 4096, "global_batch": 64} if kind == "pretrain"
           else {"kind": "inference", "prompt_len": 1024, "output_len": 256, "concurrent": 8})
    job[key] = None
    body = {"model": {"preset": "llama3.1-8b"}, "job": job,
            "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}, "layout": {"tp": 1, "pp": 1, "dp": 8}}
    for path in ("/v1/plans", "/v1/recommendations"):
        assert_problem(post(server, path, body), 400, field="job." + key, detail_has="required")
    assert requests.get(server.url + "/healthz", timeout=10).status_code == 200


def test_bad_report_value_names_the_field(server):
    report = h100_node_report(380, 2900)
    report["probes"][0]["results"][0]["counting"] = "both-ways"
    r = post(server, "/v1/probe-reports", body=report, key=server.key, params={"instance": "aws:p5.48xlarge"})
    body = assert_problem(r, 400)
    assert "counting" in body["field"], body


def test_report_for_unknown_instance_is_400(server):
    r = post(server, "/v1/probe-reports", body=h100_node_report(380, 2900), key=server.key,
             params={"instance": "aws:nope"})
    assert_problem(r, 400, field="instance")


def test_chunked_body_is_refused(server):
    def chunks():
        yield b'{"schema_version": 1}'
    r = requests.post(server.url + "/v1/probe-reports", data=chunks(), timeout=10,
                      headers={"Content-Type": "application/json", "Authorization": "Bearer " + server.key})
    assert_problem(r, 411)


def test_long_query_is_refused(server):
    r = requests.get(server.url + "/v1/instances", params={"gpu": "H" * 5000}, timeout=10)
    assert_problem(r, 414)
    assert requests.get(server.url + "/healthz", timeout=10).status_code == 200


def test_garbage_request_line(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"BLAH\r\n\r\n")
        reply = s.recv(4096)
    assert reply.startswith(b"HTTP/1.1 400")
    assert requests.get(server.url + "/healthz", timeout=10).status_code == 200


def test_unknown_methods_do_not_become_metric_labels(server):
    # Found by fuzz/http_request.cpp: a refused method used to be counted under its own label, so
    # clients could grow /metrics (and the server's memory) without bound.
    for method in (b"FUZZ1", b'X"}'):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(method + b" /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert s.recv(4096).startswith(b"HTTP/1.1 400")
    metrics = requests.get(server.url + "/metrics", timeout=10).text
    assert "FUZZ1" not in metrics and 'X"}' not in metrics
    assert 'method="other",status="400"' in metrics


# --- auth: writes need a valid key; reads are open ---

def test_write_without_key_is_401(server):
    r = post(server, "/v1/probe-reports", body=h100_node_report(380, 2900), params={"instance": "aws:p5.48xlarge"})
    assert_problem(r, 401, field="Authorization")


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer not-a-key", "Token lw_" + "0" * 64])
def test_malformed_credentials_are_401(server, header):
    r = requests.post(server.url + "/v1/probe-reports", data="{}", timeout=10,
                      headers={"Content-Type": "application/json", "Authorization": header})
    assert_problem(r, 401, field="Authorization")


def test_unknown_key_is_403(server):
    r = post(server, "/v1/probe-reports", body=h100_node_report(380, 2900), key="lw_" + "ab" * 32,
             params={"instance": "aws:p5.48xlarge"})
    assert_problem(r, 403, field="Authorization")


def test_key_lifecycle(server):
    """A key created while the server runs works at once; revoked, it is refused at once."""
    key = run_cli("keys", "create", "lifecycle", "--db", str(server.db)).stdout.strip()
    assert key.startswith("lw_") and len(key) == 67
    report = h100_node_report(380, 2900)
    params = {"instance": "aws:p5.48xlarge"}
    r = post(server, "/v1/probe-reports", body=report, key=key, params=params)
    assert r.status_code == 201, r.text
    assert r.json()["uploaded_by"] == "lifecycle"

    listed = json.loads(run_cli("keys", "list", "--json", "--db", str(server.db)).stdout)
    entry = next(k for k in listed if k["name"] == "lifecycle")
    assert entry["revoked_at"] is None and key not in json.dumps(listed)

    run_cli("keys", "revoke", "lifecycle", "--db", str(server.db))
    assert_problem(post(server, "/v1/probe-reports", body=report, key=key, params=params), 403, field="Authorization")
    listed = json.loads(run_cli("keys", "list", "--json", "--db", str(server.db)).stdout)
    assert next(k for k in listed if k["name"] == "lifecycle")["revoked_at"] is not None


def test_keys_cli_errors(server):
    db = str(server.db)
    dup = run_cli("keys", "create", "tests", "--db", db, check=False)
    assert dup.returncode != 0 and "exists" in dup.stderr
    bad = run_cli("keys", "create", "has space", "--db", db, check=False)
    assert bad.returncode == 2 and "name" in bad.stderr
    missing = run_cli("keys", "revoke", "nobody", "--db", db, check=False)
    assert missing.returncode == 2 and "nobody" in missing.stderr


def test_database_keeps_only_hashes(server):
    import sqlite3
    key = run_cli("keys", "create", "hashed", "--db", str(server.db)).stdout.strip()
    with sqlite3.connect(server.db) as db:
        stored = db.execute("SELECT key_sha256 FROM api_keys WHERE name = 'hashed'").fetchone()[0]
    import hashlib
    assert stored == hashlib.sha256(key.encode()).digest()
    assert key.encode() not in server.db.read_bytes()


def test_access_log_never_holds_a_key(server):
    post(server, "/v1/probe-reports", body=h100_node_report(380, 2900), key=server.key,
         params={"instance": "aws:p5.48xlarge"})
    log = server.log_text()
    assert "POST /v1/probe-reports?instance=aws%3Ap5.48xlarge 201" in log
    assert server.key not in log and "Bearer" not in log


def test_regions_match_case_insensitively_and_an_unknown_one_is_a_400(server):
    lower = requests.get(server.url + "/v1/instances", params={"region": "us-east-1"}, timeout=10).json()
    upper = requests.get(server.url + "/v1/instances", params={"region": "US-EAST-1"}, timeout=10).json()
    assert lower["total"] > 0 and upper == lower
    r = requests.get(server.url + "/v1/instances", params={"region": "us-east-9"}, timeout=10)
    assert_problem(r, 400, field="region", detail_has="did you mean")
    # An empty region names nothing: refused by REST and the CLI alike (not read as "no filter").
    assert requests.get(server.url + "/v1/instances", params={"region": ""}, timeout=10).status_code == 400
    cli = run_cli("instances", "--region", "", "--db", str(server.db), check=False)
    assert cli.returncode == 2 and "region" in cli.stderr


def test_an_engine_the_gpu_cannot_run_is_refused_naming_the_field(server):
    """TensorRT-LLM is CUDA-only: planning it on an AMD machine is a 400 naming job.engine; a search
    leaves the AMD machines out with that reason, and `auto` serves them with vLLM."""
    job = {"kind": "inference", "prompt_len": 1024, "output_len": 256, "concurrent": 32, "precision": "fp8"}
    workload = {"model": {"preset": "llama3.1-8b"}, "job": dict(job, engine="tensorrt-llm"),
                "hardware": {"instance": "azure:Standard_ND96isr_MI300X_v5", "nodes": 1},
                "layout": {"tp": 1, "pp": 1, "dp": 8}}
    assert_problem(post(server, "/v1/plans", workload), 400, "job.engine", "NVIDIA GPUs only")
    search = {"model": workload["model"], "job": workload["job"], "constraints": {"gpu_models": ["MI300X", "H100"]}}
    r = post(server, "/v1/recommendations", search, params={"top": 20, "per": "instance"})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["results"] and all("MI3" not in p["gpu_model"] for p in answer["results"])
    assert any("MI300X" in x["gpu_model"] and "NVIDIA GPUs only" in json.dumps(x["reasons"]) for x in answer["rejected"])
    search["job"] = job
    plans = post(server, "/v1/recommendations", search, params={"top": 50, "per": "instance"}).json()["results"]
    assert {p["engine"] for p in plans if p["gpu_model"] == "MI300X"} == {"vllm"}
    assert {p["engine"] for p in plans if p["gpu_model"].startswith("H100")} == {"tensorrt-llm"}
    assert requests.get(server.url + "/healthz", timeout=10).status_code == 200
