//! One game of `nue datagen`: its opening, the moves its player chooses, the rules and
//! adjudication that end it, and the positions taken from inside its searches' trees.

use std::collections::{HashMap, HashSet};

use anyhow::{ensure, Result};
use shakmaty::{fen::Fen, Chess, Color, EnPassantMode, Move, Position};

use super::player::{Choice, Player, Score};
use crate::{
    board::key_of,
    chain::{Game, Ply},
    rng::Rng,
};

/// Openings tried for one game before giving up on the settings.
const MAX_OPENING_TRIES: usize = 1000;
/// Sets the generator of a game's MultiPV picks apart from its opening's ("SPREAD").
const SPREAD_SALT: u64 = 0x5350_5245_4144;

/// How a game's first moves spread, and the thresholds that end a game early.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// The game's first plies played at random among the near-best moves of a MultiPV
    /// search (`--multipv-plies`)...
    pub multipv_plies: usize,
    /// ...of this many lines...
    pub multipv_lines: usize,
    /// ...those within this many centipawns of the best.
    pub multipv_margin: i32,
    /// First searched score beyond which an opening is discarded, centipawns.
    pub opening_bound: i32,
    /// Win adjudication: |score| at least this...
    pub win_bound: i32,
    /// ...for this many plies in a row, all for the same side.
    pub win_plies: usize,
    /// Draw adjudication from this game ply on...
    pub draw_after: usize,
    /// ...when |score| is at most this...
    pub draw_bound: i32,
    /// ...for this many plies in a row.
    pub draw_plies: usize,
    /// Recorded plies after which a game is a draw.
    pub max_plies: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            multipv_plies: 0,
            multipv_lines: 4,
            multipv_margin: 50,
            opening_bound: 400,
            win_bound: 1000,
            win_plies: 6,
            draw_after: 80,
            draw_bound: 10,
            draw_plies: 10,
            max_plies: 600,
        }
    }
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ending {
    /// Checkmate on the board.
    Checkmate,
    /// Stalemate.
    Stalemate,
    /// The same position a third time.
    Repetition,
    /// A hundred plies without a capture or a pawn move.
    FiftyMoves,
    /// Neither side can mate.
    InsufficientMaterial,
    /// The search announced a forced mate.
    MateScore,
    /// The score stayed decisive.
    WinAdjudicated,
    /// The score stayed near zero late in the game.
    DrawAdjudicated,
    /// The game reached the ply limit.
    MaxPlies,
}

/// Where a game starts.
pub enum Openings {
    /// The start position.
    Start,
    /// The positions of a book.
    Book(Vec<Chess>),
}

impl Openings {
    /// A start position for a game: a book position (or the initial one) and then
    /// `random_plies` random legal moves; `None` when the moves run into the end of a game.
    pub fn draw(&self, rng: &mut Rng, random_plies: usize) -> Option<Chess> {
        let mut pos = match self {
            Openings::Start => Chess::default(),
            Openings::Book(positions) => positions[rng.below(positions.len())].clone(),
        };
        for _ in 0..random_plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                return None;
            }
            pos.play_unchecked(moves[rng.below(moves.len())]);
        }
        (!pos.legal_moves().is_empty()).then_some(pos)
    }
}

/// The opening of game `index` of `seed`, the search that kept it, and how many were
/// thrown away before it.
pub struct Opening {
    /// The position the game starts from.
    pub start: Chess,
    /// The player's first search there (its move is the game's first).
    pub first: Choice,
    /// Openings discarded before this one: their first search scored beyond the bound,
    /// or their random plies ran into the end of a game.
    pub discarded: usize,
}

/// The random generator of game `index` of `seed`: its opening, then its tree samples.
pub fn game_rng(seed: u64, index: u64) -> Rng {
    Rng::new(Rng::new(seed).next_u64() ^ index)
}

/// Chooses an opening with `rng` (a game's, from [`game_rng`]): a book position (or the
/// start) and `random_plies` random plies (one more in every other try, so that both
/// sides get to move first), kept once the player's first search there scores within
/// `bound` centipawns. The same generator state always gives the same opening. `None`
/// when `abandon` says so before a search.
pub fn choose_opening(
    player: &mut dyn Player,
    openings: &Openings,
    random_plies: usize,
    bound: i32,
    rng: &mut Rng,
    abandon: &dyn Fn() -> bool,
) -> Result<Option<Opening>> {
    let mut discarded = 0;
    loop {
        ensure!(
            discarded < MAX_OPENING_TRIES,
            "{MAX_OPENING_TRIES} openings in a row were discarded: is the opening bound \
             (--opening-bound, or genfens's bound=) too small?"
        );
        let plies = if random_plies > 0 { random_plies + rng.below(2) } else { 0 };
        let Some(start) = openings.draw(rng, plies) else {
            discarded += 1;
            continue;
        };
        if abandon() {
            return Ok(None);
        }
        player.new_game()?;
        let first = player.choose(&start, &[], &start)?;
        match first.score {
            Score::Cp(cp) if cp.abs() <= bound => {
                return Ok(Some(Opening { start, first, discarded }))
            }
            _ => discarded += 1,
        }
    }
}

/// A finished game and how it ended.
pub struct Played {
    /// The game.
    pub game: Game,
    /// Why it ended.
    pub ending: Ending,
    /// Openings thrown away before this one.
    pub discarded: usize,
    /// Positions from inside the game's searches (`--tree-out`), in the order found.
    pub tree: Vec<TreePosition>,
    /// Tree candidates searched to label them, the kept ones included.
    pub tree_searches: usize,
}

/// A position from inside a search's tree, labelled by a search of its own.
#[derive(Clone, Debug)]
pub struct TreePosition {
    /// The position.
    pub pos: Chess,
    /// Its searched score, centipawns from White's point of view.
    pub score: i32,
}

impl TreePosition {
    /// The position as a data line, `<fen> | <score> | <result>`, with `result` the game's
    /// from White's point of view.
    pub fn to_line(&self, result: f32) -> String {
        let fen = Fen::from_position(&self.pos, EnPassantMode::Legal);
        format!("{fen} | {} | {result:.1}", self.score)
    }
}

/// A position from inside the tree of the search that chose `pv[0]` in `pos` (reached
/// by `moves` from the game's start): two to `pv.len()` plies down `pv`, at random, with
/// the moves that reach it — unless it is in check or the game's end there, which the
/// trainer would skip. One ply down would be the game's next position.
fn tree_candidate(
    moves: &[Move],
    pos: &Chess,
    pv: &[Move],
    rng: &mut Rng,
) -> Option<(Vec<Move>, Chess)> {
    if pv.len() < 2 {
        return None;
    }
    let plies = 2 + rng.below(pv.len() - 1);
    let mut line = moves.to_vec();
    let mut p = pos.clone();
    for &m in &pv[..plies] {
        if !p.is_legal(m) {
            return None;
        }
        p.play_unchecked(m);
        line.push(m);
    }
    let over = p.is_insufficient_material() || p.halfmoves() >= 100;
    (!p.is_check() && !over && !p.legal_moves().is_empty()).then_some((line, p))
}

/// Scores a tree candidate `pos`, reached from `start` by `line` (`Player::score`: the
/// labeller's search alone when there is one), and keeps it when it is quiet: the best move
/// of that search neither a capture nor a promotion, and no mate score.
fn label(
    player: &mut dyn Player,
    start: &Chess,
    line: &[Move],
    pos: Chess,
) -> Result<Option<TreePosition>> {
    let choice = player.score(start, line, &pos)?;
    Ok(match choice.score {
        Score::Cp(cp) if !choice.mv.is_capture() && !choice.mv.is_promotion() => {
            let score = if pos.turn() == Color::White { cp } else { -cp };
            Some(TreePosition { pos, score })
        }
        _ => None,
    })
}

/// One of `lines` (best first) at random among those within `margin` centipawns of the
/// best: the best alone when its score is a mate; a line scored as a mate is never
/// near.
fn near_best(lines: &[Choice], margin: i32, rng: &mut Rng) -> usize {
    let Some(Score::Cp(best)) = lines.first().map(|c| c.score) else {
        return 0;
    };
    let near: Vec<usize> = (0..lines.len())
        .filter(|&i| matches!(lines[i].score, Score::Cp(cp) if cp >= best - margin))
        .collect();
    near.get(rng.below(near.len().max(1))).copied().unwrap_or(0)
}

/// The game ply of a position, counted from the initial position.
fn game_ply(pos: &Chess) -> usize {
    (pos.fullmoves().get() as usize - 1) * 2 + usize::from(pos.turn() == Color::Black)
}

/// Plays game number `index`. Returns `None` when `abandon` says to stop first. With a
/// `tree_rate` above 0, that share of the searched moves also gives a position from
/// inside its search's tree (`tree_candidate`). They are searched (`label`) once
/// the game is over, those it went through itself left out (the line was predicted
/// right: the chain has them already), so no search is spent on them and the game is
/// the one played without them (the labelling searches come after it, with the
/// player's hash table of the game).
#[allow(clippy::too_many_arguments)]
pub fn play_game(
    player: &mut dyn Player,
    openings: &Openings,
    random_plies: usize,
    rules: &Rules,
    seed: u64,
    index: u64,
    tree_rate: f64,
    abandon: &dyn Fn() -> bool,
) -> Result<Option<Played>> {
    // The opening: its first search both filters it and gives the game's first move.
    let mut rng = game_rng(seed, index);
    let bound = rules.opening_bound;
    let Some(Opening { start, first, discarded }) =
        choose_opening(player, openings, random_plies, bound, &mut rng, abandon)?
    else {
        return Ok(None);
    };

    // The spread's picks draw from a generator of their own, so that they do not depend on
    // the tree samples, nor these on them.
    let mut spread_rng = game_rng(seed ^ SPREAD_SALT, index);
    let mut pos = start.clone();
    let mut moves: Vec<Move> = Vec::new();
    let mut plies: Vec<Ply> = Vec::new();
    let mut candidates = Vec::new();
    // Every position of the game: a tree candidate it reached itself is not labelled.
    let mut visited: HashSet<u64> = HashSet::from([key_of(&pos)]);
    // Keys since the last capture or pawn move, for threefold repetition.
    let mut keys: HashMap<u64, u32> = HashMap::new();
    keys.insert(key_of(&pos), 1);
    let mut next = Some(first);
    let (result, ending) = loop {
        // Endings by rule, in the position now on the board.
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break if pos.is_check() {
                (if pos.turn() == Color::White { 0.0 } else { 1.0 }, Ending::Checkmate)
            } else {
                (0.5, Ending::Stalemate)
            };
        }
        if pos.is_insufficient_material() {
            break (0.5, Ending::InsufficientMaterial);
        }
        if pos.halfmoves() >= 100 {
            break (0.5, Ending::FiftyMoves);
        }
        if keys[&key_of(&pos)] >= 3 {
            break (0.5, Ending::Repetition);
        }
        if plies.len() >= rules.max_plies {
            break (0.5, Ending::MaxPlies);
        }

        let choice = match next.take() {
            Some(c) => c,
            None => {
                if abandon() {
                    return Ok(None);
                }
                player.choose(&start, &moves, &pos)?
            }
        };
        // A spread ply: the move from a MultiPV search, the score (the label) from the
        // plain one.
        let choice = if plies.len() < rules.multipv_plies {
            if abandon() {
                return Ok(None);
            }
            let mut lines = player.lines(&start, &moves, &pos, rules.multipv_lines)?;
            ensure!(!lines.is_empty(), "the player's search gave no line");
            let i = near_best(&lines, rules.multipv_margin, &mut spread_rng);
            Choice { score: choice.score, ..lines.swap_remove(i) }
        } else {
            choice
        };
        let white = |v: i32| if pos.turn() == Color::White { v } else { -v };
        let score = match choice.score {
            Score::Cp(cp) => Some(white(cp)),
            Score::Mate(_) => None,
        };
        plies.push(Ply { mv: choice.mv, score });

        // Endings by the score just found.
        if let Score::Mate(m) = choice.score {
            break (if white(m) > 0 { 1.0 } else { 0.0 }, Ending::MateScore);
        }
        let recent = |n: usize| plies[plies.len().saturating_sub(n)..].iter().map(|p| p.score);
        if plies.len() >= rules.win_plies {
            let all = |f: &dyn Fn(i32) -> bool| recent(rules.win_plies).all(|s| s.is_some_and(f));
            if all(&|s| s >= rules.win_bound) {
                break (1.0, Ending::WinAdjudicated);
            }
            if all(&|s| s <= -rules.win_bound) {
                break (0.0, Ending::WinAdjudicated);
            }
        }
        if game_ply(&pos) >= rules.draw_after
            && plies.len() >= rules.draw_plies
            && recent(rules.draw_plies).all(|s| s.is_some_and(|s| s.abs() <= rules.draw_bound))
        {
            break (0.5, Ending::DrawAdjudicated);
        }

        ensure!(legal.contains(&choice.mv), "the player chose an illegal move");
        // The opening's randomness is drawn: what the generator gives now changes no game.
        if tree_rate > 0.0 && f64::from(rng.unit_f32()) < tree_rate {
            candidates.extend(tree_candidate(&moves, &pos, &choice.pv, &mut rng));
        }
        if choice.mv.is_zeroing() {
            keys.clear();
        }
        pos.play_unchecked(choice.mv);
        moves.push(choice.mv);
        *keys.entry(key_of(&pos)).or_insert(0) += 1;
        visited.insert(key_of(&pos));
    };
    let mut tree = Vec::new();
    let mut tree_searches = 0;
    for (line, p) in candidates {
        if visited.contains(&key_of(&p)) {
            continue;
        }
        if abandon() {
            return Ok(None);
        }
        tree_searches += 1;
        tree.extend(label(player, &start, &line, p)?);
    }
    Ok(Some(Played { game: Game { start, result, plies }, ending, discarded, tree, tree_searches }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::player::{Choice, Labelled};

    /// A player that plays the first legal move, scoring each position with `score`
    /// (White's view, by the number of moves played so far), and expects the last legal
    /// move in reply, then the first again, and so on, for a principal variation of up to
    /// four moves.
    /// With `follow`, the principal variation is the first legal move each time: the line
    /// the game then plays.
    struct Scripted {
        score: fn(usize) -> Score,
        follow: bool,
    }

    impl Player for Scripted {
        fn new_game(&mut self) -> Result<()> {
            Ok(())
        }
        fn choose(&mut self, _: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
            let score = match (self.score)(moves.len()) {
                Score::Cp(v) if pos.turn() == Color::Black => Score::Cp(-v),
                Score::Mate(v) if pos.turn() == Color::Black => Score::Mate(-v),
                s => s,
            };
            let mut line = pos.clone();
            let mut pv = Vec::new();
            for i in 0..4 {
                let legal = line.legal_moves();
                let first = i % 2 == 0 || self.follow;
                let Some(&m) = (if first { legal.first() } else { legal.last() }) else {
                    break;
                };
                line.play_unchecked(m);
                pv.push(m);
            }
            Ok(Choice { mv: pv[0], score, pv })
        }
    }

    fn play_sampling(player: &mut Scripted, rules: &Rules, tree_rate: f64) -> Result<Played> {
        let openings = Openings::Start;
        let played = play_game(player, &openings, 8, rules, 7, 0, tree_rate, &|| false)?;
        Ok(played.expect("not abandoned"))
    }

    fn play(score: fn(usize) -> Score, rules: &Rules) -> Result<Played> {
        play_sampling(&mut Scripted { score, follow: false }, rules, 0.0)
    }

    #[test]
    fn tree_positions_the_game_went_through_are_dropped() {
        // The game plays each predicted line: every tree position is a later game position,
        // but for those down lines that run past the game's end.
        let rules = Rules { max_plies: 30, ..Rules::default() };
        let score = |n| Score::Cp(n as i32);
        let p = play_sampling(&mut Scripted { score, follow: true }, &rules, 1.0).unwrap();
        assert!(p.tree.len() <= 3, "{} tree positions", p.tree.len());
        assert!(p.tree.iter().all(|t| t.score as usize > p.game.plies.len()));
    }

    #[test]
    fn tree_positions_come_from_down_the_line_and_are_quiet() {
        // The score is the number of moves from the start, so a tree position's score
        // says how far down the line it lies.
        let rules = Rules { max_plies: 30, ..Rules::default() };
        let score = |n| Score::Cp(n as i32);
        let p = play_sampling(&mut Scripted { score, follow: false }, &rules, 1.0).unwrap();
        let q = play_sampling(&mut Scripted { score, follow: false }, &rules, 0.0).unwrap();
        assert!(q.tree.is_empty());
        assert!(p.tree.len() >= 5, "{} tree positions", p.tree.len());
        assert!(p.tree.len() <= p.game.plies.len());
        // Replay the game to list its positions, with the moves from the start.
        let mut game = vec![(p.game.start.clone(), 0)];
        for (i, ply) in p.game.plies.iter().enumerate() {
            let mut next = game[i].0.clone();
            next.play_unchecked(ply.mv);
            game.push((next, i + 1));
        }
        for t in &p.tree {
            assert!(!t.pos.is_check());
            // Two to four plies down the line searched after some game position...
            let moves = t.score as usize;
            let reachable = (2..=4).filter(|&k| k <= moves && moves - k < game.len()).any(|k| {
                let mut pos = game[moves - k].0.clone();
                for j in 0..k {
                    let legal = pos.legal_moves();
                    pos.play_unchecked(if j % 2 == 0 { legal[0] } else { legal[legal.len() - 1] });
                }
                pos == t.pos
            });
            assert!(reachable, "{} is not down a searched line", t.to_line(p.game.result));
            // ...and off the game itself.
            assert!(game.iter().all(|(g, _)| g != &t.pos));
            // The label's best move (the first legal one) is quiet.
            let first = t.pos.legal_moves()[0];
            assert!(!first.is_capture() && !first.is_promotion());
        }
        let line = p.tree[0].to_line(0.5);
        assert!(line.ends_with(&format!(" | {} | 0.5", p.tree[0].score)), "{line}");
        assert!(crate::train::data::parse_line(&line).is_ok(), "{line}");
    }

    /// Offers the first three legal moves as MultiPV lines scored 0, −40 and −60 cp (the
    /// side to move's view), and plays the first legal move, scored 0, when asked for one.
    struct Lines;

    impl Player for Lines {
        fn new_game(&mut self) -> Result<()> {
            Ok(())
        }
        fn choose(&mut self, _: &Chess, _: &[Move], pos: &Chess) -> Result<Choice> {
            let mv = pos.legal_moves()[0];
            Ok(Choice { mv, score: Score::Cp(0), pv: vec![mv] })
        }
        fn lines(&mut self, _: &Chess, _: &[Move], pos: &Chess, n: usize) -> Result<Vec<Choice>> {
            let offered = pos.legal_moves()[..n.min(3)]
                .iter()
                .zip([0, -40, -60])
                .map(|(&mv, cp)| Choice { mv, score: Score::Cp(cp), pv: vec![mv] })
                .collect();
            Ok(offered)
        }
    }

    #[test]
    fn spread_plies_play_near_best_moves_and_record_the_plain_searchs_score() {
        let rules =
            Rules { multipv_plies: 6, multipv_margin: 50, max_plies: 12, ..Rules::default() };
        let mut seen = [0usize; 3];
        for index in 0..40 {
            let openings = Openings::Start;
            let p = play_game(&mut Lines, &openings, 8, &rules, 7, index, 0.0, &|| false)
                .unwrap()
                .expect("not abandoned");
            for (i, (pos, ply)) in p.game.positions().enumerate() {
                let rank = pos.legal_moves().iter().position(|&m| m == ply.mv).unwrap();
                if i < 6 {
                    assert!(
                        rank < 2,
                        "ply {i} played line {} of 3 (−60 is beyond the margin)",
                        rank + 1
                    );
                    seen[rank] += 1;
                } else {
                    assert_eq!(rank, 0, "ply {i} is past the spread");
                }
                assert_eq!(ply.score, Some(0), "the plain search's score, not the line's");
            }
        }
        assert!(seen[0] > 40 && seen[1] > 40, "both near-best lines are played: {seen:?}");
        // The best alone when the margin admits nothing else.
        let narrow = Rules { multipv_margin: 39, ..rules };
        let p = play_game(&mut Lines, &Openings::Start, 8, &narrow, 7, 0, 0.0, &|| false)
            .unwrap()
            .expect("not abandoned");
        assert!(p.game.positions().all(|(pos, ply)| pos.legal_moves()[0] == ply.mv));
    }

    /// Scores as the `Scripted` player it wraps, but chooses the last legal move.
    struct Contrary(Scripted);

    impl Player for Contrary {
        fn new_game(&mut self) -> Result<()> {
            Ok(())
        }
        fn choose(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
            let choice = self.0.choose(start, moves, pos)?;
            let last = *pos.legal_moves().last().expect("a legal move");
            Ok(Choice { mv: last, pv: vec![last], ..choice })
        }
    }

    #[test]
    fn a_labelled_game_is_the_movers_with_the_labellers_scores() {
        let rules = Rules { max_plies: 20, ..Rules::default() };
        let alone = play(|n| Score::Cp(n as i32), &rules).unwrap();
        let mover = Scripted { score: |n| Score::Cp(n as i32), follow: false };
        let labeller = Contrary(Scripted { score: |n| Score::Cp(3 * n as i32), follow: false });
        let mut both = Labelled::new(Box::new(mover), Box::new(labeller));
        let openings = Openings::Start;
        let p = play_game(&mut both, &openings, 8, &rules, 7, 0, 0.0, &|| false).unwrap().unwrap();
        assert_eq!(p.game.start, alone.game.start);
        let moves = |p: &Played| p.game.plies.iter().map(|ply| ply.mv).collect::<Vec<_>>();
        assert_eq!(moves(&p), moves(&alone));
        assert_eq!(p.game.plies.len(), 20);
        for (i, ply) in p.game.plies.iter().enumerate() {
            assert_eq!(ply.score, Some(3 * i as i32), "ply {i}");
        }
    }

    /// Counts the searches of the player it wraps.
    struct Counted(Box<dyn Player>, std::rc::Rc<std::cell::Cell<usize>>);

    impl Player for Counted {
        fn new_game(&mut self) -> Result<()> {
            self.0.new_game()
        }
        fn choose(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
            self.1.set(self.1.get() + 1);
            self.0.choose(start, moves, pos)
        }
    }

    #[test]
    fn a_labelled_games_tree_positions_are_searched_by_the_labeller_alone() {
        use std::{cell::Cell, rc::Rc};
        let rules = Rules { max_plies: 20, ..Rules::default() };
        let (moved, labelled) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
        let mover = Scripted { score: |n| Score::Cp(n as i32), follow: false };
        let labeller = Scripted { score: |n| Score::Cp(3 * n as i32 + 1), follow: false };
        let mut both = Labelled::new(
            Box::new(Counted(Box::new(mover), moved.clone())),
            Box::new(Counted(Box::new(labeller), labelled.clone())),
        );
        let p = play_game(&mut both, &Openings::Start, 8, &rules, 7, 0, 1.0, &|| false);
        let p = p.unwrap().unwrap();
        assert!(p.tree_searches >= 5, "{} tree searches", p.tree_searches);
        assert!(!p.tree.is_empty());
        // The mover searched the game's positions only; the labeller those and the tree's.
        assert_eq!(labelled.get(), moved.get() + p.tree_searches);
        for t in &p.tree {
            assert_eq!(t.score.rem_euclid(3), 1, "a tree score {} not the labeller's", t.score);
        }
    }

    #[test]
    fn a_decisive_score_held_for_the_win_plies_wins() {
        let rules = Rules::default();
        let p = play(|n| Score::Cp(if n == 0 { 0 } else { -1200 }), &rules).unwrap();
        assert_eq!((p.ending, p.game.result), (Ending::WinAdjudicated, 0.0));
        assert_eq!(p.game.plies.len(), 1 + rules.win_plies);
    }

    #[test]
    fn a_level_score_held_late_in_the_game_draws() {
        let rules = Rules { draw_after: 0, draw_plies: 4, ..Rules::default() };
        let p = play(|_| Score::Cp(5), &rules).unwrap();
        assert_eq!((p.ending, p.game.result), (Ending::DrawAdjudicated, 0.5));
        assert_eq!(p.game.plies.len(), 4);
        // Not before `draw_after`: the same game goes on past ply 4.
        let p = play(|_| Score::Cp(5), &Rules { draw_plies: 4, ..Rules::default() }).unwrap();
        assert!(p.game.plies.len() > 4);
    }

    #[test]
    fn a_mate_score_ends_the_game_for_the_side_it_favours() {
        let p = play(|n| if n < 3 { Score::Cp(0) } else { Score::Mate(1) }, &Rules::default());
        let p = p.unwrap();
        assert_eq!((p.ending, p.game.result), (Ending::MateScore, 1.0));
        assert_eq!(p.game.plies.len(), 4);
        assert_eq!(p.game.plies[3].score, None);
    }

    #[test]
    fn openings_beyond_the_bound_are_discarded() {
        let err = play(|_| Score::Cp(500), &Rules::default()).err().unwrap();
        assert!(err.to_string().contains("--opening-bound"), "{err}");
    }
}
