//! `prompts/list`, `prompts/get` and `completion/complete`.

use serde_json::{Map, Value, json};

use crate::conn::connection::Conn;
use crate::conn::context::Context;
use crate::conn::session::Session;
use crate::dispatch::handler_setup::{
    interrupted, listed, not_an_object, page, required_str, setup,
};
use crate::dispatch::request::Request;
use crate::registry::prompt::PromptArgs;
use crate::registry::server::Server;
use crate::util::encoding::{percent_decode, percent_encode_path};
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::ErrorObject;

pub(crate) fn list(server: &Server, req: &Request) -> Result<Value, ErrorObject> {
    let (prompts, next) = page(&server.prompts, req.params.cursor, server.page_size, "prompts")?;
    Ok(listed(server, req, "prompts", prompts.iter().map(|p| p.listing()).collect(), next))
}

pub(crate) fn get(
    server: &Server,
    session: &mut Session,
    req: &Request,
    conn: &mut Conn,
) -> Result<Value, ErrorObject> {
    let name = required_str(req, req.params.name, "name")?;
    let prompt = server.prompt(&name).ok_or_else(|| {
        ErrorObject::invalid_params(format!("unknown prompt: {name}"))
            .with_data(json!({ "name": name }))
    })?;
    let mut args = PromptArgs::new();
    if let Some(raw) = req.params.arguments {
        let object: Map<String, Value> =
            serde_json::from_str(raw).map_err(|_| not_an_object(raw, "arguments"))?;
        for (key, value) in object {
            let Value::String(value) = value else {
                return Err(ErrorObject::invalid_params(format!(
                    "prompt argument {key} must be a string"
                )));
            };
            args.insert(key, value);
        }
    }
    for argument in prompt.arguments.iter().filter(|a| a.required) {
        if !args.contains_key(&argument.name) {
            return Err(ErrorObject::invalid_params(format!(
                "prompt {name} needs the argument {}",
                argument.name
            ))
            .with_data(json!({ "prompt": name, "missing": argument.name })));
        }
    }
    // The arguments' text straight from the map: no copy of them as a value first.
    let subject = || format!("{name} {}", serde_json::to_string(&args).unwrap_or_default());
    let mut cx = Context::new(setup(server, req, conn.principal(), &subject)?, session, conn);
    let messages = (prompt.handler)(&args, &mut cx);
    if let Some(interrupted) = interrupted(server, req, &cx, &subject) {
        return interrupted;
    }
    let messages = messages.map_err(|e| ErrorObject::invalid_params(e.to_string()))?;
    // A message MCP does not allow is the prompt's fault: an internal error that says so,
    // rather than invalid JSON for the client to trip on.
    let invalid = |(i, why)| {
        let message = format!("prompt {name} returned message {i}: {why}");
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
    };
    let messages = messages.iter().enumerate().map(|(i, m)| m.to_value().map_err(|why| (i, why)));
    let mut result =
        json!({ "messages": messages.collect::<Result<Vec<_>, _>>().map_err(invalid)? });
    if let Some(description) = &prompt.description {
        result["description"] = json!(description);
    }
    Ok(result)
}

/// Suggestions for a prompt argument or a template variable, filtered by what was typed.
pub(crate) fn complete(server: &Server, req: &Request) -> Result<Value, ErrorObject> {
    let bad = |what: &str| ErrorObject::invalid_params(format!("completion/complete needs {what}"));
    let reference: Value = req
        .params
        .reference
        .and_then(|r| serde_json::from_str(r).ok())
        .ok_or_else(|| bad("params.ref"))?;
    let argument: Value = req
        .params
        .argument
        .and_then(|a| serde_json::from_str(a).ok())
        .ok_or_else(|| bad("params.argument"))?;
    let (Some(arg_name), Some(prefix)) = (argument["name"].as_str(), argument["value"].as_str())
    else {
        return Err(bad("params.argument with string name and value"));
    };
    let context: Map<String, Value> = req
        .params
        .context
        .and_then(|c| serde_json::from_str::<Value>(c).ok())
        .and_then(|mut c| match c.get_mut("arguments").map(Value::take) {
            // Taken out, not copied: the context can be as large as a message.
            Some(Value::Object(arguments)) => Some(arguments),
            _ => None,
        })
        .unwrap_or_default();
    let unknown_argument = || ErrorObject::invalid_params(format!("unknown argument: {arg_name}"));
    let (values, total) = match (
        reference["type"].as_str(),
        reference["name"].as_str(),
        reference["uri"].as_str(),
    ) {
        (Some("ref/prompt"), Some(name), _) => {
            let prompt = server
                .prompt(name)
                .ok_or_else(|| ErrorObject::invalid_params(format!("unknown prompt: {name}")))?;
            let argument = prompt
                .arguments
                .iter()
                .find(|a| a.name == arg_name)
                .ok_or_else(unknown_argument)?;
            counted(
                argument
                    .completer
                    .as_ref()
                    .map(|c| c.suggest(prefix, &context))
                    .unwrap_or_default(),
            )
        }
        (Some("ref/resource"), _, Some(uri)) => {
            if let Some(root) = server.roots.iter().find(|r| r.template() == uri) {
                if arg_name != "path" {
                    return Err(unknown_argument());
                }
                // As `resources/list` spells them, which reserved expansion keeps: a `[`, `#`
                // or `?` in a name would otherwise make another URI, or none.
                let names = root.complete(&reserved_prefix(prefix));
                counted(names.iter().map(|name| percent_encode_path(name.as_bytes())).collect())
            } else {
                let template = server.template(uri).ok_or_else(|| {
                    ErrorObject::invalid_params(format!("unknown resource template: {uri}"))
                })?;
                if !template.template.variables().any(|v| v == arg_name) {
                    return Err(unknown_argument());
                }
                let completer = template.completers.get(arg_name);
                if template.template.reserved(arg_name) {
                    let prefix = reserved_prefix(prefix);
                    let values = completer.map(|c| c.suggest(&prefix, &context));
                    counted(reserved_values(values.unwrap_or_default()))
                } else {
                    counted(completer.map(|c| c.suggest(prefix, &context)).unwrap_or_default())
                }
            }
        }
        _ => {
            return Err(bad(
                r#"params.ref: {"type": "ref/prompt", "name"} or {"type": "ref/resource", "uri"}"#,
            ));
        }
    };
    Ok(
        json!({ "completion": { "values": values, "total": total, "hasMore": total > values.len() } }),
    )
}

/// Completion returns at most this many values, as MCP caps it.
const MAX_COMPLETIONS: usize = 100;

/// Values for a `{+var}`, as the client is to send them: RFC 6570's reserved expansion passes
/// a `%XX` through as written, and a read then decodes it, so a value's own `%` (a file named
/// `%2F.txt`) is sent as `%25` to name what it names (`%252F.txt`, not `/.txt`).
fn reserved_values(values: Vec<String>) -> Vec<String> {
    values.into_iter().map(|value| value.replace('%', "%25")).collect()
}

/// What a `{+var}` prefix the client typed stands for once expanded and read: its `%XX`
/// decoded (a `%` without two hex digits, or bytes that are not UTF-8, kept as typed).
fn reserved_prefix(prefix: &str) -> String {
    let decoded = percent_decode(prefix).and_then(|bytes| String::from_utf8(bytes).ok());
    decoded.unwrap_or_else(|| prefix.to_string())
}

/// The first [`MAX_COMPLETIONS`] values and how many there were.
fn counted(mut values: Vec<String>) -> (Vec<String>, usize) {
    let total = values.len();
    values.truncate(MAX_COMPLETIONS);
    (values, total)
}
