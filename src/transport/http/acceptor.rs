//! The acceptors: one thread per listening address takes connections and starts a thread for
//! each, refusing at once past the caps (every connection: 503; one peer's: 429). When
//! `accept` itself fails (the process is out of descriptors) it backs off instead of spinning,
//! logs once when that begins and once when it ends, and meanwhile answers each waiting
//! client 503 with a descriptor it keeps in reserve for that.

use std::net::{IpAddr, Shutdown};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::transport::http::exchange::{self, Shared, refusal};
use crate::transport::http::main_loop::error_body;
use crate::transport::http::parser::{Limits, Reader};
use crate::transport::http::peer_table::Kind;
use crate::transport::http::probes;
use crate::transport::http::response::Response;
use crate::transport::http::socket::{Listener, Socket, Stream};
use crate::transport::telemetry::server_metrics::Refusal;
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::ErrorObject;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http";

/// The first pause after `accept` fails, doubled at each failure in a row up to the last.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// Connections past `--max-connections` that may still ask `/healthz` or `/readyz`, on each
/// listening address: each waits [`PROBE_READ`] at most for its first byte and as long again
/// for the rest of its head (about a second in all), and is answered `503` unless it asked a
/// probe, so an orchestrator does not restart a process whose connections are all taken (by
/// slow or idle clients, say) while it still serves them.
const PROBE_SLOTS: usize = 4;
const PROBE_READ: Duration = Duration::from_millis(500);

/// Accepts connections until the server stops, each served on a thread of its own while
/// fewer than `cap` are open (on every listener: the `connections` gauge counts them).
pub fn accept(listener: Listener, shared: Arc<Shared>, cap: usize) {
    let mut reserve = spare();
    let probing = Arc::new(AtomicUsize::new(0));
    // While `accept` fails: how many times in a row, and the next pause.
    let mut failing: Option<(u64, Duration)> = None;
    loop {
        let accepted = listener.accept();
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let (stream, peer, ip) = match accepted {
            Ok(accepted) => accepted,
            // This one connection went wrong (reset before it was taken): the next may not.
            Err(e) if passing(&e) => continue,
            Err(e) => {
                let (times, pause) = failing.get_or_insert_with(|| {
                    log::warn!(target: LOG, "cannot accept connections: {e}; backing off");
                    (0, FIRST_PAUSE)
                });
                *times += 1;
                // The reserve is lost when another thread takes the descriptor it freed before
                // it is taken again: it is sought again at each failure, not only once
                // `accept` succeeds (until then, waiting clients would get no 503).
                reserve = reserve.or_else(spare);
                // Out of descriptors: one is freed to take the waiting client and tell it
                // 503, rather than leave it in the backlog; then taken again.
                if out_of_descriptors(&e)
                    && let Some(freed) = reserve.take()
                {
                    drop(freed);
                    let taken = listener.accept();
                    if let Ok((stream, ..)) = taken {
                        shared.metrics.refused(Refusal::ConnectionLimit);
                        refuse(stream, refusal(503, "out of file descriptors"), "1");
                    }
                    if shared.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    reserve = spare();
                    if reserve.is_some() {
                        continue;
                    }
                }
                std::thread::sleep(*pause);
                *pause = (*pause * 2).min(LONGEST_PAUSE);
                continue;
            }
        };
        if let Some((times, _)) = failing.take() {
            log::warn!(target: LOG, "accepting connections again, after {times} failed accept(s)");
            reserve = reserve.or_else(spare);
        }
        admit(stream, peer, ip, &shared, cap, &probing);
    }
}

/// Starts a thread serving `stream`, or refuses it when `cap` connections are open (503, but
/// for a probe: see [`PROBE_SLOTS`]) or its peer holds `--max-connections-per-peer` (429).
fn admit(
    stream: Stream,
    peer: String,
    ip: Option<IpAddr>,
    shared: &Arc<Shared>,
    cap: usize,
    probing: &Arc<AtomicUsize>,
) {
    let live = &shared.metrics.connections;
    if live.get() >= cap as i64 {
        let slot = Taken(probing.clone());
        if probing.fetch_add(1, Ordering::Relaxed) >= PROBE_SLOTS {
            drop(slot);
            // Nothing read yet, so not known to be a HEAD.
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            return at_capacity(Socket::new(stream), &peer, shared, cap, false);
        }
        let shared = shared.clone();
        // Given back however the thread ends, or when it cannot start (the closure is dropped,
        // and the connection closed with it).
        let spawned = std::thread::Builder::new()
            .name(format!("http probe {peer}"))
            .stack_size(128 * 1024)
            .spawn(move || {
                let _slot = slot;
                probe_or_refuse(stream, &peer, &shared, cap);
            });
        if let Err(e) = spawned {
            log::error!(target: LOG, "cannot start a thread to read a probe: {e}");
        }
        return;
    }
    let slot = match shared.peers.open(ip, Kind::Connection) {
        Ok(slot) => slot,
        Err(most) => {
            shared.metrics.refused(Refusal::PeerLimit);
            log::warn!(
                target: LOG,
                "{peer} refused: {most} connections open from its address (--max-connections-per-peer)",
            );
            return refuse(stream, refusal(429, "too many connections from this address"), "5");
        }
    };
    live.add(1);
    // Counted down however the thread ends, or when it cannot start (the closure is dropped).
    let leave = Leave(shared.clone());
    let name = peer.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("http {peer}"))
        .stack_size(512 * 1024)
        .spawn(move || {
            let _slot = slot;
            exchange::serve(leave.0.clone(), stream, name, ip);
        });
    if let Err(e) = spawned {
        log::error!(target: LOG, "{peer}: cannot start a connection thread: {e}");
    }
}

/// Past the cap: answers a probe read within [`PROBE_READ`], refuses anything else.
fn probe_or_refuse(stream: Stream, peer: &str, shared: &Shared, cap: usize) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let mut socket = Socket::new(stream);
    let mut reader = Reader::new(socket.clone());
    let limits = Limits { max_body: 0, deadline: PROBE_READ, idle: PROBE_READ };
    let asked = reader.head(&limits, &shared.stop).ok().and_then(|head| {
        let answer = probes::probe(head.path(), &shared.readiness).filter(|_| head.is_read())?;
        Some((head, answer))
    });
    match asked {
        Some((head, mut answer)) => {
            answer.head_only = reader.head_request;
            let _ = answer.closing().write(&mut socket, head.minor, 0);
            socket.shutdown(Shutdown::Write);
        }
        None => at_capacity(socket, peer, shared, cap, reader.head_request),
    }
}

/// Refuses a connection past `--max-connections`; `head_only` when it asked with `HEAD`.
fn at_capacity(socket: Socket, peer: &str, shared: &Shared, cap: usize, head_only: bool) {
    shared.metrics.refused(Refusal::ConnectionLimit);
    log::warn!(target: LOG, "{peer} refused: {cap} connections open (--max-connections)");
    let error = ErrorObject::new(ErrorCode::AT_CAPACITY, "too many connections");
    let mut response = Response::json(503, error_body(None, error));
    response.head_only = head_only;
    refuse_on(socket, response, "1");
}

/// A probe slot past the cap, given back when dropped.
struct Taken(Arc<AtomicUsize>);

impl Drop for Taken {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection's place in the `connections` gauge, given up when dropped.
struct Leave(Arc<Shared>);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.metrics.connections.add(-1);
    }
}

/// Answers `response` (with `Retry-After: retry`) and closes, without a thread: a client that
/// does not read gets a second at most.
fn refuse(stream: Stream, response: Response, retry: &str) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    refuse_on(Socket::new(stream), response, retry);
}

fn refuse_on(mut socket: Socket, response: Response, retry: &str) {
    let _ = response.header("Retry-After", retry).closing().write(&mut socket, 1, 0);
    socket.shutdown(Shutdown::Write);
}

/// Whether an `accept` error concerns only the connection it was taking.
fn passing(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionAborted | ConnectionReset | Interrupted | WouldBlock)
}

/// EMFILE or ENFILE (the same numbers on Linux, the BSDs and macOS).
fn out_of_descriptors(e: &std::io::Error) -> bool {
    cfg!(unix) && matches!(e.raw_os_error(), Some(23 | 24))
}

/// A descriptor kept in reserve for [`accept`] to free when it runs out.
fn spare() -> Option<std::fs::File> {
    if cfg!(unix) { std::fs::File::open("/dev/null").ok() } else { None }
}
