//! The HTTP floor for the benchmark: the smallest std HTTP/1.1 responder that does the work
//! any MCP server must (the head read, the body by its `Content-Length` and parsed into a
//! serde_json `Value`), then answers the request's id with a fixed greeting. No checks, no
//! sessions, no limits: the baseline the `--http` mode of `benches/bench.rs` measures baremcp
//! against, not a server to use. Two ways to serve:
//!
//! - by default, a thread per keep-alive connection, the head read line by line: what a
//!   server that answers on the thread that read the request can reach;
//! - `--one-thread` (Linux): every connection on one thread over `epoll`, what a server doing
//!   all of a request's work on one thread can reach at best: nothing between the request's
//!   bytes and its handler, no hand-over to another thread, but one thread for all of it.
//!
//! `floor_http --http ADDR` (port 0: any) says where it listens on stderr, as baremcp does.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

use serde_json::{Value, json};

fn main() -> io::Result<()> {
    let addr = std::env::args()
        .skip_while(|a| a != "--http")
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let listener = TcpListener::bind(&addr)?;
    let one_thread = std::env::args().any(|a| a == "--one-thread");
    if one_thread && !cfg!(target_os = "linux") {
        return Err(io::Error::other("--one-thread needs Linux (epoll)"));
    }
    eprintln!("serving MCP at http://{}/mcp", listener.local_addr()?);
    if one_thread {
        return one_thread::serve(listener);
    }
    for stream in listener.incoming().flatten() {
        std::thread::spawn(move || serve(stream));
    }
    Ok(())
}

fn serve(stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let (mut line, mut out) = (String::new(), Vec::new());
    loop {
        let mut length = 0;
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            length = content_length(header).unwrap_or(length);
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        answer(&body, &mut out)?;
        writer.write_all(&out)?;
    }
}

/// The value of a `Content-Length` header line.
fn content_length(header: &str) -> Option<usize> {
    let (name, value) = header.split_once(':')?;
    name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse().unwrap_or(0))
}

/// The whole response to the request `body`, in `out`.
fn answer(body: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
    let message: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
        "content": [{"type": "text", "text": "Hello, World!"}]
    }});
    let reply = serde_json::to_vec(&reply)?;
    out.clear();
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        reply.len()
    )?;
    out.extend_from_slice(&reply);
    Ok(())
}

#[cfg(target_os = "linux")]
mod one_thread {
    use std::collections::HashMap;
    use std::io::{self, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    /// `struct epoll_event`, packed as the x86-64 kernel has it (and aligned elsewhere).
    #[cfg_attr(target_arch = "x86_64", repr(C, packed))]
    #[cfg_attr(not(target_arch = "x86_64"), repr(C))]
    #[derive(Clone, Copy)]
    struct Event {
        events: u32,
        key: u64,
    }
    const _: () = assert!(size_of::<Event>() == if cfg!(target_arch = "x86_64") { 12 } else { 16 });

    const EPOLLIN: u32 = 1;
    const EPOLL_CTL_ADD: i32 = 1;
    /// The listener's key; a connection's is its number.
    const LISTENER: u64 = u64::MAX;

    unsafe extern "C" {
        fn epoll_create1(flags: i32) -> i32;
        fn epoll_ctl(epoll: i32, op: i32, fd: i32, event: *mut Event) -> i32;
        fn epoll_wait(epoll: i32, events: *mut Event, most: i32, timeout_ms: i32) -> i32;
    }

    fn check(result: i32) -> io::Result<i32> {
        if result < 0 { Err(io::Error::last_os_error()) } else { Ok(result) }
    }

    fn watch(epoll: i32, fd: i32, key: u64) -> io::Result<()> {
        let mut event = Event { events: EPOLLIN, key };
        // SAFETY: `event` lives through the call, which only reads it.
        check(unsafe { epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &mut event) }).map(drop)
    }

    /// A connection and what it sent that is not answered yet.
    struct Connection {
        stream: TcpStream,
        unread: Vec<u8>,
    }

    pub fn serve(listener: TcpListener) -> io::Result<()> {
        listener.set_nonblocking(true)?;
        // SAFETY: no pointer is passed.
        let epoll = check(unsafe { epoll_create1(0) })?;
        watch(epoll, listener.as_raw_fd(), LISTENER)?;
        let mut connections: HashMap<u64, Connection> = HashMap::new();
        let mut events = vec![Event { events: 0, key: 0 }; 256];
        let (mut chunk, mut out, mut next) = (vec![0; 64 << 10], Vec::new(), 0);
        loop {
            // SAFETY: the kernel writes at most `events.len()` entries into `events`.
            let ready = unsafe { epoll_wait(epoll, events.as_mut_ptr(), events.len() as i32, -1) };
            let ready = match check(ready) {
                Ok(ready) => ready as usize,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
                Err(e) => return Err(e),
            };
            for &Event { key, .. } in &events[..ready] {
                if key == LISTENER {
                    accept_all(&listener, epoll, &mut connections, &mut next);
                    continue;
                }
                let Some(connection) = connections.get_mut(&key) else { continue };
                let over = match connection.stream.read(&mut chunk) {
                    Ok(0) => true,
                    Ok(n) => {
                        connection.unread.extend_from_slice(&chunk[..n]);
                        answer_all(connection, &mut out).is_err()
                    }
                    Err(e) => {
                        !matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted)
                    }
                };
                // Dropping the stream closes it, which takes it out of the epoll set.
                if over {
                    connections.remove(&key);
                }
            }
        }
    }

    /// Takes every connection waiting. One that cannot be watched is closed; running out of
    /// descriptors leaves the rest waiting (the listener is then ready again at once: a floor
    /// does not back off).
    fn accept_all(
        listener: &TcpListener,
        epoll: i32,
        connections: &mut HashMap<u64, Connection>,
        next: &mut u64,
    ) {
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    let watched = stream
                        .set_nonblocking(true)
                        .and_then(|()| stream.set_nodelay(true))
                        .and_then(|()| watch(epoll, stream.as_raw_fd(), *next));
                    if watched.is_ok() {
                        connections.insert(*next, Connection { stream, unread: Vec::new() });
                        *next += 1;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// Answers every whole request `connection` has sent. A response the socket does not
    /// take at once ends the connection: a floor does not wait for slow readers.
    fn answer_all(connection: &mut Connection, out: &mut Vec<u8>) -> io::Result<()> {
        loop {
            let unread = &connection.unread;
            let Some(end) = unread.windows(4).position(|w| w == b"\r\n\r\n") else { return Ok(()) };
            let head = String::from_utf8_lossy(&unread[..end]);
            let length = head.split("\r\n").skip(1).filter_map(super::content_length).last();
            let whole = end + 4 + length.unwrap_or(0);
            if unread.len() < whole {
                return Ok(());
            }
            super::answer(&unread[end + 4..whole], out)?;
            connection.stream.write_all(out)?;
            connection.unread.drain(..whole);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod one_thread {
    /// `main` refuses `--one-thread` here before it says where it listens.
    pub fn serve(_: std::net::TcpListener) -> std::io::Result<()> {
        unreachable!("--one-thread needs Linux")
    }
}
