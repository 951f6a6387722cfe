//! Tasks, the 2026-07-28 extension `io.modelcontextprotocol/tasks`: a tool that opts in runs on
//! a thread of its own while the serving loop goes on with other requests. The client gets a
//! task handle at once, polls `tasks/get` for the status (and, once done, the inlined result),
//! answers the task's questions with `tasks/update`, and may `tasks/cancel` it.
//!
//! Only task tools use threads: their handlers are `Send + Sync + 'static` and talk to the
//! loop through their task's mutex, never through the connection. Tasks live in this
//! process's memory: they do not survive a restart, and another process behind the same
//! endpoint does not know them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::conn::context::Context;
use crate::conn::principal::Principal;
use crate::registry::task::Task;
pub use crate::registry::task::TaskContext;
use crate::registry::tool::{HandlerError, Tool, ToolOutput};
use crate::wire::capabilities::{self, Declared};
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::ErrorObject;
use crate::wire::value::weigh;

/// The extension's identifier, under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Tasks whose thread has not ended, at most, whatever their status says: a cancelled task is
/// finished at once, but its handler runs on until it looks ([`Task::has_ended`]).
const MAX_RUNNING: usize = 64;
/// Tasks whose thread has not ended that one authenticated caller may have, at most: so that
/// one caller cannot take every thread from the others.
const MAX_RUNNING_PER_CALLER: usize = 16;
/// What the inputs of tasks whose thread has not ended take in memory ([`weigh`]), at most, in
/// bytes, all together: each thread holds its input until it ends. One task alone may have a
/// larger one.
const MAX_RUNNING_INPUT_BYTES: usize = 64 << 20;
/// Tasks kept at most, finished ones included; past it a finished one goes ([`evictable`]).
/// A task whose thread runs is never dropped: the bounds above count it in the store.
const MAX_KEPT: usize = 1024;
/// The results of finished tasks (their JSON text) kept at most, in bytes, all tasks together;
/// past it finished ones go ([`evictable`]). One result is at most `task::MAX_RESULT_BYTES`.
const MAX_KEPT_BYTES: usize = 64 << 20;

/// A task handler: the tool's input and the task's context in, the output or a message for
/// the model out, as a tool handler. It runs on its own thread when the client declared the
/// extension, and inline (as a plain tool) when it did not.
pub type TaskHandler =
    dyn Fn(&Value, &mut TaskContext) -> Result<ToolOutput, HandlerError> + Send + Sync;

/// What runs on the serving loop before a task is made: it may ask the client in the
/// 2026-07-28 way (an `InputRequiredResult`, then a retry), and what it returns is the task
/// handler's input.
pub type Prepare = dyn Fn(&Value, &mut Context) -> Result<Value, HandlerError>;

/// A tool that runs as a task, registered with [`crate::Server::add_task_tool`].
pub struct TaskTool {
    name: String,
    description: String,
    input_schema: Value,
    required: bool,
    handler: Arc<TaskHandler>,
    prepare: Option<Rc<Prepare>>,
}

impl TaskTool {
    /// A tool whose calls become tasks when the client declares the extension, and run as a
    /// plain tool call otherwise.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(&Value, &mut TaskContext) -> Result<ToolOutput, HandlerError>
        + Send
        + Sync
        + 'static,
    ) -> TaskTool {
        TaskTool {
            name: name.into(),
            description: description.into(),
            input_schema,
            required: false,
            handler: Arc::new(handler),
            prepare: None,
        }
    }

    /// Only as a task: a client that did not declare the extension gets -32021.
    pub fn required(mut self) -> TaskTool {
        self.required = true;
        self
    }

    /// Runs `prepare` on the serving loop first (see [`Prepare`]); the task handler gets what
    /// it returns instead of the arguments.
    pub fn prepare(
        mut self,
        prepare: impl Fn(&Value, &mut Context) -> Result<Value, HandlerError> + 'static,
    ) -> TaskTool {
        self.prepare = Some(Rc::new(prepare));
        self
    }

    /// The plain tool a client without the extension calls (the handler inline, after the
    /// preparation), and what the loop needs to run it as a task.
    pub(crate) fn split(self) -> (Tool, Spec) {
        let TaskTool { name, description, input_schema, required, handler, prepare } = self;
        let inline = {
            let (handler, prepare) = (handler.clone(), prepare.clone());
            move |args: &Value, cx: &mut Context| {
                // The arguments themselves when there is no preparation: never a copy of them.
                let prepared;
                let input = match &prepare {
                    Some(prepare) => {
                        prepared = prepare(args, cx)?;
                        &prepared
                    }
                    None => args,
                };
                handler(input, &mut TaskContext::inline(cx))
            }
        };
        (Tool::new(name, description, input_schema, inline), Spec { required, handler, prepare })
    }
}

/// A registered task tool, as the loop needs it.
pub(crate) struct Spec {
    pub required: bool,
    pub handler: Arc<TaskHandler>,
    pub prepare: Option<Rc<Prepare>>,
}

/// The server's task tools and the tasks of this process.
#[derive(Default)]
pub(crate) struct Tasks {
    pub specs: HashMap<String, Spec>,
    /// Touched only by the serving loop; each task's own state is behind its mutex. Each
    /// task is kept with its id and the caller that started it ([`Principal::binding`]).
    store: RefCell<Vec<Kept>>,
}

/// A task as the store keeps it: its id, who started it, the task.
type Kept = (String, Option<String>, Arc<Task>);

/// Ends its task when dropped: its thread's last act, however the thread ends.
struct Ends(Arc<Task>);

impl Drop for Ends {
    fn drop(&mut self) {
        self.0.end();
    }
}

impl Tasks {
    pub fn any(&self) -> bool {
        !self.specs.is_empty()
    }

    /// The task `id`, if `caller` started it: a task is bound to the caller the transport
    /// authenticated (the tasks spec's MUST), and another caller is told it does not exist.
    pub fn get(&self, id: &str, caller: Option<&Principal>) -> Option<Arc<Task>> {
        self.expire();
        let caller = caller.map(Principal::binding);
        let store = self.store.borrow();
        let found = store.iter().find(|(known, owner, _)| known == id && *owner == caller);
        found.map(|(_, _, task)| task.clone())
    }

    /// Makes a task and starts its thread; the task exists before this returns, so a
    /// `tasks/get` right after the handle finds it. Returns the `CreateTaskResult`.
    pub fn start(
        &self,
        name: &str,
        spec: &Spec,
        input: Value,
        capabilities: Declared,
        caller: Option<&Principal>,
    ) -> Result<Value, ErrorObject> {
        self.expire();
        let mut store = self.store.borrow_mut();
        let running = || store.iter().map(|(_, _, t)| t).filter(|t| !t.has_ended());
        if running().count() >= MAX_RUNNING {
            return Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("too many running tasks (at most {MAX_RUNNING})"),
            ));
        }
        let owner = caller.map(Principal::binding);
        // Without authentication every client is the one caller `None`: the global cap alone.
        let mine = store.iter().filter(|(_, o, t)| o.is_some() && *o == owner && !t.has_ended());
        if mine.count() >= MAX_RUNNING_PER_CALLER {
            return Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "too many running tasks for this caller (at most {MAX_RUNNING_PER_CALLER})"
                ),
            ));
        }
        let input_bytes = weigh(&input);
        let held: usize = running().map(|t| t.input_bytes).sum();
        if held > 0 && held + input_bytes > MAX_RUNNING_INPUT_BYTES {
            return Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "too many running tasks: their inputs would take more than \
                     {MAX_RUNNING_INPUT_BYTES} bytes"
                ),
            ));
        }
        if store.len() >= MAX_KEPT {
            match evictable(&store, |_| 1) {
                Some(at) => drop(store.remove(at)),
                None => return Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "too many tasks")),
            }
        }
        // Unguessable: whoever knows a task's id may read its result.
        let id = crate::util::random::random_hex(16);
        let task = Arc::new(Task::new(input_bytes));
        let created = task.created(&id);
        let (thread_task, handler, name) = (task.clone(), spec.handler.clone(), name.to_owned());
        std::thread::Builder::new()
            .name(format!("task {id}"))
            .spawn(move || {
                // However the thread ends, a panic past the net below included, the task's
                // slot is free only then.
                let _ends = Ends(thread_task.clone());
                let mut cx = TaskContext::thread(thread_task.clone(), capabilities);
                // A block MCP does not allow is the tool's fault, as when it runs inline; an
                // error's text is the tool's code too, so it is written inside the net.
                let checked = |output: ToolOutput| output.refused(&name).unwrap_or(output);
                let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                    handler(&input, &mut cx).map(checked).map_err(|error| error.to_string())
                }));
                // The task's slot and its input's bytes are free only once both are gone.
                drop((cx, input));
                thread_task.finish(outcome);
            })
            .map_err(|e| {
                ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("cannot start a task thread: {e}"),
                )
            })?;
        store.push((id, owner, task));
        Ok(created)
    }

    /// Finished tasks past their time to live are forgotten, and so are finished ones
    /// ([`evictable`]) while the results kept add up to more than [`MAX_KEPT_BYTES`]. Run
    /// before each use of the store: a result finished since then is counted at the next
    /// task request.
    fn expire(&self) {
        let now = SystemTime::now();
        let mut store = self.store.borrow_mut();
        store.retain(|(_, _, task)| !task.expired(now));
        let mut bytes: usize = store.iter().map(|(_, _, task)| task.kept_bytes()).sum();
        while bytes > MAX_KEPT_BYTES
            && let Some(at) = evictable(&store, Task::kept_bytes)
        {
            bytes -= store.remove(at).2.kept_bytes();
        }
    }

    /// The bytes the results of all kept tasks hold.
    #[cfg(test)]
    fn kept_bytes(&self) -> usize {
        self.store.borrow().iter().map(|(_, _, task)| task.kept_bytes()).sum()
    }
}

/// Which task goes when the store is past a bound on `weight` (one per task, or its result's
/// bytes): the oldest finished one (its thread ended), of weight, of the caller whose tasks
/// weigh the most. A caller who fills the store loses its own results first, not another's.
/// `None` when no such task weighs anything.
fn evictable(store: &[Kept], weight: impl Fn(&Task) -> usize) -> Option<usize> {
    let mut held: HashMap<&Option<String>, (usize, Option<usize>)> = HashMap::new();
    for (at, (_, owner, task)) in store.iter().enumerate() {
        let w = weight(task);
        let (total, oldest) = held.entry(owner).or_default();
        *total += w;
        if w > 0 && oldest.is_none() && task.has_ended() {
            *oldest = Some(at);
        }
    }
    let candidates = held.into_values().filter_map(|(total, oldest)| Some((total, oldest?)));
    // Of two callers holding as much, the one with the older task gives it up.
    candidates.max_by_key(|&(total, at)| (total, std::cmp::Reverse(at))).map(|(_, at)| at)
}

/// The error for a task tool or method used by a client that did not declare the extension.
pub(crate) fn missing_extension() -> ErrorObject {
    let data = json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } });
    ErrorObject::new(ErrorCode::MISSING_CLIENT_CAPABILITY, "missing required client capability")
        .with_data(data)
}

/// Whether a 2026-07-28 request's `clientCapabilities` (raw JSON) declare the extension; if
/// so, what else they declare (read without building the object, as a task keeps it).
pub(crate) fn declared(client_capabilities: Option<&str>) -> Option<Declared> {
    let raw = client_capabilities?;
    let extensions = capabilities::member(raw, "extensions")?;
    capabilities::declares(extensions, EXTENSION).then(|| Declared::read(raw))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// Waits (30 s at most) for the task `id` of `caller` to end.
    fn ended(tasks: &Tasks, id: &str, caller: Option<&Principal>) {
        let end = Instant::now() + Duration::from_secs(30);
        while !tasks.get(id, caller).unwrap().has_ended() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    use serde_json::json;

    use super::*;
    use crate::registry::task;

    #[test]
    fn running_tasks_hold_inputs_under_a_byte_bound_one_alone_may_be_larger() {
        // Runs until cancelled (a minute at most).
        let wait = |_: &Value, cx: &mut TaskContext| {
            cx.sleep(Duration::from_secs(60));
            Ok(ToolOutput::text("done"))
        };
        let (_, spec) = TaskTool::new("wait", "Waits", json!({"type": "object"}), wait).split();
        let tasks = Tasks::default();
        let start = |mib: usize| {
            let input = json!({ "label": "x".repeat(mib << 20) });
            tasks.start("t", &spec, input, Declared::default(), None).map(|c| c["taskId"].clone())
        };
        let alone = start(80).expect("one task alone may hold more than the bound");
        let refused = start(1).expect_err("none beside it");
        assert!(refused.message.contains("inputs would take more than"), "{}", refused.message);
        let id = alone.as_str().unwrap();
        tasks.get(id, None).unwrap().cancel();
        ended(&tasks, id, None);
        let mut ids = vec![start(30).unwrap(), start(30).unwrap()];
        assert!(start(5).is_err(), "30 + 30 + 5 MiB is past 64 MiB");
        ids.push(start(1).unwrap());
        // Inputs are weighed as they are held, not as their text: 4 bytes of `[[]],` take 200.
        let nested = json!({ "x": vec![json!([[]]); 20_000] });
        assert!(weigh(&nested) > 4 << 20, "{}", weigh(&nested));
        let refused = tasks.start("t", &spec, nested, Declared::default(), None);
        assert!(refused.is_err(), "60 MiB held, and 4 MiB more");
        for id in &ids {
            tasks.get(id.as_str().unwrap(), None).unwrap().cancel();
        }
    }

    #[test]
    fn one_caller_may_run_a_quarter_of_the_tasks_and_loses_its_own_results_first() {
        // Returns `bytes` of text, or runs until cancelled (a minute at most) when asked.
        let work = |input: &Value, cx: &mut TaskContext| {
            if input["wait"] == true {
                cx.sleep(Duration::from_secs(60));
            }
            Ok(ToolOutput::text("x".repeat(input["bytes"].as_u64().unwrap_or(0) as usize)))
        };
        let (_, spec) = TaskTool::new("work", "Works", json!({"type": "object"}), work).split();
        let tasks = Tasks::default();
        let (ann, bob) = (Principal::token("ann"), Principal::token("bob"));
        let start = |who: &Principal, input: Value| {
            let created = tasks.start("t", &spec, input, Declared::default(), Some(who));
            created.map(|c| c["taskId"].as_str().unwrap().to_string())
        };
        let waiting: Vec<String> = (0..MAX_RUNNING_PER_CALLER)
            .map(|_| start(&ann, json!({"wait": true})).unwrap())
            .collect();
        let refused = start(&ann, json!({"wait": true})).unwrap_err();
        assert_eq!(refused.message, "too many running tasks for this caller (at most 16)");
        let bobs = start(&bob, json!({"bytes": 15 << 20})).expect("another caller may");
        for id in &waiting {
            tasks.get(id, Some(&ann)).unwrap().cancel();
        }
        // Waits (bounded) until the task `id` of `who` has finished.
        let finished = |who: &Principal, id: &str| {
            ended(&tasks, id, Some(who));
        };
        finished(&bob, &bobs);
        for id in &waiting {
            finished(&ann, id);
        }
        // Bob's result is the oldest, but Ann's hold the most bytes: hers go first.
        let anns: Vec<String> = (0..4)
            .map(|_| {
                let id = start(&ann, json!({"bytes": 15 << 20})).unwrap();
                finished(&ann, &id);
                id
            })
            .collect();
        tasks.expire();
        assert!(tasks.kept_bytes() <= MAX_KEPT_BYTES, "{} bytes kept", tasks.kept_bytes());
        assert!(tasks.get(&bobs, Some(&bob)).is_some(), "bob's result is kept");
        assert!(tasks.get(&anns[0], Some(&ann)).is_none(), "ann's oldest goes");
        assert!(tasks.get(&anns[3], Some(&ann)).is_some());
    }

    #[test]
    fn past_the_count_bound_the_caller_holding_most_tasks_gives_up_its_oldest_finished() {
        let kept = |owner: &str, finished: bool| {
            let task = Arc::new(Task::new(0));
            if finished {
                task.cancel();
                task.end();
            }
            (String::new(), Some(owner.to_string()), task)
        };
        let mut store =
            vec![kept("bob", true), kept("ann", false), kept("ann", true), kept("ann", true)];
        assert_eq!(evictable(&store, |_| 1), Some(2), "ann holds 3, bob 1");
        store.push(kept("bob", false));
        store.push(kept("bob", false));
        assert_eq!(evictable(&store, |_| 1), Some(0), "as many: the older task goes");
        let running: Vec<Kept> = store.into_iter().filter(|(_, _, t)| !t.has_ended()).collect();
        assert_eq!(evictable(&running, |_| 1), None, "a running task never goes");
        // Nor one cancelled whose thread runs on: it would no longer be counted as running.
        running[0].2.cancel();
        assert_eq!(evictable(&running, |_| 1), None, "a cancelled task's thread runs");
        assert!(!running[0].2.expired(SystemTime::now() + 2 * task::TTL));
        running[0].2.end();
        assert_eq!(evictable(&running, |_| 1), Some(0));
        assert!(running[0].2.expired(SystemTime::now() + 2 * task::TTL));
    }

    #[test]
    fn a_cancelled_task_holds_its_slot_until_its_thread_ends() {
        // Looks at nothing but `release` (for 30 s at most), as a handler busy between checks.
        let release = Arc::new(AtomicBool::new(false));
        let busy = {
            let release = release.clone();
            move |_: &Value, _: &mut TaskContext| {
                let end = Instant::now() + Duration::from_secs(30);
                while !release.load(Ordering::Acquire) && Instant::now() < end {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(ToolOutput::text("done"))
            }
        };
        let (_, spec) = TaskTool::new("busy", "Busy", json!({"type": "object"}), busy).split();
        let tasks = Tasks::default();
        let start = || tasks.start("busy", &spec, json!({}), Declared::default(), None);
        let ids: Vec<String> = (0..MAX_RUNNING)
            .map(|_| start().unwrap()["taskId"].as_str().unwrap().to_string())
            .collect();
        for id in &ids {
            tasks.get(id, None).unwrap().cancel();
        }
        // Each is cancelled as the client sees it, but each thread runs: none is free (before,
        // a client cancelling what it started could have any number of threads).
        assert_eq!(tasks.get(&ids[0], None).unwrap().detailed(&ids[0])["status"], "cancelled");
        let refused = start().unwrap_err();
        assert_eq!(refused.message, "too many running tasks (at most 64)");
        release.store(true, Ordering::Release);
        let end = Instant::now() + Duration::from_secs(30);
        while ids.iter().any(|id| !tasks.get(id, None).unwrap().has_ended()) {
            assert!(Instant::now() < end, "the task threads did not end");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(start().is_ok(), "the threads ended: their slots are free");
    }

    /// A handler's error whose text cannot be written (its `Display` panics) fails the task
    /// and frees its slot, as a panicking handler does.
    #[test]
    fn an_error_whose_text_panics_fails_the_task_and_frees_its_slot() {
        #[derive(Debug)]
        struct BadText;
        impl std::fmt::Display for BadText {
            fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                panic!("no text")
            }
        }
        impl std::error::Error for BadText {}
        let bad = |_: &Value, _: &mut TaskContext| -> Result<ToolOutput, HandlerError> {
            Err(Box::new(BadText))
        };
        let (_, spec) = TaskTool::new("bad", "Bad", json!({"type": "object"}), bad).split();
        let tasks = Tasks::default();
        let created = tasks.start("bad", &spec, json!({}), Declared::default(), None).unwrap();
        let id = created["taskId"].as_str().unwrap();
        ended(&tasks, id, None);
        let task = tasks.get(id, None).unwrap();
        assert!(task.has_ended(), "its thread never ended");
        assert_eq!(task.detailed(id)["status"], "failed", "{}", task.detailed(id));
    }

    /// A task's output is checked as an inline call's is: a block MCP does not allow makes
    /// an error result naming it, never a result sent as invalid JSON.
    #[test]
    fn a_task_s_content_blocks_are_checked_as_an_inline_call_s() {
        let link = |_: &Value, _: &mut TaskContext| {
            Ok(ToolOutput::default().with(crate::Content::ResourceLink(json!("x"))))
        };
        let (_, spec) = TaskTool::new("link", "Links", json!({"type": "object"}), link).split();
        let tasks = Tasks::default();
        let created = tasks.start("link", &spec, json!({}), Declared::default(), None).unwrap();
        let id = created["taskId"].as_str().unwrap();
        ended(&tasks, id, None);
        let result = &tasks.get(id, None).unwrap().detailed(id)["result"];
        assert_eq!(result["isError"], true, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.starts_with("tool link returned content 0: a resource_link block"), "{text}");
    }

    #[test]
    fn finished_results_are_kept_under_a_byte_bound_the_oldest_going_first() {
        let big = |input: &Value, _: &mut TaskContext| {
            Ok(ToolOutput::text("x".repeat(input["bytes"].as_u64().unwrap_or(0) as usize)))
        };
        let (_, spec) =
            TaskTool::new("big", "Returns bytes", json!({"type": "object"}), big).split();
        let tasks = Tasks::default();
        // Starts a task returning `bytes` of text, and waits (bounded) until it has finished.
        let run = |bytes: usize| {
            let input = json!({ "bytes": bytes });
            let created = tasks.start("big", &spec, input, Declared::default(), None);
            let id = created.unwrap()["taskId"].as_str().unwrap().to_string();
            ended(&tasks, &id, None);
            id
        };
        let ids: Vec<String> = (0..6).map(|_| run(15 << 20)).collect();
        tasks.expire();
        assert!(tasks.kept_bytes() <= MAX_KEPT_BYTES, "{} bytes kept", tasks.kept_bytes());
        assert!(tasks.get(&ids[0], None).is_none(), "the oldest result is dropped first");
        let newest = tasks.get(&ids[5], None).unwrap().detailed(&ids[5]);
        assert_eq!(newest["status"], "completed");
        assert_eq!(newest["result"]["content"][0]["text"].as_str().map(str::len), Some(15 << 20));
        // A result that could never be kept beside others fails its task, saying why.
        let id = run(17 << 20);
        let failed = tasks.get(&id, None).unwrap().detailed(&id);
        assert_eq!(failed["status"], "failed", "{}", failed["status"]);
        let message = failed["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("the task's result is too large to keep"), "{message}");
    }
}
