//! `tools/list` and `tools/call`: paging the registry, validating arguments, running the
//! handler with panics contained, and checking structured output.

use std::panic::{self, AssertUnwindSafe};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::dispatch::Request;
use crate::jsonrpc::{ErrorObject, Reply, present, raw_str};
use crate::methods::{cacheable, page};
use crate::server::{Server, Session};
use crate::tool::{Context, ToolOutput};

#[derive(Deserialize, Default)]
struct ListParams<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    cursor: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct CallParams<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    name: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    arguments: Option<&'a RawValue>,
}

/// Decodes a method's params (already known to be an object, or absent).
pub(crate) fn params<'a, T: Deserialize<'a> + Default>(req: &Request<'a>) -> Result<T, ErrorObject> {
    match req.params {
        None => Ok(T::default()),
        Some(raw) => serde_json::from_str(raw.get()).map_err(|e| {
            ErrorObject::invalid_params(format!("invalid params: {}", e.to_string().replace(" at line 1", "")))
        }),
    }
}

pub(crate) fn list(server: &Server, req: &Request) -> Reply {
    let params: ListParams = params(req)?;
    let (tools, next) = page(&server.tools, params.cursor, server.page_size, "tools")?;
    let mut result = json!({ "tools": tools.iter().map(|t| &t.listing).collect::<Vec<_>>() });
    if let Some(next) = next {
        result["nextCursor"] = json!(next);
    }
    Ok(cacheable(server, req.era(), result))
}

pub(crate) fn call(server: &Server, session: &Session, req: &mut Request) -> Reply {
    let params: CallParams = params(req)?;
    let name = params.name.ok_or_else(|| ErrorObject::invalid_params("tools/call needs params.name"))?;
    let name = raw_str(name).ok_or_else(|| ErrorObject::invalid_params("params.name must be a string"))?;
    let arguments = match params.arguments {
        None => json!({}),
        Some(raw) => serde_json::from_str::<Value>(raw.get())
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| ErrorObject::invalid_params("params.arguments must be an object"))?,
    };
    let registered = server.tool(&name).ok_or_else(|| {
        ErrorObject::invalid_params(format!("unknown tool: {name}")).with_data(json!({ "name": name }))
    })?;

    let output = match registered.input.validate(&arguments) {
        Err(errors) => ToolOutput::error(format!("invalid arguments for tool {name}:\n{errors}")),
        Ok(()) => {
            let mut cx = Context { id: req.id, era: req.era(), legacy_version: session.legacy_version };
            let handler = &registered.tool.handler;
            match panic::catch_unwind(AssertUnwindSafe(|| handler(&arguments, &mut cx))) {
                Ok(Ok(output)) => check_output(registered.output.as_ref(), output),
                Ok(Err(message)) => ToolOutput::error(message),
                // The panic hook has already reported it on stderr.
                Err(panic) => {
                    ToolOutput::error(format!("tool {name} failed: internal error ({})", panic_message(&panic)))
                }
            }
        }
    };
    req.tool = Some((name.into_owned(), output.is_error));
    Ok(output.into_value())
}

/// A tool with an output schema must return structured content that satisfies it; a result
/// that does not is turned into an error the client can see rather than sent as if valid.
fn check_output(schema: Option<&crate::schema::Schema>, output: ToolOutput) -> ToolOutput {
    let Some(schema) = schema else { return output };
    if output.is_error {
        return output;
    }
    match &output.structured {
        None => ToolOutput::error("tool returned no structuredContent although it declares an outputSchema"),
        Some(value) => match schema.validate(value) {
            Ok(()) => output,
            Err(errors) => ToolOutput::error(format!("tool output does not match its outputSchema:\n{errors}")),
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
