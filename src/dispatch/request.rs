//! One request on its way through dispatch: its id, method, `params` and `_meta`, read once
//! from the line, and what its completion log line needs.

use std::borrow::Cow;

use crate::util::shown::Clipped;
use crate::util::trace_context::TraceContext;
use crate::wire::era::{self, Era, RequestMeta};
use crate::wire::jsonrpc::{ErrorObject, Id, Reply};
use crate::wire::params::{Params, ParamsField};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::request";

/// `params` as the object a method reads (none is an empty one), or the -32602 every transport
/// answers (HTTP before it reads `_meta` for its headers): not an object, a member named twice.
#[inline]
pub(crate) fn params_object<'p, 'a>(
    params: &'p ParamsField<'a>,
) -> Result<&'p Params<'a>, ErrorObject> {
    match params {
        ParamsField::NotObject => Err(ErrorObject::invalid_params("params must be an object")),
        ParamsField::Object(p) if p.duplicate => {
            Err(ErrorObject::invalid_params("params must not name a member twice"))
        }
        ParamsField::Object(p) => Ok(p),
        ParamsField::Absent => Ok(&Params::NONE),
    }
}

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

impl<'a> Request<'a> {
    /// Checks that `params` is a usable object, then reads its `_meta`.
    pub fn new(
        id: &'a Id<'a>,
        method: &'a str,
        params: &'a ParamsField<'a>,
    ) -> Result<Request<'a>, ErrorObject> {
        let params = params_object(params)?;
        let meta = era::read_meta(params.meta, params.meta_read)?;
        Ok(Request { id, method, params, meta, tool: None })
    }

    pub fn era(&self) -> Era {
        self.meta.era
    }

    /// Whether completions are logged. Asked here, so the filter is this module's, where the
    /// line is logged (`RUST_LOG=baremcp::request=info`); timing costs a clock read per
    /// request, so requests are timed only then.
    pub fn logged() -> bool {
        log::log_enabled!(target: LOG, log::Level::Info)
    }

    /// Logs the request's completion line; its trace id is `_meta`'s, else `fallback`'s (the
    /// HTTP `traceparent` header's).
    pub fn log_completion(&self, reply: &Reply, micros: u128, fallback: Option<&TraceContext>) {
        let outcome = match reply {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("error {}", e.code),
        };
        // The trace id goes last, so lines without one read as they always did.
        let from_meta = era::trace_context(self.params.meta);
        let trace = match from_meta.as_ref().or(fallback) {
            Some(trace) => format!(" trace_id={}", trace.trace_id_hex()),
            None => String::new(),
        };
        let (method, id) = (Clipped(self.method), Clipped(self.id.as_json()));
        match &self.tool {
            Some((name, is_error)) => {
                log::info!(target: LOG, "{method} id={id} {micros}us {outcome} tool={name} isError={is_error}{trace}")
            }
            None => log::info!(target: LOG, "{method} id={id} {micros}us {outcome}{trace}"),
        }
    }
}
