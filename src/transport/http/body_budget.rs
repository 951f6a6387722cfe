//! The bytes of request bodies being read, counted across every connection: past the budget a
//! large body is refused (`503`) rather than read on, so that many clients sending large
//! bodies at once cannot take the machine's memory between them. One body at a time may take
//! the count past the budget, up to `--max-message-bytes`, so that a body larger than the
//! budget can still be sent; a body's first [`FREE_BYTES`] are not counted, so the common
//! small request never touches the shared count.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What each body holds before it counts against the budget.
pub const FREE_BYTES: usize = 64 << 10;

/// Why a body is refused past the budget.
pub const REFUSED: &str = "request bodies being read fill their budget: try again";

/// The budget every connection thread's reader draws on.
pub struct BodyBudget {
    held: AtomicUsize,
    most: usize,
    /// Whether a body holds the one place past the budget.
    over_taken: AtomicBool,
}

/// One body's part of the budget, given back when it is dropped (the body read, or refused).
pub struct Hold<'a> {
    budget: &'a BodyBudget,
    bytes: usize,
    /// This body holds the place past the budget.
    over: bool,
}

impl BodyBudget {
    pub fn new(most: usize) -> BodyBudget {
        BodyBudget { held: AtomicUsize::new(0), most, over_taken: AtomicBool::new(false) }
    }

    /// A hold for one body, empty until the body grows past [`FREE_BYTES`].
    pub fn hold(&self) -> Hold<'_> {
        Hold { budget: self, bytes: 0, over: false }
    }
}

impl Hold<'_> {
    /// Counts the body grown to `len` bytes read. False, with nothing taken, when that would
    /// take the count past the budget while another body holds the place past it. The bytes
    /// read are counted, not the buffer they are read into: a client that stops halfway
    /// holds what it sent.
    pub fn grow_to(&mut self, len: usize) -> bool {
        let more = len.saturating_sub(FREE_BYTES).saturating_sub(self.bytes);
        if more == 0 {
            return true;
        }
        let (held, most) = (&self.budget.held, self.budget.most);
        let within = held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| {
            (h.saturating_add(more) <= most).then(|| h + more)
        });
        if within.is_err() {
            // Past the budget: one body at a time, so that two large bodies growing at once
            // cannot both be refused, and what all hold stays within the budget and one body.
            let taken = &self.budget.over_taken;
            if !self.over && taken.swap(true, Ordering::AcqRel) {
                return false;
            }
            self.over = true;
            held.fetch_add(more, Ordering::AcqRel);
        }
        self.bytes += more;
        true
    }
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
        }
        if self.over {
            self.budget.over_taken.store(false, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_past_the_budget_are_refused_but_one_at_a_time_and_give_back_what_they_held() {
        let budget = BodyBudget::new(1 << 20);
        let held = || budget.held.load(Ordering::Relaxed);
        let mut first = budget.hold();
        // Small bodies never count.
        assert!(first.grow_to(FREE_BYTES));
        assert_eq!(held(), 0);
        assert!(first.grow_to(FREE_BYTES + (1 << 19)));
        let mut second = budget.hold();
        assert!(second.grow_to(FREE_BYTES + (1 << 19)), "within the budget beside the first");
        // Past the budget: the first body to ask takes the one place there, and keeps it.
        assert!(second.grow_to(FREE_BYTES + (3 << 20)));
        assert!(!first.grow_to(FREE_BYTES + (1 << 19) + 1), "the place past it is taken");
        let mut third = budget.hold();
        assert!(third.grow_to(FREE_BYTES), "the free part needs no budget");
        assert!(!third.grow_to(FREE_BYTES + 1));
        // A refused growth took nothing.
        assert_eq!(held(), (1 << 19) + (3 << 20));
        drop(second);
        assert_eq!(held(), 1 << 19);
        assert!(third.grow_to(FREE_BYTES + (1 << 19)), "the budget and the place are back");
        assert!(third.grow_to(FREE_BYTES + (2 << 20)));
        drop((first, third));
        assert_eq!((held(), budget.over_taken.load(Ordering::Relaxed)), (0, false));
    }
}
