//! What one client connection remembers between messages: the legacy handshake, the request
//! a handler is waiting on (and whether the client cancelled it), resource subscriptions and
//! open `subscriptions/listen` streams, the files they watch, and buffers kept for speed.
//!
//! Client notifications change only this state, so they are handled here, whoever reads
//! them: the loop between requests, or the connection while a handler waits on the client.
//! Cancellation lives here alone: a cancel marks the request in flight, or closes a stream.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::jsonrpc::Id;
use crate::log_level::LogLevel;
use crate::outbox::Outbox;
use crate::params::ParamsField;
use crate::stamp::Stamp;

/// Modern requests never read the handshake part.
#[derive(Default)]
pub(crate) struct Session {
    pub legacy_version: Option<&'static str>,
    /// What the legacy client declared in `initialize`.
    pub client_capabilities: Value,
    /// Set by `logging/setLevel` (legacy).
    pub log_level: Option<LogLevel>,
    /// The request a handler is waiting on the client for, and whether it was cancelled.
    in_flight: Option<Id<'static>>,
    cancelled: bool,
    /// Legacy `resources/subscribe` URIs.
    pub subscribed: BTreeSet<String>,
    /// Open `subscriptions/listen` streams and the resource URIs each agreed to watch.
    pub listening: Vec<(Id<'static>, Vec<String>)>,
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
}

impl Session {
    /// Handles a client notification. Notifications are never replied to, whatever they hold.
    pub fn notification(&mut self, method: &str, params: &ParamsField) {
        match method {
            "notifications/initialized" => {}
            "notifications/cancelled" => match params.object().and_then(|p| p.request_id).and_then(Id::from_raw) {
                Some(id) => self.cancel(&id),
                None => log::debug!("ignored notifications/cancelled without a valid requestId"),
            },
            other => log::debug!("ignored notification {other}"),
        }
    }

    /// Cancels the request a handler is waiting on, or ends an open subscription silently. A
    /// cancel for anything else (finished, unknown) is ignored.
    fn cancel(&mut self, id: &Id) {
        if self.in_flight.as_ref().is_some_and(|current| current == id) {
            self.cancelled = true;
            return;
        }
        let before = self.listening.len();
        self.listening.retain(|(open, _)| open != id);
        if self.listening.len() == before {
            log::debug!("ignored cancellation of {id}: no such request in flight");
        }
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
        let Session { watched, subscribed, listening, updated, .. } = self;
        watched.retain(|uri, _| subscribed.contains(uri) || listening.iter().any(|(_, uris)| uris.contains(uri)));
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
            for (id, uris) in &self.listening {
                if uris.contains(&uri) {
                    let mut rest = Map::new();
                    rest.insert("uri".into(), json!(uri));
                    out.stream_notification("notifications/resources/updated", id, &rest);
                }
            }
        }
    }
}
