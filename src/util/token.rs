//! RFC 9110's token characters: what HTTP method and header names are made of, and so the
//! names an `x-mcp-header` annotation may give (`Mcp-Param-{name}`).

/// RFC 9110 token characters (method and header names).
pub(crate) fn is_token(b: u8) -> bool {
    token_lowered(b) != 0
}

/// A token character lowercased, or 0 for any other byte: header names are checked and
/// lowercased in one look-up a byte.
pub(crate) fn token_lowered(b: u8) -> u8 {
    TOKEN_LOWERED[usize::from(b)]
}

const TOKEN_LOWERED: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let token = c.is_ascii_alphanumeric()
            || matches!(c, b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-')
            || matches!(c, b'.' | b'^' | b'_' | b'`' | b'|' | b'~');
        if token {
            table[b] = c.to_ascii_lowercase();
        }
        b += 1;
    }
    table
};
