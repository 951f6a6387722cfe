//! A request parsed once and kept as positions in its text: it travels with that text (the
//! HTTP loop's queue carries both) and is read back without a second parse.

use std::borrow::Cow;

use crate::wire::jsonrpc::{Id, Message};
use crate::wire::params::{MetaMembers, Params, ParamsField};

/// Where a part lies in the text, start and end: `u32`, as a message is far below 4 GiB
/// (one that is not is not kept, and is parsed again).
type Span = (u32, u32);

/// A request as positions in its text. Only requests are kept: the other kinds are rare on
/// the path that carries them, and parsed again where they are served.
#[derive(Debug)]
pub struct Parsed {
    id: Span,
    method: Method,
    params: Members,
    /// `params._meta`'s members, when they were read and found sound (see [`Parsed::of`]).
    meta: Option<([Option<Span>; 4], bool)>,
}

#[derive(Debug)]
enum Method {
    At(Span),
    /// A name with escapes, decoded when it was read.
    Decoded(String),
}

/// `params`, as [`ParamsField`] has it: its members in [`Params::members`]' order.
#[allow(clippy::large_enum_variant)] // in a boxed `Parsed`: moved as a pointer
#[derive(Debug)]
enum Members {
    Absent,
    NotObject,
    Object { at: [Option<Span>; 17], duplicate: bool },
}

impl Parsed {
    /// `message`, parsed from `text`, as positions in it, with `meta`, the members of its
    /// `params._meta` read and found sound (HTTP's header checks), to be read back as
    /// [`Params::meta_read`] (not kept when one does not lie in `text`); `None` for anything
    /// but a request (or a part that does not lie in `text`).
    pub fn of(text: &str, message: &Message, meta: Option<MetaMembers>) -> Option<Box<Parsed>> {
        let Message::Request { id, method, params } = message else { return None };
        let method = match method {
            Cow::Borrowed(name) => Method::At(span(text, name)?),
            Cow::Owned(name) => Method::Decoded(name.clone()),
        };
        let params = match params {
            ParamsField::Absent => Members::Absent,
            ParamsField::NotObject => Members::NotObject,
            ParamsField::Object(params) => {
                let mut params = *params;
                Members::Object { at: spans(text, params.members())?, duplicate: params.duplicate }
            }
        };
        let meta = meta.and_then(|mut meta| {
            let (members, duplicate) = meta.parts();
            spans(text, members).map(|at| (at, *duplicate))
        });
        Some(Box::new(Parsed { id: span(text, id.as_json())?, method, params, meta }))
    }

    /// The request again, read from the `text` it was parsed from (any other text reads
    /// wrong, or not at all: `None`); its kept `_meta` members are read into `meta`, which
    /// its `params` borrow.
    pub fn message<'m, 'a: 'm>(
        &'a self,
        text: &'a str,
        meta: &'m mut Option<MetaMembers<'a>>,
    ) -> Option<Message<'m>> {
        let params = match &self.params {
            Members::Absent => ParamsField::Absent,
            Members::NotObject => ParamsField::NotObject,
            Members::Object { at, duplicate } => {
                let mut params: Params<'m> = Params::NONE;
                read_back(text, at, params.members())?;
                params.duplicate = *duplicate;
                if let Some((at, duplicate)) = &self.meta {
                    let (members, twice) = meta.insert(MetaMembers::default()).parts();
                    read_back(text, at, members)?;
                    *twice = *duplicate;
                    params.meta_read = meta.as_ref();
                }
                ParamsField::Object(params)
            }
        };
        let method = match &self.method {
            Method::At(at) => part(text, *at)?,
            Method::Decoded(name) => name,
        };
        let id = Id::from_raw(part(text, self.id)?)?;
        Some(Message::Request { id, method: Cow::Borrowed(method), params })
    }
}

/// Where each of `members` (slices of `text`) lies in it; `None` when one lies elsewhere.
fn spans<const N: usize>(text: &str, members: [&mut Option<&str>; N]) -> Option<[Option<Span>; N]> {
    let mut at = [None; N];
    for (slot, member) in at.iter_mut().zip(members) {
        *slot = match *member {
            Some(member) => Some(span(text, member)?),
            None => None,
        };
    }
    Some(at)
}

/// Sets each of `members` to its part of `text` at `at`; `None` when one is not in it.
fn read_back<'a, const N: usize>(
    text: &'a str,
    at: &[Option<Span>; N],
    members: [&mut Option<&'a str>; N],
) -> Option<()> {
    for (member, at) in members.into_iter().zip(at) {
        *member = match at {
            Some(at) => Some(part(text, *at)?),
            None => None,
        };
    }
    Some(())
}

/// The part of `text` at `at`; `None` when `text` has none there.
#[inline]
fn part(text: &str, (start, end): Span) -> Option<&str> {
    text.get(start as usize..end as usize)
}

/// Where `part`, a slice of `text`, lies in it; `None` when it lies elsewhere.
fn span(text: &str, part: &str) -> Option<Span> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(part.len()).filter(|&end| end <= text.len())?;
    Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::jsonrpc::parse_message;

    #[test]
    fn a_request_read_back_is_the_request_parsed() {
        let texts = [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"method":"tools\/call","id":"a\"b","jsonrpc":"2.0","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":-12345678901234567890,"method":"m","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"m","params":{"name":"a","name":"b"}}"#,
            concat!(
                r#"{"jsonrpc":"2.0","id":3,"method":"x","params":{"_meta":{"k":[1]},"#,
                r#""protocolVersion":"v","capabilities":{},"name":"n","arguments":{"a":1},"#,
                r#""cursor":"c","requestId":4,"uri":"u","ref":{},"argument":{},"context":{},"#,
                r#""notifications":{},"level":"info","inputResponses":{},"requestState":"s","#,
                r#""taskId":"t","other":true}}"#
            ),
        ];
        for text in texts {
            let message = parse_message(text);
            assert!(matches!(message, Message::Request { .. }), "{text}");
            let parsed = Parsed::of(text, &message, None).unwrap();
            let mut meta = None;
            let again = parsed.message(text, &mut meta).unwrap();
            assert_eq!(format!("{again:?}"), format!("{message:?}"), "{text}");
        }
    }

    #[test]
    fn only_requests_are_kept_and_only_their_own_text_reads_them_back() {
        for other in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            "[]",
        ] {
            assert!(Parsed::of(other, &parse_message(other), None).is_none(), "{other}");
        }
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"name":"x"}}"#;
        // A message parsed from a copy of the text does not lie in it.
        let copy = text.to_string();
        assert!(Parsed::of(text, &parse_message(&copy), None).is_none());
        let parsed = Parsed::of(text, &parse_message(text), None).unwrap();
        assert!(parsed.message(&text[..20], &mut None).is_none());
    }

    #[test]
    fn meta_members_kept_are_read_back_with_the_request_and_only_from_its_text() {
        use crate::wire::era::{self, CAPABILITIES_KEY, VERSION_KEY};
        fn members_in(text: &str) -> MetaMembers<'_> {
            match parse_message(text) {
                Message::Request { params: ParamsField::Object(params), .. } => {
                    era::meta_members(params.meta.unwrap()).unwrap()
                }
                _ => panic!("{text}"),
            }
        }
        fn read_back(parsed: &Parsed, text: &str, expected: Option<MetaMembers>) {
            let mut meta = None;
            match parsed.message(text, &mut meta) {
                Some(Message::Request { params: ParamsField::Object(params), .. }) => {
                    assert_eq!(params.meta_read.copied(), expected);
                }
                _ => panic!("not read back"),
            }
        }
        let meta = format!(
            r#"{{"{VERSION_KEY}":"2026-07-28","{CAPABILITIES_KEY}":{{"a":1}},"progressToken":7}}"#
        );
        let text =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{meta}}}}}"#);
        let members = members_in(&text);
        assert!(members.version.is_some() && members.progress_token == Some("7"));
        let message = parse_message(&text);
        read_back(&Parsed::of(&text, &message, None).unwrap(), &text, None);
        read_back(&Parsed::of(&text, &message, Some(members)).unwrap(), &text, Some(members));
        // Members read from a copy of the text do not lie in it: not kept.
        let copy = text.clone();
        let parsed = Parsed::of(&text, &message, Some(members_in(&copy))).unwrap();
        read_back(&parsed, &text, None);
    }
}
