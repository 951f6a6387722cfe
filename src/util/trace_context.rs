//! W3C Trace Context (the Recommendation's `traceparent` and `tracestate` values): reading
//! them strictly, keeping them, and writing a `traceparent` back.

use std::fmt;

/// The W3C trace context a request arrived with: its trace id, the caller's span (the
/// `parent-id`), the trace flags, and the vendors' `tracestate` as sent. A handler passes it
/// on to what it calls, so that work joins the caller's trace.
///
/// Read from a request's `params._meta.traceparent` and `tracestate`; a value that breaks
/// the Recommendation's rules is ignored (the request simply has no trace context), and a
/// bad `tracestate` drops only itself.
///
/// ```
/// use baremcp::TraceContext;
///
/// let trace = TraceContext::parse(
///     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
///     Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
/// )
/// .unwrap();
/// assert_eq!(trace.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert!(trace.sampled());
/// assert_eq!(trace.tracestate(), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
/// // Uppercase hex, an all-zero id, or version ff: no trace context.
/// assert!(TraceContext::parse("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", None).is_none());
/// assert!(TraceContext::parse("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: [u8; 16],
    parent_id: [u8; 8],
    flags: u8,
    tracestate: Option<String>,
}

/// The `sampled` trace flag: the caller may have recorded this trace.
const SAMPLED: u8 = 0x01;
/// A `traceparent` of version 00 is exactly this long; later versions are at least as long.
const TRACEPARENT_LEN: usize = 55;
/// The most list members a `tracestate` may hold.
const MAX_MEMBERS: usize = 32;
/// The longest `tracestate` kept: the length every vendor must be able to pass on.
const MAX_TRACESTATE_LEN: usize = 512;

impl TraceContext {
    /// Reads a `traceparent` value and its `tracestate`. `None` when `traceparent` is not
    /// valid: not lowercase hex, an all-zero trace or parent id, version `ff`, a version 00
    /// value of another length than 55, or a later version that does not start with the
    /// version 00 fields followed by the end or a `-` (of a later version only the sampled
    /// flag is kept: its other flags mean nothing to this version). A `tracestate` with more
    /// than 32 members, longer than 512 characters, with a member that is not a valid
    /// `key=value` or a key named twice is dropped; otherwise it is kept as sent.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let b = traceparent.as_bytes();
        if b.len() < TRACEPARENT_LEN || b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
            return None;
        }
        let version = hex_bytes::<1>(&b[..2])?[0];
        let more_allowed = match version {
            0xff => return None,
            0 => false,
            _ => true,
        };
        if b.len() > TRACEPARENT_LEN && (!more_allowed || b[TRACEPARENT_LEN] != b'-') {
            return None;
        }
        let trace_id = hex_bytes::<16>(&b[3..35]).filter(|id| *id != [0; 16])?;
        let parent_id = hex_bytes::<8>(&b[36..52]).filter(|id| *id != [0; 8])?;
        let flags = hex_bytes::<1>(&b[53..55])?[0];
        let flags = if version == 0 { flags } else { flags & SAMPLED };
        let tracestate = tracestate.filter(|state| valid_tracestate(state)).map(str::to_string);
        Some(TraceContext { trace_id, parent_id, flags, tracestate })
    }

    /// The trace id: 16 bytes, never all zero.
    pub fn trace_id(&self) -> [u8; 16] {
        self.trace_id
    }

    /// The same context without its `tracestate`, for one kept for a long time whose
    /// `traceparent` alone is read.
    pub(crate) fn without_state(self) -> TraceContext {
        TraceContext { tracestate: None, ..self }
    }

    /// The trace id as 32 lowercase hex digits, as in `traceparent` and log lines.
    pub fn trace_id_hex(&self) -> String {
        Hex(&self.trace_id).to_string()
    }

    /// The caller's span id (`parent-id`): 8 bytes, never all zero.
    pub fn parent_id(&self) -> [u8; 8] {
        self.parent_id
    }

    /// The trace flags as sent (`01`: sampled).
    pub fn flags(&self) -> u8 {
        self.flags
    }

    /// Whether the caller may have recorded this trace (the `sampled` flag).
    pub fn sampled(&self) -> bool {
        self.flags & SAMPLED != 0
    }

    /// The vendors' `tracestate`, exactly as sent, when it was valid.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// A version 00 `traceparent` naming `span_id` as the parent: what a handler sends on
    /// for a span of its own (`parent_id()` to pass the caller's span on unchanged).
    pub fn traceparent(&self, span_id: [u8; 8]) -> String {
        format!("00-{}-{}-{:02x}", Hex(&self.trace_id), Hex(&span_id), self.flags)
    }
}

/// Bytes written as lowercase hex, without building a string first.
pub(crate) struct Hex<'a>(pub &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

/// `N` bytes from exactly `2 * N` lowercase hex digits.
fn hex_bytes<const N: usize>(digits: &[u8]) -> Option<[u8; N]> {
    let nibble = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

/// A `tracestate` within its bounds whose members are each empty or a valid `key=value`,
/// no key named twice.
fn valid_tracestate(state: &str) -> bool {
    if state.len() > MAX_TRACESTATE_LEN || state.split(',').count() > MAX_MEMBERS {
        return false;
    }
    let mut keys: Vec<&str> = Vec::new();
    for member in state.split(',').map(|m| m.trim_matches([' ', '\t'])) {
        if member.is_empty() {
            continue;
        }
        let Some((key, value)) = member.split_once('=') else { return false };
        if !valid_key(key) || !valid_value(value) || keys.contains(&key) {
            return false;
        }
        keys.push(key);
    }
    true
}

/// A `simple-key` (a lowercase letter, then up to 255 key characters) or a
/// `multi-tenant-key` (`tenant@system`: up to 241 and 14 characters).
fn valid_key(key: &str) -> bool {
    let keychar = |c: u8| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'*' | b'/');
    let part = |s: &str, max: usize, first_digit: bool| {
        let b = s.as_bytes();
        !b.is_empty()
            && b.len() <= max
            && (b[0].is_ascii_lowercase() || first_digit && b[0].is_ascii_digit())
            && b[1..].iter().all(|&c| keychar(c))
    };
    match key.split_once('@') {
        None => part(key, 256, false),
        Some((tenant, system)) => part(tenant, 241, true) && part(system, 14, false),
    }
}

/// Up to 256 printable ASCII characters but `,` and `=`, not ending in a space.
fn valid_value(value: &str) -> bool {
    let b = value.as_bytes();
    (1..=256).contains(&b.len())
        && b.iter().all(|&c| (0x20..=0x7e).contains(&c) && c != b',' && c != b'=')
        && b[b.len() - 1] != b' '
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const PARENT: &str = "00f067aa0ba902b7";

    fn parse(traceparent: &str) -> Option<TraceContext> {
        TraceContext::parse(traceparent, None)
    }

    #[test]
    fn reads_the_recommendations_examples() {
        let sampled = parse(&format!("00-{TRACE}-{PARENT}-01")).unwrap();
        assert_eq!(sampled.trace_id_hex(), TRACE);
        assert_eq!(Hex(&sampled.parent_id()).to_string(), PARENT);
        assert_eq!((sampled.flags(), sampled.sampled()), (1, true));
        let not_sampled = parse(&format!("00-{TRACE}-{PARENT}-00")).unwrap();
        assert!(!not_sampled.sampled());
        // Passing it on names a span of the handler's own, or the caller's.
        assert_eq!(
            sampled.traceparent([0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31]),
            format!("00-{TRACE}-b7ad6b7169203331-01")
        );
        assert_eq!(sampled.traceparent(sampled.parent_id()), format!("00-{TRACE}-{PARENT}-01"));
        // Flags are a bit field: 09 is sampled plus a flag this version does not define.
        assert!(parse(&format!("00-{TRACE}-{PARENT}-09")).unwrap().sampled());
    }

    #[test]
    fn refuses_what_the_recommendation_calls_invalid() {
        let zeros32 = "0".repeat(32);
        for bad in [
            format!("00-{zeros32}-{PARENT}-01"),       // all-zero trace id
            format!("00-{TRACE}-0000000000000000-01"), // all-zero parent id
            format!("ff-{TRACE}-{PARENT}-01"),         // version ff
            format!("00-{}-{PARENT}-01", TRACE.to_uppercase()), // uppercase hex
            format!("00-{TRACE}-{}-01", PARENT.to_uppercase()),
            format!("00-{TRACE}-{PARENT}-0A"),
            format!("0A-{TRACE}-{PARENT}-01"),
            format!("00-{TRACE}-{PARENT}-01-extra"), // version 00 is exactly 55 characters
            format!("00-{TRACE}-{PARENT}-01 "),
            format!(" 00-{TRACE}-{PARENT}-01"),
            format!("00-{TRACE}-{PARENT}-1"),
            format!("00-{TRACE}-{PARENT}01"),
            format!("00_{TRACE}_{PARENT}_01"),
            format!("00-{}g-{PARENT}-01", &TRACE[1..]),
            format!("00-{TRACE}-{}-01", &PARENT[1..]),
            format!("0-{TRACE}-{PARENT}-01"),
            format!("00-{TRACE}-{PARENT}-é"),
            String::new(),
            "00".to_string(),
        ] {
            assert_eq!(parse(&bad), None, "{bad:?} must be refused");
        }
    }

    #[test]
    fn reads_later_versions_as_the_recommendation_says() {
        // A later version: the version 00 fields, then the end or a dash and more.
        let exact = parse(&format!("cc-{TRACE}-{PARENT}-01")).unwrap();
        assert_eq!(exact.trace_id_hex(), TRACE);
        let longer = parse(&format!("cc-{TRACE}-{PARENT}-01-what-the-future-holds")).unwrap();
        assert!(longer.sampled());
        // Only the sampled flag of a later version is kept.
        assert_eq!(parse(&format!("cc-{TRACE}-{PARENT}-ff")).unwrap().flags(), 1);
        assert_eq!(parse(&format!("cc-{TRACE}-{PARENT}-01.what")), None);
        assert_eq!(parse(&format!("cc-{TRACE}-{PARENT}-0")), None);
    }

    #[test]
    fn keeps_a_valid_tracestate_as_sent_and_drops_a_bad_one() {
        let traceparent = format!("00-{TRACE}-{PARENT}-01");
        let state = |s: &str| {
            TraceContext::parse(&traceparent, Some(s)).unwrap().tracestate().map(str::to_string)
        };
        for good in [
            "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
            "congo=t61rcWkgMzE",
            "",
            " , foo=1 ,\t,bar=2",
            "tenant1@sys=x,1tenant@s2=y",
            "a/b*c-d_e=value with spaces",
        ] {
            assert_eq!(state(good).as_deref(), Some(good), "{good:?} must be kept");
        }
        let members = |n: usize| (0..n).map(|i| format!("k{i}=v")).collect::<Vec<_>>().join(",");
        assert!(state(&members(32)).is_some());
        let long_value = format!("k={}", "v".repeat(256));
        let too_long = format!("{long_value},j={}", "v".repeat(254));
        assert!(too_long.len() > 512);
        for bad in [
            members(33),
            too_long,
            "Rojo=1".to_string(),
            "1rojo=1".to_string(),
            "rojo".to_string(),
            "rojo=".to_string(),
            "rojo=a,rojo=b".to_string(),
            "rojo=a=b".to_string(),
            "rojo=a ,congo=\u{e9}".to_string(),
            format!("k={}", "v".repeat(257)),
            format!("{}=v", "k".repeat(257)),
            "@sys=v".to_string(),
            "tenant@=v".to_string(),
            "tenant@1sys=v".to_string(),
        ] {
            assert_eq!(state(&bad), None, "{bad:?} must be dropped");
        }
        // A bad tracestate costs only itself.
        assert!(TraceContext::parse(&traceparent, Some("Bad")).is_some());
    }
}
