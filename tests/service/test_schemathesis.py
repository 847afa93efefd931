"""schemathesis against the served /openapi.json: every documented operation, positive and negative
inputs, generated deterministically and bounded in number, so the run is the same every time and
takes well under two minutes. Any 5xx, or a response that does not match the document (status,
content type, headers, body schema), fails the test."""
import os
import subprocess
import sys
from pathlib import Path

CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
])


def test_schemathesis_finds_no_failure(fresh_server, tmp_path):
    srv = fresh_server.start()
    cli = Path(sys.executable).with_name("schemathesis")
    cmd = [str(cli), "run", srv.url + "/openapi.json",
           "--checks", CHECKS,
           "--header", "Authorization: Bearer " + srv.key,
           "--max-examples", os.environ.get("LINKWISE_SCHEMATHESIS_EXAMPLES", "25"),
           "--generation-deterministic", "--no-shrink",
           "--workers", "1",
           "--phases", "examples,coverage,fuzzing,stateful",
           "--request-timeout", "10", "--no-color"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=170, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-8000:]
    assert srv.proc.poll() is None, "the server died under schemathesis: " + srv.log_text()[-4000:]
    assert srv.stop() == 0
