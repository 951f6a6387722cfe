//! The stdio loop: read a line, serve it, write the replies, and before waiting for more,
//! flush and look at watched files.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::time::Duration;

use crate::conn::connection::Conn;
use crate::conn::outbox::Outbox;
use crate::conn::session::{FileRounds, Session};
use crate::dispatch::serve_line::serve_line;
use crate::registry::server::Server;
use crate::util::poll::{RawFd, readable_within};
use crate::wire::jsonrpc::{ErrorObject, Id};
use crate::wire::lines::Line;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::serve";

/// How often [`Server::serve_stdio`] looks at subscribed files while the client is quiet.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

impl Server {
    /// Serves MCP over newline-delimited JSON-RPC until `reader` ends.
    ///
    /// Returns `Ok` at end of input and an error only when reading or writing fails (a
    /// closed output shows up as `ErrorKind::BrokenPipe`). Subscribed files (`--root` files,
    /// [`crate::Resource::watch_file`]) are looked at whenever the loop is about to wait for
    /// input; [`Server::serve_stdio`] also looks while it waits.
    pub fn serve(&self, reader: &mut dyn BufRead, writer: &mut dyn Write) -> io::Result<()> {
        run(self, reader, writer, None)
    }

    /// Serves on this process's stdin and stdout, as [`Server::serve`] does. While the client
    /// is quiet and a subscription names a file, the file is looked at every half second, so
    /// its change is notified without waiting for the client's next message (each look takes
    /// at most 256 watched files, the next ones in turn). The input buffer
    /// is larger than std's 8 KiB so a burst of pipelined requests is read in few system calls.
    ///
    /// A closed stdout is the client going away, as much as a closed stdin: both end with
    /// `Ok`. An error is a real one.
    pub fn serve_stdio(&self) -> io::Result<()> {
        let mut input = BufReader::with_capacity(64 * 1024, io::stdin().lock());
        let mut output = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
        match run(self, &mut input, &mut output, Some(0)) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            result => result,
        }
    }
}

/// The stdio loop; `input` is the reader's file descriptor when it can be polled.
fn run(
    server: &Server,
    reader: &mut dyn BufRead,
    writer: &mut dyn Write,
    input: Option<RawFd>,
) -> io::Result<()> {
    let mut session = Session::default();
    let mut files = FileRounds::default();
    let max_line = server.max_message_bytes;
    let mut conn = Conn::new(reader, Outbox::new(writer), max_line);
    let mut line = Vec::new();
    loop {
        match conn.next_line(&mut line)? {
            Line::Eof => return conn.out.flush(),
            Line::TooLong => {
                log::warn!(target: LOG, "discarded a line longer than {max_line} bytes");
                conn.out.response(Id::in_head(&line).as_ref(), &Err(ErrorObject::too_large()));
            }
            Line::Complete => serve_line(server, &line, &mut session, &mut conn),
        }
        // Flush before the loop could wait for input, so no reply ever waits on the client;
        // replies to lines that already arrived share one write.
        if conn.input_waiting() {
            conn.out.check()?;
        } else {
            before_waiting(&mut session, &mut files, &mut conn, input)?;
        }
    }
}

/// Flushes before the loop waits for input. While files are watched, it looks at them first
/// and, when `input` can be polled, again every [`WATCH_INTERVAL`] until input arrives; each
/// look takes the next files in turn, a bounded number of them.
fn before_waiting(
    session: &mut Session,
    files: &mut FileRounds,
    conn: &mut Conn,
    input: Option<RawFd>,
) -> io::Result<()> {
    loop {
        if session.watches_files() {
            files.look(std::iter::once(&mut *session));
            session.notify_updates(&mut conn.out);
        }
        conn.out.flush()?;
        match input {
            Some(fd) if session.watches_files() && !readable_within(fd, WATCH_INTERVAL) => {}
            _ => return Ok(()),
        }
    }
}
