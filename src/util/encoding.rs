//! Byte encodings MCP needs: base64 for blobs (and `requestState`), percent-encoding for
//! `file://` URIs, and RFC 3339 timestamps (a task's `createdAt`, a log line's time).

use std::time::{SystemTime, UNIX_EPOCH};

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Whole seconds from 1970 to `time` (0 before it): the clock a signed expiry is written in.
pub fn unix_secs(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `time` as `2026-11-23T12:05:47.123Z`: RFC 3339 in UTC with milliseconds. std has no
/// calendar; the date comes from the days since 1970 by Howard Hinnant's `civil_from_days`.
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (days, secs) = ((since.as_secs() / 86_400) as i64, since.as_secs() % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        since.subsec_millis()
    )
}

/// Standard base64 with padding (RFC 4648), as MCP `blob` and `data` fields carry.
pub fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64, padded or not; `None` for anything else.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'+' => Some(62),
        b'/' => Some(63),
        _ => alphanumeric(c),
    };
    decode(text.trim_end_matches('=').as_bytes(), value)
}

/// Decodes unpadded base64url (RFC 4648 §5), as JWS segments and JWK members carry bytes
/// (RFC 7515 §2). Refused: padding, the standard alphabet's `+` and `/`, and leftover bits
/// that are not zero, which would be a second spelling of the same bytes.
pub(crate) fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'-' => Some(62),
        b'_' => Some(63),
        _ => alphanumeric(c),
    };
    let bytes = decode(text.as_bytes(), value)?;
    let leftover_bits = 6 * text.len() - 8 * bytes.len();
    let last = text.as_bytes().last().map_or(0, |&c| value(c).unwrap_or(0));
    (last & ((1 << leftover_bits) - 1) == 0).then_some(bytes)
}

/// Unpadded base64url, as tests forge JWS parts and JWK members.
#[cfg(test)]
pub(crate) fn base64url(bytes: &[u8]) -> String {
    base64(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
}

/// The 52 letters and 10 digits both alphabets share, as their 6-bit values.
fn alphanumeric(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        _ => None,
    }
}

/// Base64 digits (without padding) as bytes, each digit's value given by `value`.
fn decode(bytes: &[u8], value: impl Fn(u8) -> Option<u8>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let n = chunk.iter().try_fold(0u32, |n, &c| Some(n << 6 | u32::from(value(c)?)))?;
        // One leftover character cannot hold a whole byte: that text was cut short.
        if chunk.len() == 1 {
            return None;
        }
        let n = n << (6 * (4 - chunk.len()));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    Some(out)
}

/// Percent-encodes everything but unreserved characters and `/` (RFC 3986), so any path,
/// whatever bytes it holds, becomes a valid URI path.
pub fn percent_encode_path(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether `bytes` holds a `%XX` escape at `at`: a `%` and two hex digits (RFC 3986
/// `pct-encoded`).
pub(crate) fn escape_at(bytes: &[u8], at: usize) -> bool {
    bytes.get(at) == Some(&b'%')
        && bytes.get(at + 1..at + 3).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
}

/// Decodes `%XX` escapes; `None` for a malformed escape.
pub fn percent_decode(text: &str) -> Option<Vec<u8>> {
    // Exactly two hex digits: `u8::from_str_radix` would also take a sign (`%+0`).
    let digit = |b: u8| char::from(b).to_digit(16).map(|d| d as u8);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let (high, low) = (digit(*bytes.get(i + 1)?)?, digit(*bytes.get(i + 2)?)?);
            out.push(high << 4 | low);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Why `text` is not a URI as RFC 3986 spells one, in lowercase; `None` when it is one. A
/// URI has a scheme (`file:`, `https:`), and beyond it only unreserved and reserved ASCII
/// characters and `%XX` escapes: no raw space, control, non-ASCII character (an IRI is not a
/// URI), `<>"{}|\\^` or backquote, no second `#`, and `[` `]` only in the host. MCP's schema
/// says `format: "uri"` of every resource URI, so a server neither takes nor sends another.
pub(crate) fn uri_problem(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    // The authority, after `scheme://`, runs to the next `/`, `?` or `#`: only there may an
    // IP literal stand in brackets.
    let after_scheme = text.find(':').filter(|&at| text[at..].starts_with("://"));
    let authority = after_scheme.map_or(0..0, |at| {
        let start = at + 3;
        start..text[start..].find(['/', '?', '#']).map_or(text.len(), |end| start + end)
    });
    let mut fragment = false;
    for (i, c) in text.char_indices() {
        let what = match c {
            '%' if escape_at(bytes, i) => continue,
            '%' => "a `%` not followed by two hex digits".to_string(),
            ' ' => "a raw space".to_string(),
            '\u{0}'..='\u{1f}' | '\u{7f}' => format!("a control character ({:?})", c),
            '<' | '>' | '"' | '{' | '}' | '|' | '\\' | '^' | '`' => format!("a raw `{c}`"),
            '#' if !fragment => {
                fragment = true;
                continue;
            }
            '#' => "a second `#`".to_string(),
            '[' | ']' if !authority.contains(&i) => format!("a `{c}` outside the host"),
            c if !c.is_ascii() => format!("a non-ASCII character ({c:?})"),
            _ => continue,
        };
        return Some(format!("{what} at byte {i}; percent-encode it"));
    }
    let scheme = &text[..text.find(':').unwrap_or(0)];
    let scheme_char = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.');
    if !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        || !scheme.bytes().all(|b| scheme_char(&b))
    {
        return Some("no scheme: a uri starts with one, as `file:` or `https:`".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let at = |secs: u64, millis: u64| {
            rfc3339(UNIX_EPOCH + Duration::from_millis(secs * 1000 + millis))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z"); // a leap day
        assert_eq!(at(1_795_431_947, 123), "2026-11-23T11:05:47.123Z");
        assert_eq!(at(4_107_542_399, 999), "2100-02-28T23:59:59.999Z"); // 2100 is not a leap year
    }

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(base64(plain.as_bytes()), encoded);
            assert_eq!(base64_decode(encoded).unwrap(), plain.as_bytes());
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
        assert_eq!(base64_decode("//4A").unwrap(), [0xff, 0xfe, 0x00]);
        for bad in ["Z", "Zm9v!", "Zm 9v"] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn base64url_is_unpadded_and_canonical() {
        for (plain, encoded) in [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v")] {
            assert_eq!(base64url_decode(encoded).unwrap(), plain.as_bytes());
        }
        assert_eq!(base64url_decode("__4A-w").unwrap(), [0xff, 0xfe, 0x00, 0xfb]);
        // Padding, the standard alphabet, a cut, and nonzero leftover bits (`Zh` would be a
        // second spelling of `Zg`).
        for bad in ["Zg==", "Zm8=", "//4A", "++", "Z", "Zh", "Zm9", "Zm 9v", "Zm9v."] {
            assert_eq!(base64url_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn percent_round_trips() {
        let path = "/tmp/a b/é%/x?#".as_bytes();
        let encoded = percent_encode_path(path);
        assert_eq!(encoded, "/tmp/a%20b/%C3%A9%25/x%3F%23");
        assert_eq!(percent_decode(&encoded).unwrap(), path);
        assert_eq!(percent_decode("%2e%2E%2f"), Some(b"../".to_vec()));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%4"), None);
        // A sign is not a hex digit, though `from_str_radix` would read `+0` as zero.
        for bad in ["%+0", "%-0", "%+f", "a%+1b", "% 1", "%0\u{e9}"] {
            assert_eq!(percent_decode(bad), None, "{bad}");
        }
        assert_eq!(percent_decode("%00%ff%Aa"), Some(vec![0, 0xff, 0xaa]));
    }

    #[test]
    fn uris_are_judged_as_rfc_3986_spells_them() {
        for good in [
            "file:///tmp/a%20b.md",
            "mf://host/p?q=1&r=%2F#frag",
            "https://[::1]:8080/x",
            "urn:isbn:0451450523",
            "notes://a/b!$&'()*+,;=:@~",
        ] {
            assert_eq!(uri_problem(good), None, "{good}");
        }
        let cases = [
            ("file:///root/with space.md", "a raw space at byte 17; percent-encode it"),
            ("file:///a\tb", "a control character ('\\t') at byte 9; percent-encode it"),
            ("file:///a\nb", "a control character ('\\n') at byte 9; percent-encode it"),
            ("file:///a%2", "a `%` not followed by two hex digits at byte 9; percent-encode it"),
            ("file:///a%zz", "a `%` not followed by two hex digits at byte 9; percent-encode it"),
            ("file:///\u{e9}", "a non-ASCII character ('\u{e9}') at byte 8; percent-encode it"),
            ("a:b#c#d", "a second `#` at byte 5; percent-encode it"),
            ("a://h/[x]", "a `[` outside the host at byte 6; percent-encode it"),
            ("relative/path", "no scheme: a uri starts with one, as `file:` or `https:`"),
            ("1x:y", "no scheme: a uri starts with one, as `file:` or `https:`"),
            (":y", "no scheme: a uri starts with one, as `file:` or `https:`"),
        ];
        for (bad, why) in cases {
            assert_eq!(uri_problem(bad).as_deref(), Some(why), "{bad:?}");
        }
        for c in ['<', '>', '"', '{', '}', '|', '\\', '^', '`'] {
            let why = format!("a raw `{c}` at byte 4; percent-encode it");
            assert_eq!(uri_problem(&format!("a:b/{c}")), Some(why));
        }
    }
}
