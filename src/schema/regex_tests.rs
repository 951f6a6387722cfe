//! The regex matcher's tests: what the subset matches, what it refuses, and its bounds.

use super::*;

fn matches(pattern: &str, text: &str) -> bool {
    Regex::new(pattern).unwrap_or_else(|e| panic!("{e}")).is_match(text, &mut 10_000_000).unwrap()
}

#[test]
fn matches_the_subset() {
    let table: &[(&str, &str, bool)] = &[
        ("abc", "xxabcxx", true),
        ("^abc$", "xxabcxx", false),
        ("^abc$", "abc", true),
        ("^a*$", "aaa", true),
        ("^a*$", "aab", false),
        ("^a+?$", "aaa", true),
        ("^(ab|cd)+$", "abcdab", true),
        ("^(ab|cd)+$", "abc", false),
        ("^(?:x|y){2,3}$", "xyx", true),
        ("^(?:x|y){2,3}$", "xyxy", false),
        ("^a{2}$", "aa", true),
        ("^a{2,}$", "aaaaa", true),
        ("^a{2,}$", "a", false),
        ("^[a-zA-Z0-9_-]+$", "Hello_World-1", true),
        ("^[a-zA-Z0-9_-]+$", "Hello World", false),
        ("^[^0-9]+$", "abc", true),
        ("^[^0-9]+$", "ab1", false),
        // Ranges out of order, overlapping and adjacent: merged into one.
        ("^[x-zb-ya]+$", "abyz", true),
        ("^[^x-zb-ya]+$", "c", false),
        ("^[^x-zb-ya]+$", "A{", true),
        (r"^\d{4}-\d{2}-\d{2}$", "2026-11-22", true),
        (r"^\d{4}-\d{2}-\d{2}$", "2026-1-22", false),
        (r"^\w+$", "snake_case9", true),
        (r"^\W+$", "!?", true),
        (r"\s", "a b", true),
        (r"^\S+$", "a\u{a0}b", false),
        (r"^\D+$", "abc", true),
        (r"\bcat\b", "a cat sat", true),
        (r"\bcat\b", "concatenate", false),
        (r"\Bcat\B", "concatenate", true),
        (r"^https?://", "https://x", true),
        (r"^\.\*\+$", ".*+", true),
        (r"^[\d.]+$", "1.25", true),
        (r"^[\w\s]+$", "two words", true),
        (r"^\x41\u0042$", "AB", true),
        ("^.$", "\n", false),
        ("^.$", "é", true),
        ("a{,5}", "a{,5}", true),
        ("x{", "x{", true),
        ("^(a*)*$", "aaaa", true),
        ("^(a|)+b$", "aaab", true),
        ("^$", "", true),
        ("", "anything", true),
        ("^🐲*$", "🐲🐲", true),
        ("[]]", "]", false),
    ];
    for &(pattern, text, want) in table {
        assert_eq!(matches(pattern, text), want, "/{pattern}/ on {text:?}");
    }
}

#[test]
fn refuses_what_it_cannot_match_exactly() {
    for pattern in [
        r"(?=a)", r"(?!a)", r"(?<=a)b", r"(?<n>a)", r"(a)\1", r"\p{L}", r"\k<n>", "(a", "a)", "[a",
        "*a", "a**", "a{5,2}", "a{1001}", "[z-a]", "^*", r"\", r"\x+1", r"\u+041", r"\x-1",
        r"[\x+1]",
    ] {
        assert!(Regex::new(pattern).is_err(), "{pattern} should be refused");
    }
}

#[test]
fn budget_bounds_the_work() {
    let evil = Regex::new("^(a+)+$").unwrap();
    let text = format!("{}b", "a".repeat(5000));
    let mut budget = 10_000_000;
    assert_eq!(evil.is_match(&text, &mut budget), Ok(false));
    // What the match spent is gone from the budget, for the next match to see.
    let spent = 10_000_000 - budget;
    assert!(spent > 5000, "{spent}");
    assert_eq!(evil.is_match(&text, &mut (spent - 1)), Err(BudgetExhausted));
    let mut exact = spent;
    assert_eq!(evil.is_match(&text, &mut exact), Ok(false));
    assert_eq!(exact, 0);
    let mut small = 100;
    assert_eq!(evil.is_match(&text, &mut small), Err(BudgetExhausted));
    assert_eq!(small, 0);
    let long = Regex::new("(x|y|z)*q").unwrap();
    assert_eq!(long.is_match(&"x".repeat(100_000), &mut 1000), Err(BudgetExhausted));
    // Setting up a large program's thread lists costs its size, even on an empty string.
    let large = Regex::new("a{1000}").unwrap();
    assert_eq!(large.is_match("", &mut 1000), Err(BudgetExhausted));
    assert_eq!(large.is_match("", &mut 1002), Ok(false));
}

#[test]
fn repeats_of_the_empty_string_compile_in_bounded_work() {
    // Each level multiplied the copies of a group that emits no state, so the state cap never
    // stopped it: four levels ran for ever. On its own thread so that a hang fails the test.
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let verdicts = [
            "(?:(?:(?:(?:){1000}){1000}){1000}){1000}",
            "(?:(?:(?:(?:a{0}){1000}){1000}){1000}){1000}",
            "(?:(?:(?:(?:b{0,0}(?:)*){1000}){1000}){1000}){1000}",
        ]
        .map(|pattern| {
            let regex = Regex::new(pattern).unwrap_or_else(|e| panic!("{e}"));
            // Unanchored, the empty string is found in any text (as ajv says too).
            (regex.program.len(), ["", "abc"].map(|text| regex.is_match(text, &mut 100)))
        });
        done.send(verdicts).unwrap();
    });
    let verdicts = result.recv_timeout(std::time::Duration::from_secs(20)).expect("compiled");
    assert_eq!(verdicts, [(1, [Ok(true), Ok(true)]); 3]);
    // What still emits states is charged for them: alternatives of empty branches.
    let error = Regex::new("(?:(?:(?:(?:|){1000}){1000}){1000}){1000}").unwrap_err();
    assert_eq!(error.0, "pattern too large (more than 20000 states)");
    for (pattern, text, want) in
        [("^a{0}$", "", true), ("^a{0}$", "a", false), ("^(?:)+x$", "x", true)]
    {
        assert_eq!(matches(pattern, text), want, "/{pattern}/ on {text:?}");
    }
}

#[test]
fn surrogate_pairs_are_one_code_point() {
    // With the `u` flag (ajv's) `\uD83D\uDE00` is U+1F600, in a class and in a range too.
    for (pattern, text, want) in [
        (r"^\uD83D\uDE00$", "😀", true),
        (r"^\uD83D\uDE00$", "\u{FFFD}\u{FFFD}", false),
        (r"^[\uD83D\uDE00-\uD83D\uDE4F]+$", "😀🙏", true),
        (r"^[\uD83D\uDE00-\uD83D\uDE4F]+$", "🚀", false),
        (r"^\u00e9\uD800\uDC00$", "é\u{10000}", true),
    ] {
        assert_eq!(matches(pattern, text), want, "/{pattern}/ on {text:?}");
    }
    let refused = |pattern: &str| Regex::new(pattern).unwrap_err().0;
    let lone = "lone surrogate escape (a \\uD800-\\uDBFF must be followed by a \\uDC00-\\uDFFF)";
    for pattern in
        [r"\uD83D", r"\uD83Dx", r"\uDE00", r"\uDE00\uD83D", r"\uD83D\uD83D", r"\uD83D\u0041"]
    {
        assert!(
            refused(pattern).ends_with(&format!("{lone} at position 6")),
            "{}",
            refused(pattern)
        );
    }
    assert_eq!(
        refused(r"a\u{1F600}"),
        r#"pattern "a\\u{1F600}": \u{...} is not supported (write \uHHHH, or a surrogate pair past U+FFFF) at position 3"#
    );
    assert_eq!(refused(r"\u00g1"), r#"pattern "\\u00g1": invalid hex escape at position 2"#);
}
