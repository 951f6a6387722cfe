//! A channel between threads, with what the command runner and `replay` ask of one: a send
//! that waits for room, a receive that waits up to a timeout, and either side's end seen by
//! the other. One mutex and two condition variables: std's `mpsc` compiles three flavours of
//! channel for each item type, about 8 KB a type in the static binary.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Why [`Receiver::recv_timeout`] returned nothing.
#[derive(Debug, PartialEq, Eq)]
pub enum RecvError {
    Timeout,
    /// Every sender is gone and nothing is left.
    Disconnected,
}

pub struct Sender<T>(Arc<Shared<T>>);
pub struct Receiver<T>(Arc<Shared<T>>);

struct Shared<T> {
    state: Mutex<State<T>>,
    /// Rung when an item comes or the last sender goes.
    items: Condvar,
    /// Rung when an item goes or the receiver does.
    room: Condvar,
}

struct State<T> {
    queue: VecDeque<T>,
    bound: usize,
    senders: usize,
    receiving: bool,
}

/// A channel holding at most `bound` items (at least one) that wait to be received.
pub fn channel<T>(bound: usize) -> (Sender<T>, Receiver<T>) {
    let state = State { queue: VecDeque::new(), bound: bound.max(1), senders: 1, receiving: true };
    let shared =
        Arc::new(Shared { state: Mutex::new(state), items: Condvar::new(), room: Condvar::new() });
    (Sender(shared.clone()), Receiver(shared))
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> Sender<T> {
    /// Sends `item`, waiting while the channel is full; gives it back when the receiver is
    /// gone.
    pub fn send(&self, item: T) -> Result<(), T> {
        let mut state = self.0.lock();
        while state.receiving && state.queue.len() >= state.bound {
            state = self.0.room.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        if !state.receiving {
            return Err(item);
        }
        state.queue.push_back(item);
        self.0.items.notify_one();
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
        let mut state = self.0.lock();
        state.senders -= 1;
        if state.senders == 0 {
            self.0.items.notify_all();
        }
    }
}

impl<T> Receiver<T> {
    /// The next item, waiting up to `timeout` for one.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvError> {
        // A timeout past the clock's end waits as long as it takes.
        let deadline = Instant::now().checked_add(timeout);
        let mut state = self.0.lock();
        loop {
            if let Some(item) = state.queue.pop_front() {
                self.0.room.notify_one();
                return Ok(item);
            }
            if state.senders == 0 {
                return Err(RecvError::Disconnected);
            }
            state = match deadline {
                None => self.0.items.wait(state).unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(RecvError::Timeout);
                    }
                    let waited = self.0.items.wait_timeout(state, left);
                    waited.unwrap_or_else(PoisonError::into_inner).0
                }
            };
        }
    }

    /// The next item, waiting for one; `None` once every sender is gone and nothing is left.
    pub fn recv(&self) -> Option<T> {
        self.recv_timeout(Duration::MAX).ok()
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.0.lock().receiving = false;
        self.0.room.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_channel_waits_for_room_and_each_side_sees_the_other_go() {
        let (send, receive) = channel(1);
        let sender = send.clone();
        let second = std::thread::spawn(move || {
            sender.send(1).unwrap();
            // Waits for room until the first is received.
            sender.send(2).unwrap();
        });
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(receive.recv_timeout(Duration::from_secs(5)), Ok(1));
        assert_eq!(receive.recv_timeout(Duration::from_secs(5)), Ok(2));
        second.join().unwrap();
        assert_eq!(receive.recv_timeout(Duration::from_millis(20)), Err(RecvError::Timeout));
        drop(send);
        assert_eq!(receive.recv_timeout(Duration::from_secs(5)), Err(RecvError::Disconnected));
        assert_eq!(receive.recv(), None);

        let (send, receive) = channel(1);
        send.send("kept").unwrap();
        let waiting = std::thread::spawn(move || send.send("refused"));
        std::thread::sleep(Duration::from_millis(50));
        drop(receive);
        assert_eq!(waiting.join().unwrap(), Err("refused"));
    }
}
