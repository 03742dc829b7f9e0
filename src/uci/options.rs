//! The UCI options, declared once: the table drives both the `uci` listing and the
//! parsing of `setoption`, so an option cannot be listed without being handled.

use std::fmt;

use crate::{
    engine::{Settings, DEFAULT_HASH_MB},
    search::{
        params::{self, PARAMS},
        strength,
    },
};

/// The kind of an option, with its default and bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer in `min..=max`.
    Spin { default: i64, min: i64, max: i64 },
    /// `true` or `false`.
    Check { default: bool },
    /// An action without a value.
    Button,
    /// Free text (`<empty>` stands for the empty string, as GUIs send it).
    Text { default: &'static str },
}

/// Every option Nue understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Name {
    /// Hash table size in MiB.
    Hash,
    /// Search threads.
    Threads,
    /// Empties the hash table.
    ClearHash,
    /// Whether the GUI may ask for pondering (informational).
    Ponder,
    /// Principal variations to report.
    MultiPv,
    /// Milliseconds kept back from every move.
    MoveOverhead,
    /// A `.nnue` file to use instead of the embedded net.
    EvalFile,
    /// Chess960 castling notation and FENs.
    Chess960,
    /// Win/draw/loss statistics in `info`.
    ShowWdl,
    /// Whether play is weakened to `UCI_Elo`.
    LimitStrength,
    /// The rating to play at when limited.
    Elo,
    /// Folders of Syzygy tablebases.
    SyzygyPath,
    /// Shallowest depth at which the search probes the tables.
    SyzygyProbeDepth,
    /// Most pieces of a probed position.
    SyzygyProbeLimit,
    /// Whether the tables' wins respect the fifty-move rule.
    Syzygy50MoveRule,
    /// A search or time parameter, by its index in `params::PARAMS` (tune builds only).
    Param(usize),
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// The option.
    pub name: Name,
    /// Its name in the protocol.
    pub uci_name: &'static str,
    /// Its type, default and bounds.
    pub kind: Kind,
}

/// Largest hash table offered, MiB.
pub const MAX_HASH_MB: i64 = 1 << 20;
/// Most search threads.
pub const MAX_THREADS: i64 = 1024;
/// Whether `UCI_Chess960` is on in a new session.
pub const DEFAULT_CHESS960: bool = false;
/// Whether `UCI_ShowWDL` is on in a new session.
pub const DEFAULT_SHOW_WDL: bool = false;

/// The engine's default settings, where the table reads its defaults.
const ENGINE: Settings = Settings::DEFAULT;

/// The option table, in the order `uci` lists it. The defaults are the engine's
/// ([`Settings::DEFAULT`], [`DEFAULT_HASH_MB`]) and the session's own ([`DEFAULT_CHESS960`],
/// [`DEFAULT_SHOW_WDL`]), not written here.
pub const OPTIONS: [Spec; 15] = [
    Spec {
        name: Name::Hash,
        uci_name: "Hash",
        kind: Kind::Spin { default: DEFAULT_HASH_MB as i64, min: 1, max: MAX_HASH_MB },
    },
    Spec {
        name: Name::Threads,
        uci_name: "Threads",
        kind: Kind::Spin { default: ENGINE.threads as i64, min: 1, max: MAX_THREADS },
    },
    Spec { name: Name::ClearHash, uci_name: "Clear Hash", kind: Kind::Button },
    Spec { name: Name::Ponder, uci_name: "Ponder", kind: Kind::Check { default: false } },
    Spec {
        name: Name::MultiPv,
        uci_name: "MultiPV",
        kind: Kind::Spin { default: ENGINE.multipv as i64, min: 1, max: 256 },
    },
    Spec {
        name: Name::MoveOverhead,
        uci_name: "Move Overhead",
        kind: Kind::Spin { default: ENGINE.move_overhead as i64, min: 0, max: 5000 },
    },
    Spec { name: Name::EvalFile, uci_name: "EvalFile", kind: Kind::Text { default: "<default>" } },
    Spec {
        name: Name::Chess960,
        uci_name: "UCI_Chess960",
        kind: Kind::Check { default: DEFAULT_CHESS960 },
    },
    Spec {
        name: Name::ShowWdl,
        uci_name: "UCI_ShowWDL",
        kind: Kind::Check { default: DEFAULT_SHOW_WDL },
    },
    Spec {
        name: Name::LimitStrength,
        uci_name: "UCI_LimitStrength",
        kind: Kind::Check { default: ENGINE.limit_strength },
    },
    Spec {
        name: Name::Elo,
        uci_name: "UCI_Elo",
        kind: Kind::Spin {
            default: ENGINE.elo as i64,
            min: strength::MIN_ELO as i64,
            max: strength::MAX_ELO as i64,
        },
    },
    Spec {
        name: Name::SyzygyPath,
        uci_name: "SyzygyPath",
        kind: Kind::Text { default: "<empty>" },
    },
    Spec {
        name: Name::SyzygyProbeDepth,
        uci_name: "SyzygyProbeDepth",
        kind: Kind::Spin { default: ENGINE.syzygy_probe_depth as i64, min: 1, max: 100 },
    },
    Spec {
        name: Name::SyzygyProbeLimit,
        uci_name: "SyzygyProbeLimit",
        kind: Kind::Spin { default: ENGINE.syzygy_probe_limit as i64, min: 0, max: 7 },
    },
    Spec {
        name: Name::Syzygy50MoveRule,
        uci_name: "Syzygy50MoveRule",
        kind: Kind::Check { default: ENGINE.syzygy_fifty_move_rule },
    },
];

/// The options of the search and time parameters: in a build with the `tune` feature
/// every parameter, listed by `uci` after the table above; otherwise none.
pub fn tunables() -> impl Iterator<Item = Spec> {
    let listed = if cfg!(feature = "tune") { PARAMS.len() } else { 0 };
    PARAMS.iter().enumerate().take(listed).map(|(i, p)| Spec {
        name: Name::Param(i),
        uci_name: p.name,
        kind: Kind::Spin {
            default: i64::from(params::get(i)),
            min: i64::from(p.min),
            max: i64::from(p.max),
        },
    })
}

/// A parsed option value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// For spin options, within the option's range.
    Int(i64),
    /// For check options.
    Bool(bool),
    /// For buttons.
    Pressed,
    /// For text options (`<empty>` turned into "").
    Text(String),
}

/// A `setoption` that can be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// Which option.
    pub name: Name,
    /// Its new value.
    pub value: Value,
}

impl fmt::Display for Spec {
    /// The `option ...` line of the `uci` listing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "option name {} type ", self.uci_name)?;
        match self.kind {
            Kind::Spin { default, min, max } => {
                write!(f, "spin default {default} min {min} max {max}")
            }
            Kind::Check { default } => write!(f, "check default {default}"),
            Kind::Button => write!(f, "button"),
            Kind::Text { default } => write!(f, "string default {default}"),
        }
    }
}

/// Parses the words after `setoption`: `name <id...> [value <x...>]`. The name is matched
/// without regard to case, as the protocol asks. A value out of the option's range is
/// refused, like any other bad value: the option keeps the value it had.
pub fn parse(words: &[&str]) -> Result<Setting, String> {
    if words.first() != Some(&"name") {
        return Err("expected 'setoption name <id> [value <x>]'".to_string());
    }
    let split = words.iter().position(|&w| w == "value").unwrap_or(words.len());
    let name = words[1..split].join(" ");
    let value = words.get(split + 1..).map(|v| v.join(" "));
    let spec = OPTIONS
        .iter()
        .copied()
        .chain(tunables())
        .find(|s| s.uci_name.eq_ignore_ascii_case(&name))
        .ok_or_else(|| format!("unknown option '{name}'"))?;
    let need_value = || {
        value
            .clone()
            .filter(|v| !v.is_empty())
            .ok_or(format!("option {} needs a value", spec.uci_name))
    };
    let value = match spec.kind {
        Kind::Spin { min, max, .. } => {
            let text = need_value()?;
            let n: i128 = text
                .parse()
                .map_err(|_| format!("option {} takes an integer, not '{text}'", spec.uci_name))?;
            if n < i128::from(min) || n > i128::from(max) {
                return Err(format!(
                    "{} {n} is out of range {min}..{max}; the option is unchanged",
                    spec.uci_name
                ));
            }
            Value::Int(n as i64)
        }
        Kind::Check { .. } => {
            let text = need_value()?;
            match text.to_ascii_lowercase().as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => {
                    return Err(format!(
                        "option {} takes true or false, not '{text}'",
                        spec.uci_name
                    ))
                }
            }
        }
        Kind::Button => Value::Pressed,
        Kind::Text { .. } => {
            let text = value.unwrap_or_default();
            Value::Text(if text == "<empty>" { String::new() } else { text })
        }
    };
    Ok(Setting { name: spec.name, value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn names_with_spaces_and_any_case() {
        let s = parse(&words("name move overhead value 50")).unwrap();
        assert_eq!((s.name, s.value), (Name::MoveOverhead, Value::Int(50)));
        let s = parse(&words("name Clear Hash")).unwrap();
        assert_eq!((s.name, s.value), (Name::ClearHash, Value::Pressed));
        let s = parse(&words("name EvalFile value /tmp/my net.nnue")).unwrap();
        assert_eq!(s.value, Value::Text("/tmp/my net.nnue".into()));
        let s = parse(&words("name SyzygyPath value <empty>")).unwrap();
        assert_eq!(s.value, Value::Text(String::new()));
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(parse(&words("name Hash value lots")).unwrap_err().contains("integer"));
        assert!(parse(&words("name Hash")).unwrap_err().contains("needs a value"));
        assert!(parse(&words("name Ponder value maybe")).unwrap_err().contains("true or false"));
        assert!(parse(&words("name Nonsense value 1")).unwrap_err().contains("unknown option"));
        assert!(parse(&words("value 1")).is_err());
        let e = parse(&words("name Threads value -5")).unwrap_err();
        assert!(e.contains("out of range 1..1024"), "{e}");
        let e = parse(&words("name Hash value 99999999999999999999999")).unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        // The bounds themselves are fine.
        assert_eq!(parse(&words("name Hash value 1")).unwrap().value, Value::Int(1));
        let s = parse(&words(&format!("name Threads value {MAX_THREADS}"))).unwrap();
        assert_eq!(s.value, Value::Int(MAX_THREADS));
    }

    #[test]
    fn listing_uses_lowercase_defaults() {
        let lines: Vec<String> = OPTIONS.iter().map(ToString::to_string).collect();
        assert!(lines.contains(&"option name Ponder type check default false".to_string()));
        assert!(
            lines.contains(&"option name Hash type spin default 16 min 1 max 1048576".to_string())
        );
        assert!(lines.contains(&"option name Clear Hash type button".to_string()));
    }

    #[cfg(not(feature = "tune"))]
    #[test]
    fn a_normal_build_offers_no_parameters() {
        assert_eq!(tunables().count(), 0);
        assert!(parse(&words("name rfp_margin value 150")).unwrap_err().contains("unknown option"));
    }

    #[cfg(feature = "tune")]
    #[test]
    fn a_tune_build_offers_every_parameter_in_its_range() {
        assert_eq!(tunables().count(), PARAMS.len());
        let i = params::find("rfp_margin").unwrap();
        let line = tunables().nth(i).unwrap().to_string();
        assert_eq!(line, "option name rfp_margin type spin default 180 min 80 max 300");
        let s = parse(&words("name RFP_Margin value 150")).unwrap();
        assert_eq!((s.name, s.value), (Name::Param(i), Value::Int(150)));
        assert!(parse(&words("name rfp_margin value 301")).unwrap_err().contains("out of range"));
    }
}
