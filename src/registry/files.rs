//! `--root DIR`: every regular file under a directory as a resource, safe by construction.
//!
//! A read percent-decodes the URI and, if its path is short enough to open and spells a path under
//! the root, canonicalizes it (resolving `..` and symlinks, once per read) and serves it only if it
//! lies inside the canonical root, is a regular file, is not hidden (unless allowed) and is within
//! the size cap. The file is opened without following a final symlink and without blocking, and the
//! opened descriptor's real path and type are checked again before a byte is read, so a path
//! swapped underneath the check (for a link, a FIFO, a device) is refused too. Listing, completion
//! and subscriptions judge a path by the same rule (`servable`), on where a symlink leads, so none
//! shows a name or size a read refuses; listing and completion follow no symlink to a directory
//! (`shown`, one place for both), so they show each file once, under its real path. Bytes are kept
//! as they arrive, the buffer growing only when memory allows, so no file and no size limit can
//! make a read abort the process. Listing walks the tree lazily in sorted order and resumes after
//! the last path of the previous page, so a page costs time and memory for that page only, however
//! big the tree.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Read};
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use crate::registry::resource::{Contents, ReadError};
use crate::util::encoding::{percent_decode, percent_encode_path};
use crate::util::stamp::{Stamp, WatchedFile};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::files";

/// Directories nested deeper than this under a root are not listed.
const MAX_DEPTH: usize = 64;

/// A path of this many bytes or more is never resolved: Linux opens none (`PATH_MAX`, which
/// counts the terminating NUL), and other systems' limits are lower. Resolving costs a system
/// call or two per component, so this bounds what one URI can cost.
pub(crate) const MAX_PATH_BYTES: usize = 4096;

#[cfg(test)]
thread_local! {
    /// How many paths this thread canonicalized: tests count resolutions with it.
    static CANONICALIZED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What `f` returns, and how many paths it canonicalized (on this thread).
#[cfg(test)]
pub(crate) fn canonicalized_by<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = CANONICALIZED.with(std::cell::Cell::get);
    let result = f();
    (result, CANONICALIZED.with(std::cell::Cell::get) - before)
}

/// One served directory.
pub struct FileRoot {
    /// Canonical, absolute.
    root: PathBuf,
    include_hidden: bool,
    max_bytes: u64,
}

impl FileRoot {
    /// Serves the files under `dir`, which must exist and be a directory.
    pub fn new(dir: &Path, include_hidden: bool, max_bytes: u64) -> std::io::Result<FileRoot> {
        let root = fs::canonicalize(dir)?;
        if !root.is_dir() {
            return Err(std::io::Error::other(format!("{} is not a directory", dir.display())));
        }
        Ok(FileRoot { root, include_hidden, max_bytes })
    }

    /// The canonical directory served.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `file://` and the root's percent-encoded path (no trailing slash).
    pub fn base_uri(&self) -> String {
        format!("file://{}", percent_encode_path(self.root.as_os_str().as_encoded_bytes()))
    }

    /// The URI template of its files, `file:///dir/{+path}`.
    pub fn template(&self) -> String {
        format!("{}/{{+path}}", self.base_uri())
    }

    fn uri(&self, relative: &Path) -> String {
        format!(
            "{}/{}",
            self.base_uri(),
            percent_encode_path(relative.as_os_str().as_encoded_bytes())
        )
    }

    /// Whether a path relative to the root names a dot-file or passes through a
    /// dot-directory (and `--include-hidden` is off). Only names count: a `..` is no name.
    fn hidden(&self, relative: &Path) -> bool {
        !self.include_hidden
            && relative.components().any(|c| {
                matches!(c, Component::Normal(name) if name.as_encoded_bytes().starts_with(b"."))
            })
    }

    /// The one rule every way in applies (a read, a subscription, and through `shown` a listing
    /// page and a completion): `path` is served if it resolves to a regular file strictly inside the
    /// canonical root whose path relative to the root is not hidden. Judging the resolved path
    /// is what keeps a symlink from showing a hidden file under a name of its own. Returns
    /// that canonical path and the file's metadata.
    fn servable(&self, path: &Path) -> Option<(PathBuf, fs::Metadata)> {
        #[cfg(test)]
        CANONICALIZED.with(|n| n.set(n.get() + 1));
        let canonical = fs::canonicalize(path).ok()?;
        let relative = canonical.strip_prefix(&self.root).ok()?;
        if relative.as_os_str().is_empty() || self.hidden(relative) {
            return None;
        }
        let metadata = fs::metadata(&canonical).ok().filter(fs::Metadata::is_file)?;
        Some((canonical, metadata))
    }

    /// The path a `file://` URI names, its canonical form and what it is, if that is a
    /// servable file under this root.
    ///
    /// Nothing touches the file system unless the path could be opened and spells a path
    /// under the root: `..` may still lead out, which the canonical path then shows.
    fn resolve(&self, uri: &str) -> Option<(PathBuf, PathBuf, fs::Metadata)> {
        let encoded = uri.strip_prefix("file://")?;
        // Each byte of the path takes at most three in the URI (`%2F`).
        if encoded.len() >= 3 * MAX_PATH_BYTES {
            return None;
        }
        let bytes = percent_decode(encoded)?;
        if bytes.len() >= MAX_PATH_BYTES || bytes.contains(&0) || !bytes.starts_with(b"/") {
            return None;
        }
        let path = path_from_bytes(bytes)?;
        // Hidden as spelled is refused too, as the listing never shows such a name: a read
        // neither serves `.link` nor tells by `.dir/../file` that `.dir` exists.
        if self.hidden(path.strip_prefix(&self.root).ok()?) {
            return None;
        }
        let (canonical, metadata) = self.servable(&path)?;
        Some((path, canonical, metadata))
    }

    /// Whether `uri` names a servable file here (resolving it, but opening nothing).
    pub(crate) fn contains(&self, uri: &str) -> bool {
        self.resolve(uri).is_some()
    }

    /// The file a URI names, resolved now, to be watched for changes by its canonical path;
    /// `None` when it is not a servable file here.
    pub(crate) fn watched(&self, uri: &str) -> Option<WatchedFile> {
        self.resolve(uri)
            .map(|(_, path, metadata)| WatchedFile::new(path, Some(Stamp::from(&metadata))))
    }

    /// Reads the file a URI names; anything outside the root is `NotFound`, never opened.
    pub fn read(&self, uri: &str) -> Result<(Contents, &'static str), ReadError> {
        self.read_if_here(uri).unwrap_or(Err(ReadError::NotFound))
    }

    /// Reads the file a URI names, resolving it once; `None` when it names no servable file
    /// here, so that the caller can look elsewhere.
    pub(crate) fn read_if_here(
        &self,
        uri: &str,
    ) -> Option<Result<(Contents, &'static str), ReadError>> {
        let (requested, path, _) = self.resolve(uri)?;
        Some(self.read_resolved(&requested, &path))
    }

    /// Reads a path `resolve` accepted, checking again what is opened: the file may have been
    /// swapped since.
    fn read_resolved(
        &self,
        requested: &Path,
        path: &Path,
    ) -> Result<(Contents, &'static str), ReadError> {
        // The canonical path has no symlinks, so one appearing now is a swap: not followed.
        let (file, metadata) = open_regular(path, false).map_err(|_| ReadError::NotFound)?;
        #[cfg(unix)]
        if let Ok(opened) =
            fs::read_link(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file)))
            && !opened.starts_with(&self.root)
        {
            return Err(ReadError::NotFound);
        }
        if metadata.len() > self.max_bytes {
            return Err(too_large(metadata.len(), self.max_bytes));
        }
        let bytes = read_capped(file, self.max_bytes, |size| too_large(size, self.max_bytes))?;
        let mime = mime_for(requested, path);
        Ok((Contents::from_bytes(bytes), mime))
    }

    /// Up to `limit` listings after `after` (a relative path), in sorted order, and whether
    /// more follow.
    pub fn list(&self, after: Option<&Path>, limit: usize) -> (Vec<(PathBuf, Value)>, bool) {
        let mut out = Vec::new();
        let more = self.walk(&self.root, Path::new(""), after, limit, &mut out, 0);
        (out, more)
    }

    /// Depth-first over sorted entries. Returns true once `limit` is exceeded.
    fn walk(
        &self,
        dir: &Path,
        relative: &Path,
        after: Option<&Path>,
        limit: usize,
        out: &mut Vec<(PathBuf, Value)>,
        depth: usize,
    ) -> bool {
        if depth > MAX_DEPTH {
            log::warn!(
                target: LOG,
                "not listing {}: nested more than {MAX_DEPTH} levels",
                dir.display(),
            );
            return false;
        }
        let Some(names) = self.names(dir, relative, &|_| true) else { return false };
        for (name, kind) in names {
            let rel = relative.join(&name);
            // Component-wise comparison matches the order this walk produces: what sorts up to
            // `after` was listed on an earlier page, but for a directory that holds `after`,
            // walked again from there.
            if let Some(after) = after
                && rel.as_path() <= after
                && !(kind.is_dir() && after.starts_with(&rel))
            {
                continue;
            }
            let full = dir.join(&name);
            let resolved = match self.shown(dir, &name, kind) {
                Some(Shown::Dir) => {
                    if self.walk(&full, &rel, after, limit, out, depth + 1) {
                        return true;
                    }
                    continue;
                }
                Some(Shown::File(resolved)) => resolved,
                None => continue,
            };
            if out.len() == limit {
                return true;
            }
            // A symlink was resolved; a regular file is its own canonical path, and its size
            // one `lstat` away (the only system call a listed file costs).
            let (target, metadata) = match resolved {
                Some(resolved) => resolved,
                None => match fs::symlink_metadata(&full) {
                    Ok(metadata) if metadata.is_file() => (full, metadata),
                    _ => continue,
                },
            };
            let listing = json!({
                "uri": self.uri(&rel),
                "name": rel.to_string_lossy(),
                "mimeType": mime_for(&rel, &target),
                "size": metadata.len(),
            });
            out.push((rel, listing));
        }
        false
    }

    /// The entries of `dir`, the directory `relative` under the root that listing or completion
    /// reached as a real directory. On Linux it is read through a descriptor whose real path
    /// is checked first (`/proc/self/fd`, as a read checks the file it opened): a directory
    /// swapped for a symlink since it was looked at is not read through, so its names and
    /// sizes are never shown. Elsewhere it is read by its path.
    fn entries(&self, dir: &Path, relative: &Path) -> Option<fs::ReadDir> {
        #[cfg(target_os = "linux")]
        {
            let opened = File::open(dir).ok()?;
            let held = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&opened));
            if fs::read_link(&held).ok()? != self.root.join(relative) {
                return None;
            }
            fs::read_dir(held).ok()
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = relative;
            fs::read_dir(dir).ok()
        }
    }

    /// How listing and completion show the entry `name` of `dir`, of type `kind` as the
    /// directory read says it (a symlink not followed), if at all. `dir` is one they reached
    /// from the canonical root through real directories shown here, so its path holds no
    /// symlink and no hidden name: a regular file's canonical path is `dir/name` itself, and
    /// passes the one rule (`servable`) by its name alone, without a system call (which a
    /// directory of a million files would pay a million times). Only a symlink is resolved, and
    /// shown as a file if where it leads passes the one rule. A symlink to a directory is not
    /// followed: each file is shown once, under its real path (a read through such a link still
    /// serves it, as the file it names is servable all the same).
    fn shown(&self, dir: &Path, name: &OsStr, kind: fs::FileType) -> Option<Shown> {
        if self.hidden(Path::new(name)) {
            None
        } else if kind.is_dir() {
            Some(Shown::Dir)
        } else if kind.is_file() {
            Some(Shown::File(None))
        } else if kind.is_symlink() {
            self.servable(&dir.join(name)).map(|target| Shown::File(Some(target)))
        } else {
            None
        }
    }

    /// Paths under the root that start with `prefix`: entries of the directory the prefix
    /// names, directories with a trailing `/`, sorted.
    pub fn complete(&self, prefix: &str) -> Vec<String> {
        let (dir_part, name_part) = match prefix.rfind('/') {
            Some(i) => (&prefix[..=i], &prefix[i + 1..]),
            None => ("", prefix),
        };
        // The directory is looked into only if listing looks into it: each of its names, from
        // the root down, is a directory `shown` shows (one `lstat` each). So `keys/`, a link to
        // `.ssh/`, suggests nothing, nor does `alias/`, a link to `notes/`.
        let mut dir = self.root.clone();
        for (depth, component) in Path::new(dir_part).components().enumerate() {
            // Nor deeper than listing goes.
            let Component::Normal(name) = component else { return Vec::new() };
            if depth == MAX_DEPTH {
                return Vec::new();
            }
            let Ok(metadata) = fs::symlink_metadata(dir.join(name)) else { return Vec::new() };
            if !matches!(self.shown(&dir, name, metadata.file_type()), Some(Shown::Dir)) {
                return Vec::new();
            }
            dir.push(name);
        }
        let wanted = |name: &OsStr| name.as_encoded_bytes().starts_with(name_part.as_bytes());
        let Some(names) = self.names(&dir, Path::new(dir_part), &wanted) else { return Vec::new() };
        let values = names.into_iter().filter_map(|(name, kind)| {
            // Suggested only as listed: real directories, and files a read would serve.
            let slash = match self.shown(&dir, &name, kind)? {
                Shown::Dir => "/",
                Shown::File(_) => "",
            };
            Some(format!("{dir_part}{}{slash}", name.into_string().ok()?))
        });
        values.collect()
    }

    /// The names in `dir` (`relative` under the root, read as [`Self::entries`] says) that
    /// `wanted` keeps, each with its type as the directory read gives it (no system call where
    /// the file system records types, an `lstat` where it does not), in byte order. The
    /// standard library's sort, not the crate's smaller heapsort: a directory may hold a
    /// million names, which it sorts 3 times as fast (0.4 s against 1.2 s); one sort serves
    /// listing and completion.
    fn names(
        &self,
        dir: &Path,
        relative: &Path,
        wanted: &dyn Fn(&OsStr) -> bool,
    ) -> Option<Vec<(std::ffi::OsString, fs::FileType)>> {
        let entries = self.entries(dir, relative)?;
        let mut names = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            if let (true, Ok(kind)) = (wanted(&name), entry.file_type()) {
                names.push((name, kind));
            }
        }
        names.sort_unstable_by(|(a, _), (b, _)| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
        Some(names)
    }
}

/// What listing and completion make of a directory's entry (`FileRoot::shown`).
enum Shown {
    /// A real directory, not a symlink: its entries are looked at in turn.
    Dir,
    /// A file a read serves: a regular file (`None`: nothing was resolved), or a symlink
    /// resolved to one (where it leads, and what that is).
    File(Option<(PathBuf, fs::Metadata)>),
}

#[cfg(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly"
))]
mod flags {
    pub const O_NONBLOCK: i32 = 0x4;
    pub const O_NOFOLLOW: i32 = 0x100;
}

#[cfg(all(
    unix,
    not(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ))
))]
mod flags {
    // Linux: the values differ between architectures.
    #[cfg(any(target_arch = "mips", target_arch = "mips64"))]
    pub const O_NONBLOCK: i32 = 0x80;
    #[cfg(not(any(target_arch = "mips", target_arch = "mips64")))]
    pub const O_NONBLOCK: i32 = 0o4000;
    #[cfg(any(
        target_arch = "aarch64",
        target_arch = "arm",
        target_arch = "powerpc",
        target_arch = "powerpc64"
    ))]
    pub const O_NOFOLLOW: i32 = 0o100_000;
    #[cfg(not(any(
        target_arch = "aarch64",
        target_arch = "arm",
        target_arch = "powerpc",
        target_arch = "powerpc64"
    )))]
    pub const O_NOFOLLOW: i32 = 0o400_000;
}

/// Reads the regular file at `path` (following symlinks) whole, if it holds at most
/// `max_bytes`. It is opened without waiting, so a FIFO or a device put in a file's place
/// never blocks the caller: anything but a regular file is `NotFound`, as is a missing one;
/// a larger file is refused with a message that names it, and so is one that does not fit
/// in memory (the buffer grows as bytes arrive, never by what the file claims). For a
/// [`crate::Resource`] reader that serves a file (see [`crate::Resource::watch_file`]): it
/// reads as [`FileRoot`] does.
pub fn read_regular_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
    let (file, metadata) = open_regular(path, true).map_err(|_| ReadError::NotFound)?;
    let too_large =
        |_| ReadError::Refused(format!("{} is larger than {max_bytes} bytes", path.display()));
    if metadata.len() > max_bytes {
        return Err(too_large(metadata.len()));
    }
    read_capped(file, max_bytes, too_large)
}

/// Opens `path` for reading if it is a regular file, and never waits: opening a FIFO
/// without a writer, or some devices, would block the server. `O_NONBLOCK` changes nothing
/// for reading a regular file, which is all this hands back.
fn open_regular(path: &Path, follow_links: bool) -> io::Result<(File, fs::Metadata)> {
    let mut options = File::options();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(flags::O_NONBLOCK | if follow_links { 0 } else { flags::O_NOFOLLOW });
    // Elsewhere there are no FIFOs to wait on, and the canonical path was just resolved.
    #[cfg(not(unix))]
    let _ = follow_links;
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok((file, metadata))
}

/// The path whose bytes a URI spelled: any bytes on unix; elsewhere only UTF-8, which is all a
/// path there can be written as.
pub(crate) fn path_from_bytes(bytes: Vec<u8>) -> Option<PathBuf> {
    #[cfg(unix)]
    return Some(PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(
        bytes,
    )));
    #[cfg(not(unix))]
    return String::from_utf8(bytes).ok().map(PathBuf::from);
}

/// How much a read reads at a time.
const CHUNK: usize = 64 * 1024;

/// Reads all of `file` if it is at most `max` bytes (else `too_large` with the size seen so
/// far). The buffer grows as bytes arrive and only as far as memory allows: a file larger
/// than what it claimed, or than memory, is refused, never an allocation failure.
fn read_capped(
    mut file: File,
    max: u64,
    too_large: impl Fn(u64) -> ReadError,
) -> Result<Vec<u8>, ReadError> {
    let no_memory = |size: usize| {
        ReadError::Refused(format!("cannot read: not enough memory for {size} bytes"))
    };
    let mut bytes = Vec::new();
    let mut chunk = vec![0; CHUNK];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ReadError::Refused(format!("cannot read: {e}"))),
        };
        let size = bytes.len() + n;
        if size as u64 > max {
            return Err(too_large(size as u64));
        }
        bytes.try_reserve(n).map_err(|_| no_memory(size))?;
        bytes.extend_from_slice(&chunk[..n]);
    }
    // The reply holds the content again, encoded (base64 is 4/3 of it) and then escaped into
    // the output line: refuse now, cleanly, when that room is clearly not there.
    let room = bytes.len().saturating_mul(3);
    if Vec::<u8>::new().try_reserve_exact(room).is_err() {
        return Err(no_memory(room));
    }
    Ok(bytes)
}

fn too_large(size: u64, max: u64) -> ReadError {
    ReadError::Refused(format!(
        "resource too large: {size} bytes (the limit is {max}; see --max-resource-bytes)"
    ))
}

/// The MIME type of a file by the name it was asked for, or by its target's name when a link's
/// own name says nothing.
fn mime_for(name: &Path, target: &Path) -> &'static str {
    match mime_type(name) {
        "application/octet-stream" => mime_type(target),
        known => known,
    }
}

/// The MIME type for a file name's extension; `application/octet-stream` when unknown.
pub fn mime_type(path: &Path) -> &'static str {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref().unwrap_or("") {
        "txt" | "text" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "xml" => "application/xml",
        "json" => "application/json",
        "jsonl" | "ndjson" => "application/x-ndjson",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" | "tsx" => "text/x-typescript",
        "py" => "text/x-python",
        "rs" => "text/x-rust",
        "go" => "text/x-go",
        "java" => "text/x-java",
        "c" | "h" => "text/x-c",
        "cc" | "cpp" | "cxx" | "hpp" => "text/x-c++",
        "rb" => "text/x-ruby",
        "sh" | "bash" => "text/x-shellscript",
        "sql" => "application/sql",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "ico" => "image/vnd.microsoft.icon",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "flac" => "audio/flac",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "tar" => "application/x-tar",
        "wasm" => "application/wasm",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
