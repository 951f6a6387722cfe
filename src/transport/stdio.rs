//! The stdio loop: read a line, serve it, write the replies, and before waiting for more,
//! flush and look at watched files.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::time::Duration;

use crate::conn::connection::Conn;
use crate::conn::outbox::Outbox;
use crate::conn::session::{FileRounds, Session};
use crate::dispatch::serve_line::{listens_ended, serve_line};
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
    let mut conn = Conn::new(reader, Outbox::new(writer), max_line).with_input_fd(input);
    let mut line = Vec::new();
    loop {
        let next = conn.next_line(&mut line);
        if !matches!(next, Ok(Line::Complete | Line::TooLong)) {
            // The client is gone (its input ended, or failed): so are its streams, recorded
            // as a cancel's are.
            session.client_gone();
            listens_ended(server, &mut session, conn.principal());
        }
        match next? {
            Line::Eof => return conn.out.flush(),
            // A response is never replied to: the client waits for nothing.
            Line::TooLong if conn.drops_response(&line) => {}
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
            // Lines set aside while a handler ran are served first: they wait on no client.
            Some(fd)
                if session.watches_files()
                    && !conn.set_aside()
                    && !readable_within(fd, WATCH_INTERVAL) => {}
            _ => return Ok(()),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::{BufReader, BufWriter, Write};
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};

    use super::run;
    use crate::conn::context::Context;
    use crate::registry::resource::{Contents, Resource};
    use crate::registry::server::Server;
    use crate::registry::tool::{Tool, ToolOutput};

    /// A server whose tool `wait` asks whether it was cancelled every 5 ms, until it was or
    /// `ms` (default 10 000) passed.
    fn waiting() -> Server {
        let mut server = Server::new("t", "1");
        let wait = |args: &Value, cx: &mut Context| {
            let ms = args["ms"].as_u64().unwrap_or(10_000);
            let end = Instant::now() + Duration::from_millis(ms);
            while !cx.is_cancelled() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(ToolOutput::text("waited"))
        };
        let tool = Tool::new("wait", "Waits until cancelled", json!({"type": "object"}), wait);
        server.add_tool(tool).unwrap();
        server
    }

    /// A legacy `initialize` with id `id`.
    fn initialize(id: i64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}})
    }

    #[test]
    fn reading_ahead_never_refuses_a_request_it_reads_only_while_the_queue_has_room() {
        let mut input = format!("{}\n", initialize(-1));
        let call = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call",
            "params": {"name": "wait", "arguments": {"ms": 200}}});
        input.push_str(&format!("{call}\n"));
        for id in 1..=3000 {
            input.push_str(&format!("{}\n", json!({"jsonrpc": "2.0", "id": id, "method": "ping"})));
        }
        let mut out = Vec::new();
        run(&waiting(), &mut input.as_bytes(), &mut out, None).unwrap();
        let replies: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(replies.len(), 3002);
        for (n, reply) in replies[1..].iter().enumerate() {
            assert_eq!((&reply["id"], reply.get("error")), (&json!(n), None), "{reply}");
        }
    }

    #[test]
    fn a_cancellation_of_a_request_still_waiting_withdraws_it() {
        let lines = [
            initialize(1),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "wait", "arguments": {"ms": 300}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "wait"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 3}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
        ];
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let started = Instant::now();
        let mut out = Vec::new();
        run(&waiting(), &mut input.as_bytes(), &mut out, None).unwrap();
        let out = String::from_utf8(out).unwrap();
        let ids: Vec<Value> =
            out.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone()).collect();
        assert_eq!(ids, [json!(1), json!(2), json!(4)], "the call 3 never ran: {out}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    /// Serves `waiting()` over pipes, as a client process would be: `client` writes the
    /// input (closing it when it returns). Each reply with how long after the start it came.
    fn over_pipes(client: impl FnOnce(&mut dyn Write) + Send + 'static) -> Vec<(Duration, Value)> {
        serve_over_pipes(waiting(), client)
    }

    /// [`over_pipes`] with `server`.
    fn serve_over_pipes(
        server: Server,
        client: impl FnOnce(&mut dyn Write) + Send + 'static,
    ) -> Vec<(Duration, Value)> {
        let (input, mut to_server) = std::io::pipe().unwrap();
        let (from_server, output) = std::io::pipe().unwrap();
        let started = Instant::now();
        let sends = std::thread::spawn(move || client(&mut to_server));
        let reads = std::thread::spawn(move || {
            let lines = std::io::BufRead::lines(BufReader::new(from_server));
            let parse = |line: String| (started.elapsed(), serde_json::from_str(&line).unwrap());
            lines.map(|line| parse(line.unwrap())).collect::<Vec<(Duration, Value)>>()
        });
        let fd = input.as_raw_fd();
        // Buffered as stdout is: what is written waits for a flush.
        let mut output = BufWriter::new(output);
        run(&server, &mut BufReader::new(input), &mut output, Some(fd)).unwrap();
        drop(output);
        sends.join().unwrap();
        reads.join().unwrap()
    }

    /// The ids of `replies`, in order.
    fn ids(replies: &[(Duration, Value)]) -> Vec<&Value> {
        replies.iter().map(|(_, reply)| &reply["id"]).collect()
    }

    /// Writes `messages`, one line each.
    fn send(to: &mut dyn Write, messages: &[Value]) {
        let text: String = messages.iter().map(|m| format!("{m}\n")).collect();
        to.write_all(text.as_bytes()).unwrap();
    }

    /// `initialize`, `initialized` and a call of `wait` (id 2) for `ms`.
    fn init_and_wait(ms: u64) -> [Value; 3] {
        [
            initialize(1),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "wait", "arguments": {"ms": ms}}}),
        ]
    }

    #[test]
    fn a_cancellation_sent_while_a_handler_runs_is_seen_by_it_and_requests_wait_their_turn() {
        let replies = over_pipes(|to| {
            send(to, &init_and_wait(10_000));
            // The handler runs with nothing more to read; then what it is sent comes at once.
            std::thread::sleep(Duration::from_millis(300));
            send(
                to,
                &[
                    json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 2}}),
                    json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
                ],
            );
        });
        assert_eq!(ids(&replies), [1, 3, 4], "no answer to the cancelled call: {replies:?}");
        assert!(replies[2].0 < Duration::from_secs(5), "{replies:?}");
    }

    #[test]
    fn a_line_the_client_has_only_begun_never_holds_the_handler() {
        let replies = over_pipes(|to| {
            send(to, &init_and_wait(400));
            std::thread::sleep(Duration::from_millis(100));
            let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string();
            to.write_all(&ping.as_bytes()[..10]).unwrap();
            std::thread::sleep(Duration::from_millis(1500));
            to.write_all(format!("{}\n", &ping[10..]).as_bytes()).unwrap();
        });
        assert_eq!(ids(&replies), [1, 2, 3], "{replies:?}");
        // The call ends at 400 ms, its answer written then, not when the ping's line ends.
        assert!(replies[1].0 < Duration::from_millis(1200), "{replies:?}");
    }

    #[test]
    fn an_answer_waits_for_no_handler_of_a_request_read_while_it_ran() {
        let replies = over_pipes(|to| {
            send(to, &init_and_wait(400));
            std::thread::sleep(Duration::from_millis(100));
            let slow = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "wait", "arguments": {"ms": 2000}}});
            send(to, &[slow]);
        });
        assert_eq!(ids(&replies), [1, 2, 3], "{replies:?}");
        // The first call's answer is written when it ends, not after the second call.
        assert!(replies[1].0 < Duration::from_millis(1500), "{replies:?}");
    }

    /// A pipe's read end that fails once where the input ends, then reads as ended, as a
    /// socket the client reset reports the reset once.
    struct ResetOnce(std::io::PipeReader, bool);

    impl std::io::Read for ResetOnce {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buf)? {
                0 if !std::mem::replace(&mut self.1, true) => {
                    Err(std::io::ErrorKind::ConnectionReset.into())
                }
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_read_that_fails_once_while_a_handler_runs_ends_the_loop_with_its_error() {
        let (input, mut to_server) = std::io::pipe().unwrap();
        let fd = input.as_raw_fd();
        let client = std::thread::spawn(move || {
            send(&mut to_server, &init_and_wait(300));
            // Gone while the call runs: what the handler reads ahead meets the failure.
            std::thread::sleep(Duration::from_millis(100));
        });
        let mut out = Vec::new();
        let mut reader = BufReader::new(ResetOnce(input, false));
        let result = run(&waiting(), &mut reader, &mut out, Some(fd));
        client.join().unwrap();
        // Not taken for a clean end, though the loop's own next read finds the input ended.
        assert_eq!(result.map_err(|e| e.kind()), Err(std::io::ErrorKind::ConnectionReset));
        let out = String::from_utf8(out).unwrap();
        let ids: Vec<Value> =
            out.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone()).collect();
        assert_eq!(ids, [json!(1), json!(2)], "the call is answered first: {out}");
    }

    #[test]
    fn lines_set_aside_are_served_while_files_are_watched_and_the_client_is_quiet() {
        let file = std::env::temp_dir().join(format!("baremcp-set-aside-{}", std::process::id()));
        std::fs::write(&file, "one").unwrap();
        let mut server = waiting();
        let read = |_: &mut Context| Ok(Contents::Text("one".into()));
        let watched = Resource::new("x://watched", "watched", read).watch_file(&file);
        server.add_resource(watched).unwrap();
        let replies = serve_over_pipes(server, |to| {
            let [init, initialized, call] = init_and_wait(400);
            let subscribe = json!({"jsonrpc": "2.0", "id": 5, "method": "resources/subscribe",
                "params": {"uri": "x://watched"}});
            send(to, &[init, initialized, subscribe, call]);
            std::thread::sleep(Duration::from_millis(100));
            send(to, &[json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})]);
            // Quiet until the ping is surely answered, then gone.
            std::thread::sleep(Duration::from_millis(3000));
        });
        std::fs::remove_file(&file).unwrap();
        assert_eq!(ids(&replies), [1, 5, 2, 3], "{replies:?}");
        // Answered when the call ends, not when the client leaves.
        assert!(replies[3].0 < Duration::from_millis(2000), "{replies:?}");
    }
}
