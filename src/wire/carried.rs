//! A request parsed once and kept as positions in its text: it travels with that text (the
//! HTTP loop's queue carries both) and is read back without a second parse.

use std::borrow::Cow;

use crate::wire::jsonrpc::{Id, Message};
use crate::wire::params::{Params, ParamsField};

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
    /// `message`, parsed from `text`, as positions in it; `None` for anything but a request
    /// (or a part that does not lie in `text`).
    pub fn of(text: &str, message: &Message) -> Option<Box<Parsed>> {
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
                let mut at = [None; 17];
                for (slot, member) in at.iter_mut().zip(params.members()) {
                    *slot = match *member {
                        Some(member) => Some(span(text, member)?),
                        None => None,
                    };
                }
                Members::Object { at, duplicate: params.duplicate }
            }
        };
        Some(Box::new(Parsed { id: span(text, id.as_json())?, method, params }))
    }

    /// The request again, read from the `text` it was parsed from (any other text reads
    /// wrong, or not at all: `None`).
    pub fn message<'a>(&'a self, text: &'a str) -> Option<Message<'a>> {
        let part = |(start, end): Span| text.get(start as usize..end as usize);
        let params = match &self.params {
            Members::Absent => ParamsField::Absent,
            Members::NotObject => ParamsField::NotObject,
            Members::Object { at, duplicate } => {
                let mut params: Params<'a> = Params::NONE;
                for (member, at) in params.members().into_iter().zip(at) {
                    *member = match at {
                        Some(at) => Some(part(*at)?),
                        None => None,
                    };
                }
                params.duplicate = *duplicate;
                ParamsField::Object(params)
            }
        };
        let method = match &self.method {
            Method::At(at) => part(*at)?,
            Method::Decoded(name) => name,
        };
        let id = Id::from_raw(part(self.id)?)?;
        Some(Message::Request { id, method: Cow::Borrowed(method), params })
    }
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
            let parsed = Parsed::of(text, &message).unwrap();
            let again = parsed.message(text).unwrap();
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
            assert!(Parsed::of(other, &parse_message(other)).is_none(), "{other}");
        }
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"name":"x"}}"#;
        // A message parsed from a copy of the text does not lie in it.
        let copy = text.to_string();
        assert!(Parsed::of(text, &parse_message(&copy)).is_none());
        let parsed = Parsed::of(text, &parse_message(text)).unwrap();
        assert!(parsed.message(&text[..20]).is_none());
    }
}
