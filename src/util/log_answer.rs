//! A logger's answer to "is this logged?", kept: asking `env_logger` matches every directive
//! of its filter against the target, which costs more than the rest of a request's logging
//! when the answer is no. The answer is kept with the maximum level it was given under and
//! asked again when that changes (a logger set once serving began, or a level changed); a
//! logger whose filter changes under one maximum level is not asked again.

use log::LevelFilter;

#[derive(Debug, Default, Clone, Copy)]
pub struct LogAnswer(Option<(LevelFilter, bool)>);

impl LogAnswer {
    /// The kept answer while the maximum level is the one it was given under; else `ask`'s.
    pub fn get(&mut self, ask: impl FnOnce() -> bool) -> bool {
        let now = log::max_level();
        match self.0 {
            Some((level, answer)) if level == now => answer,
            _ => {
                let answer = ask();
                self.0 = Some((now, answer));
                answer
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn asks_again_only_when_the_maximum_level_changes() {
        // No logger is set in these tests: the maximum level is changed for a moment only.
        let before = log::max_level();
        let other =
            if before == LevelFilter::Trace { LevelFilter::Off } else { LevelFilter::Trace };
        let (mut kept, asked) = (LogAnswer::default(), Cell::new(0));
        let ask = |answer: bool| {
            asked.set(asked.get() + 1);
            answer
        };
        assert!(kept.get(|| ask(true)));
        assert!(kept.get(|| ask(false)), "kept under the same level");
        assert_eq!(asked.get(), 1);
        log::set_max_level(other);
        let changed = kept.get(|| ask(false));
        log::set_max_level(before);
        assert!(!changed, "a new level asks again");
        assert!(kept.get(|| ask(true)), "and so does the old one, back");
        assert_eq!(asked.get(), 3);
    }
}
