//! `RosNode` over real DDS sockets: two nodes (two participants) in one process.
//!
//! These tests open DDS sockets, so they refuse to run outside a private loopback-only network
//! namespace: run them as `../shared/netns-run cargo test -p rpq_ros --test node_dds`.
//! Each test uses its own ROS domain (220..) so they can run in parallel.

use std::time::Duration;

use futures::StreamExt;
use rpq_ros::{
    args::RosArgs,
    env::RosEnv,
    msg::std_msgs,
    node::RosNode,
    params::ParamDecl,
    qos,
    srv::std_srvs::{Trigger, TriggerRequest, TriggerResponse},
};

/// Panics unless this process's network namespace has no interface but `lo`. Reads
/// `/proc/net/dev`, which follows the namespace (`/sys/class/net` does not unless sysfs is
/// remounted inside it).
fn require_private_netns() {
    let dev = std::fs::read_to_string("/proc/net/dev").unwrap_or_default();
    let ifaces: Vec<&str> = dev
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    assert!(
        ifaces == ["lo"],
        "this test opens DDS sockets and must run inside a private loopback-only network \
         namespace (found interfaces {ifaces:?}); run it with `../shared/netns-run cargo test`"
    );
}

fn node(name: &str, domain_id: u16, ros_args: &[&str]) -> RosNode {
    require_private_netns();
    let env = RosEnv {
        domain_id,
        ..RosEnv::default()
    };
    let mut argv = vec!["--ros-args"];
    argv.extend_from_slice(ros_args);
    argv.extend_from_slice(&["--log-level", "warn"]);
    let (args, _) = RosArgs::parse(argv).unwrap();
    RosNode::new(name, env, args, &[ParamDecl::int("k", 1)]).unwrap()
}

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latched_topic_reaches_a_late_subscriber() {
    let mut a = node("describer", 220, &[]);
    let publisher = a
        .publisher::<std_msgs::String>("robot_description", qos::latched())
        .unwrap();
    publisher
        .publish(std_msgs::String {
            data: "<robot/>".into(),
        })
        .unwrap();
    // The subscriber appears only after the sample was written.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut b = node("reader", 220, &[]);
    let sub = b
        .subscription::<std_msgs::String>("/robot_description", qos::latched())
        .unwrap();
    let mut stream = std::pin::pin!(sub.async_stream());
    let (msg, _) = tokio::time::timeout(WAIT, stream.next())
        .await
        .expect("latched sample not received")
        .unwrap()
        .unwrap();
    assert_eq!(msg.data, "<robot/>");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remapped_and_namespaced_names_meet_on_the_wire() {
    // The publisher writes `~/out` of /arm/src = /arm/src/out, remapped to /shared.
    let mut a = node("src", 221, &["-r", "__ns:=/arm", "-r", "~/out:=/shared"]);
    // The subscriber reads relative `shared` in namespace / (= /shared), renamed to `dst`.
    let mut b = node("orig", 221, &["-r", "__node:=dst"]);
    assert_eq!(a.resolve_name("~/out").unwrap(), "/shared");
    assert_eq!(b.fully_qualified_name(), "/dst");
    let publisher = a
        .publisher::<std_msgs::String>("~/out", qos::default())
        .unwrap();
    let sub = b
        .subscription::<std_msgs::String>("shared", qos::default())
        .unwrap();
    assert!(a.wait_for_subscriber(&publisher, WAIT).await, "no match");
    let mut stream = std::pin::pin!(sub.async_stream());
    let receive = async {
        loop {
            publisher
                .publish(std_msgs::String { data: "hi".into() })
                .unwrap();
            tokio::select! {
                m = stream.next() => return m.unwrap().unwrap().0,
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
    };
    let msg = tokio::time::timeout(WAIT, receive)
        .await
        .expect("nothing received");
    assert_eq!(msg.data, "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_call_with_retry_right_after_creation() {
    let mut server_node = node("server", 222, &[]);
    let server = server_node.service::<Trigger>("~/poke").unwrap();
    let serve = tokio::spawn(async move {
        let mut requests = std::pin::pin!(server.receive_request_stream());
        let mut served = 0u32;
        while let Some(Ok((id, _))) = requests.next().await {
            served += 1;
            let resp = TriggerResponse {
                success: true,
                message: format!("poked {served}"),
            };
            server.async_send_response(id, resp).await.unwrap();
        }
        drop(server_node);
    });
    let mut client_node = node("client", 222, &[]);
    let client = client_node.client::<Trigger>("/server/poke").unwrap();
    // No wait_for_service: the first tries race discovery and are retried.
    let resp = client
        .call_with_retry(TriggerRequest::default(), Duration::from_millis(300), 40)
        .await
        .expect("no reply");
    assert!(resp.success);
    assert!(resp.message.starts_with("poked"));
    assert!(client.last_tries() >= 1);
    // Once matched, a plain call answers at once.
    let resp = client
        .call(TriggerRequest::default(), Duration::from_secs(5))
        .await
        .unwrap();
    assert!(resp.success);
    assert_eq!(client.last_tries(), 1);
    serve.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_slower_than_one_try_still_answers() {
    let mut server_node = node("slow_server", 224, &[]);
    let server = server_node.service::<Trigger>("~/poke").unwrap();
    // Answers each request 400 ms after it arrives, one at a time: longer than a try.
    let serve = tokio::spawn(async move {
        let mut requests = std::pin::pin!(server.receive_request_stream());
        let mut served = 0u32;
        while let Some(Ok((id, _))) = requests.next().await {
            tokio::time::sleep(Duration::from_millis(400)).await;
            served += 1;
            let resp = TriggerResponse {
                success: true,
                message: format!("slow {served}"),
            };
            server.async_send_response(id, resp).await.unwrap();
        }
        drop(server_node);
    });
    let mut client_node = node("slow_client", 224, &[]);
    let client = client_node.client::<Trigger>("/slow_server/poke").unwrap();
    client_node.wait_for_service(&client, WAIT).await.unwrap();
    // Each reply lands during a later try; it must still be accepted.
    let resp = client
        .call_with_retry(TriggerRequest::default(), Duration::from_millis(150), 10)
        .await
        .expect("late reply to an earlier try was dropped");
    assert!(resp.success);
    assert!(resp.message.starts_with("slow "), "{}", resp.message);
    assert!(client.last_tries() > 1, "tries {}", client.last_tries());
    serve.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_service_and_bad_names_are_clear_errors() {
    let mut n = node("lonely", 223, &[]);
    let client = n.client::<Trigger>("nobody_home").unwrap();
    let err = n
        .wait_for_service(&client, Duration::from_millis(300))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/nobody_home"), "{err}");
    let err = client
        .call_with_retry(TriggerRequest::default(), Duration::from_millis(100), 2)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("2 tries"), "{err}");
    let Err(err) = n.publisher::<std_msgs::String>("bad//name", qos::default()) else {
        panic!("bad//name accepted");
    };
    assert!(err.to_string().contains("bad//name"), "{err}");
    assert_eq!(n.params().i64("k").unwrap(), 1);
}
