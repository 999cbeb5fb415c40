//! Generates the node's parameter declarations, typed struct and documented parameter file from
//! its one definition, `params/path_shrinking.yaml` (see `rpq_param_gen`).

fn main() {
    rpq_param_gen::build(&["params/path_shrinking.yaml"]);
}
