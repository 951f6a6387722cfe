//! Child processes in a process group of their own: starting one so, ending the whole group,
//! and passing the stop signals `baremcp proxy` gets on to its upstream's group. std can only
//! signal a child itself, so the C library is called directly (running a `kill` program would
//! fail where none is on `PATH`).

use std::process::{Child, Command};
#[cfg(unix)]
use std::sync::atomic::{AtomicI32, Ordering};

#[cfg(unix)]
unsafe extern "C" {
    #[link_name = "kill"]
    fn signal_process(pid: i32, signal: i32) -> i32;
    fn signal(signum: i32, handler: usize) -> usize;
    fn raise(signal: i32) -> i32;
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

/// As [`own_group`], and on Linux the child is also killed when this process dies, however
/// it dies: SIGKILL leaves no handler to pass anything on. The kernel sends it when the
/// thread that started the child ends, so call this on the thread that lives as long as the
/// process (the proxy's main thread).
pub fn own_group_ended_with_us(command: &mut Command) {
    own_group(command);
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

/// Ends the child's process group (its id is the child's, which is not reaped yet, so it
/// names no one else), then the child itself.
#[cfg(unix)]
pub fn kill_group(child: &mut Child) {
    if let Ok(group) = i32::try_from(child.id()) {
        // SAFETY: the call takes two integers and touches no memory of this process; a
        // negative pid names a process group.
        unsafe { signal_process(-group, SIGKILL) };
    }
    let _ = child.kill();
}

/// Without process groups, only the child itself can be ended.
#[cfg(not(unix))]
pub fn kill_group(child: &mut Child) {
    let _ = child.kill();
}

/// The process group the stop signals go to; 0 when there is none (not started yet, or
/// reaped: its id may then name someone else's group).
#[cfg(unix)]
static FORWARD_TO: AtomicI32 = AtomicI32::new(0);

/// The last signal passed on (0 for none): the upstream ending of it is no surprise.
#[cfg(unix)]
static PASSED_ON: AtomicI32 = AtomicI32::new(0);

/// The stop signals passed on: SIGHUP, SIGINT, SIGQUIT, SIGTERM.
#[cfg(unix)]
const STOP_SIGNALS: [i32; 4] = [1, 2, 3, 15];

/// From now on SIGHUP, SIGINT, SIGQUIT and SIGTERM sent to this process go to `child`'s group
/// instead (started with [`own_group`]), once each, but those it was started ignoring: a client ending "its server" by pid, a
/// terminal's Ctrl-C or `timeout` reach the upstream and what it started, and this process
/// leaves with the upstream's status. Once [`stop_forwarding`] is called, they end this
/// process as they would have.
#[cfg(unix)]
pub fn forward_stop_signals(child: &Child) {
    let Ok(group) = i32::try_from(child.id()) else { return };
    FORWARD_TO.store(group, Ordering::Relaxed);
    const SIG_IGN: usize = 1;
    for number in STOP_SIGNALS {
        // SAFETY: `signal` installs a handler that only calls async-signal-safe functions
        // (`kill`, `signal`, `raise`) and touches lock-free atomics.
        let before = unsafe { signal(number, pass_on as extern "C" fn(i32) as usize) };
        // A signal this process was started ignoring (`nohup`, a shell's `&`) stays ignored,
        // as the upstream, which inherited that, ignores it too.
        if before == SIG_IGN {
            // SAFETY: as above.
            unsafe { signal(number, SIG_IGN) };
        }
    }
}

#[cfg(not(unix))]
pub fn forward_stop_signals(_child: &Child) {}

/// Whether signal `number` was passed on to the upstream by [`forward_stop_signals`].
#[cfg(unix)]
pub fn passed_on(number: i32) -> bool {
    PASSED_ON.load(Ordering::Relaxed) == number
}

/// The upstream is reaped: the stop signals end this process again.
pub fn stop_forwarding() {
    #[cfg(unix)]
    FORWARD_TO.store(0, Ordering::Relaxed);
}

#[cfg(unix)]
extern "C" fn pass_on(number: i32) {
    let errno = errno::place();
    // SAFETY: the C library's errno of this thread, saved and put back so that the code this
    // handler interrupted reads its own error, not `kill`'s.
    let saved = unsafe { *errno };
    match FORWARD_TO.load(Ordering::Relaxed) {
        group if group > 0 => {
            PASSED_ON.store(number, Ordering::Relaxed);
            // SAFETY: `kill` takes two integers; a negative pid names a process group.
            unsafe { signal_process(-group, number) };
        }
        // No upstream to pass it to: the default action, which ends this process (the
        // signal is blocked while its handler runs, so it lands as the handler returns).
        // SAFETY: both calls are async-signal-safe; 0 is SIG_DFL.
        _ => unsafe {
            signal(number, 0);
            raise(number);
        },
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
