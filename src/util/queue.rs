//! A small blocking queue between threads (a mutex, a condition variable, a deque): the
//! channel from connection threads to the dispatching loop, and each request's way back.
//! `std::sync::mpsc` would do, but every message type instantiates all three of its channel
//! flavours, a cost the static binary's size budget notices. Bounded in items, and, for
//! items sent with a size, in bytes.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

struct Shared<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
    capacity: usize,
    max_bytes: usize,
}

struct State<T> {
    /// Each item with the bytes it was sent with.
    items: VecDeque<(T, usize)>,
    bytes: usize,
    senders: usize,
    receiving: bool,
}

impl<T> Shared<T> {
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

/// A queue holding at most `capacity` items.
pub fn queue<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    sized_queue(capacity, usize::MAX)
}

/// A queue holding at most `capacity` items, and items sent with a size adding up to at
/// most `max_bytes` (one such item is let in alone whatever its size: it was read within
/// the body limit already).
pub fn sized_queue<T>(capacity: usize, max_bytes: usize) -> (Sender<T>, Receiver<T>) {
    let state = State { items: VecDeque::new(), bytes: 0, senders: 1, receiving: true };
    let shared =
        Arc::new(Shared { state: Mutex::new(state), ready: Condvar::new(), capacity, max_bytes });
    (Sender(shared.clone()), Receiver(shared))
}

impl<T> Sender<T> {
    /// Queues `item` without waiting.
    pub fn send(&self, item: T) -> Result<(), Refused> {
        self.send_sized(item, 0)
    }

    /// Queues `item`, counting `bytes` against the byte budget, without waiting.
    pub fn send_sized(&self, item: T, bytes: usize) -> Result<(), Refused> {
        let mut state = self.0.lock();
        if !state.receiving {
            return Err(Refused::Closed);
        }
        let over_budget =
            bytes > 0 && state.bytes > 0 && state.bytes.saturating_add(bytes) > self.0.max_bytes;
        if state.items.len() >= self.0.capacity || over_budget {
            return Err(Refused::Full);
        }
        state.bytes += bytes;
        state.items.push_back((item, bytes));
        self.0.ready.notify_one();
        Ok(())
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
        self.0.lock().senders -= 1;
        self.0.ready.notify_all();
    }
}

impl<T> Receiver<T> {
    /// The next item, waiting up to `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Recv<T> {
        let deadline = Instant::now() + timeout;
        let mut state = self.0.lock();
        loop {
            if let Some((item, bytes)) = state.items.pop_front() {
                state.bytes -= bytes;
                return Recv::Item(item);
            }
            if state.senders == 0 {
                return Recv::Closed;
            }
            let now = Instant::now();
            if now >= deadline {
                return Recv::TimedOut;
            }
            state = self
                .0
                .ready
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.receiving = false;
        state.items.clear();
        state.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_knows_when_either_side_is_gone() {
        let (tx, rx) = queue(2);
        let second = tx.clone();
        assert_eq!(tx.send(1), Ok(()));
        assert_eq!(second.send(2), Ok(()));
        assert_eq!(tx.send(3), Err(Refused::Full));
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
        second.send(4).unwrap();
        drop((tx, second));
        assert_eq!(waiter.join().unwrap(), [2, 4]);
        let (tx, rx) = queue::<u8>(1);
        drop(rx);
        assert_eq!(tx.send(1), Err(Refused::Closed));
    }

    #[test]
    fn sized_items_are_bounded_in_bytes_but_one_always_fits() {
        let (tx, rx) = sized_queue(10, 100);
        assert_eq!(tx.send_sized('a', 150), Ok(()), "one item alone is let in whatever its size");
        assert_eq!(tx.send_sized('b', 1), Err(Refused::Full));
        assert_eq!(tx.send('c'), Ok(()), "unsized items count only against the item cap");
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item('a')));
        assert_eq!(tx.send_sized('d', 60), Ok(()));
        assert_eq!(tx.send_sized('e', 40), Ok(()));
        assert_eq!(tx.send_sized('f', 1), Err(Refused::Full));
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item('c')));
        assert!(matches!(rx.recv_timeout(Duration::ZERO), Recv::Item('d')));
        assert_eq!(tx.send_sized('f', 60), Ok(()), "what was received no longer counts");
    }
}
