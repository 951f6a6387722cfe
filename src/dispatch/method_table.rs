//! The method table: one `match` from method name to handler, with the era rules each
//! method obeys, and the shaping every modern result gets.

use serde_json::{Value, json};

use crate::conn::connection::Conn;
use crate::conn::session::Session;
use crate::dispatch::request::Request;
use crate::dispatch::{lifecycle, prompt_methods, resource_methods, task_methods, tool_methods};
use crate::registry::server::Server;
use crate::wire::era::{self, Era};
use crate::wire::jsonrpc::{ErrorObject, Payload, Reply};

/// Replies to one request. `None` means the request stays open with no response yet
/// (`subscriptions/listen`).
pub(crate) fn dispatch(
    server: &Server,
    session: &mut Session,
    req: &mut Request,
    conn: &mut Conn,
) -> Option<Reply> {
    let era = req.era();
    let reply = match req.method {
        "initialize" => legacy_only(req).and_then(|()| lifecycle::initialize(server, session, req)),
        "ping" => legacy_only(req).map(|()| json!({})),
        "logging/setLevel" => legacy_only(req)
            .and_then(|()| ready(true, session, req))
            .and_then(|()| lifecycle::set_level(session, req)),
        "server/discover" => modern_only(req).and_then(|()| lifecycle::discover(server)),
        "subscriptions/listen" => {
            return match modern_only(req) {
                Ok(()) => lifecycle::listen(server, session, req, &mut conn.out),
                Err(error) => Some(Err(error)),
            };
        }
        "tools/list" => {
            ready(server.has_tools(), session, req).and_then(|()| tool_methods::list(server, req))
        }
        "resources/list" => ready(server.has_resources(), session, req)
            .and_then(|()| resource_methods::list(server, req)),
        "resources/templates/list" => ready(server.has_resources(), session, req)
            .and_then(|()| resource_methods::templates(server, req)),
        "resources/read" => ready(server.has_resources(), session, req)
            .and_then(|()| resource_methods::read(server, session, req, conn)),
        "resources/subscribe" => legacy_only(req)
            .and_then(|()| ready(server.has_resources(), session, req))
            .and_then(|()| resource_methods::subscribe(server, session, req, true)),
        "resources/unsubscribe" => legacy_only(req)
            .and_then(|()| ready(server.has_resources(), session, req))
            .and_then(|()| resource_methods::subscribe(server, session, req, false)),
        "prompts/list" => ready(server.has_prompts(), session, req)
            .and_then(|()| prompt_methods::list(server, req)),
        "prompts/get" => ready(server.has_prompts(), session, req)
            .and_then(|()| prompt_methods::get(server, session, req, conn)),
        "completion/complete" => ready(server.has_completions(), session, req)
            .and_then(|()| prompt_methods::complete(server, req)),
        "tools/call" => {
            // Tool results are serialized as they are built, modern shaping included.
            let reply = ready(server.has_tools(), session, req)
                .and_then(|()| tool_methods::call(server, session, req, conn));
            return Some(reply.map(|payload| match (era, payload) {
                (Era::Modern(_), Payload::Value(result)) => {
                    Payload::Value(shape_modern(server, result))
                }
                (_, payload) => payload,
            }));
        }
        "tasks/get" => {
            modern_only(req).and_then(|()| task_methods::handle(server, req, conn.principal()))
        }
        "tasks/update" => {
            modern_only(req).and_then(|()| task_methods::handle(server, req, conn.principal()))
        }
        "tasks/cancel" => {
            modern_only(req).and_then(|()| task_methods::handle(server, req, conn.principal()))
        }
        other => Err(ErrorObject::method_not_found(other)),
    };
    Some(reply.map(|result| {
        Payload::Value(match era {
            Era::Modern(_) => shape_modern(server, result),
            Era::Legacy => result,
        })
    }))
}

/// `initialize`, `ping`, `logging/setLevel` and `resources/(un)subscribe` do not exist in
/// 2026-07-28.
fn legacy_only(req: &Request) -> Result<(), ErrorObject> {
    match req.era() {
        Era::Legacy => Ok(()),
        Era::Modern(_) => Err(ErrorObject::method_not_found(req.method)),
    }
}

fn modern_only(req: &Request) -> Result<(), ErrorObject> {
    match req.era() {
        Era::Modern(_) => Ok(()),
        Era::Legacy => Err(ErrorObject::invalid_params(format!(
            "{} is a 2026-07-28 method: send params._meta with {} and {}",
            req.method,
            era::VERSION_KEY,
            era::CAPABILITIES_KEY
        ))),
    }
}

/// A feature method is served when its capability is declared, and, in the legacy era, once
/// `initialize` has been replied to.
fn ready(declared: bool, session: &Session, req: &Request) -> Result<(), ErrorObject> {
    if !declared {
        return Err(ErrorObject::method_not_found(req.method));
    }
    if req.era() == Era::Legacy && session.legacy_version.is_none() {
        return Err(ErrorObject::invalid_params(
            "server not initialized: send initialize first (or a 2026-07-28 request with _meta)",
        ));
    }
    Ok(())
}

/// Every modern result says it is complete and which server sent it.
fn shape_modern(server: &Server, mut result: Value) -> Value {
    if let Some(object) = result.as_object_mut() {
        object.entry("resultType").or_insert_with(|| json!("complete"));
        match object.get_mut("_meta").and_then(Value::as_object_mut) {
            Some(meta) => {
                meta.insert(era::SERVER_INFO_KEY.into(), server.info.clone());
            }
            None => {
                object.insert("_meta".into(), server.result_meta());
            }
        }
    }
    result
}
