//! Where a server is in its life: serving, draining (after SIGTERM: `/readyz` answers 503
//! while the listeners serve `--drain-secs` more), or closing (no new connections; requests
//! in flight finish); and whether the dispatching loop is stalled, held on one message longer
//! than `--ready-stall-secs`. Connection threads read it for `/readyz` without waiting on the
//! loop, so the answer comes even while a handler holds it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::transport::http::signals;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http";

pub struct Readiness {
    /// The embedder's flag (`serve_http_on`): close without a drain.
    stop: Arc<AtomicBool>,
    /// Set when the server closes: acceptors leave, connections finish their request and
    /// close, a handler waiting on its client gives up.
    pub closing: Arc<AtomicBool>,
    epoch: Instant,
    drain: Duration,
    /// When the drain began: milliseconds since `epoch`, plus one; 0 before it did.
    drain_began: AtomicU64,
    stall: Duration,
    /// When the loop took the message it is on: milliseconds since `epoch`, plus one; 0
    /// while it waits for work (an idle loop is ready however long it waits).
    busy_since: AtomicU64,
}

/// Why `/readyz` answers 503.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotReady {
    /// A stop was asked: new requests should go to another process.
    Draining,
    /// The loop has been on one message longer than `--ready-stall-secs`.
    Stalled,
}

impl Readiness {
    pub fn new(stop: Arc<AtomicBool>, drain: Duration, stall: Duration) -> Readiness {
        Readiness {
            stop,
            closing: Arc::new(AtomicBool::new(false)),
            epoch: Instant::now(),
            drain,
            drain_began: AtomicU64::new(0),
            stall,
            busy_since: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64 + 1
    }

    /// What `/readyz` answers: ready, or why not.
    pub fn ready(&self) -> Result<(), NotReady> {
        if self.stop_asked() {
            return Err(NotReady::Draining);
        }
        if self.busy_for() > self.stall {
            return Err(NotReady::Stalled);
        }
        Ok(())
    }

    /// Whether a stop was asked, by a signal or the embedder's flag, or is under way.
    pub fn stop_asked(&self) -> bool {
        signals::signalled() || self.stop.load(Relaxed) || self.closing.load(Relaxed)
    }

    /// Whether the server should close now: the embedder asked, the drain that followed
    /// SIGTERM is over, or the signal skips the drain (SIGINT, or a second signal). The
    /// drain begins (and is logged) at the first call that sees the signal.
    pub fn drained(&self) -> bool {
        if self.stop.load(Relaxed) || self.closing.load(Relaxed) || signals::drain_skipped() {
            return true;
        }
        if !signals::signalled() {
            return false;
        }
        let now = self.now();
        let began = match self.drain_began.compare_exchange(0, now, Relaxed, Relaxed) {
            Ok(_) => {
                let secs = self.drain.as_secs();
                // `--drain-secs 0`: no drain to speak of; the stop's own line follows.
                if secs > 0 {
                    log::info!(
                        target: LOG,
                        "draining: /readyz answers 503; serving {secs}s more (SIGINT or a \
                         second SIGTERM: stop now)",
                    );
                }
                now
            }
            Err(began) => began,
        };
        now - began >= self.drain.as_millis() as u64
    }

    /// The loop took a message.
    pub fn busy(&self) {
        self.busy_since.store(self.now(), Relaxed);
    }

    /// How long the loop has been on its message (zero while it waits for work).
    pub fn busy_for(&self) -> Duration {
        let since = self.busy_since.load(Relaxed);
        Duration::from_millis(if since == 0 { 0 } else { self.now().saturating_sub(since) })
    }

    /// The loop is done with its message.
    pub fn idle(&self) {
        self.busy_since.store(0, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_busy_past_the_stall_is_not_ready_and_an_idle_one_is() {
        let readiness = Readiness::new(
            Arc::new(AtomicBool::new(false)),
            Duration::ZERO,
            Duration::from_millis(20),
        );
        assert_eq!(readiness.ready(), Ok(()));
        readiness.busy();
        assert_eq!(readiness.ready(), Ok(()));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(readiness.ready(), Err(NotReady::Stalled));
        readiness.idle();
        assert_eq!(readiness.ready(), Ok(()));
    }

    #[test]
    fn the_embedder_s_stop_closes_at_once() {
        let stop = Arc::new(AtomicBool::new(false));
        let readiness =
            Readiness::new(stop.clone(), Duration::from_secs(60), Duration::from_secs(60));
        assert!(!readiness.drained() || signals::signalled());
        stop.store(true, Relaxed);
        assert_eq!(readiness.ready(), Err(NotReady::Draining));
        assert!(readiness.drained());
    }
}
