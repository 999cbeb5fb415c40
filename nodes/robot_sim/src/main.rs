//! `robot_sim` node: the ROS 2 plumbing around [`robot_sim::hardware`] comes in a later step.

fn main() {}
