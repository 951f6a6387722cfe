//! Lifecycle: the legacy `initialize` handshake, 2026-07-28 `server/discover`, and
//! opening `subscriptions/listen` streams (a cancel closes them: `session.rs`).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::conn::outbox::Outbox;
use crate::conn::session::{MOST_SUBSCRIPTIONS, Session};
use crate::dispatch::handler_setup::{Scope, cacheable, required_str};
use crate::dispatch::request::Request;
use crate::dispatch::resource_methods::not_a_uri;
use crate::registry::server::Server;
use crate::util::encoding::uri_problem;
use crate::wire::capabilities::Declared;
use crate::wire::era::{self, Era, LEGACY_VERSIONS};
use crate::wire::jsonrpc::{ErrorObject, Id, Payload, Reply, raw_str};
use crate::wire::log_level::LogLevel;

/// Negotiates a legacy session: a supported version is echoed, any other gets the newest.
pub(crate) fn initialize(
    server: &Server,
    session: &mut Session,
    req: &Request,
) -> Result<Value, ErrorObject> {
    let requested = required_str(req, req.params.protocol_version, "protocolVersion")?;
    let version =
        LEGACY_VERSIONS.iter().find(|v| **v == requested).copied().unwrap_or(LEGACY_VERSIONS[0]);
    session.legacy_version = Some(version);
    session.unread = era::unread_id(Some(version));
    // Only which capabilities are declared is ever read, so only their names are kept.
    session.client_capabilities = req.params.capabilities.map(Declared::read).unwrap_or_default();
    let mut result = Map::new();
    result.insert("protocolVersion".into(), json!(version));
    result.insert("capabilities".into(), server.capabilities());
    result.insert("serverInfo".into(), server.info.clone());
    if let Some(instructions) = &server.instructions {
        result.insert("instructions".into(), json!(instructions));
    }
    Ok(Value::Object(result))
}

/// Who the server is and what it speaks, for 2026-07-28 clients.
pub(crate) fn discover(server: &Server) -> Result<Value, ErrorObject> {
    let mut result = Map::new();
    result.insert("supportedVersions".into(), json!(era::supported_versions()));
    let mut capabilities = server.capabilities();
    // Tasks are a 2026-07-28 extension: announced here, not in the legacy `initialize`.
    if server.tasks.any() {
        capabilities["extensions"] = json!({ crate::registry::task_tool::EXTENSION: {} });
    }
    result.insert("capabilities".into(), capabilities);
    if let Some(instructions) = &server.instructions {
        result.insert("instructions".into(), json!(instructions));
    }
    Ok(cacheable(
        server,
        Era::Modern(era::MODERN_VERSIONS[0]),
        Scope::Public,
        Value::Object(result),
    ))
}

/// Opens a notification stream. The lists never change at run time, so it agrees only to
/// `resourceSubscriptions` (when it serves resources: a handler may report a change, and
/// files are watched), and the request stays open until the client cancels it.
pub(crate) fn listen(
    server: &Server,
    session: &mut Session,
    req: &Request,
    out: &mut Outbox,
) -> Option<Reply> {
    if session.is_listening(req.id) {
        return Some(Err(ErrorObject::invalid_params(
            "a subscription with this id is already open",
        )));
    }
    let mut filter: Map<String, Value> = match req.params.notifications.map(serde_json::from_str) {
        Some(Ok(Value::Object(filter))) => filter,
        _ => {
            return Some(Err(ErrorObject::invalid_params(
                "subscriptions/listen needs params.notifications (an object)",
            )));
        }
    };
    // Taken out and read by value: the list can be as large as a message, and its strings
    // move into the subscriptions rather than being copied.
    let list = filter.remove("resourceSubscriptions");
    let agrees = server.has_resources() && list.is_some();
    let uris: Vec<String> = match list.map(serde_json::from_value) {
        None => Vec::new(),
        Some(Ok(uris)) => uris,
        Some(Err(_)) => {
            return Some(Err(ErrorObject::invalid_params(
                "notifications.resourceSubscriptions must be an array of strings",
            )));
        }
    };
    // No session keeps more than `MOST_SUBSCRIPTIONS`, so a longer list is refused (by
    // `may_listen`) without being sorted whole.
    let mut set = BTreeSet::new();
    for (i, uri) in uris.into_iter().enumerate().filter(|_| agrees) {
        if set.len() > MOST_SUBSCRIPTIONS {
            break;
        }
        // Each is echoed (acknowledged, then in `notifications/resources/updated`), and the
        // schema says `format: "uri"` of it.
        if let Some(why) = uri_problem(&uri) {
            let what = format!("notifications.resourceSubscriptions[{i}]");
            return Some(Err(not_a_uri(&what, &why, &uri)));
        }
        set.insert(uri);
    }
    let uris = set;
    if let Err(error) = session.may_listen(req.id, &uris) {
        return Some(Err(error));
    }
    // Only what it may keep is echoed: each URI once, in order.
    let mut agreed = Map::new();
    if agrees {
        agreed.insert("resourceSubscriptions".into(), json!(uris));
    }
    let mut rest = Map::new();
    rest.insert("notifications".into(), Value::Object(agreed));
    out.stream_notification("notifications/subscriptions/acknowledged", req.id, &rest);
    for uri in &uris {
        session.watch(uri, server.watched_file(uri));
    }
    session.listen(req.id, uris, req.era(), era::trace_context(req.params.meta));
    None
}

/// The result that ends a `subscriptions/listen` stream when the server closes it: like every
/// message on the stream it names the stream in `_meta` (`era::write_on_stream`), beside the
/// server's own `_meta`.
pub(crate) fn listen_complete(server: &Server, id: &Id) -> Payload {
    let meta = match server.result_meta() {
        Value::Object(meta) => meta,
        _ => Map::new(),
    };
    let mut rest = Map::new();
    rest.insert("resultType".into(), json!("complete"));
    let mut json = Vec::new();
    // Writing to a `Vec` cannot fail.
    let _ = era::write_on_stream(&mut json, id, &meta, &rest);
    Payload::Json(json)
}

/// `logging/setLevel` (legacy): the least severe log the client wants from now on.
pub(crate) fn set_level(session: &mut Session, req: &Request) -> Result<Value, ErrorObject> {
    let raw = req
        .params
        .level
        .ok_or_else(|| ErrorObject::invalid_params("logging/setLevel needs params.level"))?;
    let level = raw_str(raw).and_then(|name| LogLevel::parse(&name)).ok_or_else(|| {
        ErrorObject::invalid_params(
            "params.level must be one of debug, info, notice, warning, error, critical, alert, emergency",
        )
    })?;
    session.log_level = Some(level);
    Ok(json!({}))
}

#[cfg(test)]
mod tests {
    use crate::conn::session::Session;
    use crate::dispatch::serve_line::serve_lines;
    use crate::registry::server::Server;
    use crate::wire::capabilities::{MAX_NAME_BYTES, MAX_NAMES};

    #[test]
    fn a_legacy_session_keeps_a_few_short_capability_names_of_a_huge_initialize() {
        let mut capabilities = String::from(r#"{"sampling":{},"experimental":{"x":["#);
        capabilities.push_str(&"0,".repeat(100_000));
        capabilities.push_str(r#"0]},"#);
        for i in 0..5_000 {
            capabilities.push_str(&format!(r#""c{i}":{{}},"#));
        }
        capabilities.push_str(&format!(r#""{}":{{}},"roots":1}}"#, "n".repeat(10_000)));
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities}}}}}"#
        );
        let mut session = Session::default();
        let written = serve_lines(&Server::new("s", "1"), &mut session, &[&init]);
        assert!(written.contains(r#""protocolVersion":"2025-11-25""#), "{written}");
        let kept = &session.client_capabilities;
        assert!(kept.kept_bytes() <= MAX_NAMES * MAX_NAME_BYTES, "{} bytes", kept.kept_bytes());
        assert!(kept.has("sampling") && kept.has("experimental") && kept.has("c0"));
        assert!(!kept.has("roots") && !kept.has("c4999"));
    }
}
