#!/usr/bin/env bash
# gpu-session.sh: what a session with a GPU machine runs. Builds linkwise with the CUDA probes,
# runs `linkwise probe` (quick, then full) into $OUT, validates the reports, and prints the
# figures to set beside nvbandwidth's and nccl-tests' on the same machine.
#
# It never builds nvbandwidth or nccl-tests. If you built them yourself, point at them:
#   NVBANDWIDTH=/path/to/nvbandwidth  NCCL_TESTS=/path/to/nccl-tests/build  bash probes/scripts/gpu-session.sh
# and their outputs (with run times) land in $OUT next to linkwise's.
#
# Reports written here are measured: commit them as tests/fixtures/probe/measured-<gpu>-<date>.json
# only as they come out of this script, never edited.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/probe-session}
BUILD=${BUILD:-build-gpu}
INSTANCE=${INSTANCE:-}   # catalog instance id for validate, e.g. aws:p5.48xlarge; empty: detect
mkdir -p "$OUT"

nvidia-smi -L | tee "$OUT/nvidia-smi-L.txt"
nvidia-smi topo -m > "$OUT/nvidia-smi-topo.txt" 2>&1 || true
nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1 || true

# Build for this machine's GPU only: fast.
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLINKWISE_CUDA=ON -DLINKWISE_CUDA_ARCHITECTURES=native \
      -DLINKWISE_BUILD_BENCHMARKS=OFF -DLINKWISE_BUILD_TESTS=OFF > "$OUT/cmake.log"
cmake --build "$BUILD" -j "$(nproc)" --target linkwise > "$OUT/build.log"
LINKWISE="$BUILD/bin/linkwise"

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
count=$(nvidia-smi -L | wc -l)
stamp=$(date -u +%Y-%m-%d)
instance_args=()
[ -n "$INSTANCE" ] && instance_args=(--instance "$INSTANCE")

for mode in quick full; do
  report="$OUT/measured-${count}x${gpu}-${stamp}-${mode}.json"
  flags=(); [ "$mode" = quick ] && flags=(--quick)
  start=$(date +%s.%N)
  "$LINKWISE" probe "${flags[@]}" --out "$report"
  end=$(date +%s.%N)
  echo "linkwise probe --$mode: $(echo "$end - $start" | bc) s" | tee -a "$OUT/timings.txt"
  "$LINKWISE" validate "$report" "${instance_args[@]}" | tee "$OUT/validate-${mode}.txt" || true
  "$LINKWISE" validate "$report" "${instance_args[@]}" --json > "$OUT/validate-${mode}.json" || true
done

# The figures shared with the anchors, from the full report (medians, GB/s).
python3 - "$OUT/measured-${count}x${gpu}-${stamp}-full.json" <<'PY' | tee "$OUT/linkwise-figures.txt"
import json, sys
report = json.load(open(sys.argv[1]))
rows = []
for probe in report["probes"]:
    for r in probe["results"]:
        l = r["labels"]
        key = None
        if r["metric"] in ("h2d", "d2h", "h2d+d2h") and l.get("memory") == "pinned":
            key = f'{r["metric"]} pinned gpu {l["gpu"]}'
        elif r["metric"] == "device-copy":
            key = f'device-copy {l["method"]} gpu {l["gpu"]}'
        elif r["metric"] == "p2p-bandwidth" and l.get("p2p") == "on":
            key = f'p2p {l["method"]} {l["direction"]} {l["src"]}->{l["dst"]}'
        elif r["metric"] == "nccl-busbw":
            key = f'nccl busbw {l["collective"]} {r["bytes"]} B'
        if key:
            rows.append((key, r["stats"]["median"], r["stats"]["spread"], r["counting"]))
for key, median, spread, counting in rows:
    print(f"{key:48s} {median:10.2f} GB/s  spread {spread:6.3f}  {counting}")
PY

cat <<TXT

Side by side with the anchors (same machine, nothing else running):
  linkwise h2d / d2h pinned, per GPU      nvbandwidth -t host_to_device_memcpy_ce device_to_host_memcpy_ce
  linkwise h2d+d2h pinned                 nvbandwidth -t host_to_device_bidirectional_memcpy_ce (check which
                                          direction(s) it counts before comparing)
  linkwise device-copy copy-engine        nvbandwidth -t device_local_copy (read+write counted, as ours)
  linkwise p2p copy-engine unidirectional nvbandwidth -t device_to_device_memcpy_write_ce (copy on the source)
  linkwise p2p copy-engine bidirectional  nvbandwidth -t device_to_device_bidirectional_memcpy_write_ce
  linkwise p2p sm unidirectional          nvbandwidth -t device_to_device_memcpy_read_sm (kernel on the reader)
  linkwise nccl busbw <collective>        nccl-tests build/<collective>_perf -b 1M -e 4G -f 4 -g $count (busbw,
                                          out-of-place column; all_reduce_perf, all_gather_perf,
                                          reduce_scatter_perf, alltoall_perf)
Goal: every shared figure within 3% of the anchor's, in a third of their run time.
Write the pairs and both run times into README.md ("Probes" > "Against the anchors").
TXT

if [ -n "${NVBANDWIDTH:-}" ] && [ -x "$NVBANDWIDTH" ]; then
  start=$(date +%s.%N)
  "$NVBANDWIDTH" -t host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce \
     device_local_copy device_to_device_memcpy_write_ce device_to_device_bidirectional_memcpy_write_ce \
     device_to_device_memcpy_read_sm > "$OUT/nvbandwidth.txt" 2>&1 || true
  end=$(date +%s.%N)
  echo "nvbandwidth: $(echo "$end - $start" | bc) s" | tee -a "$OUT/timings.txt"
fi
if [ -n "${NCCL_TESTS:-}" ] && [ -d "$NCCL_TESTS" ]; then
  for t in all_reduce all_gather reduce_scatter alltoall; do
    start=$(date +%s.%N)
    "$NCCL_TESTS/${t}_perf" -b 1M -e 4G -f 4 -g "$count" > "$OUT/nccl-tests-$t.txt" 2>&1 || true
    end=$(date +%s.%N)
    echo "nccl-tests $t: $(echo "$end - $start" | bc) s" | tee -a "$OUT/timings.txt"
  done
fi
echo "outputs in $OUT"
