//! Content negotiation for the endpoint: whether a request's body is JSON, and whether its
//! `Accept` admits JSON and event streams, as RFC 9110 §12.5.1 reads it, leniently where real
//! clients need it.

use crate::transport::http::grammar::parts;

/// Whether `Content-Type` names JSON, whatever its parameters (`charset=utf-8`).
pub fn is_json(content_type: Option<&str>) -> bool {
    let media = parts(content_type.unwrap_or(""), b';').next().unwrap_or("");
    media.trim().eq_ignore_ascii_case("application/json")
}

/// Whether `Accept` admits JSON and event streams. No header admits both. Each type is
/// judged by the most specific range that names it (RFC 9110 §12.5.1: `text/event-stream;q=0,
/// */*` refuses event streams), a range with `q=0` refusing it. An answer that needs no
/// stream is JSON even for a client that admits only streams (a server may disregard
/// `Accept`, and strict checks have locked real clients out); one that admits neither is
/// refused.
pub fn accepts(accept: Option<&str>) -> (bool, bool) {
    let Some(accept) = accept else { return (true, true) };
    // For each type: how specific the range that decided it was (0: none), and its verdict.
    let (mut json, mut sse) = ((0, false), (0, false));
    // Compared in place, without a lowercased copy of each range: asked of every POST.
    for range in parts(accept, b',') {
        let mut parameters = parts(range, b';');
        let media = parameters.next().unwrap_or("").trim();
        let acceptable = !parameters.any(zero_quality);
        let is = |name: &str| media.eq_ignore_ascii_case(name);
        let rank = |exact: &str, family: &str| {
            if is(exact) {
                3
            } else if is(family) {
                2
            } else {
                u8::from(is("*/*"))
            }
        };
        for (verdict, rank) in [
            (&mut json, rank("application/json", "application/*")),
            (&mut sse, rank("text/event-stream", "text/*")),
        ] {
            if rank > verdict.0 {
                *verdict = (rank, acceptable);
            } else if rank > 0 && rank == verdict.0 {
                verdict.1 |= acceptable;
            }
        }
    }
    (json.1, sse.1)
}

/// Whether an `Accept` parameter is `q=0`: the media range is not acceptable (RFC 9110
/// §12.4.2).
fn zero_quality(parameter: &str) -> bool {
    parameter.split_once('=').is_some_and(|(name, value)| {
        let value = value.trim();
        name.trim().eq_ignore_ascii_case("q")
            && value.starts_with('0')
            && value.bytes().all(|b| b == b'0' || b == b'.')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_is_lenient() {
        assert_eq!(accepts(None), (true, true));
        assert_eq!(accepts(Some("text/event-stream")), (false, true));
        assert_eq!(accepts(Some("application/json, text/event-stream;q=0")), (true, false));
        // The most specific range decides: `*/*` does not undo a refused event stream.
        assert_eq!(accepts(Some("text/event-stream; Q=0.000, */*;q=0.5")), (true, false));
        assert_eq!(accepts(Some("text/*;q=0, text/event-stream")), (false, true));
        assert_eq!(accepts(Some("*/*;q=0, application/json")), (true, false));
        assert_eq!(accepts(Some("text/event-stream;q=0.01")), (false, true));
        assert_eq!(accepts(Some("application/json;q=0.9")), (true, false));
        assert_eq!(accepts(Some("*/*")), (true, true));
        assert_eq!(accepts(Some("text/html")), (false, false));
        assert_eq!(accepts(Some(",, application/json ;q=1,")), (true, false));
        assert_eq!(accepts(Some("")), (false, false));
    }

    #[test]
    fn json_is_named_by_its_media_type_alone() {
        for json in ["application/json", "Application/JSON; charset=utf-8", " application/json ;x"]
        {
            assert!(is_json(Some(json)), "{json:?}");
        }
        for other in [None, Some(""), Some("text/plain"), Some("application/json-seq"), Some(";")] {
            assert!(!is_json(other), "{other:?}");
        }
    }

    #[test]
    fn parts_are_what_split_gives() {
        for text in ["", "a", "a,b", ",a,,b,", "é,ü", ",", "a;b,c"] {
            let split: Vec<_> = text.split(',').collect();
            assert_eq!(parts(text, b',').collect::<Vec<_>>(), split, "{text:?}");
        }
    }
}
