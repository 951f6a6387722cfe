"""A minimal stateless HTTP bridge to ONE long-lived stdio server, for the conformance suite's
tasks scenarios while examples/everything has no HTTP of its own (conformance-next.sh).

supergateway's stateless mode starts a server process per request, so a task made by one
request is unknown to the next; this bridge keeps one process. Each POST carries one JSON-RPC
message: a request is sent on with a bridge-chosen id (concurrent clients may reuse ids) and
its response comes back as application/json, with the status code 2026-07-28 gives its error
code; notifications get 202. It checks no header and streams nothing: those are the HTTP
transport's checks, not the tasks'. Usage: stateless_bridge.py PORT COMMAND [ARGS...]
"""
import json, subprocess, sys, threading, queue
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
waiting = {}
lock = threading.Lock()
counter = [0]


def reader():
    for line in child.stdout:
        try:
            m = json.loads(line)
        except Exception:
            continue
        if isinstance(m, dict) and "id" in m and ("result" in m or "error" in m):
            with lock:
                q = waiting.pop(m["id"], None)
            if q:
                q.put(m)


threading.Thread(target=reader, daemon=True).start()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
        if not isinstance(body, dict) or "id" not in body:
            if isinstance(body, dict):
                with lock:
                    child.stdin.write(json.dumps(body) + "\n")
                    child.stdin.flush()
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        q = queue.Queue()
        with lock:
            counter[0] += 1
            inner = counter[0]
            waiting[inner] = q
            outer = body["id"]
            body["id"] = inner
            child.stdin.write(json.dumps(body) + "\n")
            child.stdin.flush()
        try:
            m = q.get(timeout=20)
        except queue.Empty:
            m = {"jsonrpc": "2.0", "id": inner, "error": {"code": -32603, "message": "bridge timeout"}}
        m["id"] = outer
        out = json.dumps(m).encode()
        code = 200
        if "error" in m:
            c = m["error"].get("code")
            code = 404 if c == -32601 else 400 if c in (-32602, -32020, -32021, -32022) else 200
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
