"""A tiny OTLP/HTTP JSON collector that validates every export it receives.

usage: otlp_collector.py PORT SUMMARY_FILE

Serves POST /v1/traces on 127.0.0.1:PORT. Each body must be an ExportTraceServiceRequest in
OTLP/JSON: the protobuf JSON mapping, except that trace and span ids are hex (OTLP/JSON
says so), not base64. The ids are checked (lowercase hex of the right length, not all zero)
and turned into base64, then google.protobuf.json_format.Parse reads the whole document into
opentelemetry-proto's ExportTraceServiceRequest, refusing any field the definitions lack.
Each span must be of kind SERVER, end no earlier than it starts, and carry mcp.method.name.
A valid export gets 200, any other 400 with the reason. After each request SUMMARY_FILE holds
`requests=N spans=N errors=N` and the first error, if any. Stops on SIGTERM.
"""

import base64
import http.server
import json
import re
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

PORT, SUMMARY = int(sys.argv[1]), sys.argv[2]
counts = {"requests": 0, "spans": 0, "errors": 0}
first_error = []


def hex_to_base64(value, length, name):
    if not isinstance(value, str) or not re.fullmatch(f"[0-9a-f]{{{length}}}", value):
        raise ValueError(f"{name} must be {length} lowercase hex digits: {value!r}")
    if set(value) == {"0"}:
        raise ValueError(f"{name} must not be all zero")
    return base64.b64encode(bytes.fromhex(value)).decode()


def validate(document):
    spans = 0
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                span["traceId"] = hex_to_base64(span.get("traceId"), 32, "traceId")
                span["spanId"] = hex_to_base64(span.get("spanId"), 16, "spanId")
                if "parentSpanId" in span:
                    span["parentSpanId"] = hex_to_base64(span["parentSpanId"], 16, "parentSpanId")
                spans += 1
    request = json_format.Parse(json.dumps(document), ExportTraceServiceRequest())
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if span.kind != Span.SpanKind.SPAN_KIND_SERVER:
                    raise ValueError(f"span {span.name} is not of kind SERVER")
                if span.end_time_unix_nano < span.start_time_unix_nano:
                    raise ValueError(f"span {span.name} ends before it starts")
                if not any(a.key == "mcp.method.name" for a in span.attributes):
                    raise ValueError(f"span {span.name} has no mcp.method.name")
    return spans


class Collector(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        counts["requests"] += 1
        try:
            if self.path != "/v1/traces":
                raise ValueError(f"unexpected path {self.path}")
            if self.headers.get("Content-Type") != "application/json":
                raise ValueError(f"unexpected content type {self.headers.get('Content-Type')}")
            counts["spans"] += validate(json.loads(body))
            status, reply = 200, b"{}"
        except Exception as error:  # every failure is the exporter's: report it
            counts["errors"] += 1
            if not first_error:
                first_error.append(f"{type(error).__name__}: {error}")
            status, reply = 400, json.dumps({"error": str(error)}).encode()
        # The summary first: the exporter may finish, and the script read it, on our reply.
        with open(SUMMARY, "w") as summary:
            line = " ".join(f"{k}={v}" for k, v in counts.items())
            summary.write(line + "\n" + "".join(first_error))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", PORT), Collector).serve_forever()
