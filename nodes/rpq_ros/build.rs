//! Generates the Rust message types of `rpq_ros` from interface files:
//!
//! * `ros_interfaces/<pkg>/{msg,srv}/`: the standard ROS 2 Jazzy types the suite uses
//!   (-> `rpq_ros::msg::<pkg>`, `rpq_ros::srv::<pkg>`);
//! * `../../msg/`: the suite's own rosidl package (-> `rpq_ros::interfaces::<pkg>::{msg,srv}`);
//! * `tests/msg/<pkg>/`: interfaces used only by the crate's tests (written to `OUT_DIR`, included
//!   by the tests themselves, never part of the library).
//!
//! Parser and emitter live in `codegen/` so that the tests can include them too. Any problem in an
//! interface file stops the build with `file:line: message`.

use std::fs;
use std::path::{Path, PathBuf};

#[path = "codegen/emit.rs"]
#[allow(dead_code)]
mod emit;
#[path = "codegen/parse.rs"]
#[allow(dead_code)]
mod parse;

use emit::{Package, Registry};
use parse::ParseError;

fn main() {
    if let Err(errors) = run() {
        for e in &errors {
            eprintln!("error: {e}");
        }
        panic!(
            "rpq_ros: {} error(s) in ROS interface files (see above)",
            errors.len()
        );
    }
}

fn run() -> Result<(), Vec<ParseError>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let std_dir = manifest.join("ros_interfaces");
    let suite_dir = manifest.join("../../msg");
    let test_dir = manifest.join("tests/msg");
    for path in [
        &std_dir,
        &suite_dir,
        &test_dir,
        &manifest.join("codegen"),
        &manifest.join("build.rs"),
    ] {
        println!("cargo:rerun-if-changed={}", path.display());
    }

    let mut registry = Registry::default();
    let mut std_packages = Vec::new();
    for dir in subdirs(&std_dir)? {
        let name = file_name(&dir);
        let pkg = load_package(&dir, &name, format!("$lib::msg::{name}"))?;
        std_packages.push(name);
        registry.add(pkg).map_err(|m| vec![error(&std_dir, m)])?;
    }

    let suite_name = package_xml_name(&suite_dir)?;
    let suite = load_package(
        &suite_dir,
        &suite_name,
        format!("$lib::interfaces::{suite_name}::msg"),
    )?;
    check_rosidl_package(&suite_dir, &suite)?;
    registry
        .add(suite)
        .map_err(|m| vec![error(&suite_dir, m)])?;

    let mut test_packages = Vec::new();
    if test_dir.is_dir() {
        for dir in subdirs(&test_dir)? {
            let name = file_name(&dir);
            let pkg = load_package(&dir, &name, format!("crate::{name}::msg"))?;
            test_packages.push(name);
            registry.add(pkg).map_err(|m| vec![error(&test_dir, m)])?;
        }
    }

    registry.check()?;

    // Standard messages and services: one module per package.
    let mut msg_code = String::new();
    let mut srv_code = String::new();
    for name in &std_packages {
        let pkg = registry.package(name).expect("added above");
        if !pkg.messages.is_empty() {
            msg_code += &format!(
                "#[doc = \"Messages of the ROS 2 package `{name}` (Jazzy definitions).\"]\n\
                 pub mod {name} {{\n{}}}\n\n",
                registry.emit_messages(name, "crate").map_err(|e| vec![e])?
            );
        }
        if !pkg.services.is_empty() {
            srv_code += &format!(
                "#[doc = \"Services of the ROS 2 package `{name}` (Jazzy definitions).\"]\n\
                 pub mod {name} {{\n{}}}\n\n",
                registry.emit_services(name, "crate").map_err(|e| vec![e])?
            );
        }
    }
    write(&out_dir.join("std_msgs.rs"), &msg_code);
    write(&out_dir.join("std_srvs.rs"), &srv_code);

    let suite_code = emit_interface_package(&registry, &suite_name, "crate")?;
    write(&out_dir.join("interfaces.rs"), &suite_code);

    // Index of every type of the library: type name -> definition.
    let mut index: Vec<(String, String)> = Vec::new();
    for name in std_packages.iter().chain([&suite_name]) {
        let pkg = registry.package(name).expect("added above");
        let (msg_mod, srv_mod) = if name == &suite_name {
            (
                format!("crate::interfaces::{name}::msg"),
                format!("crate::interfaces::{name}::srv"),
            )
        } else {
            (format!("crate::msg::{name}"), format!("crate::srv::{name}"))
        };
        for m in &pkg.messages {
            index.push((m.type_name(), format!("{msg_mod}::{}", m.name)));
        }
        for s in &pkg.services {
            index.push((
                s.request.type_name(),
                format!("{srv_mod}::{}Request", s.name),
            ));
            index.push((
                s.response.type_name(),
                format!("{srv_mod}::{}Response", s.name),
            ));
        }
    }
    index.sort();
    let mut index_code = String::from(
        "/// ROS type names of every message type in this crate (standard types, the suite's \
         interfaces, service requests and responses), sorted.\npub const TYPE_NAMES: &[&str] = &[\n",
    );
    for (type_name, _) in &index {
        index_code += &format!("    {type_name:?},\n");
    }
    index_code += "];\n\n/// The rosbag2 definition ([`RosMessage::definition`]) of the type called `type_name` \
                   (as in [`TYPE_NAMES`]), if this crate has it.\n\
                   pub fn definition_of(type_name: &str) -> Option<String> {\n    match type_name {\n";
    for (type_name, path) in &index {
        index_code += &format!(
            "        {type_name:?} => Some(<{path} as crate::msg::RosMessage>::definition()),\n"
        );
    }
    index_code += "        _ => None,\n    }\n}\n";
    write(&out_dir.join("index.rs"), &index_code);

    // Test-only interfaces: generated with paths into `::rpq_ros` so an integration test can
    // `include!` them at its crate root.
    let mut test_code = String::new();
    for name in &test_packages {
        test_code += &emit_interface_package(&registry, name, "::rpq_ros")?;
    }
    write(&out_dir.join("test_interfaces.rs"), &test_code);
    Ok(())
}

/// `pub mod <pkg> { pub mod msg {..} pub mod srv {..} }` for an interface package.
fn emit_interface_package(
    registry: &Registry,
    name: &str,
    support: &str,
) -> Result<String, Vec<ParseError>> {
    let pkg = registry.package(name).expect("added");
    let msgs = registry.emit_messages(name, support).map_err(|e| vec![e])?;
    let srvs = registry.emit_services(name, support).map_err(|e| vec![e])?;
    let mut code = format!(
        "#[doc = \"Interfaces of the rosidl package `{name}`, generated from its .msg/.srv files.\"]\n\
         pub mod {name} {{\n"
    );
    if !pkg.messages.is_empty() {
        code += &format!("#[doc = \"Messages of `{name}`.\"]\npub mod msg {{\n{msgs}}}\n");
    }
    if !pkg.services.is_empty() {
        code += &format!("#[doc = \"Services of `{name}`.\"]\npub mod srv {{\n{srvs}}}\n");
    }
    code += "}\n";
    Ok(code)
}

fn load_package(dir: &Path, name: &str, msg_path: String) -> Result<Package, Vec<ParseError>> {
    let mut messages = Vec::new();
    let mut services = Vec::new();
    for (file, stem, text) in files(&dir.join("msg"), "msg")? {
        messages.push(parse::parse_message(name, &stem, &file, &text).map_err(|e| vec![e])?);
    }
    for (file, stem, text) in files(&dir.join("srv"), "srv")? {
        services.push(parse::parse_service(name, &stem, &file, &text).map_err(|e| vec![e])?);
    }
    Ok(Package {
        name: name.into(),
        messages,
        services,
        msg_path,
    })
}

/// `(display path, file stem, text)` of every `*.ext` file in `dir`, sorted by name.
fn files(dir: &Path, ext: &str) -> Result<Vec<(String, String, String)>, Vec<ParseError>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let entries = fs::read_dir(dir).map_err(|e| vec![error(dir, e.to_string())])?;
    for entry in entries {
        let path = entry.map_err(|e| vec![error(dir, e.to_string())])?.path();
        if path.extension().and_then(|e| e.to_str()) != Some(ext) {
            continue;
        }
        let text = fs::read_to_string(&path).map_err(|e| vec![error(&path, e.to_string())])?;
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        out.push((display(&path), stem, text));
    }
    out.sort();
    Ok(out)
}

fn subdirs(dir: &Path) -> Result<Vec<PathBuf>, Vec<ParseError>> {
    let entries = fs::read_dir(dir).map_err(|e| vec![error(dir, e.to_string())])?;
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    Ok(out)
}

/// The `<name>` of a rosidl package's `package.xml`.
fn package_xml_name(dir: &Path) -> Result<String, Vec<ParseError>> {
    let path = dir.join("package.xml");
    let xml = fs::read_to_string(&path).map_err(|e| vec![error(&path, e.to_string())])?;
    let name = xml
        .split_once("<name>")
        .and_then(|(_, rest)| rest.split_once("</name>"))
        .map(|(name, _)| name.trim().to_string())
        .filter(|n| parse::is_package_name(n))
        .ok_or_else(|| vec![error(&path, "no valid <name> element".into())])?;
    Ok(name)
}

/// Consistency of the rosidl package with its files: CMakeLists.txt lists every interface file,
/// package.xml depends on every package the interfaces use.
fn check_rosidl_package(dir: &Path, pkg: &Package) -> Result<(), Vec<ParseError>> {
    let cmake_path = dir.join("CMakeLists.txt");
    let cmake =
        fs::read_to_string(&cmake_path).map_err(|e| vec![error(&cmake_path, e.to_string())])?;
    let xml_path = dir.join("package.xml");
    let xml = fs::read_to_string(&xml_path).map_err(|e| vec![error(&xml_path, e.to_string())])?;
    let errors = emit::check_rosidl_package(
        pkg,
        &display(&cmake_path),
        &cmake,
        &display(&xml_path),
        &xml,
    );
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn write(path: &Path, code: &str) {
    // Write only on change, so that dependent crates are not rebuilt needlessly.
    if fs::read_to_string(path).ok().as_deref() != Some(code) {
        fs::write(path, code).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string()
}

fn display(path: &Path) -> String {
    // Shorter, stable file names in messages: strip `..` components where possible.
    fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

fn error(path: &Path, message: String) -> ParseError {
    ParseError {
        file: display(path),
        line: 1,
        message,
    }
}
