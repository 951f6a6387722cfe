//! What a server tells its operators about itself: the metrics `/metrics` serves
//! (`server_metrics.rs`) and spans exported to an OpenTelemetry collector (`otlp.rs`). The
//! HTTP layer updates them; nothing here touches a socket of a client.

pub(crate) mod otlp;
pub(crate) mod server_metrics;
