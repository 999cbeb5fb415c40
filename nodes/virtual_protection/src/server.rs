//! The request handling of `virtual_protection`: the protection set in force (the patient,
//! the shield, the cutting aid), one function per service, and the
//! `rpq_interfaces/ProtectionMeshes` message. Nothing here panics on bad input: a bad request
//! gets `success = false` and a message naming the problem, and leaves the set unchanged.

use std::path::{Path, PathBuf};

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_base::file::FileArea;
use rpq_kinematics::TriMesh;
use rpq_ros::interfaces::rpq_interfaces::msg::{ProtectionMesh, ProtectionMeshes};
use rpq_ros::interfaces::rpq_interfaces::srv::{
    GenerateCuttingAidRequest, GenerateCuttingAidResponse, GenerateShieldRequest,
    GenerateShieldResponse,
};
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{Point, Vector3 as RosVector3};
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::srv::std_srvs::TriggerResponse;
use rpq_surgery::phantom::{cranium_phantom, PhantomSpec};
use rpq_surgery::stl::to_binary_stl;
use rpq_surgery::{
    generate_cutting_aid, generate_shield, CuttingAidSpec, Ground, MeshGround, Outline, Protection,
    ProtectionKind, ProtectionSet, ShieldSpec, MAX_OUTLINE_POINTS,
};

use crate::settings::Settings;
use crate::NodeError;

/// Names of the protections in the set.
pub mod names {
    /// The patient.
    pub const PATIENT: &str = "patient";
    /// The shield.
    pub const SHIELD: &str = "shield";
    /// The cutting aid.
    pub const CUTTING_AID: &str = "cutting_aid";
}

/// The node's state: the protections in force and what requests may change.
#[derive(Debug)]
pub struct ProtectionServer {
    frame_id: String,
    set: ProtectionSet,
    shield: ShieldSpec,
    aid: CuttingAidSpec,
    output_directory: Option<PathBuf>,
    reply_mesh_max_bytes: usize,
    revision: u64,
}

/// Serialized size of a mesh message's vertices and indices [B] (CDR: 24 bytes per point, 4 per
/// index).
pub fn mesh_payload_bytes(mesh: &ProtectionMesh) -> usize {
    mesh.vertices.len() * 24 + mesh.triangles.len() * 4
}

fn to_u32(v: i64) -> usize {
    usize::try_from(v).unwrap_or(0)
}

/// A request's number, where 0 means the node's parameter `param`.
fn or_param<T: Default + PartialEq>(requested: T, param: T) -> T {
    if requested == T::default() {
        param
    } else {
        requested
    }
}

/// A plain mesh as the message.
pub fn mesh_msg(name: &str, kind: ProtectionKind, mesh: &TriMesh) -> ProtectionMesh {
    ProtectionMesh {
        name: name.to_string(),
        kind: match kind {
            ProtectionKind::Shield => ProtectionMesh::KIND_SHIELD,
            ProtectionKind::CuttingAid => ProtectionMesh::KIND_CUTTING_AID,
            ProtectionKind::Patient => ProtectionMesh::KIND_PATIENT,
            ProtectionKind::Other => ProtectionMesh::KIND_OTHER,
        },
        vertices: mesh
            .vertices
            .iter()
            .map(|p| Point {
                x: p.x,
                y: p.y,
                z: p.z,
            })
            .collect(),
        triangles: mesh
            .triangles
            .iter()
            .flat_map(|t| t.iter().copied())
            .collect(),
    }
}

/// A protection's mesh in the set's frame (its pose applied).
fn placed_mesh(p: &Protection) -> TriMesh {
    TriMesh {
        vertices: p.model.vertices().iter().map(|v| p.pose * v).collect(),
        triangles: p.model.triangles().to_vec(),
    }
}

impl ProtectionServer {
    /// The server of a node started with `s`: loads or generates the patient.
    pub fn new(s: &Settings) -> Result<ProtectionServer, NodeError> {
        let p = &s.params;
        let [x, y, z] = p.patient.position;
        let pose = Isometry3::translation(x, y, z);
        let mesh = match p.patient.source.as_str() {
            "phantom" => Some(cranium_phantom(&PhantomSpec::default())?),
            "file" => {
                let limit = u64::try_from(p.max_mesh_size).unwrap_or(1);
                let bytes = rpq_base::file::read_bounded(&p.patient.mesh_file, limit)
                    .map_err(|e| rpq_ros::NodeError::config("patient.mesh_file", e.to_string()))?;
                Some(
                    TriMesh::from_stl_bytes(&bytes).map_err(|e| {
                        rpq_ros::NodeError::config("patient.mesh_file", e.to_string())
                    })?,
                )
            }
            _ => None,
        };
        let mut set = ProtectionSet::new();
        if let Some(m) = mesh {
            set.insert(Protection::from_mesh(
                names::PATIENT,
                ProtectionKind::Patient,
                &m,
                pose,
            )?);
        }
        Ok(ProtectionServer {
            frame_id: p.frame_id.clone(),
            set,
            shield: ShieldSpec {
                height: p.shield.height,
                margin: p.shield.margin,
                resolution: to_u32(p.shield.resolution),
            },
            aid: CuttingAidSpec {
                width: p.cutting_aid.width,
                height: p.cutting_aid.height,
                resolution: to_u32(p.cutting_aid.resolution),
            },
            output_directory: (!p.output_directory.is_empty())
                .then(|| PathBuf::from(&p.output_directory)),
            reply_mesh_max_bytes: usize::try_from(p.reply_mesh_max_bytes).unwrap_or(0),
            revision: 0,
        })
    }

    /// The protections in force (patient, shield, cutting aid, whichever exist).
    pub fn protections(&self) -> &ProtectionSet {
        &self.set
    }

    /// The frame of every mesh.
    pub fn frame_id(&self) -> &str {
        &self.frame_id
    }

    /// Incremented on every change of the set.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The set as the latched message.
    pub fn meshes_msg(&self, stamp: &Time) -> ProtectionMeshes {
        ProtectionMeshes {
            header: Header {
                stamp: *stamp,
                frame_id: self.frame_id.clone(),
            },
            meshes: self
                .set
                .items()
                .iter()
                .map(|p| mesh_msg(&p.name, p.kind, &placed_mesh(p)))
                .collect(),
        }
    }

    /// The outline of a request in the node's frame, checked.
    fn outline(
        &self,
        frame_id: &str,
        points: &[Point],
        up: &RosVector3,
    ) -> Result<Outline, String> {
        if !(frame_id.is_empty() || frame_id == self.frame_id) {
            return Err(format!(
                "frame_id `{frame_id}` is not the node's frame `{}` (this node looks up no transforms)",
                self.frame_id
            ));
        }
        if points.len() > MAX_OUTLINE_POINTS {
            return Err(format!(
                "outline has {} points, at most {MAX_OUTLINE_POINTS}",
                points.len()
            ));
        }
        let pts: Vec<Point3<f64>> = points.iter().map(|p| Point3::new(p.x, p.y, p.z)).collect();
        let mut up = Vector3::new(up.x, up.y, up.z);
        if !up.iter().all(|v| v.is_finite()) {
            return Err("up is not finite (NaN or infinite)".into());
        }
        if up.norm() == 0.0 {
            up = Vector3::z();
        }
        Outline::new(&pts, &up).map_err(|e| format!("outline refused: {e}"))
    }

    /// The ground the protections stand on: the patient, if any.
    fn with_ground<T>(&self, outline: &Outline, f: impl FnOnce(Option<&mut dyn Ground>) -> T) -> T {
        match self.set.get(names::PATIENT) {
            Some(p) => {
                let mut g = MeshGround::new(&p.model, p.pose, *outline.frame());
                f(Some(&mut g))
            }
            None => f(None),
        }
    }

    /// Saves `mesh` as binary STL under `name` inside the output directory.
    fn save(&self, name: &str, mesh: &TriMesh) -> Result<String, String> {
        let Some(dir) = &self.output_directory else {
            return Err(format!(
                "save_as `{name}` refused: this node saves no files (output_directory is not set)"
            ));
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("output directory {}: {e}", dir.display()))?;
        let area = FileArea::new(dir, true)
            .map_err(|e| format!("output directory cannot be used: {e}"))?;
        area.write(name, &to_binary_stl(mesh))
            .map(|p| p.display().to_string())
            .map_err(|e| format!("save_as refused: {e}"))
    }

    fn check_name(&self, name: &str) -> Result<(), String> {
        if name.is_empty() {
            return Ok(());
        }
        let Some(dir) = &self.output_directory else {
            return Err(format!(
                "save_as `{name}` refused: this node saves no files (output_directory is not set)"
            ));
        };
        FileArea::new(Path::new("/"), false)
            .and_then(|a| a.check_name(name))
            .map(|_| ())
            .map_err(|e| {
                format!(
                    "save_as refused: {e} (names are relative to {})",
                    dir.display()
                )
            })
    }

    fn put(&mut self, name: &str, kind: ProtectionKind, mesh: &TriMesh) -> Result<(), String> {
        let p = Protection::from_mesh(name, kind, mesh, Isometry3::identity())
            .map_err(|e| e.to_string())?;
        self.set.insert(p);
        self.revision += 1;
        Ok(())
    }

    /// The common path of both services: checks the request's outline and file name,
    /// generates the mesh with the patient as ground, saves it if asked, puts it in force.
    /// Returns the mesh message, the saved file and what `generate` returned besides the mesh.
    fn generate<T>(
        &mut self,
        frame_id: &str,
        points: &[Point],
        up: &RosVector3,
        save_as: &str,
        (name, kind): (&str, ProtectionKind),
        generate: impl FnOnce(
            &Outline,
            Option<&mut dyn Ground>,
        ) -> Result<(TriMesh, T), rpq_surgery::SurgeryError>,
    ) -> Result<(ProtectionMesh, String, T), String> {
        let outline = self.outline(frame_id, points, up)?;
        self.check_name(save_as)?;
        let (mesh, extra) = self
            .with_ground(&outline, |g| generate(&outline, g))
            .map_err(|e| format!("{} refused: {e}", name.replace('_', " ")))?;
        let saved = if save_as.is_empty() {
            String::new()
        } else {
            self.save(save_as, &mesh)?
        };
        self.put(name, kind, &mesh)?;
        Ok((mesh_msg(name, kind, &mesh), saved, extra))
    }

    /// The mesh as a reply carries it, and a note for the reply's message: a mesh larger than
    /// `reply_mesh_max_bytes` is left out (name and kind stay), since a reply that DDS must
    /// fragment does not arrive (see docs/surgery.md, "Large replies").
    fn for_reply(&self, mut msg: ProtectionMesh, saved: bool) -> (ProtectionMesh, String) {
        let bytes = mesh_payload_bytes(&msg);
        if bytes <= self.reply_mesh_max_bytes {
            return (msg, String::new());
        }
        msg.vertices = Vec::new();
        msg.triangles = Vec::new();
        let note = format!(
            "; the mesh ({} kB) is not in this reply (reply_mesh_max_bytes = {} B): read it from \
             ~/protections{}",
            bytes.div_ceil(1000),
            self.reply_mesh_max_bytes,
            if saved { " or the saved file" } else { "" }
        );
        (msg, note)
    }

    /// `~/generate_shield`.
    pub fn generate_shield(&mut self, req: &GenerateShieldRequest) -> GenerateShieldResponse {
        let spec = ShieldSpec {
            height: or_param(req.height, self.shield.height),
            margin: or_param(req.margin, self.shield.margin),
            resolution: or_param(req.resolution as usize, self.shield.resolution),
        };
        let made = self.generate(
            &req.frame_id,
            &req.outline,
            &req.up,
            &req.save_as,
            (names::SHIELD, ProtectionKind::Shield),
            |o, g| generate_shield(o, &spec, g).map(|s| (s.mesh, s.adapted)),
        );
        match made {
            Ok((mesh, saved_file, adapted)) => {
                let triangles = mesh.triangles.len() / 3;
                let (mesh, note) = self.for_reply(mesh, !saved_file.is_empty());
                GenerateShieldResponse {
                    success: true,
                    message: format!(
                        "shield of {triangles} triangles (N = {}, H = {} m, margin {} m){} in force{note}",
                        spec.resolution,
                        spec.height,
                        spec.margin,
                        if adapted {
                            ", on the outline's convex hull with the adaptation disc (the outline is not star-shaped)"
                        } else {
                            ""
                        }
                    ),
                    mesh,
                    adapted,
                    saved_file,
                }
            }
            Err(message) => GenerateShieldResponse {
                success: false,
                message,
                ..Default::default()
            },
        }
    }

    /// `~/generate_cutting_aid`.
    pub fn generate_cutting_aid(
        &mut self,
        req: &GenerateCuttingAidRequest,
    ) -> GenerateCuttingAidResponse {
        let spec = CuttingAidSpec {
            width: or_param(req.width, self.aid.width),
            height: or_param(req.height, self.aid.height),
            resolution: or_param(req.resolution as usize, self.aid.resolution),
        };
        let made = self.generate(
            &req.frame_id,
            &req.outline,
            &req.up,
            &req.save_as,
            (names::CUTTING_AID, ProtectionKind::CuttingAid),
            |o, g| generate_cutting_aid(o, &spec, g).map(|a| (a.mesh, ())),
        );
        match made {
            Ok((mesh, saved_file, ())) => {
                let triangles = mesh.triangles.len() / 3;
                let (mesh, note) = self.for_reply(mesh, !saved_file.is_empty());
                GenerateCuttingAidResponse {
                    success: true,
                    message: format!(
                        "cutting aid of {triangles} triangles (N = {}, cut width {} m, height {} m) in force{note}",
                        spec.resolution,
                        spec.width,
                        spec.height
                    ),
                    mesh,
                    saved_file,
                }
            }
            Err(message) => GenerateCuttingAidResponse {
                success: false,
                message,
                ..Default::default()
            },
        }
    }

    /// `~/clear`: removes the shield and the cutting aid (the patient stays).
    pub fn clear(&mut self) -> TriggerResponse {
        let removed: Vec<&str> = [names::SHIELD, names::CUTTING_AID]
            .into_iter()
            .filter(|n| self.set.remove(n))
            .collect();
        if !removed.is_empty() {
            self.revision += 1;
        }
        TriggerResponse {
            success: true,
            message: if removed.is_empty() {
                "nothing to clear".into()
            } else {
                format!("removed {}", removed.join(" and "))
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{declarations, Settings};
    use rpq_ros::params::Params;

    fn server(extra: &str) -> ProtectionServer {
        let yaml = format!("virtual_protection:\n  ros__parameters:\n{extra}");
        let p =
            Params::resolve(&declarations(), "/virtual_protection", &[("p", &yaml)], &[]).unwrap();
        ProtectionServer::new(&Settings::load(&p).unwrap()).unwrap()
    }

    fn square(a: f64) -> Vec<Point> {
        [(-a, -a), (a, -a), (a, a), (-a, a)]
            .iter()
            .map(|&(x, y)| Point { x, y, z: 0.1 })
            .collect()
    }

    #[test]
    fn services_good_and_bad() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = server(&format!("    output_directory: {}\n", dir.path().display()));
        assert!(s.protections().is_empty());
        let r = s.generate_shield(&GenerateShieldRequest {
            outline: square(0.02),
            resolution: 16,
            save_as: "shield.stl".into(),
            ..Default::default()
        });
        assert!(r.success, "{}", r.message);
        assert_eq!(r.mesh.triangles.len(), 3 * 2 * 16 * 16);
        assert!(!r.adapted);
        let stl = TriMesh::from_stl_file(dir.path().join("shield.stl")).unwrap();
        assert_eq!(stl.triangles.len(), 512);
        let r = s.generate_cutting_aid(&GenerateCuttingAidRequest {
            outline: square(0.02),
            width: 0.004,
            height: 0.01,
            resolution: 16,
            ..Default::default()
        });
        assert!(r.success, "{}", r.message);
        assert_eq!(s.protections().len(), 2);
        assert_eq!(s.revision(), 2);
        let msg = s.meshes_msg(&Time::default());
        assert_eq!(msg.header.frame_id, "world");
        assert_eq!(msg.meshes.len(), 2);
        // bad requests leave the set as it is
        let bad = |s: &mut ProtectionServer, req: GenerateShieldRequest| {
            let r = s.generate_shield(&req);
            assert!(!r.success);
            r.message
        };
        let bow: Vec<Point> = [(0.0, 0.0), (0.02, 0.02), (0.02, 0.0), (0.0, 0.01)]
            .iter()
            .map(|&(x, y)| Point { x, y, z: 0.0 })
            .collect();
        assert!(bad(
            &mut s,
            GenerateShieldRequest {
                outline: bow,
                ..Default::default()
            }
        )
        .contains("intersects itself"));
        assert!(bad(
            &mut s,
            GenerateShieldRequest {
                outline: square(0.02)[..2].to_vec(),
                ..Default::default()
            }
        )
        .contains("at least 3"));
        let mut nan = square(0.02);
        nan[1].x = f64::NAN;
        assert!(bad(
            &mut s,
            GenerateShieldRequest {
                outline: nan,
                ..Default::default()
            }
        )
        .contains("not finite"));
        assert!(bad(
            &mut s,
            GenerateShieldRequest {
                outline: square(0.02),
                frame_id: "tool0".into(),
                ..Default::default()
            }
        )
        .contains("tool0"));
        assert!(bad(
            &mut s,
            GenerateShieldRequest {
                outline: square(0.02),
                resolution: 100_000,
                ..Default::default()
            }
        )
        .contains("resolution"));
        assert!(bad(
            &mut s,
            GenerateShieldRequest {
                outline: square(0.02),
                height: -1.0,
                ..Default::default()
            }
        )
        .contains("height"));
        assert!(bad(
            &mut s,
            GenerateShieldRequest {
                outline: square(0.02),
                save_as: "../x.stl".into(),
                ..Default::default()
            }
        )
        .contains("save_as"));
        let r = s.generate_cutting_aid(&GenerateCuttingAidRequest {
            outline: square(0.02),
            width: 0.03,
            ..Default::default()
        });
        assert!(
            !r.success && r.message.contains("cut width"),
            "{}",
            r.message
        );
        assert_eq!(s.revision(), 2);
        assert!(!dir.path().join("../x.stl").exists());
        let r = s.clear();
        assert!(r.success && r.message.contains("shield"));
        assert!(s.protections().is_empty());
        assert_eq!(s.clear().message, "nothing to clear");
    }

    /// With the phantom as patient, the feet of the protections stand on it.
    #[test]
    fn phantom_patient_is_the_ground() {
        let mut s = server("    patient:\n      source: phantom\n");
        assert_eq!(s.protections().num_triangles(), 50_784);
        let patient = s.protections().get(names::PATIENT).unwrap().clone();
        let pose = patient.pose;
        let pts =
            rpq_surgery::phantom::cut_outline(&patient.model, &pose, &Default::default()).unwrap();
        let outline: Vec<Point> = pts
            .iter()
            .map(|p| Point {
                x: p.x,
                y: p.y,
                z: p.z,
            })
            .collect();
        let r = s.generate_shield(&GenerateShieldRequest {
            outline: outline.clone(),
            resolution: 24,
            ..Default::default()
        });
        assert!(r.success, "{}", r.message);
        // the outer foot (the first ring) lies on the phantom: its points are at the phantom's
        // height along +z (the default up)
        let frame = Outline::new(&pts, &Vector3::z()).unwrap();
        let mut g = MeshGround::new(&patient.model, pose, *frame.frame());
        for v in &r.mesh.vertices[..24] {
            let l = frame.frame().to_local(&Point3::new(v.x, v.y, v.z));
            assert!((g.height(l.x, l.y).unwrap() - l.z).abs() < 1e-9);
        }
        // an outline off the patient has no ground for its outer curve
        let far: Vec<Point> = outline
            .iter()
            .map(|p| Point { x: p.x + 1.0, ..*p })
            .collect();
        let r = s.generate_shield(&GenerateShieldRequest {
            outline: far,
            ..Default::default()
        });
        assert!(
            !r.success && r.message.contains("no ground"),
            "{}",
            r.message
        );
    }

    #[test]
    fn saving_needs_an_output_directory() {
        let mut s = server("");
        let r = s.generate_shield(&GenerateShieldRequest {
            outline: square(0.02),
            save_as: "a.stl".into(),
            ..Default::default()
        });
        assert!(
            !r.success && r.message.contains("output_directory"),
            "{}",
            r.message
        );
        assert!(s.protections().is_empty());
    }
}
