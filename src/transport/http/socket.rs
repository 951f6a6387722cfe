//! The sockets HTTP is served on: TCP, or on unix a unix-domain socket (`--http unix:PATH`),
//! behind one listener type and one stream type so that nothing else cares which.

use std::io::{self, IoSlice, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
#[cfg(unix)]
use std::os::unix::net::{UnixListener, UnixStream};
#[cfg(unix)]
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
#[cfg(target_os = "linux")]
const LOG: &str = "baremcp::http::connection";

/// A bound address, accepting connections.
pub enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(UnixListener, SocketFile),
}

/// A unix socket's file, removed when its listener closes, but only while it is still the
/// file this listener made: a server started since at the same path has its own.
#[cfg(unix)]
#[derive(Clone)]
pub struct SocketFile {
    path: PathBuf,
    /// Device and inode at bind.
    made: (u64, u64),
}

#[cfg(unix)]
impl SocketFile {
    fn remove(&self) {
        use std::os::unix::fs::MetadataExt;
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.made) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(unix)]
impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, file) = self {
            file.remove();
        }
    }
}

/// One accepted connection.
pub enum Stream {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(UnixStream),
}

impl Listener {
    /// Binds a unix-domain socket at `path`. A socket file left by a server that is gone
    /// (nothing accepts on it) is replaced; one that is in use, or any other file, is not.
    #[cfg(unix)]
    pub fn bind_unix(path: PathBuf) -> io::Result<Listener> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let stale = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_socket())
            && UnixStream::connect(&path)
                .is_err_and(|e| e.kind() == io::ErrorKind::ConnectionRefused);
        if stale {
            std::fs::remove_file(&path)?;
        }
        let listener = UnixListener::bind(&path)?;
        let made = std::fs::symlink_metadata(&path).map(|m| (m.dev(), m.ino()))?;
        Ok(Listener::Unix(listener, SocketFile { path, made }))
    }

    /// Where it listens, as logs and `--http` say it: `127.0.0.1:8080`, `unix:/run/mcp.sock`.
    pub fn name(&self) -> io::Result<String> {
        match self {
            Listener::Tcp(listener) => Ok(listener.local_addr()?.to_string()),
            #[cfg(unix)]
            Listener::Unix(_, file) => Ok(format!("unix:{}", file.path.display())),
        }
    }

    /// The endpoint as a log line names it: `http://127.0.0.1:8080/mcp` (what tools such as
    /// the load example read back), or `unix:/run/mcp.sock, path /mcp`.
    pub fn endpoint(&self, path: &str) -> io::Result<String> {
        match self {
            Listener::Tcp(listener) => Ok(format!("http://{}{path}", listener.local_addr()?)),
            #[cfg(unix)]
            Listener::Unix(..) => Ok(format!("{}, path {path}", self.name()?)),
        }
    }

    /// The next connection and who made it: its name in logs (a TCP peer's address; `unix`
    /// for a unix socket, whose peers have no name) and its IP address (TCP only).
    pub fn accept(&self) -> io::Result<(Stream, String, Option<IpAddr>)> {
        match self {
            Listener::Tcp(listener) => listener
                .accept()
                .map(|(s, peer)| (Stream::Tcp(s), peer.to_string(), Some(peer.ip()))),
            #[cfg(unix)]
            Listener::Unix(listener, _) => {
                listener.accept().map(|(s, _)| (Stream::Unix(s), "unix".to_string(), None))
            }
        }
    }

    /// A way to wake the thread blocked in [`Listener::accept`]: connect to it.
    pub fn waker(&self) -> io::Result<Waker> {
        match self {
            Listener::Tcp(listener) => Ok(Waker::Tcp(listener.local_addr()?)),
            #[cfg(unix)]
            Listener::Unix(_, file) => Ok(Waker::Unix(file.clone())),
        }
    }
}

/// Connects to a listener once, so its blocked `accept` returns; for a unix socket, also
/// its file, in case its listener is never let go.
pub enum Waker {
    Tcp(SocketAddr),
    #[cfg(unix)]
    Unix(SocketFile),
}

impl Waker {
    pub fn wake(&self) {
        match self {
            Waker::Tcp(address) => {
                drop(TcpStream::connect_timeout(address, Duration::from_millis(200)))
            }
            // A unix connect has no timeout and waits while the backlog is full: off the loop.
            #[cfg(unix)]
            Waker::Unix(file) => {
                let path = file.path.clone();
                let _ = std::thread::Builder::new()
                    .name("wake".into())
                    .spawn(move || UnixStream::connect(path));
            }
        }
    }

    /// Removes what the listener leaves behind: a unix socket's file, while it is its own.
    pub fn clean_up(&self) {
        #[cfg(unix)]
        if let Waker::Unix(file) = self {
            file.remove();
        }
    }
}

impl Stream {
    /// Sends small writes at once (TCP; a unix socket has no Nagle delay to turn off).
    pub fn set_nodelay(&self) {
        match self {
            Stream::Tcp(s) => drop(s.set_nodelay(true)),
            #[cfg(unix)]
            Stream::Unix(_) => {}
        }
    }

    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            #[cfg(unix)]
            Stream::Unix(s) => s.set_read_timeout(timeout),
        }
    }

    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(timeout),
            #[cfg(unix)]
            Stream::Unix(s) => s.set_write_timeout(timeout),
        }
    }

    /// Shuts down one side or both; a socket already closed has nothing to shut.
    pub fn shutdown(&self, how: Shutdown) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(how),
            #[cfg(unix)]
            Stream::Unix(s) => s.shutdown(how),
        };
    }

    #[cfg(not(target_os = "linux"))]
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            #[cfg(unix)]
            Stream::Unix(s) => s.set_nonblocking(on),
        }
    }

    /// Whether the peer closed its end (or reset it), looking without reading or waiting.
    /// A half-close counts as leaving, as it does for nginx (`499`): HTTP/1.1 clients do not
    /// half-close a connection they still read from.
    pub fn peer_gone(&self) -> bool {
        #[cfg(target_os = "linux")]
        return crate::util::poll::hung_up(self.fd());
        #[cfg(not(target_os = "linux"))]
        self.peeked_end()
    }

    /// Whether bytes (or the peer's end) wait to be read now, looking without waiting.
    #[cfg(unix)]
    pub fn has_input(&self) -> bool {
        crate::util::poll::readable_within(self.fd(), Duration::ZERO)
    }

    #[cfg(not(unix))]
    pub fn has_input(&self) -> bool {
        false
    }

    #[cfg(unix)]
    pub fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }

    /// Reads what the socket holds now, without waiting (`recv` with `MSG_DONTWAIT`, on a
    /// descriptor in blocking mode): `WouldBlock` when it holds nothing.
    #[cfg(target_os = "linux")]
    fn recv_now(&self, buf: &mut [u8]) -> io::Result<usize> {
        unsafe extern "C" {
            fn recv(fd: i32, buf: *mut u8, len: usize, flags: i32) -> isize;
        }
        const MSG_DONTWAIT: i32 = 0x40;
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes of writes for the duration of the
            // call, and the descriptor belongs to this stream, alive for as long.
            let n = unsafe { recv(self.fd(), buf.as_mut_ptr(), buf.len(), MSG_DONTWAIT) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }

    /// Writes what the socket takes now, without waiting (`send` with `MSG_DONTWAIT`, on a
    /// descriptor another thread may be reading in blocking mode): how many bytes, 0 when
    /// its buffer is full.
    #[cfg(target_os = "linux")]
    pub fn send_now(&self, buf: &[u8]) -> io::Result<usize> {
        unsafe extern "C" {
            fn send(fd: i32, buf: *const u8, len: usize, flags: i32) -> isize;
        }
        const MSG_DONTWAIT: i32 = 0x40;
        // A peer that left is an error to report, not a SIGPIPE.
        const MSG_NOSIGNAL: i32 = 0x4000;
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes of reads for the duration of the
            // call, and the descriptor belongs to this stream, alive for as long.
            let n =
                unsafe { send(self.fd(), buf.as_ptr(), buf.len(), MSG_DONTWAIT | MSG_NOSIGNAL) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let error = io::Error::last_os_error();
            match error.kind() {
                io::ErrorKind::WouldBlock => return Ok(0),
                io::ErrorKind::Interrupted => {}
                _ => return Err(error),
            }
        }
    }

    /// Elsewhere the loop never writes itself (see `direct`): nothing is taken.
    #[cfg(not(target_os = "linux"))]
    pub fn send_now(&self, _buf: &[u8]) -> io::Result<usize> {
        Ok(0)
    }

    /// Elsewhere a one-byte peek: the end is seen only when no byte came before it.
    #[cfg(not(target_os = "linux"))]
    fn peeked_end(&self) -> bool {
        if self.set_nonblocking(true).is_err() {
            return false;
        }
        let mut byte = [0u8; 1];
        let peeked = match self {
            Stream::Tcp(s) => s.peek(&mut byte),
            #[cfg(unix)]
            Stream::Unix(s) => peek_unix(s, &mut byte),
        };
        let _ = self.set_nonblocking(false);
        match peeked {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        }
    }
}

/// `recv` with `MSG_PEEK`: std's `UnixStream::peek` is not stable yet.
#[cfg(all(unix, not(target_os = "linux")))]
fn peek_unix(socket: &UnixStream, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    unsafe extern "C" {
        fn recv(fd: i32, buf: *mut u8, len: usize, flags: i32) -> isize;
    }
    // The same value on Linux and macOS.
    const MSG_PEEK: i32 = 2;
    // SAFETY: `buf` is valid for `buf.len()` bytes of writes for the duration of the call,
    // and the descriptor belongs to `socket`, alive for as long.
    let n = unsafe { recv(socket.as_raw_fd(), buf.as_mut_ptr(), buf.len(), MSG_PEEK) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// One connection, shared by the reading side and the writing side of its thread: one
/// descriptor for both (a clone of the socket would take a second one, and a system call).
/// While the dispatching loop serves it (see `park`), its reads never wait.
#[derive(Clone)]
pub struct Socket(Arc<(Stream, AtomicBool)>);

impl Socket {
    pub fn new(stream: Stream) -> Socket {
        Socket(Arc::new((stream, AtomicBool::new(false))))
    }

    /// Makes reads give `WouldBlock` rather than wait (Linux: the dispatching loop reads only
    /// what has come), or wait again.
    #[cfg(target_os = "linux")]
    pub fn set_reads_wait(&self, wait: bool) {
        self.0.1.store(!wait, Ordering::Relaxed);
    }

    /// Whether reads wait for input (false while the dispatching loop reads: `WouldBlock`).
    pub fn reads_wait(&self) -> bool {
        !self.0.1.load(Ordering::Relaxed)
    }

    /// Closes the way RFC 9112 §9.6 asks of a server that closes first: the write side now,
    /// then what the client still sends is read and dropped until it closes too, for
    /// `LINGER` in all at most, and until it has been quiet for `LINGER_GAP`. Closing with
    /// input unread would reset the connection: a client still writing a refused body fails
    /// to send it and never reads the refusal, and a reset may overtake (or, on some systems,
    /// drop) an answer the client has not read yet. Once `stop` is set, a connection with
    /// nothing unread closes at once (there is nothing to reset), and one still receiving
    /// gets `LINGER_GAP` more at most: a stop waits for no client that already has its answer.
    pub fn linger(&mut self, stop: &AtomicBool) {
        self.shutdown(Shutdown::Write);
        let mut until = Instant::now() + LINGER;
        let mut quiet_since = Instant::now();
        let mut sink = [0; 16 * 1024];
        loop {
            let now = Instant::now();
            if stop.load(Ordering::Relaxed) {
                if !self.has_input() {
                    return;
                }
                until = until.min(now + LINGER_GAP);
            }
            let left = until.min(quiet_since + LINGER_GAP).saturating_duration_since(now);
            // Woken every slice, to see a stop that begins meanwhile.
            if left.is_zero() || self.set_read_timeout(Some(left.min(LINGER_SLICE))).is_err() {
                return;
            }
            match self.read(&mut sink) {
                Ok(0) => return,
                Ok(_) => quiet_since = Instant::now(),
                Err(e)
                    if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }
}

/// The longest a connection the server closes reads what its client still sends: enough for
/// a client writing a refused body of several megabytes to finish and read the refusal, and
/// bounded so that one never holds its connection's place for long.
const LINGER: Duration = Duration::from_secs(5);

/// How long a lingering connection waits for the client's next bytes (or its close).
const LINGER_GAP: Duration = Duration::from_secs(1);

/// How often a lingering connection looks whether the server is stopping.
const LINGER_SLICE: Duration = Duration::from_millis(250);

impl std::ops::Deref for Socket {
    type Target = Stream;

    fn deref(&self) -> &Stream {
        &self.0.0
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(target_os = "linux")]
        if !self.reads_wait() {
            return self.0.0.recv_now(buf);
        }
        match &self.0.0 {
            Stream::Tcp(s) => (&*s).read(buf),
            #[cfg(unix)]
            Stream::Unix(s) => (&*s).read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &self.0.0 {
            Stream::Tcp(s) => (&*s).write(buf),
            #[cfg(unix)]
            Stream::Unix(s) => (&*s).write(buf),
        }
    }

    /// One `writev` for a response's head and body, which are never copied together.
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match &self.0.0 {
            Stream::Tcp(s) => (&*s).write_vectored(bufs),
            #[cfg(unix)]
            Stream::Unix(s) => (&*s).write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A non-blocking, close-on-exec `eventfd`, or `None` when none can be had.
#[cfg(target_os = "linux")]
pub fn eventfd() -> Option<std::fs::File> {
    use std::os::fd::FromRawFd;
    unsafe extern "C" {
        fn eventfd(initval: u32, flags: i32) -> i32;
    }
    const EFD_CLOEXEC: i32 = 0o2_000_000;
    const EFD_NONBLOCK: i32 = 0o4_000;
    // SAFETY: `eventfd` takes no pointers; a descriptor it returns is new and ours alone.
    let fd = unsafe { eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) };
    if fd < 0 {
        log::debug!(target: LOG, "no eventfd: {}", io::Error::last_os_error());
        return None;
    }
    // SAFETY: `fd` is a descriptor just opened and owned by nothing else.
    Some(unsafe { std::fs::File::from_raw_fd(fd) })
}
