//! What one client connection remembers between messages: the legacy handshake, the request
//! a handler is waiting on (and whether the client cancelled it), resource subscriptions and
//! open `subscriptions/listen` streams, the files they watch, and buffers kept for speed.
//!
//! Client messages that get no reply (notifications, responses no request waits for) change
//! only this state, so they are taken in here, whoever reads them: the loop between requests,
//! or the connection while a handler waits on the client.
//! Cancellation lives here alone: a cancel marks the request in flight, or closes a stream.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde_json::{Map, Value, json};

use crate::conn::outbox::Outbox;
use crate::util::log_answer::LogAnswer;
use crate::util::shown::Clipped;
use crate::util::stamp::WatchedFile;
use crate::util::trace_context::TraceContext;
use crate::wire::capabilities::Declared;
use crate::wire::era::Era;
use crate::wire::jsonrpc::{ErrorObject, Id, Message, UnreadId};
use crate::wire::log_level::LogLevel;
use crate::wire::params::ParamsField;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::session";

/// At most this many `subscriptions/listen` streams are open at once; one more is refused.
pub(crate) const MAX_STREAMS: usize = 1024;

/// A URI longer than this cannot be subscribed: it would be kept as long as the subscription.
pub(crate) const MAX_SUBSCRIBED_URI_BYTES: usize = 8 * 1024;

/// What the resource subscriptions of one session keep, in bytes, at most ([`kept_bytes`]
/// each): each URI `resources/subscribe` named, and each URI a `subscriptions/listen` stream
/// agreed to watch (once per stream).
pub(crate) const MAX_SUBSCRIPTION_BYTES: usize = 256 * 1024;

/// No session keeps more subscriptions than this: each keeps 512 bytes at least.
pub(crate) const MOST_SUBSCRIPTIONS: usize = MAX_SUBSCRIPTION_BYTES / 512;

/// What a subscription to `uri` by the stream whose id takes `id_len` bytes (0 for a legacy
/// `resources/subscribe`) keeps: the URI in up to three places (the subscription, the
/// watchers of it, the file watched and its path), the stream's id again, and the nodes of
/// the maps that hold them.
pub(crate) fn kept_bytes(uri: &str, id_len: usize) -> usize {
    3 * uri.len() + id_len + 512
}

/// What a `subscriptions/listen` stream whose id takes `id_len` bytes keeps besides its
/// subscriptions, whether it names resources or not: its id and its entry among the streams.
pub(crate) fn stream_bytes(id_len: usize) -> usize {
    id_len + 128
}

/// At most this many watched files are looked at in one look (a tick of the HTTP loop, a pause
/// of the stdio loop), across all sessions: with more, each is looked at less often.
pub(crate) const FILE_LOOKS_PER_TICK: usize = 256;

/// Modern requests never read the handshake part.
#[derive(Default)]
pub(crate) struct Session {
    pub legacy_version: Option<&'static str>,
    /// How a reply to a message whose id could not be read names it under `legacy_version`,
    /// set with it (`null` before `initialize`): a look per line.
    pub unread: UnreadId,
    /// What the legacy client declared in `initialize`: a few short names, never the object.
    pub client_capabilities: Declared,
    /// Set by `logging/setLevel` (legacy).
    pub log_level: Option<LogLevel>,
    /// The request a handler is waiting on the client for, and whether it was cancelled.
    in_flight: Option<Id<'static>>,
    cancelled: bool,
    /// Legacy `resources/subscribe` URIs.
    subscribed: BTreeSet<String>,
    /// Open `subscriptions/listen` streams, by id (its exact text).
    listening: BTreeMap<Id<'static>, Stream>,
    /// Streams the client ended (cancelled, or left) that the transport has yet to record:
    /// their end is logged and shown to `on_reply` as a request's reply is, once
    /// (`serve_line::listens_ended`).
    pub ended: Vec<(Id<'static>, Stream)>,
    /// The same the other way round: the streams watching each URI, so an update finds its
    /// streams without looking at the others.
    watchers: BTreeMap<String, BTreeSet<Id<'static>>>,
    /// What the subscriptions and streams keep ([`kept_bytes`], [`stream_bytes`]).
    uri_bytes: usize,
    /// Resources that changed (reported by handlers, or watched files), to notify after the
    /// current response.
    pub updated: Vec<String>,
    /// The files some subscription names (`--root` files, resources' watched files), by URI,
    /// resolved when subscribed; forgotten when no subscription names them any more.
    watched: BTreeMap<String, WatchedFile>,
    /// The buffer of the last tool result, emptied and kept for the next one.
    pub spare: Vec<u8>,
    /// The last tool call's (small) arguments, whose allocations the next call reuses (taken
    /// while a call uses them).
    pub arguments: Option<Value>,
    /// Whether request lines are logged (`baremcp::request` at info), once asked: asking the
    /// logger costs a few percent of a call (a filter's directives matched against the
    /// target), so it is asked again only when the maximum level changes.
    pub requests_logged: LogAnswer,
}

/// An open `subscriptions/listen` stream: the resource URIs it agreed to watch, and when it
/// opened, in which era and trace, for recording its end.
pub(crate) struct Stream {
    uris: BTreeSet<String>,
    pub opened: Instant,
    pub era: Era,
    pub trace: Option<TraceContext>,
}

impl Session {
    /// Whether the client may send JSON-RPC batches: of the revisions, 2025-03-26 alone has
    /// them.
    pub fn takes_batches(&self) -> bool {
        self.legacy_version == Some("2025-03-26")
    }

    /// Takes in a client message that gets no reply, whoever read it (the loop between
    /// requests, or the connection while a handler waits on the client): a notification
    /// changes this state; a response that no request waits for, and a malformed notification
    /// or response, change nothing. A request or an invalid message is handed back: it needs
    /// a reply, which is for the reader to give.
    #[inline]
    pub fn take_in<'a>(&mut self, message: Message<'a>) -> Option<Message<'a>> {
        let id = |id: Option<Id>| id.map_or("null".into(), |id| Clipped(id.as_json()).to_string());
        match message {
            Message::Notification { method, params } => self.notification(&method, &params),
            Message::Response { id: answers } => {
                log::debug!(target: LOG, "ignored a response to {}: no request of ours waits for it", id(answers))
            }
            Message::BadResponse { id: answers } => {
                log::debug!(target: LOG, "ignored a malformed response to {}", id(answers))
            }
            Message::BadNotification => {
                log::debug!(target: LOG, "ignored a malformed notification")
            }
            needs_reply @ (Message::Request { .. } | Message::Invalid { .. }) => {
                return Some(needs_reply);
            }
        }
        None
    }

    /// Handles a client notification. Notifications are never replied to, whatever they hold.
    pub fn notification(&mut self, method: &str, params: &ParamsField) {
        match method {
            "notifications/initialized" => {}
            "notifications/cancelled" => {
                match params.object().and_then(|p| p.request_id).and_then(Id::from_raw) {
                    Some(id) => self.cancel(&id),
                    None => {
                        log::debug!(target: LOG, "ignored notifications/cancelled without a valid requestId")
                    }
                }
            }
            other => log::debug!(target: LOG, "ignored notification {}", Clipped(other)),
        }
    }

    /// Cancels the request a handler is waiting on, or ends an open subscription silently. A
    /// cancel for anything else (finished, unknown) is ignored.
    fn cancel(&mut self, id: &Id) {
        if self.in_flight.as_ref().is_some_and(|current| current == id) {
            self.cancelled = true;
            return;
        }
        let Some((key, mut stream)) = self.listening.remove_entry(id.as_json()) else {
            log::debug!(target: LOG, "ignored cancellation of {}: no such request in flight", Clipped(id.as_json()));
            return;
        };
        self.uri_bytes -= stream_bytes(id.as_json().len());
        for uri in std::mem::take(&mut stream.uris) {
            self.uri_bytes -= kept_bytes(&uri, id.as_json().len());
            if let Some(ids) = self.watchers.get_mut(&uri) {
                ids.remove(id.as_json());
                if ids.is_empty() {
                    self.watchers.remove(&uri);
                    self.forget_unless_named(&uri);
                }
            }
        }
        self.ended.push((key, stream));
    }

    /// The ids of the open `subscriptions/listen` streams (over HTTP, each ends with a
    /// completion result when the server stops).
    pub fn streams(&self) -> impl Iterator<Item = &Id<'static>> {
        self.listening.keys()
    }

    /// The protocol version of the open stream `id`, as its request named it.
    pub fn stream_version(&self, id: &Id) -> Option<&'static str> {
        match self.listening.get(id.as_json())?.era {
            Era::Modern(version) => Some(version),
            Era::Legacy => None,
        }
    }

    /// Whether a `subscriptions/listen` stream with this id is open.
    pub fn is_listening(&self, id: &Id) -> bool {
        self.listening.contains_key(id.as_json())
    }

    /// Whether one more stream watching `uris` may open: -32602 past [`MAX_STREAMS`], or as
    /// [`Session::may_subscribe`] says.
    pub fn may_listen(&self, id: &Id, uris: &BTreeSet<String>) -> Result<(), ErrorObject> {
        if self.listening.len() >= MAX_STREAMS {
            return Err(ErrorObject::invalid_params(format!(
                "too many open subscriptions/listen streams (at most {MAX_STREAMS})"
            )));
        }
        let id_len = id.as_json().len();
        self.may_keep(uris.iter().map(String::as_str), id_len, stream_bytes(id_len))
    }

    /// Whether subscriptions to `uris` more (by a stream whose id takes `id_len` bytes, 0 for
    /// `resources/subscribe`) fit: -32602 for a URI longer than [`MAX_SUBSCRIBED_URI_BYTES`],
    /// and past [`MAX_SUBSCRIPTION_BYTES`] in all (so at most [`MOST_SUBSCRIPTIONS`]).
    pub fn may_subscribe<'a>(
        &self,
        uris: impl Iterator<Item = &'a str>,
        id_len: usize,
    ) -> Result<(), ErrorObject> {
        self.may_keep(uris, id_len, 0)
    }

    /// As [`Session::may_subscribe`], with `base` bytes kept besides the subscriptions.
    fn may_keep<'a>(
        &self,
        uris: impl Iterator<Item = &'a str>,
        id_len: usize,
        base: usize,
    ) -> Result<(), ErrorObject> {
        let mut bytes = base;
        for uri in uris {
            if uri.len() > MAX_SUBSCRIBED_URI_BYTES {
                return Err(ErrorObject::invalid_params(format!(
                    "resource uri too long to subscribe: {} bytes (at most {MAX_SUBSCRIBED_URI_BYTES})",
                    uri.len()
                )));
            }
            bytes += kept_bytes(uri, id_len);
        }
        if self.uri_bytes + bytes > MAX_SUBSCRIPTION_BYTES {
            return Err(ErrorObject::invalid_params(format!(
                "resource subscriptions too large (they would keep more than {MAX_SUBSCRIPTION_BYTES} bytes)"
            )));
        }
        Ok(())
    }

    /// Whether the legacy session subscribed to `uri`.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.subscribed.contains(uri)
    }

    /// Subscribes to `uri` (checked with [`Session::may_subscribe`] unless subscribed already),
    /// watching `file`, the file behind it if any.
    pub fn subscribe(&mut self, uri: String, file: Option<WatchedFile>) {
        self.watch(&uri, file);
        if !self.subscribed.contains(&uri) {
            self.uri_bytes += kept_bytes(&uri, 0);
            self.subscribed.insert(uri);
        }
    }

    /// Ends the subscription to `uri`, if any.
    pub fn unsubscribe(&mut self, uri: &str) {
        if self.subscribed.remove(uri) {
            self.uri_bytes -= kept_bytes(uri, 0);
            self.forget_unless_named(uri);
        }
    }

    /// Opens a stream (checked with [`Session::may_listen`]) watching `uris`; `era` and
    /// `trace` are those of the request that opened it.
    pub fn listen(
        &mut self,
        id: &Id,
        uris: BTreeSet<String>,
        era: Era,
        trace: Option<TraceContext>,
    ) {
        let id = id.clone().into_owned();
        self.uri_bytes += stream_bytes(id.as_json().len());
        for uri in &uris {
            self.watchers.entry(uri.clone()).or_default().insert(id.clone());
            self.uri_bytes += kept_bytes(uri, id.as_json().len());
        }
        // Only the trace id is logged: the `tracestate` (up to 32 members) is not kept.
        let trace = trace.map(TraceContext::without_state);
        self.listening.insert(id, Stream { uris, opened: Instant::now(), era, trace });
    }

    /// The client is gone (stdio's input ended): its open streams end, to be recorded as a
    /// cancel's are. The session ends with them, so what they watch is left as it is.
    pub fn client_gone(&mut self) {
        self.ended.extend(std::mem::take(&mut self.listening));
    }

    /// Notes that the handler of `id` waits on the client: cancels are read only during
    /// waits, so only then can this request be cancelled.
    pub fn waiting_on(&mut self, id: &Id) {
        self.in_flight = Some(id.clone().into_owned());
    }

    /// The request being served, once a handler looked for input while it ran.
    pub fn in_flight(&self) -> Option<&Id<'static>> {
        self.in_flight.as_ref()
    }

    /// True once the client cancelled the request being served.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// Ends the request being served; true when it was cancelled (it then gets no response).
    pub fn finish_request(&mut self) -> bool {
        self.in_flight = None;
        std::mem::take(&mut self.cancelled)
    }

    /// Starts watching `file`, the file behind `uri` as resolved now (`None`: not a file),
    /// from how it looks now. Called when a subscription names it.
    pub fn watch(&mut self, uri: &str, file: Option<WatchedFile>) {
        if let Some(file) = file {
            self.watched.insert(uri.to_string(), file);
        }
    }

    /// Stops watching the file behind `uri` once no subscription or stream names it.
    fn forget_unless_named(&mut self, uri: &str) {
        if !self.subscribed.contains(uri) && !self.watchers.contains_key(uri) {
            self.watched.remove(uri);
        }
    }

    /// True while some subscription names a file.
    pub fn watches_files(&self) -> bool {
        !self.watched.is_empty()
    }

    /// Looks at up to `count` watched files from the `skip`th on, in URI order, and queues an
    /// update for each that changed (or went, or came back) since it was last seen; returns
    /// how many it looked at.
    fn look_at_files(&mut self, skip: usize, count: usize) -> usize {
        let mut looked = 0;
        for (uri, file) in self.watched.iter_mut().skip(skip).take(count) {
            looked += 1;
            if file.changed() {
                self.updated.push(uri.clone());
            }
        }
        looked
    }

    /// Sends `notifications/resources/updated` for each changed URI to the legacy
    /// subscription and to every `subscriptions/listen` stream that watches it.
    pub fn notify_updates(&mut self, out: &mut Outbox) {
        for uri in std::mem::take(&mut self.updated) {
            if self.subscribed.contains(&uri) {
                out.notification("notifications/resources/updated", &json!({ "uri": uri }));
            }
            for id in self.watchers.get(&uri).into_iter().flatten() {
                let mut rest = Map::new();
                rest.insert("uri".into(), json!(uri));
                out.stream_notification("notifications/resources/updated", id, &rest);
            }
        }
    }
}

/// Where the next look at watched files starts among those of all sessions, taken in turn:
/// each look (a tick of the HTTP loop, a pause of the stdio loop) looks at most at
/// [`FILE_LOOKS_PER_TICK`] files, so the time watching costs the loop stays bounded whatever
/// clients subscribe, and with more files each is looked at less often.
#[derive(Default)]
pub(crate) struct FileRounds {
    /// The position, among the watched files of all sessions in the order given, of the first
    /// file the next look looks at. Sessions that come or go shift it; that delays some look,
    /// never exceeds the bound.
    next: usize,
}

impl FileRounds {
    /// Looks at the next [`FILE_LOOKS_PER_TICK`] watched files of `sessions` (all of them when
    /// there are fewer, each once), queuing each change in its session's `updated`; returns
    /// how many files it looked at.
    pub fn look<'a>(&mut self, sessions: impl Iterator<Item = &'a mut Session>) -> usize {
        let mut sessions: Vec<&mut Session> = sessions.filter(|s| s.watches_files()).collect();
        let total: usize = sessions.iter().map(|s| s.watched.len()).sum();
        if total == 0 {
            return 0;
        }
        let budget = FILE_LOOKS_PER_TICK.min(total);
        let (mut first, mut skip) = (0, self.next % total);
        self.next = (skip + budget) % total;
        while skip >= sessions[first].watched.len() {
            skip -= sessions[first].watched.len();
            first += 1;
        }
        let (mut left, n) = (budget, sessions.len());
        for i in (first..).map(|i| i % n) {
            if left == 0 {
                break;
            }
            left -= sessions[i].look_at_files(skip, left);
            skip = 0;
        }
        budget
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::fs;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::util::stamp::Stamp;

    fn watched(path: &Path) -> Option<WatchedFile> {
        Some(WatchedFile::new(path.to_path_buf(), Stamp::of(path)))
    }

    fn scratch(name: &str, files: usize) -> (PathBuf, Vec<PathBuf>) {
        let dir = std::env::temp_dir().join(format!("baremcp-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let paths: Vec<PathBuf> = (0..files).map(|n| dir.join(format!("f{n:03}"))).collect();
        paths.iter().for_each(|p| fs::write(p, "one").unwrap());
        (dir, paths)
    }

    #[test]
    fn each_look_takes_a_bounded_number_of_files_in_turn_across_sessions() {
        let (dir, paths) = scratch("rounds", 300);
        let (mut a, mut b) = (Session::default(), Session::default());
        for (n, path) in paths.iter().enumerate() {
            let session = if n < 200 { &mut a } else { &mut b };
            session.subscribe(format!("file://{}", path.display()), watched(path));
        }
        let mut rounds = FileRounds::default();
        assert_eq!(rounds.look([&mut a, &mut b].into_iter()), FILE_LOOKS_PER_TICK);
        paths.iter().for_each(|p| fs::write(p, "two, longer").unwrap());
        // The first look stopped 56 files into b: the next looks at b's other 44, then a's
        // 200 and b's first 12; the third at b's next 44 (and a's first 168 again).
        assert_eq!(rounds.look([&mut a, &mut b].into_iter()), FILE_LOOKS_PER_TICK);
        assert_eq!((a.updated.len(), b.updated.len()), (200, 56));
        assert_eq!(rounds.look([&mut a, &mut b].into_iter()), FILE_LOOKS_PER_TICK);
        assert_eq!((a.updated.len(), b.updated.len()), (200, 100));
        let told: BTreeSet<&String> = a.updated.iter().chain(&b.updated).collect();
        assert_eq!(told.len(), 300, "each change told once");
        // Fewer files than the bound: each is looked at once per look.
        b.unsubscribe(&format!("file://{}", paths[299].display()));
        a = Session::default();
        assert_eq!(rounds.look([&mut a, &mut b].into_iter()), 99);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn subscriptions_give_back_their_bytes_and_files_when_they_end() {
        let (dir, paths) = scratch("bytes", 1);
        let uri = format!("file://{}", paths[0].display());
        let mut session = Session::default();
        session.subscribe(uri.clone(), watched(&paths[0]));
        let id = Id::from_raw("7").unwrap();
        session.watch(&uri, watched(&paths[0]));
        session.listen(
            &id,
            BTreeSet::from([uri.clone(), "test://other".to_string()]),
            Era::Legacy,
            None,
        );
        let kept = kept_bytes(&uri, 0)
            + stream_bytes(1)
            + kept_bytes(&uri, 1)
            + kept_bytes("test://other", 1);
        assert_eq!(session.uri_bytes, kept);
        session.unsubscribe(&uri);
        assert!(session.watches_files(), "the stream still watches it");
        session.cancel(&id);
        assert_eq!((session.uri_bytes, session.watches_files()), (0, false));
        // A URI over the bound is refused, and so is one that would pass the total.
        let long = "x".repeat(MAX_SUBSCRIBED_URI_BYTES + 1);
        assert!(session.may_subscribe([long.as_str()].into_iter(), 0).is_err());
        let each = kept_bytes(&"x".repeat(MAX_SUBSCRIBED_URI_BYTES), 1);
        let fill: BTreeSet<String> = (0..MAX_SUBSCRIPTION_BYTES / each)
            .map(|n| format!("{n:08}").repeat(MAX_SUBSCRIBED_URI_BYTES / 8))
            .collect();
        assert!(session.may_listen(&id, &fill).is_ok());
        session.listen(&id, fill, Era::Legacy, None);
        let one_more = "y".repeat(MAX_SUBSCRIBED_URI_BYTES);
        assert!(session.may_subscribe([one_more.as_str()].into_iter(), 0).is_err());
        // A stream's id is kept once for each URI it watches: a long one counts as often.
        let fresh = Session::default();
        let text = format!("\"{}\"", "i".repeat(100 << 10));
        let long_id = Id::from_raw(&text).unwrap();
        let two = BTreeSet::from(["x:0".to_string(), "x:1".to_string()]);
        assert!(fresh.may_listen(&long_id, &two).is_err(), "100 KiB of id, three times");
        assert!(fresh.may_listen(&long_id, &BTreeSet::from(["x:0".to_string()])).is_ok());
        // A stream that names no resource keeps its id all the same.
        let text = format!("\"{}\"", "i".repeat(MAX_SUBSCRIPTION_BYTES));
        let longer_id = Id::from_raw(&text).unwrap();
        assert!(fresh.may_listen(&longer_id, &BTreeSet::new()).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
