//! Tools of the RPQ robot layer (`rpq_query`, `rpq_eval`, `rpq_bench`, `rpq_scale`,
//! `rpq_manybody`) and what only they need: the peers measured beside our engine (parry3d-f64
//! in process, Coal through its Python bindings), progress bars and plots. The libraries
//! (`rpq_proximity`, `rpq_scene`) depend on none of it.
#![warn(missing_docs)]

pub mod coal_peer;
pub mod parry_peer;

/// A progress bar on stderr in the tools' style; it also reports the collision-matrix
/// generator's progress.
pub struct Bar(pub indicatif::ProgressBar);

impl std::fmt::Debug for Bar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bar")
    }
}

impl Bar {
    /// A bar of `len` units with a message.
    pub fn new(len: u64, msg: impl Into<String>) -> Bar {
        let pb = indicatif::ProgressBar::new(len);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:32} [{elapsed_precise}] {wide_bar} {pos}/{len} ({eta})",
            )
            .expect("valid template"),
        );
        pb.set_message(msg.into());
        Bar(pb)
    }

    /// One more unit.
    pub fn inc(&self, n: u64) {
        self.0.inc(n);
    }

    /// Removes the bar.
    pub fn finish_and_clear(&self) {
        self.0.finish_and_clear();
    }
}

impl rpq_scene::Progress for Bar {
    fn inc(&self, n: u64) {
        self.0.inc(n);
    }

    fn inc_length(&self, n: u64) {
        self.0.inc_length(n);
    }
}
