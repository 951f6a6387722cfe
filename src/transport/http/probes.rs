//! The routes for operators beside the MCP endpoint, at fixed paths on every listener:
//! `/healthz` (the process answers), `/readyz` (send it requests: not draining, loop not
//! stalled) and `/metrics` (Prometheus text). The probes need no token and tell nothing but
//! their status: they are answered before the Host and Origin checks, since balancers and
//! orchestrators send a Host of their own; `/metrics` is guarded like the endpoint.

use crate::transport::http::main_loop::Inbound;
use crate::transport::http::readiness::{NotReady, Readiness};
use crate::transport::http::response::Response;
use crate::transport::telemetry::server_metrics::ServerMetrics;
use crate::util::queue::Sender;

pub const HEALTHZ: &str = "/healthz";
pub const READYZ: &str = "/readyz";
pub const METRICS: &str = "/metrics";

/// The Prometheus text format's media type.
const EXPOSITION: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether `path` is one of the probes: answered to anyone, logged at debug level only (a
/// balancer asks every second).
pub fn is_probe(path: &str) -> bool {
    path == HEALTHZ || path == READYZ
}

/// The answer of the probe at `path`, if it is one.
pub fn probe(path: &str, readiness: &Readiness) -> Option<Response> {
    let (status, body) = match path {
        HEALTHZ => (200, "ok\n"),
        READYZ => match readiness.ready() {
            Ok(()) => (200, "ready\n"),
            Err(NotReady::Draining) => (503, "draining\n"),
            Err(NotReady::Stalled) => (503, "stalled\n"),
        },
        _ => return None,
    };
    Some(text(status, "text/plain; charset=utf-8", body.into()))
}

/// `/metrics`: the exposition, with the loop's queue as it is now.
pub fn metrics(metrics: &ServerMetrics, queue: &Sender<Inbound>) -> Response {
    metrics.queued_bytes.set(queue.queued_bytes() as i64);
    text(200, EXPOSITION, metrics.render().into_bytes())
}

fn text(status: u16, media: &str, body: Vec<u8>) -> Response {
    let mut response = Response::new(status).header("Content-Type", media);
    // A probe's answer is about this moment: no cache may keep it.
    response.headers.push(("Cache-Control", "no-store".into()));
    response.body = body;
    response
}
