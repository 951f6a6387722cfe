//! `tools/list` and `tools/call`: paging the registry, validating arguments, running the
//! handler with panics contained, and checking structured output.

use std::borrow::Cow;
use std::panic::{self, AssertUnwindSafe};

use serde_json::{Map, Value, json};

use crate::conn::connection::Conn;
use crate::conn::context::Context;
use crate::conn::session::Session;
use crate::dispatch::handler_setup::{
    interrupted, listed, not_an_object, page, required_str, setup,
};
use crate::dispatch::request::Request;
use crate::registry::server::{Registered, Server};
use crate::registry::tool::{Content, ToolOutput};
use crate::wire::era::Era;
use crate::wire::jsonrpc::{ErrorObject, Payload, Reply};
use crate::wire::value::weigh;

/// Arguments whose JSON text is at most this long, and that take at most [`KEPT_WEIGHT`]
/// decoded ([`weigh`]: an object of one short member is a map node of about 650 bytes for 8
/// bytes of text), are kept for the session's next call, so the small calls that gain most
/// from the reuse allocate nothing (when no object in them has more than 16 members, which
/// `value::decode_into` builds afresh). The text is checked first, as it costs nothing.
pub(crate) const KEPT_ARGUMENTS: usize = 512;
/// What kept arguments may take in memory, however they are shaped.
pub(crate) const KEPT_WEIGHT: usize = 16 << 10;

pub(crate) fn list(server: &Server, req: &Request) -> Result<Value, ErrorObject> {
    let (tools, next) = page(&server.tools, req.params.cursor, server.page_size, "tools")?;
    let legacy = matches!(req.era(), Era::Legacy);
    // A task tool says how it runs for this client: that depends on the request.
    let support = crate::dispatch::task_methods::listed_support(server, req);
    let tools: Vec<Cow<Value>> =
        tools.iter().map(|t| listing(t, legacy, support(&t.tool.name))).collect();
    Ok(listed(server, req, "tools", json!(tools), next))
}

/// The tool as this request is shown it: a task tool with how a call of this client's runs
/// (`support`), and before 2026-07-28 without an `outputSchema` that does not say `"type":
/// "object"` (the 2025-06-18 and 2025-11-25 schema.json: `structuredContent` is an object
/// there); its results are still checked against it, and sent as [`legacy_structured`] says.
fn listing<'t>(registered: &'t Registered, legacy: bool, support: Option<&str>) -> Cow<'t, Value> {
    let object = |schema: &Value| schema.get("type").and_then(Value::as_str) == Some("object");
    let unlisted_output =
        legacy && registered.tool.output_schema.as_ref().is_some_and(|s| !object(s));
    if !unlisted_output && support.is_none() {
        return Cow::Borrowed(&registered.listing);
    }
    let mut listing = registered.listing.clone();
    if let Some(fields) = listing.as_object_mut().filter(|_| unlisted_output) {
        fields.remove("outputSchema");
    }
    if let Some(support) = support {
        listing["execution"] = json!({ "taskSupport": support });
    }
    Cow::Owned(listing)
}

/// Before 2026-07-28 `structuredContent` is an object: a legacy session gets any other
/// structured value (an array, a number, `null`) only as its JSON text, in a last text block,
/// written even when the tool turned that copy off ([`Tool::structured_text`]), as it is then
/// the one place the value is.
///
/// [`Tool::structured_text`]: crate::Tool::structured_text
fn legacy_structured(output: &mut ToolOutput) {
    if let Some(value) = output.structured.take_if(|value| !value.is_object()) {
        output.content.push(Content::Text(value.to_string()));
    }
}

pub(crate) fn call<'a>(
    server: &Server,
    session: &mut Session,
    req: &mut Request<'a>,
    conn: &mut Conn,
) -> Reply {
    let name: Cow<'a, str> = required_str(req, req.params.name, "name")?;
    // The last call's arguments are decoded over, so a call like the last allocates nothing
    // (if its objects have at most 16 members: `value::decode_into`).
    let mut arguments = session.arguments.take().unwrap_or_default();
    match req.params.arguments {
        None => arguments = Value::Object(Map::new()),
        Some(raw) => {
            if crate::wire::value::decode_into(raw, &mut arguments).is_err()
                || !arguments.is_object()
            {
                return Err(not_an_object(raw, "arguments"));
            }
        }
    }
    let registered = server.tool(&name).ok_or_else(|| {
        ErrorObject::invalid_params(format!("unknown tool: {name}"))
            .with_data(json!({ "name": name }))
    })?;

    let mut output = match registered.input.validate(&arguments) {
        Err(errors) => ToolOutput::error(format!("invalid arguments for tool {name}:\n{errors}")),
        Ok(()) => {
            if let Some(reply) = crate::dispatch::task_methods::call(
                server,
                session,
                req,
                &name,
                &mut arguments,
                conn,
            ) {
                // Counted and traced as a call of this tool, as the same call made inline is
                // (and, as there, a refusal before the tool ran is not).
                if let Ok(Payload::Value(result)) = &reply {
                    req.tool = Some((name, result["isError"] == true));
                }
                return reply;
            }
            // The subject binds a 2026-07-28 requestState to this tool and these arguments.
            let modern = matches!(req.era(), Era::Modern(_));
            let subject = || format!("{name} {arguments}");
            let mut cx =
                Context::new(setup(server, req, conn.principal(), &subject)?, session, conn);
            let handler = &registered.tool.handler;
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| handler(&arguments, &mut cx)));
            if modern && let Some(interrupted) = interrupted(server, req, &cx, &subject) {
                return interrupted.map(Payload::Value);
            }
            match outcome {
                Ok(Ok(output)) => match (output.refused(&name), &registered.output) {
                    (Some(refused), _) => refused,
                    (None, Some(schema)) => check_output(schema, output),
                    (None, None) => output,
                },
                Ok(Err(error)) => ToolOutput::error(error.to_string()),
                // The panic hook has already reported it on stderr.
                Err(panic) => ToolOutput::error(format!(
                    "tool {name} failed: internal error ({})",
                    panic_message(&panic)
                )),
            }
        }
    };
    // Small arguments are kept for the next call; others are freed before the result is
    // serialized, which keeps one copy fewer alive at the peak.
    // No text of 96 bytes weighs more than 16 KiB (152 a byte at most: objects in objects),
    // so the common small call is not weighed.
    let small = |raw: &str| {
        raw.len() <= 96 || raw.len() <= KEPT_ARGUMENTS && weigh(&arguments) <= KEPT_WEIGHT
    };
    if req.params.arguments.is_some_and(small) {
        session.arguments = Some(arguments);
    } else {
        drop(arguments);
    }
    let server_info = matches!(req.era(), Era::Modern(_)).then(|| server.info_json());
    if server_info.is_none() {
        legacy_structured(&mut output);
    }
    let mut json = std::mem::take(&mut session.spare);
    output.write_json(&mut json, server_info, registered.tool.structured_text);
    req.tool = Some((name, output.is_error));
    Ok(Payload::Json(json))
}

/// A tool with an output schema must return structured content that satisfies it; a result
/// that does not is turned into an error the client can see rather than sent as if valid.
fn check_output(schema: &crate::schema::Schema, output: ToolOutput) -> ToolOutput {
    if output.is_error {
        return output;
    }
    match &output.structured {
        None => ToolOutput::error(
            "tool returned no structuredContent although it declares an outputSchema",
        ),
        Some(value) => match schema.validate(value) {
            Ok(()) => output,
            Err(errors) => {
                ToolOutput::error(format!("tool output does not match its outputSchema:\n{errors}"))
            }
        },
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{KEPT_ARGUMENTS, weigh};
    use crate::conn::session::Session;
    use crate::dispatch::serve_line::serve_lines;
    use crate::registry::server::Server;
    use crate::registry::tool::{Tool, ToolOutput};

    #[test]
    fn only_short_arguments_are_kept_for_the_next_call() {
        let mut server = Server::new("s", "1");
        let echo = Tool::new("echo", "Echoes", json!({"type": "object"}), |args, _| {
            Ok(ToolOutput::text(args.to_string()))
        });
        server.add_tool(echo).unwrap();
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
        let call = |arguments: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{arguments}}}}}"#
            )
        };
        let mut session = Session::default();
        // Short: kept, and its allocations serve the next call.
        let short = r#"{"x":[{"a":0},{"a":1}]}"#;
        let written = serve_lines(&server, &mut session, &[init, &call(short)]);
        assert!(written.contains(r#"{\"x\":[{\"a\":0},{\"a\":1}]}"#), "{written}");
        assert_eq!(session.arguments, Some(serde_json::from_str(short).unwrap()));
        // Just over the bound, in the shape that costs most per byte: not kept.
        let mut long = String::from(r#"{"x":["#);
        while long.len() <= KEPT_ARGUMENTS {
            long.push_str(r#"{"":0},"#);
        }
        long.push_str(r#"{"":0}]}"#);
        let written = serve_lines(&server, &mut session, &[&call(&long)]);
        assert!(written.contains(r#""id":2,"result""#), "{written}");
        assert!(session.arguments.is_none(), "{} bytes of arguments kept", long.len());
        // Short, but objects in objects: 498 bytes that would keep 61 KiB.
        let deep = format!("{}0{}", r#"{"":"#.repeat(98), "}".repeat(98));
        assert!(deep.len() <= KEPT_ARGUMENTS);
        serve_lines(&server, &mut session, &[&call(&deep)]);
        assert!(session.arguments.is_none(), "kept: {:?}", session.arguments.as_ref().map(weigh));
    }
}
