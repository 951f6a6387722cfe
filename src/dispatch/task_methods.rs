//! `tasks/get`, `tasks/update` and `tasks/cancel`, and the turn a `tools/call` of a task tool
//! takes when the client declared the tasks extension (see `tasks.rs`).

use serde_json::{Map, Value, json};

use crate::conn::connection::Conn;
use crate::conn::context::Context;
use crate::conn::principal::Principal;
use crate::conn::session::Session;
use crate::dispatch::handler_setup::{interrupted, not_an_object, required_str, setup};
use crate::dispatch::request::Request;
use crate::registry::server::Server;
use crate::registry::task_tool::{declared, missing_extension};
use crate::wire::jsonrpc::{ErrorObject, Payload, Reply};

/// A `tools/call` of a task tool: `None` when it runs as a plain call (not a task tool, an
/// optional one for a client without the extension, or any for a legacy client, which has no
/// way to poll); else -32021 (required, no extension), the `InputRequiredResult` of its
/// preparation, or the new task's handle.
pub(crate) fn call(
    server: &Server,
    session: &mut Session,
    req: &Request,
    name: &str,
    arguments: &mut Value,
    conn: &mut Conn,
) -> Option<Reply> {
    let spec = server.tasks.specs.get(name)?;
    // A legacy session never gets a task, whatever its request's `_meta` says: it has no
    // `tasks/get` to follow one up with.
    let modern = matches!(req.era(), crate::wire::era::Era::Modern(_));
    let declared = declared(req.meta.client_capabilities).filter(|_| modern);
    let Some(capabilities) = declared else {
        return (spec.required && modern).then(|| Err(missing_extension()));
    };
    let input = match &spec.prepare {
        // Moved into the task, not copied: the loop has no more use for them.
        None => std::mem::take(arguments),
        Some(prepare) => {
            let subject = || format!("{name} {arguments}");
            let setup = match setup(server, req, conn.principal(), &subject) {
                Ok(setup) => setup,
                Err(error) => return Some(Err(error)),
            };
            let mut cx = Context::new(setup, session, conn);
            let prepared = prepare(arguments, &mut cx);
            if let Some(interrupted) = interrupted(server, req, &cx, &subject) {
                return Some(interrupted.map(Payload::Value));
            }
            match prepared {
                Ok(input) => input,
                Err(error) => {
                    return Some(Ok(Payload::Value(
                        json!({ "content": [{ "type": "text", "text": error.to_string() }], "isError": true }),
                    )));
                }
            }
        }
    };
    Some(server.tasks.start(name, spec, input, capabilities, conn.principal()).map(Payload::Value))
}

/// What `tools/list` says of the task tool `name` to the client of `req`, as
/// `execution.taskSupport`: what a call from this client will do, or `None` for a plain call,
/// as for any other tool. `optional`: a call may become a task (the extension declared);
/// `required`: it runs only as a task (a 2026-07-28 client without the extension is refused).
/// A legacy session never gets a task, so it sees no `execution`: told `required` (in
/// 2025-11-25, "clients MUST invoke the tool as a task"), a client would not call a tool that
/// runs inline for it. The field is 2025-11-25's; 2026-07-28 and the extension define none, so
/// there it is a hint beside the tool.
pub(crate) fn listed_support<'s>(
    server: &'s Server,
    req: &Request,
) -> impl Fn(&str) -> Option<&'static str> + 's {
    let modern = matches!(req.era(), crate::wire::era::Era::Modern(_));
    let extension =
        modern && server.tasks.any() && declared(req.meta.client_capabilities).is_some();
    move |name| {
        let spec = server.tasks.specs.get(name).filter(|_| modern)?;
        match (spec.required, extension) {
            (true, _) => Some("required"),
            (false, true) => Some("optional"),
            (false, false) => None,
        }
    }
}

/// The three task methods, for a client that declared the extension; a task is found only
/// for the caller (`principal`) that started it.
pub(crate) fn handle(
    server: &Server,
    req: &Request,
    principal: Option<&Principal>,
) -> Result<Value, ErrorObject> {
    if !server.tasks.any() {
        return Err(ErrorObject::method_not_found(req.method));
    }
    if declared(req.meta.client_capabilities).is_none() {
        return Err(missing_extension());
    }
    let id = required_str(req, req.params.task_id, "taskId")?;
    let task = server.tasks.get(&id, principal).ok_or_else(|| {
        ErrorObject::invalid_params(format!(
            "unknown task {id} (tasks live in one server process's memory, and not across restarts)"
        ))
    })?;
    match req.method {
        "tasks/get" => Ok(task.detailed(&id)),
        "tasks/cancel" => {
            task.cancel();
            Ok(json!({}))
        }
        _ => {
            let raw = req.params.input_responses.unwrap_or("{}");
            let responses: Map<String, Value> =
                serde_json::from_str(raw).map_err(|_| not_an_object(raw, "inputResponses"))?;
            if let Some((key, _)) = responses.iter().find(|(_, answer)| !answer.is_object()) {
                return Err(ErrorObject::invalid_params(format!(
                    "params.inputResponses.{key} must be an object"
                )));
            }
            task.update(responses)?;
            Ok(json!({}))
        }
    }
}
