//! Per-ply search state and the triangular principal-variation table.

use crate::position::Move;
use arrayvec::ArrayVec;

use crate::types::MAX_PLY;

/// What the search remembers about one ply of the current line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Frame {
    /// Static evaluation at this ply (`-INFINITE` when in check).
    pub static_eval: i32,
    /// The move played from this ply (`None` for a null move).
    pub mv: Option<Move>,
    /// Continuation-history context of that move.
    pub ctx: Option<usize>,
    /// Quiet moves that caused cutoffs at this ply.
    pub killers: [Option<Move>; 2],
    /// Move left out by a singular-extension search.
    pub excluded: Option<Move>,
    /// Double extensions on the line up to the move played from this ply, that move's
    /// own included.
    pub double_ext: u8,
    /// Whether this ply's position is or was on a principal variation (kept for the
    /// singular search at the same ply, which has no table entry of its own).
    pub tt_pv: bool,
}

/// Principal variations: the line below each ply, rebuilt from the child's line when a
/// move raises alpha.
pub struct PvTable {
    lines: Vec<ArrayVec<Move, MAX_PLY>>,
}

impl PvTable {
    /// An empty table.
    pub fn new() -> PvTable {
        PvTable { lines: vec![ArrayVec::new(); MAX_PLY + 1] }
    }

    /// Forgets the line at `ply` (a PV node starts with none).
    #[inline]
    pub fn clear(&mut self, ply: usize) {
        self.lines[ply].clear();
    }

    /// The line at `ply` becomes `m` followed by the line at `ply + 1`.
    #[inline]
    pub fn update(&mut self, ply: usize, m: Move) {
        let (head, tail) = self.lines.split_at_mut(ply + 1);
        let line = &mut head[ply];
        line.clear();
        line.push(m);
        let child = &tail[0];
        let room = MAX_PLY - 1;
        line.extend(child.iter().copied().take(room));
    }

    /// The line at `ply`.
    pub fn line(&self, ply: usize) -> &[Move] {
        &self.lines[ply]
    }
}

impl Default for PvTable {
    fn default() -> Self {
        PvTable::new()
    }
}
