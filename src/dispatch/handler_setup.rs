//! What the handlers of every method family share: the context facts a handler gets, the
//! `InputRequiredResult` of a 2026-07-28 request that needs the client, reading required
//! string members, pagination and the shape of list results with their caching hints.

use std::borrow::Cow;
use std::time::SystemTime;

use serde_json::{Map, Value, json};

use crate::conn::context::{Context, Setup};
use crate::conn::principal::Principal;
use crate::dispatch::request::Request;
use crate::dispatch::request_state;
use crate::registry::server::Server;
use crate::registry::task::MAX_WAITING_ANSWERS;
use crate::util::encoding::unix_secs;
use crate::wire::era::Era;
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::{ErrorObject, is_object, raw_str};
use crate::wire::value::weigh;

/// The context facts for a handler: progress token, log level, client capabilities, and for
/// a 2026-07-28 retry the answers from `inputResponses` and a verified `requestState`.
/// `subject` names the request (its method's salient parameters), so state made for one
/// request is refused on another; it is built only when a `requestState` needs it. State made
/// for one `principal` (the caller the transport authenticated) is refused for another.
pub(crate) fn setup<'a>(
    server: &Server,
    req: &Request<'a>,
    principal: Option<&Principal>,
    subject: &dyn Fn() -> String,
) -> Result<Setup<'a>, ErrorObject> {
    let progress_token = req
        .meta
        .progress_token
        .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64());
    let client_capabilities = req.meta.client_capabilities;
    let mut answers = None;
    if let Era::Modern(_) = req.era() {
        if let Some(raw) = req.params.request_state {
            let state = raw_str(raw).ok_or_else(|| {
                ErrorObject::invalid_params("params.requestState must be a string")
            })?;
            answers = Some(
                request_state::open(
                    signing_key(server)?,
                    req.method,
                    &subject(),
                    principal,
                    &state,
                    unix_secs(SystemTime::now()),
                )
                .map_err(|why| {
                    ErrorObject::invalid_params(format!("invalid requestState: {why}"))
                })?,
            );
        }
        if let Some(raw) = req.params.input_responses {
            let responses: Map<String, Value> =
                serde_json::from_str(raw).map_err(|_| not_an_object(raw, "inputResponses"))?;
            // Every answer MCP defines (ElicitResult, CreateMessageResult, ListRootsResult) is
            // an object; anything else is a malformed retry, not a missing answer.
            if let Some((key, _)) = responses.iter().find(|(_, answer)| !answer.is_object()) {
                return Err(ErrorObject::invalid_params(format!(
                    "params.inputResponses.{key} must be an object"
                )));
            }
            answers.get_or_insert_default().extend(responses);
        }
        // A handler may ask again and again, each round's answers carried in the state to the
        // next: what one request may hold of them is bounded, as for a task.
        let kept: usize = answers.iter().flat_map(|a| a.values()).map(weigh).sum();
        if kept > MAX_WAITING_ANSWERS {
            return Err(ErrorObject::invalid_params(format!(
                "params.inputResponses too large: a request keeps at most \
                 {MAX_WAITING_ANSWERS} bytes of answers, with those of requestState"
            )));
        }
    }
    Ok(Setup {
        id: req.id,
        era: req.era(),
        progress_token,
        log_level: req.meta.log_level,
        raw_meta: req.params.meta,
        client_capabilities,
        answers,
    })
}

/// After a handler ran for a 2026-07-28 request: an `InputRequiredResult` when it still needs
/// the client's input, -32021 when the client lacks a capability for it, `None` when the
/// handler's own result stands.
pub(crate) fn interrupted(
    server: &Server,
    req: &Request,
    cx: &Context,
    subject: &dyn Fn() -> String,
) -> Option<Result<Value, ErrorObject>> {
    if let Some(capability) = cx.missing {
        let data = json!({ "requiredCapabilities": { capability: {} } });
        return Some(Err(ErrorObject::new(
            ErrorCode::MISSING_CLIENT_CAPABILITY,
            "missing required client capability",
        )
        .with_data(data)));
    }
    let pending = cx.pending.as_ref()?;
    let key = match signing_key(server) {
        Ok(key) => key,
        Err(refused) => return Some(Err(refused)),
    };
    let none = Map::new();
    let answers = cx.used.as_ref().unwrap_or(&none);
    let expires = unix_secs(SystemTime::now()).saturating_add(server.state_ttl_secs);
    let state = request_state::seal(key, req.method, &subject(), cx.principal(), answers, expires);
    Some(Ok(
        json!({ "resultType": "input_required", "inputRequests": pending, "requestState": state }),
    ))
}

/// The key that signs `requestState`, or -32603 when there is none (nothing is signed with
/// a weaker one).
fn signing_key(server: &Server) -> Result<&[u8], ErrorObject> {
    server.state_key().map_err(|why| {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("requestState cannot be signed: {why}"))
    })
}

/// A required string member of `params` (`raw` is its JSON text), unescaped; -32602 when it
/// is missing or not a string.
pub(crate) fn required_str<'a>(
    req: &Request,
    raw: Option<&'a str>,
    member: &str,
) -> Result<Cow<'a, str>, ErrorObject> {
    let raw = raw.ok_or_else(|| {
        ErrorObject::invalid_params(format!("{} needs params.{member}", req.method))
    })?;
    raw_str(raw)
        .ok_or_else(|| ErrorObject::invalid_params(format!("params.{member} must be a string")))
}

/// The error for `params.{member}` (`raw` is its JSON text) when it does not decode to an
/// object: JSON of another kind, or an object holding what a `Value` cannot (a number beyond
/// `f64`, a lone surrogate).
pub(crate) fn not_an_object(raw: &str, member: &str) -> ErrorObject {
    ErrorObject::invalid_params(if is_object(raw) {
        format!("params.{member} holds a number out of range or a lone surrogate")
    } else {
        format!("params.{member} must be an object")
    })
}

/// Who may reuse a cached result.
#[derive(Clone, Copy)]
pub(crate) enum Scope {
    /// The same for every caller: lists and discovery.
    Public,
    /// May be the user's own data: resource contents.
    Private,
}

/// Adds the caching hints 2026-07-28 requires on discover, list and read results.
pub(crate) fn cacheable(server: &Server, era: Era, scope: Scope, mut result: Value) -> Value {
    if let (Era::Modern(_), Some(object)) = (era, result.as_object_mut()) {
        object.insert("ttlMs".into(), json!(server.ttl_ms));
        let scope = match scope {
            Scope::Public => "public",
            Scope::Private => "private",
        };
        object.insert("cacheScope".into(), json!(scope));
    }
    result
}

/// A `*/list` result: the page under `key`, `nextCursor` when more follow, and the caching
/// hints of a public list.
pub(crate) fn listed(
    server: &Server,
    req: &Request,
    key: &str,
    items: Value,
    next: Option<String>,
) -> Value {
    let mut result = json!({ key: items });
    if let Some(next) = next {
        result["nextCursor"] = json!(next);
    }
    cacheable(server, req.era(), Scope::Public, result)
}

/// One page of `items` after `cursor`. A cursor is `KIND@OFFSET`: opaque to clients, checked
/// here so that a cursor from another list, or one never issued, is refused.
pub(crate) fn page<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    size: Option<usize>,
    kind: &str,
) -> Result<(&'a [T], Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(raw) => raw_str(raw)
            .and_then(|c| c.strip_prefix(kind)?.strip_prefix('@')?.parse::<usize>().ok())
            .filter(|&offset| offset > 0 && offset < items.len())
            .ok_or_else(|| {
                ErrorObject::invalid_params(format!("invalid cursor for {kind}/list"))
            })?,
    };
    let end = size.map_or(items.len(), |size| items.len().min(start + size));
    let next = (end < items.len()).then(|| format!("{kind}@{end}"));
    Ok((&items[start..end], next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_rejects_foreign_cursors() {
        let items = [1, 2, 3, 4, 5];
        assert_eq!(page(&items, None, None, "tools").unwrap(), (&items[..], None));
        assert_eq!(
            page(&items, None, Some(2), "tools").unwrap(),
            (&items[..2], Some("tools@2".into()))
        );
        assert_eq!(
            page(&items, Some(r#""tools@4""#), Some(2), "tools").unwrap(),
            (&items[4..], None)
        );
        for bad in [r#""prompts@2""#, r#""tools@0""#, r#""tools@5""#, r#""tools@x""#, "2", "null"] {
            assert!(page(&items, Some(bad), Some(2), "tools").is_err(), "{bad}");
        }
    }
}
