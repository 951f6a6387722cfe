//! A small HTTP load run against the `baremcp --http` binary (`benches/http_load` runs the
//! full size): 8 clients, legacy and 2026-07-28, one open stream each, 50 calls each, every
//! reply checked; and a slow tool that does not hold up the 202 and 4xx answers of others.

#[path = "../../benches/http_load/client.rs"]
mod client;
#[path = "../../benches/http_load/load.rs"]
mod load;

use std::path::Path;
use std::time::Duration;

fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_baremcp"))
}

#[test]
fn a_cpu_time_that_cannot_be_read_is_none_not_a_panic() {
    // No such process: as off Linux, where there is no /proc, the bench leaves CPU out.
    assert_eq!(load::cpu_ns(u32::MAX), None);
    if cfg!(target_os = "linux") {
        assert!(load::cpu_ns(std::process::id()).is_some_and(|threads| !threads.is_empty()));
    }
}

#[test]
fn every_reply_arrives_and_matches_its_request_under_load() {
    let dir = crate::scratch("http-load");
    let watched = dir.join("watched.txt");
    std::fs::write(&watched, "first\n").unwrap();
    let (server, addr) = load::spawn(binary(), &["--root", dir.to_str().unwrap()]).unwrap();
    let plan = load::Plan {
        clients: 8,
        calls: 50,
        uri: format!("file://{}", watched.display()),
        watched,
        pid: Some(server.id()),
    };
    let report = load::run(addr, &plan);
    load::stop(server).unwrap();
    let report = report.unwrap();
    assert_eq!(report.calls, 400);
    // Every tenth call adds a 202, 400 or 404 answer.
    assert_eq!(report.others, 40);
    assert_eq!(report.streams_told, 8, "every stream carries the change");
    // Peak memory is read from /proc: Linux only.
    if cfg!(target_os = "linux") {
        let peak = report.peak_after.expect("VmHWM in /proc");
        assert!(peak < 64 * 1024, "peak memory {peak} KiB");
    }
}

#[test]
fn a_slow_tool_does_not_hold_up_the_answers_connections_give_alone() {
    let dir = crate::scratch("http-slow");
    let manifest = dir.join("slow.json");
    std::fs::write(&manifest, load::slow_manifest(2)).unwrap();
    let (server, addr) =
        load::spawn(binary(), &["--manifest", manifest.to_str().unwrap()]).unwrap();
    let slow = load::slow_tool(addr);
    load::stop(server).unwrap();
    let slow = slow.unwrap();
    assert!(slow.slow >= Duration::from_secs(2), "{slow:?}");
    assert_eq!(slow.answers.len(), 6);
    for (what, took) in &slow.answers {
        assert!(*took < Duration::from_millis(500), "{what} took {took:?}");
    }
}
