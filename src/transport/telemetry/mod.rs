//! What a server tells its operators about itself: the metrics `/metrics` serves
//! (`server_metrics.rs`), spans exported to an OpenTelemetry collector (`otlp.rs`, over the
//! HTTP client in `collector.rs`; `outage.rs`: what is logged while the collector fails), and
//! what the dispatching loop records of each request (`observer.rs`). The HTTP layer updates
//! them; nothing here touches a socket of a client.

pub(crate) mod collector;
pub(crate) mod observer;
pub(crate) mod otlp;
mod outage;
pub(crate) mod server_metrics;
