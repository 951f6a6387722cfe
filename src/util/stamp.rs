//! How a watched file looked when last seen, so that a change to it can be noticed.

use std::fs;
#[cfg(unix)]
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file a subscription names, resolved once, when it was subscribed: looking at it again
/// is one `metadata` call on that path, however long the URI that named it.
#[derive(Debug)]
pub(crate) struct WatchedFile {
    path: PathBuf,
    seen: Option<Stamp>,
}

impl WatchedFile {
    /// Watches the file at `path`, which looks like `now` (`None`: there is none yet).
    pub(crate) fn new(path: PathBuf, now: Option<Stamp>) -> WatchedFile {
        WatchedFile { path, seen: now }
    }

    /// Looks at the file again: true when it changed, went or came back since the last look.
    pub(crate) fn changed(&mut self) -> bool {
        let now = Stamp::of(&self.path);
        let changed = now != self.seen;
        self.seen = now;
        changed
    }
}

/// What a change to a file changes: its device and inode (replaced by a rename), its size,
/// and its modification and status-change times to the nanosecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp([i64; 7]);

impl Stamp {
    /// How the file at `path` looks now; `None` when there is none.
    pub(crate) fn of(path: &Path) -> Option<Stamp> {
        fs::metadata(path).ok().map(|m| Stamp::from(&m))
    }

    /// The stamp of metadata already read.
    #[cfg(unix)]
    pub(crate) fn from(m: &fs::Metadata) -> Stamp {
        Stamp([
            m.dev() as i64,
            m.ino() as i64,
            m.size() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ])
    }

    /// Without inodes and status-change times: the size and the modification time.
    #[cfg(not(unix))]
    pub(crate) fn from(m: &fs::Metadata) -> Stamp {
        let since = |t: std::io::Result<std::time::SystemTime>| {
            t.ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).unwrap_or_default()
        };
        let modified = since(m.modified());
        Stamp([
            0,
            0,
            m.len() as i64,
            modified.as_secs() as i64,
            i64::from(modified.subsec_nanos()),
            0,
            0,
        ])
    }
}
