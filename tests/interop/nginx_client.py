"""A 2026-07-28 client (standard library only) against several baremcp processes behind nginx.

usage: nginx_client.py NGINX_URL OTHER_SECRET_URL PID_BY_ADDRESS_JSON

1. An input_required elicitation (examples/everything's test_elicitation) whose retry is
   served by a different process than the one that asked: nginx names the backend of each
   response in X-Upstream; the processes share BAREMCP_STATE_SECRET, so the requestState
   one signed is accepted by another. The same retry sent to a process with another secret
   (OTHER_SECRET_URL) is refused: the secret is what makes it work.
2. A process killed mid-run costs only its in-flight requests: a subscriptions/listen stream
   is open on one backend and four threads call tools through nginx; that backend is killed
   (SIGKILL). Its stream ends; every call that started after it died succeeds.

The last line printed is "ASKED=<addr> ANSWERED=<addr>", for the script to check each
backend's own log.
"""

import collections
import http.client
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.parse

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def request(id_, method, params):
    params = dict(params, _meta=META)
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def headers_for(message):
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": message["method"],
    }
    name = message["params"].get("name")
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


class Endpoint:
    """One keep-alive connection to an MCP endpoint."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.path = parts.path
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)

    def post(self, message):
        """Returns (status, upstream, JSON-RPC message) of a JSON or event-stream response."""
        self.conn.request("POST", self.path, json.dumps(message), headers_for(message))
        response = self.conn.getresponse()
        body = response.read().decode()
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            data = [line[6:] for line in body.splitlines() if line.startswith("data: ")]
            body = data[-1] if data else "null"
        return response.status, response.getheader("X-Upstream"), json.loads(body)


def elicitation(url, other_url):
    endpoint = Endpoint(url)
    ask = request(7001, "tools/call", {"name": "test_elicitation", "arguments": {"message": "Who are you?"}})
    status, asked_by, reply = endpoint.post(ask)
    result = reply["result"]
    assert status == 200 and result["resultType"] == "input_required", reply
    (key, question), = result["inputRequests"].items()
    assert question["method"] == "elicitation/create" and question["params"]["message"] == "Who are you?", question
    answer = {"action": "accept", "content": {"username": "testuser", "email": "test@example.com"}}
    retry = request(7002, "tools/call", {
        "name": "test_elicitation",
        "arguments": {"message": "Who are you?"},
        "inputResponses": {key: answer},
        "requestState": result["requestState"],
    })
    # Round robin sends the next request to the next backend; a few tries at most in case
    # another client's request came between.
    for _ in range(6):
        status, answered_by, reply = endpoint.post(retry)
        if answered_by != asked_by:
            break
    assert answered_by != asked_by, f"every retry went to {asked_by}"
    assert status == 200 and reply["result"]["resultType"] == "complete", reply
    text = reply["result"]["content"][0]["text"]
    assert "action=accept" in text and "testuser" in text, text
    print(f"elicitation: asked by {asked_by}, answered by {answered_by}: {text}")

    status, _, refused = Endpoint(other_url).post(retry)
    assert refused.get("error", {}).get("code") == -32602, refused
    assert "requestState" in refused["error"]["message"], refused
    print(f"the same retry to a process with another secret: {status} {refused['error']['message']}")
    return asked_by, answered_by


def wait_until_dead(address):
    """Waits until a killed process's port refuses connections: its sockets are closed then
    (with threads, /proc may show it a zombie earlier). A request that reached it before is
    in flight on it."""
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, int(port)), 1).close()
        except ConnectionRefusedError:
            return
        except OSError:
            pass
        time.sleep(0.001)
    raise AssertionError(f"{address} still accepts connections 5 s after SIGKILL")


def kill_mid_run(url, pids):
    # A listen stream: an open request on one backend.
    parts = urllib.parse.urlsplit(url)
    listen_conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    listen = request(9000, "subscriptions/listen", {"notifications": {}})
    listen_conn.request("POST", parts.path, json.dumps(listen), headers_for(listen))
    stream = listen_conn.getresponse()
    victim = stream.getheader("X-Upstream")
    assert stream.status == 200 and victim in pids, (stream.status, victim, pids)
    first = stream.fp.readline()  # the first chunk's size line, or the first event line
    assert first, "the listen stream sent nothing"

    killed_at = [None]
    calls = []  # (started, ended, ok, upstream)
    lock = threading.Lock()

    def worker():
        endpoint = Endpoint(url)
        for n in range(150):
            message = request(1000 + n, "tools/call", {"name": "test_simple_text", "arguments": {}})
            started = time.monotonic()
            try:
                status, upstream, reply = endpoint.post(message)
                ok = status == 200 and reply["result"]["content"][0]["text"].startswith("This is a simple")
            except (OSError, http.client.HTTPException, ValueError, KeyError):
                ok, upstream = False, None
                endpoint = Endpoint(url)
            with lock:
                calls.append((started, time.monotonic(), ok, upstream))
                if len(calls) == 200 and killed_at[0] is None:
                    os.kill(pids[victim], signal.SIGKILL)
                    wait_until_dead(victim)
                    killed_at[0] = time.monotonic()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert killed_at[0] is not None, "the kill never happened"
    # The stream of the killed process ends (nginx cuts it); it ends nothing else.
    stream_ended = False
    try:
        while stream.fp.readline():
            pass
        stream_ended = True
    except (OSError, http.client.HTTPException):
        stream_ended = True
    assert stream_ended
    lost = [c for c in calls if not c[2]]
    after = [c for c in calls if c[0] > killed_at[0]]
    assert all(c[0] <= killed_at[0] for c in lost), f"a call that started after the kill failed: {lost}"
    assert len(lost) <= len(threads), lost
    assert len(after) >= 300 and all(c[2] for c in after), len(after)
    # X-Upstream lists every backend nginx tried: the dead one refused, the next answered.
    finals = collections.Counter(c[3].split(", ")[-1] for c in after)
    assert victim not in finals, finals
    rerouted = sum(", " in c[3] for c in after)
    served = ", ".join(f"{u} {n}" for u, n in sorted(finals.items()))
    print(
        f"killed {victim} (pid {pids[victim]}) after 200 calls: its listen stream ended, "
        f"{len(lost)} call(s) in flight failed; all {len(after)} calls started after it died succeeded "
        f"(served: {served}; {rerouted} after nginx found it refusing)"
    )


def main():
    url, other_url, pids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    asked_by, answered_by = elicitation(url, other_url)
    kill_mid_run(url, pids)
    print(f"ASKED={asked_by} ANSWERED={answered_by}")


if __name__ == "__main__":
    main()
