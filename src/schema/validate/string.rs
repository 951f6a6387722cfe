//! The keywords of strings: `minLength`, `maxLength` (in characters) and `pattern`.

use serde_json::Value;

use super::messages::{plural, short};
use super::{Cx, Flow, Frame, Walk};

impl Walk<'_> {
    pub(super) fn string(&self, frame: &mut Frame, text: &str, inst: &Value, cx: &mut Cx) -> Flow {
        let k = frame.k;
        if k.min_length.is_some() || k.max_length.is_some() {
            // Lengths count characters, each one to four bytes in UTF-8: they are counted only
            // when a bound falls between a quarter of the byte length and all of it (and most
            // strings are ASCII, where bytes are characters).
            let bytes = text.len() as u64;
            let length = || if text.is_ascii() { bytes } else { text.chars().count() as u64 };
            if let Some(min) = k.min_length
                && bytes.div_ceil(4) < min
                && length() < min
            {
                self.fail(frame, cx, "minLength", || {
                    format!(
                        "must be at least {min} {} long",
                        plural(min, "character", "characters")
                    )
                })?;
            }
            if let Some(max) = k.max_length
                && bytes > max
                && length() > max
            {
                self.fail(frame, cx, "maxLength", || {
                    format!(
                        "must be at most {max} {} long, got {}",
                        plural(max, "character", "characters"),
                        length()
                    )
                })?;
            }
        }
        if let Some((source, regex)) = &k.pattern
            && !self.regex(regex, text, cx)?
        {
            self.fail(frame, cx, "pattern", || {
                format!("{} does not match the pattern {source}", short(inst))
            })?;
        }
        Ok(())
    }
}
