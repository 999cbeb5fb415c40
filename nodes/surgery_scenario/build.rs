//! Generates the node's parameter declarations, typed struct and documented parameter file from
//! its one definition, `params/simulated_surgeon.yaml` (see `rpq_param_gen`).

fn main() {
    rpq_param_gen::build(&["params/simulated_surgeon.yaml"]);
}
