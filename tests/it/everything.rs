//! `examples/everything`: its transcripts, replayed in process against the same server the
//! example binary serves (with a fixed `requestState` key, so signed state is reproducible).

#[path = "../../examples/everything/modern.rs"]
mod modern;
#[path = "../../examples/everything/server.rs"]
mod server;
#[path = "../../examples/everything/tasks.rs"]
mod tasks;

/// The server `examples/everything` serves, with a fixed `requestState` key and states that
/// never expire: signed state is reproducible, and a transcript's stays good.
pub fn server(args: &[String]) -> baremcp::Server {
    let server = server::build()
        .expect("the everything server registers")
        .state_secret("transcripts")
        .state_ttl(std::time::Duration::MAX);
    crate::transcripts::apply_args(server, args)
}

#[test]
fn everything_transcripts() {
    crate::transcripts::check_dir("transcripts/everything", &server, false);
}
