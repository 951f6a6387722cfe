//! The applicators that judge the same value by other schemas: `allOf`, `anyOf`, `oneOf`,
//! `not` and `if`/`then`/`else`, and the message that explains a failed alternative.

use serde_json::Value;

use super::messages::{describe, either, join};
use super::{Cx, Flow, Frame, MAX_DEPTH, Path, Walk, pointer};
use crate::schema::ValidationError;
use crate::schema::node::Node;

impl Walk<'_> {
    pub(super) fn applicators<'v>(
        &self,
        frame: &mut Frame<'_, '_, 'v>,
        inst: &'v Value,
        cx: &mut Cx,
    ) -> Flow {
        let (k, path) = (frame.k, frame.path);
        for &node in &k.all_of {
            self.apply(frame, node, inst, path, cx)?;
        }
        if !k.any_of.is_empty() {
            let matched =
                k.any_of.iter().any(|&node| self.probe(cx, |cx| self.eval(node, inst, path, cx)));
            if !matched {
                // Explaining walks the alternatives again: only for an error that is kept.
                let message = if cx.collect && cx.keeps() {
                    self.alternatives(&k.any_of, "anyOf", inst, path, cx)
                } else {
                    String::new()
                };
                self.fail(frame, cx, "anyOf", || message)?;
            }
        }
        if !k.one_of.is_empty() {
            let matched: Vec<usize> = (0..k.one_of.len())
                .filter(|&i| self.probe(cx, |cx| self.eval(k.one_of[i], inst, path, cx)))
                .collect();
            match matched.len() {
                1 => {}
                0 => {
                    let message = if cx.collect && cx.keeps() {
                        self.alternatives(&k.one_of, "oneOf", inst, path, cx)
                    } else {
                        String::new()
                    };
                    self.fail(frame, cx, "oneOf", || message)?;
                }
                _ => self.fail(frame, cx, "oneOf", || {
                    format!(
                        "must match exactly one oneOf alternative, but matched {}",
                        join(&matched, " and ")
                    )
                })?,
            }
        }
        if let Some(node) = k.not
            && self.probe(cx, |cx| self.eval(node, inst, path, cx))
        {
            self.fail(frame, cx, "not", || "must not match the schema in not".to_string())?;
        }
        if let Some((condition, then, otherwise)) = k.if_then_else {
            let branch = if self.probe(cx, |cx| self.eval(condition, inst, path, cx)) {
                then
            } else {
                otherwise
            };
            if let Some(node) = branch {
                self.apply(frame, node, inst, path, cx)?;
            }
        }
        Ok(())
    }

    /// Explains why no alternative matched. When each alternative fails only on `type` (the
    /// common nullable `anyOf`) and its allowed types are known ([`Walk::failed_types`]),
    /// that reads as one type error; otherwise each alternative's first error is listed.
    fn alternatives<'v>(
        &self,
        nodes: &[usize],
        keyword: &str,
        inst: &'v Value,
        path: &Path<'_, 'v>,
        cx: &mut Cx,
    ) -> String {
        let here = pointer(path);
        let per_branch: Vec<Vec<ValidationError>> = nodes
            .iter()
            .map(|&node| self.collect_apart(cx, |cx| self.eval(node, inst, path, cx)))
            .collect();
        let only_types = per_branch.iter().all(|e| {
            e.len() == 1 && e[0].instance_path == here && e[0].keyword_path.ends_with("/type")
        });
        let mut names: Vec<&str> = Vec::new();
        let all_named = only_types
            && nodes.iter().zip(&per_branch).all(|(&node, errors)| {
                let Some(types) = self.failed_types(node, &errors[0].keyword_path) else {
                    return false;
                };
                for name in types {
                    if !names.contains(name) {
                        names.push(name);
                    }
                }
                true
            });
        if all_named {
            return format!("expected {}, got {}", either(&names), describe(inst));
        }
        let reasons: Vec<String> = per_branch
            .iter()
            .enumerate()
            .filter_map(|(i, errors)| {
                let first = errors.first()?;
                let at = if first.instance_path == here {
                    String::new()
                } else {
                    format!("{} ", first.instance_path)
                };
                Some(format!("[{i}] {at}{}", first.message))
            })
            .collect();
        format!("does not match any {keyword} alternative: {}", reasons.join("; "))
    }

    /// The names in the `type` that failed at `keyword_path`, when it is alternative `node`'s
    /// own or is reached from it through schemas that are only a `$ref` or an `allOf` of one
    /// (schemars writes `Option<T>` as `anyOf: [{"$ref": …}, {"type": "null"}]`). Otherwise
    /// the alternative's allowed types are not known (a `type` beside a `$ref` that failed,
    /// an `allOf` of several), and None.
    fn failed_types(&self, mut node: usize, keyword_path: &str) -> Option<&[&'static str]> {
        // The chain may be a `$ref` cycle, which validation stopped at this depth.
        for _ in 0..MAX_DEPTH {
            let Node::Keywords(k) = &self.schema.nodes[node] else { return None };
            if keyword_path.strip_suffix("/type") == Some(k.path.as_str()) {
                return Some(&k.type_names);
            }
            node = match (k.types, k.reference, k.all_of.as_slice()) {
                (0, Some(target), []) => target,
                (0, None, [only]) => *only,
                _ => return None,
            };
        }
        None
    }
}
