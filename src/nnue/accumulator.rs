//! The accumulator stack: the feature-transformer output of every position on the
//! current line, kept up to date lazily.
//!
//! Making a move pushes a frame that only records which pieces appeared and vanished
//! (at most two each). Nothing is computed until a position is evaluated; then each
//! perspective walks back to the nearest frame where it is known and replays the recorded
//! changes forward, or refreshes from the board when its own king moved on the way
//! (every index of a perspective depends on its king square, docs/net-format.md §4). A
//! refresh starts from the accumulator last computed with the king on the same square,
//! kept in a cache, and only adds and removes the pieces that differ from that position:
//! a handful of rows instead of all thirty. The sums wrap in i16, so their order does not
//! matter and the result is the full refresh's, lane for lane.

use bytemuck::Zeroable;
use shakmaty::{Bitboard, Color, Piece, Role, Square};

use super::{
    features::{self, FeatureList, PieceSets, FEATURE_PIECES},
    simd::{Job, Simd},
    Half, Network,
};
use crate::position::{Move, MoveKind};

/// What one move changed on the board, as far as the features can see: at most two
/// pieces appeared and two vanished. Plain arrays with counts, not growable lists, so that
/// recording a move is a few stores.
#[derive(Clone, Copy, Debug)]
pub struct Delta {
    /// Pieces that appeared, with their squares: the first `n_added`.
    added: [(Piece, Square); 2],
    /// Pieces that vanished, with their squares: the first `n_removed`.
    removed: [(Piece, Square); 2],
    n_added: u8,
    n_removed: u8,
    /// The side whose king moved: its whole perspective must be refreshed.
    pub king_moved: Option<Color>,
}

impl Default for Delta {
    /// No change (a null move).
    fn default() -> Delta {
        const NOTHING: (Piece, Square) = (Color::White.pawn(), Square::A1);
        Delta {
            added: [NOTHING; 2],
            removed: [NOTHING; 2],
            n_added: 0,
            n_removed: 0,
            king_moved: None,
        }
    }
}

impl Delta {
    /// The feature changes of `m`, played by `turn`. Kings never appear in `added` or
    /// `removed`: they are not features.
    #[inline]
    pub fn of_move(turn: Color, m: Move) -> Delta {
        let mut d = Delta::default();
        let (from, to) = (m.from(), m.to());
        match m.kind() {
            MoveKind::Normal => {
                let role = m.role();
                if role == Role::King {
                    d.king_moved = Some(turn);
                } else {
                    d.removed[0] = (role.of(turn), from);
                    d.added[0] = (m.promotion().unwrap_or(role).of(turn), to);
                    d.n_removed = 1;
                    d.n_added = 1;
                }
                if let Some(captured) = m.capture() {
                    d.removed[usize::from(d.n_removed)] = (captured.of(!turn), to);
                    d.n_removed += 1;
                }
            }
            MoveKind::EnPassant => {
                let captured = Square::from_coords(to.file(), from.rank());
                d.removed = [(Role::Pawn.of(turn), from), (Role::Pawn.of(!turn), captured)];
                d.added[0] = (Role::Pawn.of(turn), to);
                (d.n_added, d.n_removed) = (1, 2);
            }
            MoveKind::Castle => {
                let side = m.castling_side().expect("a castling move has a side");
                d.king_moved = Some(turn);
                d.removed[0] = (Role::Rook.of(turn), to);
                d.added[0] = (Role::Rook.of(turn), side.rook_to(turn));
                (d.n_added, d.n_removed) = (1, 1);
            }
        }
        d
    }

    /// Pieces that appeared, with their squares.
    #[inline]
    pub fn added(&self) -> &[(Piece, Square)] {
        &self.added[..usize::from(self.n_added)]
    }

    /// Pieces that vanished, with their squares.
    #[inline]
    pub fn removed(&self) -> &[(Piece, Square)] {
        &self.removed[..usize::from(self.n_removed)]
    }
}

/// One position on the line: both accumulators, which of them are valid, and how the
/// position differs from its parent.
#[derive(Clone)]
struct Frame {
    acc: [Half; 2],
    computed: [bool; 2],
    delta: Delta,
}

impl Frame {
    fn empty() -> Frame {
        Frame { acc: [Half::zeroed(); 2], computed: [false; 2], delta: Delta::default() }
    }
}

#[inline]
fn slot(c: Color) -> usize {
    match c {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// One perspective's accumulator for one king square, and the pieces it sums.
#[derive(Clone)]
struct CacheEntry {
    acc: Half,
    /// Bitboards of [`FEATURE_PIECES`] as `acc` counts them.
    pieces: [Bitboard; 10],
}

/// The per-ply accumulator stack of one search thread.
#[derive(Clone)]
pub struct AccumulatorStack {
    frames: Vec<Frame>,
    top: usize,
    simd: Simd,
    /// The refresh cache, by perspective and king square (empty until the first
    /// [`AccumulatorStack::reset`], which knows the network).
    cache: Vec<CacheEntry>,
}

impl AccumulatorStack {
    /// An empty stack using the given kernels; call [`AccumulatorStack::reset`] before use.
    pub fn new(simd: Simd) -> AccumulatorStack {
        AccumulatorStack { frames: vec![Frame::empty(); 128], top: 0, simd, cache: Vec::new() }
    }

    /// The kernels this stack uses.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    /// Starts a new line at `board`, computing both perspectives from scratch.
    pub fn reset<B: PieceSets>(&mut self, net: &Network, board: &B) {
        // Each entry starts as the empty board's accumulator: the bias alone.
        let empty = CacheEntry { acc: net.ft_bias, pieces: [Bitboard(0); 10] };
        self.cache.clear();
        self.cache.resize(2 * 64, empty);
        self.top = 0;
        let frame = &mut self.frames[0];
        for c in Color::ALL {
            net.refresh(self.simd, &features::active(board, c), &mut frame.acc[slot(c)]);
            frame.computed[slot(c)] = true;
        }
        frame.delta = Delta::default();
    }

    /// Records `m`, about to be played by `turn`. Nothing is computed yet.
    #[inline]
    pub fn push_move(&mut self, turn: Color, m: Move) {
        self.push(Delta::of_move(turn, m));
    }

    /// Records a null move: the accumulators stay, only the side to move changes.
    #[inline]
    pub fn push_null(&mut self) {
        self.push(Delta::default());
    }

    fn push(&mut self, delta: Delta) {
        self.top += 1;
        if self.top == self.frames.len() {
            self.frames.push(Frame::empty());
        }
        let frame = &mut self.frames[self.top];
        frame.computed = [false; 2];
        frame.delta = delta;
    }

    /// Returns to the parent position.
    #[inline]
    pub fn pop(&mut self) {
        debug_assert!(self.top > 0, "pop below the root");
        self.top -= 1;
    }

    /// Number of moves pushed since the last reset.
    pub fn depth(&self) -> usize {
        self.top
    }

    /// The raw network output for the current position, `board` with `turn` to move,
    /// which must be the position reached by the pushed moves.
    ///
    /// The updates and the layers run in one [`Simd::dispatch`]: one function compiled for
    /// the kernels' instructions, with the kernels inlined.
    pub fn evaluate<B: PieceSets>(&mut self, net: &Network, board: &B, turn: Color) -> i32 {
        struct Evaluation<'a, B>(&'a mut AccumulatorStack, &'a Network, &'a B, Color);
        impl<B: PieceSets> Job for Evaluation<'_, B> {
            type Output = i32;
            #[inline(always)]
            fn run(self, simd: Simd) -> i32 {
                let Evaluation(stack, net, board, turn) = self;
                stack.materialize(simd, net, board, Color::White);
                stack.materialize(simd, net, board, Color::Black);
                let frame = &stack.frames[stack.top];
                net.layers(simd, &frame.acc[slot(turn)], &frame.acc[slot(!turn)])
            }
        }
        self.simd.dispatch(Evaluation(self, net, board, turn))
    }

    /// The current accumulator of `perspective`, computed if needed.
    pub fn accumulator<B: PieceSets>(
        &mut self,
        net: &Network,
        board: &B,
        perspective: Color,
    ) -> &Half {
        self.materialize(self.simd, net, board, perspective);
        &self.frames[self.top].acc[slot(perspective)]
    }

    /// Makes the top frame's `perspective` valid: replays recorded deltas from the nearest
    /// valid ancestor, or refreshes when that perspective's king moved in between.
    /// `simd` is `self.simd`, a constant where the caller is a [`Simd::dispatch`].
    #[inline(always)]
    fn materialize<B: PieceSets>(
        &mut self,
        simd: Simd,
        net: &Network,
        board: &B,
        perspective: Color,
    ) {
        let p = slot(perspective);
        let mut base = self.top;
        while !self.frames[base].computed[p] {
            if base == 0 || self.frames[base].delta.king_moved == Some(perspective) {
                self.refresh(net, board, perspective);
                return;
            }
            base -= 1;
        }
        let Some(king) = board.king_of(perspective) else {
            return;
        };
        for ply in base + 1..=self.top {
            let (before, after) = self.frames.split_at_mut(ply);
            let (parent, frame) = (&before[ply - 1], &mut after[0]);
            // The rows of up to two changes, in a plain array: no list to build.
            let rows = |list: &[(Piece, Square)]| {
                let mut rows = [&net.ft_bias; 2];
                for (row, &(piece, sq)) in rows.iter_mut().zip(list) {
                    *row = net.row(features::index(perspective, king, piece, sq));
                }
                rows
            };
            let delta = frame.delta;
            let (added, removed) = (rows(delta.added()), rows(delta.removed()));
            let added = &added[..delta.added().len()];
            let removed = &removed[..delta.removed().len()];
            simd.update(&mut frame.acc[p], &parent.acc[p], added, removed);
            frame.computed[p] = true;
        }
    }

    /// Makes the top frame's `perspective` valid from the cache entry of its king square,
    /// which is brought up to date on the way.
    fn refresh<B: PieceSets>(&mut self, net: &Network, board: &B, perspective: Color) {
        let p = slot(perspective);
        let frame = &mut self.frames[self.top];
        let Some(king) = board.king_of(perspective) else {
            net.refresh(self.simd, &features::active(board, perspective), &mut frame.acc[p]);
            frame.computed[p] = true;
            return;
        };
        let entry = &mut self.cache[64 * p + king.to_usize()];
        // At most 30 pieces appear or vanish: neither list can overflow.
        let mut added = [&net.ft_bias; 32];
        let mut removed = [&net.ft_bias; 32];
        let (mut n_added, mut n_removed) = (0, 0);
        for (piece, cached) in FEATURE_PIECES.iter().zip(&mut entry.pieces) {
            let now = board.by_piece(*piece);
            if now == *cached {
                continue;
            }
            let row = |sq| net.row(features::index(perspective, king, *piece, sq));
            for sq in now & !*cached {
                added[n_added] = row(sq);
                n_added += 1;
            }
            for sq in *cached & !now {
                removed[n_removed] = row(sq);
                n_removed += 1;
            }
            *cached = now;
        }
        let (added, removed) = (&added[..n_added], &removed[..n_removed]);
        self.simd.update(&mut frame.acc[p], &entry.acc, added, removed);
        entry.acc = frame.acc[p];
        frame.computed[p] = true;
    }
}

/// Computes both accumulators of `board` from scratch (for tests and tools).
pub fn refreshed<B: PieceSets>(net: &Network, simd: Simd, board: &B) -> [Half; 2] {
    let mut acc = [Half::zeroed(); 2];
    for c in Color::ALL {
        let list: FeatureList = features::active(board, c);
        net.refresh(simd, &list, &mut acc[slot(c)]);
    }
    acc
}
