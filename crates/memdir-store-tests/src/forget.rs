//! `forget` on every backend: the text leaves the files, every version history shows, and the
//! backend's raw storage; history, blame and undo still answer; an agent is refused.

use crate::Harness;
use crate::engine::{START, clock_at, init};
use memdir::{Actor, Backend, EntryKind, InMemoryStore, Memory, Source};
use memdir_core::forget::Forget;
use memdir_core::path::MemPath;

/// The line forgotten with `--match`.
const SECRET: &str = "12 Elm Street";
/// What only the file forgotten by path held.
const CARD: &str = "card 4111-1111";

/// Every file of the memory, with its bytes.
fn files(mem: &Memory) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(d) = stack.pop() {
        for e in mem.ls(&d).unwrap() {
            match e.kind {
                EntryKind::Dir => stack.push(e.path.to_string()),
                EntryKind::File => {
                    let p = e.path.to_string();
                    let b = mem.read(&p).unwrap();
                    out.push((p, b));
                }
            }
        }
    }
    out.sort();
    out
}

fn holds(b: &[u8], needle: &str) -> bool {
    b.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Where anything history shows still holds `needle`: a change's summary or reason, a file
/// before or after any change, a blamed line.
fn history_hits(mem: &Memory, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let all = mem.history(None, 10_000).unwrap();
    for h in &all {
        if h.summary.contains(needle) || h.reason.as_deref().is_some_and(|r| r.contains(needle)) {
            hits.push(format!("the message of {}", h.commit));
        }
        let (_, changed) = mem.change_files(&h.commit).unwrap();
        for f in changed {
            for (side, b) in [("before", &f.before), ("after", &f.after)] {
                if b.as_deref().is_some_and(|b| holds(b, needle)) {
                    hits.push(format!("{} {side} {}", f.path, h.commit));
                }
            }
        }
    }
    for (p, _) in files(mem) {
        let lines = mem.blame(&p).unwrap_or_else(|e| panic!("blame {p}: {e}"));
        if lines.iter().any(|l| l.text.contains(needle)) {
            hits.push(format!("blame of {p}"));
        }
    }
    hits
}

/// What the backend's raw storage holds of a text (see [`Harness::raw_hits`]).
type Raw<'a> = &'a dyn Fn(&str) -> Option<Vec<String>>;

fn forget_story(b: Backend, raw: Raw<'_>) -> String {
    let mem = init(b);
    let me = |i: usize| format!("name: Ann\naddress: {SECRET}, flat {i}\nlikes: tea\n");
    mem.write("notes/me.md", &me(1)).unwrap().done().unwrap();
    mem.log(&format!("visit to {SECRET}, then home")).unwrap();
    mem.with_reason(Some(&format!("moved to {SECRET}")))
        .write("notes/me.md", &me(2))
        .unwrap()
        .done()
        .unwrap();
    mem.write("notes/card.md", &format!("{CARD}\nexp 12/29\n"))
        .unwrap()
        .done()
        .unwrap();
    mem.edit("notes/card.md", "12/29", "01/30")
        .unwrap()
        .done()
        .unwrap();
    mem.write("notes/other.md", "plain\n")
        .unwrap()
        .done()
        .unwrap();
    for needle in [SECRET, CARD] {
        assert!(
            !history_hits(&mem, needle).is_empty(),
            "the check cannot see {needle}"
        );
        if let Some(hits) = raw(needle) {
            assert!(!hits.is_empty(), "the raw check cannot see {needle}");
        }
    }
    let mut out = String::new();

    // An agent (any source but user) is refused, changes nothing, and the refusal is recorded.
    let before = mem.history(None, 100).unwrap().len();
    for source in [Source::Agent, Source::External] {
        let agent = mem.with_actor(Actor {
            writer: "bot".into(),
            source,
        });
        let what = Forget::lines(SECRET, None).unwrap();
        let err = agent.forget(&what, None, false).unwrap_err().to_string();
        assert!(err.contains("forget needs a person"), "{err}");
        assert!(err.contains("refusal is recorded"), "{err}");
    }
    let listed = mem.history(None, 100).unwrap();
    assert_eq!(listed.len(), before + 2, "the refusals are not recorded");
    for h in &listed[..2] {
        out += &format!("{} {} {:?}\n", h.writer, h.summary, h.source);
    }
    assert!(holds(&mem.read("notes/me.md").unwrap(), SECRET));

    // A dry run says what would go and changes nothing.
    let what = Forget::lines(SECRET, None).unwrap();
    let dry = mem.forget(&what, None, true).unwrap();
    let report = dry.history.as_ref().unwrap();
    out += &format!(
        "dry: {:?}, {} changes to rewrite, {} versions, {} lines\n",
        dry.files
            .iter()
            .map(|f| (f.path.as_str(), f.lines))
            .collect::<Vec<_>>(),
        report.rewritten.len(),
        report.versions,
        report.lines
    );
    assert_eq!(mem.history(None, 100).unwrap().len(), before + 2);
    assert!(!history_hits(&mem, SECRET).is_empty(), "a dry run forgot");

    // --match, then a file.
    let done = mem
        .with_reason(Some("the user asked"))
        .forget(&what, None, false)
        .unwrap();
    let report = done.history.as_ref().unwrap();
    out += &format!(
        "forgot {} lines, {} changes rewritten\n",
        done.lines(),
        report.rewritten.len()
    );
    assert!(report.recorded.is_some());
    let card = Forget::file(MemPath::parse("notes/card.md").unwrap());
    let done = mem.forget(&card, None, false).unwrap();
    out += &format!(
        "forgot {:?}, {} changes rewritten\n",
        done.files
            .iter()
            .map(|f| (f.path.as_str(), f.removed))
            .collect::<Vec<_>>(),
        done.history.as_ref().unwrap().rewritten.len()
    );

    // No current file, no version history shows, no message holds either.
    for needle in [SECRET, CARD] {
        for (p, b) in files(&mem) {
            assert!(!holds(&b, needle), "{p} still holds {needle:?}");
        }
        assert_eq!(history_hits(&mem, needle), Vec::<String>::new(), "{needle}");
        if let Some(hits) = raw(needle) {
            assert_eq!(
                hits,
                Vec::<String>::new(),
                "the backend's storage holds {needle:?}"
            );
        }
    }
    for h in mem.history(None, 3).unwrap() {
        out += &format!("{} {} {:?}\n", h.writer, h.summary, h.reason);
    }
    // History, blame and undo still work.
    for l in mem.blame("notes/me.md").unwrap() {
        out += &format!("{} {}\n", l.line, l.text);
    }
    mem.write("notes/me.md", "name: Ann\n")
        .unwrap()
        .done()
        .unwrap();
    mem.undo(None).unwrap();
    out += &String::from_utf8(mem.read("notes/me.md").unwrap()).unwrap();
    assert!(mem.read("notes/card.md").is_err());
    out
}

/// Forget on every backend: `--match` and a file, through every version; see the module docs.
/// The backend's raw storage ([`Harness::raw_hits`]) holds neither afterwards (and did before).
pub fn engine_forget(h: &impl Harness) {
    let tenant = "engine";
    let story = forget_story(h.open(tenant), &|n| h.raw_hits(tenant, n));
    let reference = InMemoryStore::new();
    let want = forget_story(reference.backend(), &|_| None);
    assert_eq!(
        story, want,
        "the backend and the in-memory reference disagree"
    );
    assert_eq!(
        story,
        "bot forget refused * Some(\"external\")\n\
         bot forget refused * Some(\"agent\")\n\
         dry: [(\"log/2026-11-30.md\", 1), (\"notes/me.md\", 1)], 3 changes to rewrite, 3 versions, 3 lines\n\
         forgot 2 lines, 3 changes rewritten\n\
         forgot [(\"notes/card.md\", true)], 2 changes rewritten\n\
         main forget notes/card.md Some(\"forgot 1 file\")\n\
         main forget * Some(\"forgot 2 lines in 2 files, reason: the user asked\")\n\
         bot forget refused * Some(\"refused: forget needs source user, this was external\")\n\
         1 name: Ann\n\
         2 likes: tea\n\
         name: Ann\nlikes: tea\n",
        "{story}"
    );
    // The memory opened again (a second process) tells the same history.
    let again = Memory::open_backend(h.open(tenant), clock_at(START)).unwrap();
    assert_eq!(history_hits(&again, SECRET), Vec::<String>::new());
    assert!(
        again.history(None, 1).unwrap()[0]
            .summary
            .starts_with("undo")
    );
}
