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
/// signal handler may safely do. A stop signal the process was started ignoring (SIGINT in a
/// shell script's background job) stays ignored, as a program's default action would; SIGHUP
/// is caught all the same (under `nohup`, a reload is what it asks). Elsewhere (Windows)
/// Ctrl-C ends the process as before.
#[cfg(unix)]
pub fn install_signal_handlers() {
    unsafe extern "C" {
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    }
    const SIGHUP: i32 = 1;
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;
    for (number, handler) in [(SIGTERM, on_term as extern "C" fn(i32)), (SIGINT, on_interrupt)] {
        if !ignored(number) {
            // SAFETY: `signal` installs a handler, which only adds to or stores into a static
            // lock-free atomic, which is async-signal-safe.
            unsafe { signal(number, handler) };
        }
    }
    // SAFETY: as above.
    unsafe { signal(SIGHUP, on_hangup) };
}

/// Whether signal `number` is ignored (`SIG_IGN`), asked of `sigaction` without changing it.
#[cfg(unix)]
pub fn ignored(number: i32) -> bool {
    unsafe extern "C" {
        fn sigaction(signum: i32, action: *const u8, old: *mut usize) -> i32;
    }
    const SIG_IGN: usize = 1;
    // Room for any `struct sigaction` (152 bytes with glibc or musl, 16 on macOS); its
    // handler comes first on every target this builds for.
    let mut old = [0usize; 32];
    // SAFETY: a null action changes nothing; the old one is written into `old`, which is
    // larger than the C library's struct and aligned for its pointer-sized first member.
    let asked = unsafe { sigaction(number, std::ptr::null(), old.as_mut_ptr()) };
    asked == 0 && old[0] == SIG_IGN
}

#[cfg(not(unix))]
pub fn install_signal_handlers() {}
