//! What an HTTP server counts and serves at `/metrics`: operation durations named after the
//! OpenTelemetry semantic conventions for MCP (as Prometheus renders them), and the
//! transport's own gauges and refusals.

use crate::util::metrics::{Counter, Family, Gauge, Histogram, OTHER, write_single};

/// `mcp.server.operation.duration`'s bucket bounds in seconds, as the semantic conventions
/// advise (`ExplicitBucketBoundaries`); `mcp.server.session.duration` uses the same.
pub(crate) const DURATION_BUCKETS: [f64; 14] =
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// The methods the operation histogram names; any other is `_OTHER`, so a client cannot grow
/// the series by inventing names. Requests of the method table, then client notifications.
const METHODS: [&str; 22] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
];

/// Why a connection or request was refused before it reached a handler: the `reason` label
/// of `baremcp_http_refusals_total`, one per refusal the HTTP layer makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `503`: `--max-connections` connections were open, or the process was out of file
    /// descriptors.
    ConnectionLimit,
    /// `429`: `--max-connections-per-peer` connections or `--max-streams-per-peer` streams
    /// were open from the client's address.
    PeerLimit,
    /// `503`: `--max-sessions` legacy sessions were held, every one in use.
    SessionLimit,
    /// `503`: the dispatching loop's queue was full, request bodies being read filled their
    /// budget, or the server was stopping.
    Busy,
    /// `403`: a `Host` that is not allowed (DNS rebinding).
    Host,
    /// `403`: an `Origin` that is not allowed.
    Origin,
    /// `401`: no valid token or JWT.
    Unauthorized,
    /// `403`: a JWT without every `--required-scope`.
    InsufficientScope,
    /// `404`: a path that is not the endpoint, the metadata or a probe.
    NotFound,
    /// `405`: an HTTP method the path does not serve.
    MethodNotAllowed,
    /// `415`: a POST whose body is not `application/json`.
    UnsupportedMediaType,
    /// `406`: an `Accept` that admits neither JSON nor event streams.
    NotAcceptable,
    /// `431`, `414`: a head over 16 KiB or 64 fields (`414`: its request line alone).
    HeadTooLarge,
    /// `413`: a body over `--max-message-bytes`.
    BodyTooLarge,
    /// `411`: a POST without a length.
    LengthRequired,
    /// `408`: a head or body that did not arrive in time.
    Timeout,
    /// `400`, `501`, `505`: malformed HTTP, an unknown transfer coding, or HTTP/2.
    BadHttp,
    /// `400` -32020: 2026-07-28 headers that are missing or disagree with the body.
    HeaderMismatch,
    /// `400`: a POSTed body that is not JSON, or not a JSON-RPC message.
    InvalidMessage,
    /// `400`: a legacy request without `Mcp-Session-Id`.
    MissingSession,
    /// `404`: an unknown, expired or deleted legacy session.
    UnknownSession,
}

impl Refusal {
    /// Every reason, in the order `/metrics` lists them.
    pub const ALL: [Refusal; 21] = [
        Refusal::ConnectionLimit,
        Refusal::PeerLimit,
        Refusal::SessionLimit,
        Refusal::Busy,
        Refusal::Host,
        Refusal::Origin,
        Refusal::Unauthorized,
        Refusal::InsufficientScope,
        Refusal::NotFound,
        Refusal::MethodNotAllowed,
        Refusal::UnsupportedMediaType,
        Refusal::NotAcceptable,
        Refusal::HeadTooLarge,
        Refusal::BodyTooLarge,
        Refusal::LengthRequired,
        Refusal::Timeout,
        Refusal::BadHttp,
        Refusal::HeaderMismatch,
        Refusal::InvalidMessage,
        Refusal::MissingSession,
        Refusal::UnknownSession,
    ];

    /// The `reason` label's value.
    pub fn name(self) -> &'static str {
        match self {
            Refusal::ConnectionLimit => "connection_limit",
            Refusal::PeerLimit => "peer_limit",
            Refusal::SessionLimit => "session_limit",
            Refusal::Busy => "busy",
            Refusal::Host => "host",
            Refusal::Origin => "origin",
            Refusal::Unauthorized => "unauthorized",
            Refusal::InsufficientScope => "insufficient_scope",
            Refusal::NotFound => "not_found",
            Refusal::MethodNotAllowed => "method_not_allowed",
            Refusal::UnsupportedMediaType => "unsupported_media_type",
            Refusal::NotAcceptable => "not_acceptable",
            Refusal::HeadTooLarge => "head_too_large",
            Refusal::BodyTooLarge => "body_too_large",
            Refusal::LengthRequired => "length_required",
            Refusal::Timeout => "timeout",
            Refusal::BadHttp => "bad_http",
            Refusal::HeaderMismatch => "header_mismatch",
            Refusal::InvalidMessage => "invalid_message",
            Refusal::MissingSession => "missing_session",
            Refusal::UnknownSession => "unknown_session",
        }
    }

    /// A refusal the HTTP parser made, by its status.
    pub fn of_status(status: u16) -> Refusal {
        match status {
            431 | 414 => Refusal::HeadTooLarge,
            413 => Refusal::BodyTooLarge,
            411 => Refusal::LengthRequired,
            408 => Refusal::Timeout,
            503 => Refusal::Busy,
            _ => Refusal::BadHttp,
        }
    }
}

/// The kinds of event stream, the `kind` label of `baremcp_http_streams`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamKind {
    /// A POST answered with `text/event-stream` (notifications or server requests first).
    Response,
    /// A 2026-07-28 `subscriptions/listen` stream.
    Listen,
    /// A legacy session's GET stream.
    Get,
}

impl StreamKind {
    const ALL: [StreamKind; 3] = [StreamKind::Response, StreamKind::Listen, StreamKind::Get];

    fn name(self) -> &'static str {
        match self {
            StreamKind::Response => "response",
            StreamKind::Listen => "listen",
            StreamKind::Get => "get",
        }
    }
}

/// How an operation ended, for its `error_type` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    /// A JSON-RPC error response with this code.
    Error(i64),
    /// A `tools/call` result with `isError: true` (`tool_error`, as the conventions say).
    ToolError,
}

/// One finished operation, as the histogram labels it.
pub(crate) struct Operation<'a> {
    pub method: &'a str,
    /// The tool of a `tools/call`: pass only a registered tool's name (an unknown one is the
    /// client's text, and would grow the series).
    pub tool: Option<&'a str>,
    pub outcome: Outcome,
}

/// Everything `/metrics` reports, shared by the dispatching loop and the connection threads
/// (behind an `Arc`); every update is an atomic add, or a lookup under a lock held for it.
pub(crate) struct ServerMetrics {
    operations: Family<Histogram>,
    sessions_ended: Family<Histogram>,
    /// Open connections, on every listener.
    pub connections: Gauge,
    /// Legacy sessions held.
    pub sessions: Gauge,
    streams: Family<Gauge>,
    /// Bytes of requests and client messages waiting for the dispatching loop (set when
    /// rendered, from the queue's own count).
    pub queued_bytes: Gauge,
    refusals: Family<Counter>,
    spans: Family<Counter>,
}

fn duration_histogram() -> Histogram {
    Histogram::new(&DURATION_BUCKETS)
}

impl ServerMetrics {
    pub fn new() -> ServerMetrics {
        let metrics = ServerMetrics {
            operations: Family::new(
                "mcp_server_operation_duration_seconds",
                "MCP request or notification duration as observed on the receiver from the \
                 time it was received until the result or ack is sent.",
                &["mcp_method_name", "gen_ai_tool_name", "error_type"],
                duration_histogram,
            ),
            sessions_ended: Family::new(
                "mcp_server_session_duration_seconds",
                "The duration of the MCP session as observed on the MCP server.",
                &[],
                duration_histogram,
            ),
            connections: Gauge::default(),
            sessions: Gauge::default(),
            streams: Family::new(
                "baremcp_http_streams",
                "Event streams open now, by kind.",
                &["kind"],
                Gauge::default,
            ),
            queued_bytes: Gauge::default(),
            refusals: Family::new(
                "baremcp_http_refusals_total",
                "Connections and requests refused before a handler saw them, by reason.",
                &["reason"],
                Counter::default,
            ),
            spans: Family::new(
                "baremcp_otlp_spans_total",
                "Spans offered to the OTLP exporter, by what became of them.",
                &["result"],
                Counter::default,
            ),
        };
        // Known series start at zero, so a rate over them is defined from the first scrape.
        metrics.sessions_ended.with(&[], |_| ());
        for kind in StreamKind::ALL {
            metrics.streams.with(&[kind.name()], |_| ());
        }
        for reason in Refusal::ALL {
            metrics.refusals.with(&[reason.name()], |_| ());
        }
        for result in SpanResult::ALL {
            metrics.spans.with(&[result.name()], |_| ());
        }
        metrics
    }

    /// Counts one operation that took `seconds`.
    pub fn observe(&self, op: &Operation, seconds: f64) {
        let method = METHODS.iter().find(|m| **m == op.method).copied().unwrap_or(OTHER);
        let tool = if method == "tools/call" { op.tool.unwrap_or_default() } else { "" };
        // An error code as text without allocating: at most 20 characters.
        let mut code = [0u8; 20];
        let error = match op.outcome {
            Outcome::Ok => "",
            Outcome::ToolError => "tool_error",
            Outcome::Error(n) => {
                use std::io::Write;
                let mut cursor = &mut code[..];
                let _ = write!(cursor, "{n}");
                let len = 20 - cursor.len();
                std::str::from_utf8(&code[..len]).unwrap_or(OTHER)
            }
        };
        self.operations.with(&[method, tool, error], |h| h.observe(seconds));
    }

    /// Counts a legacy session that ended after `seconds`.
    pub fn session_ended(&self, seconds: f64) {
        self.sessions_ended.with(&[], |h| h.observe(seconds));
    }

    /// Counts one refusal.
    pub fn refused(&self, why: Refusal) {
        self.refusals.with(&[why.name()], Counter::inc);
    }

    /// A stream of `kind` opened: counted until the value returned is dropped.
    pub fn open_stream(&self, kind: StreamKind) -> OpenStream<'_> {
        self.stream(kind, 1);
        OpenStream { metrics: self, kind }
    }

    fn stream(&self, kind: StreamKind, change: i64) {
        self.streams.with(&[kind.name()], |g| g.add(change));
    }

    /// Counts a span the exporter sent, or dropped.
    pub fn span(&self, result: SpanResult) {
        self.spans.with(&[result.name()], Counter::inc);
    }

    /// The exposition text `/metrics` answers (`text/plain; version=0.0.4`).
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        self.operations.write(&mut out);
        self.sessions_ended.write(&mut out);
        write_single(&mut out, "baremcp_http_connections", "Open connections.", &self.connections);
        write_single(&mut out, "baremcp_http_sessions", "Legacy sessions held.", &self.sessions);
        self.streams.write(&mut out);
        write_single(
            &mut out,
            "baremcp_http_queued_bytes",
            "Bytes of requests and client messages waiting for the dispatching loop.",
            &self.queued_bytes,
        );
        self.refusals.write(&mut out);
        self.spans.write(&mut out);
        out
    }
}

/// An open event stream, counted in `baremcp_http_streams` until dropped.
pub(crate) struct OpenStream<'m> {
    metrics: &'m ServerMetrics,
    kind: StreamKind,
}

impl Drop for OpenStream<'_> {
    fn drop(&mut self) {
        self.metrics.stream(self.kind, -1);
    }
}

/// What became of a span offered to the exporter: the `result` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpanResult {
    /// Accepted by the collector.
    Exported,
    /// Dropped because the exporter's queue was full (the collector is slow or down).
    QueueFull,
    /// Dropped because the collector could not be reached or refused the batch.
    ExportFailed,
}

impl SpanResult {
    const ALL: [SpanResult; 3] =
        [SpanResult::Exported, SpanResult::QueueFull, SpanResult::ExportFailed];

    fn name(self) -> &'static str {
        match self {
            SpanResult::Exported => "exported",
            SpanResult::QueueFull => "queue_full",
            SpanResult::ExportFailed => "export_failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_every_method_of_the_method_table() {
        let table = include_str!("../../dispatch/method_table.rs");
        let arms: Vec<&str> = table
            .lines()
            .filter_map(|line| line.trim().strip_prefix('"')?.split_once("\" =>").map(|(m, _)| m))
            .collect();
        assert!(arms.len() >= 18, "{arms:?}");
        for method in arms {
            assert!(METHODS.contains(&method), "{method} is not in METHODS");
        }
    }

    #[test]
    fn labels_operations_by_method_tool_and_error() {
        let metrics = ServerMetrics::new();
        let call = |tool, outcome| Operation { method: "tools/call", tool, outcome };
        for _ in 0..3 {
            metrics.observe(&call(Some("hello"), Outcome::Ok), 0.004);
        }
        metrics.observe(&call(Some("hello"), Outcome::ToolError), 0.03);
        metrics.observe(&call(None, Outcome::Error(-32602)), 0.5);
        metrics.observe(
            &Operation { method: "made/up", tool: Some("x"), outcome: Outcome::Error(-32601) },
            0.0,
        );
        metrics.observe(
            &Operation { method: "tools/list", tool: Some("x"), outcome: Outcome::Ok },
            400.0,
        );
        let text = metrics.render();
        let count = |labels: &str| {
            let prefix = format!("mcp_server_operation_duration_seconds_count{{{labels}}} ");
            text.lines().find_map(|l| l.strip_prefix(&prefix)).map(str::to_string)
        };
        assert_eq!(
            count(r#"mcp_method_name="tools/call",gen_ai_tool_name="hello""#).as_deref(),
            Some("3")
        );
        assert_eq!(
            count(
                r#"mcp_method_name="tools/call",gen_ai_tool_name="hello",error_type="tool_error""#
            )
            .as_deref(),
            Some("1")
        );
        assert_eq!(
            count(r#"mcp_method_name="tools/call",error_type="-32602""#).as_deref(),
            Some("1")
        );
        assert_eq!(count(r#"mcp_method_name="_OTHER",error_type="-32601""#).as_deref(), Some("1"));
        // A tool name on another method is not a label; 400 s is past every bound.
        assert_eq!(count(r#"mcp_method_name="tools/list""#).as_deref(), Some("1"));
        assert!(text.contains(
            "mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/list\",le=\"300\"} 0\n\
             mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/list\",le=\"+Inf\"} 1\n"
        ));
        assert!(text.contains(
            "mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"hello\",le=\"0.01\"} 3\n"
        ));
    }

    /// The whole exposition of a fresh server with a little traffic, byte for byte: what
    /// `promtool check metrics` and Prometheus read (tests/interop/metrics.sh).
    #[test]
    fn renders_the_golden_exposition() {
        let metrics = ServerMetrics::new();
        metrics.observe(
            &Operation { method: "tools/call", tool: Some("hello"), outcome: Outcome::Ok },
            0.015,
        );
        metrics.session_ended(42.0);
        metrics.connections.add(2);
        metrics.sessions.set(1);
        metrics.stream(StreamKind::Listen, 1);
        metrics.queued_bytes.add(512);
        metrics.refused(Refusal::Host);
        metrics.refused(Refusal::Host);
        metrics.span(SpanResult::QueueFull);
        let golden = include_str!("../../../fixtures/metrics/exposition.txt");
        let text = metrics.render();
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/metrics/exposition.txt");
            std::fs::write(path, &text).unwrap();
            return;
        }
        assert_eq!(
            text, golden,
            "the exposition changed: rerun with UPDATE_EXPECT=1 and read the diff"
        );
    }
}
