//! The position against shakmaty's `Chess`, the referee: played alongside along random
//! games, every field the same; every generated list the same, move for move; every
//! answer about a single move the same.

use shakmaty::{
    attacks, fen::Fen, zobrist::Zobrist64, CastlingMode, Chess, EnPassantMode, Position as _, Role,
    Square,
};

use super::{movegen::*, Move, MoveList, Position};
use crate::{rng::Rng, types::PackedMove};

fn parse(fen: &str, mode: CastlingMode) -> Chess {
    fen.parse::<Fen>().unwrap().into_position(mode).unwrap()
}

/// The starting positions of the perft suites (standard, then Chess960), then `extra`.
fn suite(extra: &[&str]) -> Vec<Chess> {
    let lines = |text: &'static str, mode| {
        text.lines()
            .filter_map(|l| l.split(';').next())
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(move |fen| parse(fen, mode))
            .collect::<Vec<_>>()
    };
    let mut all = lines(include_str!("../../tests/perft/standard.epd"), CastlingMode::Standard);
    all.extend(lines(include_str!("../../tests/perft/chess960.epd"), CastlingMode::Chess960));
    all.extend(extra.iter().map(|fen| parse(fen, CastlingMode::Chess960)));
    all
}

/// Positions with en passant pins, promotions, castling through attacks, checks of every
/// kind.
const EXTRA: &[&str] = &[
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 2",
    "8/8/8/3pP2r/K7/8/8/7k w - d6 0 2",
    "1b5k/8/8/3pPpP1/8/8/7K/8 w - f6 0 2",
    "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R w KQkq - 0 1",
    "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 0 1",
    "r3k2r/8/8/8/8/8/5b2/R3K2R w KQkq - 0 1",
    "4k3/4r3/8/8/8/8/4P3/4K3 w - - 0 1",
    "4k3/8/8/b7/8/8/3P4/4K3 w - - 0 1",
    "4k3/8/8/8/4q3/8/4N3/4K3 w - - 0 1",
    "8/8/8/2k5/3Pp3/8/8/3K4 b - d3 0 1",
    "4k3/8/8/8/7b/5n2/8/R3K2R w KQ - 0 1",
    "8/7k/8/8/8/8/2P5/1B4K1 w - - 0 1",
    "8/8/8/Q1pP3k/8/8/8/6K1 w - c6 0 2",
    "3k4/1P6/8/8/8/8/8/6K1 w - - 0 1",
    "3r4/2P1k3/8/8/8/8/8/6K1 w - - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K1R1 w Qkq - 0 1",
    "5k2/8/8/8/8/8/8/R3K2R w KQ - 0 1",
    "r3k2r/8/8/8/4q3/8/8/R3K2R w KQkq - 0 1",
    "4k3/8/8/8/8/8/4q3/R3K2R w KQ - 0 1",
    "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1",
    // More quiet checks than the short list holds.
    "7k/2Q1Q3/1Q4Q1/3Q4/6Q1/4Q3/1K3Q2/Q7 w - - 0 1",
];

fn ours(pos: &Chess) -> Vec<Move> {
    pos.legal_moves().into_iter().map(|m| Move::from_shakmaty(m).unwrap()).collect()
}

/// Every field of `own` agrees with `pos`.
fn assert_same(own: &Position, pos: &Chess) {
    let fen = Fen::from_position(pos, EnPassantMode::Legal);
    for sq in Square::ALL {
        assert_eq!(own.piece_at(sq), pos.board().piece_at(sq), "{fen} {sq}");
    }
    for role in Role::ALL {
        assert_eq!(own.by_role(role), pos.board().by_role(role), "{fen}");
    }
    for color in shakmaty::Color::ALL {
        assert_eq!(own.by_color(color), pos.board().by_color(color), "{fen}");
    }
    assert_eq!(own.turn(), pos.turn(), "{fen}");
    assert_eq!(own.key(), pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0, "{fen}");
    assert_eq!(own.ep_square(), pos.ep_square(EnPassantMode::Legal), "{fen}");
    assert_eq!(own.castling_rights(), pos.castles().castling_rights(), "{fen}");
    assert_eq!(own.halfmoves(), pos.halfmoves(), "{fen}");
    assert_eq!(own.checkers(), pos.checkers(), "{fen}");
    assert_eq!(own.is_insufficient_material(), pos.is_insufficient_material(), "{fen}");
    for color in shakmaty::Color::ALL {
        let (pinned, pinners) = reference_pins(pos, color);
        let pins = own.pins(color);
        assert_eq!(pins.blockers & own.by_color(color), pinned, "{fen} {color:?}");
        assert_eq!(pins.pinners, pinners, "{fen} {color:?}");
    }
    for side in [shakmaty::CastlingSide::KingSide, shakmaty::CastlingSide::QueenSide] {
        for color in shakmaty::Color::ALL {
            assert_eq!(own.castling_rook(color, side), pos.castles().rook(color, side), "{fen}");
        }
    }
}

/// The pieces of `us` pinned to their king and the pinners, worked out from the board.
fn reference_pins(pos: &Chess, us: shakmaty::Color) -> (shakmaty::Bitboard, shakmaty::Bitboard) {
    let board = pos.board();
    let king = board.king_of(us).unwrap();
    let (mut pinned, mut pinners) = (shakmaty::Bitboard(0), shakmaty::Bitboard(0));
    for sniper in board.by_color(!us) & board.sliders() {
        let line = attacks::attacks(sniper, board.piece_at(sniper).unwrap(), shakmaty::Bitboard(0));
        if !line.contains(king) {
            continue;
        }
        let between = attacks::between(king, sniper) & board.occupied();
        if between.count() == 1 && (between & board.by_color(us)).any() {
            pinned |= between;
            pinners |= shakmaty::Bitboard::from(sniper);
        }
    }
    (pinned, pinners)
}

/// Random games from every suite position, with null moves and the moves of every
/// position tried: the position played alongside a shakmaty `Chess` stays the same in
/// every field (pieces, mailbox, key, en passant, castling rights, fifty-move counter,
/// checkers, pins), and the quiet checks come in the quiet list's order.
#[test]
fn the_position_follows_shakmaty_along_random_games() {
    let mut rng = Rng::new(7);
    let (mut makes, mut nulls, mut castles, mut en_passant, mut checks) = (0, 0, 0, 0, 0);
    for (game, start) in suite(EXTRA).into_iter().cycle().take(150).enumerate() {
        let mut pos = start;
        let mut own = Position::from_chess(&pos);
        assert_same(&own, &pos);
        for _ in 0..(40 + game % 80) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            if !pos.is_check() && rng.below(6) == 0 {
                let mut null = own.clone();
                null.play_null();
                let swapped = pos.clone().swap_turn().unwrap();
                assert_same(&null, &swapped);
                nulls += 1;
            }
            for &m in &moves {
                let mut next = own.clone();
                next.play(Move::from_shakmaty(m).unwrap());
                let mut reference = pos.clone();
                reference.play_unchecked(m);
                assert_same(&next, &reference);
                makes += 1;
                castles += usize::from(m.is_castle());
                en_passant += usize::from(m.is_en_passant());
                checks += usize::from(reference.is_check());
            }
            if !pos.is_check() {
                // Deep in a game, with many captures about: the quiet checks alone, in the
                // order of the quiet list.
                let mut quiet = MoveList::new();
                quiet_moves(&own, &mut quiet);
                let expected: Vec<Move> =
                    quiet.iter().copied().filter(|&m| gives_check(&own, m)).collect();
                let mut checks = MoveList::new();
                quiet_checks(&own, &mut checks);
                assert_eq!(
                    checks.to_vec(),
                    expected,
                    "{}",
                    Fen::from_position(&pos, EnPassantMode::Legal)
                );
            }
            let m = moves[rng.below(moves.len())];
            own.play(Move::from_shakmaty(m).unwrap());
            pos.play_unchecked(m);
        }
        assert_eq!(own.to_chess().unwrap().board(), pos.board());
    }
    assert!(makes > 100_000 && nulls > 500, "{makes} moves, {nulls} null moves");
    assert!(castles > 200 && en_passant > 30 && checks > 10_000, "{castles} {en_passant} {checks}");
}

/// Every position within two plies of the suites' (standard, Chess960, and positions
/// with en passant pins, promotions and castling through attacks): every legal move in
/// shakmaty's order, in check and out; out of check the noisy moves alone in that order,
/// the quiet ones as the split of the whole list leaves them, and the quiet checks alone
/// in that same order.
#[test]
fn generation_is_shakmatys_move_for_move() {
    fn walk(
        pos: &Chess,
        depth: u32,
        checked: &mut usize,
        evasions: &mut usize,
        quiet_checks_seen: &mut usize,
    ) {
        let own = Position::from_chess(pos);
        let legal = ours(pos);
        let fen = Fen::from_position(pos, EnPassantMode::Legal);
        let mut moves = MoveList::new();
        legal_moves(&own, &mut moves);
        assert_eq!(moves.to_vec(), legal, "{fen}");
        assert_eq!(has_legal_move(&own), !legal.is_empty());
        if pos.is_check() {
            *evasions += 1;
        } else {
            let noisy: Vec<Move> = legal.iter().copied().filter(|&m| is_noisy(m)).collect();
            moves.clear();
            noisy_moves(&own, &mut moves);
            assert_eq!(moves.to_vec(), noisy, "{fen}");
            // After some moves already listed, as the picker has them.
            let mut split_list = legal.clone();
            let n = split(&mut split_list);
            moves.clear();
            moves.extend(split_list[..n].iter().copied());
            quiet_moves(&own, &mut moves);
            assert_eq!(moves.to_vec(), split_list, "{fen}");
            // The quiet checks alone, in that order.
            let checks: Vec<Move> =
                split_list[n..].iter().copied().filter(|&m| gives_check(&own, m)).collect();
            moves.clear();
            quiet_checks(&own, &mut moves);
            assert_eq!(moves.to_vec(), checks, "{fen}");
            *quiet_checks_seen += checks.len();
        }
        *checked += 1;
        if depth > 0 {
            for m in pos.legal_moves() {
                let mut next = pos.clone();
                next.play_unchecked(m);
                walk(&next, depth - 1, checked, evasions, quiet_checks_seen);
            }
        }
    }
    let (mut checked, mut evasions, mut checks) = (0, 0, 0);
    for pos in suite(EXTRA) {
        walk(&pos, 2, &mut checked, &mut evasions, &mut checks);
    }
    assert!(checked > 20_000 && evasions > 1_000, "{checked} positions, {evasions} in check");
    assert!(checks > 10_000, "{checks} quiet checks");
}

/// The quiet moves come out the same however full the list already is: rotating them
/// leaves stale copies behind, which are dropped early when the list fills up.
#[test]
fn quiet_moves_fill_a_nearly_full_list() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let pos = parse(fen, CastlingMode::Standard);
    let own = Position::from_chess(&pos);
    let mut expected = ours(&pos);
    let noisy = split(&mut expected);
    let quiet = &expected[noisy..];
    let filler = expected[0];
    for already in 0..=MoveList::new().capacity() - quiet.len() {
        let mut moves = MoveList::new();
        moves.extend(std::iter::repeat_n(filler, already));
        quiet_moves(&own, &mut moves);
        assert_eq!(&moves[already..], quiet, "{already} moves listed before");
    }
}

/// Perft on the position, to the depths the suites give within a few million leaves,
/// equals the suites' counts.
#[test]
fn perft_counts_match_the_suites() {
    fn perft(pos: &Position, depth: u32) -> u64 {
        let mut moves = MoveList::new();
        legal_moves(pos, &mut moves);
        if depth == 1 {
            return moves.len() as u64;
        }
        moves
            .iter()
            .map(|&m| {
                let mut next = pos.clone();
                next.play(m);
                perft(&next, depth - 1)
            })
            .sum()
    }
    let mut leaves = 0;
    for (text, mode) in [
        (include_str!("../../tests/perft/standard.epd"), CastlingMode::Standard),
        (include_str!("../../tests/perft/chess960.epd"), CastlingMode::Chess960),
    ] {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let mut parts = line.split(';');
            let own = Position::from_chess(&parse(parts.next().unwrap().trim(), mode));
            for part in parts {
                let (depth, count) = part.trim().split_once(' ').unwrap();
                let depth: u32 = depth.trim_start_matches('D').parse().unwrap();
                let count: u64 = count.trim().parse().unwrap();
                if count > 2_500_000 {
                    continue;
                }
                assert_eq!(perft(&own, depth), count, "{line} depth {depth}");
                leaves += count;
            }
        }
    }
    assert!(leaves > 10_000_000, "only {leaves} leaves");
}

/// Two plies from every suite position: every move of a position, of its parent and of
/// its grandparent (stored moves and killers come from nearby positions), and every en
/// passant capture a pawn could try, is legal here exactly when shakmaty says so; every
/// legal move's check is found without playing it.
#[test]
fn single_moves_are_judged_as_shakmaty_judges_them() {
    fn compare(pos: &Chess, nearby: &[Move], depth: u32, compared: &mut usize, checks: &mut usize) {
        let own = Position::from_chess(pos);
        let legal = ours(pos);
        let fen = Fen::from_position(pos, EnPassantMode::Legal);
        let en_passant = pos.ep_square(EnPassantMode::Always).into_iter().flat_map(|to| {
            let pawns = pos.our(Role::Pawn) & attacks::pawn_attacks(!pos.turn(), to);
            pawns.into_iter().map(move |from| Move::en_passant(from, to))
        });
        for m in legal.iter().copied().chain(nearby.iter().copied()).chain(en_passant) {
            assert_eq!(is_legal(&own, m), pos.is_legal(m.to_shakmaty()), "{fen} {m:?}");
            *compared += 1;
        }
        for &m in &legal {
            let mut next = pos.clone();
            next.play_unchecked(m.to_shakmaty());
            assert_eq!(gives_check(&own, m), next.is_check(), "{fen} {m}");
            *checks += usize::from(next.is_check());
        }
        if depth > 0 {
            let mut near = legal.clone();
            near.extend(nearby.iter().take(64));
            for m in pos.legal_moves() {
                let mut next = pos.clone();
                next.play_unchecked(m);
                compare(&next, &near, depth - 1, compared, checks);
            }
        }
    }
    let (mut compared, mut checks) = (0, 0);
    for pos in suite(EXTRA) {
        compare(&pos, &[], 2, &mut compared, &mut checks);
    }
    assert!(compared > 1_000_000 && checks > 5_000, "{compared} comparisons, {checks} checks");
}

/// Every 16-bit code (a stored move may be any of them, from a position that shares the
/// key) names here the legal move that packs to it, or none, as a search of the whole
/// list would.
#[test]
fn unpacking_a_code_finds_the_move_that_packs_to_it() {
    let fens = [
        "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "4k3/8/8/8/3pP3/8/8/4K2R b K e3 0 1",
        "r3k2r/8/8/8/8/8/8/R3K1R1 b Qkq - 0 1",
        "8/8/8/2k5/3Pp3/8/8/3K4 b - d3 0 1",
        "4k3/8/8/8/8/8/4q3/R3K2R w KQ - 0 1",
        "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1",
        "4k3/8/8/8/7b/5n2/8/R3K2R w KQ - 0 1",
        "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1",
    ];
    for fen in fens {
        let pos = parse(fen, CastlingMode::Chess960);
        let own = Position::from_chess(&pos);
        let legal = ours(&pos);
        let codes = (0..0x7000).chain([0x7FFF, 0x8000, 0xFFFF]).map(PackedMove::from_bits);
        for code in codes {
            let expected = legal.iter().copied().find(|m| m.packed() == code);
            assert_eq!(unpack(&own, code), expected, "{code:?} in {fen}");
        }
        for &m in &legal {
            assert_eq!(unpack(&own, m.packed()), Some(m));
        }
    }
}
