//! Superseded notes on the real binary (issue 34, "current truth"): `memdir note supersede`,
//! what it refuses, the index without the old note, ranked and hybrid search putting the
//! successor first (grep unchanged), and lint on links to superseded notes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, stderr, stdout};
use memdir_test_model::TinyModel;

const OLD: &str = "---\nname: retry-v1\ndescription: the first payment retry rule\ntype: project\n---\npayment retry: a failed payment retry runs every hour, retry after retry\n";
const NEW: &str = "---\nname: retry-v2\ndescription: the payment retry rule since November\ntype: project\n---\na payment retry runs once a day\n";

/// Two notes on one subject, the old one matching the question's words better, and a note and
/// a log line linking to the old one.
fn fixture() -> Fixture {
    let f = Fixture::new();
    f.put("notes/retry-v1.md", OLD);
    f.put("notes/retry-v2.md", NEW);
    f.put(
        "notes/billing.md",
        "---\nname: billing\ndescription: how billing works\n---\nRetries: see [[retry-v1]].\nAlso [[retry-v2]].\n",
    );
    f.cmd().arg("index").assert().success();
    f
}

/// `path:line` of each result line of a search.
fn hits(f: &Fixture, args: &[&str]) -> Vec<String> {
    let a = f.cmd().arg("search").args(args).assert().success();
    stdout(&a)
        .lines()
        .filter(|l| l.starts_with("notes/") || l.starts_with("log/"))
        .map(|l| l.splitn(3, ':').take(2).collect::<Vec<_>>().join(":"))
        .collect()
}

fn first_of(hits: &[String], file: &str) -> Option<usize> {
    hits.iter().position(|h| h.starts_with(file))
}

#[test]
fn supersede_writes_one_key_and_the_index_drops_the_old_note() {
    let f = fixture();
    assert!(f.get("MEMORY.md").contains("[retry-v1]"));
    let a = f
        .cmd()
        .args(["note", "supersede", "retry-v1", "[[retry-v2]]"])
        .assert()
        .success();
    assert_eq!(
        stdout(&a),
        "notes/retry-v1.md is superseded by [[retry-v2]] (notes/retry-v2.md)\n"
    );
    // One key added; every other byte kept.
    assert_eq!(
        f.get("notes/retry-v1.md"),
        OLD.replace(
            "type: project\n---",
            "type: project\nsuperseded_by: \"[[retry-v2]]\"\n---"
        )
    );
    let index = f.get("MEMORY.md");
    assert!(!index.contains("retry-v1"), "{index}");
    assert!(index.contains("- [retry-v2](notes/retry-v2.md)"), "{index}");
    // A regenerated index agrees with the one the write kept current.
    f.cmd().arg("index").assert().success();
    assert_eq!(f.get("MEMORY.md"), index);
    // Recorded as one change with its reason.
    let log = stdout(&f.cmd().args(["history", "--json"]).assert().success());
    let last = log.lines().next().unwrap();
    assert!(last.contains("note supersede"), "{last}");
    assert!(last.contains("superseded by [[retry-v2]]"), "{last}");
    // Again: nothing to do, nothing written.
    let a = f
        .cmd()
        .args(["note", "supersede", "notes/retry-v1.md", "retry-v2"])
        .assert()
        .success();
    assert!(stdout(&a).contains("already superseded"), "{}", stdout(&a));
    let after = stdout(&f.cmd().args(["history", "--json"]).assert().success());
    assert_eq!(after.lines().count(), log.lines().count());
    // A reason given by the writer is the one recorded.
    f.put(
        "notes/retry-v3.md",
        "---\nname: retry-v3\ndescription: d\n---\nx\n",
    );
    f.cmd()
        .args([
            "--reason",
            "the rule changed again",
            "note",
            "supersede",
            "retry-v2",
            "retry-v3",
        ])
        .assert()
        .success();
    let log = stdout(&f.cmd().args(["history", "--json"]).assert().success());
    assert!(
        log.lines()
            .next()
            .unwrap()
            .contains("the rule changed again")
    );
}

#[test]
fn supersede_refuses_missing_notes_the_same_note_and_cycles() {
    let f = fixture();
    f.put(
        "notes/retry-v3.md",
        "---\nname: retry-v3\ndescription: d\n---\nx\n",
    );
    f.cmd()
        .args(["note", "supersede", "retry-v1", "retry-v2"])
        .assert()
        .success();
    f.cmd()
        .args(["note", "supersede", "retry-v2", "retry-v3"])
        .assert()
        .success();
    let before: Vec<String> = [
        "notes/retry-v1.md",
        "notes/retry-v2.md",
        "notes/retry-v3.md",
        "MEMORY.md",
    ]
    .iter()
    .map(|p| f.get(p))
    .collect();
    for (args, code, says) in [
        (["nope", "retry-v2"], 1, "no note is named \"nope\""),
        (["retry-v1", "[[nope]]"], 1, "no note is named \"nope\""),
        (["retry-v2", "notes/retry-v2.md"], 2, "are the same note"),
        (["core.md", "retry-v2"], 2, "is not a note"),
        // Directly: v2 is superseded by v3 already.
        (["retry-v3", "retry-v2"], 2, "would make a cycle"),
        // Through the chain v1 -> v2 -> v3.
        (
            ["retry-v3", "retry-v1"],
            2,
            "notes/retry-v1.md -> notes/retry-v2.md -> notes/retry-v3.md",
        ),
    ] {
        f.put("core.md", "core\n");
        let a = f
            .cmd()
            .args(["note", "supersede"])
            .args(args)
            .assert()
            .code(code);
        let err = stderr(&a);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    let after: Vec<String> = [
        "notes/retry-v1.md",
        "notes/retry-v2.md",
        "notes/retry-v3.md",
        "MEMORY.md",
    ]
    .iter()
    .map(|p| f.get(p))
    .collect();
    assert_eq!(before, after, "a refusal writes nothing");
}

#[test]
fn ranked_search_puts_the_successor_first_and_grep_is_unchanged() {
    let f = fixture();
    let q = ["--mode", "ranked", "payment retry"];
    let before = hits(&f, &q);
    // The old note matches the words better: without supersede it comes first.
    assert!(before[0].starts_with("notes/retry-v1.md"), "{before:?}");
    let grep_before = hits(&f, &["payment"]);
    f.cmd()
        .args(["note", "supersede", "retry-v1", "retry-v2"])
        .assert()
        .success();
    let after = hits(&f, &q);
    let (new, old) = (
        first_of(&after, "notes/retry-v2.md").unwrap(),
        first_of(&after, "notes/retry-v1.md").expect("a superseded note is never removed"),
    );
    assert!(new < old, "{after:?}");
    // Every line of the old note ranks below the successor's best.
    assert!(
        after
            .iter()
            .skip_while(|h| !h.starts_with("notes/retry-v2.md"))
            .count()
            == after.len() - new
            && after[..new]
                .iter()
                .all(|h| !h.starts_with("notes/retry-v1.md")),
        "{after:?}"
    );
    // One hit per file keeps the order too.
    let files = hits(&f, &["--mode", "ranked", "--files", "payment retry"]);
    assert!(
        first_of(&files, "notes/retry-v2.md") < first_of(&files, "notes/retry-v1.md"),
        "{files:?}"
    );
    // Without a successor among the hits the old note still answers, just lower.
    let only_old = hits(&f, &["--mode", "ranked", "hour"]);
    assert_eq!(only_old, ["notes/retry-v1.md:7"]);
    // Grep is never changed: the same files and lines (the old note's body one line lower, below
    // the added key).
    let grep_after = hits(&f, &["payment"]);
    let shifted: Vec<String> = grep_before
        .iter()
        .map(|h| match h.strip_prefix("notes/retry-v1.md:") {
            Some(n) => {
                let n = n.parse::<u32>().unwrap();
                format!("notes/retry-v1.md:{}", if n > 5 { n + 1 } else { n })
            }
            None => h.clone(),
        })
        .collect();
    assert_eq!(grep_after, shifted);
}

#[test]
fn hybrid_search_puts_the_successor_first() {
    let f = fixture();
    let tiny = TinyModel::new();
    let q = ["--mode", "hybrid", "payment retry"];
    let search = |f: &Fixture| {
        let a = f
            .cmd()
            .env("MEMDIR_MODEL_DIR", tiny.path())
            .arg("search")
            .args(q)
            .assert()
            .success();
        stdout(&a)
            .lines()
            .filter(|l| l.starts_with("notes/"))
            .map(|l| l.splitn(3, ':').take(2).collect::<Vec<_>>().join(":"))
            .collect::<Vec<_>>()
    };
    let before = search(&f);
    assert!(before[0].starts_with("notes/retry-v1.md"), "{before:?}");
    f.cmd()
        .args(["note", "supersede", "retry-v1", "retry-v2"])
        .assert()
        .success();
    let after = search(&f);
    let new = first_of(&after, "notes/retry-v2.md").unwrap();
    let old = first_of(&after, "notes/retry-v1.md").expect("never removed");
    assert!(new < old, "{after:?}");
}

#[test]
fn lint_flags_links_to_superseded_notes_and_broken_successors() {
    let f = fixture();
    f.put("log/2026-11-30.md", "- 09:00 followed [[retry-v1]] today\n");
    f.cmd()
        .args(["note", "supersede", "retry-v1", "retry-v2"])
        .assert()
        .success();
    let a = f.cmd().args(["lint", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    let found: Vec<(String, u64, String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["file"].as_str().unwrap().to_string(),
                x["line"].as_u64().unwrap(),
                x["code"].as_str().unwrap().to_string(),
                x["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let superseded: Vec<_> = found.iter().filter(|x| x.2 == "superseded-link").collect();
    // The note's line 5 links to it; the log is not scanned for links (only notes, core, state);
    // the link to the successor and the old note's own superseded_by are fine.
    assert_eq!(superseded.len(), 1, "{found:?}");
    assert_eq!(
        (superseded[0].0.as_str(), superseded[0].1),
        ("notes/billing.md", 5)
    );
    assert!(superseded[0].3.contains("[[retry-v2]]"), "{found:?}");
    assert!(v["errors"] == 0, "{found:?}");

    // A successor that is gone is an error at the superseded_by line, not a second broken link.
    f.cmd().args(["rm", "notes/retry-v2.md"]).assert().success();
    let a = f.cmd().args(["lint", "--json"]).assert().code(2);
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    let codes: Vec<(String, u64, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["file"].as_str().unwrap().to_string(),
                x["line"].as_u64().unwrap(),
                x["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        codes.contains(&("notes/retry-v1.md".into(), 5, "broken-supersede".into())),
        "{codes:?}"
    );
    assert!(
        !codes.contains(&("notes/retry-v1.md".into(), 5, "broken-link".into())),
        "{codes:?}"
    );

    // A value that is not one link is a frontmatter error like any other bad key.
    f.put(
        "notes/bad.md",
        "---\nname: bad\ndescription: d\nsuperseded_by: retry-v2\n---\nx\n",
    );
    let a = f.cmd().args(["lint", "--json"]).assert().code(2);
    let out = stdout(&a);
    assert!(
        out.contains("\"file\":\"notes/bad.md\",\"line\":4") && out.contains("one [[link]]"),
        "{out}"
    );
}

/// The new note of [`fixture`], saying in its text that it replaces the old one.
const SAYS_IT_REPLACES: &str = "---\nname: retry-v2\ndescription: the payment retry rule since November\ntype: project\n---\nThis replaces [[retry-v1]]: a payment retry runs once a day\n";

#[test]
fn consolidate_proposes_a_note_another_replaces_and_accepting_marks_it_as_note_supersede_does() {
    let f = fixture();
    f.put("notes/retry-v2.md", SAYS_IT_REPLACES);
    let a = f.cmd().args(["consolidate", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    let ps = v["proposals"].as_array().unwrap();
    // Only the note that says so: billing's plain link to retry-v1 is no proposal.
    assert_eq!(ps.len(), 1, "{v:#}");
    assert_eq!(ps[0]["kind"], "note-superseded");
    assert_eq!(
        ps[0]["evidence"][0],
        "notes/retry-v2.md:6: This replaces [[retry-v1]]: a payment retry runs once a day"
    );
    let id = ps[0]["id"].as_str().unwrap().to_string();
    // Nothing is marked until a person accepts.
    assert_eq!(f.get("notes/retry-v1.md"), OLD);

    // `review` shows what it proposes, the line that says so, and the frontmatter's diff.
    let out = stdout(&f.cmd().arg("review").assert().success());
    assert!(
        out.contains("proposes: notes/retry-v1.md is superseded by notes/retry-v2.md"),
        "{out}"
    );
    assert!(
        out.contains("evidence: notes/retry-v2.md:6: This replaces"),
        "{out}"
    );
    assert!(out.contains("+superseded_by: \"[[retry-v2]]\""), "{out}");
    let r: serde_json::Value = serde_json::from_str(&stdout(
        &f.cmd().args(["review", "--json"]).assert().success(),
    ))
    .unwrap();
    assert_eq!(r["kind"], "note-superseded");
    assert_eq!(r["target"], "notes/retry-v1.md");
    assert_eq!(r["superseded_by"], "notes/retry-v2.md");
    let file = f.get(&format!("proposals/{id}.md"));
    assert!(
        file.contains(
            "\nkind: note-superseded\ntarget: notes/retry-v1.md\nsuperseded_by: notes/retry-v2.md\n"
        ),
        "{file}"
    );
    // The day's report lists it; a second run does not propose it again.
    assert!(
        f.get("consolidation/2026-11-30.md")
            .contains(&format!("{id} (note-superseded)"))
    );
    let again = stdout(&f.cmd().args(["consolidate", "--json"]).assert().success());
    let again: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["proposals"].as_array().unwrap().len(), 0, "{again:#}");

    // Accepting writes exactly what `memdir note supersede` writes, in one recorded change
    // that also files the proposal away.
    let out = stdout(&f.cmd().args(["review", "accept", &id]).assert().success());
    assert_eq!(
        out,
        format!(
            "accepted {id} from consolidate: notes/retry-v1.md is superseded by notes/retry-v2.md\n"
        )
    );
    let by_hand = fixture();
    by_hand.put("notes/retry-v2.md", SAYS_IT_REPLACES);
    by_hand
        .cmd()
        .args(["note", "supersede", "retry-v1", "retry-v2"])
        .assert()
        .success();
    assert_eq!(f.get("notes/retry-v1.md"), by_hand.get("notes/retry-v1.md"));
    assert!(!f.get("MEMORY.md").contains("[retry-v1]"));
    assert!(!f.root().join(format!("proposals/{id}.md")).exists());
    assert!(
        f.get(&format!("archive/proposals/{id}.md"))
            .contains("kind: note-superseded")
    );
    let msg = common::git(&f, &["log", "-1", "--format=%B"]);
    assert!(msg.contains("review accept"), "{msg}");
    assert!(
        msg.contains(&format!("accept proposal {id} by consolidate")),
        "{msg}"
    );
    let files = common::git(&f, &["show", "--name-only", "--format=", "HEAD"]);
    assert!(
        files.contains("notes/retry-v1.md")
            && files.contains(&format!("archive/proposals/{id}.md")),
        "{files}"
    );
    assert!(stdout(&f.cmd().arg("review").assert().success()).contains("no proposals"));
}

#[test]
fn a_rejected_or_stale_supersede_proposal_changes_no_note() {
    let f = fixture();
    f.put(
        "notes/retry-v2.md",
        &SAYS_IT_REPLACES.replace("This replaces [[retry-v1]]:", "Supersedes [[retry-v1]]."),
    );
    f.put(
        "notes/retry-v3.md",
        "---\nname: retry-v3\ndescription: a payment retry draft\n---\n[[retry-v1]] is outdated.\n",
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(
        &f.cmd().args(["consolidate", "--json"]).assert().success(),
    ))
    .unwrap();
    let ids: Vec<String> = v["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{v:#}");
    f.cmd()
        .args(["review", "reject", &ids[0]])
        .assert()
        .success();
    assert_eq!(f.get("notes/retry-v1.md"), OLD);
    // The successor is gone before the person accepts: a clear one-line error, nothing written.
    std::fs::remove_file(f.root().join("notes/retry-v3.md")).unwrap();
    let a = f
        .cmd()
        .args(["review", "accept", &ids[1]])
        .assert()
        .failure();
    let err = stderr(&a);
    assert!(err.contains("no note is named"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(f.get("notes/retry-v1.md"), OLD);
}
