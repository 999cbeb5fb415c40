//! Generates the nodes' parameter declarations, typed structs and documented parameter files
//! from their one definitions, `params/<node>.yaml` (see `rpq_param_gen`).

fn main() {
    rpq_param_gen::build(&[
        "params/admittance_controller.yaml",
        "params/steady_hand_guidance.yaml",
        "params/simulated_user.yaml",
        "params/netft_driver.yaml",
        "params/netft_emulator.yaml",
    ]);
}
