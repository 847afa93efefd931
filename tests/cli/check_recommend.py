#!/usr/bin/env python3
"""check_recommend.py LINKWISE WORKLOAD TOP: `linkwise recommend WORKLOAD --top TOP --json` answers
exactly TOP plans (the example has many qualifying ones), best first, each of which fits in memory,
meets the workload's deadline and names its instance; an empty or non-fitting answer fails."""
import json
import subprocess
import sys

linkwise, workload, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
run = subprocess.run([linkwise, "recommend", workload, "--top", str(top), "--json"], capture_output=True, text=True)
assert run.returncode == 0, (run.returncode, run.stderr)
answer = json.loads(run.stdout)
results = answer["results"]
assert len(results) == top, f"expected {top} plans, got {len(results)}: {answer.get('rejected', [])[:3]}"
deadline_hours = json.load(open(workload)).get("constraints", {}).get("deadline_hours")
for plan in results:
    assert plan["fits"] is True, plan["instance"]
    assert plan["instance"], plan
    assert plan["meets_deadline"] is not False, plan["instance"]
    if deadline_hours is not None:
        assert plan["job_hours"] <= deadline_hours, (plan["instance"], plan["job_hours"])
    assert plan["cost_usd"] is not None and plan["cost_usd"] > 0, plan["instance"]
# Plans outside the memory error band rank before `tight` ones, each part cheapest first.
costs = [plan["cost_usd"] for plan in results]
order = [(plan["memory_verdict"] == "tight", plan["cost_usd"]) for plan in results]
assert order == sorted(order), f"not ranked by (tight, cost): {order}"
print(f"ok: {len(results)} fitting plans, cheapest {results[0]['instance']} at {costs[0]:.0f} USD")
