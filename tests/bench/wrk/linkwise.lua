-- wrk script for the linkwise REST benchmark (tests/bench/wrk/run.sh).
-- GET by default; with WRK_BODY=FILE it POSTs that file (a JSON object) as application/json.
-- With WRK_VARY=1 it POSTs a different pre-training workload each request instead: the model preset,
-- sequence length and node limit rotate (9 presets x 3 x 4: the mix of tests/bench/bench_planner.cpp's
-- BM_RecommendTextVaried) and a numbered "description" makes every body distinct, so no answer can
-- come from the service's cache of planner answers: every request is planned.
-- done() prints one line of figures that run.sh collects: requests/s, p50 and p99 latency, and
-- every non-2xx answer or socket error (a benchmark with errors is not a figure).

local presets = {"llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "llama2-7b", "llama2-13b",
                 "llama2-70b", "mistral-7b", "qwen2.5-72b", "gpt3-175b"}
local seq_lens = {2048, 4096, 8192}
local max_nodes = {8, 16, 32, 64}

local body_file = os.getenv("WRK_BODY")
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"), "cannot read " .. body_file)
  wrk.method = "POST"
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
end

-- Each wrk thread runs its own copy of this script: number them so their bodies differ too.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

if os.getenv("WRK_VARY") == "1" then
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  local counter = 0
  request = function()
    local i = counter
    counter = counter + 1
    local preset = presets[i % #presets + 1]
    local seq_len = seq_lens[math.floor(i / #presets) % #seq_lens + 1]
    local nodes = max_nodes[math.floor(i / (#presets * #seq_lens)) % #max_nodes + 1]
    local body = string.format(
      '{"description": "wrk %d.%d", "model": {"preset": "%s"}, ' ..
      '"job": {"kind": "pretrain", "seq_len": %d, "global_batch": 512, "tokens": 1e12, "precision": "bf16"}, ' ..
      '"constraints": {"max_nodes": %d, "objective": "cost"}}', thread_id or 0, counter, preset, seq_len, nodes)
    return wrk.format(nil, nil, nil, body)
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
