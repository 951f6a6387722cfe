//! Tests of the walk's bounds and of its messages: work outside the step budget, equality and
//! order between integers and doubles, and the types named when no alternative matches.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::schema::Schema;

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
