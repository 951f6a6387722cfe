//! Typed tools whose schema comes from the type: the type → schema table (one test per row,
//! and the documented tables held to the same rows), `tool_args!`, the registration check
//! that a schema and its type agree, schemars' schemas through `Tool::typed_with_schema`,
//! and structured output with and without its text copy.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::PathBuf;

use baremcp::{Describe, Error, Server, Tool, tool_args};
// The replies a server writes to requests, after a legacy initialize.
use crate::files::ask as served;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Each row: a test of its own, and an entry of `ROWS`, which the documented tables must
/// list exactly.
macro_rules! rows {
    ($($test:ident: $type:ty => $schema:tt;)*) => {
        $(
            #[test]
            fn $test() {
                assert_eq!(<$type as Describe>::schema(), json!($schema));
            }
        )*

        /// (the type as written, its schema)
        fn rows() -> Vec<(&'static str, Value)> {
            vec![$((stringify!($type), json!($schema))),*]
        }
    };
}

rows! {
    row_string: String => {"type": "string"};
    row_path: PathBuf => {"type": "string"};
    row_char: char => {"type": "string", "minLength": 1, "maxLength": 1};
    row_bool: bool => {"type": "boolean"};
    row_u8: u8 => {"type": "integer", "minimum": 0, "maximum": 255};
    row_u16: u16 => {"type": "integer", "minimum": 0, "maximum": 65535};
    row_u32: u32 => {"type": "integer", "minimum": 0, "maximum": 4294967295u32};
    row_u64: u64 => {"type": "integer", "minimum": 0, "maximum": 18446744073709551615u64};
    row_u128: u128 => {"type": "integer", "minimum": 0, "maximum": 18446744073709551615u64};
    row_usize: usize => {"type": "integer", "minimum": 0, "maximum": 18446744073709551615u64};
    row_i8: i8 => {"type": "integer", "minimum": -128, "maximum": 127};
    row_i16: i16 => {"type": "integer", "minimum": -32768, "maximum": 32767};
    row_i32: i32 => {"type": "integer", "minimum": -2147483648i32, "maximum": 2147483647};
    row_i64: i64 => {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX};
    row_i128: i128 => {"type": "integer", "minimum": i64::MIN, "maximum": u64::MAX};
    row_isize: isize => {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX};
    row_f32: f32 => {"type": "number"};
    row_f64: f64 => {"type": "number"};
    row_option: Option<u8> => {"type": ["integer", "null"], "minimum": 0, "maximum": 255};
    row_vec: Vec<String> => {"type": "array", "items": {"type": "string"}};
    row_vec_deque: VecDeque<String> => {"type": "array", "items": {"type": "string"}};
    row_array: [bool; 3] =>
        {"type": "array", "items": {"type": "boolean"}, "minItems": 3, "maxItems": 3};
    row_hash_set: HashSet<String> =>
        {"type": "array", "items": {"type": "string"}, "uniqueItems": true};
    row_btree_set: BTreeSet<String> =>
        {"type": "array", "items": {"type": "string"}, "uniqueItems": true};
    row_hash_map: HashMap<String, bool> =>
        {"type": "object", "additionalProperties": {"type": "boolean"}};
    row_btree_map: BTreeMap<String, bool> =>
        {"type": "object", "additionalProperties": {"type": "boolean"}};
    row_box: Box<bool> => {"type": "boolean"};
    row_value: serde_json::Value => {};
    row_map: serde_json::Map<String, Value> => {"type": "object"};
}

/// The rows of the first markdown table under `heading` in `text` whose header starts with
/// `| Rust type |`: (type with no spaces, schema).
fn table(text: &str) -> Vec<(String, Value)> {
    let start = text.find("| Rust type | JSON Schema |").expect("the type table");
    text[start..]
        .lines()
        .skip(2)
        .map(|line| line.trim_start_matches("///").trim())
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let cell = |i: usize| cells[i].trim_matches(|c| c == '|' || c == ' ' || c == '`');
            let schema = serde_json::from_str(cell(1)).unwrap_or_else(|e| panic!("{line}: {e}"));
            (cell(0).replace(' ', ""), schema)
        })
        .collect()
}

#[test]
fn the_documented_tables_are_the_tested_rows() {
    let tested: Vec<(String, Value)> =
        rows().into_iter().map(|(t, schema)| (t.replace(' ', ""), schema)).collect();
    for file in ["src/registry/describe.rs", "docs/library.md"] {
        let text = std::fs::read_to_string(crate::root().join(file)).unwrap();
        assert_eq!(table(&text), tested, "{file}'s type table differs from the tested rows");
    }
}

tool_args! {
    /// Where to send a parcel.
    #[derive(Debug, Deserialize, PartialEq)]
    pub struct Parcel {
        /// The recipient.
        ///
        /// A person or a company.
        #[schema(minLength = 1, pattern = "^[A-Z]", examples = ["Ada"])]
        pub to: String,
        /// Grams.
        #[schema(maximum = 20000)]
        weight: u16,
        speed: Option<Speed>,
        address: Address,
        #[serde(default)]
        tracked: bool,
        r#type: Vec<Speed>,
    }
}

tool_args! {
    /// How fast.
    #[derive(Debug, Deserialize, PartialEq)]
    enum Speed {
        Slow,
        Fast,
    }
}

tool_args! {
    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    #[schema(title = "An address")]
    struct Address {
        street: String,
        /// Optional, as a missing number is.
        number: Option<u32>,
    }
}

#[test]
fn tool_args_builds_the_schema_from_the_declaration() {
    assert_eq!(
        Parcel::schema(),
        json!({
            "type": "object",
            "description": "Where to send a parcel.",
            "properties": {
                "to": {
                    "type": "string",
                    "description": "The recipient.\n\nA person or a company.",
                    "minLength": 1, "pattern": "^[A-Z]", "examples": ["Ada"]
                },
                "weight": {"type": "integer", "minimum": 0, "maximum": 20000,
                           "description": "Grams."},
                "speed": {"type": ["string", "null"], "enum": ["Slow", "Fast", null],
                          "description": "How fast."},
                "address": {
                    "type": "object",
                    "title": "An address",
                    "properties": {
                        "street": {"type": "string"},
                        "number": {"type": ["integer", "null"], "minimum": 0,
                                   "maximum": 4294967295u32,
                                   "description": "Optional, as a missing number is."}
                    },
                    "required": ["street"],
                    "additionalProperties": false
                },
                "tracked": {"type": "boolean"},
                "type": {"type": "array",
                         "items": {"type": "string", "enum": ["Slow", "Fast"],
                                   "description": "How fast."}}
            },
            "required": ["to", "weight", "address", "type"]
        })
    );
    // The struct is the struct as declared, `#[schema]` aside: serde decodes it.
    let parcel: Parcel = serde_json::from_value(json!({
        "to": "Ada", "weight": 5, "address": {"street": "Main"}, "type": ["Fast"]
    }))
    .unwrap();
    assert_eq!(parcel.address, Address { street: "Main".into(), number: None });
    assert_eq!((parcel.speed, parcel.tracked, parcel.r#type), (None, false, vec![Speed::Fast]));
}

tool_args! {
    #[derive(Deserialize)]
    #[serde(default)]
    struct AllDefault {
        a: u8,
        b: String,
    }
}

impl Default for AllDefault {
    fn default() -> Self {
        AllDefault { a: 1, b: String::new() }
    }
}

tool_args! {
    #[derive(Deserialize)]
    struct Empty {}
}

#[test]
fn serde_default_on_the_struct_requires_nothing() {
    assert_eq!(AllDefault::schema().get("required"), None);
    assert_eq!(Empty::schema(), json!({"type": "object", "properties": {}}));
    let mut server = Server::new("t", "1");
    server
        .add_tool(Tool::typed("d", "d", |a: AllDefault, _| Ok(format!("{}{}", a.a, a.b))))
        .unwrap();
    server.add_tool(Tool::typed("e", "e", |_: Empty, _| Ok("empty"))).unwrap();
}

pub(crate) fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

fn parcel_server() -> Server {
    let mut server = Server::new("post", "1");
    let warnings = server
        .add_tool(Tool::typed("send", "Sends a parcel", |p: Parcel, _| {
            Ok(format!("{} g to {}", p.weight, p.to))
        }))
        .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    server
}

#[test]
fn a_derived_schema_is_listed_and_wrong_arguments_get_their_pointer() {
    let server = parcel_server();
    let ok = json!({"to": "Ada", "weight": 5, "address": {"street": "Main"}, "type": []});
    let mut wrong_type = ok.clone();
    wrong_type["address"]["number"] = json!("12");
    let mut above = ok.clone();
    above["weight"] = json!(20001);
    // A float the schema's integer allows (2.0) but a u16 does not: decoding names it.
    let mut float = ok.clone();
    float["weight"] = json!(2.0);
    let replies = served(
        &server,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            call(2, "send", ok),
            call(3, "send", wrong_type),
            call(4, "send", above),
            call(5, "send", float),
        ],
    );
    assert_eq!(replies[0]["result"]["tools"][0]["inputSchema"], Parcel::schema());
    assert_eq!(replies[1]["result"]["content"][0]["text"], "5 g to Ada");
    let error = |i: usize| {
        assert_eq!(replies[i]["result"]["isError"], true, "{}", replies[i]);
        replies[i]["result"]["content"][0]["text"].as_str().unwrap().to_string()
    };
    assert!(
        error(2).contains("/address/number: expected integer or null, got string"),
        "{}",
        error(2)
    );
    assert!(error(3).contains("/weight: must be <= 20000, got 20001"), "{}", error(3));
    assert!(
        error(4).contains("/weight: invalid type: floating point `2.0`, expected u16"),
        "{}",
        error(4)
    );
}

tool_args! {
    #[derive(Deserialize)]
    struct Renamed {
        #[serde(rename = "body")]
        text: String,
        other: u8,
    }
}

tool_args! {
    #[derive(Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Lower {
        Up,
        Down,
    }
}

tool_args! {
    #[derive(Deserialize)]
    struct HoldsLower {
        way: Vec<Lower>,
    }
}

tool_args! {
    #[derive(Deserialize)]
    struct Skips {
        #[serde(skip)]
        hidden: u8,
        shown: u8,
    }
}

tool_args! {
    #[derive(Deserialize)]
    struct Flattens {
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }
}

fn needed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    Option::deserialize(d)
}

tool_args! {
    #[derive(Deserialize)]
    struct NeedsOption {
        #[serde(deserialize_with = "needed")]
        maybe: Option<u8>,
    }
}

tool_args! {
    #[derive(Deserialize)]
    struct HiddenDefault {
        #[cfg_attr(all(), serde(default))]
        count: u8,
    }
}

/// Why registering `tool` is refused, as `Error::Mismatch`'s problems.
fn mismatch(tool: Tool) -> Vec<String> {
    match Server::new("t", "1").add_tool(tool) {
        Err(Error::Mismatch { problems, .. }) => problems.iter().map(|p| p.to_string()).collect(),
        other => panic!("not refused for a mismatch: {other:?}"),
    }
}

#[test]
fn a_schema_and_a_type_that_disagree_are_refused_at_registration() {
    assert_eq!(
        mismatch(Tool::typed("r", "r", |_: Renamed, _| Ok(""))),
        [
            r#"/properties: the type reads "body", which the schema does not list"#,
            r#"/properties/text: the schema lists "text", which the type does not read"#,
        ]
    );
    assert_eq!(
        mismatch(Tool::typed("l", "l", |_: HoldsLower, _| Ok(""))),
        [
            r#"/properties/way/items/enum: the type reads "up", which the schema does not list"#,
            r#"/properties/way/items/enum: the type reads "down", which the schema does not list"#,
            r#"/properties/way/items/enum: the schema lists "Up", which the type does not read"#,
            r#"/properties/way/items/enum: the schema lists "Down", which the type does not read"#,
        ]
    );
    assert_eq!(
        mismatch(Tool::typed("s", "s", |_: Skips, _| Ok(""))),
        [r#"/properties/hidden: the schema lists "hidden", which the type does not read"#]
    );
    let flattened = mismatch(Tool::typed("f", "f", |_: Flattens, _| Ok("")));
    assert!(
        flattened[0].starts_with("/: declared as a struct, the type reads a map"),
        "{flattened:?}"
    );
    assert_eq!(
        mismatch(Tool::typed("n", "n", |_: NeedsOption, _| Ok(""))),
        [r#"/required: the type needs "maybe", which the schema does not require"#]
    );
    assert_eq!(
        mismatch(Tool::typed("h", "h", |_: HiddenDefault, _| Ok(""))),
        [
            r#"/required: the schema requires "count", which the type can do without (#[serde(default)])"#
        ]
    );
    // Said in one line, with the tool's name.
    let error =
        Server::new("t", "1").add_tool(Tool::typed("s", "s", |_: Skips, _| Ok(""))).unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"tool "s": inputSchema and the argument type disagree: /properties/hidden: the schema lists "hidden", which the type does not read"#
    );
}

tool_args! {
    #[derive(Deserialize)]
    #[schema(examples = [json!({"n": 300})])]
    struct BadExample {
        #[schema(maximum = 1000)]
        n: u8,
    }
}

#[test]
fn examples_on_the_struct_must_decode() {
    let refused = Server::new("t", "1").add_tool(Tool::typed("b", "b", |_: BadExample, _| Ok("")));
    let Err(Error::Example { pointer, .. }) = refused else { panic!("{refused:?}") };
    assert_eq!(pointer, "/examples/0/n");
}

tool_args! {
    #[derive(Deserialize)]
    #[schema(examples = [json!({"name": "Ada"}), json!({"name": ""})])]
    struct RefusedExample {
        #[schema(minLength = 1)]
        name: String,
    }
}

tool_args! {
    #[derive(Deserialize)]
    #[schema(examples = [json!({"digits": "12"}), json!({"digits": "1x"})])]
    struct Pin {
        #[schema(pattern = "^[0-9]+$")]
        digits: String,
    }
}

tool_args! {
    #[derive(Deserialize)]
    struct Lock {
        pin: Pin,
    }
}

#[test]
fn examples_of_a_type_must_pass_its_schema() {
    // Each decodes into the type: the schema alone refuses them.
    let refused =
        Server::new("t", "1").add_tool(Tool::typed("r", "r", |_: RefusedExample, _| Ok("")));
    let Err(error @ Error::InvalidExample { .. }) = refused else { panic!("{refused:?}") };
    assert_eq!(
        error.to_string(),
        r#"tool "r": inputSchema /examples/1/name: the schema refuses its example: must be at least 1 character long"#
    );
    assert_eq!(
        mismatch(Tool::typed("l", "l", |_: Lock, _| Ok(""))),
        [
            r#"/properties/pin/examples/1/digits: the schema refuses it: "1x" does not match the pattern ^[0-9]+$"#
        ]
    );
}

tool_args! {
    #[derive(Deserialize)]
    struct NeedsSecond {
        first: String,
        #[serde(deserialize_with = "needed")]
        second: Option<u8>,
    }
}

/// `#[serde(deserialize_with)]` that reads a number written as a string.
fn parsed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
    String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
}

tool_args! {
    #[derive(Deserialize)]
    #[schema(examples = [json!({"w": -1})])]
    struct Inner {
        w: u8,
    }
}

tool_args! {
    #[derive(Deserialize)]
    struct FieldExamples {
        first: String,
        #[schema(examples = [3, 300])]
        n: u8,
        // Read as the type reads it: "5" through `parsed`.
        #[schema(examples = ["5"])]
        #[serde(deserialize_with = "parsed")]
        text: u8,
        #[schema(examples = [json!({"street": 1})])]
        address: Option<Address>,
        inner: Vec<Inner>,
        own: Option<OwnExample>,
    }
}

tool_args! {
    #[derive(Deserialize)]
    #[schema(examples = [json!({"b": "x"})])]
    struct OwnExample {
        a: u8,
        b: Option<String>,
    }
}

#[test]
fn every_field_the_type_needs_is_checked() {
    // The field the type needs is not the first it lacks.
    assert_eq!(
        mismatch(Tool::typed("n", "n", |_: NeedsSecond, _| Ok(""))),
        [r#"/required: the type needs "second", which the schema does not require"#]
    );
}

#[test]
fn every_example_of_a_field_or_a_nested_type_must_decode() {
    assert_eq!(
        mismatch(Tool::typed("f", "f", |_: FieldExamples, _| Ok(""))),
        [
            "/properties/address/examples/0: does not decode into the type: invalid type: \
             integer `1`, expected a string",
            "/properties/n/examples/1: does not decode into the type: invalid value: integer \
             `300`, expected u8",
            // Found as the field's example and as the type's own: said once.
            "/properties/own/examples/0: does not decode into the type: missing field `a`",
            "/properties/inner/items/examples/0/w: does not decode into the type: invalid \
             value: integer `-1`, expected u8",
        ]
    );
}

tool_args! {
    #[derive(Deserialize)]
    struct Defaults {
        #[serde(default)]
        #[schema(default = "x")]
        count: u32,
        #[serde(default)]
        #[schema(default = 2)]
        fine: u32,
    }
}

#[test]
fn a_field_default_must_decode_as_its_examples_must() {
    assert_eq!(
        mismatch(Tool::typed("d", "d", |_: Defaults, _| Ok(""))),
        [
            r#"/properties/count/default: does not decode into the type: invalid type: string "x", expected u32"#
        ]
    );
}

tool_args! {
    #[derive(Debug, Deserialize)]
    struct Node {
        name: String,
        children: Vec<Node>,
    }
}

tool_args! {
    #[derive(Deserialize)]
    struct Forest {
        tree: Option<Box<Node>>,
    }
}

/// A hand-written schema between a type and itself: the loop goes through `Vec::schema`.
#[derive(Deserialize)]
struct Children(#[allow(dead_code)] Vec<Branch>);

impl Describe for Children {
    fn schema() -> Value {
        Vec::<Branch>::schema()
    }
}

tool_args! {
    #[derive(Deserialize)]
    struct Branch {
        children: Children,
    }
}

#[test]
fn a_type_that_contains_itself_is_refused_at_registration() {
    // Its schema stops where the type meets itself, rather than overflowing the stack.
    let again = "Node again: tool_args! does not describe a type that contains itself";
    assert_eq!(Node::schema()["properties"]["children"]["items"], json!({"$comment": again}));
    let refused = "/: the type it::typed::Node contains itself, which tool_args! cannot \
                   describe: write the schema (a \"$ref\" can refer to a part of it) and use \
                   Tool::typed_with_schema";
    assert_eq!(mismatch(Tool::typed("n", "n", |_: Node, _| Ok(""))), [refused]);
    assert_eq!(mismatch(Tool::typed("f", "f", |_: Forest, _| Ok(""))), [refused]);
    let branch = mismatch(Tool::typed("b", "b", |_: Branch, _| Ok("")));
    assert_eq!(branch, [refused.replace("Node", "Branch")]);
}

tool_args! {
    #[derive(Debug, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Strict {
        a: u8,
    }
}

tool_args! {
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct StrictToo {
        #[serde(rename = "a", default)]
        a: u8,
    }
}

impl Default for Strict {
    fn default() -> Self {
        Strict { a: 1 }
    }
}

impl Default for StrictToo {
    fn default() -> Self {
        StrictToo { a: 1 }
    }
}

#[test]
fn serde_flags_are_read_in_any_order_and_together() {
    let schema = json!({"type": "object", "additionalProperties": false,
                        "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 255}}});
    assert_eq!(Strict::schema(), schema);
    assert_eq!(StrictToo::schema(), schema);
    let mut server = Server::new("t", "1");
    server.add_tool(Tool::typed("s", "s", |a: Strict, _| Ok(a.a.to_string()))).unwrap();
    server.add_tool(Tool::typed("t", "t", |a: StrictToo, _| Ok(a.a.to_string()))).unwrap();
    let replies = served(&server, &[call(1, "s", json!({"zzz": 1})), call(2, "t", json!({}))]);
    let text = &replies[0]["result"]["content"][0]["text"];
    assert!(text.as_str().unwrap().contains(r#"unknown property "zzz""#), "{}", replies[0]);
    // The field's own default (0) comes before the struct's.
    assert_eq!(replies[1]["result"]["content"][0]["text"], "0");
}

#[test]
fn a_hand_written_describe_is_listed_as_written() {
    struct Colour;
    impl Describe for Colour {
        fn schema() -> Value {
            json!({"type": "string", "pattern": "^#[0-9a-f]{6}$"})
        }
    }
    tool_args! {
        #[derive(Deserialize)]
        struct Paint {
            colour: Map<String, Value>,
        }
    }
    assert_eq!(<Option<Colour>>::schema()["type"], json!(["string", "null"]));
    const { assert!(!Colour::OPTIONAL && <Option<Colour>>::OPTIONAL && <Box<Option<u8>>>::OPTIONAL) };
    assert_eq!(Paint::schema()["properties"]["colour"], json!({"type": "object"}));
}

/// The quickstart: at most 20 non-blank lines, no schema written by hand, and a listing whose
/// properties, `required` and descriptions come from the type.
#[test]
fn the_minimal_example_lists_a_derived_schema_and_names_a_wrong_argument() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let source = std::fs::read_to_string(crate::root().join("examples/minimal.rs")).unwrap();
    let lines = source.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(lines <= 20, "examples/minimal.rs has {lines} non-blank lines");
    assert!(!source.contains("json!") && !source.contains("\"type\""), "a schema by hand");
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shout","arguments":{"text":7}}}"#,
    ];
    let mut child = Command::new(crate::library::example("minimal"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(format!("{}\n", requests.join("\n")).as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let replies: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        replies[1]["result"]["tools"][0]["inputSchema"],
        json!({
            "type": "object",
            "description": "What to shout.",
            "properties": {"text": {"type": "string", "description": "The text to put in capitals.",
                                    "minLength": 1, "examples": ["hello"]}},
            "required": ["text"]
        })
    );
    assert_eq!(replies[2]["result"]["isError"], true);
    assert_eq!(
        replies[2]["result"]["content"][0]["text"],
        "invalid arguments for tool shout:\n/text: expected string, got integer 7"
    );
}
