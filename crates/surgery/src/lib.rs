//! Surgical virtual protections after section 4 of "RPQ: Robotic Proximity Queries" (the
//! robot-assisted cranial cut). No ROS types.
//!
//! * [`SurfaceNavigator`] (§4.1, Fig. 7): keeps a point or sphere tool out of a
//!   [`ProtectionSet`] by projecting the desired position onto the triangles its motion would
//!   cross (the six outside regions of [`regions`]), taking the closest candidate, and
//!   repeating until the motion is collision-free; [`SurfaceNavigator::filter_twist`] is the
//!   forbidden-region correction of a commanded twist.
//! * [`generate_shield`] (§4.2.2, eq. 4) and [`generate_cutting_aid`] (§4.2.3, eq. 5): the
//!   protection meshes over a cut [`Outline`] (radial parametrization, star-shaped check,
//!   adaptation disc, inward offset), placed on a curved patient through a [`SurfaceFrame`]
//!   and a [`Ground`].
//! * [`phantom`]: a deterministic cranium phantom (~50,000 triangles) and a cut outline on it.
//! * [`scenario`]: the assisted cut in one process — the RX60 with a drill, the phantom, the
//!   protections, a seeded surgeon, the admittance law of `rpq_virtual_fixtures` with a
//!   guidance fixture along the cut and the forbidden-region correction every period; status
//!   lines, summary, plots (`surgery_sim`).
//!
//! ```
//! use nalgebra::{Point3, Vector3};
//! use rpq_surgery::{generate_cutting_aid, generate_shield, CuttingAidSpec, Outline, ShieldSpec};
//!
//! // a 4 cm × 3 cm elliptic outline drawn on the plane z = 0
//! let pts: Vec<Point3<f64>> = (0..48)
//!     .map(|k| {
//!         let t = k as f64 / 48.0 * std::f64::consts::TAU;
//!         Point3::new(0.02 * t.cos(), 0.015 * t.sin(), 0.0)
//!     })
//!     .collect();
//! let outline = Outline::new(&pts, &Vector3::z())?;
//! let shield = generate_shield(&outline, &ShieldSpec { height: 0.02, margin: 0.03, resolution: 32 }, None)?;
//! assert_eq!(shield.mesh.triangles.len(), 2 * 32 * 32);
//! let aid = generate_cutting_aid(&outline, &CuttingAidSpec { width: 0.005, height: 0.01, resolution: 32 }, None)?;
//! assert_eq!(aid.mesh.triangles.len(), 2 * 32 * 32 - 32);
//! # Ok::<(), rpq_surgery::SurgeryError>(())
//! ```
#![warn(missing_docs)]

mod cutting_aid;
mod error;
mod frame;
mod ground;
mod navigation;
mod outline;
pub mod phantom;
mod probe;
mod protection;
pub mod regions;
pub mod scenario;
mod shield;
pub mod stl;

pub use cutting_aid::{generate_cutting_aid, CuttingAid, CuttingAidSpec};
pub use error::SurgeryError;
pub use frame::SurfaceFrame;
pub use ground::{Ground, MeshGround};
pub use navigation::{Navigation, NavigatorConfig, Outcome, SurfaceNavigator, MAX_PLANES};
pub use outline::{signed_area, Outline, PlanarOutline, MAX_OUTLINE_POINTS};
pub use probe::DistanceProbe;
pub use protection::{Placement, Protection, ProtectionKind, ProtectionSet};
pub use regions::Region;
pub use shield::{generate_shield, Shield, ShieldSpec, MAX_RESOLUTION};
