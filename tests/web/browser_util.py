"""Helpers of the browser tests."""
import json
import time
from pathlib import Path


def wait_for(driver, predicate, timeout=20, what="condition"):
    """Polls predicate(driver) until it returns something truthy; returns that."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate(driver)
            if value:
                return value
        except Exception as e:  # the element may not exist yet
            last_error = e
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}" + (f" (last error: {last_error})" if last_error else ""))


def save_json(artifacts: Path, name: str, data) -> None:
    (artifacts / name).write_text(json.dumps(data, indent=2) + "\n")
