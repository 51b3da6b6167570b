//! The Anthropic memory tool contract (`memory_20250818`), run through the real binary with
//! `memdir tool`: every return and error string of the official "Memory tool" docs page, and the
//! edge cases it warns about. Where the Python or TypeScript SDK helpers say something else, the
//! test names the difference and follows the docs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{Fixture, stdout};
use serde_json::{Value, json};

/// Runs one tool call; returns the printed text and whether it was an error result.
fn call(f: &Fixture, input: Value) -> (String, bool) {
    let a = f.cmd().arg("tool").write_stdin(input.to_string()).assert();
    let code = a.get_output().status.code();
    let text = stdout(&a);
    let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
    match code {
        Some(0) => (text, false),
        Some(1) => (text, true),
        other => panic!("unexpected exit {other:?} for {input}: {text}"),
    }
}

/// Asserts an exact result text and its error flag.
fn check(f: &Fixture, input: Value, want: &str, want_error: bool) {
    let (got, is_error) = call(f, input.clone());
    assert_eq!(got, want, "input: {input}");
    assert_eq!(is_error, want_error, "error flag for {input}: {got}");
}

#[test]
fn view_of_an_empty_store_lists_the_root_itself() {
    let f = Fixture::empty();
    std::fs::create_dir_all(f.root()).unwrap();
    check(
        &f,
        json!({"command": "view", "path": "/memories"}),
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories",
        false,
    );
}

#[test]
fn view_of_a_folder_goes_two_levels_with_sizes_and_tabs() {
    let f = Fixture::empty();
    f.put("customer_service_guidelines.xml", &"x".repeat(1536));
    f.put("refund_policies.xml", &"y".repeat(2048));
    f.put("a/b/deep.md", "hidden by depth\n");
    f.put("a/b/c/deeper.md", "too deep\n");
    f.put(".hidden.md", "secret\n");
    f.put("node_modules/pkg/index.js", "x\n");
    // The docs' header, with "and node_modules" (the Python helper omits those words and lists
    // node_modules); sizes keep one decimal from 1K up ("1.5K", "2.0K"; Python prints "2K").
    check(
        &f,
        json!({"command": "view", "path": "/memories"}),
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n\
3.5K\t/memories\n\
25B\t/memories/a/\n\
25B\t/memories/a/b/\n\
1.5K\t/memories/customer_service_guidelines.xml\n\
2.0K\t/memories/refund_policies.xml",
        false,
    );
    check(
        &f,
        json!({"command": "view", "path": "/memories/a"}),
        "Here're the files and directories up to 2 levels deep in /memories/a, excluding hidden items and node_modules:\n\
25B\t/memories/a\n\
25B\t/memories/a/b/\n\
9B\t/memories/a/b/c/\n\
16B\t/memories/a/b/deep.md",
        false,
    );
}

#[test]
fn view_of_a_file_numbers_lines_six_wide_with_a_tab() {
    let f = Fixture::empty();
    let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    f.put("notes.txt", &text);
    let (out, err) = call(
        &f,
        json!({"command": "view", "path": "/memories/notes.txt"}),
    );
    assert!(!err);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "Here's the content of /memories/notes.txt with line numbers:"
    );
    assert_eq!(lines[1], "     1\tline 1");
    assert_eq!(lines[10], "    10\tline 10");
    assert_eq!(lines[100], "   100\tline 100");
    // A final newline ends line 100; it does not add an empty line 101 (the SDK helpers split
    // on "\n" and show one).
    assert_eq!(lines.len(), 101);
}

#[test]
fn view_range_with_minus_one_reads_to_the_end() {
    let f = Fixture::empty();
    f.put("t.md", "a\nb\nc\nd\n");
    check(
        &f,
        json!({"command": "view", "path": "/memories/t.md", "view_range": [3, -1]}),
        "Here's the content of /memories/t.md with line numbers:\n     3\tc\n     4\td",
        false,
    );
    check(
        &f,
        json!({"command": "view", "path": "/memories/t.md", "view_range": [2, 3]}),
        "Here's the content of /memories/t.md with line numbers:\n     2\tb\n     3\tc",
        false,
    );
    let (out, err) = call(
        &f,
        json!({"command": "view", "path": "/memories/t.md", "view_range": [9, -1]}),
    );
    assert!(
        err && out.contains("Invalid `view_range` parameter: [9, -1]"),
        "{out}"
    );
}

#[test]
fn view_truncates_long_files_and_says_how_to_page() {
    let f = Fixture::empty();
    let text: String = (1..=2000).map(|i| format!("{i:>20}\n")).collect();
    f.put("big.md", &text);
    let (out, err) = call(&f, json!({"command": "view", "path": "/memories/big.md"}));
    assert!(!err);
    assert!(
        out.ends_with("view the rest with \"view_range\": [762, -1]]"),
        "{}",
        &out[out.len() - 200..]
    );
    let (next, _) = call(
        &f,
        json!({"command": "view", "path": "/memories/big.md", "view_range": [762, -1]}),
    );
    assert!(next.contains("   762\t                 762"));
}

#[test]
fn view_of_a_missing_path() {
    let f = Fixture::new();
    check(
        &f,
        json!({"command": "view", "path": "/memories/nope.md"}),
        "The path /memories/nope.md does not exist. Please provide a valid path.",
        true,
    );
}

#[test]
fn create_then_create_again() {
    let f = Fixture::new();
    check(
        &f,
        json!({"command": "create", "path": "/memories/notes.txt", "file_text": "Meeting notes:\n- Discussed project timeline\n- Next steps defined\n"}),
        "File created successfully at: /memories/notes.txt",
        false,
    );
    assert_eq!(
        f.get("notes.txt"),
        "Meeting notes:\n- Discussed project timeline\n- Next steps defined\n"
    );
    // The docs' reference behaviour: an error, never an overwrite (the SDK helpers say the same
    // text without "Error: ").
    check(
        &f,
        json!({"command": "create", "path": "/memories/notes.txt", "file_text": "other"}),
        "Error: File /memories/notes.txt already exists",
        true,
    );
    assert!(f.get("notes.txt").starts_with("Meeting notes:"));
    check(
        &f,
        json!({"command": "create", "path": "/memories/deep/er/x.md", "file_text": "x"}),
        "File created successfully at: /memories/deep/er/x.md",
        false,
    );
}

#[test]
fn str_replace_success_shows_a_numbered_snippet() {
    let f = Fixture::empty();
    f.put(
        "preferences.txt",
        "Line 1\nFavorite color: blue\nLine 3\nLine 4\nLine 5\nLine 6\n",
    );
    check(
        &f,
        json!({"command": "str_replace", "path": "/memories/preferences.txt", "old_str": "Favorite color: blue", "new_str": "Favorite color: green"}),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tLine 1\n     2\tFavorite color: green\n     3\tLine 3\n     4\tLine 4",
        false,
    );
    assert!(f.get("preferences.txt").contains("Favorite color: green\n"));
}

#[test]
fn str_replace_matches_multi_line_old_str() {
    // The TypeScript helper compares old_str line by line, so a multi-line old_str never
    // matches there; the docs say "did not appear verbatim", and it does appear verbatim.
    let f = Fixture::empty();
    f.put("t.md", "a\nb\nc\nd\n");
    let (out, err) = call(
        &f,
        json!({"command": "str_replace", "path": "/memories/t.md", "old_str": "b\nc\n", "new_str": "B\n"}),
    );
    assert!(!err, "{out}");
    assert_eq!(f.get("t.md"), "a\nB\nd\n");
}

#[test]
fn str_replace_without_new_str_deletes_old_str() {
    let f = Fixture::empty();
    f.put("t.md", "keep drop keep\n");
    let (_, err) = call(
        &f,
        json!({"command": "str_replace", "path": "/memories/t.md", "old_str": " drop"}),
    );
    assert!(!err);
    assert_eq!(f.get("t.md"), "keep keep\n");
}

#[test]
fn str_replace_errors_are_the_docs_strings() {
    let f = Fixture::empty();
    f.put("t.md", "x\nsame\ny\nsame\n");
    check(
        &f,
        json!({"command": "str_replace", "path": "/memories/t.md", "old_str": "absent", "new_str": "z"}),
        "No replacement was performed, old_str `absent` did not appear verbatim in /memories/t.md.",
        true,
    );
    // No trailing period, as in the docs.
    check(
        &f,
        json!({"command": "str_replace", "path": "/memories/t.md", "old_str": "same", "new_str": "z"}),
        "No replacement was performed. Multiple occurrences of old_str `same` in lines: 2, 4. Please ensure it is unique",
        true,
    );
    check(
        &f,
        json!({"command": "str_replace", "path": "/memories/gone.md", "old_str": "a", "new_str": "b"}),
        "Error: The path /memories/gone.md does not exist. Please provide a valid path.",
        true,
    );
    std::fs::create_dir_all(f.root().join("dir")).unwrap();
    check(
        &f,
        json!({"command": "str_replace", "path": "/memories/dir", "old_str": "a", "new_str": "b"}),
        "Error: The path /memories/dir does not exist. Please provide a valid path.",
        true,
    );
    assert_eq!(f.get("t.md"), "x\nsame\ny\nsame\n");
}

#[test]
fn insert_at_zero_and_at_the_end() {
    let f = Fixture::empty();
    f.put("todo.txt", "one\ntwo\n");
    check(
        &f,
        json!({"command": "insert", "path": "/memories/todo.txt", "insert_line": 0, "insert_text": "zero\n"}),
        "The file /memories/todo.txt has been edited.",
        false,
    );
    assert_eq!(f.get("todo.txt"), "zero\none\ntwo\n");
    check(
        &f,
        json!({"command": "insert", "path": "/memories/todo.txt", "insert_line": 3, "insert_text": "- Review memory tool documentation\n"}),
        "The file /memories/todo.txt has been edited.",
        false,
    );
    assert_eq!(
        f.get("todo.txt"),
        "zero\none\ntwo\n- Review memory tool documentation\n"
    );
    // Text without a final newline still becomes its own line.
    call(
        &f,
        json!({"command": "insert", "path": "/memories/todo.txt", "insert_line": 1, "insert_text": "half"}),
    );
    assert_eq!(
        f.get("todo.txt"),
        "zero\nhalf\none\ntwo\n- Review memory tool documentation\n"
    );
}

#[test]
fn insert_errors_are_the_docs_strings() {
    let f = Fixture::empty();
    f.put("t.md", "line1\nline2");
    // The docs' wording (the TypeScript helper's too); the Python helper says
    // "It should be within the range [0, 2]." instead.
    check(
        &f,
        json!({"command": "insert", "path": "/memories/t.md", "insert_line": 10, "insert_text": "x"}),
        "Error: Invalid `insert_line` parameter: 10. It should be within the range of lines of the file: [0, 2]",
        true,
    );
    check(
        &f,
        json!({"command": "insert", "path": "/memories/t.md", "insert_line": -1, "insert_text": "x"}),
        "Error: Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 2]",
        true,
    );
    check(
        &f,
        json!({"command": "insert", "path": "/memories/none.md", "insert_line": 0, "insert_text": "x"}),
        "Error: The path /memories/none.md does not exist",
        true,
    );
    assert_eq!(f.get("t.md"), "line1\nline2");
}

#[test]
fn delete_files_folders_but_never_the_root() {
    let f = Fixture::empty();
    f.put("old_file.txt", "x");
    f.put("dir/a/b.md", "x");
    check(
        &f,
        json!({"command": "delete", "path": "/memories/old_file.txt"}),
        "Successfully deleted /memories/old_file.txt",
        false,
    );
    assert!(!f.exists("old_file.txt"));
    check(
        &f,
        json!({"command": "delete", "path": "/memories/dir"}),
        "Successfully deleted /memories/dir",
        false,
    );
    assert!(!f.exists("dir"));
    check(
        &f,
        json!({"command": "delete", "path": "/memories/old_file.txt"}),
        "Error: The path /memories/old_file.txt does not exist",
        true,
    );
    for root in ["/memories", "/memories/", "/memories/."] {
        check(
            &f,
            json!({"command": "delete", "path": root}),
            "Error: Cannot delete the /memories directory itself",
            true,
        );
    }
    assert!(f.root().is_dir());
}

#[test]
fn rename_never_overwrites_and_never_moves_the_root() {
    let f = Fixture::empty();
    f.put("draft.txt", "draft");
    f.put("final.txt", "final");
    check(
        &f,
        json!({"command": "rename", "old_path": "/memories/draft.txt", "new_path": "/memories/final.txt"}),
        "Error: The destination /memories/final.txt already exists",
        true,
    );
    assert_eq!(f.get("final.txt"), "final");
    check(
        &f,
        json!({"command": "rename", "old_path": "/memories/draft.txt", "new_path": "/memories/archive/draft.txt"}),
        "Successfully renamed /memories/draft.txt to /memories/archive/draft.txt",
        false,
    );
    assert_eq!(f.get("archive/draft.txt"), "draft");
    check(
        &f,
        json!({"command": "rename", "old_path": "/memories/draft.txt", "new_path": "/memories/x.txt"}),
        "Error: The path /memories/draft.txt does not exist",
        true,
    );
    check(
        &f,
        json!({"command": "rename", "old_path": "/memories", "new_path": "/memories/x"}),
        "Error: Cannot rename the /memories directory itself",
        true,
    );
}

#[test]
fn traversal_is_refused_in_every_command() {
    let f = Fixture::new();
    let outside = f.dir.path().join("secrets.env");
    std::fs::write(&outside, "TOKEN=1\n").unwrap();
    let bad = [
        "/memories/../secrets.env",
        "/memories/../../secrets.env",
        "/memories/a/../../secrets.env",
        "/memories/%2e%2e/secrets.env",
        "/memories/%2E%2E%2Fsecrets.env",
        "/memories/..%2fsecrets.env",
        "/memories/..\\secrets.env",
        "/etc/passwd",
        "../secrets.env",
        "/memoriesx/a.md",
    ];
    for p in bad {
        let inputs = [
            json!({"command": "view", "path": p}),
            json!({"command": "create", "path": p, "file_text": "pwned"}),
            json!({"command": "str_replace", "path": p, "old_str": "TOKEN", "new_str": "x"}),
            json!({"command": "insert", "path": p, "insert_line": 0, "insert_text": "x"}),
            json!({"command": "delete", "path": p}),
            json!({"command": "rename", "old_path": p, "new_path": "/memories/stolen.env"}),
            json!({"command": "rename", "old_path": "/memories/core.md", "new_path": p}),
        ];
        for input in inputs {
            let (out, err) = call(&f, input.clone());
            assert!(err, "accepted {input}: {out}");
            assert!(
                out.contains("would escape /memories directory")
                    || out.contains("Path must start with /memories"),
                "{input}: {out}"
            );
        }
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "TOKEN=1\n");
    assert!(f.exists("core.md") && !f.exists("stolen.env"));
}

#[test]
fn a_symlink_out_of_the_root_is_not_followed() {
    let f = Fixture::new();
    let outside = f.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("s.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, f.root().join("link")).unwrap();
    let (out, err) = call(
        &f,
        json!({"command": "view", "path": "/memories/link/s.txt"}),
    );
    assert!(err, "{out}");
    assert!(!out.contains("secret"), "{out}");
    let (out, err) = call(
        &f,
        json!({"command": "create", "path": "/memories/link/new.txt", "file_text": "x"}),
    );
    assert!(err, "{out}");
    assert!(!outside.join("new.txt").exists());
}

#[test]
fn core_md_stays_under_its_cap() {
    let f = Fixture::new();
    let (out, err) = call(
        &f,
        json!({"command": "insert", "path": "/memories/core.md", "insert_line": 0, "insert_text": "x\n".repeat(101)}),
    );
    assert!(err, "{out}");
    assert!(
        out.contains("over its cap") && out.contains("remove a line first"),
        "{out}"
    );
    assert_eq!(f.get("core.md"), "");
}

#[test]
fn malformed_calls_are_error_results() {
    let f = Fixture::new();
    check(
        &f,
        json!({"command": "launch", "path": "/memories"}),
        "Error: Unknown command: 'launch'. Valid commands are: view, create, str_replace, insert, delete, rename",
        true,
    );
    check(
        &f,
        json!({"command": "create", "path": "/memories/a.md"}),
        "Error: missing required parameter `file_text` for command `create`",
        true,
    );
    let (out, err) = call(&f, json!({"path": "/memories"}));
    assert!(err && out.starts_with("Error: missing `command`"), "{out}");
    // Input that is not JSON is an error result too: its text on stdout, exit 1.
    let a = f.cmd().arg("tool").write_stdin("not json").assert().code(1);
    let out = common::stdout(&a);
    assert!(
        out.starts_with("Error: the tool input is not one JSON object") && out.ends_with("}\n"),
        "{out}"
    );
    assert!(common::stderr(&a).is_empty());
}

#[test]
fn the_first_call_on_a_missing_folder_creates_it() {
    let f = Fixture::empty();
    let (out, err) = call(&f, json!({"command": "view", "path": "/memories"}));
    assert!(!err, "{out}");
    assert!(out.contains("\t/memories/core.md"), "{out}");
    assert!(f.exists("core.md"));
}
