//! What the server wrote, checked for shape (each line a response, a batch reply, a
//! notification or a request of its own), and matched against the oracle's wants: in order,
//! or counted per id where replies may come in any order.

use std::collections::HashMap;

use super::json::{self, Decoded, STRICT};
use super::oracle::{Want, readable_id};

/// One line the server wrote, checked for shape: a response (or an array of them), a
/// notification, or a request of the server's own.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    /// A response's raw id (`None`: null, or no `id` on an error) and its error code, if it is
    /// an error.
    Response(Option<String>, Option<i64>),
    Array(Vec<(Option<String>, Option<i64>)>),
    Notification(String),
    ServerRequest(String, String),
}

fn check_response(members: &[(Decoded, &[u8])]) -> Result<(Option<String>, Option<i64>), String> {
    let get = |name: &str| members.iter().find(|(k, _)| k.text == name).map(|(_, v)| *v);
    // From MCP 2025-11-25 on, an error to a request whose id could not be read has no `id`
    // (never null): it stands for the same unknown id as `null`. A result always has one.
    let id = match get("id") {
        Some(id) => id,
        None if get("error").is_some() && get("result").is_none() => &b"null"[..],
        None => return Err("a response without an id".into()),
    };
    if !(id == b"null" || readable_id(id)) {
        return Err(format!(
            "a response whose id is not a string, an integer or null: {}",
            String::from_utf8_lossy(id)
        ));
    }
    let id = (id != b"null").then(|| String::from_utf8_lossy(id).into_owned());
    match (get("result"), get("error")) {
        (Some(_), None) => Ok((id, None)),
        (None, Some(error)) => {
            let fields = json::members(error, STRICT).ok_or("an error that is not an object")?;
            let field = |name: &str| fields.iter().find(|(k, _)| k.text == name).map(|(_, v)| *v);
            let code = field("code").and_then(|c| std::str::from_utf8(c).ok()?.parse::<i64>().ok());
            let code = code.ok_or("an error without an integer code")?;
            if !field("message").is_some_and(|m| m.starts_with(b"\"")) {
                return Err("an error without a string message".into());
            }
            Ok((id, Some(code)))
        }
        _ => Err("a response needs exactly one of result and error".into()),
    }
}

/// Checks one line the server wrote.
pub fn check_out(line: &[u8]) -> Result<Out, String> {
    let text = std::str::from_utf8(line).map_err(|_| "a line that is not UTF-8".to_string())?;
    json::whole(line, STRICT).map_err(|()| "a line that is not JSON".to_string())?;
    fn one(text: &[u8]) -> Result<Vec<(Decoded, &[u8])>, String> {
        let members = json::members(text, STRICT).ok_or("a message that is not an object")?;
        let mut names: Vec<&str> = members.iter().map(|(k, _)| k.text.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("a message that names {:?} twice", w[0]));
        }
        if !members.iter().any(|(k, v)| k.text == "jsonrpc" && *v == br#""2.0""#) {
            return Err("a message without \"jsonrpc\":\"2.0\"".into());
        }
        Ok(members)
    }
    if let Some(items) = json::items(line, STRICT) {
        if items.is_empty() {
            return Err("an empty batch reply".into());
        }
        let replies = items
            .iter()
            .map(|item| check_response(&one(item)?))
            .collect::<Result<Vec<_>, String>>()?;
        return Ok(Out::Array(replies));
    }
    let members = one(line)?;
    let method = members.iter().find(|(k, _)| k.text == "method").map(|(_, v)| *v);
    let id = members.iter().find(|(k, _)| k.text == "id").map(|(_, v)| *v);
    match (method, id) {
        (Some(method), None) => {
            let method = json::string(method, 0)
                .map_err(|()| format!("a notification whose method is not a string: {text}"))?;
            Ok(Out::Notification(method.1.text))
        }
        (Some(method), Some(id)) => {
            let method = json::string(method, 0)
                .map_err(|()| "a request whose method is not a string".to_string())?;
            Ok(Out::ServerRequest(String::from_utf8_lossy(id).into_owned(), method.1.text))
        }
        (None, _) => {
            let (id, code) = check_response(&members)?;
            Ok(Out::Response(id, code))
        }
    }
}

fn id_text(id: &Option<String>) -> &str {
    id.as_deref().unwrap_or("null")
}

fn single_matches(want: &Want, id: &Option<String>) -> bool {
    match want {
        Want::One(w) => w == id,
        Want::Maybe(w) => id.is_none() || w == id,
        Want::OneOrNull(w, _) => id.is_none() || id.as_deref() == Some(w),
        Want::SilentOrNull(_) => id.is_none(),
        Want::Nothing | Want::Batch(_) => false,
    }
}

fn may_be_silent(want: &Want) -> bool {
    match want {
        Want::Maybe(_) | Want::Nothing | Want::SilentOrNull(_) => true,
        Want::Batch(items) => items.iter().all(may_be_silent),
        Want::One(_) | Want::OneOrNull(..) => false,
    }
}

/// Whether a batch reply's entries match the items' wants, in order.
fn array_matches(wants: &[Want], got: &[(Option<String>, Option<i64>)]) -> bool {
    // The ordered match costs items × entries when many items may go unanswered: past a
    // few thousand, entries are counted per id instead.
    if wants.len() > 2000 {
        let outs: Vec<Out> =
            got.iter().map(|(id, code)| Out::Response(id.clone(), *code)).collect();
        return match_as_multiset(wants, &outs, &[]).is_ok();
    }
    // Positions in `got` reachable after each want.
    let mut reach = vec![0usize];
    for want in wants {
        let mut next = Vec::new();
        for &j in &reach {
            if may_be_silent(want) {
                next.push(j);
            }
            if j < got.len() && single_matches(want, &got[j].0) {
                next.push(j + 1);
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.is_empty() {
            return false;
        }
        reach = next;
    }
    reach.contains(&got.len())
}

fn consumes(want: &Want, out: &Out) -> bool {
    match (want, out) {
        (Want::Batch(_), Out::Response(None, Some(_))) => true,
        (Want::Batch(items), Out::Array(got)) => array_matches(items, got),
        (_, Out::Response(id, _)) => single_matches(want, id),
        _ => false,
    }
}

/// Matches the responses, in order, against the lines' wants (notifications from the
/// server are skipped). Returns why not, naming the first line that went wrong.
pub fn match_in_order(wants: &[Want], outs: &[Out]) -> Result<(), String> {
    if wants.len() > 5000 {
        return match_as_multiset(wants, outs, &[]);
    }
    let responses: Vec<&Out> =
        outs.iter().filter(|o| matches!(o, Out::Response(..) | Out::Array(_))).collect();
    let mut reach = vec![0usize];
    for (n, want) in wants.iter().enumerate() {
        let mut next = Vec::new();
        for &j in &reach {
            if may_be_silent(want) {
                next.push(j);
            }
            if j < responses.len() && consumes(want, responses[j]) {
                next.push(j + 1);
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.is_empty() {
            let got = reach.iter().filter_map(|&j| responses.get(j)).next();
            return Err(format!(
                "line {}: wanted {want:?}, got {}",
                n + 1,
                got.map_or("no more responses".into(), |o| format!("{o:?}"))
            ));
        }
        reach = next;
    }
    if !reach.contains(&responses.len()) {
        let from = reach.iter().max().copied().unwrap_or(0);
        return Err(format!(
            "responses nobody asked for: {:?}",
            &responses[from..responses.len().min(from + 3)]
        ));
    }
    Ok(())
}

/// The same as counts per id, for targets whose replies may come in any order (the proxy
/// answers filtered calls itself; a waiting handler's queued requests are served later).
/// `cancelled` ids may go unanswered.
pub fn match_as_multiset(wants: &[Want], outs: &[Out], cancelled: &[String]) -> Result<(), String> {
    type Counts = HashMap<Option<String>, usize>;
    let (mut least, mut most): (Counts, Counts) = Default::default();
    fn bump(counts: &mut Counts, id: &Option<String>) {
        *counts.entry(id.clone()).or_default() += 1;
    }
    for want in wants {
        let items = match want {
            Want::Batch(items) => {
                bump(&mut most, &None);
                items.as_slice()
            }
            other => std::slice::from_ref(other),
        };
        for item in items {
            match item {
                Want::One(id) => {
                    if !matches!(want, Want::Batch(_))
                        && !id.as_ref().is_some_and(|id| cancelled.contains(id))
                    {
                        bump(&mut least, id);
                    }
                    bump(&mut most, id);
                    if id.is_some() {
                        bump(&mut most, &None);
                    }
                }
                Want::OneOrNull(id, _) | Want::Maybe(Some(id)) => {
                    bump(&mut most, &Some(id.clone()));
                    bump(&mut most, &None);
                }
                Want::Maybe(None) | Want::SilentOrNull(_) => bump(&mut most, &None),
                Want::Nothing | Want::Batch(_) => {}
            }
        }
    }
    let mut got: HashMap<Option<String>, usize> = HashMap::new();
    // The proxy's documented stand-in for a reply over its limit: -32603 with a null id.
    let mut stand_ins = 0;
    for out in outs {
        match out {
            Out::Response(None, Some(-32603)) => stand_ins += 1,
            Out::Response(id, _) => *got.entry(id.clone()).or_default() += 1,
            Out::Array(items) => {
                items.iter().for_each(|(id, _)| *got.entry(id.clone()).or_default() += 1)
            }
            _ => {}
        }
    }
    for (id, &n) in &least {
        let have = got.get(id).copied().unwrap_or(0);
        if have + stand_ins < n {
            return Err(format!("id {}: wanted {n} response(s), got {have}", id_text(id)));
        }
        stand_ins -= n.saturating_sub(have);
    }
    *got.entry(None).or_default() += stand_ins;
    for (id, &n) in &got {
        let allowed = most.get(id).copied().unwrap_or(0);
        if n > allowed {
            return Err(format!("id {}: {n} response(s), at most {allowed} expected", id_text(id)));
        }
    }
    Ok(())
}

/// Matches replies against wants: `Ok(None)` when they match strictly, `Ok(Some(why))` when
/// they match only with the pending classes' widening (returned too), `Err(why)` when not.
#[allow(clippy::type_complexity)]
pub fn judge_replies(
    wants: &[Want],
    outs: &[Out],
    in_order: bool,
    cancelled: &[String],
) -> (Result<Option<String>, String>, Vec<&'static str>) {
    let check = |wants: &[Want]| {
        if in_order {
            match_in_order(wants, outs)
        } else {
            match_as_multiset(wants, outs, cancelled)
        }
    };
    let strict_wants: Vec<Want> = wants.iter().map(strict).collect();
    match (check(&strict_wants), check(wants)) {
        (Ok(()), _) => (Ok(None), Vec::new()),
        (Err(strict_why), Ok(())) => (Ok(Some(strict_why)), widened_classes(wants)),
        (Err(_), Err(why)) => (Err(why), Vec::new()),
    }
}

/// The want without any pending widening.
fn strict(want: &Want) -> Want {
    match want {
        Want::OneOrNull(id, class) if !class.is_empty() => Want::One(Some(id.clone())),
        Want::SilentOrNull(_) => Want::Nothing,
        Want::Batch(items) => Want::Batch(items.iter().map(strict).collect()),
        other => other.clone(),
    }
}

/// The pending classes that widened `wants`, each once.
fn widened_classes(wants: &[Want]) -> Vec<&'static str> {
    let mut classes = Vec::new();
    for want in wants {
        match want {
            Want::OneOrNull(_, class) | Want::SilentOrNull(class) if !class.is_empty() => {
                classes.push(*class)
            }
            Want::Batch(items) => classes.extend(widened_classes(items)),
            _ => {}
        }
    }
    classes.sort_unstable();
    classes.dedup();
    classes
}
