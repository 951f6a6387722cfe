//! The members of a message's `params` that methods read, captured as raw JSON text in the
//! same pass that parses the envelope, so `params` is scanned once however many members
//! matter.

use crate::wire::scanner::{Scanner, Syntax};

/// `params` as the client sent it. The object variant is large (a slice per known member) but
/// lives briefly on the stack; boxing it would cost an allocation on every message.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Default)]
pub enum ParamsField<'a> {
    /// No `params` member: the same as `{}`.
    #[default]
    Absent,
    Object(Params<'a>),
    /// `params` was present but not an object (JSON-RPC allows arrays; MCP does not).
    NotObject,
}

/// The known members, each the exact JSON text the client wrote.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    /// The whole object, for the interceptor hooks (`None` when `params` was absent).
    pub raw: Option<&'a str>,
    pub meta: Option<&'a str>,
    pub protocol_version: Option<&'a str>,
    /// `initialize`: what the client supports.
    pub capabilities: Option<&'a str>,
    pub name: Option<&'a str>,
    pub arguments: Option<&'a str>,
    pub cursor: Option<&'a str>,
    pub request_id: Option<&'a str>,
    pub uri: Option<&'a str>,
    /// `ref` of `completion/complete`.
    pub reference: Option<&'a str>,
    pub argument: Option<&'a str>,
    pub context: Option<&'a str>,
    /// The filter of `subscriptions/listen`.
    pub notifications: Option<&'a str>,
    /// `logging/setLevel`.
    pub level: Option<&'a str>,
    /// 2026-07-28 retries of a multi round-trip request.
    pub input_responses: Option<&'a str>,
    pub request_state: Option<&'a str>,
    /// `tasks/get`, `tasks/update`, `tasks/cancel`.
    pub task_id: Option<&'a str>,
    /// A known member appeared twice: ambiguous, so the request is refused.
    pub duplicate: bool,
    /// `meta`'s members when a transport read them already and found them sound (HTTP's
    /// header checks): dispatch then does not read them again. Borrowed: every message's
    /// `Params` (stdio's too) grows by a pointer, not by the four members.
    pub meta_read: Option<&'a MetaMembers<'a>>,
}

/// The members of `_meta` (its raw JSON text) a request is read by, each as raw JSON (the
/// last of one named twice, as a parsed value would keep): see [`era::meta_members`].
///
/// [`era::meta_members`]: crate::wire::era::meta_members
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MetaMembers<'a> {
    pub version: Option<&'a str>,
    pub capabilities: Option<&'a str>,
    pub progress_token: Option<&'a str>,
    pub level: Option<&'a str>,
    /// One of these was named twice.
    pub duplicate: bool,
}

impl Params<'_> {
    /// No members: what an absent `params` means.
    pub const NONE: Params<'static> = Params {
        raw: None,
        meta: None,
        protocol_version: None,
        capabilities: None,
        name: None,
        arguments: None,
        cursor: None,
        request_id: None,
        uri: None,
        reference: None,
        argument: None,
        context: None,
        notifications: None,
        level: None,
        input_responses: None,
        request_state: None,
        task_id: None,
        duplicate: false,
        meta_read: None,
    };
}

impl<'a> Params<'a> {
    /// Every member but `duplicate` and `meta_read`, in one fixed order: how a parse is
    /// carried as positions in its text (`carried.rs`) and read back.
    pub fn members(&mut self) -> [&mut Option<&'a str>; 17] {
        // The struct is taken apart without `..`: a member added to `Params` and not named
        // here fails to compile.
        macro_rules! every {
            ($($member:ident),+) => {{
                let Params { $($member,)+ duplicate: _, meta_read: _ } = self;
                [$($member),+]
            }};
        }
        every!(
            raw,
            meta,
            protocol_version,
            capabilities,
            name,
            arguments,
            cursor,
            request_id,
            uri,
            reference,
            argument,
            context,
            notifications,
            level,
            input_responses,
            request_state,
            task_id
        )
    }
}

impl<'a> MetaMembers<'a> {
    /// The members in one fixed order, and whether one was named twice: how they are
    /// carried as positions in their text (`carried.rs`) and read back.
    pub fn parts(&mut self) -> ([&mut Option<&'a str>; 4], &mut bool) {
        // Taken apart without `..`, as [`Params::members`] does.
        let MetaMembers { version, capabilities, progress_token, level, duplicate } = self;
        ([version, capabilities, progress_token, level], duplicate)
    }
}

impl<'a> ParamsField<'a> {
    /// Reads the `params` value at the scanner's position into `self`, in place: the members
    /// are written where they stay rather than copied there.
    #[inline]
    pub fn scan(&mut self, scanner: &mut Scanner<'a>) -> Result<(), Syntax> {
        if scanner.peek() != Some(b'{') {
            scanner.value()?;
            *self = ParamsField::NotObject;
            return Ok(());
        }
        *self = ParamsField::Object(Params::NONE);
        let ParamsField::Object(p) = self else { unreachable!() };
        let start = scanner.offset();
        let scanned = scanner.object(|key, s| {
            let slot = match key.as_deref().unwrap_or_default() {
                "_meta" => &mut p.meta,
                "protocolVersion" => &mut p.protocol_version,
                "capabilities" => &mut p.capabilities,
                "name" => &mut p.name,
                "arguments" => &mut p.arguments,
                "cursor" => &mut p.cursor,
                "requestId" => &mut p.request_id,
                "uri" => &mut p.uri,
                "ref" => &mut p.reference,
                "argument" => &mut p.argument,
                "context" => &mut p.context,
                "notifications" => &mut p.notifications,
                "level" => &mut p.level,
                "inputResponses" => &mut p.input_responses,
                "requestState" => &mut p.request_state,
                "taskId" => &mut p.task_id,
                _ => return s.value().map(drop),
            };
            p.duplicate |= slot.replace(s.value()?).is_some();
            Ok(())
        });
        p.raw = Some(scanner.since(start));
        scanned
    }

    /// The members, or `None` when `params` is not a usable object.
    pub fn object(&self) -> Option<Params<'a>> {
        match self {
            ParamsField::Absent => Some(Params::NONE),
            ParamsField::Object(params) if !params.duplicate => Some(*params),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(json: &str) -> ParamsField<'_> {
        let mut scanner = Scanner::new(json);
        let mut field = ParamsField::Absent;
        field.scan(&mut scanner).unwrap();
        scanner.end().unwrap();
        field
    }

    #[test]
    fn captures_known_members_in_one_pass() {
        let ParamsField::Object(p) = field(
            r#"{"name":"x","arguments":{"a":[1,{"b":2}]},"other":{"deep":[1,2]},"_meta":{}}"#,
        ) else {
            panic!("not an object")
        };
        assert_eq!(p.name, Some(r#""x""#));
        assert_eq!(p.arguments, Some(r#"{"a":[1,{"b":2}]}"#));
        assert_eq!(p.meta, Some("{}"));
        assert_eq!(
            p.raw,
            Some(r#"{"name":"x","arguments":{"a":[1,{"b":2}]},"other":{"deep":[1,2]},"_meta":{}}"#)
        );
        assert!(p.cursor.is_none() && !p.duplicate);
        let ParamsField::Object(escaped) = field(r#"{"n\u0061me":"y"}"#) else {
            panic!("not an object")
        };
        assert_eq!(escaped.name, Some(r#""y""#));
        assert!(matches!(
            field(r#"{"name":1,"name":2}"#),
            ParamsField::Object(Params { duplicate: true, .. })
        ));
        for not_object in ["[1,2]", "null", "7", "\"s\"", "true", "1.5"] {
            assert!(matches!(field(not_object), ParamsField::NotObject), "{not_object}");
        }
    }
}
