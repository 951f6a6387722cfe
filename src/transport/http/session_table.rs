//! Legacy sessions as the connection threads see them: which `Mcp-Session-Id`s are live,
//! who owns each, and when each was last used. Their protocol state (`Session`) lives on the
//! dispatching thread, which drops the state of ids that leave this table.
//!
//! A session expires after a stretch of inactivity that does not count while one of its
//! requests or streams is open; past the cap, the least recently used idle session goes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::conn::principal::Principal;
use crate::transport::telemetry::server_metrics::ServerMetrics;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::sessions";

pub struct Sessions {
    table: Mutex<HashMap<String, Entry>>,
    idle: Duration,
    cap: usize,
    /// Put before each id with a dot (`--session-id-prefix`): a balancer routes by it.
    prefix: Option<String>,
    /// Counts the sessions held, and how long each lasted.
    metrics: Arc<ServerMetrics>,
}

struct Entry {
    created: Instant,
    last: Instant,
    /// Requests and streams open in the session.
    busy: u32,
    /// The authenticated principal that created it: another may not use it.
    owner: Option<Arc<Principal>>,
}

/// Why a session id is not usable.
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// Unknown, expired, deleted, or another principal's: 404, so the client starts over.
    Unknown,
    /// The cap is reached and every session is in use.
    Full,
}

/// Holds a session busy while a request or stream is open; dropping it (or `release`) ends
/// the use.
pub struct Use {
    sessions: Arc<Sessions>,
    pub id: String,
    released: AtomicBool,
}

impl Use {
    /// Ends the use now, keeping the id: a request answered is over for its client.
    pub fn release(&self) {
        if self.released.swap(true, Ordering::Relaxed) {
            return;
        }
        if let Some(entry) = self.sessions.lock().get_mut(&self.id) {
            entry.busy = entry.busy.saturating_sub(1);
            entry.last = Instant::now();
        }
    }
}

impl Drop for Use {
    fn drop(&mut self) {
        self.release();
    }
}

impl Sessions {
    pub fn new(
        idle: Duration,
        cap: usize,
        prefix: Option<String>,
        metrics: Arc<ServerMetrics>,
    ) -> Sessions {
        Sessions { table: Mutex::new(HashMap::new()), idle, cap: cap.max(1), prefix, metrics }
    }

    /// Counts a session gone from the table; `lasted` says it was one (a failed `initialize`
    /// made none).
    fn gone(&self, entry: Entry, lasted: bool) {
        self.metrics.sessions.add(-1);
        if lasted {
            self.metrics.session_ended(entry.created.elapsed().as_secs_f64());
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new session, in use by the request that creates it.
    pub fn create(self: &Arc<Self>, owner: Option<Arc<Principal>>) -> Result<Use, Refused> {
        let mut table = self.lock();
        self.expire_locked(&mut table);
        if table.len() >= self.cap {
            let oldest = table
                .iter()
                .filter(|(_, e)| e.busy == 0)
                .min_by_key(|(_, e)| e.last)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(id) => {
                    log::info!(
                        target: LOG,
                        "session {} evicted: {} sessions open",
                        session_tag(&id),
                        table.len(),
                    );
                    if let Some(entry) = table.remove(&id) {
                        self.gone(entry, true);
                    }
                }
                None => return Err(Refused::Full),
            }
        }
        let hex = crate::util::random::random_hex(16);
        let id = match &self.prefix {
            Some(prefix) => format!("{prefix}.{hex}"),
            None => hex,
        };
        let now = Instant::now();
        table.insert(id.clone(), Entry { created: now, last: now, busy: 1, owner });
        self.metrics.sessions.add(1);
        Ok(Use { sessions: Arc::clone(self), id, released: AtomicBool::new(false) })
    }

    /// Starts a use of session `id` by `caller`.
    pub fn enter(self: &Arc<Self>, id: &str, caller: Option<&Principal>) -> Result<Use, Refused> {
        let mut table = self.lock();
        self.expire_locked(&mut table);
        match table.get_mut(id) {
            Some(entry) if same_caller(entry.owner.as_deref(), caller) => {
                entry.busy += 1;
                entry.last = Instant::now();
                Ok(Use {
                    sessions: Arc::clone(self),
                    id: id.to_string(),
                    released: AtomicBool::new(false),
                })
            }
            _ => Err(Refused::Unknown),
        }
    }

    /// Ends session `id` (DELETE); false when there was none (for this caller).
    pub fn remove(&self, id: &str, caller: Option<&Principal>) -> bool {
        let mut table = self.lock();
        match table.get(id) {
            Some(entry) if same_caller(entry.owner.as_deref(), caller) => {
                table.remove(id).map(|entry| self.gone(entry, true)).is_some()
            }
            _ => false,
        }
    }

    /// Drops `id` whoever owns it: its `initialize` failed.
    pub fn forget(&self, id: &str) {
        if let Some(entry) = self.lock().remove(id) {
            self.gone(entry, false);
        }
    }

    pub fn contains(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// Drops idle sessions past the expiry.
    pub fn expire(&self) {
        let mut table = self.lock();
        self.expire_locked(&mut table);
    }

    fn expire_locked(&self, table: &mut HashMap<String, Entry>) {
        let idle = self.idle;
        for (id, entry) in table.extract_if(|_, e| e.busy == 0 && e.last.elapsed() >= idle) {
            let (tag, secs) = (session_tag(&id), idle.as_secs());
            log::info!(target: LOG, "session {tag} expired after {secs}s idle");
            self.gone(entry, true);
        }
    }
}

/// Whether two callers are one: the same subject, come the same way (a token refreshed since
/// the session began says other claims, and is still its owner).
fn same_caller(owner: Option<&Principal>, caller: Option<&Principal>) -> bool {
    match (owner, caller) {
        (Some(owner), Some(caller)) => owner.binding() == caller.binding(),
        (owner, caller) => owner.is_none() && caller.is_none(),
    }
}

/// How logs name a session: the first 8 characters of its id (after its prefix and dot, when
/// `--session-id-prefix` gave it one), enough to tell sessions apart in a log and to find one
/// a client reports, but not to use it (the other 96 bits of a server-made id stay secret).
pub fn session_tag(id: &str) -> &str {
    let start = id.find('.').map_or(0, |dot| dot + 1);
    id[start..].char_indices().nth(8).map_or(id, |(end, _)| &id[..start + end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_counts_only_idle_time_and_the_cap_evicts_the_least_recent() {
        let metrics = Arc::new(ServerMetrics::new());
        let new = |idle, prefix| Arc::new(Sessions::new(idle, 2, prefix, metrics.clone()));
        let sessions = new(Duration::from_millis(30), None);
        let a = sessions.create(None).unwrap();
        let a_id = a.id.clone();
        std::thread::sleep(Duration::from_millis(50));
        // Still in use by its first request: not expired.
        assert!(sessions.enter(&a_id, None).is_ok());
        drop(a);
        assert!(sessions.contains(&a_id));
        std::thread::sleep(Duration::from_millis(50));
        sessions.expire();
        assert!(!sessions.contains(&a_id));
        assert_eq!(sessions.enter(&a_id, None).err(), Some(Refused::Unknown));

        let count = |name: &str| -> String {
            let text = metrics.render();
            let line = text.lines().find(|l| l.starts_with(name)).unwrap().to_string();
            line.rsplit(' ').next().unwrap().to_string()
        };
        // The expired session was counted in and out, and its duration observed.
        assert_eq!(count("baremcp_http_sessions "), "0");
        assert_eq!(count("mcp_server_session_duration_seconds_count "), "1");
        let sessions = new(Duration::from_secs(60), None);
        let (ann, bob) = (Principal::token("ann"), Principal::token("bob"));
        let first = sessions.create(Some(Arc::new(ann.clone()))).unwrap().id.clone();
        let second = sessions.create(Some(Arc::new(ann.clone()))).unwrap().id.clone();
        assert_eq!(sessions.enter(&second, Some(&bob)).err(), Some(Refused::Unknown));
        assert_eq!(sessions.enter(&second, None).err(), Some(Refused::Unknown));
        assert!(!sessions.remove(&second, Some(&bob)));
        drop(sessions.enter(&first, Some(&ann)));
        let held = sessions.create(None).unwrap();
        assert!(sessions.contains(&first) && !sessions.contains(&second));
        let _busy = sessions.enter(&first, Some(&ann)).unwrap();
        assert_eq!(sessions.create(None).err(), Some(Refused::Full));
        assert_eq!(held.id.len(), 32);
        assert_eq!(session_tag(&held.id), &held.id[..8]);
        assert_eq!(session_tag("äbc"), "äbc");
        // Two held, one evicted (observed), one refused.
        assert_eq!(count("baremcp_http_sessions "), "2");
        assert_eq!(count("mcp_server_session_duration_seconds_count "), "2");

        // With a prefix: `NAME.` and 32 hex digits; logs show the name and 8 of them.
        let named = new(Duration::from_secs(60), Some("p8081".into()));
        let id = named.create(None).unwrap().id.clone();
        assert!(id.starts_with("p8081.") && id.len() == 6 + 32, "{id}");
        assert_eq!(session_tag(&id), &id[..6 + 8]);
        assert!(named.enter(&id, None).is_ok());
        named.forget(&id);
        assert_eq!(count("baremcp_http_sessions "), "2", "a forgotten session is not held");
        assert_eq!(count("mcp_server_session_duration_seconds_count "), "2", "nor was it one");
    }
}
