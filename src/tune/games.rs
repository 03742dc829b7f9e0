//! The games of an iteration, played by fastchess: θ+ against θ−, both the tuning build,
//! at a fixed node count, one game pair per opening with colours reversed.
//!
//! Each iteration is one short fastchess run in a scratch folder of its own (its openings
//! file, and the `config.json` fastchess leaves behind), so that nothing of a stopped
//! iteration is left to resume: the iteration is played again, whole, from the state file.
//! fastchess starts in a process group of its own, so Ctrl-C in a terminal reaches only
//! `nue`, which then asks fastchess to stop (SIGINT, on which fastchess ends its engines)
//! and kills it if it has not within ten seconds. Where util-linux's `setpriv` is present,
//! fastchess is started through it with SIGINT as its parent-death signal, so that it stops
//! even when `nue` is killed by SIGKILL; without it, an orphaned fastchess plays its one
//! iteration to the end and exits.

use std::{
    collections::VecDeque,
    io::{BufRead, BufReader, Read, Write},
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{
        atomic::{AtomicBool, Ordering::Relaxed},
        mpsc,
    },
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context, Result};

use super::{
    spsa::Plan,
    state::{Anomalies, Played},
    Match, Outcome,
};

/// The names the two sides have in fastchess's output and the games' PGN.
pub const PLUS: &str = "plus";
/// See [`PLUS`].
pub const MINUS: &str = "minus";

/// OpenBench's adjudication (its presets' `win_adj` and `draw_adj`, docs/openbench.md):
/// a game is given up after three moves beyond 4 pawns and drawn from move 40 after eight
/// within 0.1 pawn, which shortens games without changing who wins them.
pub const ADJUDICATION: &[&str] =
    &["-resign", "movecount=3", "score=400", "-draw", "movenumber=40", "movecount=8", "score=10"];

/// The iteration's games, in its scratch folder.
const PGN: &str = "games.pgn";

/// How long fastchess may take to end its games and engines after SIGINT.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Lines of fastchess's output kept to explain a failure.
const TAIL_LINES: usize = 40;

/// Plays iterations through fastchess.
pub struct Fastchess {
    /// The fastchess binary.
    pub exe: PathBuf,
    /// `setpriv`, when present, to tie fastchess's life to this process.
    pub setpriv: Option<PathBuf>,
    /// The tuning build, an absolute path (fastchess runs in a scratch folder).
    pub engine: PathBuf,
    /// The tuned parameters' names, in the plan's order.
    pub names: Vec<String>,
    /// Nodes a move.
    pub nodes: u64,
    /// Hash, MiB.
    pub hash_mib: u32,
    /// Games at a time.
    pub concurrency: usize,
    /// The book's positions, one EPD line each.
    pub book: Vec<String>,
    /// A PGN file to append the games of every finished iteration to, if any (those of an
    /// iteration given up are not kept: it is played again).
    pub pgn: Option<PathBuf>,
    /// Set when the run is to stop: the iteration in flight is given up.
    pub stop: &'static AtomicBool,
}

impl Fastchess {
    /// fastchess's arguments for `plan`, the openings being in `openings.epd` of its
    /// working folder.
    pub fn arguments(&self, plan: &Plan) -> Vec<String> {
        let mut args = Vec::new();
        for (name, values) in [(PLUS, &plan.plus), (MINUS, &plan.minus)] {
            args.push("-engine".into());
            args.push(format!("cmd={}", self.engine.display()));
            args.push(format!("name={name}"));
            for (option, value) in self.names.iter().zip(values.iter()) {
                args.push(format!("option.{option}={value}"));
            }
        }
        args.extend([
            "-each".into(),
            "tc=inf".into(),
            format!("nodes={}", self.nodes),
            "option.Threads=1".into(),
            format!("option.Hash={}", self.hash_mib),
            "-openings".into(),
            "file=openings.epd".into(),
            "format=epd".into(),
            "order=sequential".into(),
            "-repeat".into(),
            "-rounds".into(),
            plan.openings.len().to_string(),
            "-concurrency".into(),
            self.concurrency.to_string(),
            // An engine that crashes is restarted and the match goes on; the game counts
            // as its loss and as an anomaly.
            "-recover".into(),
            "-ratinginterval".into(),
            "0".into(),
        ]);
        args.extend(ADJUDICATION.iter().map(|s| s.to_string()));
        if self.pgn.is_some() {
            args.extend(["-pgnout".into(), format!("file={PGN}")]);
        }
        args
    }

    fn spawn(&self, folder: &Path, plan: &Plan) -> Result<Child> {
        let mut command = match &self.setpriv {
            Some(setpriv) => {
                let mut c = Command::new(setpriv);
                c.args(["--pdeathsig", "INT", "--"]).arg(&self.exe);
                c
            }
            None => Command::new(&self.exe),
        };
        command
            .args(self.arguments(plan))
            .current_dir(folder)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", self.exe.display()))
    }
}

impl Match for Fastchess {
    fn play(&mut self, plan: &Plan) -> Result<Outcome> {
        let folder = Scratch::new(plan.k)?;
        let mut openings = String::new();
        for &i in &plan.openings {
            openings.push_str(&self.book[i]);
            openings.push('\n');
        }
        std::fs::write(folder.0.join("openings.epd"), openings)
            .with_context(|| format!("cannot write the openings to {}", folder.0.display()))?;
        let mut child = self.spawn(&folder.0, plan)?;
        let lines = read_lines(&mut child);
        let mut tail = VecDeque::new();
        let mut played = Played::default();
        let mut unfinished = 0;
        loop {
            if self.stop.load(Relaxed) {
                interrupt(&mut child);
                return Ok(Outcome::Stopped);
            }
            match lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    match parse_finished(&line) {
                        Some(Some(game)) => game.add_to(&mut played),
                        Some(None) => unfinished += 1,
                        None => {}
                    }
                    tail.push_back(line);
                    if tail.len() > TAIL_LINES {
                        tail.pop_front();
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = child.wait().context("waiting for fastchess")?;
        let expected = 2 * plan.openings.len() as u64;
        let explain = || tail.iter().map(String::as_str).collect::<Vec<_>>().join("\n");
        if self.stop.load(Relaxed) && played.games() < expected {
            return Ok(Outcome::Stopped);
        }
        ensure!(
            status.success() && played.games() == expected && unfinished == 0,
            "fastchess ({status}) finished {} of {expected} games ({unfinished} without a \
             result); its last lines:\n{}",
            played.games(),
            explain()
        );
        if let Some(pgn) = &self.pgn {
            append(&folder.0.join(PGN), pgn)?;
        }
        Ok(Outcome::Played(played))
    }
}

/// Appends the file at `from` to the file at `to`.
fn append(from: &Path, to: &Path) -> Result<()> {
    let games = std::fs::read(from).with_context(|| format!("cannot read {}", from.display()))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(to)
        .and_then(|mut f| f.write_all(&games).map(|()| f))
        .with_context(|| format!("cannot append the games to {}", to.display()))?;
    file.flush()?;
    Ok(())
}

/// The prefix of the scratch folders' names, followed by the process id and the iteration.
const SCRATCH_PREFIX: &str = "nue-tune-";

/// A scratch folder for one iteration, removed with everything in it when dropped.
struct Scratch(PathBuf);

/// Removes the scratch folders that runs killed with SIGKILL left behind: those named
/// after a process that no longer exists.
pub fn sweep_scratch() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(SCRATCH_PREFIX)) else {
            continue;
        };
        let Some((pid, k)) = rest.split_once('-') else { continue };
        let numbers = pid.parse::<u32>().is_ok() && k.parse::<u64>().is_ok();
        if numbers && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Scratch {
    fn new(k: u64) -> Result<Scratch> {
        let name = format!("{SCRATCH_PREFIX}{}-{k}", std::process::id());
        let path = std::env::temp_dir().join(name);
        if path.exists() {
            std::fs::remove_dir_all(&path)?;
        }
        std::fs::create_dir_all(&path)
            .with_context(|| format!("cannot make the scratch folder {}", path.display()))?;
        Ok(Scratch(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// fastchess's output and error lines, as they come, from two reader threads; the
/// channel closes when both streams have.
fn read_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (send, receive) = mpsc::channel();
    let streams: [Box<dyn Read + Send>; 2] = [
        Box::new(child.stdout.take().expect("piped stdout")),
        Box::new(child.stderr.take().expect("piped stderr")),
    ];
    for stream in streams {
        let send = send.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
    }
    receive
}

/// Asks fastchess to stop (SIGINT: it ends its games and engines), then kills it if it
/// has not within [`STOP_GRACE`].
fn interrupt(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let asked = Instant::now();
    while asked.elapsed() < STOP_GRACE {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A finished game, from θ+'s side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameEnd {
    /// 1 for a θ+ win, 0 for a draw, −1 for a loss.
    pub score: i8,
    /// How it ended, if abnormally.
    pub anomaly: Anomalies,
}

impl GameEnd {
    fn add_to(&self, played: &mut Played) {
        match self.score {
            1 => played.wins += 1,
            -1 => played.losses += 1,
            _ => played.draws += 1,
        }
        played.anomalies.add(&self.anomaly);
    }
}

/// Reads fastchess's line for a finished game,
/// `Finished game 3 (plus vs minus): 1-0 {White mates}`: `None` for any other line,
/// `Some(None)` for a game without a result (`*`, an interrupted game).
pub fn parse_finished(line: &str) -> Option<Option<GameEnd>> {
    let rest = line.strip_prefix("Finished game ")?;
    let (_, rest) = rest.split_once(" (")?;
    let (players, rest) = rest.split_once("): ")?;
    let (white, _) = players.split_once(" vs ")?;
    let (result, reason) = rest.split_once(' ').unwrap_or((rest, ""));
    let white_score = match result {
        "1-0" => 1,
        "0-1" => -1,
        "1/2-1/2" => 0,
        _ => return Some(None),
    };
    let score = if white == PLUS { white_score } else { -white_score };
    let mut anomaly = Anomalies::default();
    if reason.contains("disconnects") {
        anomaly.crashes = 1;
    } else if reason.contains("connection stalls") {
        anomaly.stalls = 1;
    } else if reason.contains("illegal move") {
        anomaly.illegal_moves = 1;
    } else if reason.contains("loses on time") {
        anomaly.time_losses = 1;
    }
    Some(Some(GameEnd { score, anomaly }))
}

/// The program `name` as the shell would find it: a path when it holds a slash, else
/// the first match on `PATH`.
pub fn find_program(name: &Path) -> Option<PathBuf> {
    if name.components().count() > 1 || name.is_absolute() {
        return name.is_file().then(|| name.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// fastchess, or an error saying how to provide it.
pub fn require_fastchess(name: &Path) -> Result<PathBuf> {
    match find_program(name) {
        Some(path) => Ok(path),
        None => bail!(
            "fastchess not found (looked for {}{}): install it \
             (https://github.com/Disservin/fastchess) or give its path with --fastchess",
            name.display(),
            if name.components().count() > 1 { "" } else { " on PATH" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_games_are_read_from_theta_plus_side() {
        let game = |line| parse_finished(line).unwrap().unwrap();
        assert_eq!(game("Finished game 1 (plus vs minus): 1-0 {White mates}").score, 1);
        assert_eq!(game("Finished game 2 (minus vs plus): 1-0 {White mates}").score, -1);
        assert_eq!(game("Finished game 4 (minus vs plus): 0-1 {Black mates}").score, 1);
        let draw = game("Finished game 3 (plus vs minus): 1/2-1/2 {Draw by 3-fold repetition}");
        assert_eq!((draw.score, draw.anomaly.total()), (0, 0));
        let crash = game("Finished game 5 (plus vs minus): 0-1 {White disconnects}");
        assert_eq!((crash.score, crash.anomaly.crashes), (-1, 1));
        assert_eq!(
            game("Finished game 6 (minus vs plus): 1-0 {Black's connection stalls}").anomaly.stalls,
            1
        );
        assert_eq!(
            game("Finished game 7 (plus vs minus): 0-1 {White makes an illegal move}")
                .anomaly
                .illegal_moves,
            1
        );
        assert_eq!(
            game("Finished game 8 (plus vs minus): 0-1 {White loses on time (12ms overrun)}")
                .anomaly
                .time_losses,
            1
        );
        assert_eq!(
            parse_finished("Finished game 9 (plus vs minus): * {Game interrupted}"),
            Some(None)
        );
        assert_eq!(parse_finished("Started game 1 of 16 (plus vs minus)"), None);
    }

    #[test]
    fn a_missing_fastchess_is_named_in_the_error() {
        let err = require_fastchess(Path::new("/no/such/fastchess")).unwrap_err().to_string();
        assert!(err.contains("fastchess not found") && err.contains("/no/such/fastchess"), "{err}");
    }
}
