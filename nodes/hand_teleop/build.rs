//! Generates the nodes' parameter declarations, typed structs and documented parameter files
//! from their one definitions, `params/<node>.yaml` (see `rpq_param_gen`).

fn main() {
    rpq_param_gen::build(&[
        "params/hand_mapping.yaml",
        "params/glove_calibration.yaml",
        "params/simulated_glove.yaml",
        "params/cyberglove_driver.yaml",
    ]);
}
