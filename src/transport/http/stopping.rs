//! Closing a server once its stop is due: no new connections, requests in flight get
//! [`DRAIN`] to finish. The dispatching loop closes it between messages; a watch thread does
//! it while a handler holds the loop, so a stop is never put off by a slow tool, and ends the
//! process when the tool outlives the drain (where the server owns the process's signals).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::transport::http::main_loop::TICK;
use crate::transport::http::readiness::Readiness;
use crate::transport::http::socket::Waker;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http";

/// How long requests in flight may take to finish once the server is closing.
pub const DRAIN: Duration = Duration::from_secs(10);

/// Past [`DRAIN`], how long the loop gets to end on its own before a watch that may end the
/// process does: its last tick, and the connection threads' last writes.
const GRACE: Duration = Duration::from_secs(1);

pub struct Closer {
    readiness: Arc<Readiness>,
    /// One per listener: what wakes its acceptor, blocked in `accept`, to see it must leave.
    wakers: Vec<Waker>,
    /// When the server began closing.
    began: OnceLock<Instant>,
}

impl Closer {
    pub fn new(readiness: Arc<Readiness>, wakers: Vec<Waker>) -> Closer {
        Closer { readiness, wakers, began: OnceLock::new() }
    }

    /// When the server began closing: now, when its stop is due ([`Readiness::drained`]) and
    /// it had not begun; `None` while it serves on. Either thread may be first; it happens
    /// once.
    pub fn close_if_due(&self) -> Option<Instant> {
        if let Some(began) = self.began.get() {
            return Some(*began);
        }
        if !self.readiness.drained() {
            return None;
        }
        Some(*self.began.get_or_init(|| {
            self.readiness.closing.store(true, Ordering::Relaxed);
            log::info!(target: LOG, "stopping: no new connections; finishing requests in flight");
            self.wakers.iter().for_each(Waker::wake);
            Instant::now()
        }))
    }

    /// Removes what the listeners leave behind (a unix socket's file).
    pub fn clean_up(&self) {
        self.wakers.iter().for_each(Waker::clean_up);
    }
}

/// The watch thread: every [`TICK`] until it is dropped, closes the server when its stop is
/// due. With `may_exit` (the server installed the signal handlers: the process is its own),
/// it ends the process when the loop is still on a handler [`DRAIN`] (and a grace) after the
/// close began: the connections still open are cut, as they would be at the end of a drain.
pub struct Watch {
    ended: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Watch {
    pub fn start(closer: Arc<Closer>, may_exit: bool) -> Watch {
        let ended = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = ended.clone();
        let watch = move || {
            let (lock, wake) = &*flag;
            let mut ended = lock.lock().unwrap_or_else(|e| e.into_inner());
            while !*ended {
                ended = wake.wait_timeout(ended, TICK).unwrap_or_else(|e| e.into_inner()).0;
                let Some(began) = closer.close_if_due() else { continue };
                if may_exit && !*ended && began.elapsed() >= DRAIN + GRACE {
                    log::warn!(
                        target: LOG,
                        "stopped with a request still running {}s after the stop: exiting",
                        (DRAIN + GRACE).as_secs(),
                    );
                    std::process::exit(0);
                }
            }
        };
        let thread = std::thread::Builder::new().name("http stop".into()).spawn(watch);
        if let Err(e) = &thread {
            log::warn!(target: LOG, "cannot start the stop's watch: a stop waits for handlers: {e}");
        }
        Watch { ended, thread: thread.ok() }
    }
}

/// The loop has ended (or unwinds): the watch ends too, at once.
impl Drop for Watch {
    fn drop(&mut self) {
        let (lock, wake) = &*self.ended;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
