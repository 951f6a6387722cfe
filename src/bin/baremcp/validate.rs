//! `baremcp validate`: checks instances against a schema file, for tool authors and scripts.

use std::fs;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use baremcp::schema::{Errors, Schema};

/// Runs the command; returns the exit code: 0 all valid, 1 some invalid, 2 when the schema is
/// malformed or a file cannot be read as JSON (an instance that cannot be read is not invalid:
/// nothing was checked).
pub fn run(
    schema: &Path,
    instances: &[PathBuf],
    jsonl: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<i32> {
    let compiled = match read_json(schema).and_then(|value| {
        Schema::compile(&value).map_err(|problems| {
            problems
                .iter()
                .map(|p| format!("{}: {p}", schema.display()))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }) {
        Ok(compiled) => compiled,
        Err(message) => {
            writeln!(err, "{message}")?;
            return Ok(2);
        }
    };
    for warning in compiled.warnings() {
        writeln!(err, "{}: warning: {warning}", schema.display())?;
    }
    let mut all_valid = true;
    let mut unreadable = false;
    if jsonl {
        // Lines as bytes: one that is not UTF-8 gets its verdict like any other that is not
        // JSON, rather than ending the run and losing the verdicts of the lines after it.
        for (n, line) in io::stdin().lock().split(b'\n').enumerate() {
            let line = line?;
            let verdict = match std::str::from_utf8(&line).map(serde_json::from_str::<Value>) {
                Ok(Ok(instance)) => compiled.validate(&instance),
                Ok(Err(e)) => Err(parse_failure(format!("line {} is not JSON: {e}", n + 1))),
                Err(e) => Err(parse_failure(format!("line {} is not UTF-8: {e}", n + 1))),
            };
            all_valid &= verdict.is_ok();
            writeln!(out, "{}", jsonl_verdict(&verdict))?;
        }
    } else {
        for path in instances {
            let instance = match read_json(path) {
                Ok(instance) => instance,
                Err(message) => {
                    writeln!(err, "{message}")?;
                    unreadable = true;
                    continue;
                }
            };
            let verdict = compiled.validate(&instance);
            all_valid &= verdict.is_ok();
            match verdict {
                Ok(()) => writeln!(out, "{}: valid", path.display())?,
                Err(errors) => {
                    writeln!(out, "{}: invalid", path.display())?;
                    for line in errors.to_string().lines() {
                        writeln!(out, "  {line}")?;
                    }
                }
            }
        }
    }
    out.flush()?;
    Ok(if unreadable {
        2
    } else if all_valid {
        0
    } else {
        1
    })
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))
}

fn parse_failure(message: String) -> Errors {
    let error = baremcp::schema::ValidationError {
        instance_path: "/".into(),
        keyword_path: String::new(),
        message,
    };
    Errors { errors: vec![error], total: 1 }
}

fn jsonl_verdict(verdict: &Result<(), Errors>) -> Value {
    match verdict {
        Ok(()) => json!({ "valid": true, "errors": [] }),
        Err(errors) => {
            let list: Vec<Value> = errors
                .errors
                .iter()
                .map(
                    |e| json!({ "instancePath": e.instance_path, "keywordPath": e.keyword_path, "message": e.message }),
                )
                .collect();
            let mut verdict = json!({ "valid": false, "errors": list });
            if errors.total > errors.errors.len() {
                verdict["more"] = json!(errors.total - errors.errors.len());
            }
            verdict
        }
    }
}
