//! The keywords of arrays: `prefixItems`, `items` (and draft-07 `additionalItems`),
//! `minItems`, `maxItems`, `uniqueItems`, `contains`, `minContains`, `maxContains`.

use serde_json::Value;

use super::equal::json_eq;
use super::messages::{ITEMS, count_bounds, plural};
use super::{Cx, Flow, Frame, MAX_STEPS, Path, Seg, Walk};
use crate::schema::compile::Node;

impl Walk<'_> {
    pub(super) fn array<'v>(&self, frame: &mut Frame<'_, '_, 'v>, items: &'v [Value], cx: &mut Cx) -> Flow {
        let (k, path) = (frame.k, frame.path);
        for (i, item) in items.iter().enumerate() {
            let node = k.prefix_items.get(i).copied().or(if i >= k.prefix_items.len() { k.items } else { None });
            let Some(node) = node else { continue };
            if i >= k.prefix_items.len() && matches!(self.schema.nodes[node], Node::Bool(false)) {
                let allowed = k.prefix_items.len();
                self.fail(frame, cx, k.items_keyword, || {
                    format!(
                        "must have at most {allowed} {}, got {}",
                        plural(allowed as u64, "item", "items"),
                        items.len()
                    )
                })?;
                break;
            }
            self.apply(frame, node, item, &path.child(Seg::Index(i)), cx)?;
        }
        if let Some((keyword, message)) = count_bounds(items.len(), (k.min_items, k.max_items), ITEMS) {
            self.fail(frame, cx, keyword, || message)?;
        }
        if k.unique_items
            && let Some((a, b)) = duplicate(items, cx)
        {
            self.fail(frame, cx, "uniqueItems", || format!("items must be unique, but items {a} and {b} are equal"))?;
        }
        if let Some(node) = k.contains {
            let matched =
                items.iter().filter(|item| self.probe(cx, |cx| self.eval(node, item, &Path::ROOT, cx))).count();
            let matched = matched as u64;
            let min = k.min_contains.unwrap_or(1);
            if matched < min {
                let keyword = if k.min_contains.is_some() { "minContains" } else { "contains" };
                self.fail(frame, cx, keyword, || {
                    format!(
                        "must contain at least {min} {} matching the contains schema, found {matched}",
                        plural(min, "item", "items")
                    )
                })?;
            }
            if let Some(max) = k.max_contains
                && matched > max
            {
                self.fail(frame, cx, "maxContains", || {
                    format!(
                        "must contain at most {max} {} matching the contains schema, found {matched}",
                        plural(max, "item", "items")
                    )
                })?;
            }
        }
        Ok(())
    }
}

/// The first pair of equal items, if any. Counts against the step budget.
fn duplicate(items: &[Value], cx: &mut Cx) -> Option<(usize, usize)> {
    for (i, a) in items.iter().enumerate() {
        for (j, b) in items.iter().enumerate().skip(i + 1) {
            cx.steps += 1;
            if cx.steps > MAX_STEPS {
                cx.stop(format!("validation stopped: more than {MAX_STEPS} steps"));
                return None;
            }
            if json_eq(a, b) {
                return Some((i, j));
            }
        }
    }
    None
}
