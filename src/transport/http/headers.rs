//! Which era a POSTed message is served by, and the 2026-07-28 headers that repeat the body
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-{Name}`), checked against it
//! before a request is dispatched, with the status and error the spec gives each failure.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Value, json};

use crate::dispatch::request;
use crate::registry::param_header::ParamHeader;
use crate::transport::http::main_loop::{error_body, refusal_body};
use crate::transport::http::parser::Head;
use crate::transport::telemetry::server_metrics::Refusal;
use crate::wire::era::{self, CAPABILITIES_KEY, LEGACY_VERSIONS, MODERN_VERSIONS, VERSION_KEY};
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::{ErrorObject, Frame, Message, is_object, raw_str};
use crate::wire::params::{MetaMembers, ParamsField};
use crate::wire::scanner::Scanner;

/// A POSTed message refused before dispatch: the reason `/metrics` counts, the status, the
/// body.
pub type Refused = (Refusal, u16, Vec<u8>);

/// Whether a POSTed message is served by 2026-07-28 rules: a request that names its version
/// in `_meta`, or that opens no session and names a later version in its header; its headers
/// must then agree with its body (`param_headers`: each tool's `Mcp-Param-{Name}` headers).
/// What cannot be served is `Err` with the refusal `/metrics` counts it as, its status and
/// body: a body that is no JSON-RPC message (`invalid_message`), a modern request whose
/// headers disagree, a legacy message whose header names a version the server does not speak
/// (`header_mismatch`). With a modern request come its `_meta`'s members, read
/// and found sound here, for dispatch to take as they are.
pub fn era<'f>(
    head: &Head,
    frame: &Frame<'f>,
    param_headers: &HashMap<String, Vec<ParamHeader>>,
) -> Result<(bool, Option<MetaMembers<'f>>), Refused> {
    let version_header = head.header("mcp-protocol-version");
    let (modern, meta) = match frame {
        Frame::Single(Message::Invalid { id, error }) => {
            // Not JSON (-32700) or not a JSON-RPC message (-32600): the body is refused.
            let body = refusal_body(head, id.as_ref(), error.clone());
            return Err((Refusal::InvalidMessage, 400, body));
        }
        Frame::Single(Message::BadNotification) => {
            // No notification the server can take (no `method`, a wrong `jsonrpc`): it gets no
            // JSON-RPC answer, but the transport must refuse what it cannot accept, and may
            // say why with no id. (A malformed response goes on to its session: `notify`.)
            return Err((
                Refusal::InvalidMessage,
                400,
                refusal_body(head, None, ErrorObject::invalid_request()),
            ));
        }
        Frame::Single(Message::Request { id, method, params }) => {
            // `_meta`'s members, read once for every check below (`None`: no `_meta`).
            // Read even when `params` names a member twice, so such a request is judged by
            // the rules of the era it names, and hears what stdio would say.
            let meta = match params {
                ParamsField::Object(p) => p.meta,
                _ => None,
            };
            let members = meta.map(era::meta_members);
            let names_version = members.flatten().is_some_and(|m| m.version.is_some());
            // A request that opens no session and says it speaks a version after the legacy
            // ones is judged by 2026-07-28 rules, so it hears what it lacks.
            let modern_header = version_header.is_some_and(|v| !LEGACY_VERSIONS.contains(&v));
            let modern = names_version
                || (head.header("mcp-session-id").is_none()
                    && modern_header
                    && method != "initialize");
            let checked = || {
                modern_checks(head, method, params, members)
                    .and_then(|()| param_checks(head, method, params, param_headers))
            };
            if modern && let Err((status, error)) = checked() {
                return Err((Refusal::HeaderMismatch, status, error_body(Some(id), error)));
            }
            (modern, members.flatten().filter(|_| modern))
        }
        Frame::Single(_) | Frame::Batch(_) => (false, None),
    };
    if !modern
        && let Some(version) = version_header
        && !LEGACY_VERSIONS.contains(&version)
        && !MODERN_VERSIONS.contains(&version)
    {
        let why = format!("unsupported MCP-Protocol-Version {version:?}");
        let data = json!({ "supported": era::supported_versions(), "requested": version });
        let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, why).with_data(data);
        let id = match frame {
            Frame::Single(Message::Request { id, .. }) => Some(id),
            _ => None,
        };
        return Err((Refusal::HeaderMismatch, 400, error_body(id, error)));
    }
    Ok((modern, meta))
}

/// The `Mcp-Param-{Name}` headers of each tool that declares some (`x-mcp-header` on a
/// property reached through `properties` alone), as registration found them.
pub fn param_headers(
    server: &crate::registry::server::Server,
) -> HashMap<String, Vec<ParamHeader>> {
    let declaring = server.tools.iter().filter(|t| !t.param_headers.is_empty());
    declaring.map(|t| (t.tool.name.clone(), t.param_headers.clone())).collect()
}

/// The 2026-07-28 rules for headers that repeat the body, in the order the reference server
/// checks them: version header present, `_meta` complete, header = body, version supported,
/// `Mcp-Method`, `Mcp-Name` (the tool or prompt name, resource URI, or task id). `members`
/// are `_meta`'s ([`era::meta_members`]; `None` without `_meta`, `Some(None)` when it is no
/// object).
pub fn modern_checks(
    head: &Head,
    method: &str,
    params: &ParamsField,
    members: Option<Option<MetaMembers>>,
) -> Result<(), (u16, ErrorObject)> {
    let MetaMembers { version, capabilities, .. } = members.flatten().unwrap_or_default();
    let mismatch = |why: String| (400, ErrorObject::new(ErrorCode::HEADER_MISMATCH, why));
    let Some(header) = head.header("mcp-protocol-version") else {
        return Err(mismatch("the MCP-Protocol-Version header is required".into()));
    };
    // As dispatch reads a request: `params` first, then `_meta`.
    request::params_object(params).map_err(|error| (400, error))?;
    let Some(version) = version.filter(|_| capabilities.is_some_and(is_object)) else {
        let why =
            format!("params._meta must carry {VERSION_KEY} and {CAPABILITIES_KEY} (an object)");
        return Err((400, ErrorObject::invalid_params(why)));
    };
    let Some(version) = raw_str(version) else { return Err((400, era::version_not_a_string())) };
    if version != header {
        return Err(mismatch(format!(
            "MCP-Protocol-Version {header:?} does not match params._meta"
        )));
    }
    if let Some(members) = members {
        era::read_members(members).map_err(|error| (400, error))?;
    }
    match head.header("mcp-method") {
        Some(named) if named == method => {}
        Some(named) => {
            return Err(mismatch(format!(
                "Mcp-Method {named:?} does not match the method {method:?}"
            )));
        }
        None => return Err(mismatch("the Mcp-Method header is required".into())),
    }
    let member = match method {
        "tools/call" | "prompts/get" => params.object().and_then(|p| p.name),
        "resources/read" => params.object().and_then(|p| p.uri),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params.object().and_then(|p| p.task_id),
        _ => return Ok(()),
    };
    let Some(body_name) = member.and_then(raw_str) else { return Ok(()) };
    match head.header("mcp-name").map(decode_header) {
        Some(Ok(named)) if named == body_name => Ok(()),
        Some(Ok(named)) => Err(mismatch(format!("Mcp-Name {named:?} does not match the body"))),
        Some(Err(why)) => Err(mismatch(format!("Mcp-Name {why}"))),
        None => Err(mismatch("the Mcp-Name header is required".into())),
    }
}

/// `Mcp-Param-{Name}` headers of a `tools/call` whose tool declares them: each must be
/// there when its argument is (at its property path, not null), hold only visible ASCII, and
/// equal the argument once decoded (numbers compared as numbers, booleans as `true`/`false`);
/// an integer argument must be one a header can carry, within ±(2^53−1).
pub fn param_checks(
    head: &Head,
    method: &str,
    params: &ParamsField,
    table: &HashMap<String, Vec<ParamHeader>>,
) -> Result<(), (u16, ErrorObject)> {
    if method != "tools/call" || table.is_empty() {
        return Ok(());
    }
    let Some(params) = params.object() else { return Ok(()) };
    let Some(headers) = params.name.and_then(raw_str).and_then(|name| table.get(name.as_ref()))
    else {
        return Ok(());
    };
    let mismatch = |why: String| Err((400, ErrorObject::new(ErrorCode::HEADER_MISMATCH, why)));
    for ParamHeader { header, path } in headers {
        // Named only in a refusal: joined then.
        let argument = || path.join(".");
        let sent = head.header(header);
        let value = value_at(params.arguments, path);
        if value.as_ref().is_some_and(|v| !carried(v)) {
            return mismatch(format!(
                "arguments.{} is out of the safe integer range a header carries \
                 (-(2^53-1) to 2^53-1)",
                argument()
            ));
        }
        let (sent, value) = match (sent, value.flatten()) {
            (None, None) => continue,
            (None, Some(_)) => {
                return mismatch(format!(
                    "the {header} header is required: arguments.{} is set",
                    argument()
                ));
            }
            (Some(_), None) => {
                return mismatch(format!("{header} is sent but arguments.{} is not", argument()));
            }
            (Some(sent), Some(value)) => (sent, value),
        };
        if !sent.bytes().all(|b| b == b' ' || b == b'\t' || b.is_ascii_graphic()) {
            return mismatch(format!("{header} holds characters a header may not"));
        }
        let decoded = match decode_header(sent) {
            Ok(decoded) => decoded,
            Err(why) => return mismatch(format!("{header} {why}")),
        };
        let same = match value {
            Value::String(text) => *text == decoded,
            Value::Number(number) => decoded.parse::<f64>().ok() == number.as_f64(),
            Value::Bool(flag) => decoded == flag.to_string(),
            _ => false,
        };
        if !same {
            return mismatch(format!("{header} does not match arguments.{}", argument()));
        }
    }
    Ok(())
}

/// The argument at `path` (a chain of member names from the `arguments` object): `None`
/// when absent or null (no header then), `Some(None)` for a number too large to decode at
/// all, else the value, decoded when it is a scalar; an object or array stands as an empty
/// array (no header equals one). Only that path is decoded: a connection thread checking
/// headers must not build the whole of a client's arguments, which can take many times
/// their size.
fn value_at(arguments: Option<&str>, path: &[String]) -> Option<Option<Value>> {
    let mut raw = arguments?;
    for name in path {
        raw = member(raw, name)?;
    }
    match raw.as_bytes().first() {
        Some(b'n') => None,
        Some(b'{' | b'[') => Some(Some(Value::Array(Vec::new()))),
        _ => match serde_json::from_str(raw) {
            Ok(value) => Some(Some(value)),
            // What the scanner accepted and serde_json does not: a number past `f64`
            // (`1e400`), there but beyond any header; or a string with a lone surrogate,
            // which no header equals.
            Err(_) if !raw.starts_with('"') => Some(None),
            Err(_) => Some(Some(Value::Array(Vec::new()))),
        },
    }
}

/// Whether a header can carry an argument: not a number past ±(2^53−1), which a
/// JavaScript client cannot hold exactly (the spec keeps such integers out of headers).
fn carried(value: &Option<Value>) -> bool {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    match value {
        None => false,
        Some(Value::Number(n)) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.unsigned_abs() <= SAFE as u64,
            (None, Some(u)) => u <= SAFE as u64,
            _ => n.as_f64().is_some_and(|f| f.abs() <= SAFE),
        },
        Some(_) => true,
    }
}

/// The member `name` of the object `object` as raw JSON text (the last one, when named
/// twice, as a parsed object has it); `None` when there is none or `object` is no object.
fn member<'a>(object: &'a str, name: &str) -> Option<&'a str> {
    let mut found = None;
    Scanner::new(object)
        .object(|key, s| {
            let raw = s.value()?;
            if key.as_deref() == Some(name) {
                found = Some(raw);
            }
            Ok(())
        })
        .ok()?;
    found
}

/// A header value, decoded from `=?base64?…?=` when so wrapped (strict base64, padded), or
/// why it cannot be.
fn decode_header(value: &str) -> Result<Cow<'_, str>, &'static str> {
    let Some(inner) = value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) else {
        return Ok(Cow::Borrowed(value));
    };
    let valid = inner.len() % 4 == 0
        && inner
            .trim_end_matches('=')
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        && inner.len() - inner.trim_end_matches('=').len() <= 2;
    let decoded = valid.then(|| crate::util::encoding::base64_decode(inner)).flatten();
    let decoded = decoded.ok_or("is not valid base64")?;
    let text = String::from_utf8(decoded).map_err(|_| "is not valid UTF-8 once decoded")?;
    Ok(Cow::Owned(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_argument_is_read_as_a_parsed_object_would_have_it() {
        let args = r#"{"big":[{"":0},{"":0}],"region":"eu","n":1.5,"region":"us","t":true,
            "o":{"deep":{"er":7},"deep":{"er":8,"x":null}},"s":"x","huge":1e400}"#;
        let at = |path: &[&str]| {
            let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
            value_at(Some(args), &path)
        };
        // The last of a name given twice, as serde_json keeps it.
        assert_eq!(at(&["region"]), Some(Some(json!("us"))));
        assert_eq!(at(&["n"]), Some(Some(json!(1.5))));
        assert_eq!(at(&["t"]), Some(Some(json!(true))));
        // Along a path, at each step.
        assert_eq!(at(&["o", "deep", "er"]), Some(Some(json!(8))));
        // Null, absent, or under something that is no object: no value.
        assert_eq!(at(&["o", "deep", "x"]), None);
        assert_eq!(at(&["o", "deep", "absent"]), None);
        assert_eq!(at(&["s", "er"]), None);
        // There, but too large to decode.
        assert_eq!(at(&["huge"]), Some(None));
        // A container is never decoded: it stands as a value no header equals.
        assert_eq!(at(&["big"]), Some(Some(json!([]))));
        assert_eq!(at(&["absent"]), None);
        assert_eq!(value_at(Some(r#""not an object""#), &["region".into()]), None);
        assert_eq!(value_at(None, &["region".into()]), None);
    }

    #[test]
    fn only_safe_integers_are_carried() {
        let safe = 9_007_199_254_740_991_i64;
        for carried_one in [json!(safe), json!(-safe), json!(0), json!(1.5), json!("x")] {
            assert!(carried(&Some(carried_one.clone())), "{carried_one}");
        }
        for beyond in [json!(safe + 1), json!(-safe - 1), json!(u64::MAX), json!(1e300)] {
            assert!(!carried(&Some(beyond.clone())), "{beyond}");
        }
        assert!(!carried(&None));
    }

    #[test]
    fn names_are_decoded_strictly() {
        assert_eq!(decode_header("=?base64?SGVsbG8=?="), Ok("Hello".into()));
        assert_eq!(decode_header("=?base64?SGVsbG8?="), Err("is not valid base64"));
        assert_eq!(decode_header("=?base64?SGVs*G8=?="), Err("is not valid base64"));
        // Base64 of the bytes ff fe: valid base64, no UTF-8.
        assert_eq!(decode_header("=?base64?//4=?="), Err("is not valid UTF-8 once decoded"));
        assert_eq!(decode_header("plain"), Ok("plain".into()));
        assert_eq!(decode_header("=?base64?half"), Ok("=?base64?half".into()));
    }
}
