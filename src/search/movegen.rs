//! Move generation out of check, whether a move gives check, and whether a move made up
//! from the board is legal.
//!
//! shakmaty generates every legal move at once. Out of check the search wants the noisy
//! moves first (captures and queen promotions, a few out of thirty or more) and the rest
//! only if no capture cuts, and quiescence wants the noisy ones alone, so both lists are
//! generated here from shakmaty's attack tables, in the order shakmaty's `legal_moves`
//! gives them (en passant, then pawns, knights, bishops, rooks, queens, king and
//! castling, each by origin and then target square), the quiet ones as splitting that
//! list leaves them: the move picker orders them as it would shakmaty's list, so the
//! search is the same node for node.

use shakmaty::{
    attacks, Bitboard, Board, CastlingSide, Chess, Color, EnPassantMode, Move, MoveList, Position,
    Rank, Role, Square,
};

use crate::types::PackedMove;

const FILE_A: Bitboard = Bitboard(0x0101_0101_0101_0101);
const FILE_H: Bitboard = Bitboard(0x8080_8080_8080_8080);

/// Which moves [`generate`] yields.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Moves {
    Noisy,
    Quiet,
    /// Both: only the tests ask for it, to hold the generator against shakmaty's.
    #[cfg(test)]
    All,
}

/// Appends the legal noisy moves (see [`super::movepick::is_noisy`]) of a position that is
/// not in check to `moves`, in `legal_moves` order.
pub fn noisy_moves(pos: &Chess, moves: &mut MoveList) {
    generate(pos, Moves::Noisy, moves);
}

/// Appends the legal quiet moves of a position that is not in check to `moves`, in the
/// order they would have after generating every legal move and moving the noisy ones to
/// the front by `movepick::split`'s swaps: the order the search tries equal-scored quiets
/// in. Each of those swaps sends the first quiet move found so far behind the last, so
/// here each noisy move, in its place in generation order, does that to the quiet moves
/// found before it, and is not generated itself.
pub fn quiet_moves(pos: &Chess, moves: &mut MoveList) {
    generate(pos, Moves::Quiet, moves);
}

/// Appends every legal move of a position that is not in check to `moves`: shakmaty's
/// `legal_moves`, in its order (a check on the generator; the search never needs every
/// move at once out of check).
#[cfg(test)]
pub fn legal_moves(pos: &Chess, moves: &mut MoveList) {
    generate(pos, Moves::All, moves);
}

/// Where [`generate`] puts what it finds.
struct Sink<'a> {
    moves: &'a mut MoveList,
    which: Moves,
    /// For [`Moves::Quiet`], the quiet moves found so far are `moves[front..]`; the ones
    /// before, from `start`, are stale copies left by rotating them to the back.
    start: usize,
    front: usize,
}

impl Sink<'_> {
    #[inline]
    fn quiet(&mut self, m: Move) {
        debug_assert!(self.which != Moves::Noisy);
        self.push(m);
    }

    /// A noisy move, made only if it is to be kept.
    #[inline]
    fn noisy(&mut self, m: impl FnOnce() -> Move) {
        if self.which != Moves::Quiet {
            self.moves.push(m());
        } else if self.front < self.moves.len() {
            let first = self.moves[self.front];
            self.push(first);
            self.front += 1;
        }
    }

    #[inline]
    fn push(&mut self, m: Move) {
        if self.moves.is_full() {
            // Only the stale copies can make the list full: at most 218 moves are legal.
            self.compact();
        }
        self.moves.push(m);
    }

    fn compact(&mut self) {
        self.moves.drain(self.start..self.front);
        self.front = self.start;
    }
}

fn generate(pos: &Chess, which: Moves, moves: &mut MoveList) {
    debug_assert!(!pos.is_check(), "evasions come from shakmaty's legal_moves");
    let quiets = which != Moves::Noisy;
    let board = pos.board();
    let us = pos.turn();
    let them = pos.them();
    let occupied = board.occupied();
    let targets = if quiets { !pos.us() } else { them };
    let king = board.king_of(us).expect("a legal position has a king");
    let pinned = pinned(pos, king);
    // Where a piece may go as far as pins are concerned: anywhere, or along the line
    // through its king.
    let pin_line =
        |from| if pinned.contains(from) { attacks::ray(king, from) } else { Bitboard::FULL };
    let safe = |from, to| pin_line(from).contains(to);
    let start = moves.len();
    let mut out = Sink { moves, which, start, front: start };

    let pawns = pos.our(Role::Pawn);
    let (forward, west, east, double_rank) = match us {
        Color::White => (8, 7, 9, Rank::Fourth),
        Color::Black => (-8, -9, -7, Rank::Fifth),
    };
    // En passant and the other pawn captures come before any quiet move: for the quiet
    // moves alone they change nothing.
    if which != Moves::Quiet {
        if let Some(to) = pos.ep_square(EnPassantMode::PseudoLegal) {
            for from in board.pawns() & pos.us() & attacks::pawn_attacks(!us, to) {
                // Both pawns leave their rank at once, so a pin along it is checked here.
                let captured = Square::from_coords(to.file(), from.rank());
                let after = occupied.without(from).without(captured).with(to);
                if board.attacks_to(king, !us, after).without(captured).is_empty() {
                    out.noisy(|| Move::EnPassant { from, to });
                }
            }
        }

        // Pawn captures toward the a-file, then toward the h-file; each direction's plain
        // captures before its capturing promotions.
        for (offset, edge) in [(west, FILE_A), (east, FILE_H)] {
            let captures = (pawns & !edge).shift(offset) & them;
            for to in captures & !Bitboard::BACKRANKS {
                let from = to.offset(-offset).expect("shifted from a square");
                if safe(from, to) {
                    out.noisy(|| normal(pos, Role::Pawn, from, to, None));
                }
            }
            for to in captures & Bitboard::BACKRANKS {
                let from = to.offset(-offset).expect("shifted from a square");
                if safe(from, to) {
                    for promotion in PROMOTIONS {
                        out.noisy(|| normal(pos, Role::Pawn, from, to, Some(promotion)));
                    }
                }
            }
        }
    }
    // Pushes by one square, then the promotions among them (only the queen's is noisy),
    // then pushes by two.
    let single = pawns.shift(forward) & !occupied;
    if quiets {
        for to in single & !Bitboard::BACKRANKS {
            let from = to.offset(-forward).expect("shifted from a square");
            if safe(from, to) {
                out.quiet(quiet(Role::Pawn, from, to, None));
            }
        }
    }
    let promotions = if quiets { &PROMOTIONS[..] } else { &PROMOTIONS[..1] };
    for to in single & Bitboard::BACKRANKS {
        let from = to.offset(-forward).expect("shifted from a square");
        if safe(from, to) {
            for &promotion in promotions {
                let m = quiet(Role::Pawn, from, to, Some(promotion));
                if promotion == Role::Queen {
                    out.noisy(|| m);
                } else {
                    out.quiet(m);
                }
            }
        }
    }
    if quiets {
        for to in single.shift(forward) & !occupied & Bitboard::from_rank(double_rank) {
            let from = to.offset(-2 * forward).expect("shifted from a square");
            if safe(from, to) {
                out.quiet(quiet(Role::Pawn, from, to, None));
            }
        }
    }

    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for from in pos.our(role) {
            let reach = attacks::attacks(from, role.of(us), occupied) & pin_line(from);
            for to in reach & targets {
                if them.contains(to) {
                    out.noisy(|| normal(pos, role, from, to, None));
                } else {
                    out.quiet(quiet(role, from, to, None));
                }
            }
        }
    }
    // Not in check, so no slider sees through the king: a target is safe for it when
    // nothing of theirs attacks that square as the board stands.
    for to in attacks::king_attacks(king) & targets {
        if board.attacks_to(to, !us, occupied).is_empty() {
            if them.contains(to) {
                out.noisy(|| normal(pos, Role::King, king, to, None));
            } else {
                out.quiet(quiet(Role::King, king, to, None));
            }
        }
    }
    if quiets {
        for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
            if pos.castles().has(us, side) {
                for m in pos.castling_moves(side) {
                    out.quiet(m);
                }
            }
        }
    }
    if which == Moves::Quiet {
        out.compact();
    }
}

/// Promotion pieces in the order shakmaty generates them.
const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

/// A move to an empty square.
fn quiet(role: Role, from: Square, to: Square, promotion: Option<Role>) -> Move {
    Move::Normal { role, from, capture: None, to, promotion }
}

fn normal(pos: &Chess, role: Role, from: Square, to: Square, promotion: Option<Role>) -> Move {
    Move::Normal { role, from, capture: pos.board().role_at(to), to, promotion }
}

/// Whether legal move `m` gives check, worked out from the position before it (the move
/// loop prunes before it makes the move). Castling and en passant, which move two
/// pieces, are played out on a copy.
pub fn gives_check(pos: &Chess, m: Move) -> bool {
    let Move::Normal { role, from, to, promotion, .. } = m else {
        let mut after = pos.clone();
        after.play_unchecked(m);
        return after.is_check();
    };
    let board = pos.board();
    let us = pos.turn();
    let Some(king) = board.king_of(!us) else {
        return false;
    };
    let occupied = board.occupied().without(from).with(to);
    // Direct: the piece on its new square attacks the king.
    let piece = promotion.unwrap_or(role).of(us);
    if attacks::attacks(to, piece, occupied).contains(king) {
        return true;
    }
    // Discovered: leaving `from` opens a line from one of our sliders to the king.
    let ours = pos.us().without(from);
    let sliders = (attacks::rook_attacks(king, occupied) & board.rooks_and_queens())
        | (attacks::bishop_attacks(king, occupied) & board.bishops_and_queens());
    (sliders & ours).any()
}

/// What tells at a glance whether a move of the side to move gives check, worked out once
/// for a position: the squares from which each kind of piece would attack the other king,
/// and the pieces whose leaving their line uncovers a check by one of our sliders.
pub struct CheckSquares {
    king: Square,
    /// By role, pawn first.
    by_role: [Bitboard; 6],
    discoverers: Bitboard,
}

impl CheckSquares {
    /// `None` when the other side has no king (never in a legal game).
    pub fn new(pos: &Chess) -> Option<CheckSquares> {
        let board = pos.board();
        let us = pos.turn();
        let king = board.king_of(!us)?;
        let occupied = board.occupied();
        let bishop = attacks::bishop_attacks(king, occupied);
        let rook = attacks::rook_attacks(king, occupied);
        let by_role = [
            attacks::pawn_attacks(!us, king),
            attacks::knight_attacks(king),
            bishop,
            rook,
            bishop | rook,
            Bitboard(0),
        ];
        let snipers = (attacks::rook_attacks(king, Bitboard(0)) & board.rooks_and_queens())
            | (attacks::bishop_attacks(king, Bitboard(0)) & board.bishops_and_queens());
        let mut discoverers = Bitboard(0);
        for sniper in snipers & pos.us() {
            let between = attacks::between(king, sniper) & occupied;
            if between.count() == 1 {
                discoverers |= between & pos.us();
            }
        }
        Some(CheckSquares { king, by_role, discoverers })
    }

    /// Whether legal move `m` of `pos` (the position these squares were worked out for)
    /// gives check: [`gives_check`]'s answer, without its attack lookups for a plain move.
    #[inline]
    pub fn gives_check(&self, pos: &Chess, m: Move) -> bool {
        match m {
            Move::Normal { role, from, to, promotion: None, .. } => {
                self.by_role[role as usize - 1].contains(to)
                    || (self.discoverers.contains(from) && !attacks::aligned(from, to, self.king))
            }
            _ => gives_check(pos, m),
        }
    }
}

/// Whether `m`, a move made up from the board (a stored move), is legal in
/// `pos`: the same answer as shakmaty's `is_legal`, without generating the moves that reach
/// its target. The move is checked against the board (its piece, its capture, its path),
/// then the king must stand unattacked after it. Castling is left to shakmaty.
pub fn is_legal(pos: &Chess, m: Move) -> bool {
    let board = pos.board();
    let us = pos.turn();
    let occupied = board.occupied();
    let Some(king) = board.king_of(us) else {
        return false;
    };
    match m {
        Move::Normal { role, from, capture, to, promotion } => {
            if board.piece_at(from) != Some(role.of(us)) || board.role_at(to) != capture {
                return false;
            }
            if capture.is_some() && !pos.them().contains(to) {
                return false;
            }
            let reaches = if role == Role::Pawn {
                let last_rank = Bitboard::BACKRANKS.contains(to);
                let promotes_right = match promotion {
                    None => !last_rank,
                    Some(p) => last_rank && p != Role::Pawn && p != Role::King,
                };
                promotes_right
                    && if capture.is_some() {
                        attacks::pawn_attacks(us, from).contains(to)
                    } else {
                        pawn_push_reaches(us, from, to, occupied)
                    }
            } else {
                promotion.is_none() && attacks::attacks(from, role.of(us), occupied).contains(to)
            };
            if !reaches {
                return false;
            }
            let king = if role == Role::King { to } else { king };
            let after = occupied.without(from).with(to);
            board.attacks_to(king, !us, after).without(to).is_empty()
        }
        Move::EnPassant { from, to } => {
            // The pseudo-legal square suffices: the king's safety is checked below.
            if pos.ep_square(EnPassantMode::PseudoLegal) != Some(to)
                || board.piece_at(from) != Some(Role::Pawn.of(us))
                || !attacks::pawn_attacks(us, from).contains(to)
            {
                return false;
            }
            let captured = Square::from_coords(to.file(), from.rank());
            let after = occupied.without(from).without(captured).with(to);
            board.attacks_to(king, !us, after).without(captured).is_empty()
        }
        Move::Castle { .. } => pos.is_legal(m),
        Move::Put { .. } => false,
    }
}

/// Whether a pawn of `us` on `from` can push to `to`, one square or two from its
/// starting rank, over empty squares.
fn pawn_push_reaches(us: Color, from: Square, to: Square, occupied: Bitboard) -> bool {
    let forward = if us == Color::White { 8 } else { -8 };
    let Some(one) = from.offset(forward) else {
        return false;
    };
    if occupied.contains(one) {
        return false;
    }
    if to == one {
        return true;
    }
    let start = if us == Color::White { Rank::Second } else { Rank::Seventh };
    from.rank() == start && one.offset(forward) == Some(to) && !occupied.contains(to)
}

/// Our pieces that stand alone between our king and one of their sliders.
fn pinned(pos: &Chess, king: Square) -> Bitboard {
    pins(pos.board(), pos.turn(), king).0
}

/// The pieces of `us` pinned to their king on `king` (each alone between it and a
/// slider of the other side), and the sliders that pin them.
pub fn pins(board: &Board, us: Color, king: Square) -> (Bitboard, Bitboard) {
    let snipers = (attacks::rook_attacks(king, Bitboard(0)) & board.rooks_and_queens())
        | (attacks::bishop_attacks(king, Bitboard(0)) & board.bishops_and_queens());
    let (mut pinned, mut pinners) = (Bitboard(0), Bitboard(0));
    for sniper in snipers & board.by_color(!us) {
        let between = attacks::between(king, sniper) & board.occupied();
        if between.count() == 1 && (between & board.by_color(us)).any() {
            pinned |= between;
            pinners |= Bitboard::from(sniper);
        }
    }
    (pinned, pinners)
}

/// The legal move of `pos` that packs to `code` (a move read from the table), if any: the
/// same answer as `code.find_in(&pos.legal_moves())`, found without generating every move
/// (the move is rebuilt from the board, then checked against the board by [`is_legal`]).
pub fn unpack(pos: &Chess, code: PackedMove) -> Option<Move> {
    let (from, to) = (code.from(), code.to());
    let board = pos.board();
    let piece = board.piece_at(from).filter(|p| p.color == pos.turn())?;
    let target = board.piece_at(to);
    let m = if piece.role == Role::King
        && target.is_some_and(|t| t.color == pos.turn() && t.role == Role::Rook)
    {
        Move::Castle { king: from, rook: to }
    } else if piece.role == Role::Pawn
        && target.is_none()
        && from.file() != to.file()
        && pos.ep_square(EnPassantMode::Legal) == Some(to)
    {
        Move::EnPassant { from, to }
    } else {
        let promotion = match code.bits() >> 12 {
            0 => None,
            role => Some(Role::try_from(u32::from(role)).ok()?),
        };
        let capture = target.filter(|t| t.color != pos.turn()).map(|t| t.role);
        Move::Normal { role: piece.role, from, capture, to, promotion }
    };
    (PackedMove::of(m) == code && is_legal(pos, m)).then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::movepick::is_noisy;
    use shakmaty::{fen::Fen, CastlingMode};

    /// Every position within three plies of the perft suites' starting positions (and a
    /// few with en passant pins, promotions and castling) out of check: the noisy moves are
    /// those of shakmaty's `legal_moves`, in the same order, and our `legal_moves` is
    /// shakmaty's, move for move.
    #[test]
    fn same_moves_same_order_as_legal_moves() {
        let extra = [
            // En passant that would expose the king along the rank, and one that is fine.
            "8/8/8/K2pP2r/8/8/8/7k w - d6 0 2",
            "8/8/8/3pP2r/K7/8/8/7k w - d6 0 2",
            // En passant by either of two pawns, one of them pinned on a diagonal.
            "1b5k/8/8/3pPpP1/8/8/7K/8 w - f6 0 2",
            // Pushes and captures onto the last rank, for both sides.
            "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R w KQkq - 0 1",
            "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 0 1",
            // Castling with one side's path attacked, a pinned pawn that may push along
            // its pin but not off it, and a pinned knight.
            "r3k2r/8/8/8/8/8/5b2/R3K2R w KQkq - 0 1",
            "4k3/4r3/8/8/8/8/4P3/4K3 w - - 0 1",
            "4k3/8/8/b7/8/8/3P4/4K3 w - - 0 1",
            "4k3/8/8/8/4q3/8/4N3/4K3 w - - 0 1",
        ];
        let mut checked = 0;
        for pos in suite_positions(&extra) {
            checked += walk(&pos, 3);
        }
        assert!(checked > 50_000, "only {checked} positions compared");
    }

    /// The quiet moves come out the same however full the list already is: rotating them
    /// leaves stale copies behind, which are dropped early when the list fills up.
    #[test]
    fn quiet_moves_fill_a_nearly_full_list() {
        let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
        let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let mut expected = pos.legal_moves();
        let noisy = crate::search::movepick::split(&mut expected);
        let quiet = &expected[noisy..];
        let filler = expected[0];
        for already in 0..=MoveList::new().capacity() - quiet.len() {
            let mut moves = MoveList::new();
            moves.extend(std::iter::repeat_n(filler, already));
            quiet_moves(&pos, &mut moves);
            assert_eq!(&moves[already..], quiet, "{already} moves listed before");
        }
    }

    /// The same walk: `gives_check`, and `CheckSquares` worked out once a position, agree
    /// with playing the move and asking.
    #[test]
    fn gives_check_agrees_with_playing_the_move() {
        let extra = [
            // Discovered checks by a pawn push, a capture and en passant; promotions that
            // check as a knight or along a line the pawn itself blocked.
            "8/7k/8/8/8/8/2P5/1B4K1 w - - 0 1",
            "8/8/8/Q1pP3k/8/8/8/6K1 w - c6 0 2",
            "3k4/1P6/8/8/8/8/8/6K1 w - - 0 1",
            "3r4/2P1k3/8/8/8/8/8/6K1 w - - 0 1",
            "r3k2r/8/8/8/8/8/8/R3K1R1 w Qkq - 0 1",
            "5k2/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        ];
        let (mut checks, mut moves) = (0, 0);
        for pos in suite_positions(&extra) {
            walk_checks(&pos, 2, &mut checks, &mut moves);
        }
        assert!(moves > 100_000 && checks > 1_000, "{checks} checks in {moves} moves");
    }

    /// The same walk, two plies: every move of a position, of its parent and of its
    /// grandparent (stored moves and killers come from nearby positions) is legal here
    /// exactly when shakmaty says so, in check and out.
    #[test]
    fn is_legal_agrees_with_shakmaty() {
        let extra = [
            // En passant along a pinned rank, by either of two pawns (one pinned on a
            // diagonal), and in check by the pawn that may be taken.
            "8/8/8/K2pP2r/8/8/8/7k w - d6 0 2",
            "1b5k/8/8/3pPpP1/8/8/7K/8 w - f6 0 2",
            "8/8/8/2k5/3Pp3/8/8/3K4 b - d3 0 1",
            // Castling through and out of check, promotions by push and by capture.
            "4k3/8/8/8/7b/5n2/8/R3K2R w KQ - 0 1",
            "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R w KQkq - 0 1",
        ];
        let mut compared = 0;
        for pos in suite_positions(&extra) {
            compare_legality(&pos, &[], 2, &mut compared);
        }
        assert!(compared > 500_000, "only {compared} comparisons");
    }

    fn compare_legality(pos: &Chess, nearby: &[Move], depth: u32, compared: &mut usize) {
        let legal = pos.legal_moves();
        let fen = Fen::from_position(pos, EnPassantMode::Legal);
        // Every en passant capture a pawn could try, legal or not (a stored move may be one).
        let en_passant = pos.ep_square(EnPassantMode::Always).into_iter().flat_map(|to| {
            let pawns = pos.our(Role::Pawn) & attacks::pawn_attacks(!pos.turn(), to);
            pawns.into_iter().map(move |from| Move::EnPassant { from, to })
        });
        for m in legal.iter().copied().chain(nearby.iter().copied()).chain(en_passant) {
            assert_eq!(is_legal(pos, m), pos.is_legal(m), "{fen} {m:?}");
            *compared += 1;
        }
        if depth > 0 {
            let mut near: Vec<Move> = legal.to_vec();
            near.extend(nearby.iter().take(64));
            for m in &legal {
                let mut next = pos.clone();
                next.play_unchecked(*m);
                compare_legality(&next, &near, depth - 1, compared);
            }
        }
    }

    /// The starting positions of the perft suite, then `extra`.
    fn suite_positions<'a>(extra: &'a [&'a str]) -> impl Iterator<Item = Chess> + 'a {
        let suite = include_str!("../../tests/perft/standard.epd");
        let fens = suite.lines().filter_map(|l| l.split(';').next()).map(str::trim);
        fens.chain(extra.iter().copied())
            .filter(|f| !f.is_empty())
            .map(|fen| fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap())
    }

    fn walk_checks(pos: &Chess, depth: u32, checks: &mut usize, moves: &mut usize) {
        let squares = CheckSquares::new(pos).expect("both kings");
        for m in pos.legal_moves() {
            let mut next = pos.clone();
            next.play_unchecked(m);
            let fen = Fen::from_position(pos, EnPassantMode::Legal);
            assert_eq!(gives_check(pos, m), next.is_check(), "{fen} {m}");
            assert_eq!(squares.gives_check(pos, m), next.is_check(), "{fen} {m}: CheckSquares");
            *moves += 1;
            *checks += usize::from(next.is_check());
            if depth > 0 {
                walk_checks(&next, depth - 1, checks, moves);
            }
        }
    }

    fn walk(pos: &Chess, depth: u32) -> usize {
        let legal = pos.legal_moves();
        let mut checked = 0;
        if !pos.is_check() {
            let noisy: Vec<Move> = legal.iter().copied().filter(|&m| is_noisy(m)).collect();
            let fen = Fen::from_position(pos, EnPassantMode::Legal);
            let mut moves = MoveList::new();
            noisy_moves(pos, &mut moves);
            assert_eq!(moves.to_vec(), noisy, "{fen}");
            moves.clear();
            legal_moves(pos, &mut moves);
            assert_eq!(moves, legal, "{fen}");
            // After some moves already listed, as the picker has them.
            let mut split = legal.clone();
            let noisy = crate::search::movepick::split(&mut split);
            moves.clear();
            moves.extend(split[..noisy].iter().copied());
            quiet_moves(pos, &mut moves);
            assert_eq!(moves, split, "{fen}");
            checked += 1;
        }
        if depth > 0 {
            for m in legal {
                let mut next = pos.clone();
                next.play_unchecked(m);
                checked += walk(&next, depth - 1);
            }
        }
        checked
    }

    #[test]
    fn unpack_agrees_with_the_generated_moves() {
        let positions = [
            "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "4k3/8/8/8/3pP3/8/8/4K2R b K e3 0 1",
            "r3k2r/8/8/8/8/8/8/R3K1R1 b Qkq - 0 1",
            // In check: an en passant capture of the checker, castling through check,
            // a pinned piece, a double check.
            "8/8/8/2k5/3Pp3/8/8/3K4 b - d3 0 1",
            "4k3/8/8/8/8/8/4q3/R3K2R w KQ - 0 1",
            "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1",
            "4k3/8/8/8/7b/5n2/8/R3K2R w KQ - 0 1",
        ];
        let parse = |fen: &str| -> Chess {
            fen.parse::<shakmaty::fen::Fen>()
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap()
        };
        let all: Vec<Chess> = positions.iter().map(|f| parse(f)).collect();
        for pos in &all {
            let moves = pos.legal_moves();
            // Every code: each origin, target and promotion field (a stored move may be
            // any of them, from a position that shares the key), plus codes with the
            // spare bit set; each resolves here exactly as a search of the list would.
            let codes = (0..0x7000).chain([0x7FFF, 0x8000, 0xFFFF]).map(PackedMove::from_bits);
            for code in codes {
                assert_eq!(unpack(pos, code), code.find_in(&moves), "{code:?} in {pos:?}");
            }
            for &m in &moves {
                assert_eq!(unpack(pos, PackedMove::of(m)), Some(m));
            }
        }
    }
}
