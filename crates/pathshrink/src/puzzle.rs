//! The block-puzzle work site of §3 and §6 as meshes and a scene file, made by this program
//! (`ps_puzzle_gen --out-dir .` writes `meshes/puzzle/*.stl` and `config/puzzle.scene.yaml`;
//! a test checks that the committed files are exactly what it generates).
//!
//! World frame: the robot's base at the origin, z up, the table top at z = 0. The work area
//! is about 350 mm across, centred 0.35 m in front of the robot (within the RX60's reach with
//! the gripper pointing down):
//!
//! | object | size (mm) | where (m) |
//! |---|---|---|
//! | `table` | 500 × 500 × 30, top at z = 0 | centre (0.35, 0) |
//! | `frame` | rigid open frame: inner 90 × 90, walls 12 thick, 20 high | centre (0.35, 0.07) |
//! | `tall_block` | 30 × 30 × 60 | (0.475, 0.07) |
//! | `block_1` | 30 cube: the cornering task's workpiece | (0.50, 0.0), turned 20° |
//! | `block_2` | 30 cube: the corner-rounding task's workpiece | (0.33, −0.035) |
//! | `block_3` | 30 cube, already in the frame | inner corner (−x, +y) |
//!
//! The workpieces start 1 mm (the barrier distance ε_b) above the table; the fixed blocks
//! stand on it.

use std::path::{Path, PathBuf};

use crate::error::PathShrinkError;

/// Scene file written by the generator, relative to the repository root.
pub const SCENE_PATH: &str = "config/puzzle.scene.yaml";
/// Folder of the meshes, relative to the repository root.
pub const MESH_DIR: &str = "meshes/puzzle";
/// Edge of a wooden block (m).
pub const BLOCK: f64 = 0.030;
/// Workpieces rest this far (m) above the table: the barrier distance of the default
/// simulator parameters.
pub const REST_GAP: f64 = 0.001;
/// Centre of the frame (m).
pub const FRAME_CENTRE: [f64; 2] = [0.35, 0.07];
/// Inner half width of the frame (m).
pub const FRAME_INNER: f64 = 0.045;
/// Wall thickness of the frame (m).
pub const FRAME_WALL: f64 = 0.012;
/// Wall height of the frame (m).
pub const FRAME_HEIGHT: f64 = 0.020;

/// The triangles of an axis-aligned box, outward winding (12 triangles).
pub fn box_triangles(lo: [f64; 3], hi: [f64; 3]) -> Vec<[[f64; 3]; 3]> {
    let c = |i: usize| {
        [
            if i & 1 == 0 { lo[0] } else { hi[0] },
            if i & 2 == 0 { lo[1] } else { hi[1] },
            if i & 4 == 0 { lo[2] } else { hi[2] },
        ]
    };
    // Faces as corner indices (counter-clockwise seen from outside).
    const FACES: [[usize; 4]; 6] = [
        [0, 2, 3, 1], // z-
        [4, 5, 7, 6], // z+
        [0, 1, 5, 4], // y-
        [2, 6, 7, 3], // y+
        [0, 4, 6, 2], // x-
        [1, 3, 7, 5], // x+
    ];
    let mut out = Vec::with_capacity(12);
    for f in FACES {
        out.push([c(f[0]), c(f[1]), c(f[2])]);
        out.push([c(f[0]), c(f[2]), c(f[3])]);
    }
    out
}

/// A box of half extents `h` centred at the origin.
pub fn centred_box(h: [f64; 3]) -> Vec<[[f64; 3]; 3]> {
    box_triangles([-h[0], -h[1], -h[2]], h)
}

/// Binary STL bytes of triangles (metres, stored as f32).
pub fn stl_bytes(triangles: &[[[f64; 3]; 3]]) -> Vec<u8> {
    let t: Vec<[[f32; 3]; 3]> = triangles
        .iter()
        .map(|t| t.map(|p| p.map(|x| x as f32)))
        .collect();
    rpq_base::mesh::binary_stl(&t)
}

/// The frame's walls in its own frame: four boxes, floor at z = 0.
pub fn frame_triangles() -> Vec<[[f64; 3]; 3]> {
    let (i, o, h) = (FRAME_INNER, FRAME_INNER + FRAME_WALL, FRAME_HEIGHT);
    let mut t = Vec::new();
    t.extend(box_triangles([-o, -o, 0.0], [o, -i, h])); // south (y-)
    t.extend(box_triangles([-o, i, 0.0], [o, o, h])); // north (y+)
    t.extend(box_triangles([-o, -i, 0.0], [-i, i, h])); // west (x-)
    t.extend(box_triangles([i, -i, 0.0], [o, i, h])); // east (x+)
    t
}

/// One object of the scene: name, mesh file name, position (m) and yaw (rad).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PuzzleObject {
    /// Object name.
    pub name: &'static str,
    /// Mesh file in [`MESH_DIR`].
    pub mesh: &'static str,
    /// Position of the object frame (m).
    pub xyz: [f64; 3],
    /// Rotation about z (rad).
    pub yaw: f64,
}

/// The objects of the scene, in file order.
pub fn objects() -> Vec<PuzzleObject> {
    let half = BLOCK / 2.0;
    let [fx, fy] = FRAME_CENTRE;
    vec![
        PuzzleObject {
            name: "table",
            mesh: "table.stl",
            xyz: [0.35, 0.0, 0.0],
            yaw: 0.0,
        },
        PuzzleObject {
            name: "frame",
            mesh: "frame.stl",
            xyz: [fx, fy, 0.0],
            yaw: 0.0,
        },
        PuzzleObject {
            name: "tall_block",
            mesh: "tall_block.stl",
            xyz: [0.475, 0.07, BLOCK],
            yaw: 0.0,
        },
        PuzzleObject {
            name: "block_1",
            mesh: "block.stl",
            xyz: [0.50, 0.0, half + REST_GAP],
            yaw: 20f64.to_radians(),
        },
        PuzzleObject {
            name: "block_2",
            mesh: "block.stl",
            xyz: [0.33, -0.035, half + REST_GAP],
            yaw: 0.0,
        },
        PuzzleObject {
            name: "block_3",
            mesh: "block.stl",
            xyz: [
                fx - FRAME_INNER + half + REST_GAP,
                fy + FRAME_INNER - half - REST_GAP,
                half,
            ],
            yaw: 0.0,
        },
    ]
}

fn num(x: f64) -> String {
    // Shortest round-trip text; -0 as 0.
    format!("{:?}", x + 0.0)
}

/// The scene file text (relative paths from `config/`).
pub fn scene_yaml() -> String {
    let mut s = String::from(
        "# Block-puzzle work site of Lloyd & Pai (§3, §6, Fig. 4) for path shrinking: table, rigid\n\
         # frame, tall block and 30 mm wooden blocks, with the RX60 that executes the programs.\n\
         # Generated by `ps_puzzle_gen --out-dir .` (crates/pathshrink/src/puzzle.rs): do not edit.\n\
         # World frame: robot base at the origin, z up, table top at z = 0 (metres, radians).\n\
         robots:\n  - name: rx60\n    urdf: ../urdf/rx60b.urdf\n    base: {xyz: [0, 0, 0], rpy: [0, 0, 0]}\nobjects:\n",
    );
    for o in objects() {
        s += &format!(
            "  - name: {}\n    stl: ../{MESH_DIR}/{}\n    pose: {{xyz: [{}, {}, {}], rpy: [0, 0, {}]}}\n",
            o.name,
            o.mesh,
            num(o.xyz[0]),
            num(o.xyz[1]),
            num(o.xyz[2]),
            num(o.yaw)
        );
    }
    s
}

/// Every generated file: path relative to the repository root and its bytes.
pub fn files() -> Vec<(PathBuf, Vec<u8>)> {
    let half = BLOCK / 2.0;
    let mesh = |name: &str, t: Vec<[[f64; 3]; 3]>| (Path::new(MESH_DIR).join(name), stl_bytes(&t));
    vec![
        mesh(
            "table.stl",
            box_triangles([-0.25, -0.25, -0.03], [0.25, 0.25, 0.0]),
        ),
        mesh("frame.stl", frame_triangles()),
        mesh("block.stl", centred_box([half; 3])),
        mesh("tall_block.stl", centred_box([half, half, BLOCK])),
        (PathBuf::from(SCENE_PATH), scene_yaml().into_bytes()),
    ]
}

/// Writes the files below `root` (creating folders); returns their paths.
pub fn write(root: &Path) -> Result<Vec<PathBuf>, PathShrinkError> {
    let mut out = Vec::new();
    for (rel, bytes) in files() {
        let path = root.join(&rel);
        let io = |e: std::io::Error| PathShrinkError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        std::fs::write(&path, bytes).map_err(io)?;
        out.push(path);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_triangles_wind_outwards() {
        let t = box_triangles([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]);
        let centre = nalgebra::Vector3::new(0.5, 1.0, 1.5);
        for tri in t {
            let [a, b, c] = tri.map(nalgebra::Vector3::from);
            let n = (b - a).cross(&(c - a));
            assert!(n.dot(&(a - centre)) > 0.0, "{tri:?}");
        }
    }
}
