//! Jobs the service runs itself (issue 35, item 6): every registered tenant is swept (expired
//! scratch, expired notes, old state lines; what `memdir sweep` does) once per `[jobs]
//! sweep_every`. Each instance looks for due tenants every `check_every` and claims a batch in
//! the registry (PostgreSQL: `memdir.sweeps`, rows claimed with `SKIP LOCKED` under a lease), so
//! one instance sweeps a tenant once per period whatever the number of instances, and a sweep
//! an instance left unfinished (it stopped) is taken over when its lease ends. Sweeps run on a
//! thread of their own, through a memory opened for the sweep (not the table of open tenants),
//! so they never hold up a request beyond the tenant's change lock while the sweep writes. A
//! sweep is one more change in flight beside `max_calls`: like each of them it may hold up to
//! three of the instance's connections (`[store] pool_size` >= 3 x (`max_calls` + 1)).

use crate::service::Shared;
use prometheus_client::metrics::counter::Counter;
use std::sync::Arc;
use std::time::Duration;

/// When the service sweeps its tenants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jobs {
    /// A tenant is swept once per this many milliseconds (`None`: never).
    pub sweep_every_ms: Option<i64>,
    /// How often an instance looks for due tenants, in milliseconds.
    pub check_every_ms: i64,
    /// Tenants claimed at a time.
    pub batch: usize,
}

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs {
            sweep_every_ms: Some(3_600_000),
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
}

/// How long a claimed sweep is an instance's own before another may take it over.
fn lease_ms(jobs: &Jobs) -> i64 {
    jobs.check_every_ms.saturating_mul(10).max(600_000)
}

/// Starts the sweeping thread (nothing when sweeps are off).
pub(crate) fn start(shared: Arc<Shared>, jobs: Jobs) {
    let Some(every) = jobs.sweep_every_ms else {
        return;
    };
    let wait = Duration::from_millis(u64::try_from(jobs.check_every_ms.max(1)).unwrap_or(60_000));
    let spawned = std::thread::Builder::new()
        .name("memdir-jobs".into())
        .spawn(move || {
            loop {
                // First wait: a restarted instance serves before it sweeps.
                std::thread::sleep(wait);
                loop {
                    let claimed = match shared.tenants.claim_sweeps(lease_ms(&jobs), jobs.batch) {
                        Ok(c) => c,
                        Err(e) => {
                            tracing::warn!(error = %e, "could not claim due sweeps");
                            break;
                        }
                    };
                    if claimed.is_empty() {
                        break;
                    }
                    for t in claimed {
                        let swept = (shared.opener)(&t)
                            .and_then(|mem| mem.sweep(false).map_err(|e| e.to_string()));
                        match swept {
                            Ok(_) => {
                                shared.jobs.sweeps.inc();
                            }
                            Err(e) => {
                                shared.jobs.sweep_errors.inc();
                                tracing::warn!(tenant = %t.name, error = %e, "sweep failed");
                            }
                        }
                        // A failed sweep waits for the next period too, rather than retrying at
                        // once forever.
                        if let Err(e) = shared.tenants.swept(&t.name, every) {
                            tracing::warn!(tenant = %t.name, error = %e, "could not mark a sweep done");
                        }
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "could not start the jobs thread: no tenant is swept");
    }
}
