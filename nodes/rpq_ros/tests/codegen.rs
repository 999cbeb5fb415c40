//! The interface parser and code generator (`codegen/`, used by `build.rs`), tested on their
//! own: their unit tests run here, plus checks over the real interface files of the crate.

#[path = "../codegen/emit.rs"]
#[allow(dead_code)]
mod emit;
#[path = "../codegen/parse.rs"]
#[allow(dead_code)]
mod parse;

use std::path::Path;

fn read_dir_sorted(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// Every vendored standard definition parses, and its field lines come back unchanged: the file
/// holds nothing but constant and field lines.
#[test]
fn vendored_definitions_parse_line_for_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("ros_interfaces");
    let mut count = 0;
    for pkg_dir in read_dir_sorted(&root).into_iter().filter(|p| p.is_dir()) {
        let pkg = pkg_dir.file_name().unwrap().to_str().unwrap().to_string();
        for kind in ["msg", "srv"] {
            let dir = pkg_dir.join(kind);
            if !dir.is_dir() {
                continue;
            }
            for file in read_dir_sorted(&dir) {
                let name = file.file_stem().unwrap().to_str().unwrap();
                let text = std::fs::read_to_string(&file).unwrap();
                let label = file.display().to_string();
                let halves = if kind == "msg" {
                    vec![parse::parse_message(&pkg, name, &label, &text).unwrap()]
                } else {
                    let s = parse::parse_service(&pkg, name, &label, &text).unwrap();
                    vec![s.request, s.response]
                };
                for m in halves {
                    let lines: Vec<&str> = m.text.lines().collect();
                    assert_eq!(
                        lines.len(),
                        m.fields.len() + m.constants.len(),
                        "{label}: only field and constant lines expected"
                    );
                    for f in &m.fields {
                        assert!(lines.contains(&f.source.as_str()), "{label}: {}", f.source);
                    }
                    count += 1;
                }
            }
        }
    }
    assert!(count >= 40, "only {count} definitions found");
}

/// The suite's interface files parse, and the generated module names the types as documented.
#[test]
fn suite_interfaces_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../msg");
    let text = std::fs::read_to_string(root.join("msg/DriverStatus.msg")).unwrap();
    let m =
        parse::parse_message("rpq_interfaces", "DriverStatus", "DriverStatus.msg", &text).unwrap();
    let names: Vec<_> = m.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "header",
            "mode",
            "holding",
            "rejected_commands",
            "last_error"
        ]
    );
    assert_eq!(m.constants.len(), 4);
    assert!(m.fields[1].doc.iter().any(|l| l.contains("MODE_*")));
    let text = std::fs::read_to_string(root.join("srv/ComputeForwardKinematics.srv")).unwrap();
    let s = parse::parse_service(
        "rpq_interfaces",
        "ComputeForwardKinematics",
        "ComputeForwardKinematics.srv",
        &text,
    )
    .unwrap();
    assert_eq!(s.request.fields.len(), 3);
    assert_eq!(s.response.fields.len(), 3);
    assert_eq!(
        s.response.fields[2].ty.base.named().as_deref(),
        Some("geometry_msgs/PoseStamped")
    );
}
