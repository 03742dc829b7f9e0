//! Quantisation: the integer grid on which the Stockfish 12 format stores each parameter
//! (docs/net-format.md §10.2), the limits that keep the float parameters on it, and the
//! conversions between the float parameters and the integer [`Network`], both ways.
//!
//! The model (`model.rs`) computes with its parameters snapped to this grid ([`on_grid`],
//! [`ft_on_grid`]) and rounds its hidden activations as the integer net does
//! ([`activation`]), so that exporting ([`network`]) only reads the integers off.

use bytemuck::Zeroable;

use super::layout::{Dense, Row, INTERNAL_PER_FLOAT_OUTPUT};
use crate::nnue::{
    features::{BLOCK, INPUTS},
    simd::{l1_grouping, HiddenWeights, HIDDEN, L1_IN},
    Aligned, Half, Network, DESCRIPTION, HALF, RAW_PER_INTERNAL,
};

/// Hidden weights must fit an i8 after ×64 (docs/net-format.md §10.2).
pub const HIDDEN_WEIGHT_LIMIT: f32 = 127.0 / 64.0;
/// Output weights must fit an i8 after ×9600/127.
pub const OUTPUT_WEIGHT_LIMIT: f32 = 127.0 * 127.0 / 9600.0;
/// Each of the three summands of a coalesced FT weight stays within a third of what an
/// i16 holds after ×127, so their sum always fits.
pub const FT_WEIGHT_LIMIT: f32 = 32767.0 / 127.0 / 3.0;

/// Scales of the integer net (docs/net-format.md §10.2): a parameter `x` is stored as
/// `round(x · scale)`.
const FT_SCALE: f32 = 127.0;
const HIDDEN_WEIGHT_SCALE: f32 = 64.0;
const HIDDEN_BIAS_SCALE: f32 = 64.0 * 127.0;
const OUT_BIAS_SCALE: f32 = INTERNAL_PER_FLOAT_OUTPUT * RAW_PER_INTERNAL as f32; // 9600
const OUT_WEIGHT_SCALE: f32 = OUT_BIAS_SCALE / 127.0;

/// `x` moved to the nearest value the integer net can store at `scale`, within `lo..=hi`
/// integer steps.
#[inline(always)]
fn snap(x: f32, scale: f32, lo: f32, hi: f32) -> f32 {
    (x * scale).round_ties_even().clamp(lo, hi) / scale
}

/// A feature-transformer weight or bias moved to the nearest value the integer net can
/// store: an i16 at scale 127.
#[inline(always)]
pub fn ft_on_grid(x: f32) -> f32 {
    snap(x, FT_SCALE, -32768.0, 32767.0)
}

/// The integer of a value already on the grid of `scale`.
#[inline]
fn integer(x: f32, scale: f32) -> f64 {
    (f64::from(x) * f64::from(scale)).round()
}

/// A hidden activation as the integer net computes it: `(sum + 32) >> 6`, clamped to
/// 0..=127, which is `floor(127 z + ½)` for the float pre-activation `z`.
#[inline(always)]
pub fn activation(z: f32) -> f32 {
    (z * 127.0 + 0.5).floor().clamp(0.0, 127.0) / 127.0
}

/// The dense parameters `d` as the integer net stores them (still as floats).
pub fn on_grid(d: &Dense) -> Box<Dense> {
    let hidden_w = |w: f32| snap(w, HIDDEN_WEIGHT_SCALE, -128.0, 127.0);
    let hidden_b = |b: f32| snap(b, HIDDEN_BIAS_SCALE, -1e9, 1e9);
    let mut q = Box::new(*d);
    q.ft_b.iter_mut().flatten().for_each(|b| *b = ft_on_grid(*b));
    q.l1_w.iter_mut().flatten().for_each(|w| *w = hidden_w(*w));
    q.l2_w.iter_mut().flatten().for_each(|w| *w = hidden_w(*w));
    q.l1_b = q.l1_b.map(hidden_b);
    q.l2_b = q.l2_b.map(hidden_b);
    q.out_w = q.out_w.map(|w| snap(w, OUT_WEIGHT_SCALE, -128.0, 127.0));
    q.out_b = snap(q.out_b, OUT_BIAS_SCALE, -1e9, 1e9);
    q
}

/// The integer network of dense parameters already on the grid (`d`, see [`on_grid`]) and
/// the coalesced real rows of the feature transformer, which fold the factoriser in
/// (docs/net-format.md §10.2, §10.3). It only reads the integers off.
pub fn network(d: &Dense, coalesced: &[Row]) -> Box<Network> {
    let i16_of = |x: f32| integer(x, FT_SCALE) as i16;
    let i8_of = |x: f32, scale: f32| integer(x, scale) as i8;
    let i32_of = |x: f32, scale: f32| integer(x, scale) as i32;

    let mut ft_bias = Half([0; HALF]);
    for (o, &b) in ft_bias.0.iter_mut().zip(d.ft_b.iter().flatten()) {
        *o = i16_of(b);
    }
    let mut ft_weights = vec![Half([0; HALF]); INPUTS].into_boxed_slice();
    for (row, (dst, src)) in ft_weights.iter_mut().zip(coalesced).enumerate() {
        if row % BLOCK == 0 {
            continue; // the unused slot of each king block stays zero
        }
        for (o, &w) in dst.0.iter_mut().zip(src.iter().flatten()) {
            *o = i16_of(w);
        }
    }
    let mut l1_weights = Box::new(Aligned([0i8; HIDDEN * L1_IN]));
    for (i, row) in d.l1_w.iter().enumerate() {
        for (o, &w) in row.iter().enumerate() {
            l1_weights.0[o * L1_IN + i] = i8_of(w, HIDDEN_WEIGHT_SCALE);
        }
    }
    let mut l2_weights = [0i8; HIDDEN * HIDDEN];
    for (i, row) in d.l2_w.iter().enumerate() {
        for (o, &w) in row.iter().enumerate() {
            l2_weights[o * HIDDEN + i] = i8_of(w, HIDDEN_WEIGHT_SCALE);
        }
    }
    // The integer layers floor with `>> 6`; half a step (32) in the bias makes that the
    // rounding [`activation`] models.
    let hidden_bias = |b: f32| i32_of(b, HIDDEN_BIAS_SCALE) + 32;
    Box::new(Network {
        description: DESCRIPTION.to_string(),
        ft_bias,
        ft_weights,
        l1_bias: d.l1_b.map(hidden_bias),
        l1_grouping: l1_grouping(&l1_weights.0),
        l1_weights,
        l2_bias: d.l2_b.map(hidden_bias),
        l2_weights: HiddenWeights::new(l2_weights),
        out_bias: i32_of(d.out_b, OUT_BIAS_SCALE),
        out_weights: d.out_w.map(|w| i8_of(w, OUT_WEIGHT_SCALE)),
    })
}

/// A feature-transformer weight of an integer net as a float weight, within
/// [`FT_WEIGHT_LIMIT`]: the net's rows become the real rows of a model whose factoriser
/// rows are zero.
pub fn float_ft_weight(w: i16) -> f32 {
    (f32::from(w) / FT_SCALE).clamp(-FT_WEIGHT_LIMIT, FT_WEIGHT_LIMIT)
}

/// The dense parameters of an integer net as floats: the inverse of [`network`] for them.
pub fn float_dense(net: &Network) -> Box<Dense> {
    let mut d = Box::new(Dense::zeroed());
    for (b, &q) in d.ft_b.iter_mut().flatten().zip(&net.ft_bias.0) {
        *b = f32::from(q) / FT_SCALE;
    }
    // `network` adds half a step (32) to the hidden biases for the `>> 6` rounding.
    let hidden_bias = |b: i32| (b - 32) as f32 / HIDDEN_BIAS_SCALE;
    let hidden_weight = |w: i8| f32::from(w) / HIDDEN_WEIGHT_SCALE;
    for (i, row) in d.l1_w.iter_mut().enumerate() {
        *row = std::array::from_fn(|o| hidden_weight(net.l1_weights.0[o * L1_IN + i]));
    }
    for (i, row) in d.l2_w.iter_mut().enumerate() {
        *row = std::array::from_fn(|o| hidden_weight(net.l2_weights.rows()[o * HIDDEN + i]));
    }
    d.l1_b = net.l1_bias.map(hidden_bias);
    d.l2_b = net.l2_bias.map(hidden_bias);
    d.out_w = net.out_weights.map(|w| f32::from(w) / OUT_WEIGHT_SCALE);
    d.out_b = net.out_bias as f32 / OUT_BIAS_SCALE;
    d
}
