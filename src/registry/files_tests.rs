//! Tests of `files.rs`: the rules every way into a `--root` applies, and what each costs.

use super::*;
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn a_file_swapped_for_a_fifo_after_the_check_is_refused_without_waiting() {
    let dir = std::env::temp_dir().join(format!("baremcp-fifo-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("notes.txt");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let root = FileRoot::new(&dir, false, 1 << 20).unwrap();
    let path = fs::canonicalize(&fifo).unwrap();
    // As if `resolve` had seen a regular file there a moment ago.
    let (send, read) = mpsc::channel();
    std::thread::spawn(move || send.send(root.read_resolved(&path, &path).map(|_| ())));
    let result = read.recv_timeout(Duration::from_secs(5)).expect("the read waited on the FIFO");
    assert!(matches!(result, Err(ReadError::NotFound)));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn only_a_path_that_can_be_opened_under_the_root_is_resolved() {
    let dir = std::env::temp_dir().join(format!("baremcp-pathmax-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("d")).unwrap();
    fs::write(dir.join("f"), "x").unwrap();
    let root = FileRoot::new(&dir, false, 1 << 20).unwrap();
    // `/d/..` repeated k times, then `/f`: a valid spelling of the file, 5k + 2 bytes
    // after the root's path.
    let spelled = |k: usize| format!("{}{}/f", root.base_uri(), "/d/..".repeat(k));
    let longest = (MAX_PATH_BYTES - 1 - root.path().as_os_str().len() - 2) / 5;
    let (read, resolved) = canonicalized_by(|| root.read(&spelled(longest)));
    assert!(read.is_ok());
    assert_eq!(resolved, 1, "a read resolves its path once");
    let (read, resolved) = canonicalized_by(|| root.read(&spelled(longest + 1)));
    assert!(matches!(read, Err(ReadError::NotFound)));
    assert_eq!(resolved, 0, "a path too long to open is refused before it is resolved");
    // A path that does not spell one under the root is not resolved either.
    let (read, resolved) = canonicalized_by(|| root.read("file:///etc/passwd"));
    assert!(matches!(read, Err(ReadError::NotFound)));
    assert_eq!(resolved, 0);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg(unix)]
fn completion_resolves_only_the_symlinks_among_the_names() {
    let dir = std::env::temp_dir().join(format!("baremcp-complete-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("d/sub")).unwrap();
    for i in 0..50 {
        fs::write(dir.join(format!("d/f{i:02}")), "x").unwrap();
    }
    fs::write(dir.join(".env"), "secret").unwrap();
    std::os::unix::fs::symlink("../.env", dir.join("d/f_env")).unwrap();
    std::os::unix::fs::symlink("f00", dir.join("d/f_ok")).unwrap();
    let root = FileRoot::new(&dir, false, 1 << 20).unwrap();
    let (values, resolved) = canonicalized_by(|| root.complete("d/f"));
    assert_eq!(resolved, 2, "only the symlinks are resolved, never a regular file");
    assert_eq!(values.len(), 51, "{values:?}");
    assert!(values.contains(&"d/f07".to_owned()) && values.contains(&"d/f_ok".to_owned()));
    assert!(!values.contains(&"d/f_env".to_owned()), "a link to a dot-file is no name");
    assert_eq!(root.complete("d/s"), ["d/sub/"]);
    fs::remove_dir_all(&dir).unwrap();
}

/// A directory that became a symlink after the walk reached it is not read through.
#[test]
#[cfg(target_os = "linux")]
fn a_directory_swapped_for_a_link_is_not_read_through() {
    let dir = std::env::temp_dir().join(format!("baremcp-swap-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("root/d")).unwrap();
    fs::create_dir_all(dir.join("outside")).unwrap();
    fs::write(dir.join("outside/secret"), "x").unwrap();
    let root = FileRoot::new(&dir.join("root"), false, 1 << 20).unwrap();
    let d = root.root.join("d");
    assert!(root.entries(&d, Path::new("d")).is_some());
    // As if swapped between the look at `d` and its read.
    fs::remove_dir(&d).unwrap();
    std::os::unix::fs::symlink(dir.join("outside"), &d).unwrap();
    assert!(root.entries(&d, Path::new("d")).is_none());
    fs::remove_dir_all(&dir).unwrap();
}

/// Completion looks no deeper than listing goes: a directory nested past `MAX_DEPTH`
/// levels is neither listed nor completed into.
#[test]
fn completion_goes_no_deeper_than_listing() {
    let dir = std::env::temp_dir().join(format!("baremcp-deep-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let deepest = "d/".repeat(MAX_DEPTH + 1);
    fs::create_dir_all(dir.join(&deepest)).unwrap();
    fs::write(dir.join(&deepest).join("f"), "x").unwrap();
    fs::write(dir.join("d/g"), "y").unwrap();
    let root = FileRoot::new(&dir, false, 1 << 20).unwrap();
    let (listed, _) = root.list(None, 100);
    let names: Vec<&str> = listed.iter().filter_map(|(_, l)| l["name"].as_str()).collect();
    assert_eq!(names, ["d/g"]);
    let last_listed = "d/".repeat(MAX_DEPTH);
    assert_eq!(root.complete(&last_listed), [format!("{last_listed}d/")]);
    assert!(root.complete(&deepest).is_empty());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg(unix)]
fn listing_resolves_only_the_symlinks_among_the_names() {
    let dir = std::env::temp_dir().join(format!("baremcp-list-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("d/sub")).unwrap();
    for i in 0..50 {
        fs::write(dir.join(format!("d/f{i:02}")), "x").unwrap();
    }
    fs::write(dir.join("d/sub/g"), "yy").unwrap();
    fs::write(dir.join(".env"), "secret").unwrap();
    std::os::unix::fs::symlink("../.env", dir.join("d/f_env")).unwrap();
    std::os::unix::fs::symlink("f00", dir.join("d/f_ok")).unwrap();
    std::os::unix::fs::symlink("d", dir.join("alias")).unwrap();
    let root = FileRoot::new(&dir, false, 1 << 20).unwrap();
    let name = |(_, listing): &(PathBuf, Value)| listing["name"].as_str().unwrap().to_owned();
    let ((listed, more), resolved) = canonicalized_by(|| root.list(None, 100));
    assert_eq!(resolved, 3, "only the symlinks are resolved, never a regular file");
    assert!(!more);
    let names: Vec<String> = listed.iter().map(name).collect();
    assert_eq!(names.len(), 52, "{names:?}");
    assert_eq!(names[..2], ["d/f00", "d/f01"]);
    assert_eq!(names[50..], ["d/f_ok", "d/sub/g"], "no link to a dot-file or a directory");
    assert_eq!((listed[50].1["size"].as_u64(), listed[51].1["size"].as_u64()), (Some(1), Some(2)));
    // Pages of 7, each resuming after the last: the same names, each symlink resolved once
    // (here none is the one after a page, looked at to tell that more follow).
    let (mut paged, mut after, mut resolved) = (Vec::new(), None, 0);
    loop {
        let ((page, more), n) = canonicalized_by(|| root.list(after.as_deref(), 7));
        resolved += n;
        paged.extend(page.iter().map(name));
        after = page.last().map(|(path, _)| path.clone());
        if !more {
            break;
        }
    }
    assert_eq!(paged, names);
    assert_eq!(resolved, 3);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reads_are_capped_as_bytes_arrive() {
    let dir = std::env::temp_dir().join(format!("baremcp-capped-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("f");
    fs::write(&file, vec![b'x'; 3 * CHUNK + 5]).unwrap();
    let read = |max: u64| {
        read_capped(File::open(&file).unwrap(), max, |n| ReadError::Refused(n.to_string()))
    };
    assert_eq!(read(3 * CHUNK as u64 + 5).unwrap().len(), 3 * CHUNK + 5);
    // Refused at the first chunk past the limit, saying how much had arrived.
    assert!(
        matches!(read(CHUNK as u64 + 1), Err(ReadError::Refused(n)) if n == (2 * CHUNK).to_string())
    );
    fs::remove_dir_all(&dir).unwrap();
}
