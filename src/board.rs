//! The search's view of the game: a stack of positions (copy-make over the search's own
//! [`Position`]), the keys of the game and the line for repetitions, and the NNUE
//! accumulators that follow the same line.
//!
//! Copy-make: making a move copies the top position into the next slot of a fixed array,
//! one slot a ply, and plays the move there; unmaking just steps back. A position is about
//! 300 bytes, so this costs less than the bookkeeping an undo would need.

use shakmaty::{zobrist::Zobrist64, Bitboard, Chess, Color, EnPassantMode, Position as _, Role};

use crate::{
    nnue::{accumulator::AccumulatorStack, simd::Simd, to_internal, Network},
    position::{Move, Position},
    types::MAX_PLY,
};

/// A key mixed from bitboards: each multiplied by its own odd constant and rotated by
/// its own amount, all xored together, then the high bits folded onto the low ones by
/// `fold` (the tables index by the low bits).
#[inline]
fn mix_bitboards<const N: usize>(parts: [(Bitboard, u64, u32); N], fold: u32) -> u64 {
    let x = parts
        .iter()
        .fold(0u64, |acc, &(bb, mul, rot)| acc ^ bb.0.wrapping_mul(mul).rotate_left(rot));
    x ^ (x >> fold)
}

/// What the correction history looks a position up by (see [`Board::correction_keys`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorrectionKeys {
    /// The pawn structure, both sides' pawns.
    pub pawn: u64,
    /// Each side's pieces other than pawns, white's first.
    pub pieces: [u64; 2],
}

/// Key of a position: Polyglot-compatible Zobrist hash, en passant square only when a
/// legal capture exists, halfmove clock excluded. The search's [`Position`] keeps the
/// same key up to date move by move.
#[inline]
pub fn key_of(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// Slots of the position stack: the root, a ply deeper for every ply the search may
/// reach, and a margin.
const STACK_SLOTS: usize = MAX_PLY + 4;

/// A game position plus the line the search is exploring from it.
#[derive(Clone)]
pub struct Board {
    /// `positions[0]` is the root, `positions[ply]` the current position; the slots
    /// beyond are scratch.
    positions: Vec<Position>,
    ply: usize,
    /// Keys of every position since the game's start: the game's history up to the root
    /// (`keys[..root]`), then one per ply of the line (`keys[root + ply]`).
    keys: Vec<u64>,
    /// Index of the root's key in `keys`.
    root: usize,
    /// For each ply of the line, plies since the last null move (or since the game
    /// began): repetitions are not looked for across a null move.
    since_null: Vec<usize>,
    acc: AccumulatorStack,
}

impl Board {
    /// A board at `root`, which was reached through positions with the keys `history`
    /// (oldest first, the root's own key excluded).
    pub fn new(root: Chess, history: &[u64], net: &Network, simd: Simd) -> Board {
        let root = Position::from_chess(&root);
        let mut keys = history.to_vec();
        keys.push(root.key());
        let base = history.len();
        keys.resize(base + STACK_SLOTS, 0);
        let mut acc = AccumulatorStack::new(simd);
        acc.reset(net, &root);
        let mut since_null = vec![0; STACK_SLOTS];
        since_null[0] = base;
        Board { positions: vec![root; STACK_SLOTS], ply: 0, keys, root: base, since_null, acc }
    }

    /// The current position.
    #[inline(always)]
    pub fn pos(&self) -> &Position {
        &self.positions[self.ply]
    }

    /// The position before the last move (the current one at the root).
    #[inline]
    pub fn previous(&self) -> &Position {
        &self.positions[self.ply.saturating_sub(1)]
    }

    /// Plies from the root to the current position.
    #[inline(always)]
    pub fn ply(&self) -> usize {
        self.ply
    }

    /// Zobrist key of the current position.
    #[inline(always)]
    pub fn key(&self) -> u64 {
        self.pos().key()
    }

    /// A key of the current pawn structure (both sides' pawns), for the correction
    /// history.
    #[inline]
    pub fn pawn_key(&self) -> u64 {
        let pos = self.pos();
        let white = (pos.pieces(Color::White, Role::Pawn), 0x9E37_79B9_7F4A_7C15, 0);
        let black = (pos.pieces(Color::Black, Role::Pawn), 0xC2B2_AE3D_27D4_EB4F, 29);
        mix_bitboards([white, black], 31)
    }

    /// The keys of the correction history: the pawn structure, and each side's pieces
    /// other than pawns, white's first.
    #[inline]
    pub fn correction_keys(&self) -> CorrectionKeys {
        const MULTIPLIERS: [u64; 5] = [
            0x9FB2_1C65_1E98_DF25,
            0xD6E8_FEB8_6659_FD93,
            0xA076_1D64_78BD_642F,
            0xE703_7ED1_A0B4_28DB,
            0x8EBC_6AF0_9C88_C6E3,
        ];
        const ROLES: [Role; 5] = [Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];
        let pos = self.pos();
        let pieces = [Color::White, Color::Black].map(|side| {
            let parts: [_; 5] = std::array::from_fn(|i| {
                (pos.pieces(side, ROLES[i]), MULTIPLIERS[i], 11 * i as u32)
            });
            mix_bitboards(parts, 29)
        });
        CorrectionKeys { pawn: self.pawn_key(), pieces }
    }

    /// The side to move.
    #[inline(always)]
    pub fn turn(&self) -> Color {
        self.pos().turn()
    }

    /// Plays a legal move.
    #[inline]
    pub fn make(&mut self, m: Move) {
        let ply = self.ply;
        let (done, next) = self.positions.split_at_mut(ply + 1);
        let (pos, next) = (&done[ply], &mut next[0]);
        self.acc.push_move(pos.turn(), m);
        pos.play_into(m, next);
        self.keys[self.root + ply + 1] = next.key();
        self.since_null[ply + 1] = self.since_null[ply] + 1;
        self.ply = ply + 1;
    }

    /// Passes the turn. The caller must make sure the side to move is not in check.
    pub fn make_null(&mut self) {
        let ply = self.ply;
        let (done, next) = self.positions.split_at_mut(ply + 1);
        next[0].clone_from(&done[ply]);
        next[0].play_null();
        self.keys[self.root + ply + 1] = next[0].key();
        self.since_null[ply + 1] = 0;
        self.ply = ply + 1;
        self.acc.push_null();
    }

    /// Takes back the last move or null move.
    #[inline]
    pub fn unmake(&mut self) {
        debug_assert!(self.ply > 0, "unmake at the root");
        self.ply -= 1;
        self.acc.pop();
    }

    /// Whether the current position counts as drawn by repetition (Stockfish's rule):
    /// it repeats a position reached after the root, within the search's own line (the
    /// side that could avoid the repetition would have done so, and the side that could
    /// not has nothing better than repeating again), or it occurs for the third time
    /// counting the game before the root. A position that occurred once in the game and
    /// again in the search is not a draw yet: the game has not repeated it. Only positions
    /// since the last capture, pawn move or null move can repeat.
    pub fn is_repetition(&self) -> bool {
        let current = self.root + self.ply;
        let since_null = self.since_null[self.ply];
        let reach = (self.pos().halfmoves() as usize).min(since_null);
        let key = self.keys[current];
        // A plain loop: `step_by` does not compile to one, and this runs at every node.
        let mut back = 4;
        let mut seen_in_game = false;
        while back <= reach {
            if self.keys[current - back] == key {
                if back < self.ply || seen_in_game {
                    return true;
                }
                seen_in_game = true;
            }
            back += 2;
        }
        false
    }

    /// Whether the side to move can return, with one reversible move, to a position
    /// earlier in the search's line (an upcoming repetition: the node is worth at least a
    /// draw to the side to move). Found with the cuckoo table of all reversible piece moves
    /// (Marcel van Kervinck's method): the key difference of the two positions must be one
    /// move's, and the squares between its ends empty. Only positions after the root count,
    /// as in [`Board::is_repetition`].
    pub fn upcoming_repetition(&self) -> bool {
        let current = self.root + self.ply;
        let since_null = self.since_null[self.ply];
        let reach = (self.pos().halfmoves() as usize).min(since_null).min(self.ply - 1);
        let key = self.keys[current];
        let occupied = self.pos().occupied();
        let mut back = 3;
        while back <= reach {
            let found = cuckoo::lookup(key ^ self.keys[current - back])
                .is_some_and(|(a, b)| (shakmaty::attacks::between(a, b) & occupied).is_empty());
            if found {
                return true;
            }
            back += 2;
        }
        false
    }

    /// The static evaluation of the current position in internal units, side to move's
    /// point of view, damped as the fifty-move counter rises (Stockfish 12's rule).
    #[inline]
    pub fn evaluate(&mut self, net: &Network) -> i32 {
        let pos = &self.positions[self.ply];
        let raw = self.acc.evaluate(net, pos, pos.turn());
        let v = to_internal(raw);
        v * (100 - pos.halfmoves().min(100) as i32) / 100
    }
}

/// The cuckoo table: every reversible move of a piece (not a pawn) from one square to
/// another on an empty board, filed by the difference it makes to the position key (the
/// piece leaving one square for the other, and the side to move changing). Two hash
/// functions, and at most one move per slot: a lookup reads two slots.
mod cuckoo {
    use std::sync::OnceLock;

    use shakmaty::{
        attacks,
        zobrist::{Zobrist64, ZobristValue},
        Color, Piece, Role, Square,
    };

    const SIZE: usize = 8192;

    struct Table {
        keys: Vec<u64>,
        moves: Vec<Option<(Square, Square)>>,
    }

    fn h1(key: u64) -> usize {
        (key & (SIZE as u64 - 1)) as usize
    }

    fn h2(key: u64) -> usize {
        ((key >> 16) & (SIZE as u64 - 1)) as usize
    }

    /// The key difference of `piece` moving between `a` and `b`.
    fn move_key(piece: Piece, a: Square, b: Square) -> u64 {
        let z = |sq| Zobrist64::zobrist_for_piece(sq, piece).0;
        z(a) ^ z(b) ^ Zobrist64::zobrist_for_white_turn().0
    }

    fn table() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        TABLE.get_or_init(|| {
            let mut t = Table { keys: vec![0; SIZE], moves: vec![None; SIZE] };
            for color in Color::ALL {
                for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King] {
                    let piece = role.of(color);
                    for a in Square::ALL {
                        let reach = attacks::attacks(a, piece, shakmaty::Bitboard(0));
                        for b in reach.into_iter().filter(|&b| b > a) {
                            // Cuckoo insertion: the newcomer takes its first slot and the
                            // occupant moves to its other one, until a slot is free.
                            let (mut key, mut mv) = (move_key(piece, a, b), Some((a, b)));
                            let mut i = h1(key);
                            loop {
                                std::mem::swap(&mut t.keys[i], &mut key);
                                std::mem::swap(&mut t.moves[i], &mut mv);
                                if mv.is_none() {
                                    break;
                                }
                                i = if i == h1(key) { h2(key) } else { h1(key) };
                            }
                        }
                    }
                }
            }
            t
        })
    }

    /// The move (its two squares) whose key difference is `diff`, if any.
    pub fn lookup(diff: u64) -> Option<(Square, Square)> {
        let t = table();
        [h1(diff), h2(diff)].into_iter().find(|&i| t.keys[i] == diff).and_then(|i| t.moves[i])
    }

    #[cfg(test)]
    pub fn len() -> usize {
        table().moves.iter().flatten().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{engine::parse_position, nnue::default_network, rng::Rng};

    /// The board's line follows a shakmaty game played alongside: after every legal move
    /// of random games (from the start and from positions rich in castling, en passant and
    /// promotions), and after null moves and take-backs mixed in, the current position
    /// and its key are those of the shakmaty game, and the evaluation is the one a fresh
    /// board at that position computes.
    #[test]
    fn the_line_follows_the_game_through_makes_nulls_and_takebacks() {
        let net = default_network();
        let mut rng = Rng::new(42);
        let (mut castles, mut en_passant, mut promotions, mut makes) = (0, 0, 0, 0);
        let starts = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        ];
        let same = |board: &Board, pos: &Chess| {
            assert_eq!(board.key(), key_of(pos));
            assert_eq!(board.pos().to_chess().unwrap().board(), pos.board());
            assert_eq!(board.turn(), pos.turn());
        };
        for game in 0..60 {
            let fen = starts[game % starts.len()];
            let mut pos = parse_position(fen, shakmaty::CastlingMode::Standard).unwrap();
            let mut board = Board::new(pos.clone(), &[], &net, Simd::detect());
            let mut line = vec![pos.clone()];
            for _ in 0..100 {
                let moves = pos.legal_moves();
                if moves.is_empty() || board.ply() + 2 >= MAX_PLY {
                    break;
                }
                if !pos.is_check() && rng.below(10) == 0 {
                    board.make_null();
                    same(&board, &pos.clone().swap_turn().unwrap());
                    board.unmake();
                }
                for &m in &moves {
                    castles += usize::from(m.is_castle());
                    en_passant += usize::from(m.is_en_passant());
                    promotions += usize::from(m.is_promotion());
                    board.make(Move::from_shakmaty(m).unwrap());
                    makes += 1;
                    let mut after = pos.clone();
                    after.play_unchecked(m);
                    same(&board, &after);
                    board.unmake();
                }
                let m = moves[rng.below(moves.len())];
                board.make(Move::from_shakmaty(m).unwrap());
                pos.play_unchecked(m);
                line.push(pos.clone());
                if rng.below(8) == 0 {
                    board.unmake();
                    line.pop();
                    pos = line.last().unwrap().clone();
                    same(&board, &pos);
                }
                if rng.below(16) == 0 {
                    let fresh = Board::new(pos.clone(), &[], &net, Simd::detect()).evaluate(&net);
                    assert_eq!(board.evaluate(&net), fresh);
                }
            }
        }
        assert!(makes > 50_000 && castles > 50 && en_passant > 5 && promotions > 50);
    }

    /// A board after `game` (UCI moves from the start position, the game before the root),
    /// then `line` played by the search; whether the last position is a repetition draw.
    fn repetition_after(game: &[&str], line: &[&str]) -> bool {
        let net = default_network();
        let play = |pos: &mut Chess, uci: &str| {
            let m = crate::engine::parse_move(pos, uci).expect("legal");
            pos.play_unchecked(m);
            m
        };
        let mut root = Chess::default();
        let mut history = Vec::new();
        for uci in game {
            history.push(key_of(&root));
            play(&mut root, uci);
        }
        let mut board = Board::new(root, &history, &net, Simd::detect());
        let mut pos = board.pos().to_chess().unwrap();
        for uci in line {
            board.make(Move::from_shakmaty(play(&mut pos, uci)).unwrap());
        }
        board.is_repetition()
    }

    /// Stockfish's rule: a repetition inside the search's line is a draw, one of the root
    /// is not, and a position seen once in the game before the root is not either until
    /// it comes a third time.
    #[test]
    fn repetitions_count_within_the_line_or_the_third_time() {
        let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
        // The root repeated by the search: once, and not yet a draw.
        assert!(!repetition_after(&[], &shuffle));
        // ...but the position after the first move, repeated inside the line, is.
        assert!(repetition_after(&[], &["g1f3", "g8f6", "f3g1", "f6g8", "g1f3"]));
        // The start position, seen once in the game and again in the search: no draw.
        assert!(!repetition_after(&["g1f3"], &["g8f6", "f3g1", "f6g8"]));
        // Seen twice in the game and a third time in the search: a draw.
        assert!(repetition_after(&["g1f3", "g8f6", "f3g1", "f6g8", "g1f3"], &shuffle[1..]));
    }

    /// The cuckoo table holds every reversible piece move once (3,668, as in Stockfish),
    /// and an upcoming repetition is seen only when the way back is one open move.
    #[test]
    fn upcoming_repetitions_are_one_open_move_away() {
        assert_eq!(cuckoo::len(), 3668);
        let after = |fen: &str, line: &[&str]| {
            let net = default_network();
            let root: Chess = fen
                .parse::<shakmaty::fen::Fen>()
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap();
            let mut board = Board::new(root.clone(), &[], &net, Simd::detect());
            let mut pos = root;
            for uci in line {
                let m = crate::engine::parse_move(&pos, uci).expect("legal");
                pos.play_unchecked(m);
                board.make(Move::from_shakmaty(m).unwrap());
            }
            board.upcoming_repetition()
        };
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        // Nf3 can go back to g1, which gives the position after Nc3.
        assert!(after(start, &["b1c3", "g8f6", "g1f3", "f6g8"]));
        // White's knight could go back, but Black's is not where it was.
        assert!(!after(start, &["g1f3", "g8f6", "f3g1", "f6e4"]));
        // The position to return to is the root's: not counted.
        assert!(!after(start, &["g1f3", "g8f6", "f3g1"]));
        // The queen came to c4 by way of e4: back to e2 in one move only if d3 is empty.
        let line = ["e1d1", "a8b8", "e2e4", "b8a7", "e4c4", "a7a8"];
        assert!(after("k7/8/8/8/8/8/4Q3/4K3 w - - 0 1", &line));
        assert!(!after("k7/8/8/8/8/3P4/4Q3/4K3 w - - 0 1", &line));
    }

    /// Each side's piece key sees that side's pieces other than pawns, and nothing else.
    #[test]
    fn the_piece_keys_depend_on_each_sides_pieces_alone() {
        let net = default_network();
        let keys = |fen: &str| {
            let pos = parse_position(fen, shakmaty::CastlingMode::Standard).unwrap();
            Board::new(pos, &[], &net, Simd::detect()).correction_keys().pieces
        };
        let start = keys("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        // Pawns, side to move or castling rights: the same keys.
        assert_eq!(start, keys("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w - - 0 2"));
        assert_eq!(start, keys("rnbqkbnr/8/8/8/8/8/8/RNBQKBNR b - - 0 1"));
        // A white knight moved: white's key changes, black's does not.
        let moved = keys("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1");
        assert_ne!(start[0], moved[0]);
        assert_eq!(start[1], moved[1]);
        // A bishop where a knight stood: another key.
        let bare = keys("rnbqkbnr/8/8/8/8/8/8/RNBQKBNR w - - 0 1");
        let swapped = keys("rbnqkbnr/8/8/8/8/8/8/RNBQKBNR w - - 0 1");
        assert_eq!(bare[0], swapped[0]);
        assert_ne!(bare[1], swapped[1]);
    }

    /// The pawn key sees the pawns of each side and nothing else.
    #[test]
    fn the_pawn_key_depends_on_the_pawns_alone() {
        let net = default_network();
        let key = |fen: &str| {
            let pos = parse_position(fen, shakmaty::CastlingMode::Standard).unwrap();
            Board::new(pos, &[], &net, Simd::detect()).pawn_key()
        };
        let start = key("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        // Other pieces, side to move or castling rights: the same key.
        assert_eq!(start, key("r1bqkb1r/pppppppp/2n2n2/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 3 2"));
        assert_eq!(start, key("4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 w - - 0 1"));
        // A pawn moved, or a pawn of the other colour on the same square: another key.
        assert_ne!(start, key("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"));
        assert_ne!(
            key("4k3/8/8/3p4/3P4/8/8/4K3 w - - 0 1"),
            key("4k3/8/8/3P4/3p4/8/8/4K3 w - - 0 1")
        );
    }
}
