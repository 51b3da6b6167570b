//! The synchronous face of an asynchronous client.
//!
//! The engine's traits are synchronous, and the MCP and HTTP servers call them from inside a
//! tokio runtime, where `Runtime::block_on` panics ("cannot start a runtime from within a
//! runtime"). So the store owns a small runtime of its own: every call is spawned onto it and
//! the calling thread waits on a plain channel, which is legal on any thread, inside a runtime or
//! not. A backend's connections live on its store's runtime only.

use crate::store::StoreError;
use std::future::Future;

tokio::task_local! {
    /// The thread that called [`Bridge::run`] for the running call.
    static CALLER: std::thread::ThreadId;
}

/// The thread whose [`Bridge::run`] call is running this future (`None` outside one): a
/// backend that ties a connection to a thread (PostgreSQL's change in progress) finds it by this.
pub fn caller() -> Option<std::thread::ThreadId> {
    CALLER.try_with(|t| *t).ok()
}

/// The store's own runtime; shut down without blocking when the last user drops it, so dropping
/// a store inside an async context is safe too.
pub struct Bridge {
    rt: Option<tokio::runtime::Runtime>,
    /// The client's name in messages (`postgresql`, `s3`).
    client: &'static str,
}

impl Bridge {
    /// A runtime of two threads named `thread`, for the client named `client` in messages.
    pub fn new(thread: &str, client: &'static str) -> Result<Bridge, StoreError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(thread)
            .enable_all()
            .build()
            .map_err(|e| {
                StoreError::Unavailable(format!("cannot start the {client} client: {e}"))
            })?;
        Ok(Bridge {
            rt: Some(rt),
            client,
        })
    }

    /// Runs `fut` on the store's runtime and waits for its answer.
    pub fn run<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let rt = self.rt.as_ref().ok_or_else(|| {
            StoreError::Unavailable(format!("the {} client is shut down", self.client))
        })?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let caller = std::thread::current().id();
        rt.spawn(async move {
            let _ = tx.send(CALLER.scope(caller, fut).await);
        });
        rx.recv().unwrap_or_else(|_| {
            Err(StoreError::Unavailable(format!(
                "the {} client stopped in the middle of a call",
                self.client
            )))
        })
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}
