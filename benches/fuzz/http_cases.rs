//! The HTTP fuzzer's cases: connections, each a script of writes, pauses and closes, over
//! requests from `http_gen.rs` (mutated by `http_mutate.rs`): pipelined in one write or cut at
//! random boundaries, sent one at a time after each answer, trickled by a slow writer, cut off
//! by a close or a half-close, several connections at once, a legacy session's calls with
//! its GET stream and DELETE; and the loads the bounds are about — a loop kept busy by a slow
//! tool while others send, clients that leave with their request queued, more connections
//! than the cap, more than the server's descriptors.

use super::http_gen::{Bodies, Context, Drafted, INITIALIZE, LEGACY_VERSIONS, template};
use super::http_mutate::{mutate_bytes, mutate_draft};
use super::rng::Rng;

/// One step of a connection's script.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Write(Vec<u8>),
    Pause(u64),
    /// Wait until this many responses came (or the connection closed, or 5 s passed).
    Await(usize),
    /// Shut the writing half: the server reads the end of input.
    HalfClose,
    /// Close both halves: what is still to come is not read.
    Close,
}

/// A request as generated: where it lies in its connection's bytes, and what its own stage
/// answers while unmutated.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub start: usize,
    pub end: usize,
    pub stage: Option<Vec<u16>>,
}

/// One connection: opened `at_ms` after the case starts, then its steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    pub at_ms: u64,
    pub steps: Vec<Step>,
    pub planned: Vec<Planned>,
}

impl Script {
    /// Everything it writes, in order.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for step in &self.steps {
            if let Step::Write(bytes) = step {
                out.extend_from_slice(bytes);
            }
        }
        out
    }
}

/// What a case exercises; each kind is drawn in proportion to its weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Pipelined,
    Mutated,
    Sequential,
    Session,
    Concurrent,
    Slow,
    Abort,
    Busy,
    Departed,
    Flood,
    FdFlood,
}

impl Kind {
    pub const ALL: [Kind; 11] = [
        Kind::Pipelined,
        Kind::Mutated,
        Kind::Sequential,
        Kind::Session,
        Kind::Concurrent,
        Kind::Slow,
        Kind::Abort,
        Kind::Busy,
        Kind::Departed,
        Kind::Flood,
        Kind::FdFlood,
    ];

    fn weight(self) -> usize {
        match self {
            Kind::Pipelined | Kind::Mutated => 22,
            Kind::Session => 14,
            Kind::Sequential => 10,
            Kind::Concurrent | Kind::Abort => 8,
            Kind::Slow => 6,
            Kind::Busy | Kind::Departed => 3,
            Kind::Flood => 2,
            Kind::FdFlood => 1,
        }
    }

    /// A kind of `kinds`, each in proportion to its weight.
    pub fn draw(rng: &mut Rng, kinds: &[Kind]) -> Kind {
        let mut n = rng.below(kinds.iter().map(|k| k.weight()).sum());
        for &kind in kinds {
            if n < kind.weight() {
                return kind;
            }
            n -= kind.weight();
        }
        Kind::Pipelined
    }

    /// The kinds that take a second or less each (no slow tool, no flood).
    pub fn quick() -> &'static [Kind] {
        &Kind::ALL[..7]
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Pipelined => "pipelined",
            Kind::Mutated => "mutated",
            Kind::Sequential => "sequential",
            Kind::Session => "session",
            Kind::Concurrent => "concurrent",
            Kind::Slow => "slow",
            Kind::Abort => "abort",
            Kind::Busy => "busy",
            Kind::Departed => "departed",
            Kind::Flood => "flood",
            Kind::FdFlood => "fd-flood",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// A documented capacity bound is in play: `503` is a plausible answer.
    pub fn at_capacity(self) -> bool {
        matches!(self, Kind::Busy | Kind::Departed | Kind::Flood | Kind::FdFlood)
    }
}

/// One case.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub kind: Kind,
    /// A legacy session of this version is opened first.
    pub session: Option<String>,
    pub scripts: Vec<Script>,
    /// Connections open at once at most: the memory bound grows with it.
    pub open_at_once: usize,
    /// The server's descriptors (`ulimit -n`), for a case that runs them out: the case gets
    /// a server of its own. Each connection takes two, so whether `accept` itself is left
    /// without one depends on the limit's parity: odd limits (65, 67) leave it without, in
    /// about half the bursts (measured).
    pub files: Option<u32>,
}

/// How long the manifest's `fuzz_slow` tool sleeps.
pub const SLOW_SECS: u64 = 4;

/// The run's fixed parts a case is made of.
pub struct Makings<'a> {
    pub bodies: &'a Bodies,
    pub max_body: usize,
    /// How long the server waits for a request's bytes (`--request-timeout-secs`).
    pub request_timeout_ms: u64,
}

/// A case of `kind`.
pub fn make_case(rng: &mut Rng, kind: Kind, makings: &Makings) -> Case {
    let mut case = Case { kind, session: None, scripts: Vec::new(), open_at_once: 1, files: None };
    let plain = Context { session: false, deletes: false, batches: false };
    match kind {
        Kind::Pipelined => case.scripts.push(connection(rng, makings, plain, (1, 6), 4, 10)),
        Kind::Mutated => case.scripts.push(connection(rng, makings, plain, (1, 3), 1, 3)),
        Kind::Sequential => {
            let mut script = connection(rng, makings, plain, (2, 4), 3, 10);
            one_at_a_time(&mut script);
            case.scripts.push(script);
        }
        Kind::Session => session(rng, makings, &mut case),
        Kind::Concurrent => {
            for _ in 0..2 + rng.below(3) {
                let mut script = connection(rng, makings, plain, (1, 4), 3, 10);
                script.at_ms = rng.below(50) as u64;
                case.scripts.push(script);
            }
            case.open_at_once = case.scripts.len();
        }
        Kind::Slow => {
            let mut script = connection(rng, makings, plain, (1, 2), 4, 10);
            trickle(rng, &mut script, makings.request_timeout_ms / 4);
            case.scripts.push(script);
        }
        Kind::Abort => case.scripts.push(abort(rng, makings)),
        Kind::Busy => busy(rng, makings, &mut case),
        Kind::Departed => departed(makings, &mut case),
        Kind::Flood | Kind::FdFlood => {
            let hold = if kind == Kind::Flood { 600 } else { 1000 };
            for i in 0..40 {
                let (bytes, stage) = pristine_modern(i, 0);
                let steps = vec![Step::Write(bytes.clone()), Step::Pause(hold), Step::HalfClose];
                let planned = vec![Planned { start: 0, end: bytes.len(), stage: Some(stage) }];
                // Descriptors run out under a burst; a slower flood drains the backlog.
                let at_ms = if kind == Kind::Flood { i as u64 * 5 } else { 0 };
                case.scripts.push(Script { at_ms, steps, planned });
            }
            case.open_at_once = case.scripts.len();
            if kind == Kind::FdFlood {
                case.files = Some(65 + 2 * rng.below(2) as u32);
            }
        }
    }
    case
}

/// A connection of `least` to `least + spread - 1` requests, each mutated one time in `draft_in` (and its bytes one time
/// in `bytes_in`), written in one go or cut at random places, ended by a half-close or left
/// open.
fn connection(
    rng: &mut Rng,
    makings: &Makings,
    context: Context,
    (least, spread): (usize, usize),
    draft_in: usize,
    bytes_in: usize,
) -> Script {
    let n = least + rng.below(spread);
    let mut stream = Vec::new();
    let mut planned = Vec::new();
    for _ in 0..n {
        let Drafted { mut draft, mut stage, opens_stream } = template(rng, makings.bodies, context);
        if rng.one_in(draft_in) {
            mutate_draft(rng, &mut draft, &makings.bodies.all, makings.max_body);
            stage = None;
        }
        let mut bytes = draft.write();
        if rng.one_in(bytes_in) {
            mutate_bytes(rng, &mut bytes);
            stage = None;
        }
        planned.push(Planned { start: stream.len(), end: stream.len() + bytes.len(), stage });
        stream.extend_from_slice(&bytes);
        if opens_stream {
            break;
        }
    }
    let mut steps = Vec::new();
    if rng.one_in(2) || stream.len() < 2 {
        steps.push(Step::Write(stream));
    } else {
        let mut cuts: Vec<usize> =
            (0..1 + rng.below(4)).map(|_| 1 + rng.below(stream.len() - 1)).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut at = 0;
        for cut in cuts.into_iter().chain([stream.len()]) {
            steps.push(Step::Write(stream[at..cut].to_vec()));
            if cut < stream.len() {
                steps.push(Step::Pause(rng.below(30) as u64));
            }
            at = cut;
        }
    }
    if rng.one_in(3) {
        steps.push(Step::HalfClose);
    }
    Script { at_ms: 0, steps, planned }
}

/// Rewrites the writes so that each request goes after the answer to the one before.
fn one_at_a_time(script: &mut Script) {
    let stream = script.bytes();
    let ending: Vec<Step> =
        script.steps.iter().filter(|s| **s == Step::HalfClose).cloned().collect();
    script.steps.clear();
    for (i, planned) in script.planned.iter().enumerate() {
        script.steps.push(Step::Write(stream[planned.start..planned.end].to_vec()));
        if i + 1 < script.planned.len() {
            script.steps.push(Step::Await(i + 1));
        }
    }
    script.steps.extend(ending);
}

/// Rewrites the writes as small pieces with pauses, `budget_ms` of pauses per request at
/// most, so that a slow writer stays within the server's deadline.
fn trickle(rng: &mut Rng, script: &mut Script, budget_ms: u64) {
    let stream = script.bytes();
    let ending: Vec<Step> =
        script.steps.iter().filter(|s| **s == Step::HalfClose).cloned().collect();
    script.steps.clear();
    for planned in &script.planned {
        let (mut at, mut spent) = (planned.start, 0);
        let pieces = 1 + rng.below(40);
        let piece = (planned.end - planned.start).div_ceil(pieces).max(1);
        while at < planned.end {
            let end = (at + 1 + rng.below(2 * piece)).min(planned.end);
            script.steps.push(Step::Write(stream[at..end].to_vec()));
            let pause = (rng.below(15) as u64).min(budget_ms.saturating_sub(spent));
            if pause > 0 && end < planned.end {
                script.steps.push(Step::Pause(pause));
                spent += pause;
            }
            at = end;
        }
    }
    script.steps.extend(ending);
}

/// A request cut off: closed, half-closed, or left waiting past the deadline; or whole
/// requests and a close at once.
fn abort(rng: &mut Rng, makings: &Makings) -> Script {
    let context = Context { session: false, deletes: false, batches: false };
    let mut script = connection(rng, makings, context, (1, 3), 4, 10);
    let stream = script.bytes();
    let cut = if stream.len() > 1 { 1 + rng.below(stream.len() - 1) } else { stream.len() };
    // Waiting out the deadline costs seconds: one time in ten.
    script.steps = match rng.below(10) {
        0..=2 => vec![
            Step::Write(stream[..cut].to_vec()),
            Step::Pause(rng.below(50) as u64),
            Step::Close,
        ],
        3..=5 => vec![Step::Write(stream[..cut].to_vec()), Step::HalfClose],
        6 => vec![
            Step::Write(stream[..cut].to_vec()),
            Step::Pause(makings.request_timeout_ms + 600),
            Step::HalfClose,
        ],
        _ => vec![Step::Write(stream), Step::Close],
    };
    script
}

/// A legacy session (opened first) used from one to three connections: its messages, a GET
/// stream, 2026-07-28 requests beside them, and a DELETE at the end of the last.
fn session(rng: &mut Rng, makings: &Makings, case: &mut Case) {
    let version = *rng.pick(&LEGACY_VERSIONS);
    let deletes = rng.one_in(3);
    let context = Context { session: true, deletes, batches: version == "2025-03-26" };
    case.session = Some(version.to_string());
    let conns = 1 + rng.below(3);
    for i in 0..conns {
        let mut script = connection(rng, makings, context, (1, 5), 5, 20);
        script.at_ms = 20 * i as u64;
        if rng.one_in(2) {
            one_at_a_time(&mut script);
        }
        case.scripts.push(script);
    }
    if deletes {
        let delete = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: {}\r\n\r\n",
            super::http_gen::SESSION_SLOT
        )
        .into_bytes();
        let planned = vec![Planned { start: 0, end: delete.len(), stage: Some(vec![204, 404]) }];
        let steps = vec![Step::Write(delete)];
        case.scripts.push(Script { at_ms: 200, steps, planned });
    }
    case.open_at_once = case.scripts.len();
}

/// A 2026-07-28 request answered at once (`tools/list`, id `id`), padded to `pad` bytes.
fn pristine_modern(id: usize, pad: usize) -> (Vec<u8>, Vec<u16>) {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{meta},"pad":"{}"}}}}"#,
        "p".repeat(pad)
    );
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    (request.into_bytes(), vec![200, 400])
}

/// A 2026-07-28 call of the manifest's `fuzz_slow` tool: the loop is busy for [`SLOW_SECS`].
fn slow_call() -> Script {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{{"name":"fuzz_slow","arguments":{{}},{meta}}}}}"#
    );
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: fuzz_slow\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes();
    let planned = vec![Planned { start: 0, end: request.len(), stage: Some(vec![200]) }];
    Script { at_ms: 0, steps: vec![Step::Write(request)], planned }
}

/// The loop kept busy by a slow call while other connections send: each is answered after.
fn busy(rng: &mut Rng, makings: &Makings, case: &mut Case) {
    case.scripts.push(slow_call());
    let context = Context { session: false, deletes: false, batches: false };
    for i in 0..1 + rng.below(3) {
        let mut script = connection(rng, makings, context, (1, 4), 4, 10);
        script.at_ms = 150 + 100 * i as u64;
        case.scripts.push(script);
    }
    // A session's initialize waits for the loop too.
    let init = INITIALIZE.replace("VERSION", "2025-11-25");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{init}",
        init.len()
    )
    .into_bytes();
    let planned = vec![Planned { start: 0, end: request.len(), stage: Some(vec![200]) }];
    case.scripts.push(Script { at_ms: 200, steps: vec![Step::Write(request)], planned });
    case.open_at_once = case.scripts.len();
}

/// Clients that send a request as large as a body may be while the loop is busy, and leave
/// 300 ms later: what they sent must not stay held (docs/errors-and-bounds.md: memory is bounded by the
/// connections, not the calls).
fn departed(makings: &Makings, case: &mut Case) {
    case.scripts.push(slow_call());
    let (spacing, life, count) = (50u64, 300u64, 60usize);
    for i in 0..count {
        let (bytes, _) = pristine_modern(i, makings.max_body.saturating_sub(400));
        let steps = vec![Step::Write(bytes), Step::Pause(life), Step::Close];
        case.scripts.push(Script { at_ms: 150 + spacing * i as u64, steps, planned: Vec::new() });
    }
    case.open_at_once = 2 + life.div_ceil(spacing) as usize;
}
