//! The detector on the corpus: every credential found by the rule of its family, no near miss
//! found, redaction never leaves the secret, and redacting twice changes nothing. Prints
//! precision and recall (BENCHMARKS.md quotes them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod corpus;

#[test]
fn every_secret_is_found_and_no_near_miss() {
    let mut true_pos = 0;
    let mut false_neg = Vec::new();
    for case in corpus::secrets() {
        let found = memdir_secrets::scan(&case.line, Some("log/2026-11-30.md"));
        let hit = found
            .iter()
            .any(|f| f.rule == case.rule && case.line[f.start..f.end] == case.secret);
        if hit {
            true_pos += 1;
        } else {
            false_neg.push(format!("{}: {:?}", case.family, found));
        }
        let redacted = memdir_secrets::redact(&case.line, &found);
        assert!(!redacted.contains(&case.secret), "{}", case.family);
        let head: String = case.secret.chars().take(4).collect();
        assert!(
            redacted.contains(&format!("[redacted:{}:{head}…]", case.rule)),
            "{}: {redacted}",
            case.family
        );
        let again = memdir_secrets::scan(&redacted, Some("log/2026-11-30.md"));
        assert!(again.is_empty(), "{}: {redacted} {again:?}", case.family);
    }
    let mut false_pos = Vec::new();
    for line in corpus::near_misses() {
        let found = memdir_secrets::scan(line, Some("log/2026-11-30.md"));
        if !found.is_empty() {
            false_pos.push(format!("{line}: {found:?}"));
        }
    }
    let all = corpus::secrets().len();
    let flagged = true_pos + false_pos.len();
    println!(
        "corpus: {all} secrets, {} near misses; recall {true_pos}/{all}, precision {true_pos}/{flagged}",
        corpus::near_misses().len()
    );
    assert!(false_neg.is_empty(), "missed: {false_neg:#?}");
    assert!(false_pos.is_empty(), "near misses flagged: {false_pos:#?}");
}

#[test]
fn a_finding_names_its_line() {
    let case = &corpus::secrets()[0];
    let text = format!("one\ntwo\n{}\n", case.line);
    let found = memdir_secrets::scan(&text, None);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].line, 3);
}
