//! A minimal node on `rpq_ros`: publishes `std_msgs/String` on `chatter` and offers a
//! `std_srvs/Trigger` service `~/reset` that restarts the counter.
//!
//! ```text
//! talker [--listen [--no-wait]] [--ros-args -p publish_rate:=5.0 -p count:=3 -r __node:=t1 ...]
//! ```
//!
//! With `--listen` it instead subscribes to `chatter`, calls `/talker/reset` once (with retry,
//! after waiting for the service unless `--no-wait` is given) and prints what it hears. Both
//! exit with code 0 on SIGINT/SIGTERM or after `count` messages. Run only inside
//! `../shared/netns-run`.

use std::time::Duration;

use futures::StreamExt;
use rpq_ros::{
    msg::std_msgs,
    node::RosNode,
    params::ParamDecl,
    qos, ros_error, ros_info,
    shutdown::Shutdown,
    srv::std_srvs::{Trigger, TriggerRequest, TriggerResponse},
};

type BoxError = Box<dyn std::error::Error>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let shutdown = Shutdown::install()?;
    let decls = [
        ParamDecl::double("publish_rate", 2.0)
            .describe("publishing rate [Hz]")
            .range(0.1, 1000.0),
        ParamDecl::string("message", "hello"),
        ParamDecl::int("count", 0)
            .describe("messages to publish or receive before exiting, 0 = forever")
            .range_int(0, 1_000_000)
            .read_only(),
    ];
    let (mut node, rest) = match RosNode::from_process("talker", &decls) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("talker: {e}");
            std::process::exit(2);
        }
    };
    let count = node.params().i64("count")? as u64;
    if rest.iter().any(|a| a == "--listen") {
        let wait = !rest.iter().any(|a| a == "--no-wait");
        listen(&mut node, &shutdown, count, wait).await
    } else {
        talk(&mut node, &shutdown, count).await
    }
}

async fn talk(node: &mut RosNode, shutdown: &Shutdown, count: u64) -> Result<(), BoxError> {
    let log = node.logger().clone();
    let period = Duration::from_secs_f64(1.0 / node.params().f64("publish_rate")?);
    let text = node.params().str("message")?.to_string();
    let publisher = node.publisher::<std_msgs::String>("chatter", qos::default())?;
    let server = node.service::<Trigger>("~/reset")?;
    let mut requests = std::pin::pin!(server.receive_request_stream());
    let mut tick = tokio::time::interval(period);
    let mut n = 0u64;
    let topic = node.resolve_name("chatter")?;
    ros_info!(log, "publishing on {topic} every {period:?}");
    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            _ = tick.tick() => {
                n += 1;
                if let Err(e) = publisher.publish(std_msgs::String { data: format!("{text} {n}") }) {
                    ros_error!(log, "publish failed: {e}");
                }
                if count > 0 && n >= count { break; }
            }
            req = requests.next() => match req {
                Some(Ok((id, _))) => {
                    ros_info!(log, "reset after {n} messages");
                    n = 0;
                    let resp = TriggerResponse { success: true, message: "counter reset".into() };
                    if let Err(e) = server.async_send_response(id, resp).await {
                        ros_error!(log, "reply failed: {e}");
                    }
                }
                Some(Err(e)) => ros_error!(log, "bad request: {e}"),
                None => break,
            },
        }
    }
    ros_info!(log, "stopping after {n} messages");
    Ok(())
}

async fn listen(
    node: &mut RosNode,
    shutdown: &Shutdown,
    count: u64,
    wait: bool,
) -> Result<(), BoxError> {
    let log = node.logger().clone();
    let sub = node.subscription::<std_msgs::String>("chatter", qos::default())?;
    let client = node.client::<Trigger>("/talker/reset")?;
    if wait {
        node.wait_for_service(&client, Duration::from_secs(10))
            .await?;
    }
    let resp = client
        .call_with_retry(TriggerRequest::default(), Duration::from_millis(500), 10)
        .await?;
    ros_info!(
        log,
        "reset: success={} message={:?} after {} tries",
        resp.success,
        resp.message,
        client.last_tries()
    );
    let mut stream = std::pin::pin!(sub.async_stream());
    let mut n = 0u64;
    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            msg = stream.next() => match msg {
                Some(Ok((m, _))) => {
                    n += 1;
                    println!("heard: {}", m.data);
                    if count > 0 && n >= count { break; }
                }
                Some(Err(e)) => ros_error!(log, "bad message: {e}"),
                None => break,
            },
        }
    }
    Ok(())
}
