//! [`RosNode`]: a `ros2-client` node set up the way rclcpp sets up a node.
//!
//! From a default name, the ROS environment ([`RosEnv`]), the ROS command line ([`RosArgs`]) and
//! the parameter declarations, [`RosNode::new`]:
//! * applies `-r __node:=` / `-r __ns:=`;
//! * resolves the parameters (defaults, `--params-file`s, `-p`), failing clearly on unknown or
//!   ill-typed values, and serves them over the ROS parameter services (`ros2 param list/get`);
//!   remote sets are checked against the declared type, range and read-only flag;
//! * creates the DDS participant for the domain and discovery range, the node with `/rosout`
//!   logging, and runs its spinner as a tokio task (so call it inside a tokio runtime);
//! * creates publishers, subscriptions, services and clients on names resolved like rcl does
//!   (relative names get the namespace, `~/x` is private, remaps apply) with the presets of
//!   [`qos`] and the service mapping of the RMW in [`RosEnv`].
//!
//! With the suite's message types ([`crate::msg`], [`crate::srv`]) the type name comes from the
//! type: [`RosNode::publisher`], [`RosNode::subscription`], [`RosNode::service`],
//! [`RosNode::client`]. The `create_*` variants take the ROS type name explicitly
//! (`"sensor_msgs/msg/JointState"`, `"std_srvs/srv/Trigger"`) for any serde type.
//!
//! A complete node: a parameter, a subscription, a publisher, a service, clean shutdown.
//!
//! ```no_run
//! use futures::StreamExt;
//! use rpq_ros::{msg::std_msgs, node::RosNode, params::ParamDecl, qos, ros_info};
//! use rpq_ros::{shutdown::Shutdown, srv::std_srvs::{Trigger, TriggerResponse}};
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let shutdown = Shutdown::install()?; // SIGINT/SIGTERM -> leave the loop, exit code 0
//!     let decls = [ParamDecl::string("prefix", "echo: ").describe("text put before each message")];
//!     let (mut node, _program_args) = RosNode::from_process("echo", &decls)?;
//!     let prefix = node.params().str("prefix")?.to_string();
//!     let publisher = node.publisher::<std_msgs::String>("out", qos::default())?;
//!     let sub = node.subscription::<std_msgs::String>("in", qos::default())?;
//!     let server = node.service::<Trigger>("~/ping")?;
//!     let mut msgs = std::pin::pin!(sub.async_stream());
//!     let mut requests = std::pin::pin!(server.receive_request_stream());
//!     loop {
//!         tokio::select! {
//!             _ = shutdown.wait() => break,
//!             Some(Ok((m, _))) = msgs.next() => {
//!                 publisher.publish(std_msgs::String { data: format!("{prefix}{}", m.data) })?;
//!             }
//!             Some(Ok((id, _))) = requests.next() => {
//!                 let pong = TriggerResponse { success: true, message: "pong".into() };
//!                 server.async_send_response(id, pong).await?;
//!             }
//!         }
//!     }
//!     ros_info!(node.logger(), "shutting down");
//!     Ok(())
//! }
//! ```

use std::{
    collections::BTreeMap,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use ros2_client::dds::rustdds::Topic;
/// The publisher type [`RosNode::publisher`] returns, so that nodes can name it.
pub use ros2_client::Publisher;
use ros2_client::{
    Context, Message, MessageTypeName, Name, Node, NodeName, NodeOptions, QosProfile, Server,
    ServiceTypeName, Subscription,
};
use serde::{de::DeserializeOwned, Serialize};

use crate::{
    args::{ArgsError, RosArgs},
    env::{EnvError, RosEnv},
    log::{logger_name, LogLevel, Logger},
    msg::RosMessage,
    names::{self, validate_node_name},
    params::{ParamDecl, ParamError, Params},
    qos,
    service::{wait_in_slices, ServiceClient, ServiceError},
    srv::RosService,
};

/// Everything that can go wrong while setting up or using a node.
#[derive(Debug, thiserror::Error)]
pub enum RosError {
    /// Bad ROS environment variable.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// Bad ROS command line.
    #[error(transparent)]
    Args(#[from] ArgsError),
    /// Bad parameter file, override or declaration.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// Failed service call.
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// A topic, service or node name that ROS would not accept.
    #[error("bad name {name:?}: {reason}")]
    Name {
        /// The name as given.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// `ros2-client` refused to create something.
    #[error("cannot create {what}: {reason}")]
    Create {
        /// What we tried to create.
        what: String,
        /// What ros2-client said.
        reason: String,
    },
    /// [`RosNode::new`] was called outside a tokio runtime.
    #[error("RosNode::new must be called inside a tokio runtime (the spinner is a tokio task)")]
    NoRuntime,
}

fn create_err(what: impl Into<String>, e: impl std::fmt::Display) -> RosError {
    RosError::Create {
        what: what.into(),
        reason: e.to_string(),
    }
}

/// A ROS 2 node with rclcpp-like naming, parameters, QoS and logging. See the module docs.
pub struct RosNode {
    // Field order matters for drop: the node goes before the context.
    node: Node,
    context: Context,
    env: RosEnv,
    args: RosArgs,
    name: String,
    namespace: String,
    params: Params,
    logger: Logger,
    spinner: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RosNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RosNode")
            .field("name", &self.fully_qualified_name())
            .field("domain_id", &self.env.domain_id)
            .finish_non_exhaustive()
    }
}

impl Drop for RosNode {
    fn drop(&mut self) {
        // Dropping the ros2-client node also signals its spinner; aborting makes sure the task
        // ends even if it is not polled again.
        self.spinner.abort();
    }
}

impl RosNode {
    /// Reads the environment and `std::env::args()`, then calls [`RosNode::new`]. Returns the
    /// node and the program's own (non-ROS) arguments.
    pub fn from_process(
        default_name: &str,
        decls: &[ParamDecl],
    ) -> Result<(RosNode, Vec<String>), RosError> {
        let env = RosEnv::from_env()?;
        let (args, rest) = RosArgs::from_env()?;
        Ok((Self::new(default_name, env, args, decls)?, rest))
    }

    /// Creates the node. Must run inside a tokio runtime. Opens DDS sockets.
    pub fn new(
        default_name: &str,
        env: RosEnv,
        args: RosArgs,
        decls: &[ParamDecl],
    ) -> Result<RosNode, RosError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| RosError::NoRuntime)?;
        validate_node_name(default_name).map_err(|reason| RosError::Name {
            name: default_name.to_string(),
            reason,
        })?;
        let name = args
            .node_name_override(default_name)
            .unwrap_or(default_name)
            .to_string();
        let namespace = args
            .namespace_override(default_name)
            .unwrap_or("/")
            .to_string();
        let fqn = fully_qualified(&namespace, &name);
        let params = Params::load(decls, &fqn, &args)?;
        let log_name = logger_name(&namespace, &name);
        let level = args.log_level_for(&log_name).unwrap_or(LogLevel::Info);

        let context = env.context()?;
        let node_name = NodeName::new(&namespace, &name).map_err(|e| RosError::Name {
            name: fqn.clone(),
            reason: e.to_string(),
        })?;
        let (options, started) = node_options(&params, args.rosout_logs);
        let mut node = context
            .new_node(node_name, options)
            .map_err(|e| create_err(format!("node {fqn}"), e))?;
        started.store(true, Ordering::SeqCst);
        let spinner = node
            .spinner()
            .map_err(|e| create_err(format!("spinner of {fqn}"), e))?;
        let task_logger = Logger::console_only(&log_name, LogLevel::Error);
        let spinner = runtime.spawn(async move {
            if let Err(e) = spinner.spin().await {
                task_logger.error(format!("node spinner stopped: {e}"));
            }
        });
        let rosout = args.rosout_logs.then(|| node.logging_handle());
        let logger = Logger::new(&log_name, level, args.stdout_logs, rosout);
        for note in env.notes.iter().chain(&args.notes) {
            logger.warn(note);
        }
        logger.debug(format!(
            "node {fqn} on domain {} ({:?}, {})",
            env.domain_id,
            env.discovery_range,
            env.rmw.name()
        ));
        Ok(RosNode {
            node,
            context,
            env,
            args,
            name,
            namespace,
            params,
            logger,
            spinner,
        })
    }

    /// Node name (after `__node` remapping).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Node namespace (after `__ns` remapping), `/` by default.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// `namespace/name`.
    pub fn fully_qualified_name(&self) -> String {
        fully_qualified(&self.namespace, &self.name)
    }

    /// Parameter values as resolved at start-up.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The current value of a parameter, including changes made remotely through
    /// `set_parameters` since start-up.
    pub fn parameter(&self, name: &str) -> Option<ros2_client::ParameterValue> {
        self.node.get_parameter(name)
    }

    /// The node's logger (stderr + `/rosout`).
    pub fn logger(&self) -> &Logger {
        &self.logger
    }

    /// The ROS environment the node was created with.
    pub fn env(&self) -> &RosEnv {
        &self.env
    }

    /// The ROS command line the node was created with.
    pub fn args(&self) -> &RosArgs {
        &self.args
    }

    /// The underlying `ros2-client` node (for what this wrapper does not cover).
    pub fn inner(&self) -> &Node {
        &self.node
    }

    /// The underlying `ros2-client` node, mutably.
    pub fn inner_mut(&mut self) -> &mut Node {
        &mut self.node
    }

    /// The DDS context (participant) of this node.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Resolves a topic or service name: expansion, then this node's remap rules.
    pub fn resolve_name(&self, name: &str) -> Result<String, RosError> {
        names::resolve(
            name,
            &self.name,
            &self.namespace,
            self.args.name_remaps(&self.name),
        )
        .map_err(|reason| RosError::Name {
            name: name.to_string(),
            reason,
        })
    }

    fn ros_name(&self, name: &str) -> Result<(String, Name), RosError> {
        let fqn = self.resolve_name(name)?;
        let parsed = Name::parse(&fqn).map_err(|e| RosError::Name {
            name: fqn.clone(),
            reason: e.to_string(),
        })?;
        Ok((fqn, parsed))
    }

    fn topic(
        &self,
        name: &str,
        type_name: &str,
        qos: &QosProfile,
    ) -> Result<(String, Topic), RosError> {
        let (pkg, ty) =
            names::split_type_name(type_name, "msg").map_err(|reason| RosError::Name {
                name: type_name.to_string(),
                reason,
            })?;
        let (fqn, ros_name) = self.ros_name(name)?;
        let topic = self
            .node
            .create_topic(&ros_name, MessageTypeName::new(pkg, ty), qos)
            .map_err(|e| create_err(format!("topic {fqn} ({type_name})"), e))?;
        Ok((fqn, topic))
    }

    /// Creates a publisher of `type_name` (e.g. `"std_msgs/msg/String"`) on `topic`.
    pub fn create_publisher<M: Serialize>(
        &mut self,
        topic: &str,
        type_name: &str,
        qos: QosProfile,
    ) -> Result<Publisher<M>, RosError> {
        let (fqn, t) = self.topic(topic, type_name, &qos)?;
        self.node
            .create_publisher(&t, Some(qos))
            .map_err(|e| create_err(format!("publisher on {fqn}"), e))
    }

    /// Creates a subscription of `type_name` on `topic`. Use [`qos::default()`] for what
    /// rclcpp's `create_subscription<T>(topic, 10, ...)` gives (reliable, keep-last 10).
    pub fn create_subscription<M: DeserializeOwned + 'static>(
        &mut self,
        topic: &str,
        type_name: &str,
        qos: QosProfile,
    ) -> Result<Subscription<M>, RosError> {
        let (fqn, t) = self.topic(topic, type_name, &qos)?;
        self.node
            .create_subscription(&t, Some(qos))
            .map_err(|e| create_err(format!("subscription on {fqn}"), e))
    }

    fn service_names(
        &self,
        name: &str,
        type_name: &str,
    ) -> Result<(String, Name, ServiceTypeName), RosError> {
        let (pkg, ty) =
            names::split_type_name(type_name, "srv").map_err(|reason| RosError::Name {
                name: type_name.to_string(),
                reason,
            })?;
        let (fqn, ros_name) = self.ros_name(name)?;
        Ok((fqn, ros_name, ServiceTypeName::new(pkg, ty)))
    }

    /// Creates a service server of `type_name` (e.g. `"std_srvs/srv/Trigger"`) on `name`, with
    /// [`qos::services()`] and the RMW's service mapping.
    ///
    /// Serve it with `server.receive_request_stream()` and `server.async_send_response(id, r)`.
    pub fn create_service<Req, Resp>(
        &mut self,
        name: &str,
        type_name: &str,
    ) -> Result<Server<Req, Resp>, RosError>
    where
        Req: Message + Clone + 'static,
        Resp: Message + 'static,
    {
        let (fqn, ros_name, ty) = self.service_names(name, type_name)?;
        self.node
            .create_server(
                self.env.service_mapping(),
                &ros_name,
                &ty,
                qos::services(),
                qos::services(),
            )
            .map_err(|e| create_err(format!("service {fqn} ({type_name})"), e))
    }

    /// Creates a service client of `type_name` on `name`, with [`qos::services()`] and the RMW's
    /// service mapping.
    pub fn create_client<Req, Resp>(
        &mut self,
        name: &str,
        type_name: &str,
    ) -> Result<ServiceClient<Req, Resp>, RosError>
    where
        Req: Message + Clone + 'static,
        Resp: Message + 'static,
    {
        let (fqn, ros_name, ty) = self.service_names(name, type_name)?;
        let client = self
            .node
            .create_client(
                self.env.service_mapping(),
                &ros_name,
                &ty,
                qos::services(),
                qos::services(),
            )
            .map_err(|e| create_err(format!("client of {fqn} ({type_name})"), e))?;
        Ok(ServiceClient {
            client,
            name: fqn,
            last_tries: Default::default(),
        })
    }

    /// Creates a publisher of the message type `M` on `topic` (the type name comes from `M`).
    ///
    /// ```no_run
    /// # fn f(node: &mut rpq_ros::node::RosNode) -> Result<(), rpq_ros::node::RosError> {
    /// use rpq_ros::{msg::sensor_msgs::JointState, qos};
    /// let publisher = node.publisher::<JointState>("joint_states", qos::default())?;
    /// # Ok(()) }
    /// ```
    pub fn publisher<M: RosMessage>(
        &mut self,
        topic: &str,
        qos: QosProfile,
    ) -> Result<Publisher<M>, RosError> {
        self.create_publisher(topic, M::TYPE_NAME, qos)
    }

    /// Creates a subscription to the message type `M` on `topic`. [`qos::default()`] gives what
    /// rclcpp's `create_subscription<T>(topic, 10, ...)` does (reliable, keep-last 10).
    pub fn subscription<M: RosMessage>(
        &mut self,
        topic: &str,
        qos: QosProfile,
    ) -> Result<Subscription<M>, RosError> {
        self.create_subscription(topic, M::TYPE_NAME, qos)
    }

    /// Creates a server of the service type `S` on `name`.
    pub fn service<S: RosService>(
        &mut self,
        name: &str,
    ) -> Result<Server<S::Request, S::Response>, RosError> {
        self.create_service(name, S::TYPE_NAME)
    }

    /// Creates a client of the service type `S` on `name`.
    pub fn client<S: RosService>(
        &mut self,
        name: &str,
    ) -> Result<ServiceClient<S::Request, S::Response>, RosError> {
        self.create_client(name, S::TYPE_NAME)
    }

    /// Waits until `client`'s server is matched (see [`ServiceClient::wait_for_service`]).
    pub async fn wait_for_service<Req, Resp>(
        &self,
        client: &ServiceClient<Req, Resp>,
        timeout: Duration,
    ) -> Result<(), RosError>
    where
        Req: Message + Clone + 'static,
        Resp: Message + 'static,
    {
        Ok(client.wait_for_service(&self.node, timeout).await?)
    }

    /// Waits until at least one subscription matches `publisher`, or `timeout` passes; returns
    /// whether one did.
    pub async fn wait_for_subscriber<M: Serialize>(
        &self,
        publisher: &Publisher<M>,
        timeout: Duration,
    ) -> bool {
        wait_in_slices(timeout, || publisher.wait_for_subscription(&self.node)).await
    }

    /// Waits until at least one publisher matches `subscription`, or `timeout` passes; returns
    /// whether one did.
    pub async fn wait_for_publisher<M: 'static>(
        &self,
        subscription: &Subscription<M>,
        timeout: Duration,
    ) -> bool {
        wait_in_slices(timeout, || subscription.wait_for_publisher(&self.node)).await
    }
}

fn fully_qualified(namespace: &str, name: &str) -> String {
    if namespace == "/" {
        format!("/{name}")
    } else {
        format!("{namespace}/{name}")
    }
}

/// Node options: rosout, parameter services, every resolved parameter declared with its value,
/// and a validator that enforces the declarations on remote sets (after start-up).
fn node_options(params: &Params, rosout: bool) -> (NodeOptions, Arc<AtomicBool>) {
    let mut opts = NodeOptions::new()
        .enable_rosout(rosout)
        .start_parameter_services(true);
    for (name, value) in params.values() {
        opts = opts.declare_parameter(name, value.clone());
    }
    let decls: BTreeMap<String, ParamDecl> = params
        .declarations()
        .map(|d| (d.name.clone(), d.clone()))
        .collect();
    // ros2-client runs the validator on the initial values too; those were checked already,
    // so the validator only applies once `started` is set, right after the node exists.
    let started = Arc::new(AtomicBool::new(false));
    let started_v = Arc::clone(&started);
    opts = opts.parameter_validator(Box::new(move |name, value| {
        if !started_v.load(Ordering::SeqCst) {
            return Ok(());
        }
        match decls.get(name) {
            Some(d) => d.check_update(value),
            None => Err(format!("parameter `{name}` is not declared")),
        }
    }));
    (opts, started)
}
