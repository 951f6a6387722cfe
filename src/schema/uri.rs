//! URI references resolved against a base URI (RFC 3986, section 5.2), which is how `$id`
//! and `$ref` name places in a schema document.

/// The five parts of a URI reference; the delimiters are not kept.
struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

/// Splits a reference as RFC 3986's appendix B does; every string splits somehow.
fn parse(text: &str) -> Parts<'_> {
    let (rest, fragment) = match text.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (text, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    // A scheme ends at the first ':' that comes before any '/'.
    let (scheme, rest) = match rest.find(':') {
        Some(colon) if colon > 0 && !rest[..colon].contains('/') => {
            (Some(&rest[..colon]), &rest[colon + 1..])
        }
        _ => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            (Some(&after[..end]), &after[end..])
        }
        None => (None, rest),
    };
    Parts { scheme, authority, path, query, fragment }
}

/// The target of `reference` read against the absolute URI `base`.
pub(super) fn resolve(base: &str, reference: &str) -> String {
    let (b, r) = (parse(base), parse(reference));
    let (scheme, authority, path, query);
    if r.scheme.is_some() {
        (scheme, authority, path, query) =
            (r.scheme, r.authority, remove_dot_segments(r.path), r.query);
    } else if r.authority.is_some() {
        (scheme, authority, path, query) =
            (b.scheme, r.authority, remove_dot_segments(r.path), r.query);
    } else if r.path.is_empty() {
        (scheme, authority, path, query) =
            (b.scheme, b.authority, b.path.to_string(), r.query.or(b.query));
    } else if r.path.starts_with('/') {
        (scheme, authority, path, query) =
            (b.scheme, b.authority, remove_dot_segments(r.path), r.query);
    } else {
        let merged = match (b.authority, b.path.rfind('/')) {
            (Some(_), None) if b.path.is_empty() => format!("/{}", r.path),
            (_, Some(slash)) => format!("{}{}", &b.path[..=slash], r.path),
            (_, None) => r.path.to_string(),
        };
        (scheme, authority, path, query) =
            (b.scheme, b.authority, remove_dot_segments(&merged), r.query);
    }
    let mut out = String::new();
    if let Some(scheme) = scheme {
        out.push_str(scheme);
        out.push(':');
    }
    if let Some(authority) = authority {
        out.push_str("//");
        out.push_str(authority);
    }
    out.push_str(&path);
    for (mark, part) in [('?', query), ('#', r.fragment)] {
        if let Some(part) = part {
            out.push(mark);
            out.push_str(part);
        }
    }
    out
}

/// Removes `.` and `..` segments (RFC 3986, section 5.2.4).
fn remove_dot_segments(path: &str) -> String {
    let mut input = path;
    let mut out = String::with_capacity(path.len());
    let pop = |out: &mut String| out.truncate(out.rfind('/').unwrap_or(0));
    while !input.is_empty() {
        if let Some(rest) = input.strip_prefix("../").or_else(|| input.strip_prefix("./")) {
            input = rest;
        } else if input.starts_with("/./") || input == "/." {
            input = if input == "/." { "/" } else { &input[2..] };
        } else if input.starts_with("/../") || input == "/.." {
            input = if input == "/.." { "/" } else { &input[3..] };
            pop(&mut out);
        } else if input == "." || input == ".." {
            input = "";
        } else {
            // The first segment, with its leading '/' if it has one.
            let start = usize::from(input.starts_with('/'));
            let end = input[start..].find('/').map_or(input.len(), |i| i + start);
            out.push_str(&input[..end]);
            input = &input[end..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3986's examples (section 5.4), normal and abnormal.
    #[test]
    fn resolves_the_rfc_examples() {
        let base = "http://a/b/c/d;p?q";
        let cases = [
            ("g:h", "g:h"),
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("g#s", "http://a/b/c/g#s"),
            ("g?y#s", "http://a/b/c/g?y#s"),
            (";x", "http://a/b/c/;x"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("./g/.", "http://a/b/c/g/"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
            ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
            ("g;x=1/../y", "http://a/b/c/y"),
        ];
        for (reference, want) in cases {
            assert_eq!(resolve(base, reference), want, "{reference:?}");
        }
    }

    #[test]
    fn resolves_against_urns_and_fragments() {
        let urn = "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed";
        assert_eq!(resolve(urn, "#/$defs/bar"), format!("{urn}#/$defs/bar"));
        assert_eq!(resolve("http://x/y.json", "urn:a:b#c"), "urn:a:b#c");
        assert_eq!(resolve("http://example.com", "a.json"), "http://example.com/a.json");
        assert_eq!(resolve("http://x/é/ü.json", "ñ/../ö.json"), "http://x/é/ö.json");
    }
}
