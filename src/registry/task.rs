//! One task of the tasks extension (`tasks.rs`): its status, open questions and outcome
//! behind a mutex shared by the serving loop and the task's thread, and the `TaskContext` a
//! task handler gets.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

use crate::conn::context::{ClientError, Context};
use crate::registry::tool::ToolOutput;
use crate::util::encoding::rfc3339;
use crate::wire::capabilities::Declared;
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::ErrorObject;
use crate::wire::value::weigh;

/// How long a finished task stays readable, and what `ttlMs` says.
pub(crate) const TTL: Duration = Duration::from_secs(3600);
/// A finished task's result (its JSON text) is kept up to this size; a larger one fails the
/// task with an error that says so. Across all kept tasks: `task_tool::MAX_KEPT_BYTES`.
const MAX_RESULT_BYTES: usize = 16 << 20;
/// How often a client should poll, as `pollIntervalMs` says.
const POLL_MS: u64 = 200;
/// What the answers a task keeps while it waits for the rest may take ([`weigh`]): elicitation
/// results are small forms, and a task may wait for its other answers for as long as it lives.
pub(crate) const MAX_WAITING_ANSWERS: usize = 1 << 20;
/// How often an inline sleep looks whether its request was cancelled.
const CANCEL_CHECK: Duration = Duration::from_millis(100);

#[derive(Clone, Copy, PartialEq)]
enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

struct State {
    status: Status,
    created: SystemTime,
    updated: SystemTime,
    /// Questions the client has not answered yet: the `inputRequests` of `tasks/get`.
    pending: Map<String, Value>,
    /// Answers from `tasks/update`, until the handler takes them.
    answers: Map<String, Value>,
    /// Once finished: the JSON text of the tool result, or of the error of a failed task
    /// (which of the two the status says). Text, not a value: what it costs is its length.
    outcome: Option<String>,
}

/// One task: its state, and a condition variable the handler waits on for answers and for
/// cancellation.
pub(crate) struct Task {
    state: Mutex<State>,
    changed: Condvar,
    /// The size of its input as JSON text: what its thread holds while it runs.
    pub input_bytes: usize,
    /// Set by its thread as it ends, its input dropped: until then the task holds a thread
    /// and its input whatever its status says (a cancelled handler runs on until it looks).
    ended: AtomicBool,
}

impl Task {
    /// A task just made for an input of `input_bytes`: `working`, nothing asked.
    pub fn new(input_bytes: usize) -> Task {
        let now = SystemTime::now();
        let state = State {
            status: Status::Working,
            created: now,
            updated: now,
            pending: Map::new(),
            answers: Map::new(),
            outcome: None,
        };
        let ended = AtomicBool::new(false);
        Task { state: Mutex::new(state), changed: Condvar::new(), input_bytes, ended }
    }

    /// The `CreateTaskResult` that announces it.
    pub fn created(&self, id: &str) -> Value {
        let mut created = self.envelope(id, &self.lock());
        created["resultType"] = json!("task");
        created
    }

    /// Whether its thread has ended (it is finished then): what the bounds on running tasks
    /// count, as a task cancelled is finished at once but its thread may run on.
    pub fn has_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Its thread has ended: called by that thread last, after [`Task::finish`].
    pub fn end(&self) {
        self.ended.store(true, Ordering::Release);
    }

    /// Finished longer than `TTL` before `now`, its thread ended (a cancelled one still
    /// running is kept, so that it is counted). A task thread may finish after `now` was
    /// read: that task's age is zero, not an error.
    pub fn expired(&self, now: SystemTime) -> bool {
        let state = self.lock();
        self.has_ended()
            && state.status.is_terminal()
            && now.duration_since(state.updated).unwrap_or_default() >= TTL
    }

    /// A handler that panicked holding the lock leaves consistent state: every change is one
    /// assignment, so the poison is ignored.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The fields every task message carries.
    fn envelope(&self, id: &str, state: &State) -> Value {
        json!({
            "taskId": id,
            "status": state.status.name(),
            "createdAt": rfc3339(state.created),
            "lastUpdatedAt": rfc3339(state.updated),
            "ttlMs": TTL.as_millis() as u64,
            "pollIntervalMs": POLL_MS,
        })
    }

    /// `tasks/get`: the envelope, the open questions, and the result or error once finished.
    pub fn detailed(&self, id: &str) -> Value {
        let state = self.lock();
        let mut task = self.envelope(id, &state);
        if state.status == Status::InputRequired {
            task["inputRequests"] = Value::Object(state.pending.clone());
        }
        let field = match state.status {
            Status::Completed => "result",
            Status::Failed => "error",
            _ => return task,
        };
        if let Some(json) = &state.outcome {
            task[field] = serde_json::from_str(json).unwrap_or(Value::Null);
        }
        task
    }

    /// `tasks/update`: answers to open questions are kept for the handler; others ignored.
    /// Answers kept waiting for the handler (it may wait for others) take at most
    /// [`MAX_WAITING_ANSWERS`] bytes ([`weigh`]): past it the update is refused, nothing kept.
    pub fn update(&self, responses: Map<String, Value>) -> Result<(), ErrorObject> {
        let mut state = self.lock();
        let kept: usize = state.answers.values().map(weigh).sum();
        let open = responses.iter().filter(|(key, _)| state.pending.contains_key(*key));
        if kept + open.map(|(_, answer)| weigh(answer)).sum::<usize>() > MAX_WAITING_ANSWERS {
            return Err(ErrorObject::invalid_params(format!(
                "params.inputResponses too large: a task keeps at most {MAX_WAITING_ANSWERS} \
                 bytes of answers while it waits"
            )));
        }
        for (key, answer) in responses {
            if state.pending.remove(&key).is_some() {
                state.answers.insert(key, answer);
            }
        }
        if state.status == Status::InputRequired && state.pending.is_empty() {
            state.status = Status::Working;
            state.updated = SystemTime::now();
        }
        self.changed.notify_all();
        Ok(())
    }

    /// `tasks/cancel`: a task not yet finished is cancelled at once; its handler sees it at
    /// its next wait or check, and whatever it returns is dropped. Its thread is counted as
    /// running until then ([`Task::has_ended`]).
    pub fn cancel(&self) {
        let mut state = self.lock();
        if !state.status.is_terminal() {
            state.status = Status::Cancelled;
            state.pending.clear();
            state.updated = SystemTime::now();
        }
        self.changed.notify_all();
    }

    /// Settles the task with its handler's outcome: its output, its error's text, or the
    /// panic that ended it.
    pub fn finish(&self, outcome: std::thread::Result<Result<ToolOutput, String>>) {
        let mut state = self.lock();
        if state.status == Status::Cancelled {
            return;
        }
        let (status, outcome) = match outcome {
            Ok(Ok(output)) => (Status::Completed, result_json(&output)),
            Ok(Err(error)) => (Status::Completed, result_json(&ToolOutput::error(error))),
            Err(panic) => {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned());
                let message = format!("internal error: {}", why.unwrap_or_else(|| "panic".into()));
                (Status::Failed, failure(message))
            }
        };
        // A result that could never be kept beside others fails the task, saying why.
        let (status, outcome) = if outcome.len() > MAX_RESULT_BYTES {
            let size = outcome.len();
            let message = format!(
                "the task's result is too large to keep: {size} bytes (at most {MAX_RESULT_BYTES})"
            );
            (Status::Failed, failure(message))
        } else {
            (status, outcome)
        };
        state.status = status;
        state.outcome = Some(outcome);
        state.pending.clear();
        state.updated = SystemTime::now();
        self.changed.notify_all();
    }

    /// The bytes its outcome keeps: none until it has finished.
    pub fn kept_bytes(&self) -> usize {
        self.lock().outcome.as_ref().map_or(0, String::len)
    }
}

fn result_json(output: &ToolOutput) -> String {
    let mut json = Vec::new();
    output.write_json(&mut json, None, true);
    String::from_utf8(json).unwrap_or_default()
}

/// The error object of a failed task, as JSON text.
fn failure(message: String) -> String {
    json!({ "code": ErrorCode::INTERNAL_ERROR, "message": message }).to_string()
}

/// What a task handler may do: ask the user, wait, and notice cancellation. Inline (a client
/// without the extension) it asks as any handler does; on a thread the questions wait in the
/// task's `inputRequests` until `tasks/update` answers them.
pub struct TaskContext<'t, 'a, 'io> {
    mode: Mode<'t, 'a, 'io>,
}

enum Mode<'t, 'a, 'io> {
    Inline(&'t mut Context<'a, 'io>),
    Thread { task: Arc<Task>, capabilities: Declared },
}

impl<'t, 'a, 'io> TaskContext<'t, 'a, 'io> {
    /// For a plain call: questions go through the request's own `Context`.
    pub(crate) fn inline(cx: &'t mut Context<'a, 'io>) -> Self {
        TaskContext { mode: Mode::Inline(cx) }
    }

    /// For a task's thread: questions wait in `task`; `capabilities` are the client's.
    pub(crate) fn thread(task: Arc<Task>, capabilities: Declared) -> Self {
        TaskContext { mode: Mode::Thread { task, capabilities } }
    }

    /// True once the task was cancelled (or, inline, the request was: see
    /// [`Context::is_cancelled`]).
    pub fn is_cancelled(&mut self) -> bool {
        match &mut self.mode {
            Mode::Inline(cx) => cx.is_cancelled(),
            Mode::Thread { task, .. } => task.lock().status == Status::Cancelled,
        }
    }

    /// Waits `duration`, or less if the task is cancelled meanwhile. True when the whole
    /// wait passed.
    ///
    /// Inline (a plain call), the wait ends early when the request is cancelled as far as
    /// [`Context::is_cancelled`] can tell, asked every 100 ms: on stdio, a
    /// `notifications/cancelled` the client sent; over HTTP in 2026-07-28, the client closing
    /// the request's connection (seen within half a second); a cancellation read while the
    /// handler earlier waited on the client.
    pub fn sleep(&mut self, duration: Duration) -> bool {
        match &mut self.mode {
            Mode::Inline(cx) => {
                let end = std::time::Instant::now() + duration;
                loop {
                    if cx.is_cancelled() {
                        return false;
                    }
                    let left = end.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        return true;
                    }
                    std::thread::sleep(left.min(CANCEL_CHECK));
                }
            }
            Mode::Thread { task, .. } => {
                let state = task.lock();
                let (state, _) = task
                    .changed
                    .wait_timeout_while(state, duration, |s| s.status != Status::Cancelled)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                state.status != Status::Cancelled
            }
        }
    }

    /// Asks the user one question (`elicitation/create`) under `key`; see
    /// [`TaskContext::elicit_all`].
    pub fn elicit(
        &mut self,
        key: &str,
        message: &str,
        requested_schema: Value,
    ) -> Result<Value, ClientError> {
        let mut answers = self.elicit_all(&[(key, message, requested_schema)])?;
        Ok(answers.pop().unwrap_or(Value::Null))
    }

    /// Asks the user several questions at once, each `(key, message, requestedSchema)`, and
    /// returns the answers (`ElicitResult`s) in the same order once all have come. On a thread
    /// the task is `input_required` meanwhile; the client may answer in parts.
    pub fn elicit_all(&mut self, forms: &[(&str, &str, Value)]) -> Result<Vec<Value>, ClientError> {
        match &mut self.mode {
            Mode::Inline(cx) => {
                let answers: Vec<_> = forms
                    .iter()
                    .map(|(key, message, schema)| cx.key(*key).elicit(message, schema.clone()))
                    .collect();
                answers.into_iter().collect()
            }
            Mode::Thread { task, capabilities } => {
                if !capabilities.has("elicitation") {
                    return Err(ClientError::Unsupported("elicitation"));
                }
                let mut state = task.lock();
                for (key, message, schema) in forms {
                    if !state.answers.contains_key(*key) {
                        let request = json!({ "method": "elicitation/create", "params": { "message": message, "requestedSchema": schema } });
                        state.pending.insert(key.to_string(), request);
                    }
                }
                if !state.pending.is_empty() && state.status == Status::Working {
                    state.status = Status::InputRequired;
                    state.updated = SystemTime::now();
                }
                let mut state = task
                    .changed
                    .wait_while(state, |s| {
                        s.status != Status::Cancelled
                            && forms.iter().any(|(key, ..)| !s.answers.contains_key(*key))
                    })
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                if state.status == Status::Cancelled {
                    return Err(ClientError::Cancelled);
                }
                let answers: Vec<Value> =
                    forms.iter().filter_map(|(key, ..)| state.answers.remove(*key)).collect();
                match answers.iter().find(|a| {
                    !matches!(a["action"].as_str(), Some("accept" | "decline" | "cancel"))
                }) {
                    Some(_) => Err(ClientError::Invalid(
                        "an elicitation result needs action accept, decline or cancel".into(),
                    )),
                    None => Ok(answers),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_kept_while_a_task_waits_are_bounded() {
        let task = Task::new(0);
        for key in ["name", "pad"] {
            task.lock().pending.insert(key.into(), json!({}));
        }
        let answer = |content: Value| {
            let mut responses = Map::new();
            responses.insert("pad".into(), json!({ "action": "accept", "content": content }));
            responses
        };
        // A few hundred thousand numbers decode into megabytes; the task could wait for its
        // other answer as long as it lives (before, 13 MiB of them kept 215 MB each).
        let heavy = answer(json!({ "pad": vec![0; 100_000] }));
        assert!(task.update(heavy).is_err());
        assert!(task.lock().answers.is_empty(), "nothing of a refused update is kept");
        assert!(task.lock().pending.contains_key("pad"), "the question is still open");
        assert!(task.update(answer(json!({ "pad": "ok" }))).is_ok());
        assert!(task.lock().answers.contains_key("pad"));
        // Answers to questions not asked are ignored, whatever they weigh.
        let mut unasked = Map::new();
        unasked.insert("other".into(), json!(vec![0; 100_000]));
        assert!(task.update(unasked).is_ok());
    }
}
