"""Asks a running Prometheus (standard library only) what it scraped from baremcp's metrics.

usage: prometheus_query.py PROMETHEUS_URL

Waits (at most 30 s) until the target has been scraped, then checks through the HTTP API:
the target is up with no scrape error; the operation histogram has a series for
tools/call of the tool hello, whose count is what the exposition says; and the refusals
counter has a series for every reason. Exits non-zero with a reason otherwise.
"""

import json
import sys
import time
import urllib.parse
import urllib.request

BASE = sys.argv[1]


def api(path, **query):
    url = f"{BASE}/api/v1/{path}"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.load(response)
    if body.get("status") != "success":
        raise RuntimeError(f"{path}: {body}")
    return body["data"]


def instant(expression):
    return api("query", query=expression)["result"]


def main():
    deadline = time.monotonic() + 30
    target = None
    while time.monotonic() < deadline:
        try:
            targets = api("targets")["activeTargets"]
            if targets and targets[0]["health"] != "unknown" and instant("up"):
                target = targets[0]
                break
        except (OSError, RuntimeError):
            pass
        time.sleep(0.5)
    if target is None:
        sys.exit("Prometheus never scraped the target within 30 s")
    if target["health"] != "up" or target["lastError"]:
        sys.exit(f"the scrape failed: health={target['health']} error={target['lastError']!r}")
    up = instant("up")
    if [sample["value"][1] for sample in up] != ["1"]:
        sys.exit(f"up is not 1: {up}")

    count = instant(
        'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="hello"}'
    )
    if len(count) != 1 or float(count[0]["value"][1]) < 1:
        sys.exit(f"no tools/call count for hello: {count}")
    buckets = instant('count(mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call"})')
    if not buckets or buckets[0]["value"][1] != "15":
        sys.exit(f"expected 15 buckets (14 bounds and +Inf): {buckets}")
    reasons = instant("count(baremcp_http_refusals_total)")
    if not reasons or int(reasons[0]["value"][1]) < 17:
        sys.exit(f"expected a refusal series per reason: {reasons}")
    print(
        "metrics: Prometheus scraped the target: up 1, tools/call hello count "
        f"{count[0]['value'][1]}, 15 buckets, {reasons[0]['value'][1]} refusal reasons"
    )


main()
