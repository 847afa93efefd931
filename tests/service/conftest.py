"""Fixtures for the REST service tests: the real `linkwise serve` binary on a free loopback port.

The binary comes from $LINKWISE_BIN (default build/bin/linkwise). Each server gets a fresh database
file in a temporary directory, created by the binary itself (seeded with the embedded catalog);
API keys are made with `linkwise keys create`, as a user would.
"""
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]


def linkwise_bin() -> str:
    path = Path(os.environ.get("LINKWISE_BIN", REPO / "build" / "bin" / "linkwise"))
    if not path.is_file():
        pytest.fail(f"linkwise binary not found at {path}; build it or set LINKWISE_BIN")
    return str(path)


def run_cli(*args, check=True, env=None):
    """Runs the linkwise CLI; returns the CompletedProcess."""
    proc = subprocess.run([linkwise_bin(), *args], capture_output=True, text=True, timeout=60, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"linkwise {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc


def read_reply(s, timeout=5.0) -> bytes:
    """What the server sends until it closes or goes quiet for `timeout` seconds."""
    s.settimeout(timeout)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `linkwise serve` process on its own database."""

    def __init__(self, db, log: Path, threads: int = 16, env=None):
        """db: the --db file, or None to run without --db (the embedded catalog, the per-user store)."""
        self.db, self.log_path, self.threads, self.env = db, log, threads, env
        self.port = None
        self.proc = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self.port = free_port()
        self.log = open(self.log_path, "ab")
        db = ["--db", str(self.db)] if self.db else []
        self.proc = subprocess.Popen(
            [linkwise_bin(), "serve", "--port", str(self.port), "--threads", str(self.threads), *db],
            stdout=self.log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"linkwise serve exited {self.proc.returncode}: {self.log_text()}")
            try:
                if requests.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except requests.ConnectionError:
                pass
            time.sleep(0.05)
        raise AssertionError("linkwise serve did not answer /healthz within 30 s: " + self.log_text())

    def log_text(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self, sig=signal.SIGTERM, timeout=20) -> int:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=timeout)
        self.log.close()
        return self.proc.returncode


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("linkwise-service")


@pytest.fixture(scope="session")
def server(workdir):
    """A server shared by the read-only tests and the tests whose writes do not disturb others."""
    db = workdir / "shared.db"
    srv = Server(db, workdir / "shared.log")
    srv.key = run_cli("keys", "create", "tests", "--db", str(db)).stdout.strip()
    srv.start()
    yield srv
    assert srv.stop() == 0, srv.log_text()


@pytest.fixture
def fresh_server(tmp_path):
    """A server of its own, for tests that kill or stop it."""
    db = tmp_path / "fresh.db"
    srv = Server(db, tmp_path / "server.log")
    srv.key = run_cli("keys", "create", "fresh", "--db", str(db)).stdout.strip()
    yield srv
    if srv.proc and srv.proc.poll() is None:
        srv.proc.kill()
        srv.proc.wait()
