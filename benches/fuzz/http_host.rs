//! The HTTP fuzzer's model of how a request names its host, written apart from the server's
//! (`src/transport/http/guard.rs`, `grammar.rs`): a valid `Host` value (RFC 9112 §3.2 refuses
//! any other with 400) and an absolute-form target's authority.

use std::net::Ipv6Addr;

/// `uri-host [ ":" port ]` (RFC 3986 §3.2.2, §3.2.3): a bracketed IPv6 address or IPvFuture,
/// or a reg-name; then a colon and digits, maybe none. An empty host names no `http` URI
/// (RFC 9110 §4.2.1), and a comma, though a sub-delim, joins two hosts: both refused.
pub fn valid_host(value: &str) -> bool {
    let (host_ok, rest) = match value.strip_prefix('[') {
        Some(inner) => match inner.split_once(']') {
            Some((literal, rest)) => (literal.parse::<Ipv6Addr>().is_ok() || future(literal), rest),
            None => return false,
        },
        None => {
            let (host, rest) = value.split_at(value.find(':').unwrap_or(value.len()));
            (!host.is_empty() && reg_name(host), rest)
        }
    };
    let port_ok = rest.is_empty()
        || rest.strip_prefix(':').is_some_and(|port| port.bytes().all(|b| b.is_ascii_digit()));
    host_ok && port_ok
}

/// Unreserved characters, sub-delims but `,`, and `%` with two hex digits.
fn reg_name(host: &str) -> bool {
    let bytes = host.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            if !bytes.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                return false;
            }
            i += 3;
            continue;
        }
        if !(b.is_ascii_alphanumeric() || b"-._~!$&'()*+;=".contains(&b)) {
            return false;
        }
        i += 1;
    }
    true
}

/// `v` 1*HEXDIG `.` 1*( unreserved / sub-delims / `:` ), a comma still refused.
fn future(literal: &str) -> bool {
    let Some(rest) = literal.strip_prefix(['v', 'V']) else { return false };
    let Some((version, after)) = rest.split_once('.') else { return false };
    !version.is_empty()
        && version.bytes().all(|b| b.is_ascii_hexdigit())
        && !after.is_empty()
        && after.split(':').all(|part| !part.contains('%') && (part.is_empty() || reg_name(part)))
}

/// An absolute-form target's authority and path.
type Split<'t> = (&'t [u8], &'t [u8]);

/// An absolute-form target (`http://authority/path`, or `https`, RFC 9112 §3.2.2): its
/// authority (a host and port, no user information) and the rest as a path (`/` when it has
/// none); `None` for another form; `Err` when malformed.
pub fn absolute_form(target: &[u8]) -> Result<Option<Split<'_>>, ()> {
    let scheme = [&b"http://"[..], b"https://"]
        .into_iter()
        .find(|scheme| target.get(..scheme.len()).is_some_and(|s| s.eq_ignore_ascii_case(scheme)));
    let Some(scheme) = scheme else { return Ok(None) };
    let after = &target[scheme.len()..];
    let end = after.iter().position(|b| b"/?#".contains(b)).unwrap_or(after.len());
    let authority = &after[..end];
    if authority.is_empty() || authority.iter().any(|&b| b <= b' ' || b == 0x7f || b == b'@') {
        return Err(());
    }
    let rest = &after[end..];
    Ok(Some((authority, if rest.starts_with(b"/") { rest } else { b"/" })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_as_rfc_9112_reads_them() {
        for ok in ["a", "localhost:", "a:80", "[::1]", "[::1]:", "%41", "[v1.a:b]", "1.2.3.4"] {
            assert!(valid_host(ok), "{ok}");
        }
        for bad in ["", ":80", "a b", "x@y", "a/b", "[::1", "a,b", "a:b:1", "[::1]x", "%4"] {
            assert!(!valid_host(bad), "{bad}");
        }
    }
}
