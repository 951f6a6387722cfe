//! What one peer may hold open: connections (`--max-connections-per-peer`) and long-lived
//! streams (`--max-streams-per-peer`), so that one client cannot take every connection. A peer
//! is an IPv4 address or an IPv6 /64 (what one host is usually given). Loopback and
//! unix-socket peers are not counted: a reverse proxy in front is one local address for all
//! its clients (it limits them itself), and local clients are trusted as the machine is.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex, MutexGuard};

pub struct Peers {
    table: Mutex<HashMap<IpAddr, Held>>,
    max_connections: usize,
    max_streams: usize,
}

/// What one peer holds open now.
#[derive(Default)]
struct Held {
    connections: usize,
    streams: usize,
}

/// What a peer opens.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Connection,
    /// A legacy GET stream or a 2026-07-28 `subscriptions/listen`.
    Stream,
}

/// One connection or stream counted against its peer until dropped.
pub struct Slot {
    peers: Arc<Peers>,
    key: IpAddr,
    kind: Kind,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut table = self.peers.lock();
        if let Some(held) = table.get_mut(&self.key) {
            match self.kind {
                Kind::Connection => held.connections = held.connections.saturating_sub(1),
                Kind::Stream => held.streams = held.streams.saturating_sub(1),
            }
            if held.connections == 0 && held.streams == 0 {
                table.remove(&self.key);
            }
        }
    }
}

impl Peers {
    pub fn new(max_connections: usize, max_streams: usize) -> Peers {
        Peers { table: Mutex::new(HashMap::new()), max_connections, max_streams }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<IpAddr, Held>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts one more `kind` for the peer at `ip`: `Ok(None)` when the peer is not counted
    /// (loopback, unix socket), `Err` with the cap when it holds that many already.
    pub fn open(self: &Arc<Self>, ip: Option<IpAddr>, kind: Kind) -> Result<Option<Slot>, usize> {
        let Some(key) = ip.and_then(peer_key) else { return Ok(None) };
        let mut table = self.lock();
        let held = table.entry(key).or_default();
        let (count, cap) = match kind {
            Kind::Connection => (&mut held.connections, self.max_connections),
            Kind::Stream => (&mut held.streams, self.max_streams),
        };
        if *count >= cap {
            if held.connections == 0 && held.streams == 0 {
                table.remove(&key);
            }
            return Err(cap);
        }
        *count += 1;
        Ok(Some(Slot { peers: Arc::clone(self), key, kind }))
    }
}

/// The peer an address counts for: itself (IPv4, IPv4-mapped IPv6), or its /64 (IPv6);
/// `None` for loopback.
fn peer_key(ip: IpAddr) -> Option<IpAddr> {
    match ip.to_canonical() {
        ip if ip.is_loopback() => None,
        IpAddr::V6(v6) => {
            let mut segments = v6.segments();
            segments[4..].fill(0);
            Some(IpAddr::V6(Ipv6Addr::from(segments)))
        }
        v4 => Some(v4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_is_capped_and_freed_and_loopback_is_not_counted() {
        let peers = Arc::new(Peers::new(2, 1));
        let ip = |text: &str| Some(text.parse::<IpAddr>().unwrap());
        let a = peers.open(ip("192.0.2.1"), Kind::Connection).unwrap();
        let b = peers.open(ip("::ffff:192.0.2.1"), Kind::Connection).unwrap();
        assert!(a.is_some() && b.is_some());
        assert_eq!(peers.open(ip("192.0.2.1"), Kind::Connection).err(), Some(2));
        assert!(peers.open(ip("192.0.2.2"), Kind::Connection).is_ok(), "another peer");
        drop(a);
        assert!(peers.open(ip("192.0.2.1"), Kind::Connection).is_ok(), "a slot was freed");
        let stream = peers.open(ip("2001:db8::1"), Kind::Stream).unwrap();
        assert_eq!(peers.open(ip("2001:db8::ffff"), Kind::Stream).err(), Some(1), "same /64");
        assert!(peers.open(ip("2001:db8:0:1::1"), Kind::Stream).is_ok(), "another /64");
        drop(stream);
        for local in [ip("127.0.0.1"), ip("::1"), ip("::ffff:127.0.0.1"), None] {
            for _ in 0..3 {
                assert!(peers.open(local, Kind::Connection).unwrap().is_none());
            }
        }
        drop(b);
        assert!(peers.lock().is_empty(), "a peer with nothing open is forgotten");
    }
}
