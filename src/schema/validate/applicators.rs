//! The applicators that judge the same value by other schemas: `allOf`, `anyOf`, `oneOf`,
//! `not` and `if`/`then`/`else`, and the message that explains a failed alternative.

use serde_json::Value;

use super::messages::{describe, either, join};
use super::{Cx, Flow, Frame, Path, Walk, pointer};
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
    /// common nullable `anyOf`), that reads as one type error; otherwise each alternative's
    /// first error is listed.
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
        if only_types {
            let mut names: Vec<&str> = Vec::new();
            for &node in nodes {
                if let Node::Keywords(k) = &self.schema.nodes[node] {
                    names.extend(
                        k.type_names.iter().filter(|n| !names.contains(n)).collect::<Vec<_>>(),
                    );
                }
            }
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
}
