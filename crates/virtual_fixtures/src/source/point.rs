//! Guidance to a target point: [`PointTarget`].

use nalgebra::{Isometry3, Point3, Vector3};

use super::geometry::twist;
use super::guidance::{Guidance, GuidanceSource};

/// A target point: `D = u = [target − p; 0]` (paper sec. III, "choosing D = u"). At the target
/// `D = 0` has rank 0 and a hard fixture holds the tool still.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointTarget {
    /// The target position.
    pub target: Point3<f64>,
}

impl GuidanceSource for PointTarget {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let u = twist(
            self.target - Point3::from(x.translation.vector),
            Vector3::zeros(),
        );
        out.set1(u, u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::geometry::at;
    use nalgebra::Vector6;

    #[test]
    fn point_target_is_d_equals_u() {
        let mut t = PointTarget {
            target: Point3::new(1.0, 2.0, 3.0),
        };
        let mut g = Guidance::empty();
        t.evaluate(&at(Point3::new(1.0, 2.0, 3.0)), &mut g);
        assert_eq!(g.columns()[0], Vector6::zeros());
        t.evaluate(&at(Point3::origin()), &mut g);
        assert_eq!(g.columns()[0], g.u);
    }
}
