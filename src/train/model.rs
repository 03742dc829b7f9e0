//! The float model of HalfKP 256x2-32-32-1 and its training step: the forward pass, the
//! backward pass and Adam. Its shapes are in `layout.rs`, the integer grid it trains on and
//! its export into the integer network in `quantize.rs`, and its hot loops run through the
//! `simd` module's kernels.
//!
//! Layout. The feature transformer has 41,024 real inputs plus the factoriser's 64 "HalfK"
//! and 640 "P" virtual inputs (docs/net-format.md §10.3). Its weights are stored in eight
//! column chunks of 32 lanes (`[chunk][row][32]`), so the sparse backward pass and the
//! optimiser can run on the chunks in parallel without sharing a byte. The forward pass
//! reads the coalesced rows `E[f] = W[f] + W[K(f)] + W[P(f)]`, so each active feature costs
//! one row, as in inference. A step changes every row (the factoriser's rows reach all of
//! them), but a batch reads only the rows of its own features, about two fifths of them:
//! each training step brings just those up to date before its forward pass, and
//! [`Model::sync`] the rest when the whole model is read (validation, export).
//!
//! Because every feature of a perspective shares its king block, the factoriser's
//! gradients follow from the real ones: `dK[k] = Σ_{f in block k} dW[f]` (the K input's
//! value is the piece count) and `dP[p] = Σ_k dW[641k + 1 + p]`.
//!
//! Quantisation-aware: the forward pass computes with every parameter snapped to the grid
//! the integer net stores it on (`quantize.rs`: FT weights and biases in steps of 1/127,
//! hidden weights 1/64, ...), and rounds the hidden activations as the integer net's `>> 6`
//! does; the gradients pass straight through the rounding to the float parameters, which
//! Adam updates. The exported net then computes what the model computed, up to the last
//! rounding, instead of drifting from it by tens of internal units.
//!
//! The hidden layers keep their weights input-major (`w[i][o]`) so that a zero input, which
//! half of them are after the clamp, is skipped in both directions. Every vector is a
//! `[f32; 32]`, which LLVM keeps in registers and vectorises (see the `simd` module).

// Lane loops index several arrays in lockstep; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use std::ops::Range;

use arrayvec::ArrayVec;
use bytemuck::Zeroable;
use rayon::prelude::*;

use super::{
    data::Batch,
    layout::{
        Dense, Lanes, Row, CHUNKS, FT_ROWS, INTERNAL_PER_FLOAT_OUTPUT, K_BASE, LANES, VIRTUAL,
    },
    quantize::{self, activation, FT_WEIGHT_LIMIT, HIDDEN_WEIGHT_LIMIT, OUTPUT_WEIGHT_LIMIT},
    simd::{self, Kernel},
};
use crate::{
    nnue::{
        features::{BLOCK, INPUTS, MAX_ACTIVE},
        simd::{HIDDEN, L1_IN},
        Network, HALF,
    },
    rng::Rng,
};

/// Hyper-parameters of one optimiser step.
#[derive(Clone, Copy, Debug)]
pub struct StepParams {
    /// Learning rate of this step.
    pub lr: f32,
    /// Blend between the search score (1.0) and the game result (0.0) as the target.
    pub lambda: f32,
    /// Sigmoid scale in internal units: win probability = σ(eval / scale).
    pub scale: f32,
    /// What the step minimises.
    pub objective: Objective,
}

/// What training minimises, per position, between the predicted win probability σ(q)
/// and the target probability p.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Objective {
    /// Binary cross-entropy minus the target's entropy: zero for a perfect prediction.
    CrossEntropy,
    /// |σ(q) − p|^e for an exponent e > 1: above 2, large errors weigh more and small
    /// ones less than in the cross-entropy (nnue-pytorch trains with e = 2.5).
    Power(f32),
}

impl Objective {
    /// The loss of prediction `q` (a logit) against target probability `p`.
    fn value(self, p: f32, q: f32) -> f64 {
        match self {
            Objective::CrossEntropy => relative_entropy(p, q),
            Objective::Power(e) => f64::from(sigmoid(q) - p).abs().powf(f64::from(e)),
        }
    }

    /// The derivative of [`Objective::value`] by `q`.
    #[inline(always)]
    fn slope(self, p: f32, q: f32) -> f32 {
        let s = sigmoid(q);
        match self {
            Objective::CrossEntropy => s - p,
            Objective::Power(e) => {
                let d = s - p;
                e * d.abs().powf(e - 1.0) * d.signum() * s * (1.0 - s)
            }
        }
    }
}

/// Adam's constants and the bias-corrected step size of the current step.
#[derive(Clone, Copy)]
pub struct Adam {
    lr: f32,
}

impl Adam {
    const BETA1: f32 = 0.9;
    const BETA2: f32 = 0.999;
    const EPS: f32 = 1e-8;

    fn new(lr: f32, step: u64) -> Adam {
        let t = step as f64;
        let correction =
            (1.0 - f64::from(Self::BETA2).powf(t)).sqrt() / (1.0 - f64::from(Self::BETA1).powf(t));
        Adam { lr: (f64::from(lr) * correction) as f32 }
    }

    #[inline(always)]
    fn update(self, w: &mut f32, g: f32, m: &mut f32, v: &mut f32, limit: f32) {
        *m = Self::BETA1 * *m + (1.0 - Self::BETA1) * g;
        *v = Self::BETA2 * *v + (1.0 - Self::BETA2) * g * g;
        *w = (*w - self.lr * *m / (v.sqrt() + Self::EPS)).clamp(-limit, limit);
    }

    #[inline(always)]
    fn update_lanes(self, w: &mut Lanes, g: &Lanes, m: &mut Lanes, v: &mut Lanes, limit: f32) {
        for j in 0..LANES {
            self.update(&mut w[j], g[j], &mut m[j], &mut v[j], limit);
        }
    }
}

/// One column chunk of the feature transformer with its optimiser state.
#[derive(Clone)]
pub struct Chunk {
    /// Trained weights: the real rows, then the virtual ones.
    pub weights: Vec<Lanes>,
    /// Gradient of the real rows in the current batch.
    grad: Vec<Lanes>,
    /// Gradient of the virtual rows, derived from `grad` in each step.
    virt_grad: Vec<Lanes>,
    /// Adam's first and second moments.
    m: Vec<Lanes>,
    v: Vec<Lanes>,
}

/// The float network plus Adam state.
#[derive(Clone)]
pub struct Model {
    /// The feature transformer in column chunks.
    pub chunks: Vec<Chunk>,
    /// Coalesced real rows `W[f] + W[K(f)] + W[P(f)]`, all 256 lanes of a row together,
    /// which is what the forward pass reads (one contiguous kilobyte per feature).
    coalesced: Vec<Row>,
    /// The coalesced rows lag the weights: a step was taken since the last
    /// [`Model::coalesce`]. Only a training step's own rows are then up to date.
    stale: bool,
    /// Everything after the feature transformer's weights.
    pub dense: Box<Dense>,
    /// `dense` on the integer grid: what the forward pass uses (see [`Model::forward`]).
    on_grid: Box<Dense>,
    dense_m: Box<Dense>,
    dense_v: Box<Dense>,
    /// Optimiser steps taken.
    pub steps: u64,
    /// Whether the forward pass computes with parameters on the integer grid and rounds
    /// the hidden activations as the integer net does (the default); when off, it is the
    /// plain float function, which the gradient check differentiates.
    pub quantization_aware: bool,
    /// Buffers of the training step, kept between steps: allocating and freeing them
    /// every step costs more than the arithmetic (the kernel unmaps large blocks with
    /// inter-processor interrupts).
    scratch: Scratch,
}

/// Reused buffers of [`Model::train_step`] (a clone starts with empty ones).
#[derive(Default)]
struct Scratch {
    /// Per-position accumulator gradients.
    d_acc: Vec<[Lanes; 2 * CHUNKS]>,
    /// Dense gradients and losses of each slice of the batch; the first gradient then
    /// takes the sum of all.
    slice_grads: Vec<Dense>,
    slice_losses: Vec<Loss>,
    /// The first layer's weights, output-major.
    l1_wt: Vec<[Lanes; 2 * CHUNKS]>,
    /// Feature-transformer rows used by the batch.
    touched: Vec<bool>,
    rows: Vec<usize>,
}

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Scratch::default()
    }
}

/// Loss of a set of positions: the sum over positions of `CE(target, prediction) −
/// H(target)`, which is zero for a perfect prediction.
#[derive(Clone, Copy, Debug, Default)]
pub struct Loss {
    /// Sum of per-position losses.
    pub sum: f64,
    /// Number of positions.
    pub count: usize,
}

impl Loss {
    /// The mean loss.
    pub fn mean(&self) -> f64 {
        self.sum / self.count.max(1) as f64
    }
    /// Adds another set's loss.
    pub fn add(&mut self, other: Loss) {
        self.sum += other.sum;
        self.count += other.count;
    }
}

#[inline]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[inline(always)]
fn add(acc: &mut Lanes, x: &Lanes) {
    for j in 0..LANES {
        acc[j] += x[j];
    }
}

#[inline(always)]
fn axpy(y: &mut Lanes, a: f32, x: &Lanes) {
    for j in 0..LANES {
        y[j] += a * x[j];
    }
}

/// Dot product with eight independent partial sums: a fixed order, so results reproduce,
/// and a shape the compiler keeps in one vector register.
#[inline(always)]
fn dot(a: &Lanes, b: &Lanes) -> f32 {
    let mut s = [0f32; 8];
    for j in 0..LANES {
        s[j % 8] += a[j] * b[j];
    }
    s.iter().sum()
}

#[inline(always)]
fn clamp01(x: f32) -> f32 {
    x.clamp(0.0, 1.0)
}

/// Derivative of the clamp: 1 strictly inside (0, 1), else 0.
#[inline(always)]
fn inside(x: f32) -> bool {
    x > 0.0 && x < 1.0
}

/// Binary cross-entropy of prediction `q` (a logit) against target probability `p`, minus
/// the target's entropy.
fn relative_entropy(p: f32, q: f32) -> f64 {
    let (p, q) = (f64::from(p), f64::from(q));
    let log_sig = -(1.0 + (-q).exp()).ln(); // ln σ(q)
    let log_sig_neg = log_sig - q; // ln σ(−q)
    let h = |x: f64| {
        if x <= 0.0 || x >= 1.0 {
            0.0
        } else {
            -(x * x.ln() + (1.0 - x) * (1.0 - x).ln())
        }
    };
    -(p * log_sig + (1.0 - p) * log_sig_neg) - h(p)
}

/// The target probability of a position: λ·σ(score/scale) + (1−λ)·result.
#[inline]
pub fn target(score: f32, result: f32, lambda: f32, scale: f32) -> f32 {
    lambda * sigmoid(score / scale) + (1.0 - lambda) * result
}

/// Activations of one position, kept for the backward pass. `acc` holds both
/// accumulators before the clamp, side to move first; `active` lists the inputs of the
/// first hidden layer that are not zero after the clamp (about half of them), with their
/// values, so that both passes skip the zeros without a branch per input.
struct Activations {
    acc: [Lanes; 2 * CHUNKS],
    active: usize,
    active_index: [u16; L1_IN],
    active_value: [f32; L1_IN],
    z1: Lanes,
    h1: Lanes,
    z2: Lanes,
    h2: Lanes,
    out: f32,
}

impl Model {
    /// A freshly initialised model: uniform weights of the usual fan-in scale, virtual
    /// factoriser inputs at zero (so the coalesced net starts as the plain one).
    pub fn new(seed: u64) -> Model {
        let mut rng = Rng::new(seed);
        let mut uniform = |bound: f32| (rng.unit_f32() * 2.0 - 1.0) * bound;
        // An accumulator sums about 30 rows; scale them so it starts around ±0.5.
        let ft_bound = 0.5 / (MAX_ACTIVE as f32).sqrt();
        let mut rows = vec![[[0f32; LANES]; CHUNKS]; FT_ROWS];
        for row in &mut rows[..INPUTS] {
            row.iter_mut().flatten().for_each(|w| *w = uniform(ft_bound));
        }
        let mut dense = Box::new(Dense::zeroed());
        dense.ft_b.iter_mut().flatten().for_each(|b| *b = 0.25 + uniform(0.25));
        let bound = 1.0 / (L1_IN as f32).sqrt();
        dense.l1_w.iter_mut().flatten().for_each(|w| *w = uniform(bound));
        let bound = 1.0 / (HIDDEN as f32).sqrt();
        dense.l2_w.iter_mut().flatten().for_each(|w| *w = uniform(bound));
        dense.out_w.iter_mut().for_each(|w| *w = uniform(bound));
        let chunks = (0..CHUNKS)
            .map(|c| Chunk {
                weights: rows.iter().map(|r| r[c]).collect(),
                grad: vec![[0f32; LANES]; INPUTS],
                virt_grad: vec![[0f32; LANES]; VIRTUAL],
                m: vec![[0f32; LANES]; FT_ROWS],
                v: vec![[0f32; LANES]; FT_ROWS],
            })
            .collect();
        let mut model = Model {
            chunks,
            coalesced: vec![[[0f32; LANES]; CHUNKS]; INPUTS],
            stale: true,
            on_grid: quantize::on_grid(&dense),
            dense,
            dense_m: Box::new(Dense::zeroed()),
            dense_v: Box::new(Dense::zeroed()),
            steps: 0,
            quantization_aware: true,
            scratch: Scratch::default(),
        };
        model.coalesce();
        model
    }

    /// Rebuilds the coalesced rows from the chunks' weights, in parallel over blocks of
    /// rows.
    pub fn coalesce(&mut self) {
        self.coalesce_rows(None);
        self.stale = false;
    }

    /// Brings the coalesced rows up to date after training steps, so that the whole
    /// model can be read ([`Model::loss`], [`Model::evaluate`], [`Model::quantize`]).
    pub fn sync(&mut self) {
        if self.stale {
            self.coalesce();
        }
    }

    /// Rebuilds the coalesced rows marked in `only` (indexed by row), or all of them.
    fn coalesce_rows(&mut self, only: Option<&[bool]>) {
        let (chunks, snap) = (&self.chunks, self.quantization_aware);
        self.coalesced.par_chunks_mut(COALESCE_ROWS).enumerate().for_each(|(b, rows)| {
            let first = b * COALESCE_ROWS;
            let only = only.map(|o| &o[first..first + rows.len()]);
            simd::run(CoalesceBlock { chunks, first, rows, snap, only });
        });
    }

    /// Panics when the coalesced rows lag the weights: a caller read the model between
    /// training steps without [`Model::sync`].
    fn assert_synced(&self) {
        assert!(!self.stale, "the model was read after a training step without Model::sync");
    }

    /// The dense parameters the forward pass computes with: on the integer grid when
    /// quantisation-aware, else as trained.
    #[inline(always)]
    fn forward_params(&self) -> &Dense {
        if self.quantization_aware {
            &self.on_grid
        } else {
            &self.dense
        }
    }

    /// A hidden activation: the integer net's rounding when quantisation-aware, else the
    /// plain clamp.
    #[inline(always)]
    fn activate(&self, z: Lanes) -> Lanes {
        if self.quantization_aware {
            z.map(activation)
        } else {
            z.map(clamp01)
        }
    }

    /// Forward pass of one position: FT bias plus the coalesced rows of each perspective's
    /// features, then the dense layers.
    #[inline(always)]
    fn forward(&self, features: &[[u16; MAX_ACTIVE]; 2], count: usize) -> Activations {
        let d = self.forward_params();
        let mut acc = [[0f32; LANES]; 2 * CHUNKS];
        for (side, list) in features.iter().enumerate() {
            // A local array, not a slice of `acc`: LLVM then knows that no row aliases it
            // and vectorises the sums (through the slice it added lane by lane).
            let mut half: [f32; HALF] = bytemuck::cast(d.ft_b);
            for &f in &list[..count] {
                let row: &[f32; HALF] = bytemuck::cast_ref(&self.coalesced[usize::from(f)]);
                for j in 0..HALF {
                    half[j] += row[j];
                }
            }
            acc[side * CHUNKS..(side + 1) * CHUNKS]
                .copy_from_slice(&bytemuck::cast::<_, Row>(half));
        }
        let mut active = 0;
        let mut active_index = [0u16; L1_IN];
        let mut active_value = [0f32; L1_IN];
        for (i, &x) in acc.iter().flatten().enumerate() {
            let x = clamp01(x);
            active_index[active] = i as u16;
            active_value[active] = x;
            active += usize::from(x != 0.0);
        }
        let mut z1 = d.l1_b;
        for k in 0..active {
            axpy(&mut z1, active_value[k], &d.l1_w[usize::from(active_index[k])]);
        }
        let h1 = self.activate(z1);
        let mut z2 = d.l2_b;
        for (i, &x) in h1.iter().enumerate() {
            if x != 0.0 {
                axpy(&mut z2, x, &d.l2_w[i]);
            }
        }
        let h2 = self.activate(z2);
        let out = d.out_b + dot(&d.out_w, &h2);
        Activations { acc, active, active_index, active_value, z1, h1, z2, h2, out }
    }

    /// Evaluates one position (feature lists, side to move first) in internal units.
    pub fn evaluate(&self, features: &[[u16; MAX_ACTIVE]; 2], count: usize) -> f32 {
        self.assert_synced();
        simd::run(Evaluate { model: self, features, count })
    }

    /// Loss of a batch without training on it. The positions are summed in fixed blocks
    /// and the blocks in order, so the result does not depend on how rayon splits the
    /// work (its splits follow work stealing, and float sums follow their grouping).
    pub fn loss(&self, batch: &Batch, lambda: f32, scale: f32) -> Loss {
        self.loss_of(batch, lambda, scale, Objective::CrossEntropy)
    }

    /// As [`Model::loss`], measured by `objective`.
    pub fn loss_of(&self, batch: &Batch, lambda: f32, scale: f32, objective: Objective) -> Loss {
        self.assert_synced();
        let indices: Vec<usize> = (0..batch.len()).collect();
        let blocks: Vec<Loss> = indices
            .par_chunks(SUM_BLOCK)
            .map(|block| {
                let mut loss = Loss::default();
                for &i in block {
                    let features = &batch.features[i];
                    let count = usize::from(batch.counts[i]);
                    let out = simd::run(Evaluate { model: self, features, count });
                    let p = target(batch.scores[i], batch.results[i], lambda, scale);
                    loss.add(Loss { sum: objective.value(p, out / scale), count: 1 });
                }
                loss
            })
            .collect();
        let mut loss = Loss::default();
        blocks.into_iter().for_each(|b| loss.add(b));
        loss
    }

    /// Forward and backward pass of positions `range` of `batch`: returns their loss,
    /// writes the gradient of the dense parameters into `g` and each position's
    /// accumulator gradient into `d_acc`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn backward_slice(
        &self,
        batch: &Batch,
        range: Range<usize>,
        d_acc: &mut [[Lanes; 2 * CHUNKS]],
        params: StepParams,
        inv_batch: f32,
        l1_wt: &[[Lanes; 2 * CHUNKS]],
        g: &mut Dense,
    ) -> Loss {
        let d = self.forward_params();
        *g = Dense::zeroed();
        let mut loss = Loss::default();
        for (i, da) in range.zip(d_acc.iter_mut()) {
            let a = self.forward(&batch.features[i], usize::from(batch.counts[i]));

            // Loss on win probability: prediction σ(600·out/scale) against the blended target.
            let q = a.out * INTERNAL_PER_FLOAT_OUTPUT / params.scale;
            let p = target(batch.scores[i], batch.results[i], params.lambda, params.scale);
            loss.add(Loss { sum: params.objective.value(p, q), count: 1 });
            let d_out =
                params.objective.slope(p, q) * INTERNAL_PER_FLOAT_OUTPUT / params.scale * inv_batch;

            g.out_b += d_out;
            axpy(&mut g.out_w, d_out, &a.h2);
            let d_z2: Lanes =
                std::array::from_fn(|o| if inside(a.z2[o]) { d_out * d.out_w[o] } else { 0.0 });
            add(&mut g.l2_b, &d_z2);
            let mut d_z1 = [0f32; LANES];
            for k in 0..HIDDEN {
                if a.h1[k] != 0.0 {
                    axpy(&mut g.l2_w[k], a.h1[k], &d_z2);
                }
                if inside(a.z1[k]) {
                    d_z1[k] = dot(&d.l2_w[k], &d_z2);
                }
            }
            add(&mut g.l1_b, &d_z1);
            for k in 0..a.active {
                axpy(&mut g.l1_w[usize::from(a.active_index[k])], a.active_value[k], &d_z1);
            }
            // The accumulator gradient W1ᵀ·dz1, as a sum of output-major rows so that no
            // horizontal sums are needed; outputs with a zero gradient are skipped.
            let live: ArrayVec<usize, HIDDEN> = (0..HIDDEN).filter(|&o| d_z1[o] != 0.0).collect();
            for (c, (x, dx)) in a.acc.iter().zip(da.iter_mut()).enumerate() {
                let mut sum = [0f32; LANES];
                for &o in &live {
                    axpy(&mut sum, d_z1[o], &l1_wt[o][c]);
                }
                // The clamp passes gradient only strictly inside (0, 1); a select, not a
                // branch, so that it vectorises.
                for j in 0..LANES {
                    sum[j] = if inside(x[j]) { sum[j] } else { 0.0 };
                }
                *dx = sum;
            }
            for c in 0..CHUNKS {
                add(&mut g.ft_b[c], &da[c]);
                add(&mut g.ft_b[c], &da[CHUNKS + c]);
            }
        }
        loss
    }

    /// One optimiser step on `batch`, which holds at least one position; returns the
    /// batch loss (before the step).
    pub fn train_step(&mut self, batch: &Batch, params: StepParams) -> Loss {
        let loss = self.gradients(batch, params);
        self.apply_gradients(params.lr);
        loss
    }

    /// The gradient of the batch's mean loss: the dense parameters' in the first of the
    /// scratch slice gradients, the feature transformer's in the chunks (`grad` for the
    /// real rows the batch touched, listed in the scratch `rows`; `virt_grad` for the
    /// factoriser's rows). Returns the batch loss.
    fn gradients(&mut self, batch: &Batch, params: StepParams) -> Loss {
        const SLICES: usize = 64;
        let n = batch.len();
        let inv_batch = 1.0 / n as f32;
        let slice_len = n.div_ceil(SLICES).max(1);
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.d_acc.resize(n, [[0f32; LANES]; 2 * CHUNKS]);
        scratch.slice_grads.resize(n.div_ceil(slice_len), Dense::zeroed());
        scratch.slice_losses.resize(n.div_ceil(slice_len), Loss::default());
        scratch.l1_wt.resize(HIDDEN, [[0f32; LANES]; 2 * CHUNKS]);
        scratch.touched.resize(INPUTS, false);

        // 1. The rows this batch reads and writes; the forward pass needs them up to date.
        let touched = &mut scratch.touched;
        for (f, &count) in batch.features.iter().zip(&batch.counts) {
            for side in f {
                for &i in &side[..usize::from(count)] {
                    touched[usize::from(i)] = true;
                }
            }
        }
        if self.stale {
            self.coalesce_rows(Some(touched));
        }

        // 2. Forward and dense backward, in fixed slices summed in order so that a seed
        //    reproduces a run whatever the thread count.
        for (i, row) in self.forward_params().l1_w.iter().enumerate() {
            for (o, &w) in row.iter().enumerate() {
                scratch.l1_wt[o][i / LANES][i % LANES] = w;
            }
        }
        let model = &*self;
        let l1_wt = &scratch.l1_wt;
        scratch
            .d_acc
            .par_chunks_mut(slice_len)
            .zip(scratch.slice_grads.par_iter_mut())
            .zip(scratch.slice_losses.par_iter_mut())
            .enumerate()
            .for_each(|(s, ((d_acc, g), loss))| {
                let start = s * slice_len;
                let range = start..start + d_acc.len();
                *loss = simd::run(BackwardSlice {
                    model,
                    batch,
                    range,
                    d_acc,
                    params,
                    inv_batch,
                    l1_wt,
                    g,
                });
            });
        let mut loss = Loss::default();
        scratch.slice_losses.iter().for_each(|&l| loss.add(l));
        let (grad, rest) = scratch.slice_grads.split_first_mut().expect("a batch is not empty");
        for g in &*rest {
            for (a, b) in grad.as_mut_slice().iter_mut().zip(g.as_slice()) {
                *a += b;
            }
        }

        // 3. The touched rows, in ascending order.
        scratch.rows.clear();
        for (i, t) in scratch.touched.iter_mut().enumerate() {
            if *t {
                scratch.rows.push(i);
                *t = false;
            }
        }

        // 4. Sparse backward into the transformer's rows, a task per chunk.
        let (features, counts) = (&batch.features, &batch.counts);
        let (d_acc, rows) = (&scratch.d_acc, &scratch.rows);
        self.chunks.par_iter_mut().enumerate().for_each(|(c, chunk)| {
            simd::run(ChunkGradients { chunk, c, features, counts, d_acc, rows });
        });
        self.scratch = scratch;
        loss
    }

    /// An Adam step with the gradients of [`Model::gradients`], which it clears.
    fn apply_gradients(&mut self, lr: f32) {
        self.steps += 1;
        let adam = Adam::new(lr, self.steps);
        let rows = &self.scratch.rows;
        self.chunks.par_iter_mut().for_each(|chunk| simd::run(ChunkStep { chunk, rows, adam }));
        self.stale = true;

        // Dense parameters, clipped to what the quantised format holds.
        let grad = &self.scratch.slice_grads[0];
        let (w, m, v) = (&mut *self.dense, &mut *self.dense_m, &mut *self.dense_v);
        for c in 0..CHUNKS {
            adam.update_lanes(
                &mut w.ft_b[c],
                &grad.ft_b[c],
                &mut m.ft_b[c],
                &mut v.ft_b[c],
                FT_WEIGHT_LIMIT,
            );
        }
        for i in 0..L1_IN {
            adam.update_lanes(
                &mut w.l1_w[i],
                &grad.l1_w[i],
                &mut m.l1_w[i],
                &mut v.l1_w[i],
                HIDDEN_WEIGHT_LIMIT,
            );
        }
        for i in 0..HIDDEN {
            adam.update_lanes(
                &mut w.l2_w[i],
                &grad.l2_w[i],
                &mut m.l2_w[i],
                &mut v.l2_w[i],
                HIDDEN_WEIGHT_LIMIT,
            );
        }
        let unbounded = f32::INFINITY;
        adam.update_lanes(&mut w.l1_b, &grad.l1_b, &mut m.l1_b, &mut v.l1_b, unbounded);
        adam.update_lanes(&mut w.l2_b, &grad.l2_b, &mut m.l2_b, &mut v.l2_b, unbounded);
        adam.update_lanes(
            &mut w.out_w,
            &grad.out_w,
            &mut m.out_w,
            &mut v.out_w,
            OUTPUT_WEIGHT_LIMIT,
        );
        adam.update(&mut w.out_b, grad.out_b, &mut m.out_b, &mut v.out_b, unbounded);
        self.on_grid = quantize::on_grid(&self.dense);
    }

    /// Quantises into the integer network (docs/net-format.md §10.2), folding the
    /// factoriser in. The forward pass already computes with parameters on the integer
    /// grid, so this only reads their integers off (`quantize::network`).
    pub fn quantize(&self) -> Box<Network> {
        self.assert_synced();
        quantize::network(&self.on_grid, &self.coalesced)
    }

    /// A model that computes what `net` computes: the inverse of [`Model::quantize`]. Its
    /// parameters sit on the integer grid, the factoriser's rows are zero (their share is
    /// already folded into the real rows) and the optimiser starts afresh, so training
    /// from it continues a net instead of starting one (`nue train --init`).
    pub fn from_network(net: &Network) -> Model {
        let mut model = Model::new(0);
        for (c, chunk) in model.chunks.iter_mut().enumerate() {
            for (dst, src) in chunk.weights.iter_mut().zip(net.ft_weights.iter()) {
                *dst = std::array::from_fn(|j| quantize::float_ft_weight(src.0[c * LANES + j]));
            }
            chunk.weights[K_BASE..].fill([0.0; LANES]);
        }
        model.dense = quantize::float_dense(net);
        model.after_load();
        model
    }

    /// Every float of the model and its optimiser state, in a fixed order (checkpoints).
    pub fn state_mut(&mut self) -> Vec<&mut [f32]> {
        let mut parts: Vec<&mut [f32]> = Vec::new();
        for c in &mut self.chunks {
            parts.push(bytemuck::cast_slice_mut(&mut c.weights));
            parts.push(bytemuck::cast_slice_mut(&mut c.m));
            parts.push(bytemuck::cast_slice_mut(&mut c.v));
        }
        parts.push(self.dense.as_mut_slice());
        parts.push(self.dense_m.as_mut_slice());
        parts.push(self.dense_v.as_mut_slice());
        parts
    }

    /// Rebuilds derived data after the state was overwritten (loading a checkpoint).
    pub fn after_load(&mut self) {
        self.on_grid = quantize::on_grid(&self.dense);
        self.coalesce();
    }
}

/// Positions per block of a reproducible parallel sum.
pub(super) const SUM_BLOCK: usize = 4096;

/// Rows per task when coalescing.
const COALESCE_ROWS: usize = 512;

/// `E[f] = W[f] + W[K(f)] + W[P(f)]` for the real rows `first..first + rows.len()`, or
/// those of them marked in `only`, snapped to the integer grid when `snap` is set.
#[inline(always)]
fn coalesce_block(
    chunks: &[Chunk],
    first: usize,
    rows: &mut [Row],
    snap_rows: bool,
    only: Option<&[bool]>,
) {
    for (c, chunk) in chunks.iter().enumerate() {
        let (real, virt) = chunk.weights.split_at(K_BASE);
        for (i, dst) in rows.iter_mut().enumerate() {
            if only.is_some_and(|only| !only[i]) {
                continue;
            }
            let row = first + i;
            let (k, slot) = (row / BLOCK, row % BLOCK);
            let mut e = real[row];
            if slot != 0 {
                add(&mut e, &virt[k]);
                add(&mut e, &virt[64 + slot - 1]);
            }
            dst[c] = if snap_rows { e.map(quantize::ft_on_grid) } else { e };
        }
    }
}

impl Chunk {
    /// Adds each position's accumulator gradient (lanes of chunk `c`) into the rows of
    /// its active features.
    #[inline(always)]
    fn backward(
        &mut self,
        c: usize,
        features: &[[[u16; MAX_ACTIVE]; 2]],
        counts: &[u8],
        d_acc: &[[Lanes; 2 * CHUNKS]],
    ) {
        for ((f, &count), da) in features.iter().zip(counts).zip(d_acc) {
            for (side, list) in f.iter().enumerate() {
                // A local copy: LLVM cannot see that `d_acc` and `self.grad` are disjoint
                // once this is inlined, and would add lane by lane.
                let src: Lanes = da[side * CHUNKS + c];
                for &feature in &list[..usize::from(count)] {
                    add(&mut self.grad[usize::from(feature)], &src);
                }
            }
        }
    }

    /// Derives the factoriser rows' gradients from those of the real `rows`:
    /// `dK[k] = Σ dW[f]` over the block of king square k, `dP[p] = Σ_k dW[641k + 1 + p]`.
    #[inline(always)]
    fn virtual_gradients(&mut self, rows: &[usize]) {
        let virt = &mut self.virt_grad;
        virt.fill([0f32; LANES]);
        for &row in rows {
            let (k, slot) = (row / BLOCK, row % BLOCK);
            let g = self.grad[row];
            add(&mut virt[k], &g);
            add(&mut virt[64 + slot - 1], &g);
        }
    }

    /// Applies Adam to the touched real `rows` and to every factoriser row; clears the
    /// real rows' gradient.
    #[inline(always)]
    fn step(&mut self, rows: &[usize], adam: Adam) {
        for &row in rows {
            adam.update_lanes(
                &mut self.weights[row],
                &self.grad[row],
                &mut self.m[row],
                &mut self.v[row],
                FT_WEIGHT_LIMIT,
            );
            self.grad[row] = [0.0; LANES];
        }
        for (j, g) in self.virt_grad.iter().enumerate() {
            let row = K_BASE + j;
            adam.update_lanes(
                &mut self.weights[row],
                g,
                &mut self.m[row],
                &mut self.v[row],
                FT_WEIGHT_LIMIT,
            );
        }
    }
}

// The hot loops as kernels of the `simd` module: each holds the arguments of one call, and
// its body is compiled into the version that `simd::run` picks.

/// The float evaluation of one position, internal units.
struct Evaluate<'a> {
    model: &'a Model,
    features: &'a [[u16; MAX_ACTIVE]; 2],
    count: usize,
}

impl Kernel for Evaluate<'_> {
    type Output = f32;

    #[inline(always)]
    fn run(self) -> f32 {
        self.model.forward(self.features, self.count).out * INTERNAL_PER_FLOAT_OUTPUT
    }
}

/// Forward and dense backward pass of a slice of a batch ([`Model::backward_slice`]).
struct BackwardSlice<'a> {
    model: &'a Model,
    batch: &'a Batch,
    range: Range<usize>,
    d_acc: &'a mut [[Lanes; 2 * CHUNKS]],
    params: StepParams,
    inv_batch: f32,
    l1_wt: &'a [[Lanes; 2 * CHUNKS]],
    g: &'a mut Dense,
}

impl Kernel for BackwardSlice<'_> {
    type Output = Loss;

    #[inline(always)]
    fn run(self) -> Loss {
        let BackwardSlice { model, batch, range, d_acc, params, inv_batch, l1_wt, g } = self;
        model.backward_slice(batch, range, d_acc, params, inv_batch, l1_wt, g)
    }
}

/// Sparse backward pass of one column chunk: the touched real rows' gradients, and the
/// factoriser rows' derived from them.
struct ChunkGradients<'a> {
    chunk: &'a mut Chunk,
    c: usize,
    features: &'a [[[u16; MAX_ACTIVE]; 2]],
    counts: &'a [u8],
    d_acc: &'a [[Lanes; 2 * CHUNKS]],
    rows: &'a [usize],
}

impl Kernel for ChunkGradients<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        self.chunk.backward(self.c, self.features, self.counts, self.d_acc);
        self.chunk.virtual_gradients(self.rows);
    }
}

/// The optimiser step of one column chunk.
struct ChunkStep<'a> {
    chunk: &'a mut Chunk,
    rows: &'a [usize],
    adam: Adam,
}

impl Kernel for ChunkStep<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        self.chunk.step(self.rows, self.adam);
    }
}

/// Coalesces a block of real rows, or those marked in `only` ([`coalesce_block`]).
struct CoalesceBlock<'a> {
    chunks: &'a [Chunk],
    first: usize,
    rows: &'a mut [Row],
    snap: bool,
    only: Option<&'a [bool]>,
}

impl Kernel for CoalesceBlock<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        coalesce_block(self.chunks, self.first, self.rows, self.snap, self.only);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::data::parse_line;

    /// Varied positions with spread scores and results.
    fn batch_positions() -> Vec<crate::train::data::Packed> {
        let lines = [
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3 | 40 | 1.0",
            "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R b KQkq - 0 5 | -20 | 0.5",
            "8/5pk1/6p1/8/3R4/6P1/5PK1/2r5 w - - 0 40 | 150 | 0.5",
            "2r3k1/5ppp/8/8/8/8/5PPP/3Q2K1 w - - 0 30 | 700 | 1.0",
            "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3 | -900 | 0.0",
            "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1 | 60 | 0.5",
            "r3k2r/pb1nqppp/1p2pn2/2pp4/3P4/1P1BPN2/PBPNQPPP/R4RK1 b kq - 3 10 | -35 | 0.0",
            "6k1/pp3ppp/8/8/8/8/PPP2PPP/6K1 b - - 0 25 | 10 | 0.5",
        ];
        lines.iter().map(|l| parse_line(l).unwrap()).collect()
    }

    /// A small batch of [`batch_positions`].
    fn batch() -> Batch {
        Batch::new(&batch_positions())
    }

    /// A net read into a model and quantised again is the same net, byte for byte, and
    /// the model evaluates as the net does, up to rounding: the float pass sums in another
    /// order, so a hidden activation near a step of the integer net's rounding may land on
    /// the other side of it and move the output by a unit or two (on 20,000 held-out
    /// positions the default nets differ by 0.6 units on average, 13 at most). A mistake
    /// in reading the layers or their scales moves it by tens or hundreds.
    #[test]
    fn a_net_read_into_a_model_quantises_back_to_itself() {
        let net = crate::nnue::default_network();
        let model = Model::from_network(&net);
        assert!(model.quantize().to_bytes() == net.to_bytes());
        let simd = crate::nnue::simd::Simd::detect();
        let positions = batch_positions();
        let mut total = 0.0;
        for p in &positions {
            let (features, n) = p.features();
            let int = crate::nnue::to_internal(net.evaluate(simd, &p.board(), p.turn()));
            let float = model.evaluate(&features, n);
            let diff = (f64::from(int) - f64::from(float)).abs();
            assert!(diff < 16.0, "{int} against {float}");
            total += diff;
        }
        let mean = total / positions.len() as f64;
        assert!(mean < 2.0, "mean difference {mean}");
    }

    /// Training steps that bring only their own batch's coalesced rows up to date train
    /// the same model, bit for bit, as steps that rebuild every row after each step: the
    /// same losses on the way, the same exported net.
    #[test]
    fn lazily_coalesced_rows_train_the_same_net() {
        let positions = batch_positions();
        // Batches that share some features and not others, so that a row left stale by
        // one step is read by a later one.
        let batches = [
            Batch::new(&positions[..3]),
            Batch::new(&positions[3..6]),
            Batch::new(&positions[1..5]),
            Batch::new(&positions[5..]),
            Batch::new(&positions),
        ];
        // A large rate, so that a stale row would change the losses visibly.
        let params =
            StepParams { lr: 0.05, lambda: 0.6, scale: 400.0, objective: Objective::CrossEntropy };
        let mut lazy = Model::new(3);
        let mut eager = lazy.clone();
        for batch in &batches {
            let lazy_loss = lazy.train_step(batch, params);
            let eager_loss = eager.train_step(batch, params);
            eager.coalesce();
            assert_eq!(lazy_loss.sum.to_bits(), eager_loss.sum.to_bits());
        }
        lazy.sync();
        assert!(lazy.quantize().to_bytes() == eager.quantize().to_bytes());
        let all = Batch::new(&positions);
        assert_eq!(lazy.loss(&all, 0.6, 400.0).sum, eager.loss(&all, 0.6, 400.0).sum);
    }

    /// Reading the model between training steps without syncing it is a bug, caught.
    #[test]
    #[should_panic(expected = "Model::sync")]
    fn reading_a_model_left_stale_panics() {
        let mut model = Model::new(3);
        let params =
            StepParams { lr: 1e-3, lambda: 0.6, scale: 400.0, objective: Objective::CrossEntropy };
        model.train_step(&batch(), params);
        model.quantize();
    }

    /// The gradient of [`Model::gradients`] matches central differences of the batch's
    /// mean loss, for the parameters with the largest gradients in every group: the
    /// output, both hidden layers, the transformer's biases, its real rows and the
    /// factoriser's rows. The quantisation-aware pass is a step function of its
    /// parameters (its gradient passes straight through the rounding), so the check runs
    /// on the plain float pass, whose backward code is the same.
    #[test]
    fn gradients_match_finite_differences() {
        check_gradients(Objective::CrossEntropy);
    }

    /// The same check for the power loss, whose gradients are smaller: the output's
    /// derivative carries a factor σ(q)(1 − σ(q)).
    #[test]
    fn power_loss_gradients_match_finite_differences() {
        check_gradients(Objective::Power(2.5));
    }

    fn check_gradients(objective: Objective) {
        let batch = batch();
        let mut model = Model::new(5);
        model.quantization_aware = false;
        let params = StepParams { lr: 1e-3, lambda: 0.6, scale: 400.0, objective };
        // A few steps first, so that the factoriser rows are no longer zero.
        for _ in 0..3 {
            model.train_step(&batch, params);
        }
        model.coalesce();
        model.gradients(&batch, params);

        // Which parameter, and its analytic gradient.
        #[derive(Clone, Copy, Debug)]
        enum Param {
            Dense(usize),
            Row(usize, usize, usize),
        }
        let dense_grad = model.scratch.slice_grads[0];
        let mut candidates: Vec<(Param, f32)> = Vec::new();
        let dense_groups: Vec<std::ops::Range<usize>> = {
            // Offsets of the fields of `Dense`, in floats.
            let ft_b = 0..HALF;
            let l1_w = ft_b.end..ft_b.end + L1_IN * LANES;
            let l1_b = l1_w.end..l1_w.end + LANES;
            let l2_w = l1_b.end..l1_b.end + HIDDEN * LANES;
            let l2_b = l2_w.end..l2_w.end + LANES;
            let out_w = l2_b.end..l2_b.end + LANES;
            let out_b = out_w.end..out_w.end + 1;
            vec![ft_b, l1_w, l1_b, l2_w, l2_b, out_w, out_b]
        };
        let g = dense_grad.as_slice();
        for group in dense_groups {
            let mut best: Vec<usize> = group.collect();
            best.sort_by(|&a, &b| g[b].abs().total_cmp(&g[a].abs()));
            candidates.extend(best.iter().take(3).map(|&i| (Param::Dense(i), g[i])));
        }
        // The real rows, the factoriser's king rows and its piece rows.
        for rows in [0..INPUTS, K_BASE..K_BASE + 64, K_BASE + 64..FT_ROWS] {
            let mut best = Vec::new();
            for (c, chunk) in model.chunks.iter().enumerate() {
                for row in rows.clone() {
                    let lanes =
                        if row < K_BASE { chunk.grad[row] } else { chunk.virt_grad[row - K_BASE] };
                    for (j, &x) in lanes.iter().enumerate() {
                        best.push((Param::Row(c, row, j), x));
                    }
                }
            }
            best.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
            candidates.extend(best.into_iter().take(3));
        }

        let loss = |m: &Model| m.loss_of(&batch, params.lambda, params.scale, objective).mean();
        let mut checked = 0;
        for (param, analytic) in candidates {
            assert!(analytic.is_finite());
            if analytic.abs() < 1e-4 {
                continue; // too small to tell from rounding
            }
            let nudge = |m: &mut Model, delta: f32| match param {
                Param::Dense(i) => m.dense.as_mut_slice()[i] += delta,
                Param::Row(c, row, j) => {
                    m.chunks[c].weights[row][j] += delta;
                    m.coalesce();
                }
            };
            // Central differences at two step sizes: a step that carries an accumulator
            // across a clamp's corner (a factoriser row moves ~30 features at once) bends
            // the difference, a wrong gradient is wrong at both.
            let mut relative_errors = Vec::new();
            for eps in [1e-3f32, 1e-4] {
                nudge(&mut model, eps);
                let up = loss(&model);
                nudge(&mut model, -2.0 * eps);
                let down = loss(&model);
                nudge(&mut model, eps);
                let numeric = (up - down) / (2.0 * f64::from(eps));
                let scale = numeric.abs().max(f64::from(analytic.abs()));
                relative_errors.push((numeric - f64::from(analytic)).abs() / scale);
            }
            let best = relative_errors.iter().copied().fold(f64::INFINITY, f64::min);
            assert!(
                best <= 0.01,
                "{param:?}: analytic {analytic}, relative errors {relative_errors:?}"
            );
            checked += 1;
        }
        assert!(checked >= 20, "only {checked} parameters had a gradient to check");
    }
}
