//! Running a case's connections against a server: each script on a socket of its own, its
//! steps on one thread while another reads what comes back, until the server closes, every
//! request the model expects is answered and nothing more comes, or the patience runs out.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::http_cases::{Script, Step};
use super::http_model::{Framed, frame_all};
use super::http_reply::{Tail, read_replies};

/// How reading a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The server closed it.
    Eof,
    /// The server reset it.
    Reset,
    /// Everything expected came and nothing more.
    Done,
    /// The client closed it (a `Close` step).
    ClientClosed,
    /// Something expected had not come when the patience ran out.
    TimedOut,
    /// The connection could not be opened.
    NoConnection,
}

/// What one connection did.
#[derive(Clone, Debug)]
pub struct ConnRun {
    /// The bytes written (all of the script's, unless a write failed).
    pub sent: Vec<u8>,
    pub received: Vec<u8>,
    pub end: End,
    /// The client shut its writing half.
    pub half_closed: bool,
    /// Why a write failed, if one did.
    pub write_error: Option<String>,
}

/// Whether each response answers a `HEAD` (no body), by the model's reading of `bytes`, and
/// how many responses are expected before the connection may fall quiet.
pub fn expectations(bytes: &[u8], max_body: usize, head_bodies: bool) -> (Vec<bool>, usize) {
    let mut heads = Vec::new();
    for framed in frame_all(bytes, max_body) {
        match framed {
            Framed::Whole { request, .. } => {
                heads.push(request.method == "HEAD" && !head_bodies);
                // (A stream that stays open ends the reading too: see `read_all`.)
                if request.wants_close() {
                    break;
                }
            }
            refused @ Framed::Refused { .. } => {
                heads.push(refused.answers_head() && !head_bodies);
                break;
            }
            cut @ Framed::Cut { .. } => {
                // Answered only if refused on what came: not counted as expected.
                let expected = heads.len();
                heads.push(cut.answers_head() && !head_bodies);
                return (heads, expected);
            }
        }
    }
    let expected = heads.len();
    (heads, expected)
}

/// Runs every script at once (each from its own start time); `patience` is how long an
/// answer may take after the last write.
pub fn drive(
    addr: SocketAddr,
    scripts: &[Script],
    max_body: usize,
    head_bodies: bool,
    patience: Duration,
) -> Vec<ConnRun> {
    let threads: Vec<_> = scripts
        .iter()
        .cloned()
        .map(|script| {
            let (heads, expected) = expectations(&script.bytes(), max_body, head_bodies);
            std::thread::spawn(move || run_script(addr, script, heads, expected, patience))
        })
        .collect();
    threads
        .into_iter()
        .map(|t| {
            t.join().unwrap_or_else(|_| ConnRun {
                sent: Vec::new(),
                received: Vec::new(),
                end: End::NoConnection,
                half_closed: false,
                write_error: Some("the connection's thread panicked".into()),
            })
        })
        .collect()
}

/// What the writer and the reader of one connection share.
#[derive(Default)]
struct Shared {
    /// Responses read so far.
    answered: AtomicUsize,
    reader_done: AtomicBool,
    writer_done: AtomicBool,
    client_closed: AtomicBool,
}

fn run_script(
    addr: SocketAddr,
    script: Script,
    heads: Vec<bool>,
    expected: usize,
    patience: Duration,
) -> ConnRun {
    std::thread::sleep(Duration::from_millis(script.at_ms));
    let mut run = ConnRun {
        sent: Vec::new(),
        received: Vec::new(),
        end: End::NoConnection,
        half_closed: false,
        write_error: None,
    };
    let stream = match TcpStream::connect_timeout(&addr, Duration::from_secs(3)) {
        Ok(stream) => stream,
        Err(e) => {
            run.write_error = Some(format!("cannot connect: {e}"));
            return run;
        }
    };
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_read_timeout(Some(Duration::from_millis(10)));
    let shared = Arc::new(Shared::default());
    let writer = {
        let (shared, stream) = (shared.clone(), stream.try_clone());
        std::thread::spawn(move || match stream {
            Ok(stream) => write_steps(stream, &script.steps, &shared),
            Err(e) => (Vec::new(), false, Some(e.to_string())),
        })
    };
    run.end = read_all(&stream, &mut run.received, &heads, expected, &shared, patience);
    shared.reader_done.store(true, Ordering::Relaxed);
    let _ = stream.shutdown(Shutdown::Both);
    (run.sent, run.half_closed, run.write_error) =
        writer.join().unwrap_or((Vec::new(), false, Some("the writer panicked".into())));
    run
}

/// Carries out the steps; returns what was written, whether the writing half was shut, and
/// why a write failed.
fn write_steps(
    mut stream: TcpStream,
    steps: &[Step],
    shared: &Shared,
) -> (Vec<u8>, bool, Option<String>) {
    let (mut sent, mut half, mut error) = (Vec::new(), false, None);
    for step in steps {
        match step {
            Step::Write(bytes) => {
                // Byte by byte as written: what reached the socket before a failure counts.
                let mut at = 0;
                while at < bytes.len() && error.is_none() {
                    match stream.write(&bytes[at..]) {
                        Ok(0) => error = Some("the socket took no more".to_string()),
                        Ok(n) => {
                            sent.extend_from_slice(&bytes[at..at + n]);
                            at += n;
                        }
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(e) => error = Some(e.to_string()),
                    }
                }
                if error.is_some() {
                    break;
                }
            }
            Step::Pause(ms) => std::thread::sleep(Duration::from_millis(*ms)),
            Step::Await(n) => {
                let started = Instant::now();
                while shared.answered.load(Ordering::Relaxed) < *n
                    && !shared.reader_done.load(Ordering::Relaxed)
                    && started.elapsed() < Duration::from_millis(1500)
                {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            Step::HalfClose => {
                let _ = stream.shutdown(Shutdown::Write);
                half = true;
            }
            Step::Close => {
                shared.client_closed.store(true, Ordering::Relaxed);
                let _ = stream.shutdown(Shutdown::Both);
                break;
            }
        }
    }
    shared.writer_done.store(true, Ordering::Relaxed);
    (sent, half, error)
}

/// Reads until the server closes, the client does, everything expected has come and the
/// connection has been quiet a moment, or `patience` after the last write.
fn read_all(
    mut stream: &TcpStream,
    received: &mut Vec<u8>,
    heads: &[bool],
    expected: usize,
    shared: &Shared,
    patience: Duration,
) -> End {
    let mut buf = vec![0u8; 64 * 1024];
    let mut last_byte = Instant::now();
    let mut writes_ended: Option<Instant> = None;
    let (mut count, mut closing, mut open, mut clean) = (0, false, false, true);
    loop {
        match stream.read(&mut buf) {
            Ok(0) if shared.client_closed.load(Ordering::Relaxed) => return End::ClientClosed,
            Ok(0) => return End::Eof,
            Ok(n) => {
                received.extend_from_slice(&buf[..n]);
                last_byte = Instant::now();
                let (replies, tail) = read_replies(received, heads, false);
                count = replies.len();
                closing = replies.last().is_some_and(|r| r.closes());
                open = replies.last().is_some_and(|r| r.open);
                clean = tail == Tail::Clean;
                shared.answered.store(count, Ordering::Relaxed);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) if shared.client_closed.load(Ordering::Relaxed) => return End::ClientClosed,
            Err(_) => return End::Reset,
        }
        if shared.client_closed.load(Ordering::Relaxed) {
            return End::ClientClosed;
        }
        if !shared.writer_done.load(Ordering::Relaxed) {
            continue;
        }
        let ended = *writes_ended.get_or_insert_with(Instant::now);
        let quiet = last_byte.elapsed().min(ended.elapsed());
        // A stream that stays open is read a moment. A response that announced the close
        // is followed by the close: wait for it.
        if open && quiet >= Duration::from_millis(150) {
            return End::Done;
        }
        if !closing && count >= expected && clean && quiet >= Duration::from_millis(40) {
            return End::Done;
        }
        if ended.elapsed() > patience {
            return End::TimedOut;
        }
    }
}
