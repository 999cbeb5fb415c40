//! Body selections: which bodies a query of the world considers.

use crate::scenario::BodyId;

/// A set of bodies of a scenario; the empty set stands for every body (the default).
///
/// Built by [`crate::World::select`] from object and `object/link` names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Sorted, without duplicates; empty = every body.
    bodies: Vec<BodyId>,
}

impl Selection {
    /// Every body.
    pub fn all() -> Selection {
        Selection::default()
    }

    /// A selection of the given bodies (sorted and deduplicated); an empty list selects
    /// every body.
    pub fn of(mut bodies: Vec<BodyId>) -> Selection {
        bodies.sort_unstable();
        bodies.dedup();
        Selection { bodies }
    }

    /// Is the body in the selection (always, for the selection of everything)?
    #[inline]
    pub fn contains(&self, id: BodyId) -> bool {
        self.bodies.is_empty() || self.bodies.binary_search(&id).is_ok()
    }

    /// Does the selection stand for every body?
    pub fn is_all(&self) -> bool {
        self.bodies.is_empty()
    }

    /// The selected bodies in `(object, body)` order; empty for the selection of
    /// everything.
    pub fn bodies(&self) -> &[BodyId] {
        &self.bodies
    }

    /// Does the selection hold any body of `object`?
    #[inline]
    pub(crate) fn touches_object(&self, object: usize) -> bool {
        if self.bodies.is_empty() {
            return true;
        }
        let k = self.bodies.partition_point(|b| b.object < object);
        self.bodies.get(k).is_some_and(|b| b.object == object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(object: usize, body: usize) -> BodyId {
        BodyId { object, body }
    }

    #[test]
    fn empty_selection_is_everything() {
        let s = Selection::all();
        assert!(s.is_all());
        assert!(s.contains(id(3, 7)));
        assert!(s.touches_object(5));
    }

    #[test]
    fn membership_and_objects() {
        let s = Selection::of(vec![id(2, 1), id(0, 4), id(2, 1), id(2, 0)]);
        assert!(!s.is_all());
        assert_eq!(s.bodies(), &[id(0, 4), id(2, 0), id(2, 1)]);
        assert!(s.contains(id(0, 4)) && s.contains(id(2, 0)));
        assert!(!s.contains(id(0, 3)) && !s.contains(id(1, 0)));
        assert!(s.touches_object(0) && s.touches_object(2));
        assert!(!s.touches_object(1) && !s.touches_object(3));
    }
}
