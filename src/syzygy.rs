//! Syzygy endgame tablebases: the exact result of every position with few pieces.
//!
//! Two kinds of probe serve the engine. Inside the search, right after a capture or a
//! pawn move (when the fifty-move counter is zero and the stored win/draw/loss is exact),
//! a WDL probe ends the node with a score that ranks a tablebase win below every mate and
//! above every evaluation. At the root, DTZ (distance to the next capture or pawn move,
//! on the fastest winning line) chooses the moves to search: the ones that keep the best
//! result and, when winning, make the fastest progress, so that a won ending is converted
//! within the fifty-move rule instead of being shuffled around.
//!
//! Probing uses the `shakmaty-syzygy` crate, which reads the table files lazily.

use std::path::Path;

use shakmaty::{Chess, Move, Position};
use shakmaty_syzygy::{Tablebase, Wdl};

/// Separator of several table folders in `SyzygyPath`.
pub const PATH_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

/// The tables of one or more folders.
pub struct Tablebases {
    tables: Tablebase<Chess>,
    files: usize,
}

impl std::fmt::Debug for Tablebases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tablebases({} files, up to {} pieces)", self.files, self.max_pieces())
    }
}

/// The result of the root's tablebase probe: which moves to search, and the score that
/// the position is worth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootProbe {
    /// The moves that keep the best result (and, winning, make the fastest progress).
    pub moves: Vec<Move>,
    /// The position's result for the side to move, the fifty-move rule applied or not.
    pub wdl: Wdl,
    /// Probes made (one per legal move).
    pub probes: usize,
}

impl Tablebases {
    /// Opens the folders of `paths` (separated by [`PATH_SEPARATOR`]). Fails, with a
    /// message naming the folder, when one cannot be read or none holds a table.
    pub fn open(paths: &str) -> Result<Tablebases, String> {
        let mut tables = Tablebase::new();
        let mut files = 0;
        for dir in paths.split(PATH_SEPARATOR).filter(|d| !d.trim().is_empty()) {
            let dir = dir.trim();
            if !Path::new(dir).is_dir() {
                return Err(format!("'{dir}' is not a folder"));
            }
            files += tables
                .add_directory(dir)
                .map_err(|e| format!("cannot read the folder '{dir}': {e}"))?;
        }
        if files == 0 {
            return Err(format!("no Syzygy table files (*.rtbw, *.rtbz) in '{paths}'"));
        }
        Ok(Tablebases { tables, files })
    }

    /// Number of table files found.
    pub fn files(&self) -> usize {
        self.files
    }

    /// Most pieces (kings included) of any table.
    pub fn max_pieces(&self) -> usize {
        self.tables.max_pieces()
    }

    /// Whether `pos` can be probed at all: few enough pieces, and no castling rights
    /// (the tables assume none).
    #[inline]
    pub fn covers(&self, pos: &Chess, limit: usize) -> bool {
        let pieces = pos.board().occupied().count();
        pieces <= self.max_pieces().min(limit) && pos.castles().is_empty()
    }

    /// [`Tablebases::covers`] for the search's own position, which has `pieces` pieces.
    #[inline]
    pub fn covers_counts(
        &self,
        pieces: usize,
        pos: &crate::position::Position,
        limit: usize,
    ) -> bool {
        pieces <= self.max_pieces().min(limit) && pos.castling_rights().is_empty()
    }

    /// The result for the side to move, assuming the fifty-move counter was just reset
    /// (as after a capture or a pawn move). `None` when a table is missing or unreadable.
    pub fn wdl_after_zeroing(&self, pos: &Chess) -> Option<Wdl> {
        self.tables.probe_wdl_after_zeroing(pos).ok()
    }

    /// Distance to zeroing for the side to move, in plies: positive when winning,
    /// negative when losing, 0 for a draw. It may be rounded by one ply where the
    /// tables store it in moves; the sign is always right.
    pub fn dtz(&self, pos: &Chess) -> Option<i32> {
        self.tables.probe_dtz(pos).ok().map(|d| d.ignore_rounding().0)
    }

    /// Ranks the legal moves of `pos` by DTZ and keeps the best: when winning, the moves
    /// that stay winning with the smallest distance to zeroing; when drawing, every move
    /// that keeps the draw; when losing, the moves that resist longest. With
    /// `fifty_move_rule` a win that the rule would turn into a draw counts as a draw.
    /// `None` when the position is not covered or a table is missing.
    pub fn root_moves(&self, pos: &Chess, fifty_move_rule: bool) -> Option<RootProbe> {
        let halfmoves = pos.halfmoves() as i32;
        let mut ranked = Vec::new();
        for m in pos.legal_moves() {
            let mut child = pos.clone();
            child.play_unchecked(m);
            // DTZ after the move, from the mover's side, counted from the root.
            let dtz = if child.is_checkmate() {
                1
            } else if m.is_zeroing() {
                // The move itself zeroes: what matters is the result after it.
                match self.wdl_after_zeroing(&child)? {
                    Wdl::Loss => 1,
                    Wdl::BlessedLoss => 101,
                    Wdl::Draw => 0,
                    Wdl::CursedWin => -101,
                    Wdl::Win => -1,
                }
            } else {
                let d = self.dtz(&child)?;
                // The mover's side, one ply more from the root; a drawn child stays 0.
                -d - d.signum()
            };
            ranked.push((m, rank(dtz, halfmoves, fifty_move_rule)));
        }
        let best = ranked.iter().map(|&(_, r)| r).max()?;
        let wdl = wdl_of_rank(best);
        Some(RootProbe {
            probes: ranked.len(),
            moves: ranked.into_iter().filter(|&(_, r)| r == best).map(|(m, _)| m).collect(),
            wdl,
        })
    }
}

/// Largest rank: a win with this much to spare wins within any fifty-move count.
const WIN_RANK: i32 = 1000;

/// How good a move is, from its DTZ after the move (mover's side, counted from the
/// root) and the root's fifty-move counter: wins rank highest, the fastest first; then
/// wins the fifty-move rule spoils (when it applies), draws, losses it saves, and losses,
/// the slowest first.
fn rank(dtz: i32, halfmoves: i32, fifty_move_rule: bool) -> i32 {
    // The zeroing move comes `|dtz|` plies from now; the rule lets a draw be claimed
    // once the counter has reached 100. A ply is kept in hand for the winner, since a
    // DTZ may be rounded.
    let win_in_time = |d: i32| d + halfmoves <= 99;
    let loss_saved = |d: i32| -d + halfmoves > 100;
    match dtz {
        0 => 0,
        d if d > 0 && (win_in_time(d) || !fifty_move_rule) => WIN_RANK - d.min(WIN_RANK - 2),
        // A cursed win: a draw, but the best of draws (the opponent may still err).
        d if d > 0 => 1,
        d if fifty_move_rule && loss_saved(d) => -1,
        d => -WIN_RANK - d.max(-(WIN_RANK - 2)),
    }
}

fn wdl_of_rank(rank: i32) -> Wdl {
    match rank {
        r if r > 1 => Wdl::Win,
        1 => Wdl::CursedWin,
        0 => Wdl::Draw,
        -1 => Wdl::BlessedLoss,
        _ => Wdl::Loss,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_order_results_and_speed() {
        // Faster wins first, then wins spoilt by the rule, draws, saved losses, losses
        // that last longer before those that end sooner.
        let order = [rank(1, 0, true), rank(5, 0, true), rank(99, 5, true)];
        assert!(order.windows(2).all(|w| w[0] > w[1]), "{order:?}");
        assert_eq!(rank(99, 5, true), 1);
        assert!(rank(99, 5, false) > 1);
        assert!(rank(99, 5, true) > rank(0, 5, true));
        assert!(rank(0, 0, true) > rank(-120, 0, true));
        assert_eq!(rank(-120, 0, true), -1);
        assert!(rank(-120, 0, true) > rank(-30, 0, true));
        assert!(rank(-30, 0, true) > rank(-2, 0, true));
        for r in [rank(3, 0, true), rank(99, 5, true), 0, rank(-120, 0, true), rank(-3, 0, true)] {
            let w = wdl_of_rank(r);
            assert_eq!(w.signum(), r.signum(), "{r} {w:?}");
        }
    }

    #[test]
    fn bad_folders_are_refused_with_their_name() {
        let e = Tablebases::open("/nonexistent/tables").unwrap_err();
        assert!(e.contains("/nonexistent/tables"), "{e}");
        let empty = std::env::temp_dir().join(format!("nue-empty-tb-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let e = Tablebases::open(empty.to_str().unwrap()).unwrap_err();
        assert!(e.contains("no Syzygy table files"), "{e}");
        let _ = std::fs::remove_dir(&empty);
    }
}
