"""Times `import linkwise` and linkwise.recommend on the workload and top-k of
BM_RecommendJsonLlama70B in tests/bench/bench_planner.cpp (the same JSON-in, JSON-out call timed
in C++), for the README's "Python" section. Not a test (pytest does not collect it): run it by hand,

    .venv/bin/python tests/python/bench_recommend.py
"""

import statistics
import subprocess
import sys
import time
import timeit


def import_time_ms(runs: int = 15) -> float:
    """Median time of `import linkwise` in a fresh interpreter, timed inside it."""
    def run(code: str) -> float:
        script = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
        return float(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                    check=True).stdout)
    return 1e3 * statistics.median(run("import linkwise") for _ in range(runs))


def main() -> None:
    import linkwise

    workload = {
        "model": {"preset": "llama3.1-70b"},
        "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "tokens": 2e12, "precision": "bf16"},
        "constraints": {"max_nodes": 64, "objective": "cost"},
    }
    print(f"import linkwise: {import_time_ms():.1f} ms (median of 15 fresh interpreters)")
    linkwise.Catalog.default()
    top, number = 5, 50
    linkwise.recommend(workload, top=top)
    # Wall time and CPU time (the core runs on the calling thread), as Google Benchmark's Time and CPU.
    for name, timer in (("wall", time.perf_counter), ("CPU", time.process_time)):
        times = timeit.repeat(lambda: linkwise.recommend(workload, top=top), number=number, repeat=9,
                              timer=timer)
        best, median = min(times) / number, statistics.median(times) / number
        print(f"linkwise.recommend(top={top}) {name}: {1e3 * best:.3f} ms best, {1e3 * median:.3f} ms median")


if __name__ == "__main__":
    main()
