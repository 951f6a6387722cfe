//! schemars: the recipe documented in the crate docs and docs/library.md, and what our
//! validator makes of what schemars emits.

use baremcp::{Server, Tool};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::files::ask as served;
use crate::typed::call;
use schemars::{JsonSchema, schema_for};

#[derive(Deserialize, JsonSchema)]
struct Order {
    /// The item.
    item: Item,
    #[schemars(range(min = 1, max = 9))]
    count: u8,
    note: Option<String>,
    #[schemars(email)]
    contact: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Item {
    Tea,
    Cake,
}

fn order_tool() -> Tool {
    let schema = serde_json::to_value(schema_for!(Order)).unwrap();
    Tool::typed_with_schema("order", "Orders", schema, |o: Order, _| {
        Ok(format!("{} {:?} {:?} {}", o.count, o.item, o.note, o.contact))
    })
}

#[test]
fn schema_for_goes_into_the_explicit_constructor() {
    let schema = serde_json::to_value(schema_for!(Order)).unwrap();
    // What schemars 1 emits, and what the validator does with each part.
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(schema["properties"]["item"]["$ref"], "#/$defs/Item");
    assert_eq!(schema["$defs"]["Item"]["enum"], json!(["tea", "cake"]));
    assert_eq!(schema["properties"]["note"]["type"], json!(["string", "null"]));
    assert_eq!(schema["properties"]["count"]["format"], "uint8");
    assert_eq!(schema["properties"]["contact"]["format"], "email");
    let mut server = Server::new("shop", "1");
    let warnings = server.add_tool(order_tool()).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let good = json!({"item": "tea", "count": 2, "contact": "a@b.c"});
    let mut bad_ref = good.clone();
    bad_ref["item"] = json!("coffee");
    let mut bad_range = good.clone();
    bad_range["count"] = json!(10);
    let mut null_note = good.clone();
    null_note["note"] = Value::Null;
    let mut not_email = good.clone();
    not_email["contact"] = json!("nobody");
    let replies = served(
        &server,
        &[
            call(1, "order", good),
            call(2, "order", bad_ref),
            call(3, "order", bad_range),
            call(4, "order", null_note),
            call(5, "order", not_email),
        ],
    );
    let text = |i: usize| replies[i]["result"]["content"][0]["text"].as_str().unwrap().to_string();
    assert_eq!(text(0), "2 Tea None a@b.c");
    // `$ref` into `$defs` is followed.
    assert!(text(1).contains(r#"/item: "coffee" is not one of "tea", "cake""#), "{}", text(1));
    // `minimum`/`maximum` from `range` are enforced.
    assert!(text(2).contains("/count: must be <= 9, got 10"), "{}", text(2));
    // `["string", "null"]` for `Option` takes `null`.
    assert_eq!(text(3), "2 Tea None a@b.c");
    // `format` is an annotation, as JSON Schema 2020-12 says by default: not checked.
    assert_eq!(text(4), "2 Tea None nobody");
}
