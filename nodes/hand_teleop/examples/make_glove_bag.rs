//! Writes `tests/bags/hand_glove/` and `tests/bags/hand_glove_expected/expected.yaml` (see
//! `hand_teleop::fixture`). Run from the repository root:
//! `cargo run -p hand_teleop --example make_glove_bag`.

use hand_teleop::fixture;
use rpq_bag::{BagWriter, TopicSpec};
use rpq_ros::interfaces::rpq_interfaces::msg::GloveReading;
use rpq_ros::msg::RosMessage;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::path::Path::new("tests/bags/hand_glove");
    let _ = std::fs::remove_dir_all(dir);
    let mut w = BagWriter::create(dir)?;
    w.add_topic(TopicSpec::new(
        "/glove/raw",
        GloveReading::TYPE_NAME,
        &GloveReading::definition(),
    ))?;
    let stream = fixture::glove_stream();
    for (ns, msg) in &stream {
        w.write_to_topic("/glove/raw", *ns, *ns, &rpq_ros::cdr::to_vec(msg)?)?;
    }
    w.finish()?;
    std::fs::create_dir_all("tests/bags/hand_glove_expected")?;
    std::fs::write(
        "tests/bags/hand_glove_expected/expected.yaml",
        fixture::expected_yaml(&fixture::expected_outputs(&stream)),
    )?;
    println!("wrote {} readings to {}", stream.len(), dir.display());
    Ok(())
}
