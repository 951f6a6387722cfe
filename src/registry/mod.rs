//! What an embedder builds: the `Server` and what it serves (tools, typed arguments and their
//! schemas, resources and templates, prompts, `--root` directories, task tools and their
//! tasks), checked at registration, and the errors registration reports. No I/O but reading
//! served files.

pub(crate) mod agreement;
pub(crate) mod describe;
pub(crate) mod error;
pub(crate) mod files;
pub(crate) mod intercept;
pub(crate) mod param_header;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod server;
pub(crate) mod stand_in;
pub(crate) mod task;
pub(crate) mod task_tool;
pub(crate) mod tool;
mod tool_args;
pub(crate) mod typed_args;
