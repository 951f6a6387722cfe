//! The keywords of arrays: `prefixItems`, `items` (and draft-07 `additionalItems`),
//! `minItems`, `maxItems`, `uniqueItems`, `contains`, `minContains`, `maxContains`.

use std::collections::HashMap;
use std::hash::RandomState;

use serde_json::Value;

use super::equal::{canonical_hash, json_eq};
use super::messages::{ITEMS, count_bounds, plural};
use super::{Cx, Flow, Frame, Path, Seg, Walk};
use crate::schema::node::Node;

impl Walk<'_> {
    pub(super) fn array<'v>(
        &self,
        frame: &mut Frame<'_, '_, 'v>,
        items: &'v [Value],
        cx: &mut Cx,
    ) -> Flow {
        let (k, path) = (frame.k, frame.path);
        for (i, item) in items.iter().enumerate() {
            let node = k.prefix_items.get(i).copied().or(if i >= k.prefix_items.len() {
                k.items
            } else {
                None
            });
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
        if let Some((keyword, message)) =
            count_bounds(items.len(), (k.min_items, k.max_items), ITEMS)
        {
            self.fail(frame, cx, keyword, || message)?;
        }
        if k.unique_items
            && let Some((a, b)) = duplicate(items, cx)
        {
            self.fail(frame, cx, "uniqueItems", || {
                format!("items must be unique, but items {a} and {b} are equal")
            })?;
        }
        if let Some(node) = k.contains {
            let matched = items
                .iter()
                .filter(|item| self.probe(cx, |cx| self.eval(node, item, &Path::ROOT, cx)))
                .count();
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

/// The first item equal to an earlier one, with that earlier one, if any.
///
/// Each item is hashed once (equal items hash alike) and compared only with the earlier items
/// of the same hash, so the work grows with the size of the array, not with its length
/// squared; the hash keys are random, so a client cannot choose items that collide. The
/// budget pays for it all: every value hashed, and for each comparison the size of the
/// smaller item, however far two items are alike.
fn duplicate(items: &[Value], cx: &mut Cx) -> Option<(usize, usize)> {
    let keys = RandomState::new();
    let mut seen: HashMap<u64, Vec<usize>> = HashMap::with_capacity(items.len());
    let mut sizes = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let mut size = 0;
        let hash = canonical_hash(item, &keys, &mut size);
        sizes.push(size);
        if !cx.spend(size) {
            return None;
        }
        let earlier = seen.entry(hash).or_default();
        for &i in earlier.iter() {
            if !cx.spend(sizes[i].min(size)) {
                return None;
            }
            if json_eq(&items[i], item) {
                return Some((i, j));
            }
        }
        earlier.push(j);
    }
    None
}
