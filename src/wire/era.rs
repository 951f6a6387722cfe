//! The two MCP eras: deciding per request whether it is legacy (initialize handshake) or
//! 2026-07-28 (per-request `_meta`), and checking the metadata a modern request must carry.

use std::io::{self, Write};

use serde_json::{Map, Value, json};

use crate::util::trace_context::TraceContext;
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::{ErrorObject, Id, UnreadId, is_object, raw_str};
use crate::wire::log_level::LogLevel;
use crate::wire::params::MetaMembers;
use crate::wire::scanner::Scanner;

/// Stateless revisions, selected per request by `_meta`.
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];
/// Handshake revisions, newest first; an unknown version asked for in `initialize` gets the first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// `_meta` key: the protocol version of a 2026-07-28 request.
pub const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the capabilities a 2026-07-28 client declares on each request.
pub const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the least severe log level a 2026-07-28 request wants.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key: the server's `serverInfo` on a 2026-07-28 result.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key: the W3C `traceparent` of the caller's span (SEP-414).
pub const TRACEPARENT_KEY: &str = "traceparent";
/// `_meta` key: the W3C `tracestate` that goes with `traceparent`.
pub const TRACESTATE_KEY: &str = "tracestate";
/// `_meta` key: the `subscriptions/listen` stream a notification belongs to.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// Writes an object that belongs to a `subscriptions/listen` stream (a notification's params,
/// the result that ends it): `_meta` first, naming the stream by its request id exactly as the
/// client wrote it (no `Value` holds every id: `"\ud800"`), then `meta`'s members, then
/// `rest`'s members beside `_meta`. Keys stay in `Value`'s order.
pub fn write_on_stream(
    w: &mut dyn Write,
    id: &Id,
    meta: &Map<String, Value>,
    rest: &Map<String, Value>,
) -> io::Result<()> {
    write!(w, r#"{{"_meta":{{"{SUBSCRIPTION_ID_KEY}":{}"#, id.as_json())?;
    write_members(w, meta)?;
    w.write_all(b"}")?;
    write_members(w, rest)?;
    w.write_all(b"}")
}

/// Each member of `members` after a comma, as `"key":value`.
fn write_members(w: &mut dyn Write, members: &Map<String, Value>) -> io::Result<()> {
    for (key, value) in members {
        w.write_all(b",")?;
        serde_json::to_writer(&mut *w, key)?;
        w.write_all(b":")?;
        serde_json::to_writer(&mut *w, value)?;
    }
    Ok(())
}

/// Which protocol family a request belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// A request of a session opened by `initialize` (2024-11-05 to 2025-11-25).
    Legacy,
    /// A 2026-07-28 request; the version string is one of [`MODERN_VERSIONS`].
    Modern(&'static str),
}

/// What the server reads from a request's `params._meta`, still borrowed from the line.
#[derive(Debug)]
pub struct RequestMeta<'a> {
    /// The request's era, from its `_meta` protocol version.
    pub era: Era,
    /// `progressToken`, as raw JSON text.
    pub progress_token: Option<&'a str>,
    /// `io.modelcontextprotocol/clientCapabilities`, as raw JSON text.
    pub client_capabilities: Option<&'a str>,
    /// `io.modelcontextprotocol/logLevel`: the least severe log a modern request wants.
    pub log_level: Option<LogLevel>,
}

/// The W3C trace context in a request's `params._meta` (its raw JSON text): `traceparent`
/// and `tracestate`, when `traceparent` is a valid string named once; anything else is
/// ignored, as W3C says (the trace restarts here). Read only when asked for (a log line or a
/// handler wants it), so the requests that never ask, most of them, pay nothing for it.
pub fn trace_context(raw_meta: Option<&str>) -> Option<TraceContext> {
    let (mut traceparent, mut tracestate, mut twice) = (None, None, false);
    Scanner::new(raw_meta?)
        .object(|key, s| {
            let slot = match key.as_deref().unwrap_or_default() {
                TRACEPARENT_KEY => &mut traceparent,
                TRACESTATE_KEY => &mut tracestate,
                _ => return s.value().map(drop),
            };
            twice |= slot.replace(s.value()?).is_some();
            Ok(())
        })
        .ok()?;
    let traceparent = raw_str(traceparent.filter(|_| !twice)?)?;
    let tracestate = tracestate.and_then(raw_str);
    TraceContext::parse(&traceparent, tracestate.as_deref())
}

/// `_meta`'s members, read in one pass that builds nothing (the HTTP header checks and
/// [`read_meta`] share it); `None` when it is not a JSON object.
pub fn meta_members(raw_meta: &str) -> Option<MetaMembers<'_>> {
    if !is_object(raw_meta) {
        return None;
    }
    let mut members = MetaMembers::default();
    Scanner::new(raw_meta)
        .object(|key, s| {
            let slot = match key.as_deref().unwrap_or_default() {
                VERSION_KEY => &mut members.version,
                CAPABILITIES_KEY => &mut members.capabilities,
                "progressToken" => &mut members.progress_token,
                LOG_LEVEL_KEY => &mut members.level,
                _ => return s.value().map(drop),
            };
            members.duplicate |= slot.replace(s.value()?).is_some();
            Ok(())
        })
        .ok()?;
    Some(members)
}

/// How a reply under `version` (the revision in force: negotiated, or named by the request's
/// transport) writes an id it could not read: left out from 2025-11-25 on, where an error's
/// `id` is optional and never null; `null` before, and where no revision is known.
pub fn unread_id(version: Option<&str>) -> UnreadId {
    match version {
        Some(v) if MODERN_VERSIONS.contains(&v) || v == "2025-11-25" => UnreadId::Omitted,
        _ => UnreadId::Null,
    }
}

/// Every version the server speaks, modern first: what `server/discover` and -32022 list.
pub fn supported_versions() -> Vec<&'static str> {
    MODERN_VERSIONS.iter().chain(LEGACY_VERSIONS.iter()).copied().collect()
}

/// Reads a request's `params._meta` (its raw JSON text), or its members where a transport
/// read them already (`read`). A request is modern exactly when `_meta` names a protocol
/// version; a modern request must then be complete on its own.
pub fn read_meta<'a>(
    raw_meta: Option<&'a str>,
    read: Option<&MetaMembers<'a>>,
) -> Result<RequestMeta<'a>, ErrorObject> {
    let members = match (read, raw_meta) {
        (Some(read), _) => Some(*read),
        (None, Some(raw_meta)) => meta_members(raw_meta),
        // Spelled out for no `_meta` (most legacy requests): 50 instructions a call on stdio.
        (None, None) => {
            return Ok(RequestMeta {
                era: Era::Legacy,
                progress_token: None,
                client_capabilities: None,
                log_level: None,
            });
        }
    };
    read_members(members)
}

/// The -32602 for a `_meta` protocol version that is no string (`5`, `null`, an array): what
/// every transport answers, before HTTP compares it with its header.
pub fn version_not_a_string() -> ErrorObject {
    ErrorObject::invalid_params(format!("_meta {VERSION_KEY} must be a string"))
}

/// [`read_meta`] of a `_meta` whose members are read already (`None`: not an object).
pub fn read_members(members: Option<MetaMembers<'_>>) -> Result<RequestMeta<'_>, ErrorObject> {
    let bad = || ErrorObject::invalid_params("params._meta must be an object with unique keys");
    let members = members.filter(|m| !m.duplicate).ok_or_else(bad)?;
    let mut meta = RequestMeta {
        era: Era::Legacy,
        progress_token: members.progress_token,
        client_capabilities: members.capabilities,
        log_level: None,
    };
    if let Some(level) = members.level {
        let name = raw_str(level).unwrap_or_default();
        meta.log_level = Some(LogLevel::parse(&name).ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "_meta {LOG_LEVEL_KEY} must be a log level (debug ... emergency)"
            ))
        })?);
    }
    let Some(version) = members.version else { return Ok(meta) };
    let Some(version) = raw_str(version) else { return Err(version_not_a_string()) };
    let Some(known) = MODERN_VERSIONS.iter().find(|v| **v == version) else {
        // A legacy version is spoken too (so `supported` lists it), but not per request: the
        // message says where, or a client would send the same request again.
        let why = match LEGACY_VERSIONS.contains(&&*version) {
            true => format!(
                "protocol version {version} is served through the initialize handshake, not \
                 per request"
            ),
            false => "unsupported protocol version".into(),
        };
        return Err(ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, why)
            .with_data(json!({ "supported": supported_versions(), "requested": version })));
    };
    if !meta.client_capabilities.is_some_and(is_object) {
        return Err(ErrorObject::invalid_params(format!(
            "_meta {CAPABILITIES_KEY} is required on a 2026-07-28 request and must be an object"
        )));
    }
    meta.era = Era::Modern(known);
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn era(params: &str) -> Result<Era, ErrorCode> {
        let mut field = crate::wire::params::ParamsField::Absent;
        field.scan(&mut Scanner::new(params)).unwrap();
        let meta = field.object().unwrap().meta;
        read_meta(meta, None).map(|m| m.era).map_err(|e| e.code)
    }

    #[test]
    fn an_object_on_a_stream_names_it_first_as_the_client_wrote_its_id() {
        let written = |meta: &Map<String, Value>, rest: &Map<String, Value>| {
            let mut out = Vec::new();
            write_on_stream(&mut out, &Id::from_raw(r#""\ud800""#).unwrap(), meta, rest).unwrap();
            String::from_utf8(out).unwrap()
        };
        let (Value::Object(meta), Value::Object(rest)) =
            (json!({ "a": 1 }), json!({ "resultType": "complete" }))
        else {
            unreachable!()
        };
        let key = SUBSCRIPTION_ID_KEY;
        assert_eq!(
            written(&Map::new(), &rest),
            format!(r#"{{"_meta":{{"{key}":"\ud800"}},"resultType":"complete"}}"#)
        );
        assert_eq!(
            written(&meta, &Map::new()),
            format!(r#"{{"_meta":{{"{key}":"\ud800","a":1}}}}"#)
        );
    }

    #[test]
    fn the_members_are_found_in_one_scan_as_a_parsed_value_would_find_them() {
        fn found(meta: &str) -> Option<(Option<&str>, Option<&str>)> {
            meta_members(meta).map(|m| (m.version, m.capabilities))
        }
        let meta =
            format!(r#"{{"a":[1,{{"b":2}}],"{VERSION_KEY}":"x","{CAPABILITIES_KEY}":{{}}}}"#);
        assert_eq!(found(&meta), Some((Some(r#""x""#), Some("{}"))));
        // The last of a name given twice, and a key written with an escape is still the key.
        let twice =
            format!(r#"{{"{VERSION_KEY}":"a","io.modelcontextprotocol\/protocolVersion":"b"}}"#);
        assert_eq!(found(&twice), Some((Some(r#""b""#), None)));
        assert!(meta_members(&twice).unwrap().duplicate);
        assert_eq!(found("{}"), Some((None, None)));
        assert_eq!(found("[]"), None);
        assert_eq!(found(r#"{"a":}"#), None);
    }

    #[test]
    fn decides_era_per_request() {
        let caps = r#""io.modelcontextprotocol/clientCapabilities":{}"#;
        assert_eq!(era("{}"), Ok(Era::Legacy));
        assert_eq!(era(r#"{"_meta":{"progressToken":1}}"#), Ok(Era::Legacy));
        assert_eq!(
            era(&format!(r#"{{"_meta":{{"{VERSION_KEY}":"2026-07-28",{caps}}}}}"#)),
            Ok(Era::Modern("2026-07-28"))
        );
        assert_eq!(
            era(&format!(r#"{{"_meta":{{"{VERSION_KEY}":"2026-07-28"}}}}"#)),
            Err(ErrorCode::INVALID_PARAMS)
        );
        assert_eq!(
            era(&format!(r#"{{"_meta":{{"{VERSION_KEY}":7,{caps}}}}}"#)),
            Err(ErrorCode::INVALID_PARAMS)
        );
        assert_eq!(
            era(&format!(r#"{{"_meta":{{"{VERSION_KEY}":"1999-01-01",{caps}}}}}"#)),
            Err(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
        );
        assert_eq!(era(r#"{"_meta":[]}"#), Err(ErrorCode::INVALID_PARAMS));
        // A legacy version is refused per request, and told where it is spoken.
        let legacy = format!(r#"{{"{VERSION_KEY}":"2025-11-25",{caps}}}"#);
        let error = read_meta(Some(&legacy), None).unwrap_err();
        assert_eq!(error.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            error.message,
            "protocol version 2025-11-25 is served through the initialize handshake, not per \
             request"
        );
        let unknown = format!(r#"{{"{VERSION_KEY}":"1999-01-01",{caps}}}"#);
        assert_eq!(
            read_meta(Some(&unknown), None).unwrap_err().message,
            "unsupported protocol version"
        );
        assert_eq!(
            era(r#"{"_meta":{"progressToken":1,"progressToken":2}}"#),
            Err(ErrorCode::INVALID_PARAMS)
        );
    }

    #[test]
    fn reads_the_trace_context_only_from_a_valid_traceparent_named_once() {
        let parent = r#""traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01""#;
        let trace =
            |meta: &str| trace_context(Some(meta)).map(|t| t.tracestate().map(String::from));
        assert_eq!(trace(&format!("{{{parent}}}")), Some(None));
        assert_eq!(
            trace(&format!(r#"{{"tracestate":"rojo=1","progressToken":2,{parent}}}"#)),
            Some(Some("rojo=1".to_string()))
        );
        // A tracestate that is not a string is dropped; the traceparent stands.
        assert_eq!(trace(&format!(r#"{{{parent},"tracestate":7}}"#)), Some(None));
        assert_eq!(trace(&format!("{{{parent},{parent}}}")), None);
        assert_eq!(trace(r#"{"traceparent":7}"#), None);
        assert_eq!(trace(r#"{"tracestate":"rojo=1"}"#), None);
        assert_eq!(trace("[]"), None);
        assert!(trace_context(None).is_none());
    }
}
