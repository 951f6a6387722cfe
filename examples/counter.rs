//! A tool with state: `count` says how many times it has been called, and `reset` starts
//! again. Handlers are `Fn` and run one at a time on the serving thread, so state lives in a
//! `Cell` (or a `RefCell` for more than a number), shared between tools through an `Rc`.
//! Run it with `cargo run --example counter`.

use std::cell::Cell;
use std::rc::Rc;

use baremcp::{Json, Server, Tool, tool_args};
use serde::Deserialize;
use serde_json::json;

tool_args! {
    /// What one call counts.
    // Examples of whole arguments go on the struct; registration checks that they decode.
    #[derive(Deserialize)]
    #[schema(examples = [json!({}), json!({"by": 2})])]
    struct Count {
        /// How much one call adds.
        #[serde(default = "one")]
        #[schema(minimum = 1, default = 1)]
        by: u32,
    }
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
