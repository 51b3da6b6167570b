//! Ranked search as people type it, on the real binary: quoted phrases, `-word`, frontmatter
//! filters (`type:`, `tag:`, `name:`), and `--files` (one line per file, then the total).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, stderr, stdout};

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.put(
        "notes/retry.md",
        "---\nname: payment-retry-policy\ndescription: retries\ntype: project\ntags: [billing, payments]\n---\nthe retry queue never retries a captured payment\na payment retry waits an hour\n",
    );
    f.put(
        "notes/refund.md",
        "---\nname: refund-flow\ndescription: refunds\ntype: project\ntags: billing\n---\na refund payment is retried by hand\n",
    );
    f.put(
        "notes/me.md",
        "---\nname: me\ndescription: about me\ntype: user\n---\nI retry my payment passwords\n",
    );
    f.put(
        "log/2026-11-30.md",
        "- 09:00 payment captured, then a retry\n- 09:30 lunch\n",
    );
    f
}

/// `path:line` of every result line of a ranked search (the trailer left out).
fn ranked(f: &Fixture, args: &[&str]) -> Vec<String> {
    let mut all = vec!["search", "--mode", "ranked"];
    all.extend_from_slice(args);
    let a = f.cmd().args(&all).assert().success();
    stdout(&a)
        .lines()
        .filter(|l| l.contains(':') && !l.ends_with("matched"))
        .map(|l| l.splitn(3, ':').take(2).collect::<Vec<_>>().join(":"))
        .collect()
}

#[test]
fn a_quoted_phrase_needs_its_words_in_order() {
    let f = fixture();
    assert_eq!(ranked(&f, &["\"captured payment\""]), ["notes/retry.md:7"]);
    // Stemmed like the rest of ranked search: "payment retries" is "payment retry" (and
    // "payment-retry-policy", "payment is retried"), but not "retries a captured payment".
    let mut hits = ranked(&f, &["\"payment retries\""]);
    hits.sort();
    assert_eq!(
        hits,
        ["notes/refund.md:7", "notes/retry.md:2", "notes/retry.md:8"]
    );
    // The words alone, without quotes, find more.
    assert!(ranked(&f, &["captured payment"]).len() > 1);
}

#[test]
fn minus_a_word_leaves_out_its_lines() {
    let f = fixture();
    let all = ranked(&f, &["payment"]);
    assert!(all.contains(&"notes/refund.md:7".to_string()), "{all:?}");
    let some = ranked(&f, &["payment -refund -passwords"]);
    assert!(!some.is_empty());
    assert!(
        some.iter()
            .all(|h| !h.starts_with("notes/refund.md") && !h.starts_with("notes/me.md")),
        "{some:?}"
    );
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", "--", "-payment"])
        .assert()
        .code(2);
    assert!(stderr(&a).contains("besides -exclusions"), "{}", stderr(&a));
}

#[test]
fn frontmatter_filters_keep_matching_notes() {
    let f = fixture();
    // The log line and notes/me.md (type: user) mention payments too.
    assert!(ranked(&f, &["payment"]).len() > 5);
    let mut hits = ranked(&f, &["payment type:project tag:billing"]);
    hits.sort();
    // Frontmatter lines are text too: retry.md's name and tags lines hold "payment".
    assert_eq!(
        hits,
        [
            "notes/refund.md:7",
            "notes/retry.md:2",
            "notes/retry.md:5",
            "notes/retry.md:7",
            "notes/retry.md:8"
        ]
    );
    let tagged = ranked(&f, &["payment tag:payments"]);
    assert!(
        !tagged.is_empty() && tagged.iter().all(|h| h.starts_with("notes/retry.md:")),
        "{tagged:?}"
    );
    // A filter alone lists the notes it keeps, each by its first body line.
    assert_eq!(ranked(&f, &["name:refund-flow"]), ["notes/refund.md:7"]);
    assert_eq!(
        ranked(&f, &["type:project"]),
        ["notes/refund.md:7", "notes/retry.md:7"]
    );
    f.cmd()
        .args(["search", "--mode", "ranked", "payment type:reference"])
        .assert()
        .code(1);
}

#[test]
fn files_groups_by_file_and_counts_them() {
    let f = fixture();
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", "--files", "payment retry"])
        .assert()
        .success();
    let out = stdout(&a);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.last(), Some(&"4 files matched"), "{out}");
    let files: Vec<&str> = lines[..lines.len() - 1]
        .iter()
        .map(|l| l.split(':').next().unwrap())
        .collect();
    let mut distinct = files.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(files.len(), 4, "{out}");
    assert_eq!(distinct.len(), 4, "one line per file: {out}");

    let a = f
        .cmd()
        .args([
            "search",
            "--mode",
            "ranked",
            "--files",
            "--limit",
            "2",
            "payment retry",
        ])
        .assert()
        .success();
    let out = stdout(&a);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("4 files matched, 2 shown"),
        "{out}"
    );
    let a = f
        .cmd()
        .args(["search", "--files", "payment"])
        .assert()
        .code(2);
    assert!(stderr(&a).contains("--mode ranked"), "{}", stderr(&a));
}
