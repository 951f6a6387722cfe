//! The only writer: every message the server sends goes through `Outbox`, one per line.

use std::io::{self, Write};

use serde_json::{Map, Value};

use crate::wire::era;
use crate::wire::jsonrpc::{self, Id, Reply, UnreadId};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::outbox";

/// Everything the server writes goes through here: one message per line, logged at debug
/// level, with the first write error kept so handlers need not thread `io::Result` through.
pub(crate) struct Outbox<'w> {
    writer: &'w mut dyn Write,
    scratch: Vec<u8>,
    error: Option<io::Error>,
    /// How a reply names a request whose id could not be read: as the revision the
    /// connection's session negotiated says (`Session::unread`); `null` until then.
    pub unread: UnreadId,
}

impl<'w> Outbox<'w> {
    pub fn new(writer: &'w mut dyn Write) -> Self {
        Outbox { writer, scratch: Vec::new(), error: None, unread: UnreadId::Null }
    }

    pub fn response(&mut self, id: Option<&Id>, reply: &Reply) {
        let unread = self.unread;
        self.send(|w| jsonrpc::write_response_as(w, id, unread, reply, b"}\n"));
    }

    /// Writes one message that is already JSON text, newline-terminated.
    pub fn raw_line(&mut self, json: &str) {
        self.send(|w| w.write_all(json.as_bytes()).and_then(|()| w.write_all(b"\n")));
    }

    pub fn notification(&mut self, method: &str, params: &Value) {
        self.send(|w| jsonrpc::write_notification(w, method, params));
    }

    /// A notification on a `subscriptions/listen` stream: `params` are `rest`'s members after
    /// a `_meta` naming the stream (`era::write_on_stream`).
    pub fn stream_notification(&mut self, method: &str, id: &Id, rest: &Map<String, Value>) {
        self.send(|w| {
            jsonrpc::write_notification_with(w, method, &mut |w| {
                era::write_on_stream(w, id, &Map::new(), rest)
            })
        });
    }

    /// Writes a batch's replies, `replies` being the responses already written one after
    /// another with commas between; nothing when there are none.
    pub fn batch(&mut self, replies: &[u8]) {
        if replies.is_empty() {
            return;
        }
        self.send(|w| {
            w.write_all(b"[")?;
            w.write_all(replies)?;
            w.write_all(b"]\n")
        });
    }

    /// Writes one message. At debug level it is staged in a scratch buffer so the exact line
    /// can be logged; otherwise it goes straight to the writer.
    fn send(&mut self, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
        if self.error.is_some() {
            return;
        }
        let result = if log::log_enabled!(target: LOG, log::Level::Debug) {
            self.scratch.clear();
            write(&mut self.scratch).and_then(|()| {
                log::debug!(
                    target: LOG,
                    "-> {}",
                    String::from_utf8_lossy(self.scratch.trim_ascii_end()),
                );
                self.writer.write_all(&self.scratch)
            })
        } else {
            write(&mut *self.writer)
        };
        if let Err(e) = result {
            self.error = Some(e);
        }
    }

    /// Hands everything written so far to the client; returns the first write error.
    pub fn flush(&mut self) -> io::Result<()> {
        self.check()?;
        self.writer.flush()
    }

    /// The first write error, if any, without flushing.
    pub fn check(&mut self) -> io::Result<()> {
        self.error.take().map_or(Ok(()), Err)
    }

    /// Flushes a message the client should see while the handler is still at work; an
    /// error is kept for the loop.
    pub fn push(&mut self) {
        if let Err(e) = self.flush() {
            self.error = Some(e);
        }
    }
}
