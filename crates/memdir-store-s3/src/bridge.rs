//! The synchronous face of an asynchronous client.
//!
//! The engine's traits are synchronous, and the MCP and HTTP servers call them from inside a
//! tokio runtime, where `Runtime::block_on` panics ("cannot start a runtime from within a
//! runtime"). So the store owns a small runtime of its own: every call is spawned onto it and
//! the calling thread waits on a plain channel, which is legal on any thread, inside a runtime or
//! not. The HTTP connections live on the store's runtime only.

use memdir_store::StoreError;
use std::future::Future;

/// The store's own runtime; shut down without blocking when the last user drops it, so dropping
/// a store inside an async context is safe too.
pub(crate) struct Bridge {
    rt: Option<tokio::runtime::Runtime>,
}

impl Bridge {
    pub(crate) fn new() -> Result<Bridge, StoreError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("memdir-s3")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Backend(format!("cannot start the s3 client: {e}")))?;
        Ok(Bridge { rt: Some(rt) })
    }

    /// Runs `fut` on the store's runtime and waits for its answer.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let rt = self
            .rt
            .as_ref()
            .ok_or_else(|| StoreError::Backend("the s3 client is shut down".into()))?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        rt.spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv().unwrap_or_else(|_| {
            Err(StoreError::Backend(
                "the s3 client stopped in the middle of a call".into(),
            ))
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
