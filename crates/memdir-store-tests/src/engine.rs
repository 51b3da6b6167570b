//! Engine-level checks: the same scenario through [`memdir::Memory`] on the backend under test
//! and on the in-memory reference store must give the same answers, and those answers must be
//! the right ones.

use crate::Harness;
use memdir::notes::NoteRequest;
use memdir::search::{Mode, SearchRequest};
use memdir::{Actor, Backend, Clock, InMemoryStore, Memory, Outcome, Source};

/// The instant every scenario starts at.
pub const START: &str = "2026-11-30T09:15:00Z";

pub(crate) fn clock_at(at: &str) -> Clock {
    Clock::fixed(at.parse().unwrap(), jiff::tz::TimeZone::UTC)
}

pub(crate) fn init(b: Backend) -> Memory {
    Memory::init_backend(b, clock_at(START), true).unwrap()
}

/// Runs `scenario` on the backend and on the reference, asserts both tell the same story, and
/// returns it.
fn same_story(h: &impl Harness, scenario: fn(Backend, &dyn Fn() -> Backend) -> String) -> String {
    let story = scenario(h.open("engine"), &|| h.open("engine"));
    let reference = InMemoryStore::new();
    let want = scenario(reference.backend(), &|| Backend {
        store: std::sync::Arc::new(reference.clone()),
        history: None,
        vectors: None,
    });
    assert_eq!(
        story, want,
        "the backend and the in-memory reference disagree"
    );
    story
}

fn context_story(b: Backend, _again: &dyn Fn() -> Backend) -> String {
    let mem = init(b);
    mem.write("core.md", "# Core\n- prefers short answers\n")
        .unwrap()
        .done()
        .unwrap();
    mem.log("decided to use PostgreSQL").unwrap();
    mem.with_actor(Actor {
        writer: "bot".into(),
        source: Source::Agent,
    })
    .log("ran the migration")
    .unwrap();
    mem.scratch("todo", Some(3_600_000), "check the build")
        .unwrap();
    mem.context().unwrap().render()
}

/// The context: core, the day's log from every writer, live scratch, in that order.
pub fn engine_context(h: &impl Harness) {
    let ctx = same_story(h, context_story);
    let core = ctx.find("prefers short answers").unwrap();
    let log = ctx.find("- 09:15 decided to use PostgreSQL").unwrap();
    let bot = ctx.find("(bot) ran the migration").unwrap();
    let scratch = ctx.find("check the build").unwrap();
    assert!(core < log && log < bot && bot < scratch, "{ctx}");
}

fn notes_story(b: Backend, _again: &dyn Fn() -> Backend) -> String {
    let mem = init(b);
    let req = |name, description, body| NoteRequest {
        name,
        description,
        kind: Some("user"),
        tags: &[],
        expires: None,
        body,
        force: false,
    };
    let mut out = String::new();
    for (n, d) in [
        ("people/priya", "Priya leads the storage work"),
        ("projects/pg", "The PostgreSQL store"),
    ] {
        out += &mem.note_new(&req(n, d, "See [[pg]].\n")).unwrap();
        out += "\n";
    }
    let again = mem.note_new(&req("people/priya", "dup", "x")).unwrap_err();
    out += &format!("{:?}\n", again.kind());
    mem.rm("notes/projects/pg.md").unwrap();
    out += &String::from_utf8(mem.read("MEMORY.md").unwrap()).unwrap();
    out += &format!("{:?}\n", mem.write("MEMORY.md", "x").unwrap_err().kind());
    out
}

/// Notes are created once, listed in `MEMORY.md`, and dropped from it when removed.
pub fn engine_notes_and_index(h: &impl Harness) {
    let story = same_story(h, notes_story);
    assert!(story.contains("notes/people/priya.md"), "{story}");
    assert!(story.contains("Conflict"), "{story}");
    assert!(story.contains("Priya leads the storage work"), "{story}");
    assert!(!story.contains("The PostgreSQL store"), "{story}");
    assert!(story.ends_with("Invalid\n"), "{story}");
}

fn supersede_story(b: Backend, _again: &dyn Fn() -> Backend) -> String {
    let mem = init(b);
    let req = |name, description, body| NoteRequest {
        name,
        description,
        kind: Some("project"),
        tags: &[],
        expires: None,
        body,
        force: false,
    };
    mem.note_new(&req(
        "retry-v1",
        "the first retry rule",
        "payment retry: a failed payment retry runs every hour, retry after retry\n",
    ))
    .unwrap();
    mem.note_new(&req(
        "retry-v2",
        "the retry rule now",
        "a payment retry runs once a day\n",
    ))
    .unwrap();
    let agent = mem.with_actor(Actor {
        writer: "bot".into(),
        source: Source::Agent,
    });
    let done = agent.note_supersede("retry-v1", "[[retry-v2]]").unwrap();
    let mut out = format!(
        "{} by {} ({}) {}\n",
        done.old, done.new, done.link, done.changed
    );
    for (old, new) in [
        ("retry-v1", "retry-v2"),
        ("retry-v2", "retry-v1"),
        ("retry-v2", "notes/retry-v2.md"),
        ("missing", "retry-v2"),
    ] {
        out += &match agent.note_supersede(old, new) {
            Ok(d) => format!("{old} {new}: changed {}\n", d.changed),
            Err(e) => format!("{old} {new}: {:?}\n", e.kind()),
        };
    }
    out += &String::from_utf8(mem.read("notes/retry-v1.md").unwrap()).unwrap();
    out += &String::from_utf8(mem.read("MEMORY.md").unwrap()).unwrap();
    let mut ranked = SearchRequest::new("payment retry");
    ranked.mode = Mode::Ranked;
    for h in mem.search(&ranked).unwrap().hits {
        out += &format!("{} {:.6}\n", h.render(), h.score.unwrap_or_default());
    }
    out
}

/// A note superseded by another (by an agent) says so in its frontmatter, leaves `MEMORY.md`
/// and ranks below its successor; a cycle and a missing note are refused.
pub fn engine_supersede(h: &impl Harness) {
    let story = same_story(h, supersede_story);
    assert!(
        story.starts_with("notes/retry-v1.md by notes/retry-v2.md (retry-v2) true\n"),
        "{story}"
    );
    assert!(
        story.contains("retry-v1 retry-v2: changed false\n"),
        "{story}"
    );
    assert!(story.contains("retry-v2 retry-v1: Invalid\n"), "{story}");
    assert!(
        story.contains("retry-v2 notes/retry-v2.md: Invalid\n"),
        "{story}"
    );
    assert!(story.contains("missing retry-v2: NotFound\n"), "{story}");
    assert!(
        story.contains("superseded_by: \"[[retry-v2]]\"\n---\n"),
        "{story}"
    );
    assert!(!story.contains("- [retry-v1]"), "{story}");
    assert!(story.contains("- [retry-v2](notes/retry-v2.md)"), "{story}");
    // The first line is what the supersede said; the search hits are the next lines of a path.
    let first_hit = story
        .lines()
        .skip(1)
        .find(|l| l.starts_with("notes/"))
        .unwrap_or_default();
    assert!(first_hit.starts_with("notes/retry-v2.md:"), "{story}");
    assert!(
        story.contains("notes/retry-v1.md:"),
        "never removed: {story}"
    );
}

fn supersede_proposal_story(b: Backend, _again: &dyn Fn() -> Backend) -> String {
    let mem = init(b);
    let req = |name, description, body| NoteRequest {
        name,
        description,
        kind: Some("project"),
        tags: &[],
        expires: None,
        body,
        force: false,
    };
    mem.note_new(&req(
        "retry-v1",
        "the first payment retry rule",
        "retry every hour\n",
    ))
    .unwrap();
    mem.note_new(&req(
        "retry-v2",
        "the payment retry rule now",
        "This replaces [[retry-v1]]: retry once a day.\n",
    ))
    .unwrap();
    let run = mem
        .consolidate(&memdir::consolidate::Options::default())
        .unwrap();
    let mut out = String::new();
    for p in &run.proposals {
        out += &format!("{} {} {:?}\n", p.kind, p.summary, p.evidence);
    }
    let listed = mem.proposals().unwrap();
    for p in &listed {
        out += &format!(
            "{} {} by {:?}\n{}",
            p.kind, p.target, p.superseded_by, p.diff
        );
    }
    let again = mem
        .consolidate(&memdir::consolidate::Options::default())
        .unwrap();
    out += &format!("again: {} new\n", again.proposals.len());
    let accepted = mem.accept_proposal(&listed[0].id).unwrap();
    out += &format!("accepted {}\n", accepted.id == listed[0].id);
    out += &String::from_utf8(mem.read("notes/retry-v1.md").unwrap()).unwrap();
    out += &String::from_utf8(mem.read("MEMORY.md").unwrap()).unwrap();
    out += &format!("{} left\n", mem.proposals().unwrap().len());
    let archived = format!("archive/{}", listed[0].path);
    out += &format!("archived {}\n", mem.read(&archived).is_ok());
    out
}

/// Consolidation proposes to mark a note superseded where a newer note says it replaces it;
/// accepting the proposal writes the same `superseded_by` as `note supersede`, and files the
/// proposal away.
pub fn engine_supersede_proposal(h: &impl Harness) {
    let story = same_story(h, supersede_proposal_story);
    assert!(
        story.starts_with("note-superseded notes/retry-v1.md is superseded by notes/retry-v2.md"),
        "{story}"
    );
    assert!(
        story.contains("note-superseded notes/retry-v1.md by Some(\"notes/retry-v2.md\")\n"),
        "{story}"
    );
    assert!(
        story.contains("+superseded_by: \"[[retry-v2]]\"\n"),
        "{story}"
    );
    assert!(story.contains("again: 0 new\n"), "{story}");
    assert!(story.contains("accepted true\n"), "{story}");
    assert!(
        story.contains("created: 2026-11-30\nsuperseded_by: \"[[retry-v2]]\"\n---\n"),
        "{story}"
    );
    assert!(!story.contains("- [retry-v1]"), "{story}");
    assert!(story.contains("- [retry-v2](notes/retry-v2.md)"), "{story}");
    assert!(story.ends_with("0 left\narchived true\n"), "{story}");
}

fn proposals_story(b: Backend, _again: &dyn Fn() -> Backend) -> String {
    let mem = init(b);
    mem.write("core.md", "- one\n").unwrap().done().unwrap();
    let agent = mem.with_actor(Actor {
        writer: "bot".into(),
        source: Source::Agent,
    });
    let outcome = agent.write("core.md", "- one\n- two\n").unwrap();
    let mut out = match outcome {
        Outcome::Done(()) => "Done\n".to_string(),
        Outcome::Proposed { .. } => "Proposed\n".to_string(),
    };
    let listed = mem.proposals().unwrap();
    out += &format!("{} proposal(s) by {}\n", listed.len(), listed[0].writer);
    out += &String::from_utf8(mem.read("core.md").unwrap()).unwrap();
    mem.accept_proposal(&listed[0].id).unwrap();
    out += &String::from_utf8(mem.read("core.md").unwrap()).unwrap();
    out += &format!("{} left\n", mem.proposals().unwrap().len());
    out
}

/// An agent's change to core becomes a proposal; accepting it applies it.
pub fn engine_proposals(h: &impl Harness) {
    let story = same_story(h, proposals_story);
    assert_eq!(
        story,
        "Proposed\n1 proposal(s) by bot\n- one\n- one\n- two\n0 left\n"
    );
}

fn sweep_story(b: Backend, again: &dyn Fn() -> Backend) -> String {
    let mem = init(b);
    mem.scratch("short", Some(60_000), "gone soon").unwrap();
    mem.scratch("long", Some(86_400_000), "stays").unwrap();
    let later = Memory::open_backend(again(), clock_at("2026-11-30T10:15:00Z")).unwrap();
    let report = later.sweep(false).unwrap();
    let mut out = format!("removed {:?}\n", report.removed);
    for e in later.ls("scratch").unwrap() {
        out += &format!("{}\n", e.path);
    }
    out
}

/// Sweep deletes expired scratch only.
pub fn engine_sweep(h: &impl Harness) {
    let story = same_story(h, sweep_story);
    assert!(story.contains("short"), "{story}");
    assert!(
        story.lines().last().unwrap().ends_with("-long.md"),
        "{story}"
    );
}

fn undo_story(b: Backend, _again: &dyn Fn() -> Backend) -> String {
    let mem = init(b);
    mem.write("notes/a.md", "first\n").unwrap().done().unwrap();
    mem.with_reason(Some("second thoughts"))
        .write("notes/a.md", "first\nsecond\n")
        .unwrap()
        .done()
        .unwrap();
    let mut out = String::new();
    for h in mem.history(Some("notes/a.md"), 10).unwrap() {
        out += &format!("{} {} {:?}\n", h.writer, h.summary, h.reason);
    }
    for l in mem.blame("notes/a.md").unwrap() {
        out += &format!("{} {} {:?}\n", l.line, l.text, l.reason);
    }
    // The newest change's files, before and after; and the first write's, which made the file.
    let h = mem.history(Some("notes/a.md"), 10).unwrap();
    for c in &h {
        let (id, files) = mem.change_files(&c.commit).unwrap();
        assert_eq!(id, c.commit);
        for f in files {
            let text = |b: Option<Vec<u8>>| b.map(|b| String::from_utf8(b).unwrap());
            out += &format!("{} {:?} -> {:?}\n", f.path, text(f.before), text(f.after));
        }
    }
    mem.undo(None).unwrap();
    out += &String::from_utf8(mem.read("notes/a.md").unwrap()).unwrap();
    // The op of the newest change; its id differs between backends.
    let newest = mem.history(None, 10).unwrap()[0].summary.clone();
    out += &format!("{}\n", newest.split(' ').next().unwrap_or_default());
    out
}

/// History, blame and undo give the same shape of answer on every backend.
pub fn engine_undo(h: &impl Harness) {
    let story = same_story(h, undo_story);
    assert_eq!(
        story,
        "main write notes/a.md Some(\"second thoughts\")\n\
         main write notes/a.md None\n\
         1 first None\n\
         2 second Some(\"second thoughts\")\n\
         notes/a.md Some(\"first\\n\") -> Some(\"first\\nsecond\\n\")\n\
         notes/a.md None -> Some(\"first\\n\")\n\
         first\n\
         undo\n"
    );
}

fn search_story(b: Backend, _again: &dyn Fn() -> Backend) -> String {
    let mem = init(b);
    mem.log("decided to use PostgreSQL for the storage")
        .unwrap();
    mem.write(
        "notes/db.md",
        "# Databases\nPostgreSQL has advisory locks.\nSQLite is embedded.\n",
    )
    .unwrap()
    .done()
    .unwrap();
    mem.write("archive/2025-01-01.md", "- old: postgresql trial\n")
        .unwrap()
        .done()
        .unwrap();
    let mut out = String::new();
    let grep = mem.search(&SearchRequest::new("postgresql")).unwrap();
    for h in grep.hits {
        out += &format!("{}\n", h.render());
    }
    let mut ranked = SearchRequest::new("which database has advisory locks");
    ranked.mode = Mode::Ranked;
    for h in mem.search(&ranked).unwrap().hits {
        out += &format!("{} {:.6}\n", h.render(), h.score.unwrap_or_default());
    }
    out
}

/// Grep and ranked search give identical lines, order and scores on every backend.
pub fn engine_search(h: &impl Harness) {
    let story = same_story(h, search_story);
    let grep: Vec<&str> = story.lines().take(3).collect();
    assert_eq!(
        grep,
        [
            "archive/2025-01-01.md:1:- old: postgresql trial",
            "log/2026-11-30.md:1:- 09:15 decided to use PostgreSQL for the storage",
            "notes/db.md:2:PostgreSQL has advisory locks.",
        ]
    );
    assert!(
        story.lines().nth(3).unwrap().starts_with("notes/db.md:2:"),
        "{story}"
    );
}

fn vectors_story(b: Backend, again: &dyn Fn() -> Backend) -> String {
    let model = memdir_test_model::TinyStaticModel::new();
    // Where a backend without a vector index of its own keeps one (ignored by the others).
    let cache = tempfile::tempdir().unwrap();
    let open = |mem: Memory| {
        mem.with_embed_config(memdir::embed::EmbedConfig::Local {
            model_dir: model.path().to_path_buf(),
        })
        .with_search_cache(cache.path())
    };
    let mem = open(init(b));
    mem.log("decided to use PostgreSQL for the storage")
        .unwrap();
    mem.log("walked the dog in the park").unwrap();
    mem.write(
        "notes/db.md",
        "# Databases\nPostgreSQL has advisory locks.\n\n# Embedded\nSQLite is embedded.\n",
    )
    .unwrap()
    .done()
    .unwrap();
    mem.write("notes/pets.md", "# Pets\nThe dog likes the park.\n")
        .unwrap()
        .done()
        .unwrap();
    let out = std::cell::RefCell::new(String::new());
    let search = |mem: &Memory, what: &str| {
        for mode in [Mode::Semantic, Mode::Hybrid] {
            let mut req = SearchRequest::new("the dog in the park");
            req.mode = mode;
            let mut out = out.borrow_mut();
            *out += &format!("{what} {mode}\n");
            for h in mem.search(&req).unwrap().hits {
                *out += &format!("{} {:.5}\n", h.render(), h.score.unwrap_or_default());
            }
        }
    };
    search(&mem, "first");
    // A second instance (another process) shares the index: it sees the same answers, and it
    // follows the first one's changes.
    let other = open(Memory::open_backend(again(), clock_at(START)).unwrap());
    search(&other, "second instance");
    mem.write("notes/pets.md", "# Pets\nThe cat sleeps all day.\n")
        .unwrap()
        .done()
        .unwrap();
    mem.rm("notes/db.md").unwrap();
    search(&mem, "after a change");
    search(&other, "second instance after the change");
    let stats = mem.rebuild_vector_index(&|_, _| {}).unwrap();
    *out.borrow_mut() += &format!(
        "rebuilt: {} files, {} chunks\n",
        stats.files_embedded, stats.chunks_total
    );
    search(&other, "second instance after the rebuild");
    out.into_inner()
}

/// Semantic and hybrid search give identical lines, order and scores on every backend, wherever
/// its vector index lives (the folder's `.memdir/`, a cache folder, or the backend's own
/// tables), and a second instance on the same memory follows changes and rebuilds.
pub fn engine_vectors(h: &impl Harness) {
    let story = same_story(h, vectors_story);
    // The hits of one search, by its heading in the story.
    let block = |name: &str| -> Vec<&str> {
        let mut lines = story.lines().skip_while(|l| *l != name).skip(1);
        let mut out = Vec::new();
        for l in lines.by_ref() {
            if !l.starts_with(|c: char| c.is_ascii_lowercase()) || l.contains(".md:") {
                out.push(l);
            } else {
                break;
            }
        }
        out
    };
    let first = block("first semantic");
    assert_eq!(first.len(), 5, "{story}");
    assert_eq!(block("second instance semantic"), first, "{story}");
    // The changed note was embedded again, the removed one left the index, and the second
    // instance sees exactly what the first does, before and after a rebuild.
    let changed = block("after a change semantic");
    assert!(
        changed.iter().all(|l| !l.starts_with("notes/db.md")),
        "{story}"
    );
    let pets = |hits: &[&str]| {
        hits.iter()
            .find(|l| l.starts_with("notes/pets.md:1:"))
            .map(|l| l.to_string())
    };
    assert!(
        pets(&changed).is_some() && pets(&changed) != pets(&first),
        "{story}"
    );
    for mode in ["semantic", "hybrid"] {
        let want = block(&format!("after a change {mode}"));
        assert_eq!(
            block(&format!("second instance after the change {mode}")),
            want
        );
        assert_eq!(
            block(&format!("second instance after the rebuild {mode}")),
            want
        );
    }
    assert!(story.contains("rebuilt: 3 files, 3 chunks"), "{story}");
}
