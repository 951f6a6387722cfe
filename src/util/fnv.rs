//! FNV-1a, a fast hash for short keys chosen by the program itself (tool names), where the
//! flooding resistance of std's SipHash buys nothing.

use std::hash::Hasher;

/// FNV-1a: tool names are short and chosen by the server author, so the lookup every call
/// makes needs no flooding-resistant (and slower) SipHash.
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
