//! The proxy's upstream: the process, shared by the proxy's threads (either direction may find
//! that it must be ended), and its output, which ends when the upstream has exited and what
//! it wrote before is read, though a process it started may still hold the pipe.

use std::io::{self, Read};
#[cfg(unix)]
use std::os::fd::AsRawFd;
use std::process::{Child, ChildStdout, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::process_group::{kill_group, reaped, waited};
use super::wait::exit_by;
#[cfg(unix)]
use baremcp::__private::readable_within;

/// How long the upstream may take to exit after the client closed its input; and, after a
/// stop signal, how long the client may take nothing of its last output.
pub const GRACE: Duration = Duration::from_secs(2);

/// The upstream process, shared by both directions: either may find that it must be ended.
pub struct Upstream {
    child: Mutex<Child>,
    /// Set by [`Upstream::end`].
    ended: AtomicBool,
}

impl Upstream {
    pub fn new(child: Child) -> Upstream {
        Upstream { child: Mutex::new(child), ended: AtomicBool::new(false) }
    }

    /// Whether the proxy ended it: its status then tells of that, not of a crash.
    pub fn ended_by_proxy(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }

    /// Its status once it exits, however long that takes.
    pub fn wait(&self) -> io::Result<ExitStatus> {
        waited(&mut self.child())
    }

    fn child(&self) -> MutexGuard<'_, Child> {
        self.child.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Its status if it has exited.
    pub fn try_wait(&self) -> io::Result<Option<ExitStatus>> {
        reaped(&mut self.child())
    }

    /// Its status once it exited within [`GRACE`]; else it is ended, saying so as
    /// `{did_not} within N s{after}: ending it`.
    pub fn exit_or_end(&self, did_not: &str, after: &str) -> io::Result<Option<ExitStatus>> {
        let status = exit_by(Instant::now() + GRACE, || self.try_wait())?;
        if status.is_none() {
            self.end(&format!("{did_not} within {} s{after}", GRACE.as_secs()));
        }
        Ok(status)
    }

    /// Ends the upstream and its process group, saying why, unless it has exited (looked at
    /// under the same lock: once reaped, its id may name another process).
    pub fn end(&self, why: &str) {
        let mut child = self.child();
        if matches!(reaped(&mut child), Ok(None)) {
            log::warn!("{why}: ending it");
            self.ended.store(true, Ordering::Relaxed);
            kill_group(&mut child);
        }
    }
}

/// How often the upstream is checked for having exited while its output is quiet.
#[cfg(unix)]
const EXIT_CHECK: Duration = Duration::from_millis(100);

/// How much output is still forwarded once the upstream has exited, while more is there at
/// once: the most a pipe can hold (1 MiB, Linux's largest for an unprivileged process), so
/// that all the upstream wrote before exiting is delivered, however slowly the client takes
/// it, and a grandchild's endless output is not.
#[cfg(unix)]
const DRAIN: u64 = 1 << 20;

/// How long a line begun when the drain ends may take to be finished: well under the proxy's
/// [`GRACE`], so that the proxy, waiting for it, is never taken for one stuck writing to its
/// client.
#[cfg(unix)]
const FINISH: Duration = Duration::from_secs(1);

/// Where the output is, as the upstream ends.
#[cfg(unix)]
#[derive(Clone, Copy)]
enum Drain {
    /// The upstream runs.
    Running,
    /// It has exited: what is in the pipe is read while more is there at once, up to
    /// [`DRAIN`] bytes (so many read so far).
    Draining(u64),
    /// The drain ended in the middle of a line: only that line is finished, by this time.
    Finishing(Instant),
    /// For good: a pipe that fills again is a process the upstream left behind.
    Ended,
}

/// The upstream's output, which ends when the pipe does or when the upstream has exited: a
/// grandchild that inherited the pipe would otherwise hold the session open after the
/// upstream is gone.
pub struct UpstreamOutput {
    pipe: ChildStdout,
    #[cfg(unix)]
    upstream: Arc<Upstream>,
    #[cfg(unix)]
    drain: Drain,
    /// The last byte read ended no line.
    #[cfg(unix)]
    line_open: bool,
    /// The output was ended here, not by the pipe, in the middle of a line: that line is cut.
    cut: bool,
}

impl UpstreamOutput {
    /// The output on `pipe` of `upstream`.
    pub fn new(pipe: ChildStdout, upstream: Arc<Upstream>) -> UpstreamOutput {
        #[cfg(not(unix))]
        let _ = upstream;
        UpstreamOutput {
            pipe,
            #[cfg(unix)]
            upstream,
            #[cfg(unix)]
            drain: Drain::Running,
            #[cfg(unix)]
            line_open: false,
            cut: false,
        }
    }

    /// Whether the output was ended in the middle of a line: the last line read is cut.
    pub fn cut(&self) -> bool {
        self.cut
    }

    #[cfg(unix)]
    fn exited(&self) -> bool {
        !matches!(self.upstream.try_wait(), Ok(None))
    }
}

#[cfg(unix)]
impl Read for UpstreamOutput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let fd = self.pipe.as_raw_fd();
        loop {
            let mut read = match self.drain {
                Drain::Running if self.exited() => {
                    self.drain = Drain::Draining(0);
                    continue;
                }
                Drain::Running if readable_within(fd, EXIT_CHECK) => self.pipe.read(buf)?,
                Drain::Running => continue,
                Drain::Draining(drained)
                    if drained < DRAIN && readable_within(fd, Duration::ZERO) =>
                {
                    let read = self.pipe.read(buf)?;
                    self.drain = Drain::Draining(drained + read as u64);
                    read
                }
                Drain::Draining(_) if self.line_open => {
                    self.drain = Drain::Finishing(Instant::now() + FINISH);
                    continue;
                }
                // Time left, looked at before the pipe: a writer that keeps it full does not
                // keep the line open past its time.
                Drain::Finishing(by)
                    if by
                        .checked_duration_since(Instant::now())
                        .is_some_and(|left| readable_within(fd, left)) =>
                {
                    self.pipe.read(buf)?
                }
                Drain::Draining(_) | Drain::Finishing(_) | Drain::Ended => {
                    self.drain = Drain::Ended;
                    self.cut |= self.line_open;
                    self.line_open = false;
                    return Ok(0);
                }
            };
            if let Drain::Finishing(_) = self.drain {
                // The line's end, and what follows it, which is not the upstream's.
                if let Some(end) = memchr::memchr(b'\n', &buf[..read]) {
                    read = end + 1;
                    self.drain = Drain::Ended;
                }
            }
            self.line_open = read > 0 && buf[read - 1] != b'\n';
            return Ok(read);
        }
    }
}

/// Without `poll`, the output is read until it ends: a grandchild holding it open keeps the
/// session open too.
#[cfg(not(unix))]
impl Read for UpstreamOutput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.pipe.read(buf)
    }
}
