//! Clean shutdown on SIGINT/SIGTERM.
//!
//! [`Shutdown::install`] starts a small thread that waits for SIGINT or SIGTERM. The first signal
//! sets a flag and wakes every [`Shutdown::wait`] future, so the node's main loop can leave its
//! `select!`, drop its node (which tells the graph it is gone) and return `Ok(())` from `main`:
//! exit code 0, as a ROS launch system expects after it sent the signal. A second signal means
//! the node did not stop in time: the process exits at once with `128 + signal`.
//!
//! ```no_run
//! # async fn f() -> std::io::Result<()> {
//! let shutdown = rpq_ros::shutdown::Shutdown::install()?;
//! let mut tick = tokio::time::interval(std::time::Duration::from_millis(10));
//! loop {
//!     tokio::select! {
//!         _ = shutdown.wait() => break,
//!         _ = tick.tick() => { /* work */ }
//!     }
//! }
//! # Ok(()) }
//! ```

use std::{
    io,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
};

use signal_hook::{
    consts::{SIGINT, SIGTERM},
    iterator::Signals,
};
use tokio::sync::watch;

/// A shutdown flag that signal handlers (or the program) set once.
#[derive(Debug, Clone)]
pub struct Shutdown {
    flag: Arc<AtomicBool>,
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    /// A flag with no signal handling attached (tests, or programs that trigger it themselves).
    pub fn new() -> Shutdown {
        let (tx, _rx) = watch::channel(false);
        Shutdown {
            flag: Arc::new(AtomicBool::new(false)),
            tx: Arc::new(tx),
        }
    }

    /// Installs SIGINT/SIGTERM handling: first signal requests shutdown, second exits at once.
    pub fn install() -> io::Result<Shutdown> {
        let shutdown = Shutdown::new();
        let mut signals = Signals::new([SIGINT, SIGTERM])?;
        let s = shutdown.clone();
        std::thread::Builder::new()
            .name("rpq-signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    if s.requested() {
                        eprintln!("second signal {sig}: exiting without clean shutdown");
                        std::process::exit(128 + sig);
                    }
                    s.trigger();
                }
            })?;
        Ok(shutdown)
    }

    /// Requests shutdown (as a signal would).
    pub fn trigger(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.tx.send_replace(true);
    }

    /// Whether shutdown was requested.
    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Completes once shutdown is requested (at once if it already was).
    pub async fn wait(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = rx.wait_for(|v| *v).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn wait_completes_after_trigger_from_another_thread() {
        let s = Shutdown::new();
        assert!(!s.requested());
        let pending = tokio::time::timeout(Duration::from_millis(50), s.wait()).await;
        assert!(pending.is_err(), "wait() finished before any trigger");
        let s2 = s.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            s2.trigger();
        });
        tokio::time::timeout(Duration::from_secs(5), s.wait())
            .await
            .expect("wait() did not complete after trigger");
        assert!(s.requested());
        // and again, immediately
        tokio::time::timeout(Duration::from_millis(10), s.wait())
            .await
            .unwrap();
    }
}
