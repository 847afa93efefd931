"""Real answers of every kind validate against their schema in the served /openapi.json (JSON Schema
2020-12, as OpenAPI 3.1 uses it), additionalProperties false included: the document describes the
responses exactly, not loosely. schemathesis (test_schemathesis.py) explores inputs; this test
pins the success paths schemathesis rarely reaches (a valid report, a real plan)."""
import json

import requests
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conftest import REPO
from reports import h100_node_report

EXAMPLES = REPO / "data" / "examples"


def validator_for(doc, schema_name):
    registry = Registry().with_resource("urn:openapi", Resource.from_contents(doc, default_specification=DRAFT202012))
    return Draft202012Validator({"$ref": f"urn:openapi#/components/schemas/{schema_name}"}, registry=registry)


def check(doc, schema_name, body):
    errors = sorted(validator_for(doc, schema_name).iter_errors(body), key=lambda e: list(e.path))
    assert not errors, f"{schema_name}: " + "; ".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:5])


def test_answers_match_the_document(server):
    doc = requests.get(server.url + "/openapi.json", timeout=10).json()
    get = lambda path, **params: requests.get(server.url + path, params=params, timeout=30).json()
    post = lambda path, body, headers=None, **params: requests.post(
        server.url + path, data=json.dumps(body), params=params, timeout=60,
        headers={"Content-Type": "application/json", **(headers or {})})

    check(doc, "Health", get("/healthz"))
    check(doc, "InstanceList", get("/v1/instances", limit=1000))
    check(doc, "Instance", get("/v1/instances/aws:p5.48xlarge"))
    check(doc, "GpuList", get("/v1/gpus"))

    created = post("/v1/probe-reports", h100_node_report(380, 3000), {"Authorization": "Bearer " + server.key},
                   instance="aws:p5.48xlarge")
    assert created.status_code == 201, created.text
    check(doc, "ProbeReportSummary", created.json())
    check(doc, "ProbeReportStored", get(f"/v1/probe-reports/{created.json()['id']}"))
    check(doc, "ProbeReport", get(f"/v1/probe-reports/{created.json()['id']}")["report"])
    check(doc, "ProbeReportList", get("/v1/probe-reports", instance="aws:p5.48xlarge"))
    check(doc, "InstanceValidation", get("/v1/instances/aws:p5.48xlarge/validation"))
    check(doc, "InstanceValidation", get("/v1/instances/gcp:a2-highgpu-1g/validation"))

    examples = sorted(EXAMPLES.glob("*.json"))
    assert examples, f"no workload examples in {EXAMPLES}: the plan and recommendation answers go unchecked"
    for example in examples:
        workload = json.loads(example.read_text())
        check(doc, "Workload", workload)
        path = "/v1/plans" if "hardware" in workload and "layout" in workload else "/v1/recommendations"
        r = post(path, workload)
        assert r.status_code == 200, (example.name, r.text)
        check(doc, "Plan" if path == "/v1/plans" else "Recommendations", r.json())

    problem = requests.get(server.url + "/v1/instances", params={"min_gpus": "x"}, timeout=10).json()
    check(doc, "Problem", problem)
