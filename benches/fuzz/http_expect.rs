//! What a request read whole may be answered, as docs/http.md orders the checks:
//! `Host`, `Origin`, path (and the RFC 9728 metadata paths, read with GET and HEAD), HTTP
//! method, then per method
//! `Content-Type`, `Accept`, a body, and the message's own stage (era, session, dispatch);
//! and what a response body must hold for its type (JSON-RPC, event streams, ids).

use super::http_model::Request;
use super::http_reply::{Reply, events};
use super::oracle::{Want, want_line};
use super::replies::{Out, check_out};

/// Where the server serves RFC 9728 metadata (`--resource-metadata-url` names the first).
pub const META_PATHS: [&str; 2] =
    ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"];

/// A check's verdict on a request.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Check {
    Pass,
    Fail,
    /// The request is odd in a way docs/http.md does not settle: either.
    Either,
}

/// The statuses a request may get from the checks before its message is read (`early`), and
/// whether it may pass them all (then its method's own stage answers).
#[derive(Debug, PartialEq)]
pub struct Route {
    pub early: Vec<u16>,
    pub passes: bool,
    /// The metadata document, not the MCP endpoint.
    pub metadata: bool,
}

/// Loopback names, any port (docs/http.md: "loopback names with any port").
fn host_check(value: &str) -> Check {
    let lower = value.to_ascii_lowercase();
    let (name, port) = match lower.rsplit_once(':') {
        Some((name, port)) if !name.ends_with(':') && !name.is_empty() => (name, Some(port)),
        _ => (lower.as_str(), None),
    };
    let port_ok = port.is_none_or(|p| p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    let plain = |s: &str| {
        !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
            && !s.starts_with('.')
    };
    match (name, port_ok) {
        ("localhost" | "127.0.0.1" | "[::1]", true) => Check::Pass,
        (name, true) if plain(name) => Check::Fail,
        _ => Check::Either,
    }
}

/// Loopback origins pass; `null` and other plain origins fail.
fn origin_check(value: &str) -> Check {
    let lower = value.trim_end_matches('/').to_ascii_lowercase();
    if lower == "null" {
        return Check::Fail;
    }
    match lower.split_once("://") {
        Some(("http" | "https", host)) => host_check(host),
        Some((scheme, host))
            if scheme.bytes().all(|b| b.is_ascii_lowercase())
                && host_check(host) != Check::Either =>
        {
            Check::Fail
        }
        _ => Check::Either,
    }
}

/// `application/json`, parameters allowed.
fn media_check(value: Option<&str>) -> Check {
    let Some(value) = value else { return Check::Fail };
    let media = value.split(';').next().unwrap_or("").trim_matches([' ', '\t']);
    if media.eq_ignore_ascii_case("application/json") {
        Check::Pass
    } else if media.bytes().all(|b| b.is_ascii_alphanumeric() || b"/-+.".contains(&b)) {
        Check::Fail
    } else {
        Check::Either
    }
}

/// An `Accept` that admits JSON or event streams (none admits both).
fn accept_check(value: Option<&str>) -> Check {
    let Some(value) = value else { return Check::Pass };
    let (json, sse) = verdicts(value);
    let graphic = value.split(',').all(|t| {
        t.split(';')
            .next()
            .unwrap_or("")
            .trim_matches([' ', '\t'])
            .bytes()
            .all(|b| b.is_ascii_graphic())
    });
    if json == Some(true) || sse == Some(true) {
        Check::Pass
    } else if graphic {
        Check::Fail
    } else {
        Check::Either
    }
}

/// The checks before a request's message, in docs/http.md's order.
pub fn route(request: &Request) -> Route {
    let mut route = Route { early: Vec::new(), passes: true, metadata: false };
    let apply = |check: Check, status: u16, route: &mut Route| {
        if route.passes && check != Check::Pass {
            route.early.push(status);
            route.passes = check == Check::Either;
        }
    };
    let host = match request.header("host") {
        Some(host) => host_check(host),
        None if request.minor == 0 => Check::Pass,
        None => Check::Fail,
    };
    apply(host, 403, &mut route);
    let method = request.method.as_str();
    // Metadata is public, for a page of any origin.
    if META_PATHS.contains(&request.path.as_str()) {
        route.metadata = true;
        // RFC 9110 §9.1: what answers GET answers HEAD too.
        let read = matches!(method, "GET" | "HEAD");
        apply(if read { Check::Pass } else { Check::Fail }, 405, &mut route);
        return route;
    }
    if let Some(origin) = request.header("origin") {
        apply(origin_check(origin), 403, &mut route);
    }
    let path = if request.path == "/mcp" {
        Check::Pass
    } else if request.path.contains('%') {
        Check::Either
    } else {
        Check::Fail
    };
    apply(path, 404, &mut route);
    let known = matches!(method, "POST" | "GET" | "DELETE");
    apply(if known { Check::Pass } else { Check::Fail }, 405, &mut route);
    let has_body =
        request.header("content-length").is_some() || request.header("transfer-encoding").is_some();
    match method {
        "POST" => {
            apply(media_check(request.header("content-type")), 415, &mut route);
            apply(accept_check(request.list("accept").as_deref()), 406, &mut route);
            apply(if has_body { Check::Pass } else { Check::Fail }, 411, &mut route);
        }
        "GET" | "DELETE" => {
            // `Content-Length: 0` is no body.
            let zero = request.header("content-length").map(|l| l.trim_matches([' ', '\t']));
            let zero = zero.is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b == b'0'));
            let body = has_body && !(zero && request.header("transfer-encoding").is_none());
            apply(if body { Check::Fail } else { Check::Pass }, 400, &mut route)
        }
        _ => {}
    }
    route
}

/// The statuses of a method's own stage when nothing more is known of the message.
pub fn stage_statuses(request: &Request, metadata: bool) -> Vec<u16> {
    match request.method.as_str() {
        _ if metadata => vec![200],
        // A 2026-07-28 `subscriptions/listen` is answered by a stream: without one in
        // `Accept` it is refused.
        "POST" if may_stay_open(request) && !admits_stream(request) => {
            vec![200, 202, 400, 404, 406]
        }
        "POST" => vec![200, 202, 400, 404],
        "GET" => vec![200, 400, 404, 405, 406],
        _ => vec![204, 400, 404, 405],
    }
}

/// Whether the request's `Accept` admits an event stream (no `Accept` admits both kinds).
pub fn admits_stream(request: &Request) -> bool {
    request.list("accept").is_none_or(|accept| verdicts(&accept).1 == Some(true))
}

/// What an `Accept` value says of JSON and of event streams: for each, the verdict of the
/// most specific ranges that name it (RFC 9110 §12.5.1), `q=0` refusing (§12.4.2), any of
/// equally specific ones admitting; `None` when no range names it.
fn verdicts(value: &str) -> (Option<bool>, Option<bool>) {
    let zero = |parameter: &str| {
        parameter.split_once('=').is_some_and(|(name, q)| {
            let q = q.trim_matches([' ', '\t']);
            name.trim_matches([' ', '\t']).eq_ignore_ascii_case("q")
                && q.starts_with('0')
                && q.bytes().all(|b| b == b'0' || b == b'.')
        })
    };
    let ranges: Vec<(String, bool)> = value
        .split(',')
        .map(|t| {
            let mut parts = t.split(';');
            let media = parts.next().unwrap_or("").trim_matches([' ', '\t']).to_ascii_lowercase();
            (media, !parts.any(zero))
        })
        .collect();
    let verdict = |names: [&str; 3]| {
        names.iter().find_map(|name| {
            let named: Vec<bool> =
                ranges.iter().filter(|(media, _)| media == name).map(|(_, ok)| *ok).collect();
            (!named.is_empty()).then(|| named.contains(&true))
        })
    };
    (
        verdict(["application/json", "application/*", "*/*"]),
        verdict(["text/event-stream", "text/*", "*/*"]),
    )
}

/// Whether a response may be an event stream that stays open: a legacy GET stream, or a
/// 2026-07-28 `subscriptions/listen`.
pub fn may_stay_open(request: &Request) -> bool {
    request.method == "GET"
        || (request.method == "POST"
            && request.body.windows(20).any(|w| w == b"subscriptions/listen"))
}

/// What the body of `reply` to `request` must be: JSON-RPC for the endpoint (a response,
/// or events ending with one), the metadata document's JSON, nothing for `202` and `204`;
/// a `200` answer to a request carries its id. `max_body` reads the request's message as
/// the server's line limit does; `cut`: the stream may have been cut short by the client.
pub fn check_body(
    request: &Request,
    reply: &Reply,
    max_body: usize,
    cut: bool,
) -> Result<(), String> {
    let body = &reply.body;
    if matches!(reply.status, 202 | 204) || request.method == "HEAD" {
        return if body.is_empty() {
            Ok(())
        } else {
            Err(format!("a {} with a body", reply.status))
        };
    }
    if reply.is_stream() {
        let data = events(body, reply.open)?;
        let outs = data.iter().map(|d| check_out(d)).collect::<Result<Vec<_>, _>>()?;
        let last = outs.last();
        let ended_with_response = matches!(last, Some(Out::Response(..) | Out::Array(_)));
        if request.method == "GET" && outs.iter().any(|o| matches!(o, Out::Response(..))) {
            return Err("a response on a GET stream".into());
        }
        if !reply.open && !cut && request.method == "POST" && !ended_with_response {
            return Err("a POST's event stream ended without its response".into());
        }
        return match last {
            Some(Out::Response(id, _)) if !reply.open => check_id(request, reply, id, max_body),
            _ => Ok(()),
        };
    }
    if reply.header("content-type") != Some("application/json") {
        return Err(format!("a body of type {:?}", reply.header("content-type")));
    }
    if META_PATHS.contains(&request.path.as_str()) && reply.status == 200 {
        return super::json::members(body, super::json::STRICT)
            .map(|_| ())
            .ok_or_else(|| "metadata that is not a JSON object".into());
    }
    let text = body.strip_suffix(b"\n").unwrap_or(body);
    match check_out(text)? {
        Out::Response(id, _) => check_id(request, reply, &id, max_body),
        Out::Array(_) => Ok(()),
        other => Err(format!("a body that is not a response: {other:?}")),
    }
}

/// A response's id against the request's message: a `200` carries the id the message
/// names (as the stdio oracle reads it), a refusal that id or `null`; a notification or a
/// response is never answered `200` with a response.
fn check_id(
    request: &Request,
    reply: &Reply,
    id: &Option<String>,
    max_body: usize,
) -> Result<(), String> {
    if request.method != "POST" {
        return if id.is_none() { Ok(()) } else { Err(format!("a refusal with id {id:?}")) };
    }
    let message = request.body.strip_suffix(b"\n").unwrap_or(&request.body);
    let want = want_line(message, max_body);
    let ok = match (&want, reply.status) {
        (Want::One(w), 200) => w == id,
        (Want::Nothing, 200) => false,
        (Want::One(Some(w)) | Want::Maybe(Some(w)) | Want::OneOrNull(w, _), _) => {
            id.is_none() || id.as_ref() == Some(w)
        }
        (Want::Batch(_), _) => true,
        _ => id.is_none(),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("a {} answer with id {id:?} to a message that wants {want:?}", reply.status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, path: &str, headers: &[(&str, &str)]) -> Request {
        Request {
            method: method.into(),
            path: path.into(),
            minor: 1,
            headers: headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
            body: Vec::new(),
            start: 0,
            end: 0,
        }
    }

    #[test]
    fn checks_go_in_the_readme_order() {
        let host = ("host", "127.0.0.1:9");
        let json = ("content-type", "application/json");
        let length = ("content-length", "2");
        let ok = route(&request("POST", "/mcp", &[host, json, length]));
        assert_eq!(ok, Route { early: vec![], passes: true, metadata: false });
        let evil = route(&request("POST", "/mcp", &[("host", "evil.example"), json, length]));
        assert_eq!((evil.early, evil.passes), (vec![403], false));
        let odd = route(&request("POST", "/mcp", &[("host", "local\u{1}host"), json, length]));
        assert_eq!((odd.early, odd.passes), (vec![403], true));
        assert_eq!(route(&request("PUT", "/mcp", &[host])).early, [405]);
        assert_eq!(route(&request("GET", "/other", &[host])).early, [404]);
        assert_eq!(route(&request("POST", "/mcp", &[host, length])).early, [415]);
        assert_eq!(route(&request("POST", "/mcp", &[host, json])).early, [411]);
        let accept = ("accept", "text/html");
        assert_eq!(route(&request("POST", "/mcp", &[host, json, length, accept])).early, [406]);
        let meta = route(&request("HEAD", META_PATHS[0], &[host]));
        assert_eq!((meta.early, meta.passes, meta.metadata), (vec![], true, true));
        let meta = route(&request("POST", META_PATHS[0], &[host]));
        assert_eq!((meta.early, meta.metadata), (vec![405], true));
        assert_eq!(host_check("[::1]:80"), Check::Pass);
        assert_eq!(host_check("LOCALHOST"), Check::Pass);
        // An empty port is a port (RFC 3986 `port = *DIGIT`).
        assert_eq!(host_check("localhost:"), Check::Pass);
        assert_eq!(host_check("127.0.0.1.evil"), Check::Fail);
        assert_eq!(origin_check("null"), Check::Fail);
        assert_eq!(origin_check("http://localhost:3000/"), Check::Pass);
    }
}
