//! A map keyed by file descriptor (Linux, where connections park): a vector indexed by it.
//! The kernel gives out the lowest free number, so the keys stay as dense as the open
//! descriptors, and a lookup is an index where a hash map hashes and probes (a few hundred
//! instructions a request on the HTTP fast path). After a burst of connections it shrinks
//! back as the highest descriptors close.

use std::os::fd::RawFd;

/// Room for this many slots is kept whatever the map holds: below it, shrinking saves little.
const KEPT_ROOM: usize = 64;

pub(crate) struct FdMap<T> {
    slots: Vec<Option<T>>,
}

impl<T> Default for FdMap<T> {
    fn default() -> Self {
        FdMap { slots: Vec::new() }
    }
}

impl<T> FdMap<T> {
    /// Puts `value` under `fd`, giving back what was there. A negative `fd` is never open:
    /// it is given back as it came.
    pub fn insert(&mut self, fd: RawFd, value: T) -> Option<T> {
        let Ok(at) = usize::try_from(fd) else { return Some(value) };
        if at >= self.slots.len() {
            self.slots.resize_with(at + 1, || None);
        }
        self.slots[at].replace(value)
    }

    /// Takes the value under `fd` out. Only the removal of the last slot of a map past its
    /// kept room shrinks it, so the usual one costs a comparison more, and a map of a few
    /// connections, whose highest descriptor comes and goes, never shrinks to grow again.
    pub fn remove(&mut self, fd: RawFd) -> Option<T> {
        let at = usize::try_from(fd).ok()?;
        let value = self.slots.get_mut(at)?.take();
        if at + 1 == self.slots.len() && self.slots.capacity() > KEPT_ROOM {
            self.shrink();
        }
        value
    }

    /// Cuts the empty slots at the end, down to the highest descriptor held, and gives back
    /// the room once three quarters of it are unused (keeping twice what is left, so a map
    /// that grows again does not reallocate at once). Each slot is cut at most once for each
    /// time `insert` made it, so both stay O(1) amortized.
    #[cold]
    fn shrink(&mut self) {
        while self.slots.last().is_some_and(Option::is_none) {
            self.slots.pop();
        }
        let (len, room) = (self.slots.len(), self.slots.capacity());
        if len < room / 4 {
            self.slots.shrink_to((2 * len).max(KEPT_ROOM));
        }
    }

    pub fn get(&self, fd: RawFd) -> Option<&T> {
        self.slots.get(usize::try_from(fd).ok()?)?.as_ref()
    }

    /// The descriptors in the map, ascending.
    pub fn keys(&self) -> impl Iterator<Item = RawFd> + '_ {
        let present = self.slots.iter().enumerate().filter(|(_, slot)| slot.is_some());
        // Every index came from a `RawFd`.
        present.map(|(at, _)| at as RawFd)
    }

    /// Takes every value out, emptying the map (its room is kept).
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.slots.iter_mut().filter_map(Option::take)
    }
}

#[cfg(test)]
mod tests {
    use super::{FdMap, KEPT_ROOM};

    #[test]
    fn holds_one_value_per_descriptor_and_gives_each_back_once() {
        let mut map = FdMap::default();
        assert_eq!(map.insert(7, "a"), None);
        assert_eq!(map.insert(3, "b"), None);
        assert_eq!(map.insert(7, "c"), Some("a"));
        assert_eq!(map.get(7), Some(&"c"));
        assert_eq!(map.get(4), None);
        assert_eq!(map.get(1000), None);
        assert_eq!(map.keys().collect::<Vec<_>>(), [3, 7]);
        assert_eq!(map.remove(3), Some("b"));
        assert_eq!(map.remove(3), None);
        assert_eq!(map.remove(1000), None);
        assert_eq!(map.insert(-1, "d"), Some("d"));
        assert_eq!(map.get(-1), None);
        assert_eq!(map.remove(-1), None);
        map.insert(0, "e");
        assert_eq!(map.drain().collect::<Vec<_>>(), ["e", "c"]);
        assert_eq!(map.keys().count(), 0);
    }

    #[test]
    fn shrinks_back_as_the_highest_descriptors_close_after_a_burst() {
        let mut map = FdMap::default();
        for fd in 0..10_000 {
            map.insert(fd, fd);
        }
        // Closing below the highest descriptor open leaves the slots as they are.
        for fd in 10..9_999 {
            assert_eq!(map.remove(fd), Some(fd));
        }
        assert_eq!(map.slots.len(), 10_000);
        // The highest one closes: the map is cut to the highest still open, its room freed.
        assert_eq!(map.remove(9_999), Some(9_999));
        assert_eq!(map.slots.len(), 10);
        assert!(map.slots.capacity() <= 2 * KEPT_ROOM, "{}", map.slots.capacity());
        assert_eq!(map.keys().collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
        assert_eq!((map.get(9), map.get(10)), (Some(&9), None));
        // Within its kept room a map is left as it is, its highest slot reused.
        for fd in (0..10).rev() {
            assert_eq!(map.remove(fd), Some(fd));
        }
        assert_eq!(map.slots.len(), 10);
        assert!(map.slots.capacity() >= KEPT_ROOM);
        // It grows again as before.
        assert_eq!(map.insert(300, 300), None);
        assert_eq!((map.slots.len(), map.get(300)), (301, Some(&300)));
    }
}
