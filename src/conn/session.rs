//! What one client connection remembers between messages: the legacy handshake, the request
//! a handler is waiting on (and whether the client cancelled it), resource subscriptions and
//! open `subscriptions/listen` streams, the files they watch, and buffers kept for speed.
//!
//! Client messages that get no reply (notifications, responses no request waits for) change
//! only this state, so they are taken in here, whoever reads them: the loop between requests,
//! or the connection while a handler waits on the client.
//! Cancellation lives here alone: a cancel marks the request in flight, or closes a stream.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::conn::outbox::Outbox;
use crate::util::stamp::Stamp;
use crate::wire::capabilities::Declared;
use crate::wire::jsonrpc::{ErrorObject, Id, Message};
use crate::wire::log_level::LogLevel;
use crate::wire::params::ParamsField;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::session";

/// At most this many `subscriptions/listen` streams are open at once; one more is refused.
pub(crate) const MAX_STREAMS: usize = 1024;

/// At most this many resource subscriptions at once: each URI `resources/subscribe` named, and
/// each URI a `subscriptions/listen` stream agreed to watch (once per stream).
pub(crate) const MAX_SUBSCRIPTIONS: usize = 4096;

/// Modern requests never read the handshake part.
#[derive(Default)]
pub(crate) struct Session {
    pub legacy_version: Option<&'static str>,
    /// What the legacy client declared in `initialize`: a few short names, never the object.
    pub client_capabilities: Declared,
    /// Set by `logging/setLevel` (legacy).
    pub log_level: Option<LogLevel>,
    /// The request a handler is waiting on the client for, and whether it was cancelled.
    in_flight: Option<Id<'static>>,
    cancelled: bool,
    /// Legacy `resources/subscribe` URIs.
    pub subscribed: BTreeSet<String>,
    /// Open `subscriptions/listen` streams, by id (its exact text), and the resource URIs
    /// each agreed to watch.
    listening: BTreeMap<Id<'static>, BTreeSet<String>>,
    /// The same the other way round: the streams watching each URI, so an update finds its
    /// streams without looking at the others.
    watchers: BTreeMap<String, BTreeSet<Id<'static>>>,
    /// How many URIs all streams watch together (a URI counted once per stream).
    stream_uris: usize,
    /// Resources that changed (reported by handlers, or watched files), to notify after the
    /// current response.
    pub updated: Vec<String>,
    /// The files some subscription names (`--root` files, resources' watched files), as they
    /// looked when last seen (`None`: gone).
    watched: BTreeMap<String, Option<Stamp>>,
    /// The buffer of the last tool result, emptied and kept for the next one.
    pub spare: Vec<u8>,
    /// The last tool call's (small) arguments, whose allocations the next call reuses (taken
    /// while a call uses them).
    pub arguments: Option<Value>,
    /// Whether request lines are logged (`baremcp::request` at info), once asked: the logger
    /// is asked once a session, since its answer costs a few percent of a call (a filter's
    /// directives matched against the target) and filters are set when the process starts.
    pub requests_logged: Option<bool>,
}

impl Session {
    /// Takes in a client message that gets no reply, whoever read it (the loop between
    /// requests, or the connection while a handler waits on the client): a notification
    /// changes this state; a response that no request waits for, and a malformed notification
    /// or response, change nothing. A request or an invalid message is handed back: it needs
    /// a reply, which is for the reader to give.
    #[inline]
    pub fn take_in<'a>(&mut self, message: Message<'a>) -> Option<Message<'a>> {
        let id = |id: Option<Id>| id.map_or("null".into(), |id| id.to_string());
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
            other => log::debug!(target: LOG, "ignored notification {other}"),
        }
    }

    /// Cancels the request a handler is waiting on, or ends an open subscription silently. A
    /// cancel for anything else (finished, unknown) is ignored.
    fn cancel(&mut self, id: &Id) {
        if self.in_flight.as_ref().is_some_and(|current| current == id) {
            self.cancelled = true;
            return;
        }
        let Some(uris) = self.listening.remove(id.as_json()) else {
            log::debug!(target: LOG, "ignored cancellation of {id}: no such request in flight");
            return;
        };
        self.stream_uris -= uris.len();
        for uri in uris {
            if let Some(ids) = self.watchers.get_mut(&uri) {
                ids.remove(id.as_json());
                if ids.is_empty() {
                    self.watchers.remove(&uri);
                }
            }
        }
    }

    /// The ids of the open `subscriptions/listen` streams (over HTTP, each ends with a
    /// completion result when the server stops).
    pub fn streams(&self) -> impl Iterator<Item = &Id<'static>> {
        self.listening.keys()
    }

    /// Whether a `subscriptions/listen` stream with this id is open.
    pub fn is_listening(&self, id: &Id) -> bool {
        self.listening.contains_key(id.as_json())
    }

    /// Whether one more stream watching `uris` more URIs may open: -32602 past
    /// [`MAX_STREAMS`] or [`MAX_SUBSCRIPTIONS`].
    pub fn may_listen(&self, uris: usize) -> Result<(), ErrorObject> {
        if self.listening.len() >= MAX_STREAMS {
            return Err(ErrorObject::invalid_params(format!(
                "too many open subscriptions/listen streams (at most {MAX_STREAMS})"
            )));
        }
        self.may_subscribe(uris)
    }

    /// Whether `more` resource subscriptions fit under [`MAX_SUBSCRIPTIONS`].
    pub fn may_subscribe(&self, more: usize) -> Result<(), ErrorObject> {
        if self.subscribed.len() + self.stream_uris + more > MAX_SUBSCRIPTIONS {
            return Err(ErrorObject::invalid_params(format!(
                "too many resource subscriptions (at most {MAX_SUBSCRIPTIONS} in all)"
            )));
        }
        Ok(())
    }

    /// Opens a stream (checked with [`Session::may_listen`]) watching `uris`.
    pub fn listen(&mut self, id: &Id, uris: BTreeSet<String>) {
        let id = id.clone().into_owned();
        for uri in &uris {
            self.watchers.entry(uri.clone()).or_default().insert(id.clone());
        }
        self.stream_uris += uris.len();
        self.listening.insert(id, uris);
    }

    /// Notes that the handler of `id` waits on the client: cancels are read only during
    /// waits, so only then can this request be cancelled.
    pub fn waiting_on(&mut self, id: &Id) {
        self.in_flight = Some(id.clone().into_owned());
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

    /// Starts watching `uri`, which names a file that looks like `stamp` now (`None`: not a
    /// file). Called when a subscription names it.
    pub fn watch(&mut self, uri: &str, stamp: Option<Stamp>) {
        if let Some(stamp) = stamp {
            self.watched.insert(uri.to_string(), Some(stamp));
        }
    }

    /// True while some subscription names a file.
    pub fn watches_files(&self) -> bool {
        !self.watched.is_empty()
    }

    /// Queues an update for each watched file that changed (or went) since it was last seen,
    /// as `stamp` tells how it looks now, and forgets files no subscription names any more.
    pub fn look_at_files(&mut self, stamp: impl Fn(&str) -> Option<Stamp>) {
        let Session { watched, subscribed, watchers, updated, .. } = self;
        watched.retain(|uri, _| subscribed.contains(uri) || watchers.contains_key(uri));
        for (uri, seen) in watched.iter_mut() {
            let now = stamp(uri);
            if now != *seen {
                *seen = now;
                updated.push(uri.clone());
            }
        }
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
