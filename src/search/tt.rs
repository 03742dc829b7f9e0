//! The transposition table, shared by every search thread without locks.
//!
//! Layout: buckets of four 16-byte entries, one 64-byte cache line each. A key picks its
//! bucket by a multiply-high of the key and the bucket count (no power-of-two size needed,
//! no modulo). Each entry is two `AtomicU64` words: the packed data, and the key XORed with
//! that data. A reader accepts an entry only when `check ^ data == key`, so a write torn by
//! another thread (one word new, one old) reads as a miss instead of as wrong data; no
//! lock is taken and the loads and stores are `Relaxed`. Lazy SMP tolerates the rare lost
//! write.
//!
//! Replacement: an entry with the same key is overwritten (keeping its move if the new
//! result has none, and keeping a deeper exact result from the current search); otherwise
//! the entry with the least `depth - 8 * age` goes, so stale results from earlier searches
//! are the first to make room.
//!
//! Mate scores are stored relative to the node (distance to mate from there) and turned
//! back into distance from the root when read, so a mate found on one path reads correctly
//! when the position is reached at another ply.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

use rayon::prelude::*;

use crate::position::Move;

use crate::types::{is_decisive, score_from_tt, score_to_tt, Bound, PackedMove, MAX_PLY};

/// The key under which the singular search of the position of `key`, every move but
/// `excluded`, keeps its entry: apart from the full node's, and from the other moves'.
#[inline]
pub fn singular_key(key: u64, excluded: Move) -> u64 {
    key ^ (u64::from(excluded.packed().bits()) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// What a search stores for a position: [`TranspositionTable::store`]'s argument, its fields
/// named at each call site.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// The position's key.
    pub key: u64,
    /// Distance from the root, to store mate scores relative to the node.
    pub ply: usize,
    /// Best or refutation move ([`PackedMove::NONE`] for none: an entry of the same
    /// position keeps its move then).
    pub mv: PackedMove,
    /// Search score, mates counted from the root.
    pub score: i32,
    /// Static evaluation of the position.
    pub eval: i32,
    /// Depth of the search that produced `score`.
    pub depth: i32,
    /// How `score` bounds the true value.
    pub bound: Bound,
    /// Whether the position is or was on a principal variation.
    pub pv: bool,
}

/// What a probe found.
#[derive(Clone, Copy, Debug)]
pub struct Hit {
    /// Best or refutation move ([`PackedMove::NONE`] when none).
    pub mv: PackedMove,
    /// Search score, already converted to the root's distance for mates.
    pub score: i32,
    /// Static evaluation of the position.
    pub eval: i32,
    /// Depth of the search that produced `score`.
    pub depth: i32,
    /// How `score` bounds the true value.
    pub bound: Bound,
    /// Whether the position was on a principal variation.
    pub pv: bool,
}

#[derive(Default)]
struct Entry {
    check: AtomicU64,
    data: AtomicU64,
}

#[derive(Default)]
#[repr(C, align(64))]
struct Bucket([Entry; 4]);

const _: () = assert!(std::mem::size_of::<Bucket>() == 64);

/// Stored depth = search depth + this, so that quiescence depths stay non-negative.
const DEPTH_OFFSET: i32 = 4;
/// Generations wrap at this value (5 bits of the entry).
const AGE_CYCLE: u8 = 32;

/// The packed form: move 16 bits, score 16, eval 16, depth 8, bound 2, pv 1, age 5.
fn pack(mv: u16, score: i32, eval: i32, depth: i32, bound: Bound, pv: bool, age: u8) -> u64 {
    u64::from(mv)
        | (u64::from(score as i16 as u16) << 16)
        | (u64::from(eval as i16 as u16) << 32)
        | (u64::from((depth + DEPTH_OFFSET).clamp(0, 255) as u8) << 48)
        | ((bound as u64) << 56)
        | (u64::from(pv) << 58)
        | (u64::from(age) << 59)
}

fn stored_depth(data: u64) -> i32 {
    i32::from((data >> 48) as u8)
}

fn stored_age(data: u64) -> u8 {
    (data >> 59) as u8
}

fn stored_bound(data: u64) -> Bound {
    match (data >> 56) & 3 {
        1 => Bound::Upper,
        2 => Bound::Lower,
        3 => Bound::Exact,
        _ => Bound::None,
    }
}

impl Hit {
    /// Whether the stored score settles a search with window `(alpha, beta)`: an exact
    /// score, a lower bound at or above beta, or an upper bound at or below alpha.
    #[inline]
    pub fn cuts(&self, alpha: i32, beta: i32) -> bool {
        match self.bound {
            Bound::Exact => true,
            Bound::Lower => self.score >= beta,
            Bound::Upper => self.score <= alpha,
            Bound::None => false,
        }
    }

    /// The stored score if it is a better estimate than `eval`: a lower bound above it,
    /// an upper bound below it, or exact (mate scores excepted: they are no estimate).
    #[inline]
    pub fn refine(&self, eval: i32) -> i32 {
        let tighter = match self.bound {
            Bound::Lower => self.score > eval,
            Bound::Upper => self.score < eval,
            Bound::Exact => true,
            Bound::None => false,
        };
        if tighter && !is_decisive(self.score) {
            self.score
        } else {
            eval
        }
    }
}

/// The shared table.
pub struct TranspositionTable {
    buckets: Vec<Bucket>,
    age: AtomicU8,
}

impl TranspositionTable {
    /// A table of (about) `megabytes` MiB, at least one bucket.
    ///
    /// # Panics
    /// When the memory cannot be had; [`TranspositionTable::try_new`] reports it instead.
    pub fn new(megabytes: usize) -> TranspositionTable {
        Self::try_new(megabytes).expect("memory for the hash table")
    }

    /// A table of (about) `megabytes` MiB, or an error when the memory cannot be had.
    ///
    /// Linux promises memory it may not have and kills the process when the promise is
    /// called in, so a request beyond the memory the system reports available is refused
    /// up front.
    pub fn try_new(megabytes: usize) -> anyhow::Result<TranspositionTable> {
        if let Some(available) = available_megabytes() {
            anyhow::ensure!(
                megabytes <= available,
                "cannot allocate a {megabytes} MB hash table: only {available} MB of memory are available"
            );
        }
        let count = (megabytes.saturating_mul(1 << 20) / std::mem::size_of::<Bucket>()).max(1);
        let mut buckets = Vec::new();
        buckets
            .try_reserve_exact(count)
            .map_err(|_| anyhow::anyhow!("cannot allocate a {megabytes} MB hash table"))?;
        // Every page is touched here, once: in parallel, since a table of gigabytes
        // takes seconds to fault in on one core.
        buckets.par_extend((0..count).into_par_iter().map(|_| Bucket::default()));
        Ok(TranspositionTable { buckets, age: AtomicU8::new(0) })
    }

    /// Size in MiB, as given to [`TranspositionTable::new`] (rounded down).
    pub fn megabytes(&self) -> usize {
        (self.buckets.len() * std::mem::size_of::<Bucket>()) >> 20
    }

    /// Forgets everything (`ucinewgame`, `Clear Hash`), clearing in parallel.
    pub fn clear(&self) {
        self.buckets.par_chunks(1 << 14).for_each(|chunk| {
            for bucket in chunk {
                for e in &bucket.0 {
                    e.check.store(0, Relaxed);
                    e.data.store(0, Relaxed);
                }
            }
        });
        self.age.store(0, Relaxed);
    }

    /// Starts a new search generation, so that older entries are replaced first.
    pub fn new_search(&self) {
        self.age.store((self.age.load(Relaxed) + 1) % AGE_CYCLE, Relaxed);
    }

    #[inline]
    fn bucket(&self, key: u64) -> &Bucket {
        let index = (u128::from(key) * self.buckets.len() as u128) >> 64;
        &self.buckets[index as usize]
    }

    /// Asks the processor to start loading `key`'s bucket into the cache.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        // A plain read is the portable prefetch: it costs a load, not a dependency.
        let _ = self.bucket(key).0[0].data.load(Relaxed);
    }

    /// Looks `key` up; `ply` converts mate scores to the root's distance, and `halfmoves`
    /// (the fifty-move counter) turns a mate the rule may forbid into a win.
    #[inline]
    pub fn probe(&self, key: u64, ply: usize, halfmoves: u32) -> Option<Hit> {
        for e in &self.bucket(key).0 {
            let data = e.data.load(Relaxed);
            if data != 0 && e.check.load(Relaxed) ^ data == key {
                return Some(Hit {
                    mv: PackedMove::from_bits(data as u16),
                    score: score_from_tt(i32::from((data >> 16) as u16 as i16), ply, halfmoves),
                    eval: i32::from((data >> 32) as u16 as i16),
                    depth: stored_depth(data) - DEPTH_OFFSET,
                    bound: stored_bound(data),
                    pv: (data >> 58) & 1 != 0,
                });
            }
        }
        None
    }

    /// Stores a search result (see [`Record`]).
    #[inline]
    pub fn store(&self, record: Record) {
        let Record { key, ply, mv, score, eval, depth, bound, pv } = record;
        let age = self.age.load(Relaxed);
        let bucket = self.bucket(key);
        let mut victim = &bucket.0[0];
        let mut victim_worth = i32::MAX;
        for e in &bucket.0 {
            let data = e.data.load(Relaxed);
            if data == 0 || e.check.load(Relaxed) ^ data == key {
                victim = e;
                if data != 0 {
                    // Same position: keep what is worth more than the new result.
                    let old_depth = stored_depth(data) - DEPTH_OFFSET;
                    let keep_exact = stored_bound(data) == Bound::Exact
                        && bound != Bound::Exact
                        && stored_age(data) == age
                        && old_depth > depth + 2;
                    if keep_exact {
                        return;
                    }
                    let mv = if mv.is_none() { data as u16 } else { mv.bits() };
                    let data = pack(mv, score_to_tt(score, ply), eval, depth, bound, pv, age);
                    e.check.store(key ^ data, Relaxed);
                    e.data.store(data, Relaxed);
                    return;
                }
                break;
            }
            let age_gap = i32::from((AGE_CYCLE + age - stored_age(data)) % AGE_CYCLE);
            let worth = stored_depth(data) - 8 * age_gap;
            if worth < victim_worth {
                victim_worth = worth;
                victim = e;
            }
        }
        let data = pack(mv.bits(), score_to_tt(score, ply), eval, depth, bound, pv, age);
        victim.check.store(key ^ data, Relaxed);
        victim.data.store(data, Relaxed);
    }

    /// Permille of entries written in the current search, from a sample of the table.
    pub fn hashfull(&self) -> usize {
        let age = self.age.load(Relaxed);
        let sample = self.buckets.len().min(250);
        let used: usize = self.buckets[..sample]
            .iter()
            .flat_map(|b| &b.0)
            .filter(|e| {
                let data = e.data.load(Relaxed);
                data != 0 && stored_age(data) == age
            })
            .count();
        used * 1000 / (sample * 4)
    }
}

const _: () = assert!(MAX_PLY as i32 + DEPTH_OFFSET < 256);

/// `MemAvailable` from `/proc/meminfo`, in MiB, where the system reports it.
fn available_megabytes() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kilobytes: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::MATE;

    fn mv(bits: u16) -> PackedMove {
        PackedMove::from_bits(bits)
    }

    #[test]
    fn store_and_probe_round_trip() {
        let tt = TranspositionTable::new(1);
        tt.store(Record {
            key: 0xDEAD_BEEF,
            ply: 3,
            mv: mv(1234),
            score: -517,
            eval: 88,
            depth: 7,
            bound: Bound::Lower,
            pv: true,
        });
        let hit = tt.probe(0xDEAD_BEEF, 3, 0).expect("stored");
        assert_eq!((hit.mv, hit.score, hit.eval, hit.depth), (mv(1234), -517, 88, 7));
        assert_eq!(hit.bound, Bound::Lower);
        assert!(hit.pv);
        assert!(tt.probe(0xDEAD_BEEE, 3, 0).is_none());
        tt.clear();
        assert!(tt.probe(0xDEAD_BEEF, 3, 0).is_none());
    }

    #[test]
    fn mate_scores_are_stored_relative_to_the_node() {
        let tt = TranspositionTable::new(1);
        let exact_mate = Record {
            key: 0,
            ply: 0,
            mv: PackedMove::NONE,
            score: 0,
            eval: 0,
            depth: 4,
            bound: Bound::Exact,
            pv: false,
        };
        // Mate in 5 plies from the root, found at ply 3: mate in 2 plies from the node.
        tt.store(Record { key: 42, ply: 3, score: MATE - 5, ..exact_mate });
        // Reached again at ply 7, it is mate in 9 plies from the root.
        assert_eq!(tt.probe(42, 7, 0).unwrap().score, MATE - 9);
        tt.store(Record { key: 43, ply: 2, score: -(MATE - 6), ..exact_mate });
        assert_eq!(tt.probe(43, 4, 0).unwrap().score, -(MATE - 8));
    }

    #[test]
    fn a_full_bucket_gives_up_its_least_valuable_entry() {
        let tt = TranspositionTable::new(0);
        assert_eq!(tt.buckets.len(), 1, "every key lands in the one bucket");
        let store = |key: u64, bits: u16, depth: i32, bound: Bound| {
            tt.store(Record {
                key,
                ply: 0,
                mv: mv(bits),
                score: 10,
                eval: 0,
                depth,
                bound,
                pv: false,
            });
        };
        for (key, depth) in [(1, 5), (2, 2), (3, 9), (4, 7)] {
            store(key, key as u16, depth, Bound::Lower);
        }
        // A fifth position takes the shallowest entry's place.
        store(5, 5, 6, Bound::Lower);
        let present =
            |keys: &[u64]| keys.iter().map(|&k| tt.probe(k, 0, 0).is_some()).collect::<Vec<_>>();
        assert_eq!(present(&[1, 2, 3, 4, 5]), [true, false, true, true, true]);
        // In a new search, an old entry goes before a shallower new one: each search
        // generation counts as eight plies of depth.
        tt.new_search();
        store(6, 6, 1, Bound::Lower);
        assert_eq!(present(&[1, 3, 4, 5, 6]), [false, true, true, true, true]);
        store(7, 7, 1, Bound::Lower);
        assert_eq!(present(&[3, 4, 5, 6, 7]), [true, true, false, true, true]);
        // The same position is overwritten in place, keeping its move when the new result
        // has none...
        store(6, 0, 3, Bound::Upper);
        let hit = tt.probe(6, 0, 0).unwrap();
        assert_eq!((hit.mv, hit.depth, hit.bound), (mv(6), 3, Bound::Upper));
        // ...but a much deeper exact result of this search is not overwritten by a bound.
        store(7, 7, 12, Bound::Exact);
        store(7, 9, 2, Bound::Lower);
        let hit = tt.probe(7, 0, 0).unwrap();
        assert_eq!((hit.mv, hit.depth, hit.bound), (mv(7), 12, Bound::Exact));
        assert_eq!(present(&[3, 4, 6, 7]), [true; 4]);
    }

    #[test]
    fn quiescence_depths_and_sizes() {
        let tt = TranspositionTable::new(2);
        assert_eq!(tt.megabytes(), 2);
        tt.store(Record {
            key: 9,
            ply: 0,
            mv: PackedMove::NONE,
            score: 10,
            eval: 10,
            depth: -1,
            bound: Bound::Upper,
            pv: false,
        });
        assert_eq!(tt.probe(9, 0, 0).unwrap().depth, -1);
        assert_eq!(TranspositionTable::new(0).buckets.len(), 1);
    }

    #[test]
    fn impossible_sizes_are_refused() {
        let err = TranspositionTable::try_new(1 << 40).err().expect("a petabyte table");
        assert!(err.to_string().contains("cannot allocate"), "{err}");
    }
}
