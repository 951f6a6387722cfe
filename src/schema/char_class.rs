//! Character classes of the regular-expression subset (`regex.rs`): sets of characters as
//! sorted, merged ranges, `\d \w \s` and their complements.

/// Sorts a class's ranges in place, in O(n log n) however they come (a pattern may hold a
/// million). By hand: the standard library's sort for them took 8 KB of the static binary.
fn heapsort(ranges: &mut [(char, char)]) {
    fn sift_down(heap: &mut [(char, char)], mut parent: usize) {
        loop {
            let mut child = 2 * parent + 1;
            if child >= heap.len() {
                return;
            }
            if child + 1 < heap.len() && heap[child] < heap[child + 1] {
                child += 1;
            }
            if heap[parent] >= heap[child] {
                return;
            }
            heap.swap(parent, child);
            parent = child;
        }
    }
    for parent in (0..ranges.len() / 2).rev() {
        sift_down(ranges, parent);
    }
    for end in (1..ranges.len()).rev() {
        ranges.swap(0, end);
        sift_down(&mut ranges[..end], 0);
    }
}

/// A set of characters as sorted, non-overlapping inclusive ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Class {
    pub(crate) ranges: Vec<(char, char)>,
}

impl Class {
    pub(crate) fn new(mut ranges: Vec<(char, char)>, negated: bool) -> Class {
        heapsort(&mut ranges);
        let mut merged: Vec<(char, char)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if lo as u32 <= last.1 as u32 + 1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        let class = Class { ranges: merged };
        if negated { class.complement() } else { class }
    }

    fn complement(&self) -> Class {
        let mut out = Vec::new();
        let mut next = 0u32;
        for &(lo, hi) in &self.ranges {
            if (lo as u32) > next {
                push_range(&mut out, next, lo as u32 - 1);
            }
            next = hi as u32 + 1;
        }
        if next <= char::MAX as u32 {
            push_range(&mut out, next, char::MAX as u32);
        }
        Class { ranges: out }
    }

    pub(crate) fn contains(&self, c: char) -> bool {
        self.ranges
            .binary_search_by(|&(lo, hi)| {
                if c < lo {
                    std::cmp::Ordering::Greater
                } else if c > hi {
                    std::cmp::Ordering::Less
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
    }
}

/// Adds `lo..=hi` as char ranges, stepping over the surrogate gap that `char` cannot hold.
fn push_range(out: &mut Vec<(char, char)>, lo: u32, hi: u32) {
    for (a, b) in [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)] {
        if let (true, Some(a), Some(b)) = (a <= b, char::from_u32(a), char::from_u32(b)) {
            out.push((a, b));
        }
    }
}

pub(crate) fn digit() -> Vec<(char, char)> {
    vec![('0', '9')]
}

pub(crate) fn word() -> Vec<(char, char)> {
    vec![('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')]
}

/// ECMA-262 WhiteSpace and LineTerminator.
pub(crate) fn space() -> Vec<(char, char)> {
    let singles = [
        '\u{a0}', '\u{1680}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}',
        '\u{feff}',
    ];
    let mut ranges = vec![('\t', '\r'), (' ', ' '), ('\u{2000}', '\u{200a}')];
    ranges.extend(singles.iter().map(|&c| (c, c)));
    ranges
}

pub(crate) fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heapsort_sorts_any_order() {
        let mut seed = 7u32;
        for len in [0, 1, 2, 3, 10, 257] {
            let mut ranges: Vec<(char, char)> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    let lo = char::from_u32(seed >> 24).unwrap();
                    (lo, char::from_u32((seed >> 16) % 64 + lo as u32).unwrap())
                })
                .collect();
            let mut expected = ranges.clone();
            expected.sort();
            heapsort(&mut ranges);
            assert_eq!(ranges, expected, "{len}");
        }
    }
}
