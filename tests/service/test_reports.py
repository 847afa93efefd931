"""Probe reports: upload (201, Location, the check), list, fetch, the fleet validation of an
instance type; durability across kill -9; and a clean SIGTERM that finishes requests in flight."""
import json
import signal
import socket
import sqlite3
import time

import requests

from reports import h100_node_report, with_cloud_metadata

P5 = "aws:p5.48xlarge"  # 8 x H100 SXM on NVSwitch, 900 GB/s NVLink per GPU in the catalog


def upload(server, report, instance=None, key=None):
    return requests.post(server.url + "/v1/probe-reports", data=json.dumps(report),
                         params={"instance": instance} if instance else None, timeout=30,
                         headers={"Content-Type": "application/json", "Authorization": "Bearer " + (key or server.key)})


def verdicts(validation):
    return {v["claim"]: v["verdict"] for v in validation["verdicts"]}


def test_upload_fetch_and_list(fresh_server):
    srv = fresh_server.start()
    # 380 GB/s busbw against 450 GB/s per direction: 84% (meets); 3000 GB/s copy on 3350 GB/s HBM: 90%.
    r = upload(srv, h100_node_report(380, 3000), instance=P5)
    assert r.status_code == 201, r.text
    created = r.json()
    assert r.headers["Location"] == f"/v1/probe-reports/{created['id']}"
    assert created["instance"] == P5 and created["uploaded_by"] == "fresh"
    assert created["validation"]["instance"]["id"] == P5
    assert verdicts(created["validation"])["nvlink"] == "meets"
    assert created["validation"]["any_below"] is False

    fetched = requests.get(srv.url + r.headers["Location"], timeout=10).json()
    assert fetched["id"] == created["id"] and fetched["validation"] == created["validation"]
    assert fetched["report"]["note"] == "synthetic test input"
    assert fetched["report"]["probes"][0]["results"][0]["stats"]["median"] == 380

    # A report that names its instance through cloud metadata needs no ?instance=.
    r2 = upload(srv, with_cloud_metadata(h100_node_report(200, 3000), "aws", "p5.48xlarge"))
    assert r2.status_code == 201, r2.text
    # An H100 report filed under an H200 type is another machine's: refused, nothing stored for it.
    wrong = upload(srv, h100_node_report(380, 3000), instance="aws:p5en.48xlarge")
    assert wrong.status_code == 400 and wrong.json()["field"] == "instance", wrong.text
    assert "a report measures only the machine it ran on" in wrong.json()["detail"]
    listed = requests.get(srv.url + "/v1/probe-reports", params={"instance": "aws:p5en.48xlarge"}, timeout=10).json()
    assert listed["total"] == 0 and listed["items"] == []
    assert r2.json()["validation"]["instance"]["detected_by"] == "cloud-metadata"
    assert verdicts(r2.json()["validation"])["nvlink"] == "below"

    listing = requests.get(srv.url + "/v1/probe-reports", params={"instance": P5}, timeout=10).json()
    assert listing["total"] == 2 and [i["id"] for i in listing["items"]] == [created["id"], r2.json()["id"]]
    assert "report" not in listing["items"][0]
    page = requests.get(srv.url + "/v1/probe-reports", params={"limit": 1, "offset": 1}, timeout=10).json()
    assert page["total"] == 2 and [i["id"] for i in page["items"]] == [r2.json()["id"]]
    other = requests.get(srv.url + "/v1/probe-reports", params={"instance": "aws:p4d.24xlarge"}, timeout=10).json()
    assert other["total"] == 0 and other["items"] == []
    assert srv.stop() == 0


def test_report_without_instance_is_400(fresh_server):
    srv = fresh_server.start()
    r = upload(srv, h100_node_report(380, 3000))
    assert r.status_code == 400 and r.json()["field"] == "instance", r.text
    assert requests.get(srv.url + "/v1/probe-reports", timeout=10).json()["total"] == 0
    srv.stop()


def test_fleet_validation(fresh_server):
    srv = fresh_server.start()
    empty = requests.get(srv.url + f"/v1/instances/{P5}/validation", timeout=10).json()
    assert empty["instance"] == P5 and empty["reports"] == 0
    nvlink = next(c for c in empty["claims"] if c["claim"] == "nvlink")
    assert nvlink["count"] == 0 and nvlink["median"] is None and nvlink["verdict"] == "cannot-check"

    for busbw in (400, 380, 200):  # shares of 450 GB/s: 0.889, 0.844, 0.444
        created = upload(srv, h100_node_report(busbw, 3000), instance=P5)
        assert created.status_code == 201 and created.json()["synthetic"] is True
    # Synthetic test inputs are stored but left out of the fleet's verdict unless asked for.
    default = requests.get(srv.url + f"/v1/instances/{P5}/validation", timeout=10).json()
    assert default["reports"] == 0 and default["synthetic_reports"] == 3 and default["synthetic_included"] is False
    assert next(c for c in default["claims"] if c["claim"] == "nvlink")["verdict"] == "cannot-check"
    body = requests.get(srv.url + f"/v1/instances/{P5}/validation", params={"include_synthetic": "true"},
                        timeout=10).json()
    assert body["reports"] == 3 and body["synthetic_included"] is True
    nvlink = next(c for c in body["claims"] if c["claim"] == "nvlink")
    assert nvlink["claimed"] == 900 and nvlink["expected"] == 450
    assert nvlink["count"] == 3 and nvlink["median"] == 380 and nvlink["min"] == 200 and nvlink["max"] == 400
    assert abs(nvlink["median_share_of_claim"] - 380 / 450) < 1e-9
    assert abs(nvlink["min_share_of_claim"] - 200 / 450) < 1e-9
    assert nvlink["verdicts"] == {"meets": 2, "below": 1, "cannot-check": 0}
    assert nvlink["verdict"] == "meets"
    network = next(c for c in body["claims"] if c["claim"] == "network")
    assert network["count"] == 0 and network["verdict"] == "cannot-check"

    # A measured (not synthetic) report counts by default.
    measured = h100_node_report(390, 3000)
    measured["note"] = None
    r = upload(srv, measured, instance=P5)
    assert r.status_code == 201 and r.json()["synthetic"] is False
    default = requests.get(srv.url + f"/v1/instances/{P5}/validation", timeout=10).json()
    assert default["reports"] == 1 and default["synthetic_reports"] == 3
    assert next(c for c in default["claims"] if c["claim"] == "nvlink")["median"] == 390
    srv.stop()


def test_report_survives_kill_9(fresh_server):
    """A report answered with 201 is on disk: kill -9 right after, restart, and it is there."""
    srv = fresh_server.start()
    r = upload(srv, h100_node_report(380, 3000), instance=P5)
    assert r.status_code == 201
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=10)
    srv.log.close()

    srv.start()
    fetched = requests.get(srv.url + r.headers["Location"], timeout=10)
    assert fetched.status_code == 200 and fetched.json()["id"] == r.json()["id"]
    assert srv.stop() == 0


def test_sigterm_finishes_the_request_in_flight_and_closes_cleanly(fresh_server):
    srv = fresh_server.start()
    body = json.dumps(h100_node_report(380, 3000)).encode()
    head = (f"POST /v1/probe-reports?instance={P5} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {srv.key}\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", srv.port), timeout=15) as s:
        # The request is in flight: headers and half its body sent when SIGTERM arrives.
        s.sendall(head + body[: len(body) // 2])
        time.sleep(0.3)
        srv.proc.send_signal(signal.SIGTERM)
        # No new connections once stopping (the signal is taken within moments)...
        refused = False
        deadline = time.monotonic() + 5
        while not refused and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
                time.sleep(0.1)
            except OSError:
                refused = True
        assert refused, "the server still accepts connections 5 s after SIGTERM"
        # ...but the one in flight is finished.
        s.sendall(body[len(body) // 2:])
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 201"), reply[:200]
    assert srv.proc.wait(timeout=20) == 0
    srv.log.close()
    log = srv.log_path.read_text()
    assert "SIGTERM" in log and "stopped" in log
    # Closed cleanly: the WAL was checkpointed into the database and the report is there.
    wal = srv.db.with_name(srv.db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    with sqlite3.connect(srv.db) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT count(*) FROM probe_reports").fetchone()[0] == 1


def test_concurrent_uploads_are_all_stored(fresh_server):
    """Uploads from many clients at once: every one answered 201 with its own id, every one stored."""
    from concurrent.futures import ThreadPoolExecutor
    srv = fresh_server.start()
    report = h100_node_report(380, 3000)

    def one(_):
        return upload(srv, report, instance=P5)

    with ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(pool.map(one, range(60)))
    assert [a.status_code for a in answers] == [201] * 60
    ids = {a.json()["id"] for a in answers}
    assert len(ids) == 60
    listing = requests.get(srv.url + "/v1/probe-reports", params={"instance": P5, "limit": 1000}, timeout=10).json()
    assert listing["total"] == 60 and {i["id"] for i in listing["items"]} == ids
    assert srv.stop() == 0
