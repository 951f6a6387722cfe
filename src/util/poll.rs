//! Waiting for a descriptor to become readable, with a timeout (`poll(2)`): how a
//! single-threaded loop that would block in `read` wakes up now and then, and how an HTTP
//! connection thread waits on its socket and a wake-up at once. On Linux, `Epoll`: how the
//! HTTP dispatching loop waits on many parked connections and its queue at once, and
//! `ticker`, which wakes it now and then without a timeout on each wait.

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

/// An `epoll(7)` set of descriptors, each watched for input (level-triggered: a descriptor
/// with unread input is reported at every wait) and its peer's leaving.
#[cfg(target_os = "linux")]
pub struct Epoll(std::os::fd::OwnedFd);

/// `struct epoll_event` as x86_64 lays it out (packed there, for the 32-bit ABI's sake);
/// other architectures align `data` naturally.
#[cfg(target_os = "linux")]
#[cfg_attr(target_arch = "x86_64", repr(C, packed))]
#[cfg_attr(not(target_arch = "x86_64"), repr(C))]
#[derive(Clone, Copy)]
struct EpollEvent {
    events: u32,
    data: u64,
}

#[cfg(target_os = "linux")]
unsafe extern "C" {
    fn epoll_create1(flags: i32) -> i32;
    fn epoll_ctl(epfd: i32, op: i32, fd: i32, event: *mut EpollEvent) -> i32;
    fn epoll_wait(epfd: i32, events: *mut EpollEvent, max: i32, timeout_ms: i32) -> i32;
}

#[cfg(target_os = "linux")]
impl Epoll {
    /// A new, empty set (close-on-exec).
    pub fn new() -> io::Result<Epoll> {
        use std::os::fd::FromRawFd;
        const EPOLL_CLOEXEC: i32 = 0o2_000_000;
        // SAFETY: takes no pointers; a descriptor it returns is new and ours alone.
        let fd = unsafe { epoll_create1(EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(Epoll(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }))
    }

    /// Watches `fd` for input and hang-ups (an `eventfd`, a socket).
    pub fn add(&self, fd: RawFd) -> io::Result<()> {
        const EPOLLIN: u32 = 0x1;
        const EPOLLRDHUP: u32 = 0x2000;
        const EPOLL_CTL_ADD: i32 = 1;
        self.control(EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLRDHUP)
    }

    /// Stops watching `fd`.
    pub fn remove(&self, fd: RawFd) -> io::Result<()> {
        const EPOLL_CTL_DEL: i32 = 2;
        self.control(EPOLL_CTL_DEL, fd, 0)
    }

    fn control(&self, op: i32, fd: RawFd, events: u32) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let mut event = EpollEvent { events, data: fd as u64 };
        // SAFETY: `event` is valid for the call (the kernel copies it); the set is ours.
        match unsafe { epoll_ctl(self.0.as_raw_fd(), op, fd, &mut event) } {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// Waits up to `timeout` (whole milliseconds; `None`: until one is) for watched
    /// descriptors to be ready, and puts them in `ready` (emptied first; at most 64 a wait).
    /// A signal ends the wait early.
    pub fn wait(&self, ready: &mut Vec<RawFd>, timeout: Option<Duration>) {
        use std::os::fd::AsRawFd;
        const MOST: usize = 64;
        ready.clear();
        let mut events = [EpollEvent { events: 0, data: 0 }; MOST];
        let timeout_ms = timeout.map_or(-1, |t| i32::try_from(t.as_millis()).unwrap_or(i32::MAX));
        // SAFETY: the kernel writes at most `MOST` entries into `events`, which holds as many
        // for the whole call.
        let n =
            unsafe { epoll_wait(self.0.as_raw_fd(), events.as_mut_ptr(), MOST as i32, timeout_ms) };
        for event in &events[..usize::try_from(n).unwrap_or(0)] {
            let data = event.data;
            ready.push(data as RawFd);
        }
    }
}

/// A `timerfd(2)` ready `period` from now and every `period` after (close-on-exec; `period`
/// is not zero, which would disarm it), read like an `eventfd`: 8 bytes, a count, and not
/// ready again until the next. An [`Epoll`] that watches it wakes that often, so that its
/// waits need no timeout: a wait with one arms a kernel timer each time it sleeps, which a
/// loop sleeping between every two calls pays on every call (a microsecond here).
#[cfg(target_os = "linux")]
pub fn ticker(period: Duration) -> io::Result<std::fs::File> {
    use std::ffi::c_long;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    /// `struct timespec` and `struct itimerspec` (`time_t` is a `long` for this call).
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Timespec(c_long, c_long);
    #[repr(C)]
    struct Itimerspec(Timespec, Timespec);
    unsafe extern "C" {
        fn timerfd_create(clock: i32, flags: i32) -> i32;
        fn timerfd_settime(
            fd: i32,
            flags: i32,
            new: *const Itimerspec,
            old: *mut Itimerspec,
        ) -> i32;
    }
    const CLOCK_MONOTONIC: i32 = 1;
    const TFD_CLOEXEC: i32 = 0o2_000_000;
    // SAFETY: takes no pointers; a descriptor it returns is new and ours alone.
    let fd = unsafe { timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let secs = c_long::try_from(period.as_secs()).unwrap_or(c_long::MAX);
    // Below a billion: a `long` anywhere.
    let every = Timespec(secs, period.subsec_nanos() as c_long);
    let spec = Itimerspec(every, every);
    // SAFETY: the kernel only reads `spec`, which lives through the call; no old value is
    // asked for (a null pointer).
    match unsafe { timerfd_settime(file.as_raw_fd(), 0, &spec, std::ptr::null_mut()) } {
        0 => Ok(file),
        _ => Err(io::Error::last_os_error()),
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

    #[test]
    fn an_epoll_set_reports_what_has_input_until_it_is_read_or_removed() {
        use std::io::Read;
        use std::os::unix::net::UnixStream;
        let epoll = Epoll::new().unwrap();
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let (c, _d) = UnixStream::pair().unwrap();
        epoll.add(a.as_raw_fd()).unwrap();
        epoll.add(c.as_raw_fd()).unwrap();
        let mut ready = vec![99];
        let started = Instant::now();
        epoll.wait(&mut ready, Some(Duration::from_millis(50)));
        assert!(ready.is_empty() && started.elapsed() >= Duration::from_millis(40));
        b.write_all(b"x").unwrap();
        epoll.wait(&mut ready, Some(Duration::from_secs(5)));
        assert_eq!(ready, [a.as_raw_fd()]);
        // Level-triggered: still there until read.
        epoll.wait(&mut ready, Some(Duration::ZERO));
        assert_eq!(ready, [a.as_raw_fd()]);
        a.read_exact(&mut [0]).unwrap();
        epoll.wait(&mut ready, Some(Duration::ZERO));
        assert!(ready.is_empty());
        // A peer that leaves is reported; a removed descriptor is not.
        drop(b);
        epoll.wait(&mut ready, Some(Duration::from_secs(5)));
        assert_eq!(ready, [a.as_raw_fd()]);
        epoll.remove(a.as_raw_fd()).unwrap();
        epoll.wait(&mut ready, Some(Duration::ZERO));
        assert!(ready.is_empty());
        assert!(epoll.remove(a.as_raw_fd()).is_err(), "removed once");
    }

    #[test]
    fn a_ticker_ends_a_wait_without_a_timeout_every_period_until_cleared() {
        use std::io::Read;
        let (epoll, ticker) = (Epoll::new().unwrap(), ticker(Duration::from_millis(20)).unwrap());
        epoll.add(ticker.as_raw_fd()).unwrap();
        let mut ready = Vec::new();
        let started = Instant::now();
        epoll.wait(&mut ready, Some(Duration::ZERO));
        assert!(ready.is_empty(), "not ready before its first period");
        for tick in 1..=3 {
            // A wait of its own would block forever: the ticker ends it.
            epoll.wait(&mut ready, None);
            assert_eq!(ready, [ticker.as_raw_fd()], "tick {tick}");
            assert!(started.elapsed() >= Duration::from_millis(20 * tick - 2));
            (&ticker).read_exact(&mut [0; 8]).unwrap();
            epoll.wait(&mut ready, Some(Duration::ZERO));
            assert!(ready.is_empty(), "cleared after tick {tick}");
        }
        assert!(started.elapsed() < Duration::from_secs(5));
    }

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
