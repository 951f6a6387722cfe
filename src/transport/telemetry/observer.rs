//! What the dispatching loop records of each request it answers: its duration in the
//! operation histogram, labelled by method, registered tool and error; and, with an OTLP
//! exporter, a server span joining the caller's trace. Nothing is allocated for the metrics
//! once a label set exists, and the wall clock is read only for a span.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::dispatch::request::Request;
use crate::dispatch::serve_line::Served;
use crate::transport::telemetry::otlp::{Exporter, Span, SpanIds};
use crate::transport::telemetry::server_metrics::{Operation, Outcome, ServerMetrics};
use crate::util::trace_context::TraceContext;
use crate::wire::era;
use crate::wire::jsonrpc::{Id, Reply};
use crate::wire::params::ParamsField;

/// How a request reached the loop: when its connection thread had read it, the trace context
/// of its HTTP `traceparent` header (the fallback when `_meta` carries none), and the
/// transport (`tcp` or `unix`).
pub(crate) struct Arrival {
    pub received: Instant,
    pub trace: Option<TraceContext>,
    pub transport: &'static str,
}

/// The loop's recorder: the shared metrics, and the span exporter (with the ids it gives
/// spans) when there is one.
pub(crate) struct Observer {
    pub metrics: Arc<ServerMetrics>,
    exporter: Option<(Exporter, SpanIds)>,
}

/// How long the exporter gets at shutdown to send what is queued.
const EXPORT_AT_EXIT: Duration = Duration::from_secs(2);

impl Observer {
    pub fn new(metrics: Arc<ServerMetrics>, exporter: Option<Exporter>) -> Observer {
        Observer { metrics, exporter: exporter.map(|exporter| (exporter, SpanIds::new())) }
    }

    /// Records a request answered: `session` is how logs name its legacy session.
    pub fn served(&mut self, served: &Served, arrival: &Arrival, session: Option<&str>) {
        let took = arrival.received.elapsed();
        let outcome = match (served.reply, served.tool) {
            (Err(error), _) => Outcome::Error(error.code.0),
            (Ok(_), Some((_, true))) => Outcome::ToolError,
            (Ok(_), _) => Outcome::Ok,
        };
        let tool = served.tool.map(|(name, _)| name);
        let operation = Operation { method: served.method, tool, outcome };
        self.metrics.observe(&operation, took.as_secs_f64());
        if let Some((exporter, ids)) = &mut self.exporter {
            exporter.offer(span(ids, served, arrival, session, outcome, took));
        }
    }

    /// Records a `subscriptions/listen` stream as it ends, `reply` ending it: its
    /// `baremcp::request` line, its duration (how long it was open) and its span, once, as
    /// every request is recorded when answered. `arrival.trace` is its trace context, `_meta`'s
    /// or the header's.
    pub fn listen_ended(
        &mut self,
        id: &Id,
        arrival: &Arrival,
        version: Option<&str>,
        reply: &Reply,
    ) {
        let method = "subscriptions/listen";
        if Request::logged()
            && let Ok(request) = Request::new(id, method, &ParamsField::Absent)
        {
            let micros = arrival.received.elapsed().as_micros();
            request.log_completion(reply, micros, arrival.trace.as_ref());
        }
        // Its `_meta` was read when it opened: the trace context in `arrival` and `version`
        // are what count.
        let served = Served { method, id, tool: None, version, meta: None, reply };
        self.served(&served, arrival, None);
    }

    /// Records a client notification the loop took in, `took` after it began on it.
    pub fn notified(&self, method: &str, took: Duration) {
        let operation = Operation { method, tool: None, outcome: Outcome::Ok };
        self.metrics.observe(&operation, took.as_secs_f64());
    }

    /// Gives the exporter a moment to send what is queued.
    pub fn finish(self) {
        if let Some((exporter, _)) = self.exporter {
            exporter.finish(EXPORT_AT_EXIT);
        }
    }
}

/// The request's server span, with the MCP semantic conventions' attributes.
fn span(
    ids: &mut SpanIds,
    served: &Served,
    arrival: &Arrival,
    session: Option<&str>,
    outcome: Outcome,
    took: Duration,
) -> Span {
    let from_meta = era::trace_context(served.meta);
    let caller = from_meta.as_ref().or(arrival.trace.as_ref());
    let end = SystemTime::now();
    let start = end.checked_sub(took).unwrap_or(end);
    let tool = served.tool.map(|(name, _)| name);
    let raw_id = served.id.to_string();
    // A string id is the string, not its JSON text.
    let id = serde_json::from_str::<String>(&raw_id).unwrap_or(raw_id);
    let mut span = Span::server(ids, served.method, tool, caller, start, end)
        .attr("jsonrpc.request.id", id.as_str())
        .attr("network.transport", arrival.transport);
    if let Some(tool) = tool {
        span = span.attr("gen_ai.tool.name", tool).attr("gen_ai.operation.name", "execute_tool");
    }
    if let Some(version) = served.version {
        span = span.attr("mcp.protocol.version", version);
    }
    // Only the part of a session id that logs show: the rest lets its holder use it.
    if let Some(session) = session {
        span = span.attr("mcp.session.id", session);
    }
    match (outcome, served.reply) {
        (Outcome::Error(code), Err(error)) => span.failed(&code.to_string(), &error.message),
        (Outcome::ToolError, _) => span.failed("tool_error", "the tool's result is an error"),
        _ => span,
    }
}
