//! The `tool_args!` macro: a struct or a unit-variant enum declared once, which gives the
//! type and its JSON Schema (its [`crate::Describe`] implementation), so a typed tool's
//! listed schema and the type that decodes its arguments cannot drift apart.
//!
//! It is a declarative macro (no proc-macro crate): it munches attributes one at a time,
//! keeping every attribute on the type but `#[schema(...)]`, which it turns into keywords.

/// Declares a struct (or an enum of unit variants) and derives its JSON Schema from the same
/// tokens: an implementation of [`Describe`](crate::Describe), which
/// [`Tool::typed`](crate::Tool::typed) lists as the tool's `inputSchema`.
///
/// ```
/// use baremcp::{Describe, Tool, tool_args};
/// use serde::Deserialize;
/// use serde_json::json;
///
/// tool_args! {
///     /// Where to send the parcel.
///     #[derive(Deserialize)]
///     struct Send {
///         /// The recipient's name.
///         #[schema(minLength = 1, examples = ["Ada"])]
///         to: String,
///         /// Grams.
///         weight: u16,
///         speed: Option<Speed>,
///         #[serde(default)]
///         tracked: bool,
///     }
/// }
///
/// tool_args! {
///     /// How fast it goes.
///     #[derive(Deserialize)]
///     enum Speed {
///         Slow,
///         Fast,
///     }
/// }
///
/// assert_eq!(
///     Send::schema(),
///     json!({
///         "type": "object",
///         "description": "Where to send the parcel.",
///         "properties": {
///             "to": {"type": "string", "description": "The recipient's name.",
///                    "minLength": 1, "examples": ["Ada"]},
///             "weight": {"type": "integer", "minimum": 0, "maximum": 65535,
///                        "description": "Grams."},
///             "speed": {"type": ["string", "null"], "enum": ["Slow", "Fast", null],
///                       "description": "How fast it goes."},
///             "tracked": {"type": "boolean"}
///         },
///         "required": ["to", "weight"]
///     })
/// );
/// let tool = Tool::typed("send", "Sends a parcel", |args: Send, _cx| {
///     Ok(format!("{} g to {}", args.weight, args.to))
/// });
/// ```
///
/// What it reads:
///
/// - **Field names and types**: each field's schema is its type's
///   ([`Describe`](crate::Describe) has the table for the standard types; a field of
///   another `tool_args!` type nests its schema).
/// - **`required`**: every field but those of an `Option` type and those marked
///   `#[serde(default)]` or `#[serde(default = "...")]` (or all, under a `#[serde(default)]`
///   on the struct).
/// - **Doc comments**: a field's become its `description`; the type's become the schema's
///   own `description` (and, for an enum used as a field, that field's).
/// - **`#[schema(keyword = value, ...)]`** on a field or on the type states what a Rust type
///   cannot: `minLength`, `maxLength`, `pattern`, `format`, `minimum`, `maximum`,
///   `examples`, `default`, or any other JSON Schema keyword, named as JSON Schema spells
///   it. Each value is a Rust expression serialized by serde_json (`1`, `"^[a-z]+$"`,
///   `["a", "b"]`, or `serde_json::json!({...})` for an object). It replaces what the type
///   said (`#[schema(maximum = 10)]` on a `u8`). The attribute is consumed: the type
///   itself does not carry it.
/// - **`#[serde(deny_unknown_fields)]`** on the struct: `"additionalProperties": false`.
///   Like `default`, it is read in any `#[serde(...)]`, beside other items in any order.
///
/// Every attribute but `#[schema]` stays on the type, so you write `#[derive(Deserialize)]`
/// (and `Debug`, `Clone`, ...) yourself, as with any serde type: the macro adds only the
/// schema, your serde attributes sit where serde users look for them, and a crate that
/// renames its serde dependency says so with `#[serde(crate = "...")]` as usual. The type
/// must implement `Deserialize`, which is what a typed tool decodes with.
///
/// Serde attributes that change names or shapes (`rename`, `rename_all`, `skip`, `alias`,
/// `flatten`, `untagged`, `tag`, `transparent`) are not followed: registration compares
/// the names the schema lists with those the type's `Deserialize` reads, and
/// [`Server::add_tool`](crate::Server::add_tool) refuses a tool whose two disagree with
/// [`Error::Mismatch`](crate::Error::Mismatch), naming each difference. It also compares
/// the fields the schema requires with those the type needs, and checks that each field's
/// `examples` and `default` decode as that field of the type, and that the type's own
/// `examples` decode into it and pass its schema. Such a type needs its schema written out,
/// with [`Tool::typed_with_schema`](crate::Tool::typed_with_schema); so does a type that
/// contains itself (`children: Vec<Node>` in `Node`), which the macro does not describe:
/// its schema stops where the type meets itself again, and registration refuses it. A
/// `#[serde(deserialize_with)]` that reads another JSON type than the field's is not seen.
///
/// Structs take named fields and no generic parameters; enums take unit variants only
/// (their JSON is the variant's name). A struct with very many fields or attributes may need
/// a higher `#![recursion_limit]`, as the macro takes one attribute per step.
#[macro_export]
macro_rules! tool_args {
    (
        $(#[$($attr:tt)*])*
        $vis:vis struct $name:ident { $($body:tt)* }
    ) => {
        $crate::__tool_args! { @attrs [@struct_head [$vis] [$name] [$($body)*]] [] [] [] []
            $(#[$($attr)*])* }
    };
    (
        $(#[$($attr:tt)*])*
        $vis:vis enum $name:ident { $($(#[$($vattr:tt)*])* $variant:ident),* $(,)? }
    ) => {
        $crate::__tool_args! {
            @attrs [@enum [$vis] [$name] [$([$(#[$($vattr)*])* $variant])*]] [] [] [] []
            $(#[$($attr)*])*
        }
    };
}

/// The steps of [`tool_args!`]: not for use on its own.
///
/// `@attrs [continuation] [kept] [keywords] [docs] [flags] attributes...` sorts attributes
/// one at a time (a run of doc lines in one step; `@serde` reads a `#[serde(...)]` list for
/// its flags), then calls the continuation with the four lists; `@fields` walks a struct's
/// fields the same way; `@struct` and `@enum` write the type and its `Describe`
/// implementation.
#[doc(hidden)]
#[macro_export]
macro_rules! __tool_args {
    (@attrs [$($next:tt)*] $kept:tt $keywords:tt $docs:tt $flags:tt) => {
        $crate::__tool_args! { $($next)* $kept $keywords $docs $flags }
    };
    (@attrs $next:tt [$($kept:tt)*] $keywords:tt [$($docs:tt)*] $flags:tt
        #[doc = $a:expr] #[doc = $b:expr] #[doc = $c:expr] #[doc = $d:expr] $($rest:tt)*
    ) => {
        $crate::__tool_args! { @attrs $next
            [$($kept)* #[doc = $a] #[doc = $b] #[doc = $c] #[doc = $d]] $keywords
            [$($docs)* $a, $b, $c, $d,] $flags $($rest)* }
    };
    (@attrs $next:tt [$($kept:tt)*] $keywords:tt [$($docs:tt)*] $flags:tt
        #[doc = $a:expr] $($rest:tt)*
    ) => {
        $crate::__tool_args! { @attrs $next [$($kept)* #[doc = $a]] $keywords [$($docs)* $a,]
            $flags $($rest)* }
    };
    (@attrs $next:tt $kept:tt [$($keywords:tt)*] $docs:tt $flags:tt
        #[schema($($keyword:ident = $value:expr),* $(,)?)] $($rest:tt)*
    ) => {
        $crate::__tool_args! { @attrs $next $kept [$($keywords)* $(($keyword, $value))*] $docs
            $flags $($rest)* }
    };
    (@attrs $next:tt [$($kept:tt)*] $keywords:tt $docs:tt $flags:tt
        #[serde($($item:tt)*)] $($rest:tt)*
    ) => {
        $crate::__tool_args! { @serde [$next [$($kept)* #[serde($($item)*)]] $keywords $docs]
            $flags [$($item)*] $($rest)* }
    };
    // A `#[serde(...)]` list, read one token at a time: serde takes its items in any order
    // and several in one attribute (`default, deny_unknown_fields`). An item's value (a
    // literal, or a group in parentheses) is one token, so only the items' names can match.
    (@serde $state:tt [$($flags:tt)*] [default $($item:tt)*] $($rest:tt)*) => {
        $crate::__tool_args! { @serde $state [$($flags)* default] [$($item)*] $($rest)* }
    };
    (@serde $state:tt [$($flags:tt)*] [deny_unknown_fields $($item:tt)*] $($rest:tt)*) => {
        $crate::__tool_args! {
            @serde $state [$($flags)* deny_unknown_fields] [$($item)*] $($rest)* }
    };
    (@serde $state:tt $flags:tt [$other:tt $($item:tt)*] $($rest:tt)*) => {
        $crate::__tool_args! { @serde $state $flags [$($item)*] $($rest)* }
    };
    (@serde [$next:tt $kept:tt $keywords:tt $docs:tt] $flags:tt [] $($rest:tt)*) => {
        $crate::__tool_args! { @attrs $next $kept $keywords $docs $flags $($rest)* }
    };
    (@attrs $next:tt [$($kept:tt)*] $keywords:tt $docs:tt $flags:tt
        #[$($other:tt)*] $($rest:tt)*
    ) => {
        $crate::__tool_args! { @attrs $next [$($kept)* #[$($other)*]] $keywords $docs $flags
            $($rest)* }
    };

    // A struct: its own attributes sorted, now its fields.
    (@struct_head [$vis:vis] [$name:ident] [$($body:tt)*] $kept:tt $keywords:tt $docs:tt
        $flags:tt
    ) => {
        $crate::__tool_args! { @fields [$kept [$vis] [$name] $keywords $docs $flags] [] []
            $($body)* }
    };
    (@fields $head:tt $fields:tt $entries:tt) => {
        $crate::__tool_args! { @struct $head $fields $entries }
    };
    (@fields $head:tt $fields:tt $entries:tt
        $(#[$($attr:tt)*])* $fvis:vis $field:ident : $type:ty $(, $($rest:tt)*)?
    ) => {
        $crate::__tool_args! {
            @attrs [@field $head $fields $entries [$fvis] [$field] [$type] [$($($rest)*)?]]
            [] [] [] [] $(#[$($attr)*])*
        }
    };
    (@field $head:tt [$($fields:tt)*] [$($entries:tt)*] [$fvis:vis] [$field:ident] [$type:ty]
        [$($rest:tt)*] [$($kept:tt)*] $keywords:tt $docs:tt $flags:tt
    ) => {
        $crate::__tool_args! { @fields $head
            [$($fields)* $($kept)* $fvis $field: $type,]
            [$($entries)* [$field [$type] $keywords $docs $flags]]
            $($rest)* }
    };
    (@struct
        [[$($kept:tt)*] [$vis:vis] [$name:ident] [$(($keyword:ident, $value:expr))*]
            [$($doc:expr,)*] [$($flag:ident)*]]
        [$($fields:tt)*]
        [$([$field:ident [$type:ty] [$(($fkeyword:ident, $fvalue:expr))*] [$($fdoc:expr,)*]
            [$($fflag:ident)*]])*]
    ) => {
        $($kept)*
        $vis struct $name { $($fields)* }

        impl $crate::Describe for $name {
            fn schema() -> $crate::__private::Value {
                let mut within = $crate::__private::Within::default();
                <Self as $crate::Describe>::schema_within(&mut within)
            }

            fn schema_within(within: &mut $crate::__private::Within) -> $crate::__private::Value {
                if !within.enter::<Self>() {
                    return $crate::__private::recursion(stringify!($name));
                }
                let mut schema = $crate::__private::ObjectSchema::new(
                    &[$($doc),*],
                    &[$(stringify!($flag)),*],
                );
                $(schema.field(
                    stringify!($field),
                    <$type as $crate::Describe>::schema_within(within),
                    <$type as $crate::Describe>::OPTIONAL,
                    &[$($fdoc),*],
                    &[$(stringify!($fflag)),*],
                    vec![$((stringify!($fkeyword), $crate::__private::keyword(&$fvalue))),*],
                );)*
                within.leave();
                schema.finish(vec![$((stringify!($keyword), $crate::__private::keyword(&$value))),*])
            }

            fn check_agreement(
                pointer: &str,
                found: &mut Vec<$crate::schema::Problem>,
            ) {
                if $crate::__private::check_struct::<Self>(pointer, found) {
                    $(<$type as $crate::Describe>::check_agreement(
                        &$crate::__private::property(pointer, stringify!($field)),
                        found,
                    );)*
                }
            }
        }
    };
    (@enum [$vis:vis] [$name:ident] [$([$(#[$($vattr:tt)*])* $variant:ident])*]
        [$($kept:tt)*] [$(($keyword:ident, $value:expr))*] [$($doc:expr,)*] [$($flag:ident)*]
    ) => {
        $($kept)*
        $vis enum $name { $($(#[$($vattr)*])* $variant,)* }

        impl $crate::Describe for $name {
            fn schema() -> $crate::__private::Value {
                $crate::__private::enum_schema(
                    &[$(stringify!($variant)),*],
                    &[$($doc),*],
                    vec![$((stringify!($keyword), $crate::__private::keyword(&$value))),*],
                )
            }

            fn check_agreement(
                pointer: &str,
                found: &mut Vec<$crate::schema::Problem>,
            ) {
                $crate::__private::check_enum::<Self>(pointer, found);
            }
        }
    };
}
