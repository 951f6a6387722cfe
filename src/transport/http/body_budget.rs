//! The bytes of request bodies being read, counted across every connection: past the budget a
//! large body is refused (`503`) rather than read on, so that many clients sending large
//! bodies at once cannot take the machine's memory between them. One body alone may be
//! larger, up to `--max-message-bytes`; a body's first [`FREE_BYTES`] are not counted, so
//! the common small request never touches the shared count.

use std::sync::atomic::{AtomicUsize, Ordering};

/// What each body holds before it counts against the budget.
pub const FREE_BYTES: usize = 64 << 10;

/// Why a body is refused past the budget.
pub const REFUSED: &str = "request bodies being read fill their budget: try again";

/// The budget every connection thread's reader draws on.
pub struct BodyBudget {
    held: AtomicUsize,
    most: usize,
}

/// One body's part of the budget, given back when it is dropped (the body read, or refused).
pub struct Hold<'a> {
    budget: &'a BodyBudget,
    bytes: usize,
}

impl BodyBudget {
    pub fn new(most: usize) -> BodyBudget {
        BodyBudget { held: AtomicUsize::new(0), most }
    }

    /// A hold for one body, empty until the body grows past [`FREE_BYTES`].
    pub fn hold(&self) -> Hold<'_> {
        Hold { budget: self, bytes: 0 }
    }
}

impl Hold<'_> {
    /// Counts the body's buffer grown to `capacity` bytes. False, with nothing taken, when
    /// that would take the budget past its bound while other bodies hold part of it.
    pub fn grow_to(&mut self, capacity: usize) -> bool {
        let more = capacity.saturating_sub(FREE_BYTES).saturating_sub(self.bytes);
        if more == 0 {
            return true;
        }
        let (mine, most) = (self.bytes, self.budget.most);
        let taken = self.budget.held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
            let alone = held == mine;
            (alone || held.saturating_add(more) <= most).then(|| held + more)
        });
        if taken.is_ok() {
            self.bytes += more;
        }
        taken.is_ok()
    }
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_past_the_budget_are_refused_unless_alone_and_give_back_what_they_held() {
        let budget = BodyBudget::new(1 << 20);
        let mut first = budget.hold();
        // Small bodies never count; one alone may pass the budget.
        assert!(first.grow_to(FREE_BYTES));
        assert_eq!(budget.held.load(Ordering::Relaxed), 0);
        assert!(first.grow_to(FREE_BYTES + (3 << 20)));
        let mut second = budget.hold();
        assert!(second.grow_to(FREE_BYTES), "the free part needs no budget");
        assert!(!second.grow_to(FREE_BYTES + 1), "another body holds more than the budget");
        drop(first);
        assert_eq!(budget.held.load(Ordering::Relaxed), 0);
        assert!(second.grow_to(FREE_BYTES + (1 << 19)));
        let mut third = budget.hold();
        assert!(third.grow_to(FREE_BYTES + (1 << 19)), "within the budget beside the second");
        assert!(!third.grow_to(FREE_BYTES + (1 << 19) + 1));
        // A refused growth took nothing: the two still hold exactly the budget.
        assert_eq!(budget.held.load(Ordering::Relaxed), 1 << 20);
        drop((second, third));
        assert_eq!(budget.held.load(Ordering::Relaxed), 0);
    }
}
