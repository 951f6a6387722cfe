//! Spans for an OpenTelemetry collector: one server span per request, written as OTLP/HTTP
//! JSON (an `ExportTraceServiceRequest` in the protobuf JSON mapping, ids in hex as OTLP/JSON
//! asks), and a bounded background exporter that POSTs batches to a collector over plain
//! HTTP, dropping and counting what a slow or absent collector cannot take.

use std::io;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

pub(crate) use crate::transport::telemetry::collector::Endpoint;
use crate::transport::telemetry::collector::post;
use crate::transport::telemetry::outage::Outage;
use crate::transport::telemetry::server_metrics::{ServerMetrics, SpanResult};
use crate::util::queue::{Receiver, Recv, Refused, Sender, sized_queue};
use crate::util::trace_context::{Hex, TraceContext};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging).
const LOG: &str = "baremcp::otlp";
/// Spans waiting for the exporter; past this, new ones are dropped (and counted).
const QUEUE: usize = 2048;
/// The most spans in one export request.
const BATCH: usize = 256;
/// OTLP's `SPAN_KIND_SERVER`, `STATUS_CODE_ERROR`, and the span flags saying whether the
/// parent is remote (`SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK`, `..._IS_REMOTE_MASK`).
const KIND_SERVER: u8 = 2;
const STATUS_ERROR: u8 = 2;
const HAS_IS_REMOTE: u32 = 0x100;
const IS_REMOTE: u32 = 0x200;

/// One server span: a request from its arrival to its response.
#[derive(Debug)]
pub(crate) struct Span {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    /// The caller's span, from the request's `traceparent`.
    parent_id: Option<[u8; 8]>,
    trace_flags: u8,
    tracestate: Option<String>,
    name: String,
    start: SystemTime,
    end: SystemTime,
    attributes: Vec<(&'static str, Attribute)>,
    /// The error message of a failed request: the span's status is then `ERROR`.
    error: Option<String>,
}

/// An attribute's value.
#[derive(Debug)]
pub(crate) enum Attribute {
    Text(String),
    Int(i64),
}

/// The longest text a span carries in its name, an attribute or its message, in bytes: a
/// request id or an unknown method is the client's text, and the queue holds 2 048 spans
/// (OpenTelemetry SDKs have the same attribute value length limit, unset by default).
const MAX_TEXT: usize = 256;

/// `text`, cut to [`MAX_TEXT`] bytes at a character boundary.
fn clipped(text: &str) -> String {
    let mut end = text.len().min(MAX_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

impl From<&str> for Attribute {
    fn from(text: &str) -> Attribute {
        Attribute::Text(clipped(text))
    }
}

impl From<i64> for Attribute {
    fn from(n: i64) -> Attribute {
        Attribute::Int(n)
    }
}

impl Span {
    /// The span of one request to `method`, named `{method} {target}` as the semantic
    /// conventions say (`target`: the tool or prompt), with `mcp.method.name` set. With the
    /// caller's trace context it joins that trace as a child of the caller's span; without,
    /// it starts a trace of its own, sampled.
    pub fn server(
        ids: &mut SpanIds,
        method: &str,
        target: Option<&str>,
        caller: Option<&TraceContext>,
        start: SystemTime,
        end: SystemTime,
    ) -> Span {
        let name = match target {
            Some(target) => clipped(&format!("{method} {target}")),
            None => clipped(method),
        };
        let (trace_id, parent_id, trace_flags, tracestate) = match caller {
            Some(c) => {
                (c.trace_id(), Some(c.parent_id()), c.flags(), c.tracestate().map(String::from))
            }
            None => (ids.trace_id(), None, 1, None),
        };
        Span {
            trace_id,
            span_id: ids.span_id(),
            parent_id,
            trace_flags,
            tracestate,
            name,
            start,
            end,
            attributes: vec![("mcp.method.name", method.into())],
            error: None,
        }
    }

    /// Adds an attribute (`jsonrpc.request.id`, `gen_ai.tool.name`, `mcp.session.id`, ...).
    pub fn attr(mut self, key: &'static str, value: impl Into<Attribute>) -> Span {
        self.attributes.push((key, value.into()));
        self
    }

    /// Marks the span failed: `error.type` (a JSON-RPC code, or `tool_error`) and the status
    /// `ERROR` with the error's message.
    pub fn failed(self, error_type: &str, message: &str) -> Span {
        let mut span = self.attr("error.type", error_type);
        span.error = Some(clipped(message));
        span
    }

    /// Whether the span is recorded: a caller that did not sample its trace is followed.
    pub fn sampled(&self) -> bool {
        self.trace_flags & 1 != 0
    }

    fn to_json(&self) -> Value {
        let remote = match self.parent_id {
            Some(_) => HAS_IS_REMOTE | IS_REMOTE,
            None => HAS_IS_REMOTE,
        };
        let mut span = json!({
            "traceId": Hex(&self.trace_id).to_string(),
            "spanId": Hex(&self.span_id).to_string(),
            "flags": u32::from(self.trace_flags) | remote,
            "name": self.name,
            "kind": KIND_SERVER,
            "startTimeUnixNano": unix_nanos(self.start),
            "endTimeUnixNano": unix_nanos(self.end),
            "attributes": self.attributes.iter().map(|(k, v)| attribute(k, v)).collect::<Vec<_>>(),
        });
        if let Some(parent) = &self.parent_id {
            span["parentSpanId"] = json!(Hex(parent).to_string());
        }
        if let Some(state) = &self.tracestate {
            span["traceState"] = json!(state);
        }
        if let Some(message) = &self.error {
            span["status"] = json!({ "code": STATUS_ERROR, "message": message });
        }
        span
    }
}

/// What produced the spans: the resource's `service.name` and `service.version` (the
/// server's name and version).
pub(crate) struct Resource {
    pub service_name: String,
    pub service_version: String,
}

/// An `ExportTraceServiceRequest` holding `spans`, in OTLP/JSON.
pub(crate) fn encode(resource: &Resource, spans: &[Span]) -> String {
    json!({ "resourceSpans": [{
        "resource": { "attributes": [
            attribute("service.name", &Attribute::Text(resource.service_name.clone())),
            attribute("service.version", &Attribute::Text(resource.service_version.clone())),
        ]},
        "scopeSpans": [{
            "scope": { "name": "baremcp", "version": env!("CARGO_PKG_VERSION") },
            "spans": spans.iter().map(Span::to_json).collect::<Vec<_>>(),
        }],
    }]})
    .to_string()
}

/// An OTLP `KeyValue`; 64-bit integers are strings in the protobuf JSON mapping.
fn attribute(key: &str, value: &Attribute) -> Value {
    let value = match value {
        Attribute::Text(text) => json!({ "stringValue": text }),
        Attribute::Int(n) => json!({ "intValue": n.to_string() }),
    };
    json!({ "key": key, "value": value })
}

/// Nanoseconds since the Unix epoch, as a string (a `fixed64` in the JSON mapping).
fn unix_nanos(time: SystemTime) -> String {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()).to_string()
}

/// Span and trace ids: unique rather than secret, so a SplitMix64 sequence seeded once from
/// the system's randomness (reading `/dev/urandom` per request would cost a system call).
pub(crate) struct SpanIds(u64);

impl SpanIds {
    pub fn new() -> SpanIds {
        let seed = crate::util::random::random_hex(8);
        SpanIds(u64::from_str_radix(&seed, 16).unwrap_or(0x9e37_79b9_7f4a_7c15))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A span id, never all zero (which W3C and OTLP call invalid).
    pub fn span_id(&mut self) -> [u8; 8] {
        loop {
            let id = self.next();
            if id != 0 {
                return id.to_be_bytes();
            }
        }
    }

    pub fn trace_id(&mut self) -> [u8; 16] {
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&self.span_id());
        id[8..].copy_from_slice(&self.next().to_be_bytes());
        id
    }
}

/// Sends spans to a collector from a thread of its own, so that a slow or absent collector
/// never holds the dispatching loop: [`Exporter::offer`] only queues.
pub(crate) struct Exporter {
    queue: Sender<Span>,
    thread: JoinHandle<()>,
    metrics: Arc<ServerMetrics>,
}

impl Exporter {
    /// Starts the exporter's thread. Every span it sends or drops is counted in `metrics`.
    pub fn start(
        endpoint: Endpoint,
        resource: Resource,
        metrics: Arc<ServerMetrics>,
    ) -> io::Result<Exporter> {
        let (queue, spans) = sized_queue(QUEUE, usize::MAX);
        let counts = Arc::clone(&metrics);
        let thread = std::thread::Builder::new()
            .name("baremcp-otlp".into())
            .spawn(move || export(&endpoint, &resource, &spans, &counts))?;
        Ok(Exporter { queue, thread, metrics })
    }

    /// Queues `span` for export, unless the caller did not sample it. Never waits: when the
    /// queue is full the span is dropped and counted (`queue_full`).
    pub fn offer(&self, span: Span) {
        if !span.sampled() {
            return;
        }
        match self.queue.send_sized(span, 0) {
            Ok(_) => {}
            Err(Refused::Full) => self.metrics.span(SpanResult::QueueFull),
            Err(Refused::Closed) => self.metrics.span(SpanResult::ExportFailed),
        }
    }

    /// Stops taking spans and gives the thread up to `within` to send what is queued; a
    /// thread still waiting on a collector after that is left to end on its own timeouts.
    pub fn finish(self, within: Duration) {
        drop(self.queue);
        let deadline = Instant::now() + within;
        while !self.thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.thread.is_finished() {
            let _ = self.thread.join();
        }
    }
}

/// The exporter's thread: a batch at a time, until every sender is gone and the queue is
/// empty.
fn export(
    endpoint: &Endpoint,
    resource: &Resource,
    spans: &Receiver<Span>,
    metrics: &ServerMetrics,
) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut outage = Outage::default();
    while let Recv::Item(first) = spans.recv() {
        batch.push(first);
        while batch.len() < BATCH
            && let Recv::Item(span) = spans.recv_timeout(Duration::ZERO)
        {
            batch.push(span);
        }
        let host = &endpoint.host;
        let failure = match post(endpoint, &encode(resource, &batch)) {
            Ok(status) if (200..300).contains(&status) => None,
            Ok(status) => Some(format!("the collector at {host} answered {status}")),
            Err(e) => Some(format!("cannot export to {host}: {e}")),
        };
        let result = match failure {
            None => {
                if let Some(line) = outage.ended(host) {
                    log::info!(target: LOG, "{line}");
                }
                SpanResult::Exported
            }
            Some(why) => {
                if let Some(line) = outage.failed(&why, batch.len(), Instant::now()) {
                    log::warn!(target: LOG, "{line}");
                }
                SpanResult::ExportFailed
            }
        };
        for _ in batch.drain(..) {
            metrics.span(result);
        }
    }
    // What was dropped since the last warning is not left unsaid when the server stops.
    if let Some(line) = outage.untold(&endpoint.host) {
        log::warn!(target: LOG, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::mpsc;

    use super::*;

    const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn resource() -> Resource {
        Resource { service_name: "baremcp".into(), service_version: "0.1.0".into() }
    }

    fn at(nanos: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_nanos(nanos)
    }

    /// A tools/call span joining the caller's trace, and one that failed starting its own.
    fn two_spans() -> Vec<Span> {
        let mut ids = SpanIds(7);
        let caller = TraceContext::parse(TRACEPARENT, Some("rojo=00f067aa0ba902b7")).unwrap();
        let call = Span::server(
            &mut ids,
            "tools/call",
            Some("hello"),
            Some(&caller),
            at(1_700_000_000_000_000_001),
            at(1_700_000_000_000_250_001),
        )
        .attr("jsonrpc.request.id", "2")
        .attr("gen_ai.tool.name", "hello")
        .attr("gen_ai.operation.name", "execute_tool")
        .attr("network.transport", "tcp");
        let failed = Span::server(&mut ids, "tools/list", None, None, at(5), at(9))
            .attr("server.port", 8080)
            .failed("-32602", "params must be an object");
        vec![call, failed]
    }

    #[test]
    fn encodes_an_export_request_in_otlp_json() {
        let exported: Value = serde_json::from_str(&encode(&resource(), &two_spans())).unwrap();
        let scope = &exported["resourceSpans"][0]["scopeSpans"][0];
        assert_eq!(
            exported["resourceSpans"][0]["resource"]["attributes"][0],
            json!({"key": "service.name", "value": {"stringValue": "baremcp"}})
        );
        assert_eq!(scope["scope"]["name"], "baremcp");
        let call = &scope["spans"][0];
        // Ids are hex (OTLP/JSON), not base64 (the plain protobuf JSON mapping).
        assert_eq!(call["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(call["parentSpanId"], "00f067aa0ba902b7");
        assert_eq!(call["spanId"].as_str().unwrap().len(), 16);
        assert_eq!(call["traceState"], "rojo=00f067aa0ba902b7");
        assert_eq!(call["name"], "tools/call hello");
        assert_eq!(call["kind"], 2);
        assert_eq!(call["flags"], 0x301); // sampled, and the parent is remote
        assert_eq!(call["startTimeUnixNano"], "1700000000000000001");
        assert_eq!(call["endTimeUnixNano"], "1700000000000250001");
        assert_eq!(
            call["attributes"][0],
            json!({"key": "mcp.method.name", "value": {"stringValue": "tools/call"}})
        );
        assert!(call.get("status").is_none(), "a success leaves the status unset");
        let failed = &scope["spans"][1];
        assert_eq!(failed["name"], "tools/list");
        assert!(failed.get("parentSpanId").is_none() && failed.get("traceState").is_none());
        assert_ne!(failed["traceId"], call["traceId"], "a span without a caller starts a trace");
        assert_eq!(failed["flags"], 0x101);
        assert_eq!(
            failed["attributes"][1],
            json!({"key": "server.port", "value": {"intValue": "8080"}})
        );
        assert_eq!(
            failed["attributes"][2],
            json!({"key": "error.type", "value": {"stringValue": "-32602"}})
        );
        assert_eq!(failed["status"], json!({"code": 2, "message": "params must be an object"}));
    }

    #[test]
    fn a_client_s_text_is_cut_to_what_a_span_may_hold() {
        let mut ids = SpanIds::new();
        let huge = "é".repeat(1 << 20);
        let span = Span::server(&mut ids, &huge, Some(&huge), None, at(1), at(2))
            .attr("jsonrpc.request.id", huge.as_str())
            .failed("-32601", &huge);
        let exported: Value = serde_json::from_str(&encode(&resource(), &[span])).unwrap();
        let span = &exported["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        let texts = [
            &span["name"],
            &span["attributes"][0]["value"]["stringValue"],
            &span["attributes"][1]["value"]["stringValue"],
            &span["status"]["message"],
        ];
        for text in texts {
            let text = text.as_str().unwrap();
            assert!(text.len() <= MAX_TEXT && text.len() >= MAX_TEXT - 1, "{}", text.len());
            assert!(text.chars().all(|c| c == 'é'), "cut inside a character");
        }
    }

    #[test]
    fn ids_are_never_zero_and_do_not_repeat() {
        let mut ids = SpanIds(0u64.wrapping_sub(0x9e37_79b9_7f4a_7c15));
        let spans: Vec<[u8; 8]> = (0..1000).map(|_| ids.span_id()).collect();
        assert!(spans.iter().all(|id| *id != [0; 8]));
        let mut unique = spans.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), spans.len());
        assert_ne!(SpanIds::new().trace_id(), SpanIds::new().trace_id());
    }

    /// A collector on loopback that answers `status` to each request and hands back bodies.
    fn collector(status: u16) -> (Endpoint, mpsc::Receiver<String>) {
        collector_failing(status, usize::MAX)
    }

    /// A collector that answers `status` to its first `failing` requests, then 200.
    fn collector_failing(status: u16, failing: usize) -> (Endpoint, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        let (bodies, received) = mpsc::channel();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { return };
                let status = if n < failing { status } else { 200 };
                let mut request = Vec::new();
                let mut chunk = [0u8; 65536];
                // Read the head, then as many body bytes as Content-Length says.
                let body = loop {
                    let Ok(n @ 1..) = stream.read(&mut chunk) else { return };
                    request.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&request).into_owned();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let length: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("Content-Length: "))
                            .and_then(|n| n.parse().ok())
                            .unwrap_or(0);
                        if body.len() >= length {
                            break text;
                        }
                    }
                };
                let reply = format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n");
                let _ = stream.write_all(reply.as_bytes());
                if bodies.send(body).is_err() {
                    return;
                }
            }
        });
        (Endpoint::parse(&url).unwrap(), received)
    }

    #[test]
    fn exports_spans_to_a_collector_and_counts_them() {
        let (endpoint, bodies) = collector(200);
        let metrics = Arc::new(ServerMetrics::new());
        let exporter = Exporter::start(endpoint, resource(), Arc::clone(&metrics)).unwrap();
        let [call, failed] = <[Span; 2]>::try_from(two_spans()).unwrap();
        exporter.offer(call);
        exporter.offer(failed);
        // A caller that did not sample its trace is not recorded.
        let unsampled = TraceContext::parse(&TRACEPARENT.replace("-01", "-00"), None).unwrap();
        exporter.offer(Span::server(
            &mut SpanIds::new(),
            "ping",
            None,
            Some(&unsampled),
            at(1),
            at(2),
        ));
        exporter.finish(Duration::from_secs(10));
        let mut spans = 0;
        for request in bodies.try_iter() {
            let (head, body) = request.split_once("\r\n\r\n").unwrap();
            assert!(head.starts_with("POST /v1/traces HTTP/1.1\r\n"), "{head}");
            assert!(head.contains("\r\nContent-Type: application/json\r\n"), "{head}");
            let export: Value = serde_json::from_str(body).unwrap();
            spans += export["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().len();
        }
        assert_eq!(spans, 2);
        assert!(metrics.render().contains("baremcp_otlp_spans_total{result=\"exported\"} 2\n"));
    }

    /// Whether an exporter to `endpoint` counted both of `two_spans` as `result`.
    fn exported_as(endpoint: Endpoint, result: &str) -> bool {
        let metrics = Arc::new(ServerMetrics::new());
        let exporter = Exporter::start(endpoint, resource(), Arc::clone(&metrics)).unwrap();
        two_spans().into_iter().for_each(|span| exporter.offer(span));
        exporter.finish(Duration::from_secs(10));
        metrics.render().contains(&format!("baremcp_otlp_spans_total{{result=\"{result}\"}} 2\n"))
    }

    #[test]
    fn a_collector_that_refuses_or_is_gone_costs_only_the_spans() {
        let (refusing, _bodies) = collector(503);
        assert!(exported_as(refusing, "export_failed"));
        // Nothing listens on a port just freed: connecting fails at once.
        let gone = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        assert!(exported_as(
            Endpoint::parse(&format!("http://{gone}/v1/traces")).unwrap(),
            "export_failed"
        ));
        let (accepting, _bodies) = collector(200);
        assert!(exported_as(accepting, "exported"));
    }

    /// A collector that takes connections and never answers: offers still return, and what
    /// does not fit the queue is dropped and counted.
    #[test]
    fn a_stalled_collector_never_holds_the_caller() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        let metrics = Arc::new(ServerMetrics::new());
        let exporter =
            Exporter::start(Endpoint::parse(&url).unwrap(), resource(), Arc::clone(&metrics))
                .unwrap();
        let mut ids = SpanIds::new();
        let offered = QUEUE + BATCH + 100;
        for _ in 0..offered {
            exporter.offer(Span::server(&mut ids, "ping", None, None, at(1), at(2)));
        }
        let dropped = |text: &str| -> usize {
            let line = "baremcp_otlp_spans_total{result=\"queue_full\"} ";
            text.lines().find_map(|l| l.strip_prefix(line)).unwrap().parse().unwrap()
        };
        // The exporter holds one batch (waiting on the collector) and the queue the rest.
        assert!(dropped(&metrics.render()) >= offered - QUEUE - BATCH, "{}", metrics.render());
        exporter.finish(Duration::from_millis(0));
        drop(listener);
    }

    /// What the exporter logs, for the test that counts it.
    struct Lines(std::sync::Mutex<Vec<String>>);

    impl log::Log for Lines {
        fn enabled(&self, metadata: &log::Metadata) -> bool {
            metadata.target() == LOG
        }
        fn log(&self, record: &log::Record) {
            if self.enabled(record.metadata()) {
                self.0.lock().unwrap().push(format!("{} {}", record.level(), record.args()));
            }
        }
        fn flush(&self) {}
    }

    static LINES: Lines = Lines(std::sync::Mutex::new(Vec::new()));

    /// Set in the environment of [`warned_once_child`]: it sets a logger and the maximum level,
    /// which are the process's, so it runs in a process of its own, not among the other tests.
    const CHILD: &str = "BAREMCP_TEST_OTLP_LOG_CHILD";

    /// A collector that fails batch after batch is warned about once, not once a batch, and
    /// the batch it takes again is told, with what the outage cost.
    #[test]
    fn a_failing_collector_is_warned_about_once_and_its_recovery_told() {
        let (_, path) = module_path!().split_once("::").unwrap_or_default();
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", &format!("{path}::warned_once_child")])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success() && stdout.contains("1 passed"), "{stdout}");
    }

    #[test]
    #[ignore = "the child process of a_failing_collector_is_warned_about_once_and_its_recovery_told"]
    fn warned_once_child() {
        if std::env::var_os(CHILD).is_none() {
            return;
        }
        let _ = log::set_logger(&LINES);
        log::set_max_level(log::LevelFilter::Info);
        let (endpoint, _bodies) = collector_failing(500, 20);
        let host = endpoint.host.clone();
        let metrics = Arc::new(ServerMetrics::new());
        let exporter = Exporter::start(endpoint, resource(), Arc::clone(&metrics)).unwrap();
        let counted = |text: &str| -> usize {
            let count = |result: &str| {
                let line = format!("baremcp_otlp_spans_total{{result=\"{result}\"}} ");
                text.lines().find_map(|l| l.strip_prefix(&line)?.parse::<usize>().ok())
            };
            count("exported").unwrap_or(0) + count("export_failed").unwrap_or(0)
        };
        let mut ids = SpanIds::new();
        // A span at a time, each a batch of its own, sent once the one before it was.
        for n in 1..=21 {
            exporter.offer(Span::server(&mut ids, "ping", None, None, at(1), at(2)));
            let deadline = Instant::now() + Duration::from_secs(10);
            while counted(&metrics.render()) < n && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        exporter.finish(Duration::from_secs(10));
        let lines = LINES.0.lock().unwrap();
        let ours: Vec<&String> = lines.iter().filter(|l| l.contains(&host)).collect();
        assert_eq!(
            ours,
            [
                &format!("WARN the collector at {host} answered 500: 1 spans dropped"),
                &format!("INFO export to {host} resumed: 20 batches (20 spans) were dropped"),
            ]
        );
    }
}
