//! Handlers, one file per method family. Each takes typed parameters and returns a `Reply`.

pub(crate) mod lifecycle;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod tools;

use serde_json::{Value, json};

use crate::era::Era;
use crate::jsonrpc::{ErrorObject, raw_str};
use crate::server::Server;

/// Who may reuse a cached result.
#[derive(Clone, Copy)]
pub(crate) enum Scope {
    /// The same for every caller: lists and discovery.
    Public,
    /// May be the user's own data: resource contents.
    Private,
}

/// Adds the caching hints 2026-07-28 requires on discover, list and read results.
pub(crate) fn cacheable(server: &Server, era: Era, scope: Scope, mut result: Value) -> Value {
    if let (Era::Modern(_), Some(object)) = (era, result.as_object_mut()) {
        object.insert("ttlMs".into(), json!(server.ttl_ms));
        let scope = match scope {
            Scope::Public => "public",
            Scope::Private => "private",
        };
        object.insert("cacheScope".into(), json!(scope));
    }
    result
}

/// One page of `items` after `cursor`. A cursor is `KIND@OFFSET`: opaque to clients, checked
/// here so that a cursor from another list, or one never issued, is refused.
pub(crate) fn page<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    size: Option<usize>,
    kind: &str,
) -> Result<(&'a [T], Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(raw) => raw_str(raw)
            .and_then(|c| c.strip_prefix(kind)?.strip_prefix('@')?.parse::<usize>().ok())
            .filter(|&offset| offset > 0 && offset < items.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor for {kind}/list")))?,
    };
    let end = size.map_or(items.len(), |size| items.len().min(start + size));
    let next = (end < items.len()).then(|| format!("{kind}@{end}"));
    Ok((&items[start..end], next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_rejects_foreign_cursors() {
        let items = [1, 2, 3, 4, 5];
        assert_eq!(page(&items, None, None, "tools").unwrap(), (&items[..], None));
        assert_eq!(page(&items, None, Some(2), "tools").unwrap(), (&items[..2], Some("tools@2".into())));
        assert_eq!(page(&items, Some(r#""tools@4""#), Some(2), "tools").unwrap(), (&items[4..], None));
        for bad in [r#""prompts@2""#, r#""tools@0""#, r#""tools@5""#, r#""tools@x""#, "2", "null"] {
            assert!(page(&items, Some(bad), Some(2), "tools").is_err(), "{bad}");
        }
    }
}
