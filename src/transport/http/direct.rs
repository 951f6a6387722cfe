//! The response the dispatching loop writes itself. In the common case a request is answered
//! with one small JSON body and nothing before it; then, instead of the connection thread
//! sleeping until the loop hands the answer back, waking, and writing it (two more thread
//! crossings per call than a server answering on the connection's own thread makes), the
//! connection thread waits on its socket and the loop writes the response without blocking.
//! Whatever else happens (an event before the response, a large response, a client not
//! reading, more bytes from the client, a keep-alive due) hands the request back to the
//! connection thread, woken when it has to be, and the response takes the usual way.
//!
//! Linux only (an `eventfd` wakes the connection thread, `poll` waits on it and the socket);
//! elsewhere every response takes the usual way.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::transport::http::response::Response;
use crate::transport::http::socket::Socket;

/// The largest body the loop writes itself: a larger one goes through the connection thread,
/// which can wait for a slow client.
pub const MOST_DIRECT_BYTES: usize = 64 << 10;

/// One connection's way for the loop to answer its requests itself.
pub struct DirectLine {
    socket: Socket,
    /// Readable when the loop has handed a request back to the connection thread.
    #[cfg(target_os = "linux")]
    wake: std::fs::File,
    state: Mutex<State>,
}

#[derive(Clone, Copy)]
struct State {
    /// Which request the mode is for: counted up as each is handed over, so that what the
    /// loop does for an earlier one (dropping it late, say) cannot touch a later one.
    request: u64,
    mode: Mode,
    /// When the loop wrote the current request's response: what its log line says it took.
    written: Option<Instant>,
}

/// Who answers the current request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// The connection thread waits on its socket: the loop may write the response itself.
    Detached,
    /// The loop wrote the whole response: its status, and whether the connection can carry
    /// another request.
    Written(u16, bool),
    /// The connection thread takes what comes over the request's sink.
    Attached,
    /// The loop wrote the response's first bytes and sends the rest over the sink: the
    /// connection thread writes only that (no event stream, no keep-alive comment first).
    Begun,
}

/// What the loop did not write itself, for the connection thread to write.
pub enum Unsent {
    /// The whole response (none of it went): its status and body, `None` for a 202.
    Done(Option<(u16, Vec<u8>)>),
    /// The rest of a response whose first bytes went.
    Rest(Rest),
}

/// The rest of a response the loop began to write itself: its status, its bytes, and
/// whether the connection can carry another request.
pub struct Rest {
    pub status: u16,
    pub bytes: Vec<u8>,
    pub reuse: bool,
}

/// One request's hold on its connection's line: what the loop keeps with the request.
#[derive(Clone)]
pub struct Claim {
    line: Arc<DirectLine>,
    request: u64,
}

/// What the loop needs to write one response itself, beside its claim.
pub struct Direct {
    pub claim: Claim,
    /// The request's HTTP minor version.
    pub minor: u8,
    /// What `Keep-Alive: timeout=` says.
    pub keep_alive_secs: u64,
    /// The CORS headers an allowed page's responses carry.
    pub cors: Vec<(&'static str, String)>,
    /// The request created a legacy session: its id is announced, if the session was made.
    pub announce: bool,
    /// The body holds a request: with no response (cancelled) it is still answered, by the
    /// connection thread (an empty event stream), never with `202`.
    pub requests: bool,
}

impl DirectLine {
    /// A line for the connection on `socket`; `None` where the loop cannot write itself (not
    /// Linux, or no descriptor left for the wake-up): its responses take the usual way.
    pub fn new(socket: Socket) -> Option<Arc<DirectLine>> {
        #[cfg(target_os = "linux")]
        {
            let wake = crate::transport::http::socket::eventfd()?;
            let state = Mutex::new(State { request: 0, mode: Mode::Attached, written: None });
            Some(Arc::new(DirectLine { socket, wake, state }))
        }
        #[cfg(not(target_os = "linux"))]
        {
            drop(socket);
            None
        }
    }

    /// The connection's descriptor: what the dispatching loop knows a parked one by.
    #[cfg(target_os = "linux")]
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.socket.fd()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a request the loop may answer itself.
    pub fn arm(self: &Arc<DirectLine>) -> Claim {
        let mut state = self.lock();
        state.request += 1;
        state.mode = Mode::Detached;
        state.written = None;
        Claim { line: self.clone(), request: state.request }
    }

    /// What the loop did for the current request. While it did nothing, `take` hands the
    /// request back to the connection thread (the loop then answers through the sink).
    pub fn settle(&self, take: bool) -> Mode {
        let mut state = self.lock();
        if take && state.mode == Mode::Detached {
            state.mode = Mode::Attached;
        }
        state.mode
    }

    /// When the loop wrote the current request's response, if it did.
    pub fn written_at(&self) -> Option<Instant> {
        self.lock().written
    }

    /// Waits until the socket has input (or its peer left), the loop hands the request back,
    /// or `timeout` passes: whether the socket woke it.
    #[cfg(target_os = "linux")]
    pub fn wait(&self, timeout: Duration) -> bool {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        let (socket, woken) =
            crate::util::poll::either_within(self.socket.fd(), self.wake.as_raw_fd(), timeout);
        if woken {
            // Non-blocking: reads the count, or finds none left.
            let _ = (&self.wake).read(&mut [0; 8]);
        }
        socket
    }

    #[cfg(not(target_os = "linux"))]
    pub fn wait(&self, timeout: Duration) -> bool {
        std::thread::sleep(timeout);
        false
    }

    /// Waits until the line is woken (its request handed back, or its parked connection given
    /// back: `park`), or `timeout` passes: whether it was woken.
    #[cfg(target_os = "linux")]
    pub fn wait_woken(&self, timeout: Duration) -> bool {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        let woken = crate::util::poll::readable_within(self.wake.as_raw_fd(), timeout);
        if woken {
            let _ = (&self.wake).read(&mut [0; 8]);
        }
        woken
    }

    pub fn wake(&self) {
        #[cfg(target_os = "linux")]
        {
            use std::io::Write;
            let _ = (&self.wake).write(&1u64.to_ne_bytes());
        }
    }
}

impl Claim {
    /// Hands the request back to its connection thread (waking it), unless it has it, or the
    /// loop answered already: the loop calls this before the request's sink carries anything.
    pub fn attach(&self) {
        let mut state = self.line.lock();
        if state.request != self.request || state.mode != Mode::Detached {
            return;
        }
        state.mode = Mode::Attached;
        drop(state);
        self.line.wake();
    }

    /// Writes `response` (to a request with HTTP minor version `minor`) if its connection
    /// thread still waits on its socket and the socket takes it now; otherwise what the
    /// connection thread is to write (sent over the sink by the caller): the response if
    /// none of it went, else the rest of its bytes.
    fn write(
        &self,
        response: Response,
        minor: u8,
        keep_alive_secs: u64,
        buf: &mut Vec<u8>,
    ) -> Option<Unsent> {
        let mut state = self.line.lock();
        if state.request != self.request || state.mode != Mode::Detached {
            return Some(Unsent::Done(response.into_done()));
        }
        buf.clear();
        response.render(buf, minor, keep_alive_secs);
        let reuse = !response.close;
        let sent = self.line.socket.send_now(buf);
        let status = response.status;
        let rest = match sent {
            Ok(n) if n == buf.len() => None,
            Ok(0) => Some(Unsent::Done(response.into_done())),
            Ok(n) => Some(Unsent::Rest(Rest { status, bytes: buf[n..].to_vec(), reuse })),
            // The client is gone: the connection thread finds out, and closes.
            Err(_) => {
                state.mode = Mode::Written(499, false);
                return None;
            }
        };
        state.mode = match rest {
            None => Mode::Written(status, reuse),
            Some(Unsent::Done(_)) => Mode::Attached,
            // The connection thread must know before it looks at the sink that part of the
            // response went: it may wake before the rest is queued.
            Some(Unsent::Rest(_)) => Mode::Begun,
        };
        state.written = rest.is_none().then(Instant::now);
        drop(state);
        if rest.is_some() {
            self.line.wake();
        }
        rest
    }

    pub fn line(&self) -> &DirectLine {
        &self.line
    }
}

impl Direct {
    /// Answers `done` (a response with its status, or `None`: 202 without a body) itself when
    /// it can; else what the connection thread is to write. `session`: the legacy session to
    /// announce, when the request created one that exists; `closing`: the server is stopping.
    pub fn answer(
        &self,
        done: Option<(u16, Vec<u8>)>,
        session: Option<&str>,
        closing: bool,
        buf: &mut Vec<u8>,
    ) -> Option<Unsent> {
        let large = done.as_ref().is_some_and(|(_, body)| body.len() > MOST_DIRECT_BYTES);
        if large || done.is_none() && self.requests {
            return Some(Unsent::Done(done));
        }
        let mut response = Response::answer(done);
        if let Some(id) = session.filter(|_| self.announce) {
            response.headers.push(("Mcp-Session-Id", id.to_string()));
        }
        response.headers.extend(self.cors.iter().cloned());
        response.close = closing;
        let out = self.claim.write(response, self.minor, self.keep_alive_secs, buf);
        // A buffer that held a large response is not kept.
        if buf.capacity() > 2 * MOST_DIRECT_BYTES {
            *buf = Vec::new();
        }
        out
    }
}

impl Drop for Direct {
    /// A request dropped unanswered (the server stopping, say) goes back to its connection
    /// thread, which then finds its sink closed.
    fn drop(&mut self) {
        self.claim.attach();
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    use super::*;
    use crate::transport::http::socket::Stream;

    /// A line on one end of a socket pair, and the client's end.
    fn line() -> (Arc<DirectLine>, UnixStream) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let line = DirectLine::new(Socket::new(Stream::Unix(ours))).unwrap();
        (line, theirs)
    }

    fn direct(claim: Claim, announce: bool) -> Direct {
        let cors = vec![("Access-Control-Allow-Origin", "https://a.example".to_string())];
        Direct { claim, minor: 1, keep_alive_secs: 5, cors, announce, requests: false }
    }

    /// Reads exactly `n` bytes, or fails after a few seconds.
    fn read(client: &mut UnixStream, n: usize) -> Vec<u8> {
        client.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut bytes = vec![0; n];
        client.read_exact(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn the_loop_writes_a_small_response_itself_and_the_connection_thread_learns_its_status() {
        let (line, mut client) = line();
        let answered = direct(line.arm(), true).answer(
            Some((200, b"{}".to_vec())),
            Some("s-1"),
            false,
            &mut Vec::new(),
        );
        assert!(answered.is_none());
        let expected = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\n\
            Access-Control-Allow-Origin: https://a.example\r\nContent-Length: 2\r\n\
            Keep-Alive: timeout=5\r\n\r\n{}";
        assert_eq!(String::from_utf8(read(&mut client, expected.len())).unwrap(), expected);
        assert_eq!(line.settle(true), Mode::Written(200, true));
        assert!(line.written_at().is_some());
        // Not announced unless the request made the session; closing says so, and the
        // connection is not reused; nothing (a 202) has no body.
        let answered = direct(line.arm(), false).answer(None, Some("s-1"), true, &mut Vec::new());
        assert!(answered.is_none());
        let expected = "HTTP/1.1 202 Accepted\r\nAccess-Control-Allow-Origin: https://a.example\r\n\
            Content-Length: 0\r\nConnection: close\r\n\r\n";
        assert_eq!(String::from_utf8(read(&mut client, expected.len())).unwrap(), expected);
        assert_eq!(line.settle(false), Mode::Written(202, false));
    }

    #[test]
    fn a_request_handed_back_wakes_its_connection_thread_and_the_loop_writes_nothing() {
        let (line, mut client) = line();
        let claim = line.arm();
        // Nothing happens: the wait ends with its timeout, and the request stays detached.
        let started = Instant::now();
        assert!(!line.wait(Duration::from_millis(50)));
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert_eq!(line.settle(false), Mode::Detached);
        // An event (say) hands it back: the waiting thread wakes at once.
        claim.attach();
        let started = Instant::now();
        assert!(!line.wait(Duration::from_secs(5)));
        assert!(started.elapsed() < Duration::from_secs(4));
        assert_eq!(line.settle(false), Mode::Attached);
        let answered =
            direct(claim, false).answer(Some((200, b"{}".to_vec())), None, false, &mut Vec::new());
        assert!(matches!(answered, Some(Unsent::Done(Some((200, body)))) if body == b"{}"));
        // A 202 without a body goes back as one (not as an empty JSON body).
        let claim = line.arm();
        assert_eq!(line.settle(true), Mode::Attached);
        let answered = direct(claim, false).answer(None, None, false, &mut Vec::new());
        assert!(matches!(answered, Some(Unsent::Done(None))));
        client.set_nonblocking(true).unwrap();
        assert!(client.read(&mut [0; 1]).is_err(), "the loop wrote nothing");
        // The connection thread takes it back on its own (more bytes came, say).
        let claim = line.arm();
        assert_eq!(line.settle(true), Mode::Attached);
        let body = vec![b'x'; MOST_DIRECT_BYTES + 1];
        assert!(
            direct(claim, false)
                .answer(Some((200, b"{}".to_vec())), None, false, &mut Vec::new())
                .is_some()
        );
        // A large response is never the loop's to write.
        let claim = line.arm();
        let answered = direct(claim, false).answer(Some((200, body)), None, false, &mut Vec::new());
        assert!(
            matches!(answered, Some(Unsent::Done(Some((200, b)))) if b.len() == MOST_DIRECT_BYTES + 1)
        );
        assert!(client.read(&mut [0; 1]).is_err(), "the loop wrote nothing");
        // A client that left: the connection thread hears the request is over, not reusable.
        let claim = line.arm();
        drop(client);
        assert!(direct(claim, false).answer(None, None, false, &mut Vec::new()).is_none());
        assert_eq!(line.settle(true), Mode::Written(499, false));
    }

    #[test]
    fn what_the_loop_does_late_for_an_earlier_request_leaves_a_later_one_alone() {
        let (line, _client) = line();
        let first = direct(line.arm(), false);
        let second = line.arm();
        first.claim.attach();
        drop(first);
        assert_eq!(line.settle(false), Mode::Detached);
        let answered = direct(line.arm(), false);
        drop(second);
        assert!(answered.answer(None, None, false, &mut Vec::new()).is_none());
        // Dropped unanswered, a request goes back to its connection thread.
        let claim = line.arm();
        drop(direct(claim, false));
        assert_eq!(line.settle(false), Mode::Attached);
    }

    #[test]
    fn a_client_that_does_not_read_gets_the_rest_from_its_connection_thread() {
        // Over TCP (a unix socket takes a response this small whole, or not at all), with
        // more than the socket's buffers hold: the loop writes what goes without waiting.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let ours = Stream::Tcp(listener.accept().unwrap().0);
        let line = DirectLine::new(Socket::new(ours)).unwrap();
        let body = vec![b'r'; 32 << 20];
        let response = Response::answer(Some((200, body)));
        let mut whole = Vec::new();
        response.render(&mut whole, 1, 5);
        let claim = line.arm();
        let rest = match claim.write(response, 1, 5, &mut Vec::new()) {
            Some(Unsent::Rest(rest)) => rest,
            Some(Unsent::Done(_)) => panic!("none went"),
            None => panic!("all went"),
        };
        assert!(rest.status == 200 && rest.reuse && !rest.bytes.is_empty());
        // Handed back, with a wake-up, saying part of the response went: the connection
        // thread writes nothing but the rest.
        assert_eq!(line.settle(false), Mode::Begun);
        let started = Instant::now();
        line.wait(Duration::from_secs(5));
        assert!(started.elapsed() < Duration::from_secs(4));
        // What went and what is left make the response, byte for byte.
        let went = whole.len() - rest.bytes.len();
        client.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut read = vec![0; went];
        client.read_exact(&mut read).unwrap();
        assert_eq!([read, rest.bytes].concat(), whole);
    }
}
