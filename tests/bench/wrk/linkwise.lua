-- wrk script for the linkwise REST benchmark (tests/bench/wrk/run.sh).
-- GET by default; with WRK_BODY=FILE it POSTs that file (a JSON object) as application/json, and
-- with WRK_VARY=1 too, each request's body differs (a "name" field numbered per request), so no
-- answer can come from the service's cache of planner answers.
-- done() prints one line of figures that run.sh collects: requests/s, p50 and p99 latency, and
-- every non-2xx answer or socket error (a benchmark with errors is not a figure).

local body_file = os.getenv("WRK_BODY")
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"), "cannot read " .. body_file)
  wrk.method = "POST"
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
  if os.getenv("WRK_VARY") == "1" then
    local rest = wrk.body:gsub("^%s*{", "", 1)
    local counter = 0
    request = function()
      counter = counter + 1
      return wrk.format(nil, nil, nil, '{"name": "wrk ' .. counter .. '", ' .. rest)
    end
  end
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local errors = summary.errors
  local failed = errors.connect + errors.read + errors.write + errors.timeout + errors.status
  io.write(string.format(
    "RESULT requests=%d requests_per_s=%.0f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f failed=%d\n",
    summary.requests, summary.requests / seconds, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, failed))
end
