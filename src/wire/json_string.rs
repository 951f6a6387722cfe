//! JSON string bodies: how much of a text can be written between quotes as it is, found eight
//! bytes at a time. The scanner skips strings with it, and tool results copy text with it.

/// How many bytes from the start need no escaping in a JSON string: the index of the first
/// `"`, `\` or control byte (or the length), found eight bytes at a time.
#[inline(always)]
pub fn plain_len(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_at = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut at = 0;
    loop {
        let word = match bytes[at..].first_chunk::<8>() {
            Some(chunk) => u64::from_le_bytes(*chunk),
            // Fewer than eight bytes left: one at a time (a padded copy would call memcpy).
            None => {
                let rest = &bytes[at..];
                return at
                    + rest
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                        .unwrap_or(rest.len());
            }
        };
        // Flags `"`, `\` and bytes below 0x20. The lowest flag is always exact.
        let special = zero_at(word ^ (ONES * u64::from(b'"')))
            | zero_at(word ^ (ONES * u64::from(b'\\')))
            | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS);
        if special != 0 {
            return at + special.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
}
