//! The method table: one `match` from method name to handler, with the era rules each
//! method obeys, and the shaping every modern result gets.

use std::borrow::Cow;

use serde_json::{Value, json};

use crate::conn::Conn;
use crate::era::{self, Era, RequestMeta};
use crate::jsonrpc::{Answer, ErrorObject, Id, Reply};
use crate::methods::{lifecycle, prompts, resources, tools};
use crate::params::{Params, ParamsField};
use crate::server::{Server, Session};

/// One request on its way through dispatch, with what the completion log line needs.
pub(crate) struct Request<'a> {
    pub id: &'a Id<'a>,
    pub method: &'a str,
    /// Borrowed from the parsed message: a request's members are read, never copied.
    pub params: &'a Params<'a>,
    pub meta: RequestMeta<'a>,
    /// For tool calls: the tool name and whether the result was an error.
    pub tool: Option<(Cow<'a, str>, bool)>,
}

impl Request<'_> {
    pub fn era(&self) -> Era {
        self.meta.era
    }

    pub fn log_completion(&self, reply: &Reply, micros: u128) {
        let outcome = match reply {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("error {}", e.code),
        };
        match &self.tool {
            Some((name, is_error)) => {
                log::info!("{} id={} {micros}us {outcome} tool={name} isError={is_error}", self.method, self.id)
            }
            None => log::info!("{} id={} {micros}us {outcome}", self.method, self.id),
        }
    }
}

/// Checks that `params` is a usable object, then reads its `_meta`.
pub(crate) fn request<'a>(
    id: &'a Id<'a>,
    method: &'a str,
    params: &'a ParamsField<'a>,
) -> Result<Request<'a>, ErrorObject> {
    let params = match params {
        ParamsField::NotObject => return Err(ErrorObject::invalid_params("params must be an object")),
        ParamsField::Object(p) if p.duplicate => {
            return Err(ErrorObject::invalid_params("params must not name a member twice"));
        }
        ParamsField::Object(p) => p,
        ParamsField::Absent => &Params::NONE,
    };
    let meta = era::read_meta(params.meta)?;
    Ok(Request { id, method, params, meta, tool: None })
}

/// Answers one request. `None` means the request stays open with no response yet
/// (`subscriptions/listen`).
pub(crate) fn dispatch(server: &Server, session: &mut Session, req: &mut Request, conn: &mut Conn) -> Option<Reply> {
    let era = req.era();
    let reply = match req.method {
        "initialize" => legacy_only(req).and_then(|()| lifecycle::initialize(server, session, req)),
        "ping" => legacy_only(req).map(|()| json!({})),
        "logging/setLevel" => {
            legacy_only(req).and_then(|()| ready(true, session, req)).and_then(|()| lifecycle::set_level(session, req))
        }
        "server/discover" => modern_only(req).and_then(|()| lifecycle::discover(server)),
        "subscriptions/listen" => {
            return match modern_only(req) {
                Ok(()) => lifecycle::listen(server, session, req, &mut conn.out),
                Err(error) => Some(Err(error)),
            };
        }
        "tools/list" => ready(server.has_tools(), session, req).and_then(|()| tools::list(server, req)),
        "resources/list" => ready(server.has_resources(), session, req).and_then(|()| resources::list(server, req)),
        "resources/templates/list" => {
            ready(server.has_resources(), session, req).and_then(|()| resources::templates(server, req))
        }
        "resources/read" => {
            ready(server.has_resources(), session, req).and_then(|()| resources::read(server, session, req, conn))
        }
        "resources/subscribe" => legacy_only(req)
            .and_then(|()| ready(server.has_resources(), session, req))
            .and_then(|()| resources::subscribe(server, session, req, true)),
        "resources/unsubscribe" => legacy_only(req)
            .and_then(|()| ready(server.has_resources(), session, req))
            .and_then(|()| resources::subscribe(server, session, req, false)),
        "prompts/list" => ready(server.has_prompts(), session, req).and_then(|()| prompts::list(server, req)),
        "prompts/get" => {
            ready(server.has_prompts(), session, req).and_then(|()| prompts::get(server, session, req, conn))
        }
        "completion/complete" => {
            ready(server.has_completions(), session, req).and_then(|()| prompts::complete(server, req))
        }
        "tools/call" => {
            // Tool results are serialized as they are built, modern shaping included.
            let reply = ready(server.has_tools(), session, req).and_then(|()| tools::call(server, session, req, conn));
            return Some(reply.map(|answer| match (era, answer) {
                (Era::Modern(_), Answer::Value(result)) => Answer::Value(shape_modern(server, result)),
                (_, answer) => answer,
            }));
        }
        other => Err(ErrorObject::method_not_found(other)),
    };
    Some(reply.map(|result| {
        Answer::Value(match era {
            Era::Modern(_) => shape_modern(server, result),
            Era::Legacy => result,
        })
    }))
}

/// Handles a client notification. Notifications are never answered, whatever they hold.
pub(crate) fn notification(session: &mut Session, method: &str, params: &ParamsField) {
    match method {
        "notifications/initialized" => {}
        "notifications/cancelled" => match params.object().and_then(|p| p.request_id).and_then(Id::from_raw) {
            Some(id) => lifecycle::cancel(session, &id),
            None => log::debug!("ignored notifications/cancelled without a valid requestId"),
        },
        other => log::debug!("ignored notification {other}"),
    }
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
/// `initialize` has been answered.
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

/// Every modern result says it is complete and who answered.
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
