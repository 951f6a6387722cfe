//! The official JSON Schema Test Suite (vendored under `fixtures/json-schema-test-suite/`,
//! one file per supported keyword, and the optional files about identifiers and
//! `float-overflow.json`) run case by case, in both drafts.

use baremcp::schema::{Draft, Schema};
use serde_json::Value;

/// Cases the validator does not pass, each with the reason. Keyed by
/// `draft/file: group description` (a whole group) or `... / test description`.
const SKIPPED: &[(&str, &str)] = &[
    ("draft2020-12/ref.json: remote ref, containing refs itself", "remote $ref is not fetched"),
    (
        "draft2020-12/defs.json: validate definition against metaschema",
        "remote $ref (the metaschema) is not fetched",
    ),
    ("draft7/ref.json: remote ref, containing refs itself", "remote $ref is not fetched"),
    (
        "draft7/definitions.json: validate definition against metaschema",
        "remote $ref (the metaschema) is not fetched",
    ),
    (
        "draft2020-12/not.json: collect annotations inside a 'not', even if collection is disabled",
        "unevaluatedProperties is not supported",
    ),
    (
        "draft2020-12/ref.json: ref creates new scope when adjacent to keywords",
        "unevaluatedProperties is not supported",
    ),
    (
        "draft2020-12/pattern.json: pattern with Unicode property escape requires unicode mode",
        "\\p{..} is outside the regex subset: refused at load",
    ),
    (
        "draft2020-12/patternProperties.json: patternProperties with Unicode property escape",
        "\\p{..} is outside the regex subset: refused at load",
    ),
];

fn run(draft_dir: &str, draft: Draft) {
    let dir = crate::fixture(&format!("json-schema-test-suite/{draft_dir}"));
    // The suite's `optional/` cases that concern supported keywords are vendored too.
    let mut files: Vec<_> = ["", "optional"]
        .iter()
        .flat_map(|sub| std::fs::read_dir(dir.join(sub)).unwrap().map(|e| e.unwrap().path()))
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let (mut passed, mut skipped, mut failures, mut needless) = (0, 0, Vec::new(), Vec::new());
    for path in files {
        let file = path.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for group in groups {
            let key = format!("{draft_dir}/{file}: {}", group["description"].as_str().unwrap());
            let group_failures = run_group(&key, &group, draft);
            let tests = group["tests"].as_array().unwrap().len();
            if SKIPPED.iter().any(|(k, _)| *k == key) {
                // A skip must stand for a real failure, or it hides coverage.
                if group_failures.is_empty() {
                    needless.push(key);
                }
                skipped += tests;
            } else {
                passed += tests - group_failures.len().min(tests);
                failures.extend(group_failures);
            }
        }
    }
    eprintln!("{draft_dir}: {passed} passed, {skipped} skipped");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    let unmatched: Vec<_> = SKIPPED
        .iter()
        .filter(|(k, _)| k.starts_with(&format!("{draft_dir}/")))
        .filter(|(k, _)| {
            !std::fs::read_to_string(
                dir.join(k.split(": ").next().unwrap().split_once('/').unwrap().1),
            )
            .is_ok_and(|text| {
                text.contains(&format!(
                    "\"description\": {}",
                    serde_json::to_string(k.split_once(": ").unwrap().1).unwrap()
                ))
            })
        })
        .collect();
    assert!(unmatched.is_empty(), "skip entries that match no group: {unmatched:?}");
    assert!(
        needless.is_empty(),
        "skipped groups that pass (remove them from SKIPPED): {needless:?}"
    );
}

/// Runs one group; returns a line per failing case.
fn run_group(key: &str, group: &Value, draft: Draft) -> Vec<String> {
    let schema = match Schema::compile_as(&group["schema"], draft) {
        Ok(schema) => schema,
        Err(problems) => return vec![format!("{key}: schema does not load: {problems:?}")],
    };
    let mut failures = Vec::new();
    for test in group["tests"].as_array().unwrap() {
        let want = test["valid"].as_bool().unwrap();
        let quick = schema.is_valid(&test["data"]);
        let full = schema.validate(&test["data"]);
        if quick != want || full.is_ok() != want {
            failures.push(format!(
                "{key} / {}: want valid={want}, is_valid={quick}, validate={:?}",
                test["description"].as_str().unwrap(),
                full.err().map(|e| e.to_string())
            ));
        }
    }
    failures
}

#[test]
fn draft2020_12() {
    run("draft2020-12", Draft::Draft2020_12);
}

#[test]
fn draft7() {
    run("draft7", Draft::Draft7);
}
