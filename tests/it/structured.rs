//! Structured results: `structuredContent` and its copy as text, and what each era may be sent
//! of it and of an `outputSchema`.

use baremcp::{Json, Server, Tool};
use serde_json::{Value, json};

use crate::files::ask as served;
use crate::typed::call;

#[test]
fn structured_content_is_copied_as_text_unless_the_tool_says_not() {
    let mut server = Server::new("t", "1");
    let answer = |_: &Value, _: &mut baremcp::Context| Ok(Json(json!({"hour": 12})).into());
    let object = json!({"type": "object"});
    server.add_tool(Tool::new("copied", "c", object.clone(), answer)).unwrap();
    server.add_tool(Tool::new("plain", "p", object, answer).structured_text(false)).unwrap();
    let replies = served(&server, &[call(1, "copied", json!({})), call(2, "plain", json!({}))]);
    assert_eq!(
        replies[0]["result"],
        json!({"content": [{"type": "text", "text": "{\"hour\":12}"}],
               "structuredContent": {"hour": 12}})
    );
    assert_eq!(replies[1]["result"], json!({"content": [], "structuredContent": {"hour": 12}}));
}

/// Before 2026-07-28, `structuredContent` is an object and an `outputSchema` says
/// `"type": "object"` (the 2025-06-18 and 2025-11-25 schema.json); 2026-07-28 allows any value.
#[test]
fn a_legacy_session_gets_only_objects_as_structured_content_and_output_schemas() {
    let mut server = Server::new("t", "1");
    let object = json!({"type": "object"});
    let list = |_: &Value, _: &mut baremcp::Context| Ok(Json(vec![1, 2, 3]).into());
    let nan = |_: &Value, _: &mut baremcp::Context| Ok(Json(f64::NAN).into());
    let array = json!({"type": "array"});
    server.add_tool(Tool::new("list", "l", object.clone(), list).output_schema(array)).unwrap();
    server.add_tool(Tool::new("nan", "n", object.clone(), nan).structured_text(false)).unwrap();
    let hour = |_: &Value, _: &mut baremcp::Context| Ok(Json(json!({"hour": 12})).into());
    server.add_tool(Tool::new("hour", "h", object.clone(), hour).output_schema(object)).unwrap();
    let list_tools = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let legacy =
        served(&server, &[call(1, "list", json!({})), call(2, "nan", json!({})), list_tools]);
    // The value reaches the client as text alone, even where the tool turned the copy off.
    assert_eq!(legacy[0]["result"], json!({"content": [{"type": "text", "text": "[1,2,3]"}]}));
    assert_eq!(legacy[1]["result"], json!({"content": [{"type": "text", "text": "null"}]}));
    let listed = &legacy[2]["result"]["tools"];
    assert_eq!(listed[0].get("outputSchema"), None, "{listed}");
    assert_eq!(listed[2]["outputSchema"], json!({"type": "object"}));
    // A 2026-07-28 request gets the value and the schema as they are.
    let modern = |mut request: Value| {
        request["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                            "io.modelcontextprotocol/clientCapabilities": {}});
        request
    };
    let list_tools = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}});
    let replies = served(&server, &[modern(call(1, "list", json!({}))), modern(list_tools)]);
    assert_eq!(replies[0]["result"]["structuredContent"], json!([1, 2, 3]));
    assert_eq!(replies[0]["result"]["content"], json!([{"type": "text", "text": "[1,2,3]"}]));
    assert_eq!(replies[1]["result"]["tools"][0]["outputSchema"], json!({"type": "array"}));
}
