"""Every endpoint of `linkwise serve`, with the real binary: answers, filters, paging, and the
field names shared with the CLI's --json."""
import json

import pytest
import requests

from conftest import run_cli

P5 = "aws:p5.48xlarge"


def get(server, path, **params):
    return requests.get(server.url + path, params=params, timeout=10)


def test_healthz(server):
    r = get(server, "/healthz")
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/json"
    assert r.json()["status"] == "ok" and set(r.json()) == {"status", "version"}


def test_instances_are_the_cli_catalog(server):
    """GET /v1/instances lists exactly what `linkwise instances --json` prints, same field names."""
    cli = json.loads(run_cli("instances", "--json", "--db", str(server.db)).stdout)
    r = get(server, "/v1/instances", limit=1000)
    assert r.status_code == 200
    body = r.json()
    # One contract: the CLI prints the REST answer's fields, less the paging ones.
    assert set(cli) == {"total", "excluded_unknown", "items"}
    assert cli["excluded_unknown"] == body["excluded_unknown"] == {}
    cli = cli["items"]
    assert body["total"] == len(cli) == len(body["items"])
    assert body["limit"] == 1000 and body["offset"] == 0
    assert body["excluded_unknown"] == {}
    assert body["items"] == cli
    assert len(cli) >= 60
    for item in body["items"]:
        price = item["price_usd_per_hour"]
        assert item["price_usd_per_gpu_hour"] == (None if price is None else pytest.approx(price / item["gpu_count"]))


def test_instances_say_what_the_filters_hid(server):
    """excluded_unknown counts the instances a filter left out only because its field is null; the
    CLI prints the same count under its table."""
    everything = get(server, "/v1/instances", limit=1000).json()["items"]
    unknown = sum(1 for i in everything if i["gpudirect_rdma"] is None)
    body = get(server, "/v1/instances", rdma="true", limit=1000).json()
    assert body["excluded_unknown"] == ({"gpudirect_rdma": unknown} if unknown else {})
    table = run_cli("instances", "--rdma", "--db", str(server.db)).stdout
    if unknown:
        assert f"{unknown} instance{'s' if unknown > 1 else ''} hidden: gpudirect_rdma unknown" in table
    both = get(server, "/v1/instances", rdma="true", max_price="1000", limit=1000).json()["excluded_unknown"]
    unpriced = sum(1 for i in everything if i["price_usd_per_hour"] is None and i["gpudirect_rdma"] is not False)
    assert both.get("price_usd_per_hour", 0) == unpriced


def test_sort_by_price_per_gpu(server):
    items = get(server, "/v1/instances", sort="price_usd_per_gpu_hour", limit=1000).json()["items"]
    prices = [i["price_usd_per_gpu_hour"] for i in items]
    known = [p for p in prices if p is not None]
    assert known == sorted(known) and prices[: len(known)] == known
    cli = json.loads(run_cli("instances", "--sort", "price_usd_per_gpu_hour", "--json", "--db", str(server.db)).stdout)["items"]
    assert [i["id"] for i in cli] == [i["id"] for i in items]


def test_instance_filters_match_the_cli(server):
    """Each query parameter filters as the CLI's option of the same meaning does."""
    cases = [  # (query parameters, the CLI's options)
        ({"gpu": "H100"}, ["--gpu", "H100"]),
        ({"provider": "aws", "min_gpus": "8"}, ["--provider", "aws", "--min-gpus", "8"]),
        ({"fabric": "nvswitch", "min_network_gbits_per_s": "1600"},
         ["--fabric", "nvswitch", "--min-network", "1600"]),
        ({"rdma": "true", "max_price": "50"}, ["--rdma", "--max-price", "50"]),
        ({"rdma": "false", "region": "us-east-1"}, ["--no-rdma", "--region", "us-east-1"]),
        ({"min_gpu_memory_gb": "80", "min_nvlink_gbytes_per_s": "600", "sort": "-price_usd_per_hour"},
         ["--min-gpu-memory", "80", "--min-nvlink", "600", "--sort", "-price_usd_per_hour"]),
    ]
    for params, options in cases:
        answer = json.loads(run_cli("instances", "--json", "--db", str(server.db), *options).stdout)
        cli = answer["items"]
        body = get(server, "/v1/instances", limit=1000, **params).json()
        assert answer["excluded_unknown"] == body["excluded_unknown"], params
        assert [i["id"] for i in body["items"]] == [i["id"] for i in cli], params
        assert body["total"] == len(cli)
        assert cli, f"{params} should match something in the catalog"


def test_gpu_family_filter(server):
    items = get(server, "/v1/instances", gpu="H100", limit=1000).json()["items"]
    assert items, "the catalog has H100 instances"
    assert all(i["gpu_model"].startswith("H100") for i in items)


def test_sort_and_paging(server):
    everything = get(server, "/v1/instances", sort="-gpu_count", limit=1000).json()
    counts = [i["gpu_count"] for i in everything["items"]]
    assert counts == sorted(counts, reverse=True)
    page2 = get(server, "/v1/instances", sort="-gpu_count", limit=5, offset=5).json()
    assert page2["total"] == everything["total"]
    assert page2["limit"] == 5 and page2["offset"] == 5
    assert [i["id"] for i in page2["items"]] == [i["id"] for i in everything["items"][5:10]]
    beyond = get(server, "/v1/instances", offset=100000).json()
    assert beyond["items"] == [] and beyond["total"] == everything["total"]


def test_instance_by_id(server):
    r = get(server, "/v1/instances/" + P5)
    assert r.status_code == 200
    inst = r.json()
    assert inst["id"] == P5 and inst["provider"] == "aws" and inst["name"] == "p5.48xlarge"
    cli = json.loads(run_cli("instances", "show", P5, "--json", "--db", str(server.db)).stdout)
    assert inst == (cli[0] if isinstance(cli, list) else cli)
    # The id may arrive percent-encoded.
    assert get(server, "/v1/instances/aws%3Ap5.48xlarge").json() == inst


def test_instance_ids_in_any_case_and_suggestions(server):
    assert get(server, "/v1/instances/AWS:P5.48XLARGE").json()["id"] == P5
    r = get(server, "/v1/instances/aws:p5.48xlarg")
    assert r.status_code == 404 and 'did you mean "aws:p5.48xlarge"' in r.json()["detail"], r.text
    r = get(server, "/v1/probe-reports", instance="aws:p5.48xlarg")
    assert r.status_code == 400 and r.json()["field"] == "instance", r.text
    assert 'did you mean "aws:p5.48xlarge"' in r.json()["detail"], r.text
    workload = {"model": {"preset": "llama3.1-8b"},
                "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e9},
                "constraints": {"instances": ["aws:p5.48xlarg"]}}
    post = lambda body: requests.post(server.url + "/v1/recommendations", data=json.dumps(body), timeout=60,
                                      headers={"Content-Type": "application/json"})
    r = post(workload)
    assert r.status_code == 422 and r.json()["field"] == "constraints.instances", r.text
    assert 'did you mean "aws:p5.48xlarge"' in r.json()["detail"], r.text
    workload["constraints"] = {"instances": ["AWS:P5.48XLARGE"], "max_nodes": 1}
    r = post(workload)
    assert r.status_code == 200 and r.json()["results"][0]["instance"] == P5, r.text
    # Custom hardware names its GPU in any case too (without the instance constraint, which the
    # workload's own hardware would miss: recommend rejects it with reason constraint).
    workload["constraints"] = {"max_nodes": 1}
    workload["hardware"] = {"custom": {"gpu_model": "a100-sxm4-80gb", "gpu_count": 8, "price_usd_per_hour": 10}}
    r = post(workload)
    assert r.status_code == 200 and r.json()["results"][0]["gpu_model"] == "A100-SXM4-80GB", r.text


def test_gpus(server):
    body = get(server, "/v1/gpus").json()
    assert body["total"] == len(body["items"]) >= 15
    ids = {g["id"] for g in body["items"]}
    assert {"H100-SXM5-80GB", "A100-SXM4-80GB", "MI300X"} <= ids
    # The CLI prints REST's envelope, not a bare list.
    cli = json.loads(run_cli("gpus", "--json", "--db", str(server.db)).stdout)
    assert body == cli


def test_metrics(server):
    get(server, "/healthz")
    get(server, "/v1/instances/nope:nope")
    text = get(server, "/metrics").text
    assert 'linkwise_http_requests_total{route="/healthz",method="GET",status="200"}' in text
    assert 'linkwise_http_requests_total{route="/v1/instances/{id}",method="GET",status="404"}' in text
    assert 'linkwise_http_request_duration_seconds_bucket{route="/healthz",le="+Inf"}' in text
    total = get(server, "/v1/instances", limit=0).json()["total"]
    assert f"linkwise_catalog_instances {total}\n" in text
    assert "# TYPE linkwise_http_request_duration_seconds histogram" in text


def test_models(server):
    models = {m["name"]: m for m in get(server, "/v1/models").json()["models"]}
    ds = models["deepseek-v3"]
    assert ds["attention"]["kind"] == "mla" and ds["moe"]["experts"] == 256
    assert round(ds["params_b"]) == 671 and round(ds["active_params_b"]) in (37, 38)
    assert models["llama3.1-70b"]["moe"] is None


def test_openapi_document(server):
    doc = get(server, "/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    served = {(path, method.upper()) for path, ops in doc["paths"].items() for method in ops}
    assert served == {
        ("/healthz", "GET"), ("/metrics", "GET"), ("/openapi.json", "GET"), ("/v1/gpus", "GET"), ("/v1/models", "GET"),
        ("/v1/instances", "GET"), ("/v1/instances/{id}", "GET"), ("/v1/instances/{id}/validation", "GET"),
        ("/v1/probe-reports", "GET"), ("/v1/probe-reports", "POST"), ("/v1/probe-reports/{id}", "GET"),
        ("/v1/plans", "POST"), ("/v1/recommendations", "POST"),
    }
    # Every answer the server can give is declared: the reception's 408 and 431 everywhere, 503 with
    # Retry-After where a body or a planner slot can be refused.
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert {"408", "431"} <= set(op["responses"]), (method, path)
            if method == "post":
                assert "Retry-After" in op["responses"]["503"]["headers"], (method, path)
    params = {p["name"] for p in doc["paths"]["/v1/instances"]["get"]["parameters"]}
    assert params == {"provider", "gpu", "min_gpus", "min_gpu_memory_gb", "fabric", "min_nvlink_gbytes_per_s",
                      "min_network_gbits_per_s", "rdma", "max_price", "region", "sort", "limit", "offset"}


def test_openapi_probe_report_schema_is_the_data_schema(server):
    """The document's ProbeReport is data/schema/probe-report.schema.json, refs moved to components."""
    from conftest import REPO
    data = json.loads((REPO / "data/schema/probe-report.schema.json").read_text())
    schemas = get(server, "/openapi.json").json()["components"]["schemas"]

    def moved(node):
        if isinstance(node, dict):
            return {k: ("#/components/schemas/ProbeReport_" + v.rsplit("/", 1)[1]
                        if k == "$ref" and v.startswith("#/$defs/") else moved(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [moved(x) for x in node]
        return node

    top = {k: v for k, v in data.items() if k not in ("$schema", "$id", "$defs")}
    assert schemas["ProbeReport"] == moved(top)
    for name, definition in data["$defs"].items():
        assert schemas["ProbeReport_" + name] == moved(definition), name


def test_head_is_get_without_body(server):
    r = requests.head(server.url + "/v1/gpus", timeout=10)
    assert r.status_code == 200 and r.content == b""


def test_gzip_when_accepted(server):
    """Catalog bodies are sent gzip-compressed to clients that accept it, as is otherwise."""
    import gzip as gz
    plain = requests.get(server.url + "/v1/instances", params={"gpu": "H100"}, timeout=10,
                         headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in plain.headers and plain.headers["Vary"] == "Accept-Encoding"
    raw = requests.get(server.url + "/v1/instances", params={"gpu": "H100"}, timeout=10, stream=True,
                       headers={"Accept-Encoding": "br, gzip;q=0.8"})
    assert raw.headers["Content-Encoding"] == "gzip"
    compressed = raw.raw.read()
    assert len(compressed) < len(plain.content) / 3
    assert gz.decompress(compressed) == plain.content
    refused = requests.get(server.url + "/v1/instances", params={"gpu": "H100"}, timeout=10,
                           headers={"Accept-Encoding": "gzip;q=0"})
    assert "Content-Encoding" not in refused.headers and refused.content == plain.content


def test_booleans_are_true_false_1_0_any_case(server):
    want = get(server, "/v1/instances", rdma="true", limit=1000).json()["items"]
    for spelling in ("True", "TRUE", "1"):
        assert get(server, "/v1/instances", rdma=spelling, limit=1000).json()["items"] == want
    off = get(server, "/v1/instances", rdma="false", limit=1000).json()["items"]
    assert off != want
    for spelling in ("False", "0"):
        assert get(server, "/v1/instances", rdma=spelling, limit=1000).json()["items"] == off


def test_openapi_workload_schema_is_the_data_schema(server):
    """The document's Workload is data/schema/workload.schema.json with the server's ranges, so the
    two never disagree: what one refuses, the other refuses."""
    from conftest import REPO
    data = json.loads((REPO / "data/schema/workload.schema.json").read_text())
    served = get(server, "/openapi.json").json()["components"]["schemas"]["Workload"]
    strip = lambda schema, keys: {k: v for k, v in schema.items() if k not in keys}
    assert strip(served, {"description", "externalDocs"}) == strip(data, {"$schema", "$id", "title", "description"})


@pytest.mark.parametrize("change, field, kind", [(*case, "training")[:3] for case in [
    (lambda w: w.update(description=5), "description"),
    (lambda w: w.update(name=5), "name"),
    (lambda w: w["job"].pop("kind"), "job.kind"),
    (lambda w: w["job"].update(tokens=1e19), "job.tokens"),
    (lambda w: w["job"].update(seq_len=2 ** 25), "job.seq_len"),
    (lambda w: w["job"].update(engine="vllm"), "job.engine"),
    (lambda w: w["job"].update(engine_batch_limit=512), "job.engine_batch_limit"),
    # The engine's sequence cap: an integer of at least 1, on a serving job.
    (lambda w: w["job"].update(engine_batch_limit=0), "job.engine_batch_limit", "serving"),
    (lambda w: w["job"].update(engine_batch_limit=2.5), "job.engine_batch_limit", "serving"),
    (lambda w: w["job"].update(engine_batch_limit="max"), "job.engine_batch_limit", "serving"),
    (lambda w: w["job"].update(engine_batch_limit=-1), "job.engine_batch_limit", "serving"),
    (lambda w: w["job"].update(engine_batch_limit=1e300), "job.engine_batch_limit", "serving"),
    (lambda w: w["job"].update(engine_batch_limit=2 ** 31), "job.engine_batch_limit", "serving"),
    # A custom shape's context window: a whole number of tokens from 1 to 2^30; not beside a preset.
    *[(lambda w, bad=bad: w.update(model={"params_b": 70, "context_tokens": bad}), "model.context_tokens")
      for bad in (0, -1, 2.5, "8192", 1e300, 2 ** 31)],
    (lambda w: w.update(model={"preset": "llama3.1-70b", "context_tokens": 8192}), "model.context_tokens"),
    # A serving workload refuses the training-only fields, in the job and in the layout.
    (lambda w: w["job"].update(framework="megatron-core"), "job.framework", "serving"),
    (lambda w: w.update(layout={"zero": 1}), "layout.zero", "serving"),
    (lambda w: w.update(layout={"micro_batch": 2}), "layout.micro_batch", "serving"),
]])
def test_the_schema_and_the_server_refuse_the_same_workloads(server, change, field, kind):
    from jsonschema import Draft202012Validator
    from conftest import REPO
    workload = json.loads((REPO / "data/examples/recommend-llama3.1-70b.json").read_text())
    if kind == "serving":
        workload["job"] = {"kind": "inference", "prompt_len": 1024, "output_len": 256, "concurrent": 8}
    workload["constraints"] = None  # accepted by both
    schema = get(server, "/openapi.json").json()["components"]["schemas"]["Workload"]
    validator = Draft202012Validator(schema)
    assert not list(validator.iter_errors(workload))
    r = requests.post(server.url + "/v1/recommendations", data=json.dumps(workload), timeout=60,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    change(workload)
    assert list(validator.iter_errors(workload)), "the schema accepts what the server refuses"
    r = requests.post(server.url + "/v1/recommendations", data=json.dumps(workload), timeout=60,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["field"] == field, r.text
    if field == "job.kind":
        assert "required" in r.json()["detail"], r.text
