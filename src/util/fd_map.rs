//! A map keyed by file descriptor (Linux, where connections park): a vector indexed by it.
//! The kernel gives out the lowest free number, so the keys stay as dense as the open
//! descriptors, and a lookup is an index where a hash map hashes and probes (a few hundred
//! instructions a request on the HTTP fast path).

use std::os::fd::RawFd;

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

    pub fn remove(&mut self, fd: RawFd) -> Option<T> {
        self.slots.get_mut(usize::try_from(fd).ok()?)?.take()
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
    use super::FdMap;

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
}
