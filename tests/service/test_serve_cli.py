"""`linkwise serve` and `linkwise keys` without --db: the embedded catalog is served, and keys and
probe reports live in the per-user file under $XDG_DATA_HOME, where both commands find it."""
import json
import os

import requests

from conftest import Server, run_cli
from reports import h100_node_report


def test_without_db_uses_embedded_catalog_and_per_user_store(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "LINKWISE_DB"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    key = run_cli("keys", "create", "laptop", env=env).stdout.strip()
    store = tmp_path / "xdg" / "linkwise" / "linkwise.db"
    assert store.is_file()

    srv = Server(None, tmp_path / "server.log", env=env).start()
    try:
        embedded = json.loads(run_cli("instances", "--json", env=env).stdout)["items"]
        body = requests.get(srv.url + "/v1/instances", params={"limit": 1000}, timeout=10).json()
        assert [i["id"] for i in body["items"]] == [i["id"] for i in embedded]
        r = requests.post(srv.url + "/v1/probe-reports", data=json.dumps(h100_node_report(380, 3000)),
                          params={"instance": "aws:p5.48xlarge"}, timeout=30,
                          headers={"Content-Type": "application/json", "Authorization": "Bearer " + key})
        assert r.status_code == 201, r.text
        log = srv.log_text()
        assert "the embedded catalog" in log and str(store) in log
    finally:
        assert srv.stop() == 0


def test_serve_refuses_a_taken_port(server):
    proc = run_cli("serve", "--port", str(server.port), "--db", str(server.db), check=False)
    assert proc.returncode != 0 and "cannot listen" in proc.stderr
