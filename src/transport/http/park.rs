//! Keep-alive connections the dispatching loop watches between requests (Linux). After a
//! response the loop wrote itself (`direct`), a connection thread parks its whole exchange here
//! and sleeps; the loop waits in `epoll` on every parked socket and its own queue at once, and
//! when a parked socket holds a whole POST with a `Content-Length` body, reads and checks it
//! there and queues it to itself: a call then wakes no thread at all. Whatever could wait (a
//! request not all come, chunked, `Expect`, a JWT not verified yet, a listen, a response the
//! socket does not take at once, an event before the response, the connection's end) gives the
//! exchange back to its thread, which goes on where the loop left it. A keeper thread gives
//! connections back when the loop has been on one message for 50 ms (so a long handler, or one
//! waiting on its client, delays no refusal, probe, answer or cancellation by much more), when
//! the server stops, when a keep-alive comment is due, or when a connection sat idle too long;
//! a thread rung for its pending request takes its connection back itself.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::transport::http::direct::{DirectLine, Mode};
use crate::transport::http::exchange::{Begun, Dock, Exchange, Outcome, Resume, Shared, Step};
use crate::transport::http::main_loop::{Inbound, TICK, Watcher};
use crate::transport::http::parser::{Head, ReadError};
use crate::transport::http::readiness::Readiness;
use crate::util::fd_map::FdMap;
use crate::util::poll::Epoll;
use crate::util::queue::{Receiver, Recv};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::connection";

/// How often the loop looks at the parked connections while its queue is never empty.
const FAIR: Duration = Duration::from_millis(1);

/// How long the loop may be on one message before every parked connection goes back to its
/// thread; the keeper looks every `SWEEP`, and at idle times every `IDLE_EVERY` sweeps.
const STUCK: Duration = Duration::from_millis(50);
const SWEEP: Duration = Duration::from_millis(25);
const IDLE_EVERY: u32 = 10;

/// How long a parked thread sleeps between looks of its own (the keeper does the looking),
/// and the keeper while no connection is parked.
const LOOK: Duration = Duration::from_secs(1);

/// Where connections wait between requests: shared by the loop, which watches them, and
/// their threads, which may take them back.
pub struct Bay {
    epoll: Epoll,
    /// Rung by the loop's queue when work comes while the loop waits here.
    bell: File,
    /// A `timerfd` ready every tick: what ends the loop's waits here, which have no timeout.
    ticker: File,
    /// Each parked connection by its socket's descriptor. The loop takes one out while it
    /// reads from it, so a thread never takes back a connection the loop is using.
    berths: Mutex<Berths>,
    /// Threads asleep in [`Dock::park`]: with none, the keeper sleeps until one comes,
    /// waiting on `docked` (with `berths`' lock).
    parked: AtomicUsize,
    docked: Condvar,
    /// Started with the first connection parked.
    keeper: std::sync::Once,
}

/// Parked connections by descriptor.
type Berths = FdMap<Berth>;

/// One parked connection.
pub struct Berth {
    exchange: Option<Box<Exchange>>,
    home: Arc<Home>,
    /// Idle since: when it was parked, or its last request finished.
    since: Instant,
    /// A request read on the loop and queued to it, not answered yet: its head, when it was
    /// read, and what is left of it.
    pending: Option<Begun>,
}

/// Where a parked connection's thread waits for it to come back: woken through its line's
/// `eventfd`, which the loop also rings when it hands the pending request back (an event
/// before the response, say), so that the thread takes it at once.
pub struct Home {
    slot: Mutex<Option<(Box<Exchange>, Resume)>>,
    line: Arc<DirectLine>,
}

impl Bay {
    /// A bay whose bell `rx` rings when work comes while the loop waits on the bay; `None`
    /// when the descriptors for it cannot be had (connections then never park).
    fn new(rx: &Receiver<Inbound>) -> Option<Arc<Bay>> {
        let made = Epoll::new().and_then(|epoll| {
            let bell = crate::transport::http::socket::eventfd().ok_or(io::ErrorKind::Other)?;
            let ticker = crate::util::poll::ticker(TICK)?;
            epoll.add(bell.as_raw_fd())?;
            epoll.add(ticker.as_raw_fd())?;
            Ok((epoll, bell, ticker))
        });
        let (epoll, bell, ticker) = match made {
            Ok(made) => made,
            Err(e) => {
                log::warn!(target: LOG, "connections will not park between requests: {e}");
                return None;
            }
        };
        let berths = Mutex::new(Berths::default());
        let (parked, docked, keeper) =
            (AtomicUsize::new(0), Condvar::new(), std::sync::Once::new());
        let bay = Arc::new(Bay { epoll, bell, ticker, berths, parked, docked, keeper });
        let ringer = bay.bell.try_clone().ok()?;
        rx.set_bell(move || {
            use std::io::Write;
            let _ = (&ringer).write(&1u64.to_ne_bytes());
        });
        Some(bay)
    }

    fn lock(&self) -> MutexGuard<'_, Berths> {
        self.berths.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Parks `berth` (a connection thread's side): watched from now on, or given back at once
    /// when the set cannot take it.
    fn dock(&self, berth: Berth) {
        let fd = berth.fd();
        let mut berths = self.lock();
        // In the map before the loop can hear of it, and watched before a thread can take it.
        if let Some(older) = berths.insert(fd, berth) {
            debug_assert!(false, "descriptor {fd} parked twice");
            drop(older);
        }
        if self.epoll.add(fd).is_err() {
            let refused = berths.remove(fd);
            drop(berths);
            drop(refused);
        }
    }

    /// Gives every parked connection back to its thread: the loop is held, or gone.
    fn release_all(&self) {
        let berths: Vec<Berth> = self.lock().drain().collect();
        for berth in berths {
            let _ = self.epoll.remove(berth.fd());
        }
    }

    /// Takes connection `fd` out of the bay when its thread should have it back (see
    /// [`Berth::due_back`]), with where the thread is to take it up.
    fn take_back(&self, fd: RawFd, shared: &Shared, stuck: bool) -> Option<(Berth, Resume)> {
        let mut berths = self.lock();
        let expired = berths.get(fd)?.due_back(shared, stuck)?;
        let mut berth = berths.remove(fd)?;
        drop(berths);
        let _ = self.epoll.remove(fd);
        let resume = match expired {
            true => {
                let idle = shared.limits.idle.as_secs();
                log::debug!(target: LOG, "a keep-alive connection was closed after {idle} s idle");
                Resume::Expired
            }
            false => berth.resume(),
        };
        Some((berth, resume))
    }
}

/// Whether the loop has been on one message long enough that parked connections go back to
/// their threads (which answer refusals, probes and `202`s without it), or the server stops.
fn stuck(shared: &Shared) -> bool {
    shared.stop.load(Ordering::Relaxed) || shared.readiness.busy_for() >= STUCK
}

impl Berth {
    fn fd(&self) -> RawFd {
        self.exchange.as_ref().map_or(-1, |exchange| exchange.writer.fd())
    }

    /// Whether its thread should have the connection back: `Some(true)` when it sat idle for
    /// `--idle-timeout-secs` with nothing sent (to close), `Some(false)` when the loop is
    /// `stuck`, its pending request was handed back (an event before the response, say) or a
    /// keep-alive comment is due on its stream.
    fn due_back(&self, shared: &Shared, stuck: bool) -> Option<bool> {
        // A request that came in time is read, however late the loop is (as a thread reads
        // one that came before its idle deadline).
        let expired = self.pending.is_none()
            && self.since.elapsed() >= shared.limits.idle
            && self.exchange.as_ref().is_some_and(|exchange| !exchange.writer.has_input());
        let due = self.pending.as_deref().is_some_and(|(_, read, step)| match step {
            Step::Pump { sse_ok, claim: Some(claim), .. } => {
                let handed = matches!(claim.line().settle(false), Mode::Attached | Mode::Begun);
                handed || *sse_ok && read.elapsed() >= shared.keepalive
            }
            _ => false,
        });
        (expired || stuck || due).then_some(expired)
    }

    /// Gives the connection back to its thread, to take up at `resume`.
    fn go_home(mut self, resume: Resume) {
        if let Some(exchange) = self.exchange.take() {
            self.home.give(exchange, resume);
        }
    }

    /// Where its thread takes up a connection given back unasked: the request the loop has
    /// yet to answer (its answer then goes through the thread), or the next one.
    fn resume(&mut self) -> Resume {
        match self.pending.take() {
            Some(begun) => {
                if let (_, _, Step::Pump { claim: Some(claim), .. }) = &*begun {
                    claim.attach();
                }
                Resume::Request(begun)
            }
            None => Resume::Read,
        }
    }
}

impl Drop for Berth {
    /// A berth is never dropped with its connection: whatever drops it (the set refusing it,
    /// the bay emptied) gives the connection back.
    fn drop(&mut self) {
        if let Some(exchange) = self.exchange.take() {
            let resume = self.resume();
            self.home.give(exchange, resume);
        }
    }
}

impl Home {
    fn new(line: Arc<DirectLine>) -> Arc<Home> {
        Arc::new(Home { slot: Mutex::new(None), line })
    }

    fn lock(&self) -> MutexGuard<'_, Option<(Box<Exchange>, Resume)>> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn give(&self, exchange: Box<Exchange>, resume: Resume) {
        *self.lock() = Some((exchange, resume));
        self.line.wake();
    }

    /// The connection, when it came back within `timeout` (`None` too when the line was
    /// woken for its pending request: see [`Bay::reclaim`]).
    fn wait(&self, timeout: Duration) -> Option<(Box<Exchange>, Resume)> {
        if let Some(back) = self.lock().take() {
            return Some(back);
        }
        self.line.wait_woken(timeout);
        self.lock().take()
    }
}

impl Dock for Bay {
    /// The connection thread's side: sleeps until the connection comes back, or, woken for
    /// its pending request, takes it back itself (see [`Berth::due_back`]).
    fn park(&self, exchange: Box<Exchange>) -> (Box<Exchange>, Resume) {
        let Some(line) = exchange.line.clone() else { return (exchange, Resume::Read) };
        let shared = exchange.shared.clone();
        self.keeper.call_once(|| keep(&shared));
        if self.parked.fetch_add(1, Ordering::AcqRel) == 0 {
            // Under the lock the keeper looks at `parked` with: it is asleep or still looking.
            let _berths = self.lock();
            self.docked.notify_one();
        }
        let back = self.berth(exchange, line, &shared);
        self.parked.fetch_sub(1, Ordering::AcqRel);
        back
    }

    fn doze(&self, timeout: Duration) {
        let berths = self.lock();
        if self.parked.load(Ordering::Acquire) == 0 {
            drop(self.docked.wait_timeout(berths, timeout));
        }
    }

    fn sweep(&self, shared: &Shared, idle: bool) -> bool {
        if stuck(shared) {
            self.release_all();
        } else if idle {
            let fds: Vec<RawFd> = self.lock().keys().collect();
            for fd in fds {
                if let Some((berth, resume)) = self.take_back(fd, shared, false) {
                    berth.go_home(resume);
                }
            }
        }
        self.parked.load(Ordering::Acquire) > 0
    }
}

impl Bay {
    /// [`Dock::park`]'s stay: docked, until the connection comes back or is taken back.
    #[inline]
    fn berth(
        &self,
        exchange: Box<Exchange>,
        line: Arc<DirectLine>,
        shared: &Shared,
    ) -> (Box<Exchange>, Resume) {
        let fd = exchange.writer.fd();
        let home = Home::new(line);
        let (since, pending) = (Instant::now(), None);
        self.dock(Berth { exchange: Some(exchange), home: home.clone(), since, pending });
        loop {
            if let Some(back) = home.wait(LOOK) {
                return back;
            }
            if let Some((mut berth, resume)) = self.take_back(fd, shared, stuck(shared))
                && let Some(exchange) = berth.exchange.take()
            {
                return (exchange, resume);
            }
        }
    }
}

/// Starts the keeper, a thread that gives parked connections back to their threads when they
/// should have them (see [`Dock::sweep`]): every `SWEEP` while a connection is parked, else
/// asleep until one is, but for a look every [`LOOK`] at whether the server is gone (then it
/// ends). Without it, each parked thread still looks every [`LOOK`].
fn keep(shared: &Arc<Shared>) {
    let Some(dock) = shared.dock.clone() else { return };
    let shared = Arc::downgrade(shared);
    let keeper = move || {
        let mut sweeps = 0u32;
        while let Some(shared) = shared.upgrade() {
            sweeps = sweeps.wrapping_add(1);
            let parked = dock.sweep(&shared, sweeps.is_multiple_of(IDLE_EVERY));
            drop(shared);
            match parked {
                true => std::thread::sleep(SWEEP),
                false => dock.doze(LOOK),
            }
        }
    };
    let name = "http keeper".to_string();
    if let Err(e) = std::thread::Builder::new().name(name).stack_size(64 * 1024).spawn(keeper) {
        log::warn!(target: LOG, "cannot start the parked connections' keeper: {e}");
    }
}

/// Where connection threads park (see [`Dock`]), and the loop's watcher of it.
pub type Parking = (Option<Arc<dyn Dock>>, Option<Box<dyn Watcher>>);

/// A bay, and the loop's watcher of it, for a loop taking its work from `rx`: none where
/// the descriptors for it cannot be had (connections then never park).
pub fn watch(rx: &Receiver<Inbound>) -> Parking {
    let bay = Bay::new(rx);
    let watcher = bay.clone().map(|bay| Box::new(Watch::new(bay)) as Box<dyn Watcher>);
    (bay.map(|bay| bay as Arc<dyn Dock>), watcher)
}

/// The dispatching loop's side of the bay.
pub struct Watch {
    bay: Arc<Bay>,
    /// The descriptors the last wait found ready.
    ready: Vec<RawFd>,
    /// When the parked connections were last looked at.
    polled: Instant,
    /// The ticker was ready since the loop last asked.
    ticked: bool,
}

/// What became of a parked connection whose request was pending.
enum Looked {
    /// Still pending: back in the bay.
    Pending,
    /// Answered, or nothing was pending: the connection, parked again by the caller.
    Parked(Berth),
    /// Given back to its thread.
    Home,
}

impl Watch {
    fn new(bay: Arc<Bay>) -> Watch {
        Watch { bay, ready: Vec::new(), polled: Instant::now(), ticked: false }
    }

    /// Returns a connection the loop took out of the bay to read from (still watched).
    fn put_back(&self, berth: Berth) {
        let fd = berth.fd();
        // A descriptor is parked once: an older berth under it would be a bug, not a loss.
        if let Some(older) = self.bay.lock().insert(fd, berth) {
            debug_assert!(false, "descriptor {fd} parked twice");
            drop(older);
        }
    }

    /// Gives `berth` back to its thread, watched no more.
    fn send_home(&self, berth: Berth, resume: Resume) {
        let _ = self.bay.epoll.remove(berth.fd());
        berth.go_home(resume);
    }

    /// What became of `berth`'s pending request: with `take` (its socket has more input, or
    /// its end) one not answered yet goes back to its thread, as a thread takes a request
    /// back from the loop (`direct`).
    fn look(&self, mut berth: Berth, take: bool) -> Looked {
        let Some(begun) = berth.pending.take() else {
            return Looked::Parked(berth);
        };
        let (_, _, Step::Pump { claim: Some(claim), name, .. }) = &*begun else {
            self.send_home(berth, Resume::Request(begun));
            return Looked::Home;
        };
        let mode = claim.line().settle(take);
        let (written, name) = (claim.line().written_at(), name.clone());
        match mode {
            Mode::Detached => {
                berth.pending = Some(begun);
                self.put_back(berth);
                Looked::Pending
            }
            Mode::Written(status, reuse) => {
                if let Some(exchange) = berth.exchange.as_mut() {
                    exchange.answered = written;
                }
                let (head, read, _) = *begun;
                match self.finish(berth, head, read, (status, name, reuse)) {
                    Some(berth) => Looked::Parked(berth),
                    None => Looked::Home,
                }
            }
            Mode::Attached | Mode::Begun => {
                self.send_home(berth, Resume::Request(begun));
                Looked::Home
            }
        }
    }

    /// Ends a request served on the loop: sends what it wrote, and keeps the connection
    /// parked (`Some`) when it is all sent and the connection waits for its next request;
    /// else gives it back to its thread to write the rest and go on.
    fn finish(
        &self,
        mut berth: Berth,
        head: Head,
        read: Instant,
        outcome: Outcome,
    ) -> Option<Berth> {
        let exchange = berth.exchange.as_mut()?;
        let mut rest = std::mem::take(&mut exchange.unsent);
        if !rest.is_empty() {
            // A peer that left: its thread finds out writing the rest, and closes.
            let sent = exchange.writer.send_now(&rest).unwrap_or(0);
            rest.drain(..sent);
        }
        let stays = rest.is_empty()
            && outcome.2
            && head.keep_alive
            && exchange.reader.inner.buffer().is_empty()
            && !exchange.shared.stop.load(Ordering::Relaxed);
        if !stays {
            let begun = Box::new((head, read, Step::Finish(outcome, rest)));
            self.send_home(berth, Resume::Request(begun));
            return None;
        }
        exchange.unsent = rest;
        exchange.after(head, read, outcome);
        berth.since = Instant::now();
        Some(berth)
    }

    /// A parked connection has input, or its end: a whole request is read and served here,
    /// anything else goes back to its thread.
    fn serve(&mut self, fd: RawFd) {
        let Some(berth) = self.bay.lock().remove(fd) else { return };
        let mut berth = match self.look(berth, true) {
            Looked::Parked(berth) => berth,
            Looked::Pending | Looked::Home => return,
        };
        let Some(exchange) = berth.exchange.as_mut() else { return };
        // One read, into the connection's own buffer (empty while parked): what did not make
        // a whole request there is its thread's to go on reading, from that buffer.
        exchange.writer.set_reads_wait(false);
        let whole = exchange.reader.inner.fill_buf().map(whole_request);
        if !matches!(whole, Ok(true)) {
            exchange.writer.set_reads_wait(true);
        }
        match whole {
            Ok(true) => {}
            // Woken for nothing.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return self.put_back(berth),
            // Its end, an error, or a request its thread is to read.
            _ => return self.send_home(berth, Resume::Read),
        }
        exchange.on_loop = true;
        // A fault in reading or checking a request ends its connection, as it would end its
        // thread, not the loop.
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| exchange.read()));
        exchange.writer.set_reads_wait(true);
        exchange.on_loop = false;
        let Ok(read) = read else {
            log::error!(target: LOG, "{}: reading a request failed; closing", exchange.peer);
            exchange.writer.shutdown(std::net::Shutdown::Both);
            return self.send_home(berth, Resume::Expired);
        };
        let handoff = exchange.handoff.take();
        match (read, handoff) {
            (Err(ReadError::Closed), _) => self.send_home(berth, Resume::Read),
            (Err(ReadError::Status(status, why)), _) => {
                self.send_home(berth, Resume::Refused(status, why))
            }
            (Ok((head, read, _)), Some(step @ Step::Pump { claim: Some(_), .. })) => {
                berth.pending = Some(Box::new((head, read, step)));
                self.put_back(berth);
            }
            (Ok((head, read, _)), Some(step)) => {
                self.send_home(berth, Resume::Request(Box::new((head, read, step))))
            }
            (Ok((head, read, outcome)), None) => {
                if let Some(berth) = self.finish(berth, head, read, outcome) {
                    self.put_back(berth);
                }
            }
        }
    }
}

impl Watcher for Watch {
    fn next(&mut self, rx: &Receiver<Inbound>, readiness: &Readiness) -> Recv<Inbound> {
        // What is queued first, but the parked connections are looked at every millisecond
        // all the same, so that a queue that never empties does not starve them: what they
        // bring is queued behind it. With nothing queued, both are waited on at once.
        match rx.recv_timeout(Duration::ZERO) {
            Recv::Item(work) if self.polled.elapsed() >= FAIR => {
                self.wait(Some(Duration::ZERO));
                self.serve_ready(readiness);
                return Recv::Item(work);
            }
            Recv::TimedOut if rx.arm() => {}
            Recv::TimedOut => return rx.recv_timeout(Duration::ZERO),
            got => return got,
        }
        // No timeout: the ticker ends the wait within a tick.
        self.wait(None);
        // Before serving: what the loop queues to itself rings no bell.
        rx.disarm();
        self.serve_ready(readiness);
        rx.recv_timeout(Duration::ZERO)
    }

    fn ticked(&mut self) -> bool {
        std::mem::take(&mut self.ticked)
    }

    /// A connection whose request was answered waits for its next one; one whose request
    /// went another way goes back to its thread.
    fn settle(&mut self, line: &DirectLine) {
        let Some(berth) = self.bay.lock().remove(line.fd()) else { return };
        match self.look(berth, false) {
            Looked::Pending | Looked::Home => {}
            Looked::Parked(berth) => self.put_back(berth),
        }
    }
}

impl Watch {
    /// Waits up to `timeout` (`None`: until one is ready, the ticker within a tick) for
    /// parked connections, the bell and the ticker.
    fn wait(&mut self, timeout: Option<Duration>) {
        self.bay.epoll.wait(&mut self.ready, timeout);
        self.polled = Instant::now();
    }

    /// Serves the parked connections the last wait found with input.
    fn serve_ready(&mut self, readiness: &Readiness) {
        let ready = std::mem::take(&mut self.ready);
        let (bell, ticker) = (self.bay.bell.as_raw_fd(), self.bay.ticker.as_raw_fd());
        for &fd in &ready {
            if fd == bell || fd == ticker {
                // Both count: read back to zero, neither is ready until rung or ticked again.
                let counter = if fd == bell { &self.bay.bell } else { &self.bay.ticker };
                let _ = (&*counter).read(&mut [0; 8]);
                self.ticked |= fd == ticker;
            } else {
                readiness.busy();
                self.serve(fd);
                readiness.idle();
            }
        }
        self.ready = ready;
    }
}

impl Drop for Watch {
    /// The loop is done: every parked connection goes back to its thread.
    fn drop(&mut self) {
        self.bay.release_all();
    }
}

/// Whether `bytes` (what one read from a parked socket brought) begin with one whole POST
/// whose body's length is given by `Content-Length`: the only requests the loop reads itself.
/// A head it would have to read as the parser does to be sure of (chunked, `Expect`, a length
/// given twice or not in plain digits, a line the parser would end the head at differently)
/// is left to its thread, and so is anything not all come.
fn whole_request(bytes: &[u8]) -> bool {
    if !bytes.starts_with(b"POST ") {
        return false;
    }
    let mut length = None;
    let mut at = 0;
    for end in memchr::memchr_iter(b'\n', bytes) {
        let line = &bytes[at..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        at = end + 1;
        if line.is_empty() {
            return length.is_some_and(|n| at + n <= bytes.len());
        }
        // Three names matter, told apart by their first letter before one is compared.
        let length_value = match line[0] | 0x20 {
            b't' if field_value(line, b"transfer-encoding").is_some() => return false,
            b'e' if field_value(line, b"expect").is_some() => return false,
            b'c' => field_value(line, b"content-length"),
            _ => None,
        };
        let Some(value) = length_value.map(<[u8]>::trim_ascii) else { continue };
        let digits = !value.is_empty() && value.len() <= 9 && value.iter().all(u8::is_ascii_digit);
        if length.is_some() || !digits {
            return false;
        }
        length = std::str::from_utf8(value).ok().and_then(|v| v.parse::<usize>().ok());
    }
    false
}

/// The value of header `line` when its name is `name` (any case), which a colon ends at once: a
/// name with blanks before its colon is no name, and the parser refuses it.
fn field_value<'a>(line: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let named = line.get(..name.len()).is_some_and(|n| n.eq_ignore_ascii_case(name));
    named.then(|| line[name.len()..].strip_prefix(b":")).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_post_with_a_plain_length_is_the_loops_to_read() {
        let head = "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n";
        assert!(whole_request(format!("{head}{{}}").as_bytes()));
        assert!(whole_request(format!("{head}{{}}POST /mcp").as_bytes()), "more may follow");
        assert!(!whole_request(format!("{head}{{").as_bytes()), "the body is not all here");
        assert!(!whole_request(&head.as_bytes()[..head.len() - 2]), "nor the head");
        let bare = "POST /mcp HTTP/1.1\nHost: a\ncontent-length: 2\n\n{}";
        assert!(whole_request(bare.as_bytes()), "bare line ends, as the parser reads them");
        for refused in [
            "GET /mcp HTTP/1.1\r\nHost: a\r\n\r\n",
            "\r\nPOST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}",
            "POST /mcp HTTP/1.1\r\nHost: a\r\n\r\n",
            "POST /mcp HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            "POST /mcp HTTP/1.1\r\nContent-Length: +2\r\n\r\n{}",
            "POST /mcp HTTP/1.1\r\nContent-Length: 1234567890\r\n\r\n{}",
            "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n{}",
            "POST /mcp HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
        ] {
            assert!(!whole_request(refused.as_bytes()), "{refused:?}");
        }
        // The head ends at its first empty line, whatever follows.
        let early = "POST /mcp HTTP/1.1\r\nHost: a\r\n\nContent-Length: 2\r\n\r\n{}";
        assert!(!whole_request(early.as_bytes()));
        // Names in any case; one that only begins like them is another.
        let post =
            |fields: &str| whole_request(format!("POST / HTTP/1.1\r\n{fields}\r\n{{}}").as_bytes());
        assert!(post("CONTENT-LENGTH:2\r\n"));
        assert!(!post("content-length: 2\r\nTRANSFER-ENCODING: chunked\r\n"));
        assert!(!post("EXPECT: 100-continue\r\nContent-length: 2\r\n"));
        assert!(post("Expected: 1\r\nTransfer-Encodings: x\r\nContent-Length: 2\r\n"));
        assert!(!post("Content-Lengths: 2\r\n"), "no length");
        assert!(!post("Content-Length : 2\r\n"), "no length either");
    }
}
