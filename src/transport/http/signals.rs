//! Signals: SIGTERM drains every server in the process before it stops, SIGINT stops it at
//! once (gracefully), SIGHUP has the token file and the key set read again. The handlers only
//! add to or store into these two atomics, the process's only global state: a signal handler
//! can reach nothing else safely.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Added to by the stop signals: 1 for each SIGTERM, 2 for each SIGINT. Any count asks every
/// server in the process to stop; 2 or more (a SIGINT, or a second signal) asks it to skip
/// what is left of its drain.
static SIGNALS: AtomicU32 = AtomicU32::new(0);

/// Whether SIGTERM or SIGINT arrived.
pub fn signalled() -> bool {
    SIGNALS.load(Ordering::Relaxed) > 0
}

/// Whether the stop asked for skips the drain: SIGINT (someone at a terminal), or a second
/// signal while draining.
pub fn drain_skipped() -> bool {
    SIGNALS.load(Ordering::Relaxed) >= 2
}

/// Forgets a stop signalled to an earlier server of this process.
pub fn forget_stop() {
    SIGNALS.store(0, Ordering::Relaxed);
}

/// Set by SIGHUP: the token file and the key set are read again on the next request.
pub static RELOAD: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn on_term(_signal: i32) {
    SIGNALS.fetch_add(1, Ordering::Relaxed);
}

#[cfg(unix)]
extern "C" fn on_interrupt(_signal: i32) {
    SIGNALS.fetch_add(2, Ordering::Relaxed);
}

#[cfg(unix)]
extern "C" fn on_hangup(_signal: i32) {
    RELOAD.store(true, Ordering::Relaxed);
}

/// SIGTERM drains then stops the server, SIGINT stops it without the drain; SIGHUP re-reads
/// the token file and the key set. The handlers only touch a lock-free atomic, which is all a
/// signal handler may safely do. Elsewhere (Windows) Ctrl-C ends the process as before.
#[cfg(unix)]
pub fn install_signal_handlers() {
    unsafe extern "C" {
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    }
    const SIGHUP: i32 = 1;
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;
    // SAFETY: `signal` installs a handler; each handler only adds to or stores into a static
    // lock-free atomic, which is async-signal-safe.
    unsafe {
        signal(SIGTERM, on_term);
        signal(SIGINT, on_interrupt);
        signal(SIGHUP, on_hangup);
    }
}

#[cfg(not(unix))]
pub fn install_signal_handlers() {}
