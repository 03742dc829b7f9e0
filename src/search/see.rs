//! Static exchange evaluation: does a capture sequence on one square win at least a
//! threshold, if both sides always recapture with their least valuable attacker and may
//! stop whenever continuing would lose?
//!
//! The swap loop in its threshold form (as Stockfish writes it): rather than computing
//! the exchange's value, it tracks whether the side to move is still at or above the
//! threshold, which needs no gain list. X-rays are found by recomputing slider attacks
//! through the squares vacated so far. A piece pinned to its king takes no part while
//! its pinner stands (Stockfish's rule); a promotion puts its new piece on the square.

use shakmaty::{
    attacks::{bishop_attacks, rook_attacks},
    Bitboard, Role,
};

use super::params;
use crate::position::{Move, MoveKind, Position};

/// The exchange value of a piece kind in internal units (the king is never captured).
#[inline]
pub fn value(role: Role) -> i32 {
    match role {
        Role::Pawn => params::see_pawn(),
        Role::Knight => params::see_knight(),
        Role::Bishop => params::see_bishop(),
        Role::Rook => params::see_rook(),
        Role::Queen => params::see_queen(),
        Role::King => 0,
    }
}

/// What a move wins at face value: the captured piece, plus the promotion piece in
/// place of the pawn.
#[inline]
pub fn face_gain(m: Move) -> i32 {
    m.capture().map_or(0, value) + m.promotion().map_or(0, |p| value(p) - value(Role::Pawn))
}

/// Whether `m` wins at least `threshold` in the exchange it starts.
pub fn see_ge(pos: &Position, m: Move, threshold: i32) -> bool {
    let (from, to) = (m.from(), m.to());
    let mover = match m.kind() {
        MoveKind::Normal => m.promotion().unwrap_or(m.role()),
        // Castling moves nothing capturable; en passant is close enough to its face value.
        MoveKind::Castle => return threshold <= 0,
        MoveKind::EnPassant => return value(Role::Pawn) >= threshold,
    };
    let mut swap = face_gain(m) - threshold;
    if swap < 0 {
        return false;
    }
    swap = value(mover) - swap;
    if swap <= 0 {
        return true;
    }
    let mut occupied = pos.occupied() ^ Bitboard::from(from) ^ Bitboard::from(to);
    let mut stm = pos.turn();
    let mut attackers = pos.attackers(to, occupied);
    let diagonal = pos.diagonal_sliders();
    let straight = pos.straight_sliders();
    let mut result = true;
    loop {
        stm = !stm;
        attackers &= occupied;
        let mut ours = attackers & pos.by_color(stm);
        if ours.is_empty() {
            break;
        }
        // A piece pinned to its king takes no part while its pinner stands.
        let pins = pos.pins(stm);
        if (pins.pinners & occupied).any() {
            ours &= !pins.blockers;
            if ours.is_empty() {
                break;
            }
        }
        result = !result;
        let (role, sq) =
            [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King]
                .into_iter()
                .find_map(|r| (ours & pos.by_role(r)).first().map(|sq| (r, sq)))
                .expect("an attacker has a role");
        if role == Role::King {
            // The king may only take last: if the other side still attacks, it cannot.
            return if (attackers & !pos.by_color(stm)).any() { !result } else { result };
        }
        swap = value(role) - swap;
        if swap < i32::from(result) {
            break;
        }
        occupied ^= Bitboard::from(sq);
        if matches!(role, Role::Pawn | Role::Bishop | Role::Queen) {
            attackers |= bishop_attacks(to, occupied) & diagonal;
        }
        if matches!(role, Role::Rook | Role::Queen) {
            attackers |= rook_attacks(to, occupied) & straight;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{fen::Fen, uci::UciMove, CastlingMode, Chess, Position as _};

    fn check(fen: &str, uci: &str, threshold: i32) -> bool {
        let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        see_ge(&Position::from_chess(&pos), Move::from_shakmaty(m).unwrap(), threshold)
    }

    #[test]
    fn exchanges() {
        // A free pawn.
        let fen = "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1";
        assert!(check(fen, "e1e5", 200));
        assert!(!check(fen, "e1e5", 201));
        // Rook takes a pawn defended by a rook behind a knight: loses the exchange.
        let fen = "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1";
        assert!(!check(fen, "d3e5", 0));
        assert!(check(fen, "d3e5", -450));
        // Quiet move to an attacked square loses the piece.
        let fen = "4k3/8/8/8/3p4/8/8/3NK3 w - - 0 1";
        assert!(!check(fen, "d1c3", 0));
        assert!(check(fen, "d1b2", 0));
        // X-ray: the queen behind the rook keeps the exchange going.
        let fen = "3r2k1/8/8/3p4/8/8/3R4/3QK3 w - - 0 1";
        assert!(check(fen, "d2d5", 0));
    }

    #[test]
    fn pinned_defenders_do_not_defend() {
        // The knight on d5 is defended only by the e6 pawn, which the rook on e1 pins to
        // its king: the bishop wins the knight outright.
        let fen = "4k3/8/4p3/3n4/8/1B6/8/4R1K1 w - - 0 1";
        assert!(check(fen, "b3d5", value(Role::Knight)));
        // Without the rook the pawn recaptures: bishop for knight.
        let fen = "4k3/8/4p3/3n4/8/1B6/8/6K1 w - - 0 1";
        assert!(!check(fen, "b3d5", 0));
        assert!(check(fen, "b3d5", value(Role::Knight) - value(Role::Bishop)));
    }

    #[test]
    fn a_promotion_puts_its_new_piece_on_the_square() {
        let (pawn, rook, queen) = (value(Role::Pawn), value(Role::Rook), value(Role::Queen));
        // Promoting where the rook takes the new queen loses the pawn.
        let fen = "1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1";
        assert!(!check(fen, "a7a8q", 0));
        assert!(check(fen, "a7a8q", -pawn));
        // Promoting by taking the rook wins it and the queen's worth over a pawn.
        assert!(check(fen, "a7b8q", rook + queen - pawn));
        assert!(!check(fen, "a7b8q", rook + queen - pawn + 1));
        // Undefended, the promotion wins its face value.
        let fen = "4k3/P7/8/8/8/8/8/4K3 w - - 0 1";
        assert!(check(fen, "a7a8q", queen - pawn));
        assert!(!check(fen, "a7a8q", queen - pawn + 1));
    }

    /// An exchange that wins at least a threshold wins at least every smaller one: the
    /// result falls from true to false once, as the threshold rises (the picker and the
    /// quiescence search rely on it to share one test), for every capture and quiet move
    /// within two plies of positions full of exchanges.
    #[test]
    fn the_result_falls_once_as_the_threshold_rises() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1",
            "r1bq1rk1/pp2nppp/2n1p3/3pP3/1b1P4/2NB1N2/PP3PPP/R1BQ1RK1 w - - 0 10",
            "4k3/8/4p3/3n4/8/1B6/8/4R1K1 w - - 0 1",
        ];
        let mut tested = 0;
        for fen in fens {
            let root: Chess =
                fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
            let mut positions = vec![root.clone()];
            for m in root.legal_moves() {
                let mut child = root.clone();
                child.play_unchecked(m);
                positions.push(child);
            }
            for pos in &positions {
                let own = Position::from_chess(pos);
                for m in pos.legal_moves() {
                    let m = Move::from_shakmaty(m).unwrap();
                    let results: Vec<bool> =
                        (-3000..=3000).step_by(50).map(|t| see_ge(&own, m, t)).collect();
                    assert!(results.windows(2).all(|w| w[0] || !w[1]), "{m} in {pos:?}");
                    tested += 1;
                }
            }
        }
        assert!(tested > 1000, "{tested} moves");
    }
}
