//! The players of `nue datagen`: Nue's own search, or any UCI engine in a child process,
//! each choosing a move by a search and giving its score and principal variation; or a
//! pair of them, one choosing the moves and the other scoring the positions.

use std::{
    io::{BufRead, BufReader, BufWriter, Write},
    os::unix::process::CommandExt,
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    time::Duration,
};

use anyhow::{ensure, Context, Result};
use shakmaty::{fen::Fen, CastlingMode, Chess, EnPassantMode, Move, Position};

use crate::{
    api::{Control, Limits, Report},
    engine::{parse_move, Engine},
    nnue::internal_to_cp,
    types::{is_mate, Bound},
};

/// Default soft node limit per move.
pub const DEFAULT_NODES: u64 = 5000;
/// Hard node limit as a multiple of the soft one: an iteration that would run far past
/// the soft limit is cut, and its move not used.
const HARD_NODES_FACTOR: u64 = 8;
/// A search's score, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// A forced mate: positive when the side to move mates.
    Mate(i32),
}

/// A move chosen by a search, with its score.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The move to play.
    pub mv: Move,
    /// The score of the position it is played from.
    pub score: Score,
    /// The search's principal variation: `mv` and the moves expected after it (only `mv`
    /// when the search gave no longer line).
    pub pv: Vec<Move>,
}

/// Something that chooses moves: Nue's search or a UCI engine.
pub trait Player {
    /// Forgets the last game.
    fn new_game(&mut self) -> Result<()>;
    /// Chooses a move in `pos`, reached from `start` by `moves`.
    fn choose(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice>;
    /// Scores `pos` where no move will be played (a position from inside a search's tree):
    /// the score, and the best move that decides whether the position is quiet. A player
    /// that only labels need not search as if it were to move.
    fn score(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
        self.choose(start, moves, pos)
    }
    /// Searches `pos` for its best `lines` moves (MultiPV): a [`Choice`] for each line,
    /// best first, each with its own score; at least the best. A player without MultiPV
    /// gives its best move alone. The scores of a MultiPV search are no position's label:
    /// Stockfish 15.1 at depth 4, in a game, has scored a position 354 cp in MultiPV that
    /// a fresh search scores −3.
    fn lines(
        &mut self,
        start: &Chess,
        moves: &[Move],
        pos: &Chess,
        lines: usize,
    ) -> Result<Vec<Choice>> {
        let _ = lines;
        Ok(vec![self.choose(start, moves, pos)?])
    }
}

/// Nue's own search.
pub struct NuePlayer {
    engine: Engine,
    limits: Limits,
}

impl NuePlayer {
    /// A player searching to `depth`, or else to a soft limit of `nodes`.
    pub fn new(hash_mb: usize, nodes: u64, depth: Option<u32>) -> Result<NuePlayer> {
        let limits = match depth {
            Some(d) => Limits { depth: Some(d), ..Limits::default() },
            None => Limits {
                soft_nodes: Some(nodes),
                nodes: Some(nodes.saturating_mul(HARD_NODES_FACTOR)),
                ..Limits::default()
            },
        };
        Ok(NuePlayer { engine: Engine::new(hash_mb)?, limits })
    }
}

impl Player for NuePlayer {
    fn new_game(&mut self) -> Result<()> {
        self.engine.new_game();
        Ok(())
    }

    fn choose(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
        Ok(self.lines(start, moves, pos, 1)?.swap_remove(0))
    }

    /// With `MultiPV` at `lines` (set back to 1 after): for each index, its last exact
    /// line, best first (see [`lead_with`]).
    fn lines(
        &mut self,
        start: &Chess,
        moves: &[Move],
        _pos: &Chess,
        lines: usize,
    ) -> Result<Vec<Choice>> {
        let lines = lines.max(1);
        self.engine.set_position(start.clone(), moves);
        self.engine.settings.multipv = lines;
        // An iteration cut by the node limit leaves the lines it did not reach from the
        // one before.
        let mut found: Vec<Option<Choice>> = vec![None; lines];
        let mut report = |r: &Report| {
            if r.bound == Bound::Exact && !r.pv.is_empty() {
                if let Some(slot) = found.get_mut(r.multipv - 1) {
                    let (mv, pv) = (r.pv[0], r.pv.clone());
                    *slot = Some(Choice { mv, score: nue_score(r.score), pv });
                }
            }
        };
        let outcome = self.engine.go(&self.limits, &Control::default(), &mut report);
        self.engine.settings.multipv = 1;
        let best = outcome.best.context("the search found no move")?;
        let mut found: Vec<Choice> = found.into_iter().flatten().collect();
        lead_with(&mut found, best, nue_score(outcome.score));
        Ok(found)
    }
}

/// A score of Nue's search (internal units) as the players give it.
fn nue_score(internal: i32) -> Score {
    if is_mate(internal) {
        Score::Mate(internal.signum())
    } else {
        Score::Cp(internal_to_cp(internal))
    }
}

/// Puts the search's own move `best` first among `lines`, with the search's `score`: the
/// last lines of an iteration cut short, or an engine's last `info`, may have changed
/// their mind since. A move no line has gets a line of its own.
fn lead_with(lines: &mut Vec<Choice>, best: Move, score: Score) {
    match lines.iter().position(|c| c.mv == best) {
        Some(i) => lines[..=i].rotate_right(1),
        None => lines.insert(0, Choice { mv: best, score, pv: vec![best] }),
    }
    lines[0].score = score;
}

/// Two players as one: `mover` chooses every move (and its principal variation), and
/// `labeller` searches the same position for the score that is recorded and adjudicated.
/// The games are the mover's, the labels the labeller's: Nue's search can play, so that
/// the positions are those its own games reach, and a stronger engine can score them.
pub struct Labelled {
    mover: Box<dyn Player>,
    labeller: Box<dyn Player>,
}

impl Labelled {
    pub fn new(mover: Box<dyn Player>, labeller: Box<dyn Player>) -> Labelled {
        Labelled { mover, labeller }
    }
}

impl Player for Labelled {
    fn new_game(&mut self) -> Result<()> {
        self.mover.new_game()?;
        self.labeller.new_game()
    }

    fn choose(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
        let played = self.mover.choose(start, moves, pos)?;
        let label = self.labeller.choose(start, moves, pos)?;
        Ok(Choice { score: label.score, ..played })
    }

    /// The labeller's search alone: its score, and its best move for the quiet test.
    fn score(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
        self.labeller.choose(start, moves, pos)
    }

    /// The mover's lines.
    fn lines(
        &mut self,
        start: &Chess,
        moves: &[Move],
        pos: &Chess,
        lines: usize,
    ) -> Result<Vec<Choice>> {
        self.mover.lines(start, moves, pos, lines)
    }
}

/// A UCI engine in a child process.
pub struct UciPlayer {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    go: String,
    name: String,
}

impl UciPlayer {
    /// Starts `path`, sets `options` (`NAME=VALUE`) and waits until it is ready.
    pub fn start(path: &std::path::Path, options: &[String], go: String) -> Result<UciPlayer> {
        let mut child = Command::new(path)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {}", path.display()))?;
        let input = BufWriter::new(child.stdin.take().expect("piped stdin"));
        let output = BufReader::new(child.stdout.take().expect("piped stdout"));
        let name = path.display().to_string();
        let mut player = UciPlayer { child, input, output, go, name };
        player.send("uci")?;
        player.wait_for("uciok")?;
        for option in
            ["Threads=1", "Hash=16"].iter().copied().chain(options.iter().map(|s| s.as_str()))
        {
            let (name, value) = option
                .split_once('=')
                .with_context(|| format!("engine option '{option}' is not NAME=VALUE"))?;
            player.send(&format!("setoption name {} value {}", name.trim(), value.trim()))?;
        }
        player.send("isready")?;
        player.wait_for("readyok")?;
        Ok(player)
    }

    fn send(&mut self, line: &str) -> Result<()> {
        writeln!(self.input, "{line}")
            .and_then(|()| self.input.flush())
            .with_context(|| format!("{} stopped reading its input", self.name))
    }

    /// Reads lines until one starts with `word`, and returns it.
    fn wait_for(&mut self, word: &str) -> Result<String> {
        let mut line = String::new();
        loop {
            self.read_reply(&mut line, || format!("while Nue waited for '{word}'"))?;
            if line.split_ascii_whitespace().next() == Some(word) {
                return Ok(line);
            }
        }
    }

    /// Reads the engine's next line into `line`; an engine that has exited is an error,
    /// `when` (for example "during a search") saying when.
    fn read_reply(&mut self, line: &mut String, when: impl FnOnce() -> String) -> Result<()> {
        line.clear();
        let n =
            self.output.read_line(line).with_context(|| format!("reading from {}", self.name))?;
        ensure!(n > 0, "{} exited {}", self.name, when());
        Ok(())
    }
}

impl Drop for UciPlayer {
    /// Asks the engine to quit, and kills it when it has not within a second.
    fn drop(&mut self) {
        let _ = self.send("quit");
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Player for UciPlayer {
    fn new_game(&mut self) -> Result<()> {
        self.send("ucinewgame")?;
        self.send("isready")?;
        self.wait_for("readyok").map(|_| ())
    }

    fn choose(&mut self, start: &Chess, moves: &[Move], pos: &Chess) -> Result<Choice> {
        Ok(self.lines(start, moves, pos, 1)?.swap_remove(0))
    }

    /// Sends the game and `go` with `MultiPV` at `lines` (set back to 1 after), and reads
    /// the search's lines: for each index, the last exact score and its principal
    /// variation, best first, the `bestmove` leading with the first index's score (see
    /// [`lead_with`]).
    fn lines(
        &mut self,
        start: &Chess,
        moves: &[Move],
        pos: &Chess,
        lines: usize,
    ) -> Result<Vec<Choice>> {
        let lines = lines.max(1);
        let (base, recent) = since_last_irreversible(start, moves, pos);
        let mut command =
            format!("position fen {}", Fen::from_position(&base, EnPassantMode::Legal));
        if !recent.is_empty() {
            command.push_str(" moves");
            for m in recent {
                command.push(' ');
                command.push_str(&m.to_uci(CastlingMode::Standard).to_string());
            }
        }
        if lines > 1 {
            self.send(&format!("setoption name MultiPV value {lines}"))?;
        }
        self.send(&command)?;
        let go = self.go.clone();
        self.send(&go)?;
        let mut found: Vec<Option<(Score, String)>> = vec![None; lines];
        let mut line = String::new();
        let mv = loop {
            self.read_reply(&mut line, || "during a search".to_string())?;
            let mut words = line.split_ascii_whitespace();
            match words.next() {
                Some("info") => {
                    if let Some((index, s)) = parse_info_score(&line) {
                        if let Some(slot) = found.get_mut(index - 1) {
                            *slot = Some((s, info_pv(&line).to_string()));
                        }
                    }
                }
                Some("bestmove") => {
                    let text = words.next().unwrap_or("(none)");
                    break parse_move(pos, text).with_context(|| {
                        format!(
                            "{} answered the illegal move '{text}' in {}",
                            self.name,
                            Fen::from_position(pos, EnPassantMode::Legal)
                        )
                    })?;
                }
                _ => {}
            }
        };
        if lines > 1 {
            self.send("setoption name MultiPV value 1")?;
        }
        let first = found.first().and_then(|f| f.as_ref()).map(|(score, _)| *score);
        let score = first.with_context(|| format!("{} gave no score", self.name))?;
        let mut choices: Vec<Choice> = found
            .into_iter()
            .flatten()
            .filter_map(|(score, text)| {
                let pv = parse_pv(pos, &text);
                Some(Choice { mv: *pv.first()?, score, pv })
            })
            .collect();
        lead_with(&mut choices, mv, score);
        Ok(choices)
    }
}

/// The game as the engine needs to see it: the position after the last capture or pawn
/// move, and the moves since. No position before that move can come again, and the FEN
/// carries the fifty-move count, so the engine searches exactly as it would from the whole
/// game; sending the whole game instead costs it a parse of every move at every ply, which
/// grows with the game.
fn since_last_irreversible<'a>(
    start: &Chess,
    moves: &'a [Move],
    pos: &Chess,
) -> (Chess, &'a [Move]) {
    let cut = moves.len().saturating_sub(pos.halfmoves() as usize);
    let mut base = start.clone();
    for m in &moves[..cut] {
        base.play_unchecked(*m);
    }
    (base, &moves[cut..])
}

/// The MultiPV index (1 without one) and score of an `info` line, unless it is only a
/// bound of an aspiration search.
fn parse_info_score(line: &str) -> Option<(usize, Score)> {
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    if words.iter().any(|w| *w == "lowerbound" || *w == "upperbound") {
        return None;
    }
    let index = match words.iter().position(|w| *w == "multipv") {
        Some(i) => words.get(i + 1)?.parse().ok().filter(|&n: &usize| n >= 1)?,
        None => 1,
    };
    let i = words.iter().position(|w| *w == "score")?;
    let value: i32 = words.get(i + 2)?.parse().ok()?;
    let score = match *words.get(i + 1)? {
        "cp" => Score::Cp(value),
        "mate" => Score::Mate(if value > 0 { 1 } else { -1 }),
        _ => return None,
    };
    Some((index, score))
}

/// The moves after `pv` in an `info` line, as text (empty without them).
fn info_pv(line: &str) -> &str {
    match line.split_once(" pv ") {
        Some((_, moves)) => moves.trim(),
        None => "",
    }
}

/// The legal moves of `text` (UCI moves played in turn from `pos`), up to the first that
/// is not one.
fn parse_pv(pos: &Chess, text: &str) -> Vec<Move> {
    let mut pos = pos.clone();
    let mut pv = Vec::new();
    for word in text.split_ascii_whitespace() {
        let Some(m) = parse_move(&pos, word) else { break };
        pos.play_unchecked(m);
        pv.push(m);
    }
    pv
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::replay as game;

    /// An engine that exits instead of answering is reported by name, with what Nue was
    /// waiting for. (It reads `uci` first, so Nue's write cannot meet a closed pipe.)
    #[test]
    fn an_engine_that_exits_is_reported() {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!("nue-mute-engine-{}", std::process::id()));
        std::fs::write(&path, "#!/bin/sh\nread line\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let result = UciPlayer::start(&path, &[], "go depth 1".into());
        std::fs::remove_file(&path).unwrap();
        let Err(e) = result else {
            panic!("a script that only reads passed for a UCI engine");
        };
        let expected = format!("{} exited while Nue waited for 'uciok'", path.display());
        assert_eq!(e.to_string(), expected);
    }

    #[test]
    fn info_scores_are_read_and_bounds_skipped() {
        let s =
            parse_info_score("info depth 5 seldepth 6 multipv 1 score cp -31 nodes 900 pv e2e4");
        assert_eq!(s, Some((1, Score::Cp(-31))));
        let mate = parse_info_score("info depth 9 score mate -3 pv a1a2");
        assert_eq!(mate, Some((1, Score::Mate(-1))));
        assert_eq!(parse_info_score("info depth 9 score cp 40 lowerbound nodes 5"), None);
        let second = parse_info_score("info depth 9 multipv 2 score cp 40");
        assert_eq!(second, Some((2, Score::Cp(40))));
        assert_eq!(parse_info_score("info depth 9 multipv 0 score cp 40"), None);
        assert_eq!(parse_info_score("info string hello"), None);
    }

    #[test]
    fn the_engine_is_sent_the_game_from_its_last_capture_or_pawn_move() {
        let initial = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let (start, moves, pos) = game(initial, "g1f3 g8f6 f3g1 f6g8 e2e4 b8c6 g1f3 c6b8");
        let (base, recent) = since_last_irreversible(&start, &moves, &pos);
        assert_eq!(recent, &moves[5..], "the moves after e2e4");
        assert_eq!(base.halfmoves(), 0);
        assert_eq!(base.board(), game(initial, "g1f3 g8f6 f3g1 f6g8 e2e4").2.board());
        let mut replayed = base.clone();
        recent.iter().for_each(|&m| replayed.play_unchecked(m));
        assert_eq!(replayed, pos);

        // The last move a capture: nothing to replay.
        let (start, moves, pos) = game(initial, "e2e4 d7d5 e4d5");
        let (base, recent) = since_last_irreversible(&start, &moves, &pos);
        assert!(recent.is_empty());
        assert_eq!(base, pos);

        // A start whose clock already runs (a book position): the whole game is sent.
        let book = "4k3/8/8/8/8/8/8/R3K3 w - - 30 60";
        let (start, moves, pos) = game(book, "a1a2 e8d8 a2a1");
        let (base, recent) = since_last_irreversible(&start, &moves, &pos);
        assert_eq!((base, recent), (start, &moves[..]));
    }

    #[test]
    fn nue_offers_distinct_lines_best_first() {
        let mut player = NuePlayer::new(1, 3000, None).unwrap();
        let (start, moves, pos) =
            game("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", "");
        let best = player.choose(&start, &moves, &pos).unwrap();
        let offered = player.lines(&start, &moves, &pos, 4).unwrap();
        assert_eq!(offered.len(), 4);
        let mut moves_offered: Vec<Move> = offered.iter().map(|c| c.mv).collect();
        moves_offered.dedup();
        assert_eq!(moves_offered.len(), 4, "distinct moves");
        assert!(offered.iter().all(|c| pos.is_legal(c.mv) && c.pv[0] == c.mv));
        let cp = |c: &Choice| match c.score {
            Score::Cp(v) => v,
            Score::Mate(_) => panic!("no mate here"),
        };
        assert!(offered[1..].iter().all(|c| cp(c) <= cp(&offered[0])), "best first");
        // MultiPV is set back: the next plain search is the same as before.
        player.new_game().unwrap();
        assert_eq!(player.choose(&start, &moves, &pos).unwrap().mv, best.mv);
    }

    #[test]
    fn info_lines_give_their_principal_variation() {
        let line = "info depth 5 multipv 1 score cp 20 nodes 900 pv e2e4 e7e5 g1f3 zz e1e2\n";
        assert_eq!(info_pv(line), "e2e4 e7e5 g1f3 zz e1e2");
        assert_eq!(info_pv("info depth 5 score cp 20 nodes 900"), "");
        let start = Chess::default();
        // Up to the first word that is not a legal move.
        let pv: Vec<String> = parse_pv(&start, info_pv(line))
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        assert_eq!(pv, ["e2e4", "e7e5", "g1f3"]);
        assert!(parse_pv(&start, "e2e5 e2e4").is_empty());
    }
}
