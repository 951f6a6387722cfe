//! `resources/list`, `resources/templates/list`, `resources/read`, `resources/subscribe` and
//! `resources/unsubscribe`: static resources first, then the files of each `--root`, then
//! the registered templates.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::conn::connection::Conn;
use crate::conn::context::Context;
use crate::conn::session::Session;
use crate::dispatch::handler_setup::{
    Scope, cacheable, interrupted, listed, page, required_str, setup,
};
use crate::dispatch::request::Request;
use crate::registry::resource::{Contents, ReadError};
use crate::registry::server::Server;
use crate::util::encoding::{base64, percent_decode, uri_problem};
use crate::wire::era::Era;
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::{ErrorObject, raw_str};

/// Pages of files hold at most this many entries unless `--page-size` says otherwise, so a
/// huge tree is never listed in one go.
const FILE_PAGE: usize = 1000;

/// Where a `resources/list` page starts.
enum Position {
    Static(usize),
    Files { root: usize, after: Option<PathBuf> },
}

fn decode_cursor(cursor: &str) -> Option<Position> {
    let rest = cursor.strip_prefix("resources@")?;
    if let Some(n) = rest.strip_prefix('s') {
        return n.parse().ok().map(Position::Static);
    }
    let (root, after) = rest.strip_prefix('f')?.split_once(':')?;
    let after = if after.is_empty() {
        None
    } else {
        Some(crate::registry::files::path_from_bytes(percent_decode(after)?)?)
    };
    Some(Position::Files { root: root.parse().ok()?, after })
}

fn files_cursor(root: usize, after: &std::path::Path) -> String {
    let encoded = crate::util::encoding::percent_encode_path(after.as_os_str().as_encoded_bytes());
    format!("resources@f{root}:{encoded}")
}

pub(crate) fn list(server: &Server, req: &Request) -> Result<Value, ErrorObject> {
    let invalid = || ErrorObject::invalid_params("invalid cursor for resources/list");
    let mut position = match req.params.cursor {
        None => Position::Static(0),
        Some(raw) => raw_str(raw).and_then(|c| decode_cursor(&c)).ok_or_else(invalid)?,
    };
    let limit =
        server.page_size.unwrap_or(if server.roots.is_empty() { usize::MAX } else { FILE_PAGE });
    let mut items: Vec<Value> = Vec::new();
    let mut next = None;
    if let Position::Static(start) = position {
        if start > server.resources.len()
            || (start > 0 && start == server.resources.len() && server.roots.is_empty())
        {
            return Err(invalid());
        }
        let end = server.resources.len().min(start.saturating_add(limit));
        items.extend(server.resources[start..end].iter().map(|r| r.listing()));
        if end < server.resources.len() {
            next = Some(format!("resources@s{end}"));
        }
        position = Position::Files { root: 0, after: None };
    }
    if let (None, Position::Files { root, after }) = (&next, position) {
        if root >= server.roots.len() && !(root == 0 && server.roots.is_empty()) {
            return Err(invalid());
        }
        let mut after = after;
        for (i, files) in server.roots.iter().enumerate().skip(root) {
            let room = limit - items.len();
            let (page, more) = files.list(after.as_deref(), room);
            if let Some((last, _)) = page.last() {
                after = Some(last.clone());
            }
            items.extend(page.into_iter().map(|(_, listing)| listing));
            if more {
                next = Some(files_cursor(i, after.as_deref().unwrap_or(std::path::Path::new(""))));
                break;
            }
            after = None;
        }
    }
    Ok(listed(server, req, "resources", Value::Array(items), next))
}

pub(crate) fn templates(server: &Server, req: &Request) -> Result<Value, ErrorObject> {
    let all: Vec<Value> = server
        .roots
        .iter()
        .map(|root| {
            json!({
                "uriTemplate": root.template(),
                "name": format!("files under {}", root.path().display()),
                "description": "Any file under this directory, by its path relative to it",
            })
        })
        .chain(server.templates.iter().map(|t| t.listing()))
        .collect();
    let (templates, next) = page(&all, req.params.cursor, server.page_size, "templates")?;
    Ok(listed(server, req, "resourceTemplates", templates.into(), next))
}

/// The not-found error: -32002 in the legacy era, -32602 in 2026-07-28 (which retired -32002).
pub(crate) fn not_found(era: Era, uri: &str) -> ErrorObject {
    let code = match era {
        Era::Legacy => ErrorCode::RESOURCE_NOT_FOUND,
        Era::Modern(_) => ErrorCode::INVALID_PARAMS,
    };
    ErrorObject::new(code, "resource not found").with_data(json!({ "uri": uri }))
}

/// The request's `uri`, refused unless it is a URI (the schema's `format: "uri"`): a read or
/// subscription echoes it, in `contents[].uri` or `notifications/resources/updated`.
fn uri_param(req: &Request) -> Result<String, ErrorObject> {
    let uri = required_str(req, req.params.uri, "uri")?.into_owned();
    match uri_problem(&uri) {
        Some(why) => Err(not_a_uri("uri", &why, &uri)),
        None => Ok(uri),
    }
}

/// -32602 for a resource URI that is not one: says where and what, with the URI as data.
pub(crate) fn not_a_uri(what: &str, why: &str, uri: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("{what} is not a valid uri: {why}"))
        .with_data(json!({ "uri": uri }))
}

pub(crate) fn read(
    server: &Server,
    session: &mut Session,
    req: &Request,
    conn: &mut Conn,
) -> Result<Value, ErrorObject> {
    let uri = uri_param(req)?;
    let subject = || uri.to_string();
    let mut cx = Context::new(setup(server, req, conn.principal(), &subject)?, session, conn);
    let read = find_and_read(server, &uri, &mut cx);
    if let Some(interrupted) = interrupted(server, req, &cx, &subject) {
        return interrupted;
    }
    let (contents, mime) = read.map_err(|e| match e {
        ReadError::NotFound => not_found(req.era(), &uri),
        ReadError::Refused(message) => {
            ErrorObject::invalid_params(message).with_data(json!({ "uri": uri }))
        }
    })?;
    let mut content = json!({ "uri": uri });
    if let Some(mime) = mime {
        content["mimeType"] = json!(mime);
    }
    match contents {
        Contents::Text(text) => content["text"] = json!(text),
        Contents::Blob(bytes) => content["blob"] = json!(base64(&bytes)),
    }
    Ok(cacheable(server, req.era(), Scope::Private, json!({ "contents": [content] })))
}

/// Static resources by exact URI, then files under a root, then templates in order.
fn find_and_read(
    server: &Server,
    uri: &str,
    cx: &mut Context,
) -> Result<(Contents, Option<String>), ReadError> {
    if let Some(resource) = server.static_resource(uri) {
        return (resource.reader)(cx).map(|c| (c, resource.mime_type.clone()));
    }
    if let Some(read) = server.roots.iter().find_map(|root| root.read_if_here(uri)) {
        return read.map(|(c, mime)| (c, Some(mime.to_string())));
    }
    for template in &server.templates {
        if let Some(vars) = template.template.matches(uri) {
            return (template.reader)(&vars, cx).map(|c| (c, template.mime_type.clone()));
        }
    }
    Err(ReadError::NotFound)
}

/// Whether a URI names something this server serves, without reading it.
fn exists(server: &Server, uri: &str) -> bool {
    server.roots.iter().any(|root| root.contains(uri)) || exists_beside_roots(server, uri)
}

/// Whether a URI names a resource or matches a template.
fn exists_beside_roots(server: &Server, uri: &str) -> bool {
    server.static_resource(uri).is_some()
        || server.templates.iter().any(|t| t.template.matches(uri).is_some())
}

/// `resources/subscribe` and `resources/unsubscribe` (legacy): the session remembers the URIs;
/// a handler's `Context::resource_updated`, or a change to a watched file (a `--root` file, a
/// resource's `watch_file`), then notifies the client.
pub(crate) fn subscribe(
    server: &Server,
    session: &mut Session,
    req: &Request,
    on: bool,
) -> Result<Value, ErrorObject> {
    let uri = uri_param(req)?;
    let subscribed = session.is_subscribed(&uri);
    if !on {
        // A subscribed file may have gone since: it can still be unsubscribed.
        if !subscribed && !exists(server, &uri) {
            return Err(not_found(req.era(), &uri));
        }
        session.unsubscribe(&uri);
        return Ok(json!({}));
    }
    if !subscribed {
        // Before anything looks the URI up: one too long to keep costs nothing more.
        session.may_subscribe(std::iter::once(uri.as_str()), 0)?;
    }
    // Resolved once, now: the file is then looked at by its resolved path alone. A root
    // that does not resolve the URI serves nothing by it.
    let file = server.watched_file(&uri);
    if file.is_none() && !exists_beside_roots(server, &uri) {
        return Err(not_found(req.era(), &uri));
    }
    session.subscribe(uri, file);
    Ok(json!({}))
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Read};

    use serde_json::{Value, json};

    use crate::registry::files::{FileRoot, canonicalized_by};
    use crate::registry::server::Server;

    /// Input that hands over one line per read: the loop waits for more (and looks at the
    /// files it watches) after each.
    struct OneLineAtATime(std::vec::IntoIter<Value>);

    impl Read for OneLineAtATime {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some(message) = self.0.next() else { return Ok(0) };
            let line = format!("{message}\n");
            buf[..line.len()].copy_from_slice(line.as_bytes());
            Ok(line.len())
        }
    }

    /// The replies to `requests` after a legacy `initialize`, and how many paths serving them
    /// canonicalized.
    fn serve(server: &Server, requests: &[Value]) -> (Vec<Value>, usize) {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
        let lines: Vec<Value> = std::iter::once(init).chain(requests.iter().cloned()).collect();
        let mut input = BufReader::with_capacity(1 << 16, OneLineAtATime(lines.into_iter()));
        let mut output = Vec::new();
        let ((), resolved) = canonicalized_by(|| server.serve(&mut input, &mut output).unwrap());
        let replies = String::from_utf8(output).unwrap();
        (replies.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect(), resolved)
    }

    #[test]
    fn a_root_file_is_resolved_once_per_read_and_once_per_subscription() {
        let dir = std::env::temp_dir().join(format!("baremcp-resolve-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("d")).unwrap();
        std::fs::write(dir.join("f"), "text").unwrap();
        let root = FileRoot::new(&dir, false, 1 << 20).unwrap();
        let uri = format!("{}/d/../f", root.base_uri());
        let mut server = Server::new("t", "1");
        server.add_directory(root).unwrap();
        let call = |id: u32, method: &str| {
            let params = json!({ "uri": uri });
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        };
        let (replies, resolved) = serve(&server, &[call(1, "resources/read")]);
        assert_eq!(replies[0]["result"]["contents"][0]["text"], "text");
        assert_eq!(resolved, 1, "one read");
        // After the subscription the loop looks at the file three times, without resolving.
        let ping = |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let (replies, resolved) =
            serve(&server, &[call(1, "resources/subscribe"), ping(2), ping(3), ping(4)]);
        assert_eq!(replies[0]["result"], json!({}));
        assert_eq!(resolved, 1, "one subscription, three looks");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
