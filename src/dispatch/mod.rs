//! Dispatch: a line already read becomes replies. `serve_line` (messages and batches), the
//! request on its way, the one `match` from method name to handler, the handlers by method
//! family, and what they share (context setup, `input_required`, signed `requestState`,
//! pagination).

pub(crate) mod handler_setup;
pub(crate) mod lifecycle;
pub(crate) mod method_table;
pub(crate) mod prompt_methods;
pub(crate) mod request;
pub(crate) mod request_state;
pub(crate) mod resource_methods;
pub(crate) mod serve_line;
pub(crate) mod task_methods;
pub(crate) mod tool_methods;
