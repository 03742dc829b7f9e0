//! The pictures engine authors look at instead of logs, drawn as SVG: a training run's
//! curves (`nue train` redraws them after every epoch, `nue plot training` compares runs),
//! the history of the default nets (`nue plot nets`, from `nets/history.tsv`) and the
//! paths of a tune's parameters (`nue plot tune`, from its state file).

use std::{
    ops::Range,
    path::{Path, PathBuf},
};

use anyhow::{bail, ensure, Context, Result};
use plotters::{
    coord::{types::RangedCoordf64, Shift},
    prelude::*,
};

/// One line of a training run's `log.tsv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Epoch {
    /// 1-based epoch number.
    pub epoch: u32,
    /// Mean training loss over the epoch.
    pub train_loss: f64,
    /// Validation loss after the epoch.
    pub validation_loss: f64,
    /// Learning rate at the end of the epoch.
    pub lr: f64,
}

/// Reads a training log (`epoch`, `train_loss`, `validation_loss`, `lr`, … tab-separated,
/// one header line).
pub fn read_training_log(path: &Path) -> Result<Vec<Epoch>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut epochs = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.starts_with("epoch")) {
        let fields: Vec<&str> = line.split('\t').collect();
        let field = |i: usize| -> Result<f64> {
            let text = fields.get(i).with_context(|| format!("line {}: too few fields", n + 1))?;
            text.parse().with_context(|| format!("line {}: bad number {text:?}", n + 1))
        };
        epochs.push(Epoch {
            epoch: field(0)? as u32,
            train_loss: field(1)?,
            validation_loss: field(2)?,
            lr: field(3)?,
        });
    }
    ensure!(!epochs.is_empty(), "{} has no epochs", path.display());
    Ok(epochs)
}

/// A colour per run, distinct on a white page.
const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// A range that holds every value with a margin, never empty.
fn padded(values: impl Iterator<Item = f64> + Clone) -> Range<f64> {
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.fold(f64::NEG_INFINITY, f64::max);
    let margin = ((hi - lo) * 0.08).max(hi.abs().max(1e-9) * 1e-3);
    (lo - margin)..(hi + margin)
}

/// An axis label for whole numbers only (epochs).
fn whole(x: &f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        String::new()
    }
}

fn plot_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("drawing failed: {e}")
}

/// Draws the curves of training runs (each a name and its epochs) into an SVG at `out`:
/// train (dashed) and validation (solid) loss per epoch on the left, the learning rate
/// on the right, one colour per run.
pub fn training_curves(runs: &[(String, Vec<Epoch>)], out: &Path) -> Result<()> {
    ensure!(!runs.is_empty() && runs.iter().all(|(_, e)| !e.is_empty()), "no epochs to draw");
    let root = SVGBackend::new(out, (1100, 450)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let (left, right) = root.split_horizontally(700);
    let last = runs.iter().flat_map(|(_, e)| e.iter().map(|e| e.epoch)).max().unwrap_or(1);
    let epochs = 0.5..f64::from(last) + 0.5;
    let all = || runs.iter().flat_map(|(_, e)| e.iter());
    let losses = padded(all().flat_map(|e| [e.train_loss, e.validation_loss]));
    let mut loss = chart(&left, "loss (train dashed, validation solid)", epochs.clone(), losses)?;
    loss.configure_mesh()
        .light_line_style(WHITE)
        .x_desc("epoch")
        .x_labels(last as usize + 1)
        .y_desc("loss")
        .x_label_formatter(&whole)
        .y_label_formatter(&|y| format!("{y:.4}"))
        .draw()
        .map_err(plot_error)?;
    for (i, (name, run)) in runs.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points = |f: fn(&Epoch) -> f64| run.iter().map(move |e| (f64::from(e.epoch), f(e)));
        loss.draw_series(DashedLineSeries::new(points(|e| e.train_loss), 6, 4, colour.into()))
            .map_err(plot_error)?;
        loss.draw_series(LineSeries::new(points(|e| e.validation_loss), colour.stroke_width(2)))
            .map_err(plot_error)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2)));
        loss.draw_series(points(|e| e.validation_loss).map(|p| Circle::new(p, 3, colour.filled())))
            .map_err(plot_error)?;
    }
    loss.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(plot_error)?;

    let rates = padded(all().map(|e| e.lr).chain([0.0]));
    let mut lr = chart(&right, "learning rate", epochs, rates)?;
    lr.configure_mesh()
        .light_line_style(WHITE)
        .x_desc("epoch")
        .x_labels(last as usize + 1)
        .x_label_formatter(&whole)
        .y_label_formatter(&|y| format!("{y:.1e}"))
        .draw()
        .map_err(plot_error)?;
    for (i, (_, run)) in runs.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points = run.iter().map(|e| (f64::from(e.epoch), e.lr));
        lr.draw_series(LineSeries::new(points, colour.stroke_width(2))).map_err(plot_error)?;
    }
    root.present().map_err(plot_error)
}

type Chart<'a> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn chart<'a>(
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    caption: &str,
    x: Range<f64>,
    y: Range<f64>,
) -> Result<Chart<'a>> {
    ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y)
        .map_err(plot_error)
}

/// A run's name in a legend: its folder's.
pub fn run_name(dir: &Path) -> String {
    dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into())
}

/// Draws the curves of the runs in `dirs` (each a `nue train --out` folder with its
/// `log.tsv`), named by their folders.
pub fn compare_runs(dirs: &[PathBuf], out: &Path) -> Result<()> {
    let runs = dirs
        .iter()
        .map(|dir| Ok((run_name(dir), read_training_log(&dir.join("log.tsv"))?)))
        .collect::<Result<Vec<_>>>()?;
    training_curves(&runs, out)
}

/// An Elo difference with its 95 % error and the games it comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elo {
    /// The difference.
    pub elo: f64,
    /// Half the 95 % interval.
    pub error: f64,
    /// Games played.
    pub games: u32,
}

/// One row of the nets' history.
#[derive(Clone, Debug, PartialEq)]
pub struct NetRow {
    /// The net's name, `nn-<hash>`.
    pub name: String,
    /// Training positions seen along its lineage, millions.
    pub positions: f64,
    /// Against the default it replaced.
    pub previous: Option<Elo>,
    /// Against Stockfish 12's net, in the same search.
    pub stockfish: Option<Elo>,
}

/// Parses `+26.7 ± 13.8 (990)` (either minus sign), or `—` for none.
fn parse_elo(cell: &str) -> Result<Option<Elo>> {
    let cell = cell.trim().replace('−', "-");
    if cell == "—" || cell.is_empty() {
        return Ok(None);
    }
    let parse = || -> Option<Elo> {
        let (elo, rest) = cell.split_once('±')?;
        let (error, games) = rest.split_once('(')?;
        Some(Elo {
            elo: elo.trim().parse().ok()?,
            error: error.trim().parse().ok()?,
            games: games.trim().trim_end_matches(')').replace(',', "").parse().ok()?,
        })
    };
    parse().map(Some).with_context(|| format!("not an Elo figure: {cell:?}"))
}

/// The columns of `nets/history.tsv`, in order, as its header line names them.
pub const HISTORY_COLUMNS: [&str; 6] = [
    "net",
    "default",
    "positions seen (M)",
    "vs previous default",
    "vs Stockfish 12's net",
    "adopted",
];

/// Reads the nets' history, `nets/history.tsv`: a header line naming [`HISTORY_COLUMNS`],
/// then one tab-separated line per net that became the default, oldest first. A net is
/// `nn-` and twelve hex digits, listed once; `default` is `yes` on the last line and
/// `replaced` on every other; an Elo cell is `+26.7 ± 13.8 (990)` or `—`; `adopted` is a
/// date and a commit, `2026-11-26, b4ccfbd`. Anything else is refused, naming its line.
pub fn read_nets_history(text: &str) -> Result<Vec<NetRow>> {
    let mut lines = text.lines().zip(1..);
    let (header, _) = lines.next().context("the history is empty: no header line")?;
    ensure!(
        header == HISTORY_COLUMNS.join("\t"),
        "line 1: the header must be the columns {HISTORY_COLUMNS:?}, tab-separated; found {header:?}"
    );
    let mut rows: Vec<NetRow> = Vec::new();
    let mut defaults = Vec::new();
    for (line, n) in lines {
        let (row, default) = history_row(line).with_context(|| format!("line {n}"))?;
        ensure!(!rows.iter().any(|r| r.name == row.name), "line {n}: {} is listed twice", row.name);
        if default {
            defaults.push(n);
        }
        rows.push(row);
    }
    ensure!(!rows.is_empty(), "the history has a header and no nets");
    ensure!(
        defaults == [rows.len() + 1],
        "the last line, and only it, must be the default (`yes`); found `yes` on lines {defaults:?}"
    );
    Ok(rows)
}

/// One line of the nets' history, and whether it is the default (`yes`).
fn history_row(line: &str) -> Result<(NetRow, bool)> {
    let cells: Vec<&str> = line.split('\t').collect();
    ensure!(
        cells.len() == HISTORY_COLUMNS.len(),
        "{} tab-separated fields expected, found {}: {line:?}",
        HISTORY_COLUMNS.len(),
        cells.len()
    );
    let name = cells[0];
    let hex = name.strip_prefix("nn-").unwrap_or_default();
    ensure!(
        hex.len() == 12 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "net {name:?} is not `nn-` and twelve hex digits"
    );
    let default = match cells[1] {
        "yes" => true,
        "replaced" => false,
        other => bail!("default {other:?} is neither `yes` nor `replaced`"),
    };
    let positions: f64 =
        cells[2].parse().with_context(|| format!("bad positions {:?}", cells[2]))?;
    ensure!(positions.is_finite() && positions > 0.0, "bad positions {:?}", cells[2]);
    let is_date = |date: &str| {
        date.len() == 10
            && date.bytes().enumerate().all(|(i, b)| match i {
                4 | 7 => b == b'-',
                _ => b.is_ascii_digit(),
            })
    };
    let is_commit = |commit: &str| {
        (7..=40).contains(&commit.len()) && commit.bytes().all(|b| b.is_ascii_hexdigit())
    };
    ensure!(
        cells[5].split_once(", ").is_some_and(|(date, commit)| is_date(date) && is_commit(commit)),
        "adopted {:?} is not `YYYY-MM-DD, <commit>`",
        cells[5]
    );
    let row = NetRow {
        name: name.to_string(),
        positions,
        previous: parse_elo(cells[3])?,
        stockfish: parse_elo(cells[4])?,
    };
    Ok((row, default))
}

/// Draws the nets' history: above, each default's Elo against Stockfish 12's net; below,
/// what each gained on the default it replaced; both against the positions seen, with
/// their 95 % error bars.
pub fn nets_history(rows: &[NetRow], out: &Path) -> Result<()> {
    ensure!(!rows.is_empty(), "no nets to draw");
    let root = SVGBackend::new(out, (900, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let (top, bottom) = root.split_vertically(350);
    let x = padded(rows.iter().map(|r| r.positions).chain([0.0]));
    type Pick = fn(&NetRow) -> Option<Elo>;
    let panels: [(&DrawingArea<_, _>, &str, Pick, RGBColor); 2] = [
        (&top, "Elo against Stockfish 12's net (same search)", |r| r.stockfish, COLOURS[1]),
        (&bottom, "Elo against the previous default", |r| r.previous, COLOURS[0]),
    ];
    for (area, caption, pick, colour) in panels {
        let points: Vec<(f64, Elo)> =
            rows.iter().filter_map(|r| pick(r).map(|e| (r.positions, e))).collect();
        let y = padded(points.iter().flat_map(|(_, e)| [e.elo - e.error, e.elo + e.error, 0.0]));
        let mut c = chart(area, caption, x.clone(), y)?;
        c.configure_mesh()
            .light_line_style(WHITE)
            .x_desc("training positions seen (millions)")
            .y_desc("Elo")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(plot_error)?;
        c.draw_series(LineSeries::new([(x.start, 0.0), (x.end, 0.0)], BLACK.mix(0.4)))
            .map_err(plot_error)?;
        c.draw_series(points.iter().map(|&(p, e)| {
            ErrorBar::new_vertical(p, e.elo - e.error, e.elo, e.elo + e.error, colour.filled(), 8)
        }))
        .map_err(plot_error)?;
        c.draw_series(LineSeries::new(points.iter().map(|&(p, e)| (p, e.elo)), colour))
            .map_err(plot_error)?;
    }
    root.present().map_err(plot_error)
}

/// One tuned parameter's path, for [`tune_paths`].
#[derive(Clone, Debug, PartialEq)]
pub struct ParamPath {
    /// The parameter's name.
    pub name: String,
    /// Where the tune started it.
    pub start: f64,
    /// Its perturbation at the end of the tune: about the change games can tell apart.
    pub c_end: f64,
    /// Its value now.
    pub value: f64,
    /// (games played, value) from the start on.
    pub points: Vec<(f64, f64)>,
}

/// Panels per row of [`tune_paths`].
const TUNE_COLUMNS: usize = 4;

/// Draws a tune's parameters, one small panel each, four to a row: the value against the
/// games played (solid), the start (dashed) and a band of one `c_end` either side of it,
/// so that every panel shows how far its parameter moved in steps that games can tell
/// apart, whatever its units.
pub fn tune_paths(title: &str, paths: &[ParamPath], out: &Path) -> Result<()> {
    ensure!(!paths.is_empty(), "no parameters to draw");
    let rows = paths.len().div_ceil(TUNE_COLUMNS);
    let size = (TUNE_COLUMNS as u32 * 300, rows as u32 * 190 + 40);
    let root = SVGBackend::new(out, size).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let root = root.titled(title, ("sans-serif", 20)).map_err(plot_error)?;
    let games =
        paths.iter().flat_map(|p| p.points.iter().map(|&(g, _)| g)).fold(0.0, f64::max).max(1.0);
    for (path, area) in paths.iter().zip(root.split_evenly((rows, TUNE_COLUMNS)).iter()) {
        let band = (path.start - path.c_end, path.start + path.c_end);
        let y = padded(path.points.iter().map(|&(_, v)| v).chain([band.0, band.1]));
        let decimals = if y.end - y.start < 10.0 { 1 } else { 0 };
        let caption = format!("{}: {} → {:.1}", path.name, path.start, path.value);
        let mut c = ChartBuilder::on(area)
            .caption(caption, ("sans-serif", 13))
            .margin(6)
            .margin_right(16)
            .x_label_area_size(22)
            .y_label_area_size(44)
            .build_cartesian_2d(0.0..games, y)
            .map_err(plot_error)?;
        c.configure_mesh()
            .light_line_style(WHITE)
            .x_labels(4)
            .y_labels(5)
            .label_style(("sans-serif", 10))
            .x_label_formatter(&|x| games_label(*x))
            .y_label_formatter(&|y| format!("{y:.decimals$}"))
            .draw()
            .map_err(plot_error)?;
        let shade = COLOURS[0].mix(0.12).filled();
        c.draw_series([Rectangle::new([(0.0, band.0), (games, band.1)], shade)])
            .map_err(plot_error)?;
        let start = [(0.0, path.start), (games, path.start)];
        c.draw_series(DashedLineSeries::new(start, 4, 3, BLACK.mix(0.5).into()))
            .map_err(plot_error)?;
        c.draw_series(LineSeries::new(path.points.iter().copied(), COLOURS[1].stroke_width(2)))
            .map_err(plot_error)?;
    }
    root.present().map_err(plot_error)
}

/// A game count on an axis: `0`, `750`, `5k`, `12.5k`.
fn games_label(games: f64) -> String {
    if games.abs() < 1000.0 {
        format!("{games:.0}")
    } else {
        let k = format!("{:.1}", games / 1000.0);
        format!("{}k", k.trim_end_matches(".0"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_cells_parse() {
        let e = parse_elo("−175.0 ± 22 (600)").unwrap().unwrap();
        assert_eq!(e, Elo { elo: -175.0, error: 22.0, games: 600 });
        let e = parse_elo("+116.1 ± 33.8 (1,304)").unwrap().unwrap();
        assert_eq!(e, Elo { elo: 116.1, error: 33.8, games: 1304 });
        assert_eq!(parse_elo(" — ").unwrap(), None);
        assert!(parse_elo("+5 (10)").is_err());
    }

    const HEADER: &str =
        "net\tdefault\tpositions seen (M)\tvs previous default\tvs Stockfish 12's net\tadopted\n";

    #[test]
    fn the_history_file_parses() {
        let text = format!(
            "{HEADER}nn-1498f12fa96e\treplaced\t6.3\t—\t—\t2026-11-23, 87ca264\n\
             nn-5603a1be88b4\tyes\t20.1\t+116.1 ± 33.8 (1,304)\t−334.1 ± 57.0 (200)\t\
             2026-11-23, 9244a75\n"
        );
        let rows = read_nets_history(&text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].name.as_str(), rows[0].positions, rows[0].previous, rows[0].stockfish),
            ("nn-1498f12fa96e", 6.3, None, None)
        );
        assert_eq!(rows[1].previous.unwrap().games, 1304);
        assert_eq!(rows[1].stockfish.unwrap().elo, -334.1);
    }

    /// The error for a history of `HEADER` and `lines`.
    fn refusal(lines: &str) -> String {
        format!("{:#}", read_nets_history(&format!("{HEADER}{lines}")).unwrap_err())
    }

    #[test]
    fn a_malformed_history_is_refused_with_its_line() {
        let ok = "nn-1498f12fa96e\tyes\t6.3\t—\t—\t2026-11-23, 87ca264\n";
        assert!(read_nets_history(&format!("{HEADER}{ok}")).is_ok());
        assert!(format!("{:#}", read_nets_history("").unwrap_err()).contains("empty"));
        let markdown = "| net | default | positions seen (M) |\n";
        assert!(format!("{:#}", read_nets_history(markdown).unwrap_err()).contains("line 1"));
        assert!(refusal("").contains("no nets"));
        let cases = [
            ("nn-1498f12fa96e  yes\t6.3\t—\t—\t2026-11-23, 87ca264", "6 tab-separated"),
            ("nn-1498f12fa96\tyes\t6.3\t—\t—\t2026-11-23, 87ca264", "twelve hex digits"),
            ("nn-1498f12fa96e\tno\t6.3\t—\t—\t2026-11-23, 87ca264", "neither"),
            ("nn-1498f12fa96e\tyes\t6,3\t—\t—\t2026-11-23, 87ca264", "bad positions"),
            ("nn-1498f12fa96e\tyes\t6.3\t+5 (10)\t—\t2026-11-23, 87ca264", "not an Elo"),
            ("nn-1498f12fa96e\tyes\t6.3\t—\t—\t2026-11-23 87ca264", "YYYY-MM-DD"),
            ("nn-1498f12fa96e\tyes\t6.3\t—\t—\t23.11.2026, 87ca264", "YYYY-MM-DD"),
        ];
        for (line, why) in cases {
            let e = refusal(&format!("{line}\n"));
            assert!(e.contains("line 2") && e.contains(why), "{line:?}: {e}");
        }
        let e = refusal(&format!("{ok}{ok}"));
        assert!(e.contains("line 3") && e.contains("twice"), "{e}");
        let replaced = ok.replace("yes", "replaced");
        let e = refusal(&replaced);
        assert!(e.contains("only it"), "{e}");
        let e = refusal(&format!("{ok}{}", replaced.replace("1498", "5603")));
        assert!(e.contains("[2]"), "{e}");
    }

    /// The committed history parses, and its default is the net this build embeds.
    #[test]
    fn nets_history_tsv_names_the_default_net() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("nets/history.tsv");
        let text = std::fs::read_to_string(&path).unwrap();
        let rows = read_nets_history(&text).unwrap();
        // A build may embed another net for a try (`NUE_NET`); only the default's is checked.
        if option_env!("NUE_NET").is_none() {
            let embedded = crate::nnue::default_net::NAME;
            let last = &rows.last().unwrap().name;
            assert_eq!(
                format!("{last}.nnue"),
                embedded,
                "the last line of nets/history.tsv is not the default net (build.rs's DEFAULT_NET)"
            );
        }
    }

    #[test]
    fn a_training_log_reads_back_and_draws() {
        let dir = std::env::temp_dir().join(format!("nue-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("log.tsv");
        std::fs::write(
            &log,
            "epoch\ttrain_loss\tvalidation_loss\tlr\tseconds\tpositions_per_second\n\
             1\t0.040\t0.042\t8.0e-4\t10.0\t1000\n2\t0.038\t0.041\t2.0e-4\t10.0\t1000\n",
        )
        .unwrap();
        let epochs = read_training_log(&log).unwrap();
        assert_eq!(epochs.len(), 2);
        assert_eq!((epochs[1].epoch, epochs[1].validation_loss, epochs[1].lr), (2, 0.041, 2.0e-4));
        let out = dir.join("curves.svg");
        compare_runs(&[dir.clone(), dir.clone()], &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("learning rate"), "{}", &svg[..200]);
        std::fs::write(&log, "epoch\ttrain_loss\n1\tx\n").unwrap();
        assert!(read_training_log(&log).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
