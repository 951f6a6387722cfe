//! A small blocking queue between threads (a mutex, a condition variable, a deque): the
//! channel from connection threads to the dispatching loop, and each request's way back.
//! `std::sync::mpsc` would do, but every message type instantiates all three of its channel
//! flavours, a cost the static binary's size budget notices.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

struct Shared<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
    capacity: usize,
}

struct State<T> {
    items: VecDeque<T>,
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
    /// `capacity` items are waiting: the receiver does not keep up.
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
    let state = State { items: VecDeque::new(), senders: 1, receiving: true };
    let shared = Arc::new(Shared { state: Mutex::new(state), ready: Condvar::new(), capacity });
    (Sender(shared.clone()), Receiver(shared))
}

impl<T> Sender<T> {
    /// Queues `item` without waiting.
    pub fn send(&self, item: T) -> Result<(), Refused> {
        let mut state = self.0.lock();
        if !state.receiving {
            return Err(Refused::Closed);
        }
        if state.items.len() >= self.0.capacity {
            return Err(Refused::Full);
        }
        state.items.push_back(item);
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
            if let Some(item) = state.items.pop_front() {
                return Recv::Item(item);
            }
            if state.senders == 0 {
                return Recv::Closed;
            }
            let now = Instant::now();
            if now >= deadline {
                return Recv::TimedOut;
            }
            state = self.0.ready.wait_timeout(state, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.receiving = false;
        state.items.clear();
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
}
