"""Fixtures for the web page's browser tests: a real `linkwise serve` (the REST tests' Server class)
and headless Chromium (Debian's `chromium` + `chromium-driver`, installed by scripts/install-deps.sh)
driven by Selenium. A console error or an uncaught exception on the page fails the test that caused it.

Screenshots and the page-load budget land in $LINKWISE_WEB_ARTIFACTS (default build/web-artifacts).
"""
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "service"))  # reports.py: synthetic probe reports
_spec = importlib.util.spec_from_file_location("service_fixtures", REPO / "tests" / "service" / "conftest.py")
service_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(service_fixtures)

# Selenium is given both binaries: its Selenium Manager must never try to download a browser or driver.
os.environ.setdefault("SE_OFFLINE", "true")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")


@pytest.fixture(scope="session")
def artifacts():
    path = Path(os.environ.get("LINKWISE_WEB_ARTIFACTS", REPO / "build" / "web-artifacts"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def web_server(tmp_path_factory):
    """A server of its own (the tests upload a probe report), with an API key for the upload."""
    workdir = tmp_path_factory.mktemp("linkwise-web")
    db = workdir / "web.db"
    srv = service_fixtures.Server(db, workdir / "server.log")
    srv.key = service_fixtures.run_cli("keys", "create", "web-tests", "--db", str(db)).stdout.strip()
    srv.start()
    yield srv
    assert srv.stop() == 0, srv.log_text()


def _new_driver(download_dir: Path):
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not shutil.which(path):
            pytest.fail(f"{path} not found: install Debian's {package} (bash scripts/install-deps.sh)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1440,900",
                "--force-device-scale-factor=1", "--disable-extensions", "--no-first-run", "--disable-background-networking",
                "--lang=en-US"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_experimental_option("prefs", {"download.default_directory": str(download_dir),
                                              "download.prompt_for_download": False})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.fixture(scope="session")
def downloads(tmp_path_factory):
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="session")
def browser_session(downloads):
    driver = _new_driver(downloads)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture
def browser(browser_session, web_server):
    """The shared browser, its console read before and checked after each test."""
    browser_session.get_log("browser")  # drop what earlier tests left
    yield browser_session
    errors = [e for e in browser_session.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, "console errors on the page:\n" + "\n".join(e["message"] for e in errors)
