//! `forget` on S3: a new journal without what is forgotten, switched in by one put, then the
//! old objects and their older versions deleted.
//!
//! The journal's objects are never changed in place. A forget (under the `git` lease, as every
//! change) reads the journal in effect and every content it names, and writes, in this order:
//!
//! 1. the scrubbed contents, under `blobs/<new version>` (create-only: one already there is
//!    the same bytes);
//! 2. a whole new journal under `journals/<random id>/`: every change again, its versions
//!    replaced by the scrubbed ones, a message or reason line holding the text `[forgotten]`
//!    (and such a change a new id), then the forget's own record;
//! 3. it deletes the older versions of the memory's files that hold it, where the bucket keeps
//!    versions (this needs the forgotten text, so it happens while the forget still has it);
//! 4. the switch: `history-head` names the new journal (`If-Match` on the head it read, so two
//!    forgets never both win);
//! 5. the sweep: every journal but the one in effect, every blob no change of it names, and
//!    every older version and delete marker under `journal`, `journals` and `blobs`.
//!
//! A kill before the switch leaves the old history in effect, whole (the new objects are
//! unreferenced); a kill after it, the new one, with old objects still in the bucket. The sweep
//! needs no forgotten text, only the head, so the next forget (any forget, dry runs aside)
//! begins with it and finishes what a killed one left: run forget again after an interrupted
//! one. Readers in other processes see the old history or the new one; one that read the head
//! just before the switch may fail once on a blob the sweep deleted, and reads the new one on
//! its next try.

use crate::history::{FIRST_JOURNAL, FileChange, HEAD, JOURNALS, Record, record_id};
use crate::{PARALLEL_GETS, Put, Tenant, random_id};
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use memdir_core::forget::{Forget, Scrub};
use memdir_core::path::MemPath;
use memdir_store::StoreError;
use memdir_store::history::{ForgetReport, Rewritten};
use memdir_store::store::Version;
use object_store::{PutMode, UpdateVersion};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// What a forget records as its own change.
pub(crate) struct ForgetRecord {
    pub(crate) writer: String,
    pub(crate) source: Option<String>,
    pub(crate) message: String,
    pub(crate) reason: Option<String>,
    pub(crate) at_s: i64,
}

/// Where a forget stops short, as a kill there would leave it: the tests' way to cut it at
/// each step (every S3 request is atomic, so a kill falls between two of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stop {
    /// After the scrubbed contents are written.
    AfterBlobs,
    /// After the new journal is written.
    AfterJournal,
    /// After the older versions are deleted, before the switch.
    BeforeSwitch,
    /// After the switch, before the sweep.
    AfterSwitch,
    /// Not at all.
    Never,
}

fn stopped(at: Stop) -> StoreError {
    StoreError::Unavailable(format!("s3: forget stopped {at:?} (a test's kill)"))
}

/// Scrubbed versions of contents, by path and version, with the lines each lost.
#[derive(Default)]
struct Scrubbed {
    done: HashMap<(String, String), (Option<String>, usize)>,
    /// New contents to keep, by version.
    blobs: BTreeMap<String, Bytes>,
}

impl Tenant {
    /// The version `v` of `path` becomes once `forget` is applied, and how many lines went.
    async fn scrubbed(
        &self,
        forget: &Forget,
        path: &str,
        v: Option<&str>,
        memo: &mut Scrubbed,
    ) -> Result<(Option<String>, usize), StoreError> {
        let Some(v) = v else { return Ok((None, 0)) };
        if !forget.covers(path) {
            return Ok((Some(v.to_string()), 0));
        }
        let key = (path.to_string(), v.to_string());
        if let Some(done) = memo.done.get(&key) {
            return Ok(done.clone());
        }
        let bytes = self.blob(Some(v)).await?.unwrap_or_default();
        let out = match forget.scrub(path, &bytes) {
            Scrub::Keep => (Some(v.to_string()), 0),
            Scrub::Drop => (None, 0),
            Scrub::Rewrite(b, n) => {
                let nv = Version::of(&b).to_string();
                memo.blobs.insert(nv.clone(), Bytes::from(b));
                (Some(nv), n)
            }
        };
        memo.done.insert(key, out.clone());
        Ok(out)
    }

    /// Rewrites history without what `forget` names and records the forget (module docs).
    pub(crate) async fn forget(
        &self,
        forget: &Forget,
        rec: ForgetRecord,
        dry_run: bool,
    ) -> Result<ForgetReport, StoreError> {
        self.forget_until(forget, rec, dry_run, Stop::Never).await
    }

    /// [`Tenant::forget`], stopping short at `stop`.
    pub(crate) async fn forget_until(
        &self,
        forget: &Forget,
        rec: ForgetRecord,
        dry_run: bool,
        stop: Stop,
    ) -> Result<ForgetReport, StoreError> {
        let head_key = self.state_key(HEAD)?;
        let head = self.get(&head_key).await?;
        let dir = self.journal_named(head.as_ref().map(|(b, _)| b.as_ref()))?;
        if !dry_run {
            self.sweep(&dir).await?;
        }
        let keys = self.journal_in(&dir).await?;
        let old: Vec<Arc<Record>> = futures::stream::iter(keys.into_iter().rev())
            .map(|(k, _, _)| async move { self.record_at(&k).await })
            .buffered(PARALLEL_GETS)
            .try_collect()
            .await?;
        let mut memo = Scrubbed::default();
        let mut report = ForgetReport::default();
        let mut new = Vec::with_capacity(old.len() + 1);
        for r in &old {
            let mut files = Vec::with_capacity(r.files.len());
            let mut changed = false;
            for f in &r.files {
                let (before, _) = self
                    .scrubbed(forget, &f.path, f.before.as_deref(), &mut memo)
                    .await?;
                let (after, n) = self
                    .scrubbed(forget, &f.path, f.after.as_deref(), &mut memo)
                    .await?;
                if after != f.after {
                    report.versions += 1;
                    report.lines += n;
                }
                changed |= before != f.before || after != f.after;
                // A change whose only difference to the file was what is forgotten no longer
                // touches it, as in a folder's rewritten git history.
                if before != after {
                    files.push(FileChange {
                        path: f.path.clone(),
                        before,
                        after,
                    });
                }
            }
            let mut r2 = Record::clone(r);
            r2.files = files;
            if let Some(m) = forget.scrub_message(&r.message) {
                r2.message = m;
                changed = true;
            }
            if let Some(s) = forget.scrub_message(&r.summary) {
                r2.summary = s;
                changed = true;
            }
            if let Some(s) = r.reason.as_deref().and_then(|t| forget.scrub_message(t)) {
                r2.reason = Some(s);
                changed = true;
            }
            if changed {
                r2.id = record_id(&self.url.tenant, r2.seq, r2.at_s, &r2.writer, &r2.message);
                report.rewritten.push(Rewritten {
                    old: r.id.clone(),
                    new: r2.id.clone(),
                });
            }
            new.push(r2);
        }
        // What this process wrote since the last record (the engine's rewrite of the files):
        // its "before" becomes the scrubbed version too, so the next record holds nothing.
        let pending: Vec<(MemPath, Option<Version>)> = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(p, n)| (p.clone(), n.before.clone()))
            .collect();
        let mut befores = Vec::new();
        for (p, v) in pending {
            let v = v.map(|v| v.as_str().to_string());
            let (clean, _) = self
                .scrubbed(forget, p.as_str(), v.as_deref(), &mut memo)
                .await?;
            if clean != v {
                befores.push((p, clean.map(|c| Version::from_string(&c))));
            }
        }
        if dry_run {
            return Ok(report);
        }
        // 1. The scrubbed contents.
        futures::stream::iter(std::mem::take(&mut memo.blobs))
            .map(|(v, b)| async move {
                self.keep_blob(&Version::from_string(&v), Some(b), None)
                    .await
            })
            .buffer_unordered(PARALLEL_GETS)
            .try_collect::<Vec<()>>()
            .await?;
        if stop == Stop::AfterBlobs {
            return Err(stopped(stop));
        }
        // 2. The new journal, and the forget's record as its newest change.
        let next = format!("{JOURNALS}/{}", random_id());
        let seq = new.last().map_or(0, |r| r.seq) + 1;
        let id = record_id(&self.url.tenant, seq, rec.at_s, &rec.writer, &rec.message);
        new.push(Record {
            id: id.clone(),
            seq,
            at_s: rec.at_s,
            writer: rec.writer,
            source: rec.source,
            summary: rec.message.lines().next().unwrap_or_default().to_string(),
            reason: rec.reason,
            message: rec.message,
            files: Vec::new(),
        });
        let dir = &next;
        futures::stream::iter(new)
            .map(|r| async move { self.put_record(dir, &r).await })
            .buffer_unordered(PARALLEL_GETS)
            .try_collect::<Vec<bool>>()
            .await?;
        if stop == Stop::AfterJournal {
            return Err(stopped(stop));
        }
        // 3. Older versions of the files that hold it.
        self.forget_file_versions(forget).await?;
        if stop == Stop::BeforeSwitch {
            return Err(stopped(stop));
        }
        // 4. The switch.
        let mode = match &head {
            None => PutMode::Create,
            Some((_, etag)) => PutMode::Update(UpdateVersion {
                e_tag: etag.clone(),
                version: None,
            }),
        };
        if let Put::Lost = self
            .put(&head_key, Bytes::from(next.clone()), mode, None)
            .await?
        {
            return Err(StoreError::Conflict(
                "another forget rewrote this memory's history at the same time: nothing of this one took effect; run it again".into(),
            ));
        }
        {
            let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            for (path, before) in befores {
                if let Some(n) = p.get_mut(&path) {
                    n.before = before;
                }
            }
        }
        report.recorded = Some(id);
        if stop == Stop::AfterSwitch {
            return Err(stopped(stop));
        }
        // 5. The sweep.
        self.sweep(&next).await?;
        // This process's read cache of the files it touched.
        for f in old.iter().flat_map(|r| r.files.iter()) {
            if forget.covers(&f.path)
                && let Ok(p) = MemPath::parse(&f.path)
                && let Ok(k) = self.key(&p)
            {
                self.cache.forget(self, k.as_ref());
            }
        }
        Ok(report)
    }

    /// Deletes what no longer belongs to the journal under `dir` (module docs, step 5).
    async fn sweep(&self, dir: &str) -> Result<(), StoreError> {
        let mut gone = Vec::new();
        for other in [FIRST_JOURNAL, JOURNALS] {
            if dir == FIRST_JOURNAL && other == FIRST_JOURNAL {
                continue;
            }
            let listed = self.list_all(&self.state_key(other)?).await?;
            let keep = format!("{}/", self.state_key(dir)?.as_ref());
            gone.extend(
                listed
                    .into_iter()
                    .map(|o| o.location)
                    .filter(|k| !k.as_ref().starts_with(&keep)),
            );
        }
        self.delete_all(gone).await?;
        // The contents the journal in effect names, and those this process's change noted.
        let mut named: HashSet<String> = HashSet::new();
        for (k, _, _) in self.journal_in(dir).await? {
            for f in &self.record_at(&k).await?.files {
                named.extend(f.before.iter().chain(f.after.iter()).cloned());
            }
        }
        named.extend(
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .filter_map(|n| n.before.as_ref().map(|v| v.as_str().to_string())),
        );
        let blobs = self.list_all(&self.state_key("blobs")?).await?;
        let unnamed: Vec<_> = blobs
            .into_iter()
            .filter(|o| o.location.filename().is_some_and(|v| !named.contains(v)))
            .map(|o| o.location)
            .collect();
        {
            let mut known = self.known_blobs.lock().unwrap_or_else(|e| e.into_inner());
            for k in &unnamed {
                if let Some(v) = k.filename() {
                    known.remove(v);
                }
            }
        }
        self.delete_all(unnamed).await?;
        // Older versions and delete markers under the journals and the contents: memdir never
        // replaces those objects, so every one is what a forget deleted.
        for prefix in [FIRST_JOURNAL, JOURNALS, "blobs"] {
            let key = self.state_key(prefix)?;
            let listed = match self.list_versions(key.as_ref()).await {
                Ok(l) => l,
                Err(e) => {
                    self.versions_unreachable(&e);
                    return Ok(());
                }
            };
            let old: Vec<_> = listed
                .versions
                .into_iter()
                .filter(|v| !v.is_latest)
                .collect();
            self.delete_versions(old).await?;
            self.delete_versions(listed.markers).await?;
        }
        Ok(())
    }

    /// Deletes every older version that still holds what `forget` names (module docs, step 3):
    /// of a file of this memory, and of memdir's `meta/` objects (the change journal keeps a
    /// change's reason while it runs).
    async fn forget_file_versions(&self, forget: &Forget) -> Result<(), StoreError> {
        let mut candidates = Vec::new();
        for (prefix, files) in [
            (self.key(&MemPath::root())?, true),
            (self.state_key("meta")?, false),
        ] {
            let listed = match self.list_versions(prefix.as_ref()).await {
                Ok(l) => l,
                Err(e) => {
                    self.versions_unreachable(&e);
                    return Ok(());
                }
            };
            let base = format!("{}/", prefix.as_ref());
            candidates.extend(
                listed
                    .versions
                    .into_iter()
                    .filter(|v| !v.is_latest)
                    .filter_map(|v| {
                        let rest = v.key.strip_prefix(&base)?.to_string();
                        // A file's versions as that file; meta's as recorded text.
                        let path = files.then_some(rest);
                        match &path {
                            Some(p) if !forget.covers(p) => None,
                            None if forget.text().is_none() => None,
                            _ => Some((path, v)),
                        }
                    }),
            );
        }
        let holding: Vec<_> = futures::stream::iter(candidates)
            .map(|(path, v)| async move {
                let bytes = self.get_version(&v).await?;
                let holds = bytes.is_some_and(|b| match &path {
                    Some(p) => forget.scrub(p, &b) != Scrub::Keep,
                    None => forget
                        .text()
                        .is_some_and(|t| b.windows(t.len()).any(|w| w == t.as_bytes())),
                });
                Ok::<_, StoreError>(holds.then_some(v))
            })
            .buffer_unordered(PARALLEL_GETS)
            .try_filter_map(|v| async move { Ok(v) })
            .try_collect()
            .await?;
        self.delete_versions(holding).await
    }

    async fn delete_versions(
        &self,
        versions: Vec<crate::versions::ObjectVersion>,
    ) -> Result<(), StoreError> {
        let failed: Vec<String> = futures::stream::iter(versions)
            .map(|v| async move { self.delete_version(&v).await.err() })
            .buffer_unordered(PARALLEL_GETS)
            .filter_map(|e| async move { e })
            .collect()
            .await;
        if let Some(e) = failed.first() {
            self.versions_unreachable(&format!(
                "{} older versions could not be deleted ({e})",
                failed.len()
            ));
        }
        Ok(())
    }

    /// Says that older versions, where the bucket keeps them, may still hold forgotten bytes.
    fn versions_unreachable(&self, why: &str) {
        self.warn(format!(
            "forget could not reach older object versions in bucket {:?}: {why}; if the bucket keeps versions, delete them with a role allowed s3:ListBucketVersions and s3:DeleteObjectVersion, or run forget again",
            self.url.bucket
        ));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::{S3Config, S3Store};
    use memdir_store::history::{Change, History};
    use memdir_store::store::Precondition;
    use memdir_store::{Actor, Store};

    const SECRET: &str = "12 Elm Street";

    /// A fresh versioned bucket on the server at `MEMDIR_TEST_S3`, or `None` (a skip, which
    /// `MEMDIR_REQUIRE_S3=1` turns into a failure).
    fn bucket(name: &str) -> Option<S3Config> {
        let Ok(endpoint) = std::env::var("MEMDIR_TEST_S3") else {
            if std::env::var("MEMDIR_REQUIRE_S3").is_ok_and(|v| v == "1") {
                panic!(
                    "an S3 server is required (MEMDIR_REQUIRE_S3=1) but MEMDIR_TEST_S3 is not set"
                );
            }
            eprintln!(
                "SKIPPED: set MEMDIR_TEST_S3 to an S3-compatible server (.ci/run starts moto)"
            );
            return None;
        };
        let bucket = format!("memdir-unit-{name}-{}-{}", std::process::id(), random_id());
        let at = format!("{}/{bucket}", endpoint.trim_end_matches('/'));
        ureq::put(&at).send_empty().unwrap();
        ureq::put(&format!("{at}?versioning"))
            .send("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>")
            .unwrap();
        Some(
            S3Config::new(&format!("s3://{bucket}/memories?tenant=ann"))
                .unwrap()
                .with_aws("AWS_ACCESS_KEY_ID", "testing")
                .with_aws("AWS_SECRET_ACCESS_KEY", "testing-secret-key")
                .with_aws("AWS_REGION", "us-east-1")
                .with_aws("AWS_ENDPOINT_URL", &endpoint),
        )
    }

    fn change<'a>(actor: &'a Actor, op: &'a str, reason: Option<&'a str>) -> Change<'a> {
        Change {
            op,
            path: "notes/me.md",
            reason,
            actor,
            at: jiff::Timestamp::from_second(1_800_000_000).unwrap(),
            via: None,
            whole_tree: false,
        }
    }

    /// Every object version in the bucket whose bytes hold the secret.
    fn raw_hits(s: &S3Store) -> Vec<String> {
        s.call(|t| async move {
            let listed = t
                .list_versions("memories")
                .await
                .map_err(StoreError::Unavailable)?;
            let mut hits = Vec::new();
            for v in listed.versions {
                if let Some(b) = t.get_version(&v).await?
                    && b.windows(SECRET.len()).any(|w| w == SECRET.as_bytes())
                {
                    hits.push(format!("{}@{}", v.key, v.version_id));
                }
            }
            Ok(hits)
        })
        .unwrap()
    }

    /// A forget killed at each step leaves the old history (before the switch) or the new one
    /// (after it), whole, as a second process reads it; running forget again finishes it and
    /// leaves no object version holding the text.
    #[test]
    fn a_killed_forget_leaves_old_or_new_history_and_a_rerun_finishes_it() {
        let actor = Actor::default();
        let me = MemPath::parse("notes/me.md").unwrap();
        let what = Forget::lines(SECRET, None).unwrap();
        for stop in [
            Stop::AfterBlobs,
            Stop::AfterJournal,
            Stop::BeforeSwitch,
            Stop::AfterSwitch,
        ] {
            let Some(config) = bucket(&format!("{stop:?}").to_ascii_lowercase()) else {
                return;
            };
            let s = S3Store::create(config.clone()).unwrap();
            let h = s.history();
            h.start(change(&actor, "init", None).at).unwrap();
            for i in 0..4 {
                s.write_if(
                    &me,
                    format!("name: Ann\naddress: {SECRET} {i}\n").as_bytes(),
                    &Precondition::Any,
                )
                .unwrap();
                let why = format!("moved to {SECRET}");
                h.commit(&change(&actor, "write", Some(&why))).unwrap();
            }
            assert!(!raw_hits(&s).is_empty(), "the check cannot see it");
            // As the engine does: the file first, then history.
            s.write_if(&me, b"name: Ann\n", &Precondition::Any).unwrap();
            let rec = ForgetRecord {
                writer: "main".into(),
                source: Some("user".into()),
                message: "forget *\n".into(),
                reason: None,
                at_s: 1_800_000_001,
            };
            let first = what.clone();
            let err = s
                .call(|t| async move { t.forget_until(&first, rec, false, stop).await })
                .unwrap_err();
            assert!(err.to_string().contains("stopped"), "{err}");
            drop((h, s));

            // The next process: the old history or the new one, whole.
            let s = S3Store::open(config.clone()).unwrap();
            let h = s.history();
            let listed = h.history(None, 100).unwrap();
            let holds = |h: &dyn History| {
                h.history(None, 100).unwrap().iter().any(|e| {
                    e.reason.as_deref().is_some_and(|r| r.contains(SECRET))
                        || h.files_of(&e.commit).unwrap().1.iter().any(|f| {
                            f.after.as_deref().is_some_and(|b| {
                                b.windows(SECRET.len()).any(|w| w == SECRET.as_bytes())
                            })
                        })
                })
            };
            if stop < Stop::AfterSwitch {
                assert_eq!(listed.len(), 4, "{stop:?}: {listed:?}");
                assert!(holds(&h), "{stop:?}: the old history lost it");
            } else {
                assert_eq!(listed.len(), 5, "{stop:?}: {listed:?}");
                assert_eq!(listed[0].summary, "forget *");
                assert!(!holds(&h), "{stop:?}: the new history holds it");
                // Old objects are still there until a forget sweeps them.
                assert!(!raw_hits(&s).is_empty(), "{stop:?}");
            }
            let blame = h.blame(&me).unwrap();
            assert_eq!(blame[0].text, "name: Ann", "{stop:?}");

            // The person runs forget again: it finishes.
            let rec = ForgetRecord {
                writer: "main".into(),
                source: Some("user".into()),
                message: "forget *\n".into(),
                reason: None,
                at_s: 1_800_000_002,
            };
            let what = what.clone();
            s.call(|t| async move { t.forget(&what, rec, false).await })
                .unwrap();
            assert!(!holds(&h), "{stop:?}");
            assert_eq!(raw_hits(&s), Vec::<String>::new(), "{stop:?}");
            assert_eq!(h.blame(&me).unwrap()[0].text, "name: Ann");
        }
    }

    /// A process that kept a content before another forgot it writes that content again: the
    /// content is kept again (the forget changed the history head, so what this process knew
    /// to be kept is forgotten too), and the change it records shows it.
    #[test]
    fn content_written_again_after_another_process_forgot_it_is_kept_again() {
        let Some(config) = bucket("again") else {
            return;
        };
        let actor = Actor::default();
        let me = MemPath::parse("notes/me.md").unwrap();
        let secret = format!("address: {SECRET}\n");
        let a = S3Store::create(config.clone()).unwrap();
        let ha = a.history();
        a.write_if(&me, secret.as_bytes(), &Precondition::Any)
            .unwrap();
        ha.commit(&change(&actor, "write", None)).unwrap();

        let b = S3Store::open(config).unwrap();
        let _hb = b.history();
        b.write_if(&me, b"", &Precondition::Any).unwrap();
        let rec = ForgetRecord {
            writer: "main".into(),
            source: Some("user".into()),
            message: "forget *\n".into(),
            reason: None,
            at_s: 1_800_000_001,
        };
        let what = Forget::lines(SECRET, None).unwrap();
        b.call(|t| async move { t.forget(&what, rec, false).await })
            .unwrap();
        assert_eq!(raw_hits(&b), Vec::<String>::new());

        // The person (or an agent) writes it again, through the first process.
        a.write_if(&me, secret.as_bytes(), &Precondition::Any)
            .unwrap();
        let id = ha.commit(&change(&actor, "write", None)).unwrap().unwrap();
        let (_, files) = ha.files_of(&id).unwrap();
        assert_eq!(files[0].after.as_deref(), Some(secret.as_bytes()));
    }
}
