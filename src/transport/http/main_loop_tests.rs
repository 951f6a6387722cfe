//! The dispatching loop's tests: a legacy handler's wait on its client, and sinks.

use super::*;
use crate::transport::telemetry::server_metrics::ServerMetrics;

/// A server's readiness whose embedder has asked it to stop, or not.
fn readiness(stopped: bool) -> Readiness {
    let stop = Arc::new(AtomicBool::new(stopped));
    Readiness::new(stop, Duration::from_secs(60), Duration::from_secs(60))
}

/// What a waiting legacy handler works with: the channel, its request's sink, and a
/// session table holding its session.
struct Setup {
    tx: Sender<Inbound>,
    rx: Receiver<Inbound>,
    sink: Sink,
    table: Arc<Sessions>,
    mine: crate::transport::http::session_table::Use,
}

impl Setup {
    fn new() -> Setup {
        let (tx, rx) = crate::util::queue::sized_queue(16, 1000);
        let (out, _) = crate::util::queue::sized_queue(16, usize::MAX);
        let metrics = Arc::new(ServerMetrics::new());
        let table = Arc::new(Sessions::new(Duration::from_secs(60), 10, None, metrics));
        let mine = table.create(None).unwrap();
        let sink = Sink::new(out, Arc::new(AtomicBool::new(false)), None);
        Setup { tx, rx, sink, table, mine }
    }

    fn waiter<'d>(&'d self, readiness: &'d Readiness) -> Waiter<'d> {
        Waiter {
            rx: &self.rx,
            table: &self.table,
            session: Some(self.mine.id.as_str()),
            sink: &self.sink,
            sse: true,
            modern: false,
            readiness,
            timeout: Duration::from_secs(60),
            notified: Vec::new(),
        }
    }
}

#[test]
fn a_wait_takes_its_answer_and_leaves_other_work_queued_and_withdrawable() {
    let setup = Setup::new();
    let other = |body: &str| Inbound::Message { session: Some("other".into()), body: body.into() };
    let first = setup.tx.send_sized(other(&"x".repeat(600)), 600).unwrap();
    setup.tx.send_sized(other("second"), 6).unwrap();
    let answer = Inbound::Message { session: Some(setup.mine.id.clone()), body: "answer".into() };
    setup.tx.send_sized(answer, 6).unwrap();
    let running = readiness(false);
    assert_eq!(setup.waiter(&running).next().as_deref(), Some("answer"));
    // What the wait did not take still counts against the queue's bytes, and its sender
    // can still take it back.
    assert!(setup.tx.send_sized(other(&"y".repeat(600)), 600).is_err());
    assert!(setup.tx.withdraw(first).is_some());
    match setup.rx.recv_timeout(Duration::ZERO) {
        Recv::Item(Inbound::Message { body, .. }) => assert_eq!(body, "second"),
        _ => panic!("the other message waits, in order"),
    }
}

#[test]
fn a_client_that_does_not_read_is_given_up_past_the_bytes_of_its_events() {
    let (tx, _rx) = crate::util::queue::sized_queue(16, 100);
    let sink = Sink::new(tx, Arc::new(AtomicBool::new(false)), None);
    assert!(sink.send(Out::Event("e".repeat(60))));
    assert!(sink.send(Out::Done(Some((200, vec![b'r'; 200])))), "the response always fits");
    let (tx, _rx) = crate::util::queue::sized_queue(16, 100);
    let sink = Sink::new(tx, Arc::new(AtomicBool::new(false)), None);
    assert!(sink.send(Out::Event("e".repeat(60))));
    assert!(!sink.send(Out::Event("e".repeat(60))));
    assert!(sink.is_closed() && !sink.send(Out::Done(None)));
}

#[test]
fn a_wait_ends_when_its_session_is_deleted_or_the_server_stops() {
    let setup = Setup::new();
    let (running, stopped) = (readiness(false), readiness(true));
    let started = Instant::now();
    assert_eq!(setup.waiter(&stopped).next(), None);
    assert!(setup.table.remove(&setup.mine.id, None));
    assert_eq!(setup.waiter(&running).next(), None);
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
}
