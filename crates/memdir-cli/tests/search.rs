//! `memdir search` on the real binary: grep mode's literal defaults, regex, options-like
//! patterns, exit codes, dates, the output budget, awkward files, JSON, and ranked mode's index.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, stderr, stdout};

/// A folder with a few dated logs and a note.
fn fixture() -> Fixture {
    let f = Fixture::new();
    f.put(
        "log/2026-11-01.md",
        "- 09:00 moved the price ($5) after the C++ rewrite\n- 10:00 lunch\n",
    );
    f.put(
        "log/2026-11-15.md",
        "- 09:00 ran memdir --help to check flags\n- 11:00 Price review with Priya\n",
    );
    f.put(
        "log/2026-11-30.md",
        "- 08:00 deploy to prod\n- 08:30 price bump shipped\n",
    );
    f.put(
        "notes/pricing.md",
        "# Pricing\n\nThe price is set per seat.\n",
    );
    f
}

#[test]
fn literal_specials_match_what_they_say() {
    let f = fixture();
    let a = f.cmd().args(["search", "price ($5)"]).assert().success();
    assert_eq!(
        stdout(&a),
        "log/2026-11-01.md:1:- 09:00 moved the price ($5) after the C++ rewrite\n"
    );
    let a = f.cmd().args(["search", "c++"]).assert().success();
    assert_eq!(stdout(&a).lines().count(), 1);
}

#[test]
fn case_insensitive_by_default_and_sensitive_with_s() {
    let f = fixture();
    let a = f.cmd().args(["search", "PRICE"]).assert().success();
    assert_eq!(stdout(&a).lines().count(), 4);
    let a = f.cmd().args(["search", "-s", "Price"]).assert().success();
    assert_eq!(
        stdout(&a),
        "log/2026-11-15.md:2:- 11:00 Price review with Priya\n"
    );
}

#[test]
fn files_come_in_path_order_so_logs_in_date_order() {
    let f = fixture();
    let a = f.cmd().args(["search", "price"]).assert().success();
    let paths: Vec<String> = stdout(&a)
        .lines()
        .map(|l| l.split(':').next().unwrap().to_string())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    assert_eq!(paths.first().unwrap(), "log/2026-11-01.md");
}

#[test]
fn regex_is_opt_in_and_a_bad_one_exits_2() {
    let f = fixture();
    // Without --regex the dot and star are literal: nothing matches.
    f.cmd().args(["search", "dep.*prod"]).assert().code(1);
    let a = f
        .cmd()
        .args(["search", "--regex", "dep.*prod"])
        .assert()
        .success();
    assert_eq!(stdout(&a), "log/2026-11-30.md:1:- 08:00 deploy to prod\n");
    let a = f
        .cmd()
        .args(["search", "--regex", "pr(ice"])
        .assert()
        .code(2);
    assert!(stdout(&a).is_empty());
    assert!(
        stderr(&a).contains("bad regular expression"),
        "{}",
        stderr(&a)
    );
}

#[test]
fn option_like_patterns() {
    let f = fixture();
    let a = f.cmd().args(["search", "--", "--help"]).assert().success();
    assert_eq!(
        stdout(&a),
        "log/2026-11-15.md:1:- 09:00 ran memdir --help to check flags\n"
    );
    // An unknown option-like word is taken as the pattern.
    let a = f.cmd().args(["search", "--help-me"]).assert().code(1);
    assert!(stdout(&a).is_empty());
}

#[test]
fn no_match_exits_1_with_no_output() {
    let f = fixture();
    let a = f.cmd().args(["search", "zebra crossing"]).assert().code(1);
    assert!(stdout(&a).is_empty());
    assert!(stderr(&a).is_empty());
}

#[test]
fn since_and_until_filter_dated_files_by_name() {
    let f = fixture();
    let a = f
        .cmd()
        .args(["search", "price", "--since", "2026-11-10", "--path", "log"])
        .assert()
        .success();
    assert_eq!(
        stdout(&a),
        "log/2026-11-15.md:2:- 11:00 Price review with Priya\nlog/2026-11-30.md:2:- 08:30 price bump shipped\n"
    );
    let a = f
        .cmd()
        .args(["search", "price", "--until", "2026-11-15"])
        .assert()
        .success();
    let out = stdout(&a);
    assert!(!out.contains("2026-11-30"), "{out}");
    // Undated files are not filtered by date.
    assert!(out.contains("notes/pricing.md"), "{out}");
    f.cmd()
        .args(["search", "price", "--since", "30 days ago"])
        .assert()
        .code(2);
}

#[test]
fn path_glob_narrows_and_a_bad_glob_exits_2() {
    let f = fixture();
    let a = f
        .cmd()
        .args(["search", "price", "--path", "notes/**"])
        .assert()
        .success();
    assert_eq!(
        stdout(&a),
        "notes/pricing.md:3:The price is set per seat.\n"
    );
    f.cmd()
        .args(["search", "price", "--path", "log/[oops"])
        .assert()
        .code(2);
}

#[test]
fn context_lines() {
    let f = fixture();
    let a = f
        .cmd()
        .args(["search", "-C", "1", "lunch"])
        .assert()
        .success();
    assert_eq!(
        stdout(&a),
        "log/2026-11-01.md-1-- 09:00 moved the price ($5) after the C++ rewrite\nlog/2026-11-01.md:2:- 10:00 lunch\n"
    );
}

#[test]
fn output_budget_stops_and_says_how_many_were_left_out() {
    let f = Fixture::new();
    let mut text = String::new();
    for i in 0..200 {
        text.push_str(&format!("- 09:00 budget line {i}\n"));
    }
    f.put("log/2026-11-29.md", &text);
    let a = f
        .cmd()
        .args(["search", "budget line", "--max-bytes", "300"])
        .assert()
        .success();
    let out = stdout(&a);
    assert!(out.len() < 300 + 200, "{out}");
    let shown = out.lines().filter(|l| l.starts_with("log/")).count();
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("... {} more matches left out", 200 - shown)),
        "{last}"
    );
    // --limit caps lines the same way.
    let a = f
        .cmd()
        .args(["search", "budget line", "--limit", "3"])
        .assert()
        .success();
    assert_eq!(stdout(&a).lines().count(), 4);
    assert!(stdout(&a).contains("... 197 more matches"));
}

#[test]
fn binary_files_and_invalid_utf8_do_not_crash_or_flood() {
    let f = fixture();
    let mut bin = vec![0u8; 4096];
    bin.extend_from_slice(b"price\n");
    bin.extend(std::iter::repeat_n(b'x', 100_000));
    std::fs::write(f.root().join("blob.bin"), &bin).unwrap();
    std::fs::write(f.root().join("latin1.md"), b"caf\xe9 price list\n").unwrap();
    let mut long = b"price ".to_vec();
    long.extend(std::iter::repeat_n(b'y', 50_000));
    std::fs::write(f.root().join("long.md"), &long).unwrap();
    let a = f.cmd().args(["search", "price"]).assert().success();
    let out = stdout(&a);
    assert!(!out.contains("blob.bin"), "{out}");
    assert!(out.contains("latin1.md:1:caf\u{FFFD} price list"), "{out}");
    assert!(out.len() < 5000, "a long line floods: {} bytes", out.len());
    assert!(out.contains("more bytes]"), "{out}");
}

#[test]
fn memdir_and_git_folders_are_never_searched() {
    let f = fixture();
    f.put(".git/config", "price in git\n");
    f.put(".memdir/notes.txt", "price in memdir\n");
    let a = f.cmd().args(["search", "price in"]).assert().code(1);
    assert!(stdout(&a).is_empty());
}

#[test]
fn json_one_object_per_line() {
    let f = fixture();
    let a = f
        .cmd()
        .args(["search", "--json", "price"])
        .assert()
        .success();
    let lines: Vec<serde_json::Value> = stdout(&a)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["path"], "log/2026-11-01.md");
    assert_eq!(lines[0]["line"], 1);
    assert_eq!(
        lines[0]["text"],
        "- 09:00 moved the price ($5) after the C++ rewrite"
    );
    assert_eq!(lines[0]["date"], "2026-11-01");
    assert_eq!(lines[3]["path"], "notes/pricing.md");
    assert!(lines[3].get("date").is_none(), "notes have no date");
    let a = f
        .cmd()
        .args(["search", "--json", "--mode", "ranked", "price"])
        .assert()
        .success();
    for l in stdout(&a).lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(v["score"].as_f64().unwrap() >= 0.0, "{l}");
        assert!(v["path"].is_string() && v["line"].is_u64() && v["text"].is_string());
    }
}

/// A small memory where the answer uses other word forms than the question.
fn ranked_fixture() -> Fixture {
    let f = Fixture::new();
    f.put(
        "log/2026-10-02.md",
        "- 09:00 Priya: the team agreed on the quarterly roadmap\n- 09:30 Marco: coffee machine is broken again\n",
    );
    f.put(
        "log/2026-10-03.md",
        "- 10:00 Priya: we migrated the billing database to PostgreSQL last night\n- 10:05 Marco: nice, any downtime?\n",
    );
    f.put(
        "log/2026-10-04.md",
        "- 11:00 Marco: booked flights for the offsite in Lisbon\n- 11:10 Priya: I will handle hotels\n",
    );
    f.put(
        "notes/people.md",
        "Priya runs billing. Marco runs travel.\n",
    );
    f
}

#[test]
fn ranked_finds_an_inflected_fact_grep_misses() {
    let f = ranked_fixture();
    let q = "when did we migrate billing databases";
    f.cmd().args(["search", q]).assert().code(1);
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", q])
        .assert()
        .success();
    let first = stdout(&a).lines().next().unwrap().to_string();
    assert!(
        first.starts_with("log/2026-10-03.md:1:- 10:00 Priya: we migrated the billing database"),
        "{first}"
    );
    assert!(first.contains("[score "), "{first}");
    assert!(first.ends_with(", 2026-10-03]"), "{first}");
}

#[test]
fn ranked_limit_defaults_to_ten() {
    let f = Fixture::new();
    let mut text = String::new();
    for i in 0..30 {
        text.push_str(&format!("- 09:00 lighthouse visit number {i}\n"));
    }
    f.put("log/2026-11-29.md", &text);
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", "lighthouses"])
        .assert()
        .success();
    assert_eq!(stdout(&a).lines().count(), 10);
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", "--limit", "3", "lighthouses"])
        .assert()
        .success();
    let out = stdout(&a);
    assert_eq!(out.lines().count(), 4, "three lines and the trailer: {out}");
    assert!(
        out.lines()
            .nth(3)
            .unwrap()
            .contains("more matches left out"),
        "{out}"
    );
}

#[test]
fn deleting_the_index_is_harmless() {
    let f = ranked_fixture();
    let q = ["search", "--mode", "ranked", "flights offsite"];
    let before = stdout(&f.cmd().args(q).assert().success());
    assert!(f.exists(".memdir/search.sqlite"));
    std::fs::remove_file(f.root().join(".memdir/search.sqlite")).unwrap();
    let after = stdout(&f.cmd().args(q).assert().success());
    assert_eq!(before, after);
    // Even the whole .memdir folder.
    std::fs::remove_dir_all(f.root().join(".memdir")).unwrap();
    let again = stdout(&f.cmd().args(q).assert().success());
    assert_eq!(before, again);
}

#[test]
fn a_corrupt_index_is_rebuilt() {
    let f = ranked_fixture();
    let q = ["search", "--mode", "ranked", "flights offsite"];
    let before = stdout(&f.cmd().args(q).assert().success());
    std::fs::write(f.root().join(".memdir/search.sqlite"), b"not a database").unwrap();
    let after = stdout(&f.cmd().args(q).assert().success());
    assert_eq!(before, after);
}

#[test]
fn hand_edited_files_are_picked_up_by_ranked_mode() {
    let f = ranked_fixture();
    let q = ["search", "--mode", "ranked", "kayaking trip"];
    f.cmd().args(q).assert().code(1);
    // Edit a file by hand (same size is fine: the content hash decides).
    f.put(
        "log/2026-10-04.md",
        "- 11:00 Marco: booked kayaking for the offsite in Lisbon\n- 11:10 Priya: I will handle hotels\n",
    );
    let a = f.cmd().args(q).assert().success();
    assert!(
        stdout(&a).starts_with("log/2026-10-04.md:1:"),
        "{}",
        stdout(&a)
    );
    // And a deleted file drops out.
    std::fs::remove_file(f.root().join("log/2026-10-04.md")).unwrap();
    f.cmd().args(q).assert().code(1);
}

#[test]
fn ranked_respects_path_and_dates() {
    let f = ranked_fixture();
    let a = f
        .cmd()
        .args([
            "search",
            "--mode",
            "ranked",
            "Priya billing",
            "--path",
            "notes",
        ])
        .assert()
        .success();
    assert_eq!(stdout(&a).lines().count(), 1);
    assert!(stdout(&a).starts_with("notes/people.md:1:"));
    let a = f
        .cmd()
        .args([
            "search",
            "--mode",
            "ranked",
            "billing",
            "--until",
            "2026-10-02",
            "--path",
            "log",
        ])
        .assert()
        .code(1);
    assert!(stdout(&a).is_empty());
}

#[test]
fn bad_mode_and_empty_pattern_exit_2() {
    let f = fixture();
    f.cmd()
        .args(["search", "--mode", "fuzzy", "x"])
        .assert()
        .code(2);
    f.cmd().args(["search", ""]).assert().code(2);
}

#[test]
fn results_stream_and_a_closed_pipe_ends_the_search_quietly() {
    let f = Fixture::new();
    for i in 0..40 {
        f.put(
            &format!("notes/n{i:02}.md"),
            &"a rollback line\n".repeat(5_000),
        );
    }
    let (first, res) = f.read_then_close(&["search", "rollback"], 64);
    assert!(String::from_utf8_lossy(&first).starts_with("notes/n00.md:1:a rollback line\n"));
    assert_eq!(res.status.code(), Some(0));
    assert!(
        res.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
}

#[test]
fn every_matching_line_is_printed_once_in_order() {
    // Many files and matches in nested folders whose names sort differently as names than as
    // whole paths (`f01.md` < `f01/x.md`), to go through the walk that feeds the threads as it
    // goes and the literal path: the output must be exactly the lines, in path and line order,
    // that a plain scan finds.
    let f = Fixture::new();
    let mut files = Vec::new();
    for i in 0..90 {
        let rel = match i % 3 {
            0 => format!("notes/f{:02}.md", i / 3),
            1 => format!("notes/f{:02}/x.md", i / 3),
            _ => format!("notes/f{:02}-b/y.md", i / 3),
        };
        let mut text = String::new();
        for l in 1..=50 {
            let line = if (i * 7 + l) % 3 == 0 {
                format!("line {l} has a ROLLback in it")
            } else {
                format!("line {l} does not")
            };
            text.push_str(&line);
            text.push('\n');
        }
        f.put(&rel, &text);
        files.push((rel, text));
    }
    files.sort();
    let mut want = String::new();
    for (rel, text) in &files {
        for (l, line) in text.lines().enumerate() {
            if line.to_lowercase().contains("rollback") {
                want.push_str(&format!("{rel}:{}:{line}\n", l + 1));
            }
        }
    }
    let a = f.cmd().args(["search", "rollback"]).assert().success();
    assert_eq!(stdout(&a), want);
    let a = f
        .cmd()
        .args(["search", "--regex", "rollback"])
        .assert()
        .success();
    assert_eq!(stdout(&a), want);
    // A budget spent part-way: the first lines in order, then a count of exactly the rest.
    let total = want.lines().count();
    let a = f
        .cmd()
        .args(["search", "--limit", "700", "rollback"])
        .assert()
        .success();
    let out = stdout(&a);
    let first: String = want.lines().take(700).map(|l| format!("{l}\n")).collect();
    assert!(out.starts_with(&first), "{out}");
    assert!(
        out.ends_with(&format!("... {} more matches left out by the output budget: narrow with --path/--since or raise --max-bytes/--limit\n", total - 700)),
        "{out}"
    );
}

#[test]
fn ranked_sees_a_same_size_edit_that_keeps_the_modification_time() {
    // An edit within the clock tick of the last index sync leaves size and mtime as the index
    // recorded them; setting the old mtime back makes that race certain.
    let f = Fixture::new();
    f.put("notes/a.md", "the color is teal\n");
    let path = f.root().join("notes/a.md");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", "teal"])
        .assert()
        .success();
    assert!(stdout(&a).contains("teal"));
    std::fs::write(&path, "the color is plum\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", "plum"])
        .assert()
        .success();
    assert!(stdout(&a).contains("notes/a.md:1:the color is plum"));
    f.cmd()
        .args(["search", "--mode", "ranked", "teal"])
        .assert()
        .code(1);
}
