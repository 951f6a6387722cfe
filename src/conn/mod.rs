//! One connection's state: where its input comes from and its output goes, what the client
//! session remembers between messages, and the `Context` a handler gets to act on the
//! request it serves.

pub(crate) mod connection;
pub(crate) mod context;
pub(crate) mod outbox;
pub(crate) mod principal;
pub(crate) mod session;
