//! Drives the `nue` binary over its stdin and stdout, as a GUI would, and checks every
//! search's output on the way: each PV replays legally from the position the engine was
//! given, `seldepth` is never below `depth`, `nps` comes only with a non-zero `time`, and
//! `bestmove` is the first move of the last PV.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc::{channel, Receiver, RecvTimeoutError},
    time::{Duration, Instant},
};

use nue::engine::parse_move;
use shakmaty::{fen::Fen, CastlingMode, Chess, Position};

/// A running engine process.
pub struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every line the engine printed so far.
    pub transcript: Vec<String>,
    /// The position the engine was last given, as the protocol defines it: a bad FEN
    /// keeps the old one, an illegal move ends the list before it.
    pub position: Chess,
    chess960: bool,
}

impl Engine {
    /// Starts the engine in UCI mode.
    pub fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nue"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the nue binary starts");
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine {
            child,
            stdin: Some(stdin),
            lines,
            transcript: Vec::new(),
            position: Chess::default(),
            chess960: false,
        }
    }

    /// Sends one command line, following the position and the castling mode it sets.
    pub fn send(&mut self, command: &str) {
        let words: Vec<&str> = command.split_whitespace().collect();
        match words.as_slice() {
            ["position", rest @ ..] => self.follow_position(rest),
            ["setoption", "name", "UCI_Chess960", "value", on] => self.chess960 = *on == "true",
            _ => {}
        }
        let stdin = self.stdin.as_mut().expect("input is open");
        writeln!(stdin, "{command}").expect("the engine reads its input");
        stdin.flush().expect("flush");
    }

    fn follow_position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|&w| w == "moves").unwrap_or(args.len());
        let mode = self.mode();
        let root = match &args[..moves_at] {
            ["startpos"] => Chess::default(),
            ["fen", fen @ ..] => {
                let parsed = fen.join(" ").parse::<Fen>();
                let pos = parsed.ok().and_then(|f| {
                    f.clone()
                        .into_position(mode)
                        .ok()
                        .or_else(|| f.into_position(CastlingMode::Chess960).ok())
                });
                match pos {
                    Some(p) => p,
                    None => return,
                }
            }
            _ => return,
        };
        let mut pos = root;
        for text in args.iter().skip(moves_at + 1) {
            match parse_move(&pos, text) {
                Some(m) => pos.play_unchecked(m),
                None => break,
            }
        }
        self.position = pos;
    }

    fn mode(&self) -> CastlingMode {
        if self.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        }
    }

    /// Closes the engine's standard input, as a GUI that exits without `quit` does.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// Reads lines until one satisfies `done`, returning every line read (the matching one
    /// last). Panics with the transcript when `timeout` passes first.
    pub fn read_until(&mut self, timeout: Duration, done: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut read = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.transcript.push(line.clone());
                    let finished = done(&line);
                    read.push(line);
                    if finished {
                        return read;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no answer within {timeout:?}; read so far: {read:#?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the engine exited; read so far: {read:#?}")
                }
            }
        }
    }

    /// Sends `command`, then `isready`, and returns what came before `readyok`.
    pub fn ask(&mut self, command: &str) -> Vec<String> {
        self.send(command);
        self.send("isready");
        let mut lines = self.read_until(Duration::from_secs(30), |l| l == "readyok");
        lines.pop();
        lines
    }

    /// Reads the rest of a search up to its `bestmove` and checks the output (see the
    /// module's header); returns the lines read.
    pub fn bestmove(&mut self, timeout: Duration) -> Vec<String> {
        let lines = self.read_until(timeout, |l| l.starts_with("bestmove"));
        assert_search_output(&self.position, &lines);
        lines
    }

    /// Sends a `go` command and waits for its `bestmove`; returns the lines read.
    pub fn go(&mut self, go: &str, timeout: Duration) -> Vec<String> {
        self.send(go);
        self.bestmove(timeout)
    }

    /// Lines that arrive within `wait` (used to check that nothing more comes).
    pub fn drain(&mut self, wait: Duration) -> Vec<String> {
        let deadline = Instant::now() + wait;
        let mut read = Vec::new();
        while let Ok(line) =
            self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.transcript.push(line.clone());
            read.push(line);
        }
        read
    }

    /// Waits up to `timeout` for the process to exit; returns its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the engine did not exit within {timeout:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends `quit` and waits for the process to exit; returns its exit code.
    pub fn quit(mut self) -> Option<i32> {
        self.send("quit");
        self.wait_exit(Duration::from_secs(10))
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The words of an `info` line after `key`, up to the next key.
fn field<'a>(words: &[&'a str], key: &str) -> Option<&'a str> {
    let i = words.iter().position(|&w| w == key)?;
    words.get(i + 1).copied()
}

/// Checks a search's output against the position searched (see the module's header).
pub fn assert_search_output(pos: &Chess, lines: &[String]) {
    let mut last_pv: Option<String> = None;
    for line in lines.iter().filter(|l| l.starts_with("info ") && !l.starts_with("info string")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let (Some(d), Some(s)) = (field(&words, "depth"), field(&words, "seldepth")) {
            let (d, s): (u32, u32) = (d.parse().unwrap(), s.parse().unwrap());
            assert!(s >= d, "seldepth below depth: {line}");
        }
        if field(&words, "nps").is_some() {
            assert_ne!(field(&words, "time"), Some("0"), "nps without time: {line}");
        }
        let Some(at) = words.iter().position(|&w| w == "pv") else { continue };
        let mut board = pos.clone();
        for text in &words[at + 1..] {
            let m = parse_move(&board, text)
                .unwrap_or_else(|| panic!("illegal move {text} in the PV of: {line}"));
            board.play_unchecked(m);
        }
        if field(&words, "multipv").is_none_or(|k| k == "1") {
            last_pv = words.get(at + 1).map(|m| m.to_string());
        }
    }
    if let (Some(pv), Some(bm)) = (last_pv, lines.iter().rev().find(|l| l.starts_with("bestmove")))
    {
        assert_eq!(
            bm.split_whitespace().nth(1),
            Some(pv.as_str()),
            "bestmove is not the PV's first move"
        );
    }
}

/// The move of a `bestmove` line.
pub fn best_move(lines: &[String]) -> String {
    let line = lines.iter().rev().find(|l| l.starts_with("bestmove")).expect("a bestmove line");
    line.split_whitespace().nth(1).expect("a move after bestmove").to_string()
}

/// Whether one of `lines` is an `info string` message that contains `text`.
pub fn says(lines: &[String], text: &str) -> bool {
    lines.iter().any(|l| l.starts_with("info string") && l.contains(text))
}

/// The value after `key` in the last `info` line that has a score.
pub fn last_info(lines: &[String], key: &str) -> Option<String> {
    let line = lines.iter().rev().find(|l| l.starts_with("info") && l.contains(" score "))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let i = words.iter().position(|&w| w == key)?;
    Some(words[i + 1..].join(" "))
}
