"""The web page's files as HTTP resources (the browser tests in tests/web drive the page itself):
types, compression, caching and fingerprinted URLs, the security headers, 404 for unknown files,
and the API beside it untouched."""
import re

import requests


def test_index_is_html_revalidated_with_a_policy(server):
    r = requests.get(server.url + "/", timeout=10)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "text/html; charset=utf-8"
    assert r.headers["Cache-Control"] == "no-cache"
    assert r.headers["Content-Encoding"] == "gzip"  # requests asks for gzip
    assert "script-src 'self'" in r.headers["Content-Security-Policy"]
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert '<div id="alert"' in r.text
    # A reload costs a 304.
    again = requests.get(server.url + "/", headers={"If-None-Match": r.headers["ETag"]}, timeout=10)
    assert again.status_code == 304 and again.content == b""


def test_assets_are_fingerprinted_and_cached_for_a_year(server):
    page = requests.get(server.url + "/", timeout=10).text
    urls = re.findall(r'"(/assets/[^"?]+\?v=[0-9a-f]{16})"', page)
    names = {u.split("?")[0].rsplit("/", 1)[1] for u in urls}
    assert {"app.js", "app.css", "instances.js", "plan.js", "fleet.js", "favicon.svg", "chart.min.js"} <= names
    for url in urls:
        r = requests.get(server.url + url, timeout=10)
        assert r.status_code == 200, url
        assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable", url
        assert r.headers["ETag"] == '"' + url.rsplit("=", 1)[1] + '"'
    types = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8", "favicon.svg": "image/svg+xml"}
    for name, content_type in types.items():
        r = requests.get(server.url + "/assets/" + name, timeout=10)
        assert r.headers["Content-Type"] == content_type
        assert r.headers["Cache-Control"] == "no-cache"  # without its fingerprint: revalidated


def test_chart_js_and_swagger_ui_are_embedded(server):
    chart = requests.get(server.url + "/assets/chart.min.js", timeout=10)
    assert chart.status_code == 200 and "Chart.js v3" in chart.text[:300]
    bundle = requests.get(server.url + "/assets/swagger-ui-bundle.js", timeout=10)
    assert bundle.status_code == 200 and len(bundle.content) > 500_000
    docs = requests.get(server.url + "/docs", timeout=10)
    assert docs.status_code == 200 and docs.headers["Content-Type"] == "text/html; charset=utf-8"
    assert re.search(r'/assets/swagger-ui-bundle\.js\?v=[0-9a-f]{16}', docs.text)
    head = requests.head(server.url + "/assets/chart.min.js", timeout=10)
    assert head.status_code == 200 and head.content == b""


def test_unknown_asset_is_a_404_problem(server):
    r = requests.get(server.url + "/assets/nope.js", timeout=10)
    assert r.status_code == 404
    assert r.headers["Content-Type"] == "application/problem+json"
    assert requests.get(server.url + "/assets/", timeout=10).status_code == 404
    assert requests.post(server.url + "/", timeout=10).status_code == 405


def test_api_is_unchanged_beside_the_page(server):
    r = requests.get(server.url + "/v1/instances?limit=1", timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
    assert "Content-Security-Policy" not in r.headers and "Cache-Control" not in r.headers
