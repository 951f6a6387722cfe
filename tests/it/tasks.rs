//! The tasks extension end to end: `examples/everything` serves on this thread while a client
//! thread drives it over pipes, polling `tasks/get` as a real client would (task threads
//! finish on their own time, so these exchanges cannot be golden transcripts). Every wait is
//! bounded.

use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

struct Client {
    to_server: std::io::PipeWriter,
    from_server: BufReader<std::io::PipeReader>,
    next: u64,
}

impl Client {
    fn meta(extension: bool) -> Value {
        let mut capabilities = json!({ "elicitation": {} });
        if extension {
            capabilities["extensions"] = json!({ TASKS: {} });
        }
        json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": capabilities })
    }

    /// One request with the extension declared; its result, or its error object.
    fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.call_as(true, method, params)
    }

    fn call_as(
        &mut self,
        extension: bool,
        method: &str,
        mut params: Value,
    ) -> Result<Value, Value> {
        self.next += 1;
        params["_meta"] = Client::meta(extension);
        let request =
            json!({ "jsonrpc": "2.0", "id": self.next, "method": method, "params": params });
        writeln!(self.to_server, "{request}").unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.from_server.read_line(&mut line).unwrap() > 0,
                "the server closed its output"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(self.next) {
                return match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message["result"].clone()),
                };
            }
        }
    }

    /// The first round of `test_tool_with_task`: it asks before a task exists.
    fn first_round(&mut self) -> Value {
        let round1 = self
            .call("tools/call", json!({ "name": "test_tool_with_task", "arguments": {} }))
            .unwrap();
        assert_eq!(round1["resultType"], "input_required");
        round1
    }

    /// Polls `tasks/get` (at most 5 s) until the task's status is `want` or final.
    fn wait(&mut self, task: &str, want: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let got = self.call("tasks/get", json!({ "taskId": task })).unwrap();
            let status = got["status"].as_str().unwrap().to_string();
            if status == want || ["completed", "failed", "cancelled"].contains(&status.as_str()) {
                return got;
            }
            assert!(Instant::now() < deadline, "task {task} still {status} after 5 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Serves `examples/everything` here while `client` runs on its own thread.
fn with_server(client: impl FnOnce(&mut Client) + Send + 'static) {
    let server = crate::everything::server(&[]);
    let (server_in, to_server) = std::io::pipe().unwrap();
    let (from_server, server_out) = std::io::pipe().unwrap();
    let driver = std::thread::spawn(move || {
        let mut c = Client { to_server, from_server: BufReader::new(from_server), next: 0 };
        client(&mut c);
    });
    let (mut input, mut output) = (BufReader::new(server_in), server_out);
    server.serve(&mut input, &mut output).unwrap();
    drop(output);
    if let Err(panic) = driver.join() {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn a_task_runs_while_the_loop_serves_and_its_result_is_inlined() {
    with_server(|c| {
        let created = c
            .call(
                "tools/call",
                json!({ "name": "slow_compute", "arguments": { "seconds": 1, "label": "t" } }),
            )
            .unwrap();
        assert_eq!(created["resultType"], "task");
        assert_eq!(created["status"], "working");
        for key in ["createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"] {
            assert!(created.get(key).is_some(), "{key} missing from {created}");
        }
        assert!(created.get("requestState").is_none() && created.get("task").is_none());
        let task = created["taskId"].as_str().unwrap().to_string();
        // The loop answers others while the task sleeps.
        let greeting = c
            .call("tools/call", json!({ "name": "greet", "arguments": { "name": "World" } }))
            .unwrap();
        assert_eq!(greeting["content"][0]["text"], "Hello, World!");
        assert_eq!(c.call("tasks/get", json!({ "taskId": task })).unwrap()["status"], "working");
        let done = c.wait(&task, "completed");
        assert_eq!(done["status"], "completed");
        assert_eq!(done["result"]["content"][0]["text"], "Computed t after 1 s");
        assert_eq!(done["resultType"], "complete");
    });
}

#[test]
fn tool_errors_complete_and_panics_fail() {
    with_server(|c| {
        let failing =
            c.call("tools/call", json!({ "name": "failing_job", "arguments": {} })).unwrap();
        let done = c.wait(failing["taskId"].as_str().unwrap(), "completed");
        assert_eq!(
            (done["status"].as_str(), done["result"]["isError"].as_bool()),
            (Some("completed"), Some(true))
        );
        let panicking =
            c.call("tools/call", json!({ "name": "protocol_error_job", "arguments": {} })).unwrap();
        let done = c.wait(panicking["taskId"].as_str().unwrap(), "failed");
        assert_eq!(done["status"], "failed");
        assert_eq!(done["error"]["code"], -32603);
        assert!(done.get("result").is_none());
    });
}

#[test]
fn cancelling_settles_at_once_and_is_idempotent() {
    with_server(|c| {
        let created = c
            .call("tools/call", json!({ "name": "slow_compute", "arguments": { "seconds": 60 } }))
            .unwrap();
        let task = created["taskId"].as_str().unwrap().to_string();
        assert_eq!(
            c.call("tasks/cancel", json!({ "taskId": task })).unwrap(),
            json!({ "resultType": "complete", "_meta": server_info() })
        );
        assert_eq!(c.call("tasks/get", json!({ "taskId": task })).unwrap()["status"], "cancelled");
        assert!(c.call("tasks/cancel", json!({ "taskId": task })).is_ok());
        assert_eq!(c.call("tasks/get", json!({ "taskId": task })).unwrap()["status"], "cancelled");
    });
}

#[test]
fn questions_wait_in_the_task_and_may_be_answered_in_parts() {
    with_server(|c| {
        let created =
            c.call("tools/call", json!({ "name": "multi_input", "arguments": {} })).unwrap();
        let task = created["taskId"].as_str().unwrap().to_string();
        let asking = c.wait(&task, "input_required");
        let mut keys: Vec<&String> = asking["inputRequests"].as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["confirm", "name"]);
        assert_eq!(asking["inputRequests"]["name"]["method"], "elicitation/create");
        let answer = json!({ "action": "accept", "content": { "name": "Ada" } });
        c.call("tasks/update", json!({ "taskId": task, "inputResponses": { "name": answer } }))
            .unwrap();
        let still = c.call("tasks/get", json!({ "taskId": task })).unwrap();
        assert_eq!(still["status"], "input_required");
        assert_eq!(
            still["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["confirm"]
        );
        let bad = c
            .call("tasks/update", json!({ "taskId": task, "inputResponses": { "confirm": 7 } }))
            .unwrap_err();
        assert_eq!(bad["code"], -32602);
        let answer = json!({ "action": "accept", "content": { "confirm": true } });
        c.call("tasks/update", json!({ "taskId": task, "inputResponses": { "confirm": answer } }))
            .unwrap();
        let done = c.wait(&task, "completed");
        assert_eq!(done["result"]["content"][0]["text"], "Ada answered both questions");
    });
}

#[test]
fn a_task_may_ask_before_it_exists_and_the_extension_gates_everything() {
    with_server(|c| {
        let round1 = c.first_round();
        assert!(round1.get("taskId").is_none());
        let answer = json!({ "action": "accept", "content": { "name": "Alice" } });
        let params = json!({ "name": "test_tool_with_task", "arguments": {}, "inputResponses": { "user_name": answer }, "requestState": round1["requestState"] });
        let created = c.call("tools/call", params).unwrap();
        assert_eq!(created["resultType"], "task");
        let done = c.wait(created["taskId"].as_str().unwrap(), "completed");
        assert_eq!(done["result"]["content"][0]["text"], "Hello, Alice, from a task");

        // Without the extension: optional task tools run inline, required ones and the task
        // methods are refused with -32021 naming it.
        let inline = c
            .call_as(
                false,
                "tools/call",
                json!({ "name": "slow_compute", "arguments": { "seconds": 0 } }),
            )
            .unwrap();
        assert_eq!(inline["resultType"], "complete");
        assert!(inline.get("taskId").is_none());
        for (method, params) in [
            ("tools/call", json!({ "name": "failing_job", "arguments": {} })),
            ("tasks/get", json!({ "taskId": "x" })),
            ("tasks/update", json!({ "taskId": "x", "inputResponses": {} })),
            ("tasks/cancel", json!({ "taskId": "x" })),
        ] {
            let refused = c.call_as(false, method, params).unwrap_err();
            assert_eq!(refused["code"], -32021, "{method}");
            assert_eq!(refused["data"]["requiredCapabilities"]["extensions"][TASKS], json!({}));
        }
        assert_eq!(
            c.call("tasks/get", json!({ "taskId": "unknown" })).unwrap_err()["code"],
            -32602
        );
        assert_eq!(
            c.call("tasks/result", json!({ "taskId": "unknown" })).unwrap_err()["code"],
            -32601
        );
    });
}

/// Each task tool's `execution.taskSupport` in a `tools/list` result, by name.
fn task_support(list: &Value) -> Vec<(&str, &str)> {
    fn listed(tool: &Value) -> Option<(&str, &str)> {
        Some((tool["name"].as_str()?, tool["execution"]["taskSupport"].as_str()?))
    }
    list["tools"].as_array().unwrap().iter().filter_map(listed).collect()
}

#[test]
fn task_tools_are_listed_as_they_will_run_for_the_client() {
    with_server(|c| {
        let with = c.call("tools/list", json!({})).unwrap();
        assert_eq!(
            task_support(&with),
            [
                ("slow_compute", "optional"),
                ("failing_job", "required"),
                ("protocol_error_job", "optional"),
                ("confirm_delete", "optional"),
                ("multi_input", "optional"),
                ("test_tool_with_task", "required"),
            ]
        );
        // Without the extension an optional one runs inline, a required one is refused.
        let without = c.call_as(false, "tools/list", json!({})).unwrap();
        assert_eq!(
            task_support(&without),
            [("failing_job", "required"), ("test_tool_with_task", "required")]
        );
    });
    // A legacy session never gets a task: every task tool runs inline, and a client told
    // `required` (2025-11-25: it MUST invoke the tool as a task) would not call it.
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
    // Not even one whose `_meta` declares the extension: it has no `tasks/get`.
    let extension = json!({ "io.modelcontextprotocol/clientCapabilities": { "extensions": { "io.modelcontextprotocol/tasks": {} } } });
    let input = format!(
        "{init}\n{}\n{}\n{}\n{}\n",
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "failing_job" } }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "failing_job", "_meta": extension } }),
    );
    let mut output = Vec::new();
    crate::everything::server(&[]).serve(&mut input.as_bytes(), &mut output).unwrap();
    let replies: Vec<Value> = output
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(task_support(&replies[1]["result"]), []);
    assert_eq!(replies[2]["result"]["isError"], true, "{}", replies[2]);
    assert!(replies[2]["result"].get("taskId").is_none());
    assert_eq!(replies[3]["result"]["isError"], true, "{}", replies[3]);
}

fn server_info() -> Value {
    json!({ "io.modelcontextprotocol/serverInfo": { "name": "baremcp-everything", "title": "baremcp everything", "version": env!("CARGO_PKG_VERSION") } })
}

/// What a request keeps of its client's answers (its `inputResponses` and those its
/// `requestState` carries from earlier rounds) is bounded: each round could carry the last's
/// on, and three rounds of 300 000 small objects took a server past 1.5 GB.
#[test]
fn answers_a_request_keeps_are_bounded_with_those_of_its_state() {
    with_server(|c| {
        let round1 = c.first_round();
        let answer = |pad: usize| {
            let content = json!({ "name": "Alice", "pad": vec![json!({ "a": 0 }); pad] });
            json!({ "action": "accept", "content": content })
        };
        let retry = |pad: usize| {
            json!({ "name": "test_tool_with_task", "arguments": {},
                "inputResponses": { "user_name": answer(pad) }, "requestState": round1["requestState"] })
        };
        let refused = c.call("tools/call", retry(2_000)).unwrap_err();
        assert_eq!(refused["code"], -32602, "{refused}");
        assert!(refused["message"].as_str().unwrap().contains("too large"), "{refused}");
        let created = c.call("tools/call", retry(10)).unwrap();
        assert_eq!(created["resultType"], "task", "{created}");
    });
}
