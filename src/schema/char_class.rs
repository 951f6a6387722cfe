//! Character classes of the regular-expression subset (`regex.rs`): sets of characters as
//! sorted, merged ranges, `\d \w \s` and their complements.

use crate::util::sort::sort;

/// A set of characters as sorted, non-overlapping inclusive ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Class {
    pub(crate) ranges: Vec<(char, char)>,
}

impl Class {
    pub(crate) fn new(mut ranges: Vec<(char, char)>, negated: bool) -> Class {
        // A pattern may hold a million ranges, in any order.
        sort(&mut ranges);
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
