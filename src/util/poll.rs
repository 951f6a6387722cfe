//! Waiting for a descriptor to become readable, with a timeout (`poll(2)`): how a
//! single-threaded loop that would block in `read` wakes up now and then, and how an HTTP
//! connection thread waits on its socket and a wake-up at once.

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
    const POLLIN: i16 = 1;
    ready_within(fd, POLLIN, timeout)
}

/// Waits until `fd` (a pipe's writing end) has room, so that a write of at most 4 KiB does
/// not block (or its reader is gone, for the write to report), or `timeout` passes; false
/// when it passed. How a thread feeding a command's input can stop when nobody reads it.
#[cfg(unix)]
pub fn writable_within(fd: RawFd, timeout: Duration) -> bool {
    const POLLOUT: i16 = 4;
    ready_within(fd, POLLOUT, timeout)
}

/// Whether `fd` became ready for `events` within `timeout`.
#[cfg(unix)]
fn ready_within(fd: RawFd, events: i16, timeout: Duration) -> bool {
    match poll_one(fd, events, timeout) {
        Ok(revents) => revents != 0,
        // Interrupted by a signal: as if the time had passed; the caller simply waits again
        // (a write begun now might block for good).
        Err(e) => e.kind() != io::ErrorKind::Interrupted,
    }
}

/// Whether the peer of socket `fd` has shut down its sending side or the connection failed,
/// looking without reading or waiting. Unlike a one-byte peek it sees the end behind bytes
/// sent before it (a stray line break, say), which a peek reads as a peer still there.
#[cfg(target_os = "linux")]
pub fn hung_up(fd: RawFd) -> bool {
    // Linux's values: POLLRDHUP is the peer's shutdown of writing, with data still unread.
    const POLLERR: i16 = 0x8;
    const POLLHUP: i16 = 0x10;
    const POLLRDHUP: i16 = 0x2000;
    poll_one(fd, POLLRDHUP, Duration::ZERO)
        .is_ok_and(|revents| revents & (POLLRDHUP | POLLHUP | POLLERR) != 0)
}

/// Waits until socket `socket` has input or its peer left (or failed), or `wake` is readable,
/// or `timeout` passes: whether each happened (both false when the time passed; the socket's
/// when `poll` failed). How a connection thread sleeps while the dispatching loop may answer
/// on its own.
#[cfg(target_os = "linux")]
pub fn either_within(socket: RawFd, wake: RawFd, timeout: Duration) -> (bool, bool) {
    const POLLIN: i16 = 1;
    const POLLRDHUP: i16 = 0x2000;
    let mut fds = [PollFd::new(socket, POLLIN | POLLRDHUP), PollFd::new(wake, POLLIN)];
    match poll_fds(&mut fds, timeout) {
        // POLLERR and POLLHUP are reported whether asked for or not.
        Ok(()) => (fds[0].revents != 0, fds[1].revents != 0),
        // Interrupted, or worse: as if the socket woke, so its caller looks (and, should the
        // error last, does not spin here).
        Err(_) => (true, false),
    }
}

/// One descriptor `poll(2)` watches, as the C library lays it out.
#[cfg(unix)]
#[repr(C)]
struct PollFd {
    fd: i32,
    events: i16,
    revents: i16,
}

#[cfg(unix)]
impl PollFd {
    fn new(fd: RawFd, events: i16) -> PollFd {
        PollFd { fd, events, revents: 0 }
    }
}

/// `poll(2)` on one descriptor: the events that happened (none when `timeout` passed).
#[cfg(unix)]
fn poll_one(fd: RawFd, events: i16, timeout: Duration) -> io::Result<i16> {
    let mut watched = [PollFd::new(fd, events)];
    poll_fds(&mut watched, timeout).map(|()| watched[0].revents)
}

/// `poll(2)` on `fds`, for `timeout` at most (in whole milliseconds, a longer one capped).
#[cfg(unix)]
fn poll_fds(fds: &mut [PollFd], timeout: Duration) -> io::Result<()> {
    unsafe extern "C" {
        fn poll(fds: *mut PollFd, count: std::ffi::c_ulong, timeout_ms: i32) -> i32;
    }
    let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `poll` reads and writes exactly the `fds.len()` entries it is given, which
    // the caller's slice holds for the whole call.
    match unsafe { poll(fds.as_mut_ptr(), fds.len() as std::ffi::c_ulong, timeout_ms) } {
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

/// Without `poll`, a write is always tried (and may block).
#[cfg(not(unix))]
pub fn writable_within(_fd: RawFd, _timeout: Duration) -> bool {
    true
}

/// Without `poll`, a read is always worth trying: callers then block in it, and a server
/// looks at watched files only before each wait (see docs/install.md, Platforms).
#[cfg(not(unix))]
pub fn readable_within(_fd: RawFd, _timeout: Duration) -> bool {
    true
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::time::Instant;

    extern "C" fn nothing(_signal: i32) {}

    /// A signal while a thread waits for room in a full pipe is no room: a write begun then
    /// would block.
    #[test]
    fn an_interrupted_wait_for_room_is_no_room() {
        unsafe extern "C" {
            fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
            fn pthread_self() -> usize;
            fn pthread_kill(thread: usize, signal: i32) -> i32;
        }
        const SIGUSR2: i32 = 12;
        // SAFETY: the handler does nothing; SIGUSR2 is this test's alone.
        unsafe { signal(SIGUSR2, nothing) };
        let (_reader, mut writer) = std::io::pipe().unwrap();
        let fd = writer.as_raw_fd();
        while writable_within(fd, Duration::ZERO) {
            writer.write_all(&[0; 4096]).unwrap();
        }
        let (send, thread) = std::sync::mpsc::channel();
        let waiting = std::thread::spawn(move || {
            // SAFETY: takes nothing, names the calling thread.
            send.send(unsafe { pthread_self() }).unwrap();
            writable_within(fd, Duration::from_secs(2))
        });
        let thread = thread.recv().unwrap();
        let started = Instant::now();
        while !waiting.is_finished() && started.elapsed() < Duration::from_secs(5) {
            // SAFETY: the thread is alive until `waiting` is finished; the signal is caught.
            unsafe { pthread_kill(thread, SIGUSR2) };
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!waiting.join().unwrap(), "an interrupted wait was taken for room");
    }
}
