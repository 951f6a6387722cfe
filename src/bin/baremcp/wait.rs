//! Waiting for a child process to exit, until a deadline: std can wait without a limit or
//! look once, so the wait looks every few milliseconds.

use std::io;
use std::time::{Duration, Instant};

/// Between two looks: short, since a wait ends as soon as the child has exited.
const LOOK_EVERY: Duration = Duration::from_millis(2);

/// The child's exit status (or what else `try_wait` says of its exit) once `try_wait` reports
/// one, or `None` when `deadline` passed first (the caller decides how to end it). `try_wait`
/// is the caller's, so that a child shared between threads is locked only while it is looked
/// at, and one may be left unreaped.
pub fn exit_by<T>(
    deadline: Instant,
    mut try_wait: impl FnMut() -> io::Result<Option<T>>,
) -> io::Result<Option<T>> {
    loop {
        if let Some(status) = try_wait()? {
            return Ok(Some(status));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        std::thread::sleep(left.min(LOOK_EVERY));
    }
}
