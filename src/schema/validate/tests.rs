//! Tests of the walk's bounds and of its messages: work outside the step budget, equality and
//! order between integers and doubles, and the types named when no alternative matches.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::equal::equal;
use crate::schema::Schema;

fn errors(schema: Value, instance: Value) -> Vec<String> {
    let schema = Schema::compile(&schema).unwrap();
    match schema.validate(&instance) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.errors.iter().map(|e| e.to_string()).collect(),
    }
}

/// Only the errors that are kept have their messages built, and a message names a bounded
/// number of the allowed properties: 20 000 unknown keys against 3 000 properties took four
/// minutes in a debug build when each of them sorted and joined every name (and looked at
/// every property), and the first message held all 3 000 names.
#[test]
fn unknown_properties_cost_little_past_the_errors_kept() {
    let names: Map<String, Value> =
        (0..3000).map(|i| (format!("p{i:04}"), json!({"type": "string"}))).collect();
    let schema =
        Schema::compile(&json!({"properties": names, "additionalProperties": false})).unwrap();
    let keys: Map<String, Value> =
        (0..20_000).map(|i| (format!("unknown{i:05}"), json!(1))).collect();
    let keys = Value::Object(keys);
    let started = Instant::now();
    let errors = schema.validate(&keys).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!((errors.errors.len(), errors.total), (20, 20_000));
    assert_eq!(
        errors.errors[0].message,
        "unknown property \"unknown00000\" (allowed: p0000, p0001, p0002, p0003, p0004, p0005, \
         p0006, p0007, p0008, p0009, p0010, p0011, p0012, p0013, p0014, p0015, p0016, p0017, \
         p0018, p0019 (and 2980 more))"
    );
    // A name's own errors are worked out for the names whose error is kept, and counted for
    // the rest.
    let short_names = Schema::compile(&json!({"propertyNames": {"maxLength": 3}})).unwrap();
    let errors = short_names.validate(&keys).unwrap_err();
    assert_eq!((errors.errors.len(), errors.total), (20, 20_000));
    assert_eq!(
        errors.errors[19].to_string(),
        "/: property name \"unknown00019\" is invalid: must be at most 3 characters long, got 12"
    );
}

/// `enum` and `const` pay for their comparisons from the step budget, as `uniqueItems` does:
/// 3 000 names checked against each of 1 000 items (the last name each time) passed after 3
/// million comparisons, and a 14 MB array took 6 s.
#[test]
fn enum_and_const_comparisons_count_against_the_step_budget() {
    let stopped = "/: validation stopped: more than 2000000 steps";
    let names: Vec<Value> = (0..3000).map(|i| json!(format!("name{i:04}"))).collect();
    let last = names[2999].clone();
    let schema = Schema::compile(&json!({"items": {"enum": names}})).unwrap();
    assert_eq!(schema.validate(&Value::Array(vec![last.clone(); 600])), Ok(()));
    let errors = schema.validate(&Value::Array(vec![last; 1000])).unwrap_err();
    assert_eq!(errors.to_string(), stopped);
    // A `const` costs what it compares: each of 3 000 items is 1 000 values alike.
    let row: Vec<u32> = (0..1000).collect();
    let schema = Schema::compile(&json!({"items": {"const": row}})).unwrap();
    let errors = schema.validate(&Value::Array(vec![json!(row); 3000])).unwrap_err();
    assert_eq!(errors.to_string(), stopped);
    // Two strings of the same length cost a step for every 64 bytes they compare.
    let long = json!("x".repeat(64_000));
    let mut work = 0;
    assert!(equal(&long, &long.clone(), &mut work));
    assert_eq!(work, 1001);
}

/// When no alternative matches and each fails only on its type, the message names every
/// allowed type, also one reached through a `$ref` (schemars' `Option<T>`) or an `allOf` of
/// one; where the allowed types are not known it lists each alternative's error instead.
#[test]
fn alternatives_name_the_types_their_refs_allow() {
    let option = json!({
        "anyOf": [{"$ref": "#/$defs/s"}, {"type": "null"}],
        "$defs": {"s": {"type": "string"}}
    });
    assert_eq!(errors(option, json!(5)), ["/: expected string or null, got integer 5"]);
    let all_of = json!({"oneOf": [{"type": "string"}, {"allOf": [{"type": "null"}]}]});
    assert_eq!(errors(all_of, json!(5)), ["/: expected string or null, got integer 5"]);
    let chain = json!({
        "anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}],
        "$defs": {"a": {"allOf": [{"$ref": "#/$defs/s"}]}, "s": {"type": ["string", "boolean"]}}
    });
    assert_eq!(errors(chain, json!(5)), ["/: expected string, boolean or null, got integer 5"]);
    // The alternative's own type holds and the one it refers to fails: what it allows is
    // no one list of types.
    let beside = json!({
        "anyOf": [{"type": "integer", "$ref": "#/$defs/s"}, {"type": "null"}],
        "$defs": {"s": {"type": "string"}}
    });
    assert_eq!(
        errors(beside, json!(5)),
        ["/: does not match any anyOf alternative: [0] expected string, got integer 5; \
             [1] expected null, got integer 5"]
    );
}

/// Bounds, `enum`, `const` and `uniqueItems` compare numbers by their mathematical values, an
/// integer with a double too: `1e19` and `10000000000000000001` are not one number, though
/// both are the same double.
#[test]
fn integers_and_doubles_compare_exactly() {
    let valid = |schema: Value, instance: &str| {
        Schema::compile(&schema).unwrap().is_valid(&serde_json::from_str(instance).unwrap())
    };
    let past_1e19 = "10000000000000000001";
    for bound in [json!({"maximum": 1e19}), json!({"maximum": 10_000_000_000_000_000_000u64})] {
        assert!(!valid(bound.clone(), past_1e19), "{bound}");
        assert!(valid(bound, "10000000000000000000"));
    }
    assert!(valid(json!({"exclusiveMinimum": 9_007_199_254_740_992.0}), "9007199254740993"));
    assert!(!valid(json!({"exclusiveMinimum": 9_007_199_254_740_992.0}), "9007199254740992"));
    assert!(!valid(json!({"exclusiveMaximum": 9_007_199_254_740_992u64}), "9007199254740992.0"));
    assert!(valid(json!({"uniqueItems": true}), "[18446744073709551615, 18446744073709551616]"));
    assert!(!valid(json!({"uniqueItems": true}), "[18446744073709551616, 1.8446744073709552e19]"));
    assert!(!valid(json!({"enum": [1e19]}), past_1e19));
    assert!(valid(json!({"const": 1e19}), "10000000000000000000"));
    // Fractions, signs and doubles past any 64-bit integer.
    let table: &[(Value, &str, bool)] = &[
        (json!({"minimum": -1.5}), "-1", true),
        (json!({"minimum": -1.5}), "-2", false),
        (json!({"maximum": -0.5}), "0", false),
        (json!({"maximum": -0.0}), "0", true),
        (json!({"exclusiveMaximum": 2.5}), "2", true),
        (json!({"exclusiveMaximum": 2.5}), "3", false),
        (json!({"minimum": 1e300}), "18446744073709551615", false),
        (json!({"maximum": -1e300}), "-9223372036854775808", false),
        (json!({"minimum": -1e300}), "-9223372036854775808", true),
        (json!({"const": 2.0}), "2", true),
        (json!({"const": -9_223_372_036_854_775_808.0}), "-9223372036854775808", true),
        (json!({"const": 9_223_372_036_854_775_808.0}), "9223372036854775807", false),
    ];
    for (schema, instance, want) in table {
        assert_eq!(valid(schema.clone(), instance), *want, "{instance} against {schema}");
    }
}
