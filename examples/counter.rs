//! A tool with state: `count` says how many times it has been called, and `reset` starts
//! again. Handlers are `Fn` and run one at a time on the serving thread, so state lives in a
//! `Cell` (or a `RefCell` for more than a number), shared between tools through an `Rc`.
//! Run it with `cargo run --example counter`.

use std::cell::Cell;
use std::rc::Rc;

use baremcp::{Json, Server, Tool};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
struct Count {
    /// How much one call adds.
    #[serde(default = "one")]
    by: u32,
}

fn one() -> u32 {
    1
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let calls = Rc::new(Cell::new(0u32));
    let mut server = Server::new("counter", "0.1.0");
    let counted = calls.clone();
    server.add_tool(Tool::typed(
        "count",
        "Counts its calls and returns the total",
        json!({
            "type": "object",
            "properties": { "by": { "type": "integer", "minimum": 1, "default": 1 } },
            "examples": [{}, { "by": 2 }]
        }),
        move |args: Count, _cx| {
            let total = counted.get().checked_add(args.by).ok_or("the count would overflow")?;
            counted.set(total);
            Ok(Json(json!({ "total": total })))
        },
    ))?;
    server.add_tool(Tool::new(
        "reset",
        "Sets the count back to zero",
        json!({"type": "object"}),
        move |_, _| {
            calls.set(0);
            Ok("reset".into())
        },
    ))?;
    server.serve_stdio()?;
    Ok(())
}
