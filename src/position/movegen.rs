//! Legal move generation on [`Position`], in shakmaty's order, and the questions a search
//! asks of one move: is it legal here (a stored move or a killer, made up from another
//! position), which legal move does a stored code name, does it give check.
//!
//! The order is shakmaty's `legal_moves` order, because the search tries equal-scored
//! moves in the order they come and must search the tree it always searched: en passant
//! first, then pawns (captures toward the a-file, then toward the h-file, each with its
//! promotions after its plain captures; pushes; promotions by push; double pushes),
//! knights, bishops, rooks, queens, each by origin and then target square, then the king
//! and castling (king side first). In check the king's moves come before the others, as
//! shakmaty's evasions put them.
//!
//! Out of check a search wants the noisy moves (captures and queen promotions) first and
//! the quiet ones only if nothing cuts, and quiescence wants the noisy ones alone, so each
//! part can be generated alone: the noisy moves in generation order, the quiet ones in the
//! order a split of the whole list leaves them (see [`quiet_moves`]).

use arrayvec::ArrayVec;
use shakmaty::{attacks, Bitboard, CastlingSide, Color, Rank, Role, Square};

use super::{CheckSquares, Move, MoveKind, MoveList, Position, MAX_MOVES};
use crate::types::PackedMove;

const FILE_A: Bitboard = Bitboard(0x0101_0101_0101_0101);
const FILE_H: Bitboard = Bitboard(0x8080_8080_8080_8080);

/// Promotion pieces in the order shakmaty generates them.
const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

/// Whether a move is ordered (and pruned) with the captures: a capture or a queen
/// promotion.
#[inline(always)]
pub fn is_noisy(m: Move) -> bool {
    m.is_capture() || m.is_queen_promotion()
}

/// Moves the noisy moves of a generated list to its front, each swapped with the move in
/// its place, and returns their number. The noisy moves keep generation order; the quiet
/// ones end up in the order the swaps leave them, which is the order equal-scored quiets
/// are tried in (the search was tuned with it; a stable split played −9.7 ± 21.6 and
/// −4.0 ± 14.7 Elo in two SPRTs: `docs/sprt-log.md`).
pub fn split(moves: &mut [Move]) -> usize {
    let mut noisy = 0;
    for i in 0..moves.len() {
        if is_noisy(moves[i]) {
            moves.swap(i, noisy);
            noisy += 1;
        }
    }
    noisy
}

/// Which moves [`generate`] yields: a parameter fixed at compile time, so that each kind
/// gets its own code without the tests of the others.
type Moves = u8;
/// The noisy moves alone.
const NOISY: Moves = 0;
/// The quiet moves alone, in the split's order.
const QUIET: Moves = 1;
/// Every move, in generation order.
const ALL: Moves = 2;

/// Appends the legal noisy moves of a position that is not in check to `moves`, in
/// generation order.
pub fn noisy_moves(pos: &Position, moves: &mut MoveList) {
    generate::<NOISY>(pos, moves);
}

/// Appends the legal quiet moves of a position that is not in check to `moves`, in the
/// order they would have after generating every legal move and moving the noisy ones to
/// the front by [`split`]'s swaps: the order the search tries equal-scored quiets in.
/// Each of those swaps sends the first quiet move found so far behind the last, so here
/// each noisy move, in its place in generation order, does that to the quiet moves found
/// before it, and is not generated itself.
pub fn quiet_moves(pos: &Position, moves: &mut MoveList) {
    generate::<QUIET>(pos, moves);
}

/// Appends every legal move of `pos` to `moves`, in shakmaty's `legal_moves` order.
pub fn legal_moves(pos: &Position, moves: &mut MoveList) {
    if pos.is_check() {
        evasions(pos, moves);
    } else {
        generate::<ALL>(pos, moves);
    }
}

/// Whether `pos` has a legal move.
pub fn has_legal_move(pos: &Position) -> bool {
    let mut moves = MoveList::new();
    legal_moves(pos, &mut moves);
    !moves.is_empty()
}

/// Where [`generate`] puts what it finds, for moves of kind `W`.
struct Sink<'a, const W: Moves> {
    moves: &'a mut MoveList,
    /// For [`QUIET`], the quiet moves found so far are `moves[front..]`; the ones
    /// before, from `start`, are stale copies left by rotating them to the back.
    start: usize,
    front: usize,
}

impl<const W: Moves> Sink<'_, W> {
    #[inline(always)]
    fn quiet(&mut self, m: Move) {
        debug_assert!(W != NOISY);
        self.push(m);
    }

    /// A noisy move, made only if it is to be kept.
    #[inline(always)]
    fn noisy(&mut self, m: impl FnOnce() -> Move) {
        if W != QUIET {
            self.moves.push(m());
        } else if self.front < self.moves.len() {
            let first = self.moves[self.front];
            self.push(first);
            self.front += 1;
        }
    }

    #[inline(always)]
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

/// The en passant captures of `pos` that are legal, appended as `emit` takes them.
#[inline(always)]
fn en_passant(pos: &Position, king: Square, mut emit: impl FnMut(Move)) {
    let Some(to) = pos.ep_square() else {
        return;
    };
    let us = pos.turn();
    for from in pos.our(Role::Pawn) & attacks::pawn_attacks(!us, to) {
        // Both pawns leave their rank at once, so a pin along it is checked here.
        let captured = Square::from_coords(to.file(), from.rank());
        let after = pos.occupied().without(from).without(captured).with(to);
        if pos.attacks_to(king, !us, after).without(captured).is_empty() {
            emit(Move::en_passant(from, to));
        }
    }
}

/// The directions pawns of `us` move in: forward, the captures toward the a-file and
/// toward the h-file, and the rank a double push lands on.
#[inline(always)]
fn pawn_directions(us: Color) -> (i32, i32, i32, Rank) {
    match us {
        Color::White => (8, 7, 9, Rank::Fourth),
        Color::Black => (-8, -9, -7, Rank::Fifth),
    }
}

#[inline(always)]
fn generate<const W: Moves>(pos: &Position, moves: &mut MoveList) {
    debug_assert!(!pos.is_check(), "evasions have their own generator");
    let quiets = W != NOISY;
    let us = pos.turn();
    let them = pos.them();
    let occupied = pos.occupied();
    let targets = if quiets { !pos.us() } else { them };
    let king = pos.king_of(us);
    let pinned = pos.pinned();
    // Where a piece may go as far as pins are concerned: anywhere, or along the line
    // through its king.
    let pin_line =
        |from| if pinned.contains(from) { attacks::ray(king, from) } else { Bitboard::FULL };
    let safe = |from, to| pin_line(from).contains(to);
    let start = moves.len();
    let mut out = Sink::<W> { moves, start, front: start };
    let victim = |to| pos.code_at(to);

    let pawns = pos.our(Role::Pawn);
    let (forward, west, east, double_rank) = pawn_directions(us);
    // En passant and the other pawn captures come before any quiet move: for the quiet
    // moves alone they change nothing.
    if W != QUIET {
        en_passant(pos, king, |m| out.noisy(|| m));

        // Pawn captures toward the a-file, then toward the h-file; each direction's plain
        // captures before its capturing promotions.
        for (offset, edge) in [(west, FILE_A), (east, FILE_H)] {
            let captures = (pawns & !edge).shift(offset) & them;
            for to in captures & !Bitboard::BACKRANKS {
                let from = Square::new((to as i32 - offset) as u32);
                if safe(from, to) {
                    out.noisy(|| Move::capture_code(Role::Pawn, from, to, victim(to), None));
                }
            }
            for to in captures & Bitboard::BACKRANKS {
                let from = Square::new((to as i32 - offset) as u32);
                if safe(from, to) {
                    for promotion in PROMOTIONS {
                        out.noisy(|| {
                            Move::capture_code(Role::Pawn, from, to, victim(to), Some(promotion))
                        });
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
            let from = Square::new((to as i32 - forward) as u32);
            if safe(from, to) {
                out.quiet(Move::quiet(Role::Pawn, from, to));
            }
        }
    }
    let promotions = if quiets { &PROMOTIONS[..] } else { &PROMOTIONS[..1] };
    for to in single & Bitboard::BACKRANKS {
        let from = Square::new((to as i32 - forward) as u32);
        if safe(from, to) {
            for &promotion in promotions {
                let m = Move::normal(Role::Pawn, from, to, None, Some(promotion));
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
            let from = Square::new((to as i32 - 2 * forward) as u32);
            if safe(from, to) {
                out.quiet(Move::quiet(Role::Pawn, from, to));
            }
        }
    }

    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for from in pos.our(role) {
            let reach = attacks::attacks(from, role.of(us), occupied) & pin_line(from);
            for to in reach & targets {
                if them.contains(to) {
                    out.noisy(|| Move::capture_code(role, from, to, victim(to), None));
                } else {
                    out.quiet(Move::quiet(role, from, to));
                }
            }
        }
    }
    // Not in check, so no slider sees through the king: a target is safe for it when
    // nothing of theirs attacks that square as the board stands.
    for to in attacks::king_attacks(king) & targets {
        if pos.attacks_to(to, !us, occupied).is_empty() {
            if them.contains(to) {
                out.noisy(|| Move::capture_code(Role::King, king, to, victim(to), None));
            } else {
                out.quiet(Move::quiet(Role::King, king, to));
            }
        }
    }
    if quiets && (pos.castling_rights() & Bitboard::from_rank(us.backrank())).any() {
        for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
            if let Some(m) = castling_move(pos, side) {
                out.quiet(m);
            }
        }
    }
    if W == QUIET {
        out.compact();
    }
}

/// Appends the legal quiet moves of a position that is not in check that give check, in
/// the order [`quiet_moves`] lists them, without listing the others.
///
/// That order is the one the split's swaps leave (see [`split`]): the quiet moves form a
/// queue in generation order, and each noisy move found after the first quiet one sends
/// the queue's front to its back. Seen as one growing array `A`, a quiet move is written
/// at the end when it is found, and the r-th of those rotations writes `A[r]` at the end
/// again, so the queue is always `A[r..]`. An element at index p is rotated when r reaches
/// p, and lands at p + (the queue's length then). So only the queue's length at each
/// rotation is needed: it comes from counting each piece's quiet targets below each of its
/// capture targets, and each check's final place is found by following its jumps. The
/// checks are then sorted by it. Castling comes after every rotation, so last.
pub fn quiet_checks(pos: &Position, moves: &mut MoveList) {
    debug_assert!(!pos.is_check(), "quiet checks are looked for out of check");
    let Some(squares) = pos.check_squares() else {
        return;
    };
    let us = pos.turn();
    let them = pos.them();
    let occupied = pos.occupied();
    let empty = !occupied;
    let king = pos.king_of(us);
    let their_king = squares.king;
    let pinned = pos.pinned();
    let pin_line =
        |from| if pinned.contains(from) { attacks::ray(king, from) } else { Bitboard::FULL };
    // Whether a move from `from` to `to` uncovers a check.
    let discovers = |from: Square, to: Square| {
        squares.discoverers.contains(from) && !attacks::ray(their_king, from).contains(to)
    };
    let below = |sq: Square| Bitboard((1u64 << sq as u32) - 1);

    let mut order = QueueOrder::default();
    // Each check with its place (a few bytes each: the list is moved and sorted).
    let mut found: ArrayVec<(u32, Move), 48> = ArrayVec::new();
    let keep = |found: &mut ArrayVec<(u32, Move), 48>, place: usize, m| {
        // A full list (more checks than games ever have) is dropped below for the long way.
        let _ = found.try_push((place as u32, m));
    };

    // Pawn pushes by one square (the captures before them rotate an empty queue).
    let pawns = pos.our(Role::Pawn);
    let (forward, _, _, double_rank) = pawn_directions(us);
    let legal_pushes = |targets: Bitboard, back: i32| {
        let mut legal = targets;
        for to in targets & (pawns & pinned).shift(back) {
            let from = Square::new((to as i32 - back) as u32);
            if !pin_line(from).contains(to) {
                legal ^= Bitboard::from(to);
            }
        }
        legal
    };
    let single = pawns.shift(forward) & empty;
    let pushes = legal_pushes(single & !Bitboard::BACKRANKS, forward);
    for to in pushes {
        let from = Square::new((to as i32 - forward) as u32);
        if squares.by_role[0].contains(to) || discovers(from, to) {
            let place = order.place(order.quiets + (pushes & below(to)).count());
            keep(&mut found, place, Move::quiet(Role::Pawn, from, to));
        }
    }
    order.quiets += pushes.count();
    // Promotions by push: the queen's is noisy, the others quiet.
    for to in legal_pushes(single & Bitboard::BACKRANKS, forward) {
        let from = Square::new((to as i32 - forward) as u32);
        order.rotate(order.quiets);
        for promotion in &PROMOTIONS[1..] {
            let m = Move::normal(Role::Pawn, from, to, None, Some(*promotion));
            if squares.gives_check(pos, m) {
                keep(&mut found, order.place(order.quiets), m);
            }
            order.quiets += 1;
        }
    }
    let doubles = single.shift(forward) & empty & Bitboard::from_rank(double_rank);
    let doubles = legal_pushes(doubles, 2 * forward);
    for to in doubles {
        let from = Square::new((to as i32 - 2 * forward) as u32);
        if squares.by_role[0].contains(to) || discovers(from, to) {
            let place = order.place(order.quiets + (doubles & below(to)).count());
            keep(&mut found, place, Move::quiet(Role::Pawn, from, to));
        }
    }
    order.quiets += doubles.count();

    // The pieces: each capture rotates the queue as long as the quiet targets below it
    // make, each check is placed as the quiet targets below it and the rotations so far do.
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for from in pos.our(role) {
            let reach = attacks::attacks(from, role.of(us), occupied) & pin_line(from);
            let quiet = reach & empty;
            let mut checks = quiet & squares.by_role[role as usize - 1];
            if squares.discoverers.contains(from) {
                checks |= quiet & !attacks::ray(their_king, from);
            }
            order.piece(quiet, reach & them, checks, |place, to| {
                keep(&mut found, place, Move::quiet(role, from, to));
            });
        }
    }
    // The king, whose captures and moves must be safe; it gives check only by uncovering.
    let safe = |to| pos.attacks_to(to, !us, occupied).is_empty();
    let captures = attacks::king_attacks(king) & them;
    let captures = captures.into_iter().filter(|&to| safe(to)).collect::<Bitboard>();
    let uncovers = squares.discoverers.contains(king);
    if captures.any() || uncovers {
        let quiet = attacks::king_attacks(king) & empty;
        let quiet = quiet.into_iter().filter(|&to| safe(to)).collect::<Bitboard>();
        let checks = if uncovers { quiet & !attacks::ray(their_king, king) } else { Bitboard(0) };
        order.piece(quiet, captures, checks, |place, to| {
            keep(&mut found, place, Move::quiet(Role::King, king, to));
        });
    }
    // Castling: found after every rotation, so after everything else, king side first.
    if (pos.castling_rights() & Bitboard::from_rank(us.backrank())).any() {
        for (i, side) in [CastlingSide::KingSide, CastlingSide::QueenSide].into_iter().enumerate() {
            if let Some(m) = castling_move(pos, side).filter(|&m| squares.gives_check(pos, m)) {
                keep(&mut found, u32::MAX as usize - 1 + i, m);
            }
        }
    }

    if found.is_full() {
        // So many checks (several promoted queens): list the quiet moves and keep them.
        let start = moves.len();
        quiet_moves(pos, moves);
        let mut kept = start;
        for i in start..moves.len() {
            if squares.gives_check(pos, moves[i]) {
                moves[kept] = moves[i];
                kept += 1;
            }
        }
        moves.truncate(kept);
        return;
    }
    for (place, _) in found.iter_mut() {
        *place = order.final_place(*place);
    }
    found.sort_unstable_by_key(|&(place, _)| place);
    moves.extend(found.iter().map(|&(_, m)| m));
}

/// The bookkeeping of [`quiet_checks`]: how many quiet moves were found so far, and the
/// queue's length at each rotation.
struct QueueOrder {
    /// Quiet moves found so far (the queue's length).
    quiets: usize,
    /// Rotations so far.
    rotations: usize,
    /// The queue's length at each rotation.
    length_at: [u8; MAX_MOVES],
}

impl Default for QueueOrder {
    fn default() -> QueueOrder {
        QueueOrder { quiets: 0, rotations: 0, length_at: [0; MAX_MOVES] }
    }
}

impl QueueOrder {
    /// A noisy move found when the queue holds `length` quiet moves.
    #[inline]
    fn rotate(&mut self, length: usize) {
        if length > 0 && self.rotations < MAX_MOVES {
            self.length_at[self.rotations] = length as u8;
            self.rotations += 1;
        }
    }

    /// Where in the growing array a quiet move found after `quiets_before` others (and the
    /// rotations so far) is written.
    #[inline]
    fn place(&self, quiets_before: usize) -> usize {
        quiets_before + self.rotations
    }

    /// One piece's targets, in ascending order: `quiet` (among them `checks`, each handed
    /// to `keep` with its place) and `noisy`, each of which rotates the queue.
    #[inline]
    fn piece(
        &mut self,
        quiet: Bitboard,
        noisy: Bitboard,
        checks: Bitboard,
        mut keep: impl FnMut(usize, Square),
    ) {
        let below = |sq: Square| Bitboard((1u64 << sq as u32) - 1);
        for to in noisy | checks {
            let quiets_before = self.quiets + (quiet & below(to)).count();
            if noisy.contains(to) {
                self.rotate(quiets_before);
            } else {
                keep(self.place(quiets_before), to);
            }
        }
        self.quiets += quiet.count();
    }

    /// Where the element written at `place` stands once every rotation is done: rotation r
    /// moves the element at r to r + the queue's length then, until it lies beyond them all.
    fn final_place(&self, place: u32) -> u32 {
        let mut place = place as usize;
        while place < self.rotations {
            place += usize::from(self.length_at[place]);
        }
        place as u32
    }
}

/// The legal moves of a position in check, in shakmaty's order: en passant, the king's
/// moves, then (against a single checker) the moves that take it or step between, as
/// `generate` orders them.
fn evasions(pos: &Position, moves: &mut MoveList) {
    let us = pos.turn();
    let king = pos.king_of(us);
    let checkers = pos.checkers();
    en_passant(pos, king, |m| moves.push(m));

    // The king may not stay on a checking slider's line, even on the square behind it.
    let mut attacked = Bitboard(0);
    for checker in checkers & (pos.diagonal_sliders() | pos.straight_sliders()) {
        attacked |= attacks::ray(checker, king) ^ Bitboard::from(checker);
    }
    let occupied = pos.occupied();
    for to in attacks::king_attacks(king) & !pos.us() & !attacked {
        if pos.attacks_to(to, !us, occupied).is_empty() {
            moves.push(Move::capture_code(Role::King, king, to, pos.code_at(to), None));
        }
    }
    let Some(checker) = checkers.single_square() else {
        return;
    };
    let target = attacks::between(king, checker).with(checker);
    let pinned = pos.pinned();
    let safe = |from, to| !pinned.contains(from) || attacks::aligned(from, to, king);
    let victim = |to| pos.code_at(to);

    let pawns = pos.our(Role::Pawn);
    let (forward, west, east, double_rank) = pawn_directions(us);
    for (offset, edge) in [(west, FILE_A), (east, FILE_H)] {
        let captures = (pawns & !edge).shift(offset) & pos.them() & target;
        for to in captures & !Bitboard::BACKRANKS {
            let from = Square::new((to as i32 - offset) as u32);
            if safe(from, to) {
                moves.push(Move::capture_code(Role::Pawn, from, to, victim(to), None));
            }
        }
        for to in captures & Bitboard::BACKRANKS {
            let from = Square::new((to as i32 - offset) as u32);
            if safe(from, to) {
                for promotion in PROMOTIONS {
                    moves.push(Move::capture_code(
                        Role::Pawn,
                        from,
                        to,
                        victim(to),
                        Some(promotion),
                    ));
                }
            }
        }
    }
    let single = pawns.shift(forward) & !occupied;
    for to in single & target & !Bitboard::BACKRANKS {
        let from = Square::new((to as i32 - forward) as u32);
        if safe(from, to) {
            moves.push(Move::quiet(Role::Pawn, from, to));
        }
    }
    for to in single & target & Bitboard::BACKRANKS {
        let from = Square::new((to as i32 - forward) as u32);
        if safe(from, to) {
            for promotion in PROMOTIONS {
                moves.push(Move::normal(Role::Pawn, from, to, None, Some(promotion)));
            }
        }
    }
    for to in single.shift(forward) & !occupied & Bitboard::from_rank(double_rank) & target {
        let from = Square::new((to as i32 - 2 * forward) as u32);
        if safe(from, to) {
            moves.push(Move::quiet(Role::Pawn, from, to));
        }
    }
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for from in pos.our(role) {
            for to in attacks::attacks(from, role.of(us), occupied) & target {
                if safe(from, to) {
                    moves.push(Move::capture_code(role, from, to, victim(to), None));
                }
            }
        }
    }
}

/// Castling toward `side`, if the side to move may and can: the right is kept, the
/// squares both pieces cross are empty, and the king passes through no attacked square
/// (shakmaty's rule, Chess960 included).
pub fn castling_move(pos: &Position, side: CastlingSide) -> Option<Move> {
    let us = pos.turn();
    let rook = pos.castling_rook(us, side)?;
    let king = pos.king_of(us);
    let (king_to, rook_to) = (side.king_to(us), side.rook_to(us));
    let path = (attacks::between(rook, rook_to).with(rook_to)
        | attacks::between(king, king_to).with(king_to))
    .without(king)
    .without(rook);
    let occupied = pos.occupied();
    if (path & occupied).any() {
        return None;
    }
    let after = occupied ^ Bitboard::from(king) ^ Bitboard::from(rook) ^ Bitboard::from(rook_to);
    if pos.attacks_to(king_to, !us, after).any() {
        return None;
    }
    let without_king = occupied ^ Bitboard::from(king);
    for sq in attacks::between(king, king_to).with(king) {
        if pos.attacks_to(sq, !us, without_king).any() {
            return None;
        }
    }
    Some(Move::castle(king, rook))
}

/// Whether legal move `m` gives check, worked out from the position before it (the move
/// loop prunes before it makes the move): see [`CheckSquares::gives_check`].
#[inline]
pub fn gives_check(pos: &Position, m: Move) -> bool {
    pos.check_squares().is_some_and(|squares| squares.gives_check(pos, m))
}

impl CheckSquares {
    /// Whether legal move `m` of `pos`, the position these squares belong to, gives check:
    /// for a plain move, whether it lands on a check square of its piece or uncovers a
    /// slider's line; the rest out of line.
    #[inline(always)]
    pub fn gives_check(&self, pos: &Position, m: Move) -> bool {
        if m.is_plain() {
            let (from, to) = (m.from(), m.to());
            self.by_role[m.role() as usize - 1].contains(to)
                || (self.discoverers.contains(from) && !attacks::aligned(from, to, self.king))
        } else {
            self.special_gives_check(pos, m)
        }
    }

    /// [`CheckSquares::gives_check`] for promotions, castling and en passant. Castling and
    /// en passant, which move two pieces, are played out on a copy.
    #[inline(never)]
    fn special_gives_check(&self, pos: &Position, m: Move) -> bool {
        let (from, to) = (m.from(), m.to());
        let Some(promotion) = m.promotion() else {
            let mut after = pos.clone();
            after.play(m);
            return after.is_check();
        };
        // A promotion's new piece sees through the square the pawn left.
        let occupied = pos.occupied().without(from).with(to);
        attacks::attacks(to, promotion.of(pos.turn()), occupied).contains(self.king)
            || (self.discoverers.contains(from) && !attacks::aligned(from, to, self.king))
    }
}

/// Whether `m`, a move made up from the board (a stored move, a killer), is legal in
/// `pos`: the same answer as shakmaty's `is_legal`, without generating the moves that
/// reach its target. The move is checked against the board (its piece, its capture, its
/// path), then the king must stand unattacked after it.
pub fn is_legal(pos: &Position, m: Move) -> bool {
    let us = pos.turn();
    let occupied = pos.occupied();
    let king = pos.king_of(us);
    let (from, to) = (m.from(), m.to());
    match m.kind() {
        MoveKind::Normal => {
            let role = m.role();
            let capture = m.capture();
            if pos.piece_at(from) != Some(role.of(us)) || pos.role_at(to) != capture {
                return false;
            }
            if capture.is_some() && !pos.them().contains(to) {
                return false;
            }
            let promotion = m.promotion();
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
            if role == Role::King {
                let after = occupied.without(from).with(to);
                return pos.attacks_to(to, !us, after).without(to).is_empty();
            }
            // Any other piece: in check it must take the checker or block it, and pinned
            // it must stay on its line (the answer of the whole attack test, cheaper).
            let checkers = pos.checkers();
            if checkers.any() {
                let Some(checker) = checkers.single_square() else {
                    return false;
                };
                if !attacks::between(king, checker).with(checker).contains(to) {
                    return false;
                }
            }
            !pos.pinned().contains(from) || attacks::aligned(from, to, king)
        }
        MoveKind::EnPassant => {
            // The capture must be possible here; the king's safety is checked below.
            if pos.ep_square() != Some(to)
                || pos.piece_at(from) != Some(us.pawn())
                || !attacks::pawn_attacks(us, from).contains(to)
            {
                return false;
            }
            let captured = Square::from_coords(to.file(), from.rank());
            let after = occupied.without(from).without(captured).with(to);
            pos.attacks_to(king, !us, after).without(captured).is_empty()
        }
        MoveKind::Castle => {
            !pos.is_check()
                && m.castling_side().and_then(|side| castling_move(pos, side)) == Some(m)
        }
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

/// The legal move of `pos` that packs to `code` (a move read from the table), if any: the
/// same answer as searching every legal move for it, found without generating them (the
/// move is rebuilt from the board, then checked against the board by [`is_legal`]).
pub fn unpack(pos: &Position, code: PackedMove) -> Option<Move> {
    let (from, to) = (code.from(), code.to());
    let piece = pos.piece_at(from).filter(|p| p.color == pos.turn())?;
    let target = pos.piece_at(to);
    let m = if piece.role == Role::King
        && target.is_some_and(|t| t.color == pos.turn() && t.role == Role::Rook)
    {
        Move::castle(from, to)
    } else if piece.role == Role::Pawn
        && target.is_none()
        && from.file() != to.file()
        && pos.ep_square() == Some(to)
    {
        Move::en_passant(from, to)
    } else {
        let promotion = match code.bits() >> 12 {
            0 => None,
            role => Some(Role::try_from(u32::from(role)).ok()?),
        };
        let capture = target.filter(|t| t.color != pos.turn()).map(|t| t.role);
        Move::normal(piece.role, from, to, capture, promotion)
    };
    (m.packed() == code && is_legal(pos, m)).then_some(m)
}
