//! Drives the `nue` binary over its stdin and stdout, as a GUI would.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc::{channel, Receiver, RecvTimeoutError},
    time::{Duration, Instant},
};

/// A running engine process.
pub struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Every line the engine printed so far.
    pub transcript: Vec<String>,
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
        Engine { child, stdin, lines, transcript: Vec::new() }
    }

    /// Sends one command line.
    pub fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").expect("the engine reads its input");
        self.stdin.flush().expect("flush");
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

    /// Sends a `go` command and waits for its `bestmove`; returns the lines read.
    pub fn go(&mut self, go: &str, timeout: Duration) -> Vec<String> {
        self.send(go);
        self.read_until(timeout, |l| l.starts_with("bestmove"))
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

    /// Sends `quit` and waits for the process to exit; returns its exit code.
    pub fn quit(mut self) -> Option<i32> {
        self.send("quit");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the engine did not quit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
