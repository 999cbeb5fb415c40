//! Generates the nodes' parameter declarations, typed structs and documented parameter files
//! from their one definitions, `params/robot_sim.yaml` and `params/trajectory_loop.yaml` (see
//! `rpq_param_gen`).

fn main() {
    rpq_param_gen::build(&["params/robot_sim.yaml", "params/trajectory_loop.yaml"]);
}
