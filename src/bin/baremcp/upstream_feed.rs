//! The proxy's client lines on their way to the upstream: a queue, bounded in bytes, that a
//! thread of its own writes out, closing the upstream's input once all are written.

use std::collections::VecDeque;
use std::io::Write;
use std::process::ChildStdin;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Client lines on their way to the upstream, written by a thread of their own, so that
/// reading the client waits on the upstream only past `budget` bytes waiting (the line being
/// written included; a longer line alone), as with a pipe.
pub struct Outbox {
    queue: Mutex<Queue>,
    changed: Condvar,
    budget: usize,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    /// The client's input ended: no line comes after those queued.
    closed: bool,
    /// The writer holds a line it has not written whole yet.
    writing: bool,
    /// Once writing to the upstream failed: the lines that were not written.
    lost: Option<usize>,
    /// Every line was written and the upstream's input closed.
    input_closed: bool,
}

impl Outbox {
    pub fn new(budget: usize) -> Outbox {
        Outbox { queue: Mutex::default(), changed: Condvar::new(), budget }
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, queue: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        self.changed.wait(queue).unwrap_or_else(|e| e.into_inner())
    }

    /// Queues one line, its `\n` included; `false` once the upstream's input has failed
    /// (the line is counted as not written).
    pub fn push(&self, line: Vec<u8>) -> bool {
        let mut queue = self.queue();
        while queue.lost.is_none() && queue.bytes > 0 && queue.bytes + line.len() > self.budget {
            queue = self.wait(queue);
        }
        if let Some(lost) = &mut queue.lost {
            *lost += 1;
            return false;
        }
        queue.bytes += line.len();
        queue.lines.push_back(line);
        self.changed.notify_all();
        true
    }

    /// No more lines: the upstream's input is closed once those queued are written.
    pub fn close(&self) {
        self.queue().closed = true;
        self.changed.notify_all();
    }

    /// Waits until the client's input has ended and every line is written, the upstream's
    /// input closed (true), or writing to the upstream failed (false). An upstream that
    /// never reads again is waited for as long.
    pub fn wait_written(&self) -> bool {
        let mut queue = self.queue();
        while !queue.input_closed && queue.lost.is_none() {
            queue = self.wait(queue);
        }
        queue.input_closed
    }

    /// Writes the queued lines to `upstream` until the client's input has ended and all are
    /// written (then `upstream` is dropped, which closes it), or a write fails.
    pub fn write_to(&self, mut upstream: ChildStdin) {
        loop {
            let mut queue = self.queue();
            let line = loop {
                if let Some(line) = queue.lines.pop_front() {
                    queue.writing = true;
                    break line;
                }
                if queue.closed {
                    drop(upstream);
                    queue.input_closed = true;
                    self.changed.notify_all();
                    return;
                }
                queue = self.wait(queue);
            };
            drop(queue);
            let written = upstream.write_all(&line).and_then(|()| upstream.flush());
            let mut queue = self.queue();
            (queue.writing, queue.bytes) = (false, queue.bytes - line.len());
            if written.is_err() {
                queue.lost = Some(1 + queue.lines.len());
                (queue.lines, queue.bytes) = (VecDeque::new(), 0);
            }
            drop(queue);
            self.changed.notify_all();
            if written.is_err() {
                return;
            }
        }
    }

    /// How many client lines the upstream was not given whole.
    pub fn unwritten(&self) -> usize {
        let queue = self.queue();
        queue.lost.unwrap_or(0) + queue.lines.len() + usize::from(queue.writing)
    }
}
