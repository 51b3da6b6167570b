//! Jobs the service runs itself (issue 35, item 6). Every registered tenant is swept (expired
//! scratch, expired notes, old state lines; what `memdir sweep` does) once per `[jobs]
//! sweep_every`, and, where the operator enables it (`consolidate_every`, `consolidate_at`),
//! consolidated as `memdir consolidate` does: proposals and a report, never a change to core.
//!
//! Each job has a thread of its own on every instance. It looks for due tenants every
//! `check_every` and claims a batch in the registry (PostgreSQL: `memdir.jobs`, one row per
//! tenant and job, claimed with `SKIP LOCKED` under a lease held by this instance), so one
//! instance runs a tenant's job once per period whatever the number of instances, and a job an
//! instance left unfinished (it stopped) is taken over when its lease ends. A batch that outlasts
//! half its lease (a slow chat model) renews each tenant's claim before running it, and leaves a
//! tenant another instance took over meanwhile to that instance.
//!
//! Jobs run through a memory opened for the job (not the table of open tenants), so they never
//! hold up a request beyond the tenant's change lock while the job writes: consolidation reads
//! and asks its model first and takes the lock only to write its proposals and report. A job
//! thread rests after each job as long as the job took (up to 100 ms), so it works at most about
//! half the time and leaves the rest of the machine to the requests. Each job
//! is one more change in flight beside `max_calls`: like each of them it may hold up to three of
//! the instance's connections (`[store] pool_size` >= 3 x (`max_calls` + 2)).
//!
//! Consolidation asks only the operator's chat model (`[consolidate]` of the service config);
//! a tenant's own `[consolidate] provider` is never called by the service, so no tenant can make
//! the service send its memory, or the operator's key, to a host of the tenant's choosing.

use crate::service::Shared;
use memdir::consolidate::{ChatModel, Options};
use memdir::tenants::{Job, Schedule, Tenant};
use prometheus_client::metrics::counter::Counter;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the service runs for its tenants, and when.
#[derive(Debug, Clone)]
pub struct Jobs {
    /// A tenant is swept once per this many milliseconds (`None`: never).
    pub sweep_every_ms: Option<i64>,
    /// When each tenant is consolidated (`None`: never, the default).
    pub consolidate: Option<Schedule>,
    /// The chat model consolidation also asks: the operator's, never a tenant's (`None`: the
    /// deterministic rules only).
    pub consolidate_model: Option<ChatModel>,
    /// How often an instance looks for due tenants, in milliseconds.
    pub check_every_ms: i64,
    /// Tenants claimed at a time.
    pub batch: usize,
}

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs {
            sweep_every_ms: Some(3_600_000),
            consolidate: None,
            consolidate_model: None,
            check_every_ms: 60_000,
            batch: 100,
        }
    }
}

/// The jobs' counters on `/metrics`.
#[derive(Default, Clone)]
pub(crate) struct JobMetrics {
    pub(crate) sweeps: Counter,
    pub(crate) sweep_errors: Counter,
    pub(crate) consolidations: Counter,
    pub(crate) consolidation_errors: Counter,
    pub(crate) consolidation_proposals: Counter,
}

/// The longest a job thread rests after a job: a job that waits on a chat model for seconds
/// is not work the machine needs a rest from.
const MAX_REST: Duration = Duration::from_millis(100);

/// How long a claimed job is an instance's own before another may take it over.
fn lease_ms(jobs: &Jobs) -> i64 {
    jobs.check_every_ms.saturating_mul(10).max(600_000)
}

/// Starts a thread per enabled job (none when every job is off).
pub(crate) fn start(shared: Arc<Shared>, jobs: Jobs) {
    if let Some(every_ms) = jobs.sweep_every_ms {
        let schedule = Schedule {
            every_ms,
            at_ms: None,
        };
        spawn(shared.clone(), jobs.clone(), Job::Sweep, schedule);
    }
    if let Some(schedule) = jobs.consolidate {
        spawn(shared, jobs, Job::Consolidate, schedule);
    }
}

fn spawn(shared: Arc<Shared>, jobs: Jobs, job: Job, schedule: Schedule) {
    let wait = Duration::from_millis(u64::try_from(jobs.check_every_ms.max(1)).unwrap_or(60_000));
    let spawned = std::thread::Builder::new()
        .name(format!("memdir-{}", job.name()))
        .spawn(move || {
            loop {
                // First wait: a restarted instance serves before it runs jobs.
                std::thread::sleep(wait);
                run_due(&shared, &jobs, job, schedule);
            }
        });
    if let Err(e) = spawned {
        tracing::error!(job = job.name(), error = %e, "could not start a jobs thread: the job does not run");
    }
}

/// Runs every due `job` this instance can claim, a batch at a time, until none is left.
fn run_due(shared: &Shared, jobs: &Jobs, job: Job, schedule: Schedule) {
    let lease = lease_ms(jobs);
    let half_lease = Duration::from_millis(u64::try_from(lease / 2).unwrap_or(u64::MAX));
    loop {
        let claimed_at = Instant::now();
        let claimed = match shared.tenants.claim_jobs(job, schedule, lease, jobs.batch) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(job = job.name(), error = %e, "could not claim due jobs");
                return;
            }
        };
        if claimed.is_empty() {
            return;
        }
        for t in claimed {
            if claimed_at.elapsed() > half_lease {
                match shared.tenants.renew_job(&t.name, job, lease) {
                    Ok(true) => {}
                    // Another instance holds it now: its run, not ours.
                    Ok(false) => continue,
                    Err(e) => {
                        tracing::warn!(job = job.name(), tenant = %t.name, error = %e, "could not renew a job's lease");
                        continue;
                    }
                }
            }
            let started = Instant::now();
            match run_one(shared, jobs, job, &t) {
                Ok(proposals) => {
                    match job {
                        Job::Sweep => shared.jobs.sweeps.inc(),
                        Job::Consolidate => {
                            shared.jobs.consolidation_proposals.inc_by(proposals);
                            shared.jobs.consolidations.inc()
                        }
                    };
                }
                Err(e) => {
                    match job {
                        Job::Sweep => shared.jobs.sweep_errors.inc(),
                        Job::Consolidate => shared.jobs.consolidation_errors.inc(),
                    };
                    tracing::warn!(job = job.name(), tenant = %t.name, error = %e, "a scheduled job failed");
                }
            }
            // A failed job waits for the next period too, rather than retrying at once forever.
            if let Err(e) = shared.tenants.job_done(&t.name, job, schedule) {
                tracing::warn!(job = job.name(), tenant = %t.name, error = %e, "could not mark a job done");
            }
            // Rest as long as the job took (up to `MAX_REST`), once it is counted and marked
            // done, so a job thread works at most about half the time and the requests keep the
            // rest of the machine: a sweep of every tenant at full speed pushed their p99 up by
            // a third.
            std::thread::sleep(started.elapsed().min(MAX_REST));
        }
    }
}

/// Runs one tenant's job: the number of proposals it wrote (0 for a sweep).
fn run_one(shared: &Shared, jobs: &Jobs, job: Job, t: &Tenant) -> Result<u64, String> {
    let mem = (shared.opener)(t)?;
    match job {
        Job::Sweep => mem.sweep(false).map(|_| 0).map_err(|e| e.to_string()),
        Job::Consolidate => {
            let report = mem
                .consolidate(&Options {
                    since: None,
                    dry_run: false,
                    model: jobs.consolidate_model.clone(),
                })
                .map_err(|e| e.to_string())?;
            Ok(report.proposals.iter().filter(|p| p.id.is_some()).count() as u64)
        }
    }
}
