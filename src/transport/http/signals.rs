//! Signals: SIGTERM and SIGINT stop every server in the process gracefully, SIGHUP has the
//! token file and the key set read again. The handlers only store to these two atomics, the
//! process's only global state: a signal handler can reach nothing else safely.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGTERM and SIGINT: every server in the process stops.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Whether the server is stopping: `stop` set, or a signal arrived that the loop has not
/// seen yet (it may be inside a handler that waits on its client).
pub fn stopping(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed) || signalled()
}

/// Whether SIGTERM or SIGINT arrived.
pub fn signalled() -> bool {
    SIGNALLED.load(Ordering::Relaxed)
}

/// Forgets a stop signalled to an earlier server of this process.
pub fn forget_stop() {
    SIGNALLED.store(false, Ordering::Relaxed);
}

/// Set by SIGHUP: the token file and the key set are read again on the next request.
pub static RELOAD: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn on_stop(_signal: i32) {
    SIGNALLED.store(true, Ordering::Relaxed);
}

#[cfg(unix)]
extern "C" fn on_hangup(_signal: i32) {
    RELOAD.store(true, Ordering::Relaxed);
}

/// SIGTERM and SIGINT stop the server gracefully; SIGHUP re-reads the token file and the key
/// set. The handlers only store to an atomic, which is all a signal handler may safely do.
/// Elsewhere (Windows) Ctrl-C ends the process as before.
#[cfg(unix)]
pub fn install_signal_handlers() {
    unsafe extern "C" {
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    }
    const SIGHUP: i32 = 1;
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;
    // SAFETY: `signal` installs a handler; both handlers only store to a static atomic,
    // which is async-signal-safe.
    unsafe {
        signal(SIGTERM, on_stop);
        signal(SIGINT, on_stop);
        signal(SIGHUP, on_hangup);
    }
}

#[cfg(not(unix))]
pub fn install_signal_handlers() {}
