//! Waiting for a descriptor to become readable, with a timeout (`poll(2)`): how a
//! single-threaded loop that would block in `read` wakes up now and then.

#[cfg(unix)]
use std::io;
/// A descriptor `readable_within` can wait on.
#[cfg(unix)]
pub use std::os::fd::RawFd;
/// Elsewhere there is no `poll` on a pipe: nothing is ever waited on (see `readable_within`).
#[cfg(not(unix))]
pub type RawFd = i32;
use std::time::Duration;

/// Waits until reading `fd` would not block (input, end of input, or an error for the read to
/// report) or `timeout` passes; false when it passed. With this, a loop that would otherwise
/// block in `read` wakes up now and then while staying on one thread (the serving loop on
/// stdin, for watched files; `baremcp proxy` on its upstream's output, to notice its exit).
#[cfg(unix)]
pub fn readable_within(fd: RawFd, timeout: Duration) -> bool {
    #[repr(C)]
    struct PollFd {
        fd: i32,
        events: i16,
        revents: i16,
    }
    unsafe extern "C" {
        fn poll(fds: *mut PollFd, count: std::ffi::c_ulong, timeout_ms: i32) -> i32;
    }
    const POLLIN: i16 = 1;
    let mut watched = PollFd { fd, events: POLLIN, revents: 0 };
    let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `poll` reads and writes exactly the one `PollFd` it is given, which lives on
    // this stack frame for the whole call.
    match unsafe { poll(&mut watched, 1, timeout_ms) } {
        0 => false,
        // Interrupted by a signal: as if the time had passed; the caller simply waits again.
        -1 => io::Error::last_os_error().kind() != io::ErrorKind::Interrupted,
        _ => true,
    }
}

/// Without `poll`, a read is always worth trying: callers then block in it, and a server
/// looks at watched files only before each wait (see README, Platforms).
#[cfg(not(unix))]
pub fn readable_within(_fd: RawFd, _timeout: Duration) -> bool {
    true
}
