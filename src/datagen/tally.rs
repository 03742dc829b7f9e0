//! What the games of a `nue datagen` run looked like — results, plies per game and
//! scores — for the summary a person reads at its end.

use crate::chain::Game;

/// Upper bounds (exclusive) of the score buckets of [`Tally::scores`], centipawns from
/// White's view; the bucket after the last holds the rest, and one more the mates.
const SCORE_EDGES: [i32; 8] = [-1000, -500, -200, -50, 50, 200, 500, 1000];
/// Plies per game bucket of [`Tally::lengths`].
const LENGTH_STEP: usize = 40;
/// Width of the longest bar of a text histogram.
const BAR_WIDTH: u64 = 30;

/// What the games of a run looked like, for the summary a person reads at its end.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Games by White's result: wins, draws, losses.
    pub results: [u64; 3],
    /// Plies of each game.
    pub lengths: Vec<u32>,
    /// Positions by score bucket (see `SCORE_EDGES`), the last for mate scores.
    pub scores: [u64; SCORE_EDGES.len() + 2],
}

impl Tally {
    /// Counts a game.
    pub fn add(&mut self, game: &Game) {
        let result = if game.result > 0.75 {
            0
        } else if game.result > 0.25 {
            1
        } else {
            2
        };
        self.results[result] += 1;
        self.lengths.push(game.plies.len() as u32);
        for ply in &game.plies {
            let bucket = match ply.score {
                Some(cp) => SCORE_EDGES.iter().take_while(|&&edge| cp >= edge).count(),
                None => SCORE_EDGES.len() + 1,
            };
            self.scores[bucket] += 1;
        }
    }

    /// The tally as text: results, plies per game and scores, the last two as histograms.
    pub fn report(&self) -> String {
        let games = self.lengths.len() as u64;
        if games == 0 {
            return "no games\n".into();
        }
        let share = |n: u64| 100.0 * n as f64 / games as f64;
        let [wins, draws, losses] = self.results;
        let mut text = format!(
            "results: 1-0 {wins} ({:.1} %), 1/2-1/2 {draws} ({:.1} %), 0-1 {losses} ({:.1} %)\n",
            share(wins),
            share(draws),
            share(losses)
        );
        let mut sorted = self.lengths.clone();
        sorted.sort_unstable();
        let mean = sorted.iter().map(|&l| f64::from(l)).sum::<f64>() / games as f64;
        text += &format!(
            "plies per game: min {}, median {}, mean {mean:.1}, max {}\n",
            sorted[0],
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1]
        );
        let longest = sorted[sorted.len() - 1] as usize;
        let lengths: Vec<(String, u64)> = (0..=longest / LENGTH_STEP)
            .map(|b| {
                let (lo, hi) = (b * LENGTH_STEP, (b + 1) * LENGTH_STEP - 1);
                let n = sorted.iter().filter(|&&l| (lo..=hi).contains(&(l as usize))).count();
                (format!("{lo}-{hi}"), n as u64)
            })
            .collect();
        text += &histogram(&lengths);
        text += "scores (centipawns, White's view):\n";
        let names = (0..self.scores.len()).map(|b| match b {
            0 => format!("< {}", SCORE_EDGES[0]),
            b if b == SCORE_EDGES.len() => format!(">= {}", SCORE_EDGES[b - 1]),
            b if b > SCORE_EDGES.len() => "mate".into(),
            b => format!("{} to {}", SCORE_EDGES[b - 1], SCORE_EDGES[b] - 1),
        });
        let scores: Vec<(String, u64)> = names.zip(self.scores).collect();
        text + &histogram(&scores)
    }
}

/// Labelled counts as text bars, the largest `BAR_WIDTH` characters long.
fn histogram(rows: &[(String, u64)]) -> String {
    let most = rows.iter().map(|r| r.1).max().unwrap_or(0).max(1);
    let label = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (name, n) in rows {
        let bar = "#".repeat((n * BAR_WIDTH).div_ceil(most) as usize);
        text += &format!("  {name:>label$}  {bar:<width$}  {n}\n", width = BAR_WIDTH as usize);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{chain::Ply, datagen::replay as game};

    #[test]
    fn the_tally_counts_results_lengths_and_scores() {
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let (start, moves, _) = game(fen, "e2e4 e7e5 g1f3");
        let scored = |scores: &[Option<i32>]| -> Vec<Ply> {
            moves.iter().zip(scores).map(|(&mv, &score)| Ply { mv, score }).collect()
        };
        let mut tally = Tally::default();
        let plies = scored(&[Some(30), Some(-2000), None]);
        tally.add(&Game { start: start.clone(), result: 1.0, plies });
        tally.add(&Game { start, result: 0.5, plies: scored(&[Some(0), Some(1000)]) });
        assert_eq!(tally.results, [1, 1, 0]);
        assert_eq!(tally.lengths, [3, 2]);
        assert_eq!(tally.scores, [1, 0, 0, 0, 2, 0, 0, 0, 1, 1]);
        let text = tally.report();
        for line in [
            "results: 1-0 1 (50.0 %), 1/2-1/2 1 (50.0 %), 0-1 0 (0.0 %)",
            "plies per game: min 2, median 3, mean 2.5, max 3",
            &format!("  0-39  {}  2", "#".repeat(30)),
            // Labels line up on the right, bars on the left.
            &format!("  {:>13}  {}  2", "-50 to 49", "#".repeat(30)),
            &format!("  {:>13}  {:<30}  1", "mate", "#".repeat(15)),
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} not in\n{text}");
        }
        assert_eq!(Tally::default().report(), "no games\n");
    }
}
