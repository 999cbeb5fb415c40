//! The node skeleton: what every node binary does around its own work, so its `main` is one line.
//!
//! [`run_node`] builds a single-threaded tokio runtime, installs SIGINT/SIGTERM handling
//! ([`Shutdown`]), creates the node from the process's ROS environment and `--ros-args`
//! (warning about arguments outside `--ros-args`), gives it its [`Clock`] (`use_sim_time`),
//! and runs the node's body. A body that returns an error ends the process with exit code 1
//! and one line on stderr naming the node and the whole cause chain:
//!
//! ```text
//! Error: robot_sim: robot_description_file x.urdf: cannot read it: No such file or directory (os error 2)
//! ```
//!
//! A node:
//!
//! ```no_run
//! use rpq_ros::run::{run_node, NodeStart};
//! use rpq_ros::{msg::std_msgs, qos};
//!
//! async fn run(start: NodeStart) -> Result<(), Box<dyn std::error::Error>> {
//!     let (mut node, shutdown, clock, _log) = start.into_parts();
//!     let publisher = node.publisher::<std_msgs::String>("out", qos::default())?;
//!     let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
//!     loop {
//!         tokio::select! {
//!             _ = shutdown.wait() => return Ok(()),
//!             _ = tick.tick() => {
//!                 let text = format!("{}", clock.now().as_secs_f64());
//!                 publisher.publish(std_msgs::String { data: text })?;
//!             }
//!         }
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     // the node's parameter declarations (`use_sim_time` is always added) instead of `&[]`
//!     run_node("talker", &[], run)
//! }
//! ```

use std::{error::Error, future::Future, process::ExitCode};

use crate::{clock::Clock, log::Logger, node::RosNode, params::ParamDecl, shutdown::Shutdown};

/// What [`run_node`] hands the node's body.
#[derive(Debug)]
pub struct NodeStart {
    /// The node, with its parameters resolved and its logger.
    pub node: RosNode,
    /// Set by SIGINT/SIGTERM: the body leaves its loop and returns `Ok(())` (exit code 0).
    pub shutdown: Shutdown,
    /// The node's clock for stamps and timeouts: system, or `/clock` with `use_sim_time`.
    pub clock: Clock,
}

impl NodeStart {
    /// The node, the shutdown flag, the clock and (a clone of) the node's logger, for a body
    /// that starts `let (mut node, shutdown, clock, log) = start.into_parts();`.
    pub fn into_parts(self) -> (RosNode, Shutdown, Clock, Logger) {
        let log = self.node.logger().clone();
        (self.node, self.shutdown, self.clock, log)
    }
}

/// Runs a node: runtime, signals, node `default_name` with the parameters `decls`, its clock,
/// then `body`; returns the process exit code (see the module docs).
pub fn run_node<F, Fut>(default_name: &str, decls: &[ParamDecl], body: F) -> ExitCode
where
    F: FnOnce(NodeStart) -> Fut,
    Fut: Future<Output = Result<(), Box<dyn Error>>>,
{
    run_main(default_name, async move {
        let shutdown = Shutdown::install()?;
        let (mut node, extra) = RosNode::from_process(default_name, decls)?;
        if !extra.is_empty() {
            node.logger().warn(format!(
                "ignoring arguments outside --ros-args: {}",
                extra.join(" ")
            ));
        }
        let clock = Clock::for_node(&mut node)?;
        body(NodeStart {
            node,
            shutdown,
            clock,
        })
        .await
    })
}

/// Runs `body` on a single-threaded tokio runtime; an error is printed as
/// `Error: <name>: <error>: <cause>: ...` and gives exit code 1. For programs that are not a
/// plain node (a benchmark driving one); nodes use [`run_node`].
pub fn run_main<Fut>(name: &str, body: Fut) -> ExitCode
where
    Fut: Future<Output = Result<(), Box<dyn Error>>>,
{
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| -> Box<dyn Error> { format!("cannot start the tokio runtime: {e}").into() })
        .and_then(|runtime| runtime.block_on(body));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {}", error_chain(name, e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

/// `<name>: <error>: <cause>: ...`: the error and every source below it. A cause whose text
/// the line already holds (an error that prints its source itself) is not repeated.
pub fn error_chain(name: &str, error: &dyn Error) -> String {
    let mut line = format!("{name}: {error}");
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        source = cause.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::NodeError;

    #[derive(Debug, thiserror::Error)]
    enum Outer {
        #[error("cannot start")]
        Start(#[source] NodeError),
        #[error("printed: {0}")]
        Printed(#[source] std::io::Error),
    }

    #[test]
    fn the_whole_cause_chain_is_printed_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = Outer::Start(NodeError::io("cannot read a.yaml", io()));
        assert_eq!(
            error_chain("n", &e),
            "n: cannot start: cannot read a.yaml: no such file"
        );
        let e = Outer::Printed(io());
        assert_eq!(error_chain("n", &e), "n: printed: no such file");
    }

    #[test]
    fn run_main_maps_results_to_exit_codes() {
        assert_eq!(run_main("t", async { Ok(()) }), ExitCode::SUCCESS);
        assert_eq!(
            run_main("t", async { Err("boom".into()) }),
            ExitCode::FAILURE
        );
    }
}
