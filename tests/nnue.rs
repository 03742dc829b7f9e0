//! Inference: the reference vectors, incremental updates against full refreshes, AVX2
//! against scalar, and the loader's checks.

mod common;

use bytemuck::Zeroable;
use common::{board_and_turn, position, reference_bytes, reference_net, reference_vectors};
use nue::{
    nnue::{
        accumulator::{refreshed, AccumulatorStack},
        simd::{self, HiddenWeights, L1Grouping, Simd},
        to_internal, Half, NetError, Network, FIXED_BYTES, HALF,
    },
    rng::Rng,
};
use shakmaty::{fen::Fen, CastlingMode, Chess, Color, Move, Position, Role};

/// The AVX2 kernels, or `None` on a processor without AVX2. CI sets `NUE_REQUIRE_AVX2`
/// on processors that report AVX2, so that a detection that fails there fails the tests
/// instead of quietly testing the scalar kernels alone.
fn avx2() -> Option<Simd> {
    let avx2 = Simd::avx2();
    if avx2.is_none() {
        assert!(
            std::env::var_os("NUE_REQUIRE_AVX2").is_none(),
            "NUE_REQUIRE_AVX2 is set, but the AVX2 kernels were not selected"
        );
    }
    avx2
}

fn kernels() -> Vec<Simd> {
    let mut all = vec![Simd::scalar()];
    all.extend(avx2());
    all.extend(Simd::vnni());
    all
}

#[test]
fn reference_vectors_match_by_full_refresh() {
    let (Some(net), Some(vectors)) = (reference_net(), reference_vectors()) else { return };
    assert_eq!(vectors.len(), 1589);
    for simd in kernels() {
        for (raw, fen) in &vectors {
            let (board, turn) = board_and_turn(fen);
            let got = net.evaluate(simd, &board, turn);
            assert_eq!(got, *raw, "{fen} with {} kernels", simd.name());
        }
    }
}

#[test]
fn spec_examples_and_truncation() {
    let Some(net) = reference_net() else { return };
    let start = Chess::default();
    let raw = net.evaluate(Simd::detect(), start.board(), start.turn());
    assert_eq!(raw, -123);
    assert_eq!(to_internal(raw), -7, "trunc(-123 / 16) is -7, floor would be -8");
    // Not a legal position (both kings in check), but a valid input for the network.
    let (board, turn) = board_and_turn("8/8/8/8/8/2k5/3p4/4K2R b K - 0 1");
    assert_eq!(to_internal(net.evaluate(Simd::detect(), &board, turn)), -53);
}

/// A quiet move of a non-pawn piece that can be played straight back.
fn reversible_moves(pos: &Chess) -> Vec<(Move, Chess)> {
    pos.legal_moves()
        .into_iter()
        .filter(|m| m.role() != Role::Pawn && !m.is_capture() && !m.is_castle())
        .map(|m| {
            let mut after = pos.clone();
            after.play_unchecked(m);
            (m, after)
        })
        .collect()
}

/// Plays `m` on `pos` and the stack together.
fn play(stack: &mut AccumulatorStack, pos: &mut Chess, m: Move) {
    stack.push_move(pos.turn(), nue::position::Move::from_shakmaty(m).unwrap());
    pos.play_unchecked(m);
}

/// Finds four plies that leave every piece where it was: a piece of the side to move goes
/// out, an enemy piece goes out, both come back. King moves among them exercise refreshes.
fn round_trip(pos: &Chess) -> Option<[Move; 4]> {
    for (m1, p1) in reversible_moves(pos) {
        for (m2, p2) in reversible_moves(&p1) {
            let back1 = Move::Normal {
                role: m1.role(),
                from: m1.to(),
                capture: None,
                to: m1.from().unwrap(),
                promotion: None,
            };
            if !p2.is_legal(back1) {
                continue;
            }
            let mut p3 = p2.clone();
            p3.play_unchecked(back1);
            let back2 = Move::Normal {
                role: m2.role(),
                from: m2.to(),
                capture: None,
                to: m2.from().unwrap(),
                promotion: None,
            };
            if p3.is_legal(back2) {
                return Some([m1, m2, back1, back2]);
            }
        }
    }
    None
}

#[test]
fn reference_vectors_match_by_incremental_updates() {
    let (Some(net), Some(vectors)) = (reference_net(), reference_vectors()) else { return };
    let mut covered = 0;
    for simd in kernels() {
        let mut stack = AccumulatorStack::new(simd);
        for (raw, fen) in &vectors {
            // A few vectors are synthetic, illegal positions; they are covered by the
            // full-refresh test.
            let Ok(start) =
                fen.parse::<Fen>().unwrap().into_position::<Chess>(CastlingMode::Standard)
            else {
                continue;
            };
            let Some(moves) = round_trip(&start) else {
                continue;
            };
            let mut pos = start.clone();
            stack.reset(net, pos.board());
            // Evaluate midway so that both lazy paths run: after two plies the update is
            // applied from the root, after four from ply 2.
            for (i, m) in moves.into_iter().enumerate() {
                play(&mut stack, &mut pos, m);
                if i == 1 {
                    stack.evaluate(net, pos.board(), pos.turn());
                }
            }
            assert_eq!(pos.board(), start.board());
            assert_eq!(stack.evaluate(net, pos.board(), pos.turn()), *raw, "{fen}");
            covered += 1;
        }
    }
    // Positions without four reversible plies (a king in a mating net, say) are rare.
    assert!(covered >= vectors.len() * kernels().len() * 9 / 10, "only {covered} covered");
}

/// Random legal games from the start position, every ply checked against a refresh.
/// The line is walked like a search walks it: forward, and now and then back a few plies
/// to try another move. Returns counts of plies, castles, en passant captures, promotions
/// and king moves.
fn random_games(simd: Simd, seed: u64, plies: usize) -> [usize; 5] {
    let net = reference_net().expect("the caller checked for it");
    let mut rng = Rng::new(seed);
    let mut stack = AccumulatorStack::new(simd);
    let mut line = vec![Chess::default()];
    stack.reset(net, line[0].board());
    let mut seen = [0; 5];
    while seen[0] < plies {
        let pos = line.last().unwrap().clone();
        let moves = pos.legal_moves();
        if moves.is_empty() || line.len() > 400 {
            line.truncate(1);
            line[0] = Chess::default();
            stack.reset(net, line[0].board());
            continue;
        }
        // Random moves rarely castle, capture en passant or promote: favour those moves,
        // and pawn moves, which lead to them.
        let pick = |filter: &dyn Fn(&Move) -> bool, rng: &mut Rng| {
            let some: Vec<Move> = moves.iter().copied().filter(|m| filter(m)).collect();
            (!some.is_empty()).then(|| some[rng.below(some.len())])
        };
        let m = match rng.below(4) {
            0 => pick(&|m| m.is_en_passant() || m.is_promotion() || m.is_castle(), &mut rng),
            1 => pick(&|m| m.role() == Role::Pawn, &mut rng),
            _ => None,
        }
        .unwrap_or_else(|| moves[rng.below(moves.len())]);
        seen[1] += usize::from(m.is_castle());
        seen[2] += usize::from(m.is_en_passant());
        seen[3] += usize::from(m.is_promotion());
        seen[4] += usize::from(m.role() == Role::King);
        let mut next = pos.clone();
        play(&mut stack, &mut next, m);
        line.push(next);
        seen[0] += 1;
        // Skip some evaluations so the lazy path replays several plies at once.
        if rng.below(3) != 0 {
            let pos = line.last().unwrap();
            let fresh = refreshed(net, simd, pos.board());
            for (i, c) in [Color::White, Color::Black].into_iter().enumerate() {
                assert_eq!(stack.accumulator(net, pos.board(), c), &fresh[i], "{c:?} after {m:?}");
            }
            let raw = net.evaluate(simd, pos.board(), pos.turn());
            assert_eq!(stack.evaluate(net, pos.board(), pos.turn()), raw);
        }
        // Now and then step back a few plies and go another way, as a search does.
        if rng.below(6) == 0 {
            for _ in 0..rng.below(4).min(line.len() - 1) {
                stack.pop();
                line.pop();
            }
        }
    }
    seen
}

#[test]
fn incremental_equals_refresh_along_random_games() {
    if reference_net().is_none() {
        return;
    }
    for simd in kernels() {
        let [plies, castles, ep, promos, kings] = random_games(simd, 7, 20_000);
        assert!(plies >= 20_000);
        assert!(
            castles > 20 && ep > 5 && promos > 50 && kings > 100,
            "castles {castles}, en passant {ep}, promotions {promos}, king moves {kings}"
        );
    }
}

#[test]
fn null_move_keeps_accumulators_and_swaps_order() {
    let Some(net) = reference_net() else { return };
    let pos = position("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    let mut stack = AccumulatorStack::new(Simd::detect());
    stack.reset(net, pos.board());
    let before = stack.evaluate(net, pos.board(), pos.turn());
    stack.push_null();
    let after = stack.evaluate(net, pos.board(), !pos.turn());
    assert_eq!(before, 803);
    assert_eq!(after, net.evaluate(Simd::scalar(), pos.board(), Color::Black));
    stack.pop();
    assert_eq!(stack.evaluate(net, pos.board(), pos.turn()), before);
}

fn random_half(rng: &mut Rng) -> Half {
    let mut h = Half::zeroed();
    for v in &mut h.0 {
        *v = rng.next_u64() as i16;
    }
    h
}

#[test]
fn avx2_matches_scalar_on_random_inputs() {
    let Some(avx2) = avx2() else {
        eprintln!("SKIPPED avx2_matches_scalar_on_random_inputs: this processor has no AVX2");
        return;
    };
    let scalar = Simd::scalar();
    let mut rng = Rng::new(1);
    for round in 0..2000 {
        // Full-range i16 lanes, so wrap-around is exercised.
        let rows: Vec<Half> = (0..6).map(|_| random_half(&mut rng)).collect();
        let (na, ns) = (round % 4, (round / 4) % 3);
        let add: Vec<&Half> = rows[..na].iter().collect();
        let sub: Vec<&Half> = rows[3..3 + ns].iter().collect();
        let src = random_half(&mut rng);
        let (mut a, mut b) = (Half::zeroed(), Half::zeroed());
        scalar.update(&mut a, &src, &add, &sub);
        avx2.update(&mut b, &src, &add, &sub);
        assert_eq!(a, b, "update with {na} added, {ns} removed");

        let (mut x1, mut x2) = ([0u8; 512], [0u8; 512]);
        scalar.transform(&rows[0], &rows[1], &mut x1);
        avx2.transform(&rows[0], &rows[1], &mut x2);
        assert_eq!(x1, x2);

        let mut w1 = [0i8; 32 * 512];
        w1.iter_mut().for_each(|w| *w = rng.next_u64() as i8);
        let mut w2 = [0i8; 32 * 32];
        w2.iter_mut().for_each(|w| *w = rng.next_u64() as i8);
        let bias: [i32; 32] = std::array::from_fn(|_| (rng.next_u64() % 100_000) as i32 - 50_000);
        let (mut y1, mut y2) = ([0i32; 32], [0i32; 32]);
        scalar.affine_l1(&x1, &w1, L1Grouping::Single, &bias, &mut y1);
        avx2.affine_l1(&x1, &w1, L1Grouping::Single, &bias, &mut y2);
        assert_eq!(y1, y2);
        // Weights within the paired kernel's bound: it must agree too.
        let mut w1 = [0i8; 32 * 512];
        w1.iter_mut().for_each(|w| *w = ((rng.next_u64() % 129) as i32 - 64) as i8);
        assert_eq!(simd::l1_grouping(&w1), L1Grouping::Pairs);
        scalar.affine_l1(&x1, &w1, L1Grouping::Single, &bias, &mut y1);
        avx2.affine_l1(&x1, &w1, L1Grouping::Pairs, &bias, &mut y2);
        assert_eq!(y1, y2, "paired kernel");
        // Weights within the four-chunk kernel's bound: it must agree as well.
        let mut w1 = [0i8; 32 * 512];
        w1.iter_mut().for_each(|w| *w = ((rng.next_u64() % 65) as i32 - 32) as i8);
        assert_eq!(simd::l1_grouping(&w1), L1Grouping::Quads);
        scalar.affine_l1(&x1, &w1, L1Grouping::Single, &bias, &mut y1);
        avx2.affine_l1(&x1, &w1, L1Grouping::Quads, &bias, &mut y2);
        assert_eq!(y1, y2, "four-chunk kernel");
        let mut h = [0u8; 32];
        simd::clipped_relu(&y1, &mut h);
        let w2 = HiddenWeights::new(w2);
        scalar.affine_l2(&h, &w2, &bias, &mut y1);
        avx2.affine_l2(&h, &w2, &bias, &mut y2);
        assert_eq!(y1, y2);
    }
    // The extreme corner: every input 127 against every weight -128.
    let x = [127u8; 512];
    let w = [-128i8; 32 * 512];
    let (mut y1, mut y2) = ([0i32; 32], [0i32; 32]);
    assert_eq!(simd::l1_grouping(&w), L1Grouping::Single);
    scalar.affine_l1(&x, &w, L1Grouping::Single, &[0; 32], &mut y1);
    avx2.affine_l1(&x, &w, L1Grouping::Single, &[0; 32], &mut y2);
    assert_eq!(y1, [-127 * 128 * 512; 32]);
    assert_eq!(y1, y2);
    // The same corners for the second layer, whose kernel sums by quad of inputs: every
    // output its own weight (output o's row all -128 or 127), so a mixed-up order shows.
    let x = [127u8; 32];
    let rows: [i8; 32 * 32] = std::array::from_fn(|i| if (i / 32) % 2 == 0 { -128 } else { 127 });
    let w = HiddenWeights::new(rows);
    let bias: [i32; 32] = std::array::from_fn(|o| o as i32);
    scalar.affine_l2(&x, &w, &bias, &mut y1);
    avx2.affine_l2(&x, &w, &bias, &mut y2);
    let expected: [i32; 32] =
        std::array::from_fn(|o| o as i32 + 127 * 32 * if o % 2 == 0 { -128 } else { 127 });
    assert_eq!(y1, expected);
    assert_eq!(y1, y2);
}

/// The AVX-512 VNNI first layer against the scalar one: random inputs of the full u8
/// range with random weights of the full i8 range (no bound applies to it), and the
/// extreme corners.
#[test]
fn vnni_matches_scalar_on_random_inputs() {
    let Some(vnni) = Simd::vnni() else {
        assert!(
            std::env::var_os("NUE_REQUIRE_VNNI").is_none(),
            "NUE_REQUIRE_VNNI is set, but the AVX-512 VNNI kernel was not selected"
        );
        eprintln!("SKIPPED vnni_matches_scalar_on_random_inputs: no AVX-512 VNNI here");
        return;
    };
    let scalar = Simd::scalar();
    let mut rng = Rng::new(2);
    let (mut y1, mut y2) = ([0i32; 32], [0i32; 32]);
    for _ in 0..2000 {
        let mut x = [0u8; 512];
        x.iter_mut().for_each(|x| *x = rng.next_u64() as u8);
        let mut w = [0i8; 32 * 512];
        w.iter_mut().for_each(|w| *w = rng.next_u64() as i8);
        let bias: [i32; 32] = std::array::from_fn(|_| (rng.next_u64() % 100_000) as i32 - 50_000);
        scalar.affine_l1(&x, &w, L1Grouping::Single, &bias, &mut y1);
        vnni.affine_l1(&x, &w, L1Grouping::Single, &bias, &mut y2);
        assert_eq!(y1, y2);
    }
    for (x, w) in [(255u8, -128i8), (255, 127), (127, -128)] {
        let (x, w) = ([x; 512], [w; 32 * 512]);
        scalar.affine_l1(&x, &w, L1Grouping::Single, &[0; 32], &mut y1);
        vnni.affine_l1(&x, &w, L1Grouping::Pairs, &[0; 32], &mut y2);
        assert_eq!(y1, [i32::from(x[0]) * i32::from(w[0]) * 512; 32]);
        assert_eq!(y1, y2);
    }
}

/// The grouped first-layer kernels add four (two chunks) or eight (four chunks) products
/// in 16 bits. At the bound that `l1_fits` allows (weights of magnitude 258 in all in a
/// lane, every input 127) they are exact; one more and the 16-bit sum would overflow,
/// which the test refuses.
#[test]
fn grouped_kernels_bounds_are_exact() {
    let Some(avx2) = avx2() else {
        eprintln!("SKIPPED grouped_kernels_bounds_are_exact: this processor has no AVX2");
        return;
    };
    let x = [127u8; 512];
    // A lane's weights, two in each chunk: 65 + 65 + 64 + 64, and 33 · 2 + 32 · 6.
    let cases = [
        (L1Grouping::Pairs, 2, [65i8, 65, 64, 64, 0, 0, 0, 0]),
        (L1Grouping::Quads, 4, [33i8, 33, 32, 32, 32, 32, 32, 32]),
    ];
    for (grouping, chunks, lane) in cases {
        for sign in [1i8, -1] {
            let mut w = [0i8; 32 * 512];
            for group in w.chunks_exact_mut(32 * chunks) {
                for j in 0..16 {
                    for c in 0..chunks {
                        group[32 * c + 2 * j] = sign * lane[2 * c];
                        group[32 * c + 2 * j + 1] = sign * lane[2 * c + 1];
                    }
                }
            }
            assert!(simd::l1_fits(&w, chunks));
            let (mut y1, mut y2) = ([0i32; 32], [0i32; 32]);
            Simd::scalar().affine_l1(&x, &w, L1Grouping::Single, &[0; 32], &mut y1);
            avx2.affine_l1(&x, &w, grouping, &[0; 32], &mut y2);
            assert_eq!(y1, [i32::from(sign) * 127 * 258 * 256 / chunks as i32; 32]);
            assert_eq!(y1, y2, "{grouping:?}");
            w[1] = sign * (lane[1] + 1);
            assert!(!simd::l1_fits(&w, chunks), "a {grouping:?} lane sum of 259 passed");
        }
    }
}

#[test]
fn loader_rejects_malformed_files() {
    let Some(good) = reference_bytes() else { return };
    assert_eq!(good.len(), FIXED_BYTES + 177);
    assert!(Network::from_bytes(&good).is_ok());

    let truncated = Network::from_bytes(&good[..good.len() - 1]).unwrap_err();
    assert_eq!(truncated, NetError::Size { expected: 21_022_697, got: 21_022_696 });
    assert_eq!(truncated.to_string(), "expected 21022697 bytes, got 21022696");

    let mut padded = good.clone();
    padded.push(0);
    assert!(matches!(Network::from_bytes(&padded), Err(NetError::Size { got: 21_022_698, .. })));

    let short = Network::from_bytes(&good[..1200]).unwrap_err();
    assert_eq!(short.to_string(), "expected 21022697 bytes, got 1200");
    assert!(matches!(Network::from_bytes(&good[..5]), Err(NetError::NoHeader { len: 5 })));

    let mut version = good.clone();
    version[0] ^= 1;
    assert!(matches!(Network::from_bytes(&version), Err(NetError::Version { .. })));

    // Each of the three hashes: header, feature transformer, layers.
    for (offset, which) in
        [(4, "network"), (12 + 177, "feature transformer"), (21_004_993, "layers")]
    {
        let mut bad = good.clone();
        bad[offset] ^= 0x10;
        match Network::from_bytes(&bad) {
            Err(NetError::Hash { which: w, .. }) => assert_eq!(w, which),
            other => panic!("corrupt {which} hash accepted: {other:?}"),
        }
    }

    // A description length that promises more than the file holds.
    let mut long = good.clone();
    long[8..12].copy_from_slice(&500u32.to_le_bytes());
    assert!(matches!(Network::from_bytes(&long), Err(NetError::Size { .. })));
    long[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(Network::from_bytes(&long), Err(NetError::Size { .. })));
}

#[test]
fn writer_round_trips_byte_for_byte() {
    let Some(good) = reference_bytes() else { return };
    let net = Network::from_bytes(&good).unwrap();
    assert_eq!(net.to_bytes(), good);
    assert_eq!(net.ft_weights.len() * HALF * 2 + 512, 21_004_800);
}

/// The embedded default net, our own, judges the obvious correctly.
#[test]
fn default_net_sees_balance_and_a_queen() {
    let net = nue::nnue::default_network();
    let cp = |fen: &str| {
        let (board, turn) = board_and_turn(fen);
        nue::nnue::internal_to_cp(to_internal(net.evaluate(Simd::detect(), &board, turn)))
    };
    // Our nets see White's first move as worth about half a pawn (+46 to +82 cp so far:
    // they learn from fast games that start from random moves); within a pawn is level.
    let start = cp("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    assert!(start.abs() <= 100, "start position: {start} cp");
    let black = cp("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    assert!(black.abs() <= 80, "after 1.e4: {black} cp");
    // White is a queen up (Black's queen removed), from both sides to move.
    let white_to_move = cp("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    let black_to_move = cp("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
    assert!(white_to_move >= 500, "queen up, to move: {white_to_move} cp");
    assert!(black_to_move <= -500, "queen down, to move: {black_to_move} cp");
    // And the same for Black.
    let black_up = cp("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR b KQkq - 0 1");
    assert!(black_up >= 500, "Black a queen up, to move: {black_up} cp");
}
