//! Child processes and their process groups: starting one in a group of its own, ending the
//! whole group, and placing `baremcp proxy`'s upstream (and `replay`'s servers) and passing
//! the stop signals this process gets on to it. std can only signal a child itself, so the C
//! library is called directly (running a `kill` program would fail where none is on `PATH`).

use std::process::{Child, Command, ExitStatus};
#[cfg(unix)]
use std::sync::atomic::{AtomicI32, Ordering};

#[cfg(unix)]
unsafe extern "C" {
    #[link_name = "kill"]
    fn signal_process(pid: i32, signal: i32) -> i32;
    fn signal(signum: i32, handler: usize) -> usize;
    fn raise(signal: i32) -> i32;
    fn write(fd: i32, bytes: *const u8, count: usize) -> isize;
}

#[cfg(unix)]
const SIGKILL: i32 = 9;

/// Starts `command` in a process group of its own, so that ending it ends what it started.
#[cfg(unix)]
pub fn own_group(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(not(unix))]
pub fn own_group(_command: &mut Command) {}

/// The process group of the manifest command running now ([`CommandNoted`]), 0 for none:
/// the stop signals end it with this process ([`end_commands_on_stop`]).
#[cfg(unix)]
static COMMAND_GROUP: AtomicI32 = AtomicI32::new(0);

/// While it lives, the stop signals end the process group of the command it was made for
/// ([`note_command`]); dropped before the command is reaped, never after (its id may then
/// name another group).
pub struct CommandNoted(#[cfg(unix)] i32);

/// Notes `child`, started in a group of its own, as the command whose group the stop signals
/// end. One command at a time: a manifest's run one at a time on the serving thread, and one
/// started meanwhile on another thread (a test's) is not noted.
pub fn note_command(child: &Child) -> CommandNoted {
    #[cfg(unix)]
    {
        let id = i32::try_from(child.id()).unwrap_or(0);
        let swap = COMMAND_GROUP.compare_exchange(0, id, Ordering::Relaxed, Ordering::Relaxed);
        CommandNoted(if id > 0 && swap.is_ok() { id } else { 0 })
    }
    #[cfg(not(unix))]
    {
        let _ = child;
        CommandNoted()
    }
}

impl Drop for CommandNoted {
    fn drop(&mut self) {
        #[cfg(unix)]
        if self.0 != 0 {
            let _ = COMMAND_GROUP.compare_exchange(self.0, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

/// Has the stop signals (SIGHUP, SIGINT, SIGQUIT, SIGTERM; but those this process was started
/// ignoring) kill the group of the command running ([`note_command`]) before they end this
/// process as they otherwise would: on stdio, where they end it at once while a command runs
/// (a client that closed stdin and then sent SIGTERM, as the MCP spec says it should), the
/// command's group would be left running. Not over HTTP, whose own handlers stop the server
/// (which exits, if a tool outlives the drain, through [`end_commands_at_exit`]).
#[cfg(unix)]
pub fn end_commands_on_stop() {
    // SAFETY: `end_command` only calls async-signal-safe functions (`kill`, `signal`,
    // `raise`) and reads a lock-free atomic.
    unsafe { on_stop_signals(end_command) };
}

#[cfg(not(unix))]
pub fn end_commands_on_stop() {}

/// Has this process, when it exits (`exit(3)`, as `std::process::exit` does) while a command
/// runs, kill the command's group first: over HTTP a stop exits once a tool outlives its
/// drain, with the serving thread still in the command.
#[cfg(unix)]
pub fn end_commands_at_exit() {
    unsafe extern "C" {
        fn atexit(function: extern "C" fn()) -> i32;
    }
    extern "C" fn end_running_command() {
        let group = COMMAND_GROUP.load(Ordering::Relaxed);
        if group > 0 {
            // SAFETY: as in `end_command`.
            unsafe { signal_process(-group, SIGKILL) };
        }
    }
    // SAFETY: `atexit` keeps a function pointer, which lives as long as the program.
    unsafe { atexit(end_running_command) };
}

#[cfg(not(unix))]
pub fn end_commands_at_exit() {}

#[cfg(unix)]
extern "C" fn end_command(number: i32) {
    let group = COMMAND_GROUP.load(Ordering::Relaxed);
    if group > 0 {
        // SAFETY: `kill` takes two integers; a negative pid names a process group, the
        // command's alone while it is noted (it is let go before it is reaped).
        unsafe { signal_process(-group, SIGKILL) };
    }
    end_by(number);
}

/// How the proxy places its upstream (and replay its servers): in a group of its own, or in
/// the proxy's own group when the proxy is a terminal's foreground job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// A group of its own: the stop signals the proxy gets are passed on to it whole, once
    /// each, whether they were sent to the proxy alone or to the proxy's group.
    OwnGroup,
    /// The proxy's group, when the proxy talks through a terminal (its stdin or stdout) as
    /// its foreground job: the terminal's own signals (Ctrl-C, a hangup) reach both already,
    /// and the upstream may use the terminal as any job can (read it, write it under `stty
    /// tostop`), which a background group may not. Only SIGTERM, which is sent to a
    /// process, is passed on; the others are noted, so that the proxy waits for the
    /// upstream to act on them.
    Shared,
}

/// Starts `command` (the proxy's upstream, a replay's server): placed as [`Placement`] says
/// suits this process ([`Placement::Shared`] when it is a terminal's foreground job talking
/// through the terminal), on Linux killed when this process dies, however it dies (SIGKILL
/// leaves no handler to pass anything on), and sent the stop signals this process gets
/// ([`forward_stop_signals`]). The kernel sends the death signal when the thread that
/// started the child ends, so call this on the thread that lives as long as the process (the
/// main thread, as the proxy and replay do).
pub fn spawn_upstream(command: &mut Command) -> std::io::Result<Child> {
    let placement = if in_terminal_foreground() { Placement::Shared } else { Placement::OwnGroup };
    prepare_upstream(command, placement);
    let child = command.spawn()?;
    forward_stop_signals(&child, placement);
    Ok(child)
}

/// Readies `command` to be started as `placement` says, dying with this process on Linux.
fn prepare_upstream(command: &mut Command, placement: Placement) {
    if placement == Placement::OwnGroup {
        own_group(command);
    }
    dies_with_this_process(command);
}

/// On Linux, has the kernel kill the child `command` starts (the child alone, not its group)
/// when this process dies, however it dies: SIGKILL leaves no handler to do it. The kernel
/// sends it when the *thread* that started the child ends, so start it on a thread that
/// outlives it (the main thread; or one that reaps the child before it ends, as a manifest's
/// command is).
pub fn dies_with_this_process(command: &mut Command) {
    #[cfg(not(target_os = "linux"))]
    let _ = command;
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        unsafe extern "C" {
            fn prctl(option: i32, arg: std::ffi::c_ulong, ...) -> i32;
            fn getppid() -> i32;
        }
        const PR_SET_PDEATHSIG: i32 = 1;
        const ESRCH: i32 = 3;
        let parent = std::process::id() as i32;
        // SAFETY: between fork and exec the closure makes two system calls, which allocate
        // nothing and take no lock; the error it may return is built without allocating.
        unsafe {
            command.pre_exec(move || {
                prctl(PR_SET_PDEATHSIG, SIGKILL as std::ffi::c_ulong);
                // This process died before the request took hold: the child must not run on.
                match getppid() == parent {
                    true => Ok(()),
                    false => Err(std::io::Error::from_raw_os_error(ESRCH)),
                }
            })
        };
    }
}

/// Whether this process talks through a terminal (its stdin or stdout), as the foreground
/// job of its controlling terminal. A client in a terminal that starts the proxy over pipes
/// does not make it one: the proxy's upstream is then its own group's.
#[cfg(unix)]
fn in_terminal_foreground() -> bool {
    use std::io::IsTerminal;
    use std::os::fd::AsRawFd;
    unsafe extern "C" {
        fn tcgetpgrp(fd: i32) -> i32;
        fn getpgrp() -> i32;
    }
    if !std::io::stdin().is_terminal() && !std::io::stdout().is_terminal() {
        return false;
    }
    // No controlling terminal: opening it fails.
    let Ok(terminal) = std::fs::File::open("/dev/tty") else { return false };
    // SAFETY: both calls take at most a descriptor, open for the call, and touch no memory.
    unsafe { tcgetpgrp(terminal.as_raw_fd()) == getpgrp() }
}

#[cfg(not(unix))]
fn in_terminal_foreground() -> bool {
    false
}

/// Whether `child`, not reaped before, has exited, leaving it unreaped: until it is reaped its
/// id, and so its group's, names no one else, however many of the group's members have left,
/// so the group can still be ended ([`kill_group`]) and the stop signals still aim at it
/// ([`note_command`]). Reap it ([`Child::wait`]) only once neither will signal it again.
#[cfg(any(target_os = "linux", target_vendor = "apple"))]
pub fn exited(child: &mut Child) -> std::io::Result<bool> {
    unsafe extern "C" {
        fn waitid(kind: u32, id: u32, info: *mut SigInfo, options: i32) -> i32;
    }
    /// Room for a `siginfo_t` (128 bytes on Linux, 104 on macOS), aligned for its pointers;
    /// its first member, the signal number, stays 0 unless the child has exited (SIGCHLD).
    #[repr(C, align(8))]
    struct SigInfo([i32; 32]);
    const P_PID: u32 = 1;
    const WNOHANG: i32 = 1;
    const WEXITED: i32 = 4;
    #[cfg(target_os = "linux")]
    const WNOWAIT: i32 = 0x0100_0000;
    #[cfg(target_vendor = "apple")]
    const WNOWAIT: i32 = 0x20;
    let mut info = SigInfo([0; 32]);
    loop {
        // SAFETY: `waitid` writes at most a `siginfo_t` into `info`, which is larger; with
        // WNOWAIT it leaves the child as it is, with WNOHANG it does not wait.
        let looked = unsafe { waitid(P_PID, child.id(), &mut info, WEXITED | WNOHANG | WNOWAIT) };
        if looked == 0 {
            return Ok(info.0[0] != 0);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Without `waitid` (Windows, another Unix), the child is reaped as it is seen to have exited,
/// as [`Child::try_wait`] does; on Windows its handle keeps its id taken until it is dropped.
#[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
pub fn exited(child: &mut Child) -> std::io::Result<bool> {
    Ok(child.try_wait()?.is_some())
}

/// Ends the child's process group (its id is the child's, which is not reaped yet, so it
/// names no one else), then the child itself; without process groups, the child alone.
pub fn kill_group(child: &mut Child) {
    kill_group_id(child.id());
    let _ = child.kill();
}

/// Ends process group `group`: a child's id, named while that child is not reaped (else it
/// may name someone else's).
#[cfg(unix)]
pub fn kill_group_id(group: u32) {
    if let Ok(group) = i32::try_from(group) {
        // SAFETY: the call takes two integers and touches no memory of this process; a
        // negative pid names a process group.
        unsafe { signal_process(-group, SIGKILL) };
    }
}

/// Without process groups, a child is ended through its `Child` alone.
#[cfg(not(unix))]
pub fn kill_group_id(_group: u32) {}

/// Where the stop signals go, as `kill(2)` takes it: a group as its id negated, a process as
/// its id; 0 when nowhere (not started yet, or reaped: its id may then name someone else).
#[cfg(unix)]
static FORWARD_TO: AtomicI32 = AtomicI32::new(0);

/// The last signal passed on (0 for none): the upstream ending of it is no surprise, and
/// another stop signal after it ends the proxy.
#[cfg(unix)]
static PASSED_ON: AtomicI32 = AtomicI32::new(0);

/// The write end of the pipe [`passed_on_notice`] returns the read end of (-1 before it made
/// one): the first stop signal passed on writes a byte to it.
#[cfg(unix)]
static PASSED_ON_NOTICE: AtomicI32 = AtomicI32::new(-1);

/// 18 on Linux; on macOS and the BSDs 18 is SIGTSTP, which would stop the group instead.
#[cfg(unix)]
const SIGCONT: i32 = if cfg!(any(target_os = "linux", target_os = "android")) { 18 } else { 19 };
#[cfg(unix)]
const SIGHUP: i32 = 1;
#[cfg(unix)]
const SIGINT: i32 = 2;
#[cfg(unix)]
const SIGQUIT: i32 = 3;
#[cfg(unix)]
const SIGTERM: i32 = 15;

/// Passes the stop signals this process gets (SIGHUP, SIGINT, SIGQUIT, SIGTERM) on to the
/// upstream `child`, as `placement` says, but those it was started ignoring (`nohup`, a
/// shell's `&`), which the upstream inherited ignoring. A client ending "its server" by pid,
/// a terminal's Ctrl-C or `timeout` reach the upstream (and what it started, in a group of
/// its own) once each; the proxy then leaves with the upstream's status. A second stop
/// signal ends the proxy at once (after passing it on too), as does one after
/// [`stop_forwarding`]. Called again for each child in turn (replay's servers).
#[cfg(unix)]
fn forward_stop_signals(child: &Child, placement: Placement) {
    let Ok(pid) = i32::try_from(child.id()) else { return };
    let target = match placement {
        Placement::OwnGroup => -pid,
        Placement::Shared => pid,
    };
    FORWARD_TO.store(target, Ordering::Relaxed);
    // SAFETY: `pass_on` only calls async-signal-safe functions (`kill`, `signal`, `raise`,
    // `write`) and touches lock-free atomics.
    unsafe { on_stop_signals(pass_on) };
}

/// Has `handler` catch the stop signals (SIGHUP, SIGINT, SIGQUIT, SIGTERM), but those this
/// process was started ignoring (`nohup`, a shell's `&`), which stay ignored.
///
/// # Safety
///
/// `handler` runs in a signal handler: it may call only async-signal-safe functions and
/// touch only lock-free atomics.
#[cfg(unix)]
unsafe fn on_stop_signals(handler: extern "C" fn(i32)) {
    for number in [SIGHUP, SIGINT, SIGQUIT, SIGTERM] {
        // Looked at before anything is installed: a handler put in place and then taken back
        // would run for a signal arriving in between, which the user asked to be ignored.
        if !baremcp::__private::ignored(number) {
            // SAFETY: `signal` takes integers; the handler it installs is safe to run in a
            // signal handler, as the caller promises.
            unsafe { signal(number, handler as usize) };
        }
    }
}

#[cfg(not(unix))]
fn forward_stop_signals(_child: &Child, _placement: Placement) {}

/// What becomes readable once the first stop signal is passed on (or noted); call it once,
/// before [`spawn_upstream`].
#[cfg(unix)]
pub fn passed_on_notice() -> Option<std::io::PipeReader> {
    use std::os::fd::IntoRawFd;
    // The write end stays open for the life of the process. The handler writes to it once.
    let (notice, notify) = std::io::pipe().ok()?;
    PASSED_ON_NOTICE.store(notify.into_raw_fd(), Ordering::Relaxed);
    Some(notice)
}

#[cfg(not(unix))]
pub fn passed_on_notice() -> Option<std::io::PipeReader> {
    None
}

/// Whether signal `number` was the last passed on to the upstream.
#[cfg(unix)]
pub fn passed_on(number: i32) -> bool {
    PASSED_ON.load(Ordering::Relaxed) == number
}

/// Ends this process by the last stop signal passed on to the upstream, if one was.
pub fn end_by_passed_on() {
    #[cfg(unix)]
    match PASSED_ON.load(Ordering::Relaxed) {
        0 => {}
        number => end_by(number),
    }
}

/// The child's status once it exited. Its id may then name another process group, so the
/// stop signals stop going there, and end this process again.
pub fn reaped(child: &mut Child) -> std::io::Result<Option<ExitStatus>> {
    let status = child.try_wait()?;
    if status.is_some() {
        stop_forwarding();
    }
    Ok(status)
}

/// The child's status once it exits, however long that takes; as [`reaped`], the stop
/// signals then stop going to it.
pub fn waited(child: &mut Child) -> std::io::Result<ExitStatus> {
    let status = child.wait()?;
    stop_forwarding();
    Ok(status)
}

/// The upstream is reaped: the stop signals end this process again.
fn stop_forwarding() {
    #[cfg(unix)]
    FORWARD_TO.store(0, Ordering::Relaxed);
}

/// Ends this process by signal `number`, its default action: a process that stops on a
/// signal should end of it, so that what started it knows (a shell's loop stops at a
/// Ctrl-C only when its job died of SIGINT).
#[cfg(unix)]
fn end_by(number: i32) {
    // SAFETY: both calls take integers; 0 is SIG_DFL.
    unsafe {
        signal(number, 0);
        raise(number);
    }
}

#[cfg(unix)]
extern "C" fn pass_on(number: i32) {
    let errno = errno::place();
    // SAFETY: the C library's errno of this thread, saved and put back so that the code this
    // handler interrupted reads its own error, not `kill`'s.
    let saved = unsafe { *errno };
    let target = FORWARD_TO.load(Ordering::Relaxed);
    let again = target != 0 && PASSED_ON.swap(number, Ordering::Relaxed) != 0;
    let notify = PASSED_ON_NOTICE.load(Ordering::Relaxed);
    if target != 0 && !again && notify >= 0 {
        // SAFETY: one byte from a static, to a pipe nothing else writes: it cannot be full.
        unsafe { write(notify, b"!".as_ptr(), 1) };
    }
    // SAFETY: `kill` takes two integers. A group stopped by the terminal (it read it, or
    // wrote it under `stty tostop`) acts on the signal only once continued.
    unsafe {
        if target < 0 {
            signal_process(target, number);
            signal_process(target, SIGCONT);
        } else if target > 0 && number == SIGTERM {
            // In the terminal's job, the terminal sent the others to the upstream too.
            signal_process(target, number);
        }
    }
    // No upstream to pass it to, or a second stop signal: the default action, which ends
    // this process (the signal is blocked while its handler runs: it lands as it returns).
    if target == 0 || again {
        end_by(number);
    }
    // SAFETY: as above.
    unsafe { *errno = saved };
}

#[cfg(unix)]
mod errno {
    unsafe extern "C" {
        #[cfg_attr(target_os = "linux", link_name = "__errno_location")]
        #[cfg_attr(not(target_os = "linux"), link_name = "__error")]
        fn errno_location() -> *mut i32;
    }

    /// Where this thread's `errno` lives.
    pub fn place() -> *mut i32 {
        // SAFETY: the C library's function takes nothing and returns the calling thread's
        // errno, valid for as long as the thread runs.
        unsafe { errno_location() }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::thread::JoinHandleExt;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    unsafe extern "C" {
        fn pthread_kill(thread: std::os::unix::thread::RawPthread, signal: i32) -> i32;
    }

    /// How often the child test's handler ran.
    static CAUGHT: AtomicI32 = AtomicI32::new(0);

    extern "C" fn count(_number: i32) {
        CAUGHT.fetch_add(1, Ordering::Relaxed);
    }

    /// Set in the environment of the child test, which changes signal dispositions and so
    /// must run in a process of its own (an ignored signal stays ignored across `exec`, and
    /// the other tests' children would inherit it).
    const CHILD: &str = "BAREMCP_TEST_IGNORED_SIGNAL_CHILD";

    /// A stop signal this process was started ignoring is never caught, not even for a moment
    /// while the others' handlers are put in place: one arriving then stays ignored (caught,
    /// it would end the command's group and the server, which `nohup`'s user ruled out).
    #[test]
    fn a_signal_started_ignored_is_never_caught_meanwhile() {
        let (_, path) = module_path!().split_once("::").unwrap_or_default();
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", &format!("{path}::ignored_signal_child")])
            .args(["--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert!(stderr.contains("never caught"), "the child test did not run: {stderr}");
    }

    #[test]
    #[ignore = "the child process of a_signal_started_ignored_is_never_caught_meanwhile"]
    fn ignored_signal_child() {
        if std::env::var_os(CHILD).is_none() {
            return;
        }
        const SIG_IGN: usize = 1;
        // Started ignoring SIGTERM, as under `nohup` (SIGHUP) or a shell's `&` (SIGINT).
        // SAFETY: ignoring a signal runs nothing.
        unsafe { signal(SIGTERM, SIG_IGN) };
        let done = Arc::new(AtomicBool::new(false));
        let installing = {
            let done = done.clone();
            std::thread::spawn(move || {
                for _ in 0..200_000 {
                    // SAFETY: `count` only adds to a lock-free atomic.
                    unsafe { on_stop_signals(count) };
                }
                done.store(true, Ordering::Relaxed);
            })
        };
        // SIGTERM sent to the installing thread over and over (it is joined only after).
        let thread = installing.as_pthread_t();
        let mut sent = 0;
        while !done.load(Ordering::Relaxed) {
            // SAFETY: the thread is not joined yet, so its id is valid; SIGTERM is ignored or
            // caught by `count`.
            unsafe { pthread_kill(thread, SIGTERM) };
            sent += 1;
        }
        installing.join().unwrap();
        assert_eq!(CAUGHT.load(Ordering::Relaxed), 0, "caught though ignored ({sent} sent)");
        eprintln!("never caught ({sent} sent)");
    }
}
