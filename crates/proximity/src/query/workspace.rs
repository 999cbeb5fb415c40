//! The reusable traversal state of the queries: stacks, test counters and the closest-pair
//! cache.

/// A node pair waiting in the distance traversal's heap with its lower bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct HeapPair {
    /// Lower bound of the pair's distance (never NaN).
    pub bound: f64,
    /// Node of `a`.
    pub a: u32,
    /// Node of `b`.
    pub b: u32,
}

/// A binary min-heap of node pairs by bound (reused between queries: no allocation once it
/// has grown).
#[derive(Clone, Debug, Default)]
pub(super) struct PairHeap {
    items: Vec<HeapPair>,
}

impl PairHeap {
    #[inline(always)]
    pub fn clear(&mut self) {
        self.items.clear();
    }

    #[inline]
    pub fn push(&mut self, item: HeapPair) {
        let h = &mut self.items;
        let mut k = h.len();
        h.push(item);
        while k > 0 {
            let parent = (k - 1) / 2;
            if h[parent].bound <= item.bound {
                break;
            }
            h[k] = h[parent];
            k = parent;
        }
        h[k] = item;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<HeapPair> {
        let h = &mut self.items;
        let last = h.pop()?;
        if h.is_empty() {
            return Some(last);
        }
        let top = h[0];
        let n = h.len();
        let mut k = 0;
        loop {
            let mut c = 2 * k + 1;
            if c >= n {
                break;
            }
            if c + 1 < n && h[c + 1].bound < h[c].bound {
                c += 1;
            }
            if h[c].bound >= last.bound {
                break;
            }
            h[k] = h[c];
            k = c;
        }
        h[k] = last;
        Some(top)
    }
}

/// Number of slots of the closest-pair cache of a [`QueryWorkspace`].
pub const PAIR_CACHE_SLOTS: usize = 64;

/// One slot of the closest-pair cache: model ids and the leaf pair found last time.
#[derive(Clone, Copy, Debug)]
struct CacheSlot {
    ids: (u64, u64),
    leaves: (u32, u32),
}

/// Reusable traversal state: stacks and a small cache of the last closest triangle pair per
/// model pair (the initial guess of the next distance query).
///
/// Memory is bounded: the cache is a direct-mapped table of [`PAIR_CACHE_SLOTS`] slots
/// (allocated once, on the first distance query), indexed by a hash of the two model ids;
/// a pair whose slot is taken by another pair simply starts without a guess (the answer is
/// the same, only the traversal may be a little longer). The stacks grow to the deepest
/// traversal seen and are then reused. Once both have reached their size, queries do not
/// allocate, except the pair list of [`crate::CollisionMode::AllContacts`] results.
///
/// One workspace per thread; it can be shared by any number of model pairs.
#[derive(Default, Debug)]
pub struct QueryWorkspace {
    pub(super) pair_stack: Vec<(u32, u32)>,
    pub(super) dist_heap: PairHeap,
    last_pair: Vec<Option<CacheSlot>>,
    bv_tests: usize,
    triangle_tests: usize,
}

#[inline(always)]
fn cache_slot(ids: (u64, u64)) -> usize {
    let h = ids
        .0
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(ids.1.wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
    (h >> 58) as usize % PAIR_CACHE_SLOTS
}

impl QueryWorkspace {
    /// A new, empty workspace.
    pub fn new() -> QueryWorkspace {
        QueryWorkspace::default()
    }

    /// `(bounding-volume tests, triangle tests)` of the last query run with this workspace.
    pub fn last_counts(&self) -> (usize, usize) {
        (self.bv_tests, self.triangle_tests)
    }

    /// Forgets the cached closest triangle pairs.
    pub fn clear_cache(&mut self) {
        self.last_pair.iter_mut().for_each(|s| *s = None);
    }

    /// Number of model pairs currently holding a cached closest pair (at most
    /// [`PAIR_CACHE_SLOTS`]).
    pub fn cached_pairs(&self) -> usize {
        self.last_pair.iter().filter(|s| s.is_some()).count()
    }

    pub(super) fn cached(&self, ids: (u64, u64)) -> Option<(u32, u32)> {
        match self.last_pair.get(cache_slot(ids)) {
            Some(Some(slot)) if slot.ids == ids => Some(slot.leaves),
            _ => None,
        }
    }

    pub(super) fn remember(&mut self, ids: (u64, u64), leaves: (u32, u32)) {
        if self.last_pair.is_empty() {
            self.last_pair = vec![None; PAIR_CACHE_SLOTS];
        }
        self.last_pair[cache_slot(ids)] = Some(CacheSlot { ids, leaves });
    }

    /// Records the test counts of the query just run (read back by [`Self::last_counts`]).
    #[inline]
    pub(super) fn set_counts(&mut self, bv_tests: usize, triangle_tests: usize) {
        self.bv_tests = bv_tests;
        self.triangle_tests = triangle_tests;
    }
}
