//! A small blocking queue between threads (a mutex, a condition variable, a deque): the
//! channel from connection threads to the dispatching loop, each request's way back, and the
//! spans on their way to the OTLP exporter's thread.
//! `std::sync::mpsc` would do, but every message type instantiates all three of its channel
//! flavours, a cost the static binary's size budget notices. Bounded in items, and in bytes
//! in each of [`LANES`] lanes, so that what one kind of sender queues cannot crowd out
//! another's. An item can be withdrawn by its sender while it waits (its bytes are freed at
//! once), and the receiver can take the first item that suits it, leaving the others in place
//! and in order. A receiver that waits on something else as well (the HTTP loop in `epoll`)
//! arms a bell instead of sleeping here: the next send rings it.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

struct Shared<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
    capacity: usize,
    max_bytes: usize,
    /// What a send rings while the receiver waits elsewhere ([`Receiver::arm`]).
    bell: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
}

struct State<T> {
    /// Each item with its size and ticket; tickets increase front to back.
    items: VecDeque<(T, Size, u64)>,
    /// The bytes waiting in each lane.
    bytes: [usize; LANES],
    /// The last ticket given.
    ticket: u64,
    senders: usize,
    receiving: bool,
    /// How many receive calls sleep on the condition variable: only then does a send or the
    /// last sender's drop wake one (a wake-up nobody waits for still costs a system call).
    waiting: usize,
    /// The receiver waits elsewhere: the next send (or the last sender's drop) rings the bell.
    armed: bool,
}

impl<T> Shared<T> {
    /// Rings the bell when the receiver had armed it: called once the lock is let go.
    fn ring_if(&self, armed: bool) {
        if armed && let Some(ring) = self.bell.get() {
            ring();
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Why a send failed.
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// `capacity` items, or the byte budget, are waiting: the receiver does not keep up.
    Full,
    /// The receiver is gone.
    Closed,
}

/// What a receive found.
pub enum Recv<T> {
    Item(T),
    TimedOut,
    /// Empty, and every sender is gone.
    Closed,
}

pub struct Sender<T>(Arc<Shared<T>>);
pub struct Receiver<T>(Arc<Shared<T>>);

/// How many byte budgets a queue keeps.
pub const LANES: usize = 2;

/// An item's bytes, and the lane they count in.
#[derive(Clone, Copy)]
struct Size {
    bytes: usize,
    lane: usize,
}

impl<T> State<T> {
    /// Takes the item at `at` out, and its bytes out of its lane.
    fn take(&mut self, at: usize) -> Option<T> {
        let (item, size, _) = self.items.remove(at)?;
        self.bytes[size.lane] -= size.bytes;
        Some(item)
    }
}

/// Names one item sent, so that its sender can withdraw it while it waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

/// How far [`Receiver::recv_matching`] has looked: items up to here did not suit it.
#[derive(Debug, Default)]
pub struct Seen(u64);

/// A queue holding at most `capacity` items, and in each lane items whose sizes add up to at
/// most `max_bytes` (one item is let in alone whatever its size: it was read within the body
/// limit already). An item of size 0 counts against `capacity` only.
pub fn sized_queue<T>(capacity: usize, max_bytes: usize) -> (Sender<T>, Receiver<T>) {
    let state = State {
        items: VecDeque::new(),
        bytes: [0; LANES],
        ticket: 0,
        senders: 1,
        receiving: true,
        waiting: 0,
        armed: false,
    };
    let bell = std::sync::OnceLock::new();
    let ready = Condvar::new();
    let shared = Arc::new(Shared { state: Mutex::new(state), ready, capacity, max_bytes, bell });
    (Sender(shared.clone()), Receiver(shared))
}

impl<T> Sender<T> {
    /// Queues `item`, counting `bytes` against the byte budget of the first lane, without
    /// waiting; its ticket can withdraw it.
    pub fn send_sized(&self, item: T, bytes: usize) -> Result<Ticket, Refused> {
        self.send_in(item, bytes, 0)
    }

    /// Queues `item`, counting `bytes` against the budget of `lane` (below [`LANES`]).
    pub fn send_in(&self, item: T, bytes: usize, lane: usize) -> Result<Ticket, Refused> {
        let mut state = self.0.lock();
        if !state.receiving {
            return Err(Refused::Closed);
        }
        let held = state.bytes[lane];
        let over_budget = bytes > 0 && held > 0 && held.saturating_add(bytes) > self.0.max_bytes;
        if state.items.len() >= self.0.capacity || over_budget {
            return Err(Refused::Full);
        }
        state.bytes[lane] += bytes;
        state.ticket += 1;
        let ticket = state.ticket;
        state.items.push_back((item, Size { bytes, lane }, ticket));
        let waiting = state.waiting > 0;
        let armed = std::mem::take(&mut state.armed);
        // Woken after the lock is let go, so the receiver does not wake only to wait for it.
        drop(state);
        if waiting {
            self.0.ready.notify_one();
        }
        self.0.ring_if(armed);
        Ok(Ticket(ticket))
    }

    /// The bytes of the items waiting now, in every lane.
    pub fn queued_bytes(&self) -> usize {
        self.0.lock().bytes.iter().sum()
    }

    /// Takes back the item `ticket` names if it still waits (`None`: it was received), so
    /// that its bytes no longer count; the caller drops it, outside the lock.
    pub fn withdraw(&self, ticket: Ticket) -> Option<T> {
        let mut state = self.0.lock();
        let at = state.items.binary_search_by_key(&ticket.0, |(_, _, t)| *t).ok()?;
        state.take(at)
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.0.lock().senders += 1;
        Sender(self.0.clone())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.senders -= 1;
        let waiting = state.waiting > 0 && state.senders == 0;
        let armed = state.senders == 0 && std::mem::take(&mut state.armed);
        drop(state);
        if waiting {
            self.0.ready.notify_all();
        }
        self.0.ring_if(armed);
    }
}

// The HTTP loop waits in `epoll` on Linux only: elsewhere nothing arms a bell.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl<T> Receiver<T> {
    /// Sets what a send rings while the receiver is armed; once (later calls are ignored).
    pub fn set_bell(&self, ring: impl Fn() + Send + Sync + 'static) {
        let _ = self.0.bell.set(Box::new(ring));
    }

    /// Before waiting elsewhere: true when nothing waits here and senders remain, and then the
    /// next send rings the bell; false when there is something to receive (or nothing ever
    /// will be: every sender is gone).
    pub fn arm(&self) -> bool {
        let mut state = self.0.lock();
        state.armed = state.items.is_empty() && state.senders > 0;
        state.armed
    }

    /// After waiting elsewhere: sends no longer ring (a wait woken by something else).
    pub fn disarm(&self) {
        self.0.lock().armed = false;
    }
}

impl<T> Receiver<T> {
    /// The next item, waiting as long as it takes; `Closed` once empty with every sender gone.
    pub fn recv(&self) -> Recv<T> {
        loop {
            match self.recv_timeout(Duration::from_secs(3600)) {
                Recv::TimedOut => continue,
                end => return end,
            }
        }
    }

    /// The next item, waiting up to `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Recv<T> {
        let deadline = Self::deadline(timeout);
        let mut state = self.0.lock();
        loop {
            if let Some(item) = state.take(0) {
                return Recv::Item(item);
            }
            match self.wait(state, deadline) {
                Ok(next) => state = next,
                Err(end) => return end,
            }
        }
    }

    /// The first item `wanted` accepts, waiting up to `timeout`; the others stay where they
    /// are. `seen` carries over between calls with the same `wanted`, so each item is looked
    /// at once.
    pub fn recv_matching(
        &self,
        seen: &mut Seen,
        wanted: impl Fn(&T) -> bool,
        timeout: Duration,
    ) -> Recv<T> {
        let deadline = Self::deadline(timeout);
        let mut state = self.0.lock();
        loop {
            let first_new = state.items.partition_point(|(_, _, t)| *t <= seen.0);
            let found = (first_new..state.items.len()).find(|&at| wanted(&state.items[at].0));
            if let Some(item) = found.and_then(|at| state.take(at)) {
                return Recv::Item(item);
            }
            if let Some((_, _, last)) = state.items.back() {
                seen.0 = *last;
            }
            match self.wait(state, deadline) {
                Ok(next) => state = next,
                Err(end) => return end,
            }
        }
    }

    /// When a wait of `timeout` ends; `None` for a look that does not wait (the dispatching
    /// loop makes several a call), which then reads no clock.
    fn deadline(timeout: Duration) -> Option<Instant> {
        (!timeout.is_zero()).then(|| Instant::now() + timeout)
    }

    /// Waits for a send until `deadline` (`None`: not at all): the lock again, or why there is
    /// nothing to wait for.
    fn wait<'a>(
        &'a self,
        state: MutexGuard<'a, State<T>>,
        deadline: Option<Instant>,
    ) -> Result<MutexGuard<'a, State<T>>, Recv<T>> {
        if state.senders == 0 {
            return Err(Recv::Closed);
        }
        let Some(deadline) = deadline else { return Err(Recv::TimedOut) };
        let now = Instant::now();
        if now >= deadline {
            return Err(Recv::TimedOut);
        }
        let mut state = state;
        state.waiting += 1;
        let mut state =
            self.0.ready.wait_timeout(state, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        state.waiting -= 1;
        Ok(state)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.receiving = false;
        state.items.clear();
        state.bytes = [0; LANES];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recv_waits_for_the_next_item_until_every_sender_is_gone() {
        let (tx, rx) = sized_queue(4, usize::MAX);
        let waiter = std::thread::spawn(move || {
            let first = matches!(rx.recv(), Recv::Item(7));
            (first, matches!(rx.recv(), Recv::Closed))
        });
        std::thread::sleep(Duration::from_millis(50));
        tx.send_sized(7, 0).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        drop(tx);
        assert_eq!(waiter.join().unwrap(), (true, true));
    }

    #[test]
    fn bounded_and_knows_when_either_side_is_gone() {
        let (tx, rx) = sized_queue(2, usize::MAX);
        let second = tx.clone();
        assert!(tx.send_sized(1, 0).is_ok());
        assert!(second.send_sized(2, 0).is_ok());
        assert_eq!(tx.send_sized(3, 0), Err(Refused::Full));
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item(1)));
        let waiter = std::thread::spawn(move || {
            let mut got = Vec::new();
            loop {
                match rx.recv_timeout(Duration::from_secs(5)) {
                    Recv::Item(n) => got.push(n),
                    Recv::TimedOut => panic!("timed out"),
                    Recv::Closed => return got,
                }
            }
        });
        second.send_sized(4, 0).unwrap();
        drop((tx, second));
        assert_eq!(waiter.join().unwrap(), [2, 4]);
        let (tx, rx) = sized_queue::<u8>(1, usize::MAX);
        drop(rx);
        assert_eq!(tx.send_sized(1, 0), Err(Refused::Closed));
    }

    #[test]
    fn sized_items_are_bounded_in_bytes_but_one_always_fits() {
        let (tx, rx) = sized_queue(10, 100);
        assert!(tx.send_sized('a', 150).is_ok(), "one item alone is let in whatever its size");
        assert_eq!(tx.send_sized('b', 1), Err(Refused::Full));
        assert!(tx.send_sized('c', 0).is_ok(), "unsized items count only against the item cap");
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item('a')));
        assert!(tx.send_sized('d', 60).is_ok());
        assert!(tx.send_sized('e', 40).is_ok());
        assert_eq!(tx.send_sized('f', 1), Err(Refused::Full));
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item('c')));
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item('d')));
        assert!(tx.send_sized('f', 60).is_ok(), "what was received no longer counts");
        assert!(tx.send_in('g', 90, 1).is_ok(), "another lane, another budget");
        assert_eq!(tx.send_in('h', 20, 1), Err(Refused::Full));
    }

    #[test]
    fn a_withdrawn_item_frees_its_bytes_and_matching_leaves_the_rest_in_order() {
        let (tx, rx) = sized_queue(10, 100);
        let a = tx.send_sized('a', 60).unwrap();
        assert_eq!(tx.send_sized('b', 60), Err(Refused::Full));
        assert_eq!(tx.withdraw(a), Some('a'));
        assert_eq!(tx.withdraw(a), None, "withdrawn once");
        let b = tx.send_sized('b', 60).unwrap();
        tx.send_sized('c', 0).unwrap();
        tx.send_sized('d', 0).unwrap();
        let mut seen = Seen::default();
        let vowel = |c: &char| "aeiou".contains(*c);
        assert!(matches!(rx.recv_matching(&mut seen, vowel, Duration::ZERO), Recv::TimedOut));
        tx.send_sized('e', 0).unwrap();
        assert!(matches!(rx.recv_matching(&mut seen, vowel, Duration::ZERO), Recv::Item('e')));
        assert_eq!(tx.send_sized('f', 60), Err(Refused::Full), "b still counts");
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item('b')));
        assert_eq!(tx.withdraw(b), None, "received already");
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item('c')));
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item('d')));
        drop(tx);
        assert!(matches!(rx.recv_matching(&mut seen, vowel, Duration::ZERO), Recv::Closed));
    }

    #[test]
    fn an_armed_receiver_is_rung_once_by_the_next_send_or_the_last_drop() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (tx, rx) = sized_queue(10, 100);
        let rung = Arc::new(AtomicUsize::new(0));
        let counter = rung.clone();
        rx.set_bell(move || {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        tx.send_sized(1, 0).unwrap();
        assert_eq!(rung.load(Ordering::Relaxed), 0, "not armed: no ring");
        assert!(!rx.arm(), "an item waits: nothing to arm for");
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item(1)));
        assert!(rx.arm());
        tx.send_sized(2, 0).unwrap();
        tx.send_sized(3, 0).unwrap();
        assert_eq!(rung.load(Ordering::Relaxed), 1, "rung by the first send alone");
        assert!(!rx.arm() && rung.load(Ordering::Relaxed) == 1);
        while let Recv::Item(_) = rx.recv_timeout(Duration::ZERO) {}
        assert!(rx.arm());
        rx.disarm();
        tx.send_sized(4, 0).unwrap();
        assert_eq!(rung.load(Ordering::Relaxed), 1, "disarmed: no ring");
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item(4)));
        let second = tx.clone();
        assert!(rx.arm());
        drop(tx);
        assert_eq!(rung.load(Ordering::Relaxed), 1, "a sender remains");
        drop(second);
        assert_eq!(rung.load(Ordering::Relaxed), 2, "the last sender's drop rings");
        assert!(!rx.arm(), "closed: nothing to wait for");
    }
}
