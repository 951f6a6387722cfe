//! The interceptor hooks: plain functions an embedder sets on the `Server` to see each
//! request before it is dispatched (and refuse it) and each reply after, on the serving
//! thread, for metrics, audit logs, authorization or rate limits.

use std::time::Duration;

use crate::conn::principal::Principal;
use crate::wire::era::Era;
use crate::wire::jsonrpc::{ErrorObject, Id};

/// A request as the interceptor hooks see it, borrowed from the message it arrived in.
#[derive(Debug, Clone, Copy)]
pub struct Intercepted<'a> {
    /// The method name, such as `tools/call`.
    pub method: &'a str,
    /// The id, as the client wrote it.
    pub id: &'a Id<'a>,
    /// `params` as the client wrote it (JSON text of an object), `None` when it sent none (or
    /// to `on_reply` at a `subscriptions/listen` stream's end: they are not kept meanwhile).
    pub params: Option<&'a str>,
    /// Whether the request belongs to a legacy `initialize` session or is a 2026-07-28 one.
    pub era: Era,
    /// Who sent it, as HTTP authentication established it (as [`crate::Context::principal`]
    /// tells a handler): `None` on stdio and without authentication.
    pub principal: Option<&'a Principal>,
}

/// The hook [`crate::Server::on_request`] sets: it sees a request before dispatch, and an
/// `Err` refuses it (the client gets that error instead of a result).
pub type OnRequest = dyn Fn(&Intercepted) -> Result<(), ErrorObject>;

/// The hook [`crate::Server::on_reply`] sets: it sees each request with its reply (the JSON
/// text of the `result`, or the error) and how long it took to produce.
pub type OnReply = dyn Fn(&Intercepted, Result<&str, &ErrorObject>, Duration);

/// The hooks a server has; none by default, which costs a comparison or two per request.
#[derive(Default)]
pub(crate) struct Hooks {
    pub on_request: Option<Box<OnRequest>>,
    pub on_reply: Option<Box<OnReply>>,
}
