//! The bottom layer: small helpers any layer may use, knowing nothing of MCP: byte encodings,
//! SHA-256 and HMAC, randomness, file stamps, a hash for short keys, a blocking queue between
//! threads, waiting on a descriptor, a map keyed by descriptor, a logger's answer kept, metrics
//! in Prometheus's text format, W3C trace context, a sort, and outside text shown on one line.

pub mod encoding;
#[cfg(target_os = "linux")]
pub(crate) mod fd_map;
pub(crate) mod fnv;
pub(crate) mod log_answer;
pub(crate) mod metrics;
pub(crate) mod poll;
pub(crate) mod queue;
pub(crate) mod random;
pub(crate) mod sha256;
pub(crate) mod shown;
pub(crate) mod sort;
pub(crate) mod stamp;
pub(crate) mod token;
pub(crate) mod trace_context;
