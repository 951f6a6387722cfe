//! The help texts, as data: each command's usage lines, what it does, and its options one
//! line each. The same tables name the flags a mistyped one is compared with ("did you
//! mean") and tell which command a misplaced flag belongs to.

/// One option: its short letter, long name, the value it takes, and one line on what it does.
pub struct Opt {
    pub short: Option<char>,
    pub long: &'static str,
    pub value: &'static str,
    pub says: &'static str,
}

const fn opt(long: &'static str, value: &'static str, says: &'static str) -> Opt {
    Opt { short: None, long, value, says }
}

/// An option that also has a one-letter form.
const fn short(letter: char, long: &'static str, says: &'static str) -> Opt {
    Opt { short: Some(letter), long, value: "", says }
}

const HELP_OPT: Opt = short('h', "help", "print this help");

/// One command's help. Serving (no command word) is the one named `""`.
pub struct Help {
    pub name: &'static str,
    /// One line, for the list of commands in `baremcp --help`.
    pub summary: &'static str,
    /// Usage lines, each after `baremcp `.
    pub usage: &'static [&'static str],
    pub about: &'static str,
    /// The options under their headings.
    pub groups: &'static [(&'static str, &'static [Opt])],
    /// What follows the options (exit codes).
    pub after: &'static str,
}

pub const SERVE: Help = Help {
    name: "",
    summary: "",
    usage: &["[OPTIONS]", "COMMAND [ARGS]..."],
    about: "\
Serves MCP over stdio (newline-delimited JSON-RPC on stdin and stdout, logs on stderr), or
over Streamable HTTP with --http. An MCP client starts it; on a terminal it waits for one.",
    groups: &[
        (
            "options",
            &[
                opt("manifest", "FILE", "serve the tools, resources and prompts FILE declares"),
                opt("root", "DIR", "serve every regular file under DIR as a resource (repeatable)"),
                opt("include-hidden", "", "also serve dot-files and files in dot-directories"),
                opt(
                    "max-resource-bytes",
                    "N",
                    "largest file resources/read returns (default 8388608)",
                ),
                opt(
                    "max-message-bytes",
                    "N",
                    "longest message accepted, in bytes (default 16777216)",
                ),
                opt("page-size", "N", "items per page of a list result (default: all in one page)"),
                opt(
                    "log-level",
                    "LEVEL",
                    "off, error, warn, info, debug or trace (default: RUST_LOG, else warn)",
                ),
                opt("log-file", "FILE", "append log lines to FILE instead of stderr"),
                short(
                    'q',
                    "quiet",
                    "print no start-up line: only warnings and errors (--log-level warn)",
                ),
                short('h', "help", "print this help ('baremcp help COMMAND': a command's)"),
                short('V', "version", "print the version and the MCP protocol versions spoken"),
            ],
        ),
        (
            "http (serve Streamable HTTP instead of stdio)",
            &[
                opt(
                    "http",
                    "ADDR",
                    "listen on ADDR, e.g. 127.0.0.1:8080 or unix:PATH (repeatable)",
                ),
                opt("http-path", "PATH", "the endpoint's path (default /mcp)"),
                opt("auth-token-file", "FILE", "require a bearer token in FILE: NAME TOKEN a line"),
                opt(
                    "jwt-secret-file",
                    "FILE",
                    "also accept HS256 JWTs signed with FILE's bytes (32 or more)",
                ),
                opt("jwks-file", "FILE", "also accept JWTs signed by a key in FILE, a JWKS"),
                opt("jwt-audience", "AUD", "... whose aud includes AUD (needed with --jwks-file)"),
                opt("jwt-issuer", "ISS", "... whose iss is ISS"),
                opt("required-scope", "SCOPE", "... which grant SCOPE, else 403 (repeatable)"),
                opt(
                    "allow-unauthenticated",
                    "",
                    "allow a non-loopback ADDR without authentication",
                ),
                opt("allow-origin", "ORIGIN", "allow browser pages from ORIGIN (repeatable)"),
                opt(
                    "allow-host",
                    "HOST",
                    "allow Host: HOST besides loopback names, * for any (repeatable)",
                ),
                opt(
                    "resource-metadata-url",
                    "URL",
                    "serve RFC 9728 metadata at URL, name it in 401s",
                ),
                opt("authorization-server", "URL", "listed in that metadata (repeatable)"),
                opt("session-idle-secs", "N", "end a legacy session after N idle seconds (1800)"),
                opt("max-sessions", "N", "legacy sessions kept at most (default 1000)"),
                opt("max-connections", "N", "open connections at most; more get 503 (default 128)"),
                opt(
                    "max-connections-per-peer",
                    "N",
                    "... per address (IPv6: /64), loopback aside; then 429 (32)",
                ),
                opt("max-streams-per-peer", "N", "long-lived streams from one address (8)"),
                opt(
                    "ask-timeout-secs",
                    "N",
                    "a legacy handler waits N s at most for its client's answer (300)",
                ),
                opt("sse-keepalive-secs", "N", "comment on a quiet event stream every N s (15)"),
                opt("request-timeout-secs", "N", "a request must arrive within N seconds (30)"),
                opt("idle-timeout-secs", "N", "close an idle keep-alive connection after N s (15)"),
                opt("drain-secs", "N", "after SIGTERM, /readyz is 503 for N s before closing (5)"),
                opt(
                    "ready-stall-secs",
                    "N",
                    "/readyz is 503 while one message holds the loop N s (10)",
                ),
                opt("session-id-prefix", "NAME", "mint legacy session ids NAME.HEX, to route by"),
                opt("otlp-endpoint", "URL", "send a span per request to an OTLP/HTTP collector"),
            ],
        ),
    ],
    after: "",
};

pub const VALIDATE: Help = Help {
    name: "validate",
    summary: "check JSON instances against a JSON Schema",
    usage: &["validate [--jsonl] SCHEMA.json [INSTANCE.json]..."],
    about: "Checks each INSTANCE.json against SCHEMA.json and prints a verdict for each.",
    groups: &[(
        "options",
        &[
            opt("jsonl", "", "read instances from stdin, one a line; answer each with a line"),
            HELP_OPT,
        ],
    )],
    after: "exit 0: all valid, 1: some invalid (or the output closed early),\n\
            2: a file unreadable or not JSON, or the schema malformed",
};

pub const CHECK: Help = Help {
    name: "check",
    summary: "check a manifest and print what it serves",
    usage: &["check MANIFEST.json", "check --schema"],
    about: "\
Checks a manifest completely, prints what it serves, and warns about what will likely not
run as meant.",
    groups: &[(
        "options",
        &[opt("schema", "", "print the manifest format's JSON Schema, for editors"), HELP_OPT],
    )],
    after: "exit 0: it loads, 2: it does not",
};

pub const REPLAY: Help = Help {
    name: "replay",
    summary: "run transcripts against a server and compare what it writes",
    usage: &["replay [OPTIONS] FILE... [-- SERVER_CMD ARGS...]"],
    about: "\
Runs each transcript against a fresh server (the built-in one, or SERVER_CMD) and compares
what it writes, as JSON, with the <-- lines.",
    groups: &[(
        "options",
        &[
            opt("timeout-ms", "N", "how long to wait for each line the server owes (default 5000)"),
            opt("stderr", "FILE", "append the server's stderr to FILE (default: to baremcp's)"),
            opt("update", "", "rewrite the <-- lines from what the server wrote"),
            opt("max-message-bytes", "N", "a longer server line fails the file (default 16777216)"),
            HELP_OPT,
        ],
    )],
    after: "exit 0: all passed, 1: one failed (or the output closed early)",
};

pub const PROXY: Help = Help {
    name: "proxy",
    summary: "forward a client to a server, recording the session or hiding tools",
    usage: &["proxy [OPTIONS] -- SERVER_CMD ARGS..."],
    about: "Forwards a client (stdin and stdout) to SERVER_CMD, line by line.",
    groups: &[(
        "options",
        &[
            opt("record", "FILE", "write the session to FILE as a transcript"),
            opt("allow-tools", "a,b", "list and allow only these tools (repeatable)"),
            opt("deny-tools", "c,d", "hide these tools and refuse calls to them (repeatable)"),
            opt(
                "max-message-bytes",
                "N",
                "drop a longer line; the other side hears why (16777216)",
            ),
            HELP_OPT,
        ],
    )],
    after: "exit: the server's exit code (128+N: killed by signal N), or 2 when the recording failed",
};

pub const HELP: Help = Help {
    name: "help",
    summary: "print this help, or a command's",
    usage: &["help [COMMAND]"],
    about: "Prints baremcp's help, or COMMAND's (the same as 'baremcp COMMAND --help').",
    groups: &[],
    after: "",
};

/// The commands, in the order the help lists them.
pub const COMMANDS: [&Help; 5] = [&VALIDATE, &CHECK, &REPLAY, &PROXY, &HELP];

/// Every help, serving's first.
const ALL: [&Help; 6] = [&SERVE, &VALIDATE, &CHECK, &REPLAY, &PROXY, &HELP];

impl Help {
    /// The long names of this command's options.
    pub fn longs(&self) -> impl Iterator<Item = &'static str> {
        self.groups.iter().flat_map(|(_, opts)| opts.iter().map(|o| o.long))
    }

    /// Whether `--long` is one of this command's options.
    pub fn takes(&self, long: &str) -> bool {
        self.longs().any(|l| l == long)
    }

    /// How the command is named in a message: `check`, or `serving`.
    pub fn called(&self) -> &'static str {
        if self.name.is_empty() { "serving" } else { self.name }
    }

    /// This command's help: usage, what it does, its options one line each, exit codes.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (i, usage) in self.usage.iter().enumerate() {
            out.push_str(if i == 0 { "usage: baremcp " } else { "\n       baremcp " });
            out.push_str(usage);
        }
        out.push_str(&format!("\n\n{}", self.about));
        for (heading, opts) in self.groups {
            out.push_str(&format!("\n\n{heading}:"));
            let spec = |o: &Opt| {
                let short = o.short.map_or("    ".to_string(), |c| format!("-{c}, "));
                let value =
                    if o.value.is_empty() { String::new() } else { format!(" {}", o.value) };
                format!("{short}--{}{value}", o.long)
            };
            let width = opts.iter().map(|o| spec(o).len()).max().unwrap_or(0);
            for o in *opts {
                out.push_str(&format!("\n  {:width$}  {}", spec(o), o.says));
            }
        }
        if !self.after.is_empty() {
            out.push_str(&format!("\n\n{}", self.after));
        }
        out
    }
}

/// `baremcp --help`: serving's usage, the commands with a line each, then serving's options.
pub fn full_help() -> String {
    let serve = SERVE.text();
    let (head, options) = serve.split_once("\n\noptions:").unwrap_or((&serve, ""));
    let width = COMMANDS.iter().map(|h| h.name.len()).max().unwrap_or(0);
    let commands: Vec<String> =
        COMMANDS.iter().map(|h| format!("  {:width$}  {}", h.name, h.summary)).collect();
    format!(
        "{head}\n\ncommands:\n{}\n\noptions:{options}\n\n\
         'baremcp help COMMAND' or 'baremcp COMMAND --help' prints a command's options.",
        commands.join("\n")
    )
}

/// The command named `word`, if there is one.
pub fn command(word: &str) -> Option<&'static Help> {
    COMMANDS.into_iter().find(|h| h.name == word)
}

/// Why `--long` is not an option of `here`: it belongs to another command (named), or it
/// looks like one of `here`'s (the closest is suggested), or neither.
pub fn unknown_option(long: &str, here: &Help) -> String {
    let owner = ALL.into_iter().find(|h| h.takes(long));
    if let Some(owner) = owner {
        return format!("--{long} is an option of {}, not of {}", owner.called(), here.called());
    }
    match closest(long, here.longs()) {
        Some(near) => format!("invalid option '--{long}' (did you mean '--{near}'?)"),
        None => format!("invalid option '--{long}'"),
    }
}

/// Why `word` is not a command: the closest command, or the list of them.
pub fn unknown_command(word: &str) -> String {
    match closest(word, COMMANDS.iter().map(|h| h.name)) {
        Some(near) => format!("unexpected argument {word:?} (did you mean '{near}'?)"),
        None => {
            let names: Vec<&str> = COMMANDS.iter().map(|h| h.name).collect();
            format!("unexpected argument {word:?} (commands: {})", names.join(", "))
        }
    }
}

/// The candidate nearest to `word` by edit distance (a swap of two neighbours counting as
/// one edit), when it is near enough to be a typo: one edit in four letters.
pub fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (distance(word, c), c))
        .filter(|&(d, c)| d > 0 && d <= (c.chars().count() + 2) / 4)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// two neighbouring characters.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // d[i][j]: the distance between the first i characters of a and the first j of b.
    let mut d: Vec<Vec<usize>> = (0..=a.len()).map(|i| vec![i; b.len() + 1]).collect();
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_name_and_strangers_find_none() {
        let serve = || SERVE.longs();
        assert_eq!(closest("roots", serve()), Some("root"));
        assert_eq!(closest("manfiest", serve()), Some("manifest"));
        assert_eq!(closest("log-levle", serve()), Some("log-level"));
        assert_eq!(closest("http-pth", serve()), Some("http-path"));
        assert_eq!(closest("colour", serve()), None);
        assert_eq!(closest("root", serve()), None, "an exact name is no typo");
        let commands = || COMMANDS.iter().map(|h| h.name);
        assert_eq!(closest("chekc", commands()), Some("check"));
        assert_eq!(closest("valdate", commands()), Some("validate"));
        assert_eq!(closest("run", commands()), None);
        assert_eq!(distance("abc", "acb"), 1);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn each_help_lists_its_options_one_line_each() {
        for help in ALL {
            let text = help.text();
            assert!(text.starts_with("usage: baremcp "), "{text}");
            for long in help.longs() {
                let flag = format!("--{long}");
                let listed = |l: &&str| {
                    let l = l.trim_start();
                    let long = if l.get(2..4) == Some(", ") { &l[4..] } else { l };
                    long.split(' ').next() == Some(flag.as_str())
                };
                let lines = text.lines().filter(listed);
                assert_eq!(lines.count(), 1, "{}: {flag} not on one line:\n{text}", help.called());
            }
            assert!(text.lines().all(|l| l.len() <= 100), "{text}");
        }
        let full = full_help();
        assert!(full.lines().all(|l| l.len() <= 100), "{full}");
        for help in COMMANDS {
            assert!(full.contains(&format!("\n  {:8}  {}\n", help.name, help.summary)), "{full}");
        }
    }
}
