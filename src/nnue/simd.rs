//! The integer kernels of the evaluation, in two interchangeable versions.
//!
//! Every kernel has a scalar version, which is the arithmetic of docs/net-format.md §4–§6
//! written out, and an AVX2 version that computes exactly the same numbers; the first
//! hidden layer has a third, with AVX-512 VNNI. [`Simd`] picks a set at run time: a value
//! that selects AVX2 or VNNI can only be made after `is_x86_feature_detected!` confirmed
//! the instructions, so one binary runs on every x86-64 machine.
//!
//! This module and the trainer's kernels (`train::simd`) are the only places in the crate
//! with `unsafe` code: the AVX2 and AVX-512 functions carry `#[target_feature]`, and the raw pointer loads and stores they use stay
//! inside fixed-size arrays, as each `// SAFETY:` comment explains.

use std::sync::OnceLock;

use super::{Aligned, Half, HALF};

/// Width of the first hidden layer's input: both halves of the transformed accumulator.
pub const L1_IN: usize = 2 * HALF;
/// Width of each hidden layer.
pub const HIDDEN: usize = 32;

/// The kernel set in use: scalar, AVX2 where the processor has it, or AVX2 with an
/// AVX-512 VNNI first layer where it has that too.
///
/// The fields are private so that safe code cannot claim instructions a machine lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Simd {
    avx2: bool,
    /// Implies `avx2`.
    vnni: bool,
}

impl Default for Simd {
    fn default() -> Self {
        Simd::detect()
    }
}

impl Simd {
    /// The fastest kernel set this processor supports (detected once, then cached).
    pub fn detect() -> Simd {
        static BEST: OnceLock<Simd> = OnceLock::new();
        *BEST.get_or_init(|| Simd::vnni().or(Simd::avx2()).unwrap_or(Simd::scalar()))
    }

    /// The portable scalar kernels.
    pub const fn scalar() -> Simd {
        Simd { avx2: false, vnni: false }
    }

    /// The AVX2 kernels, if this processor supports them.
    pub fn avx2() -> Option<Simd> {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") {
            return Some(Simd { avx2: true, vnni: false });
        }
        None
    }

    /// The AVX2 kernels with an AVX-512 VNNI first layer, if this processor supports both.
    pub fn vnni() -> Option<Simd> {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512vnni")
        {
            return Some(Simd { avx2: true, vnni: true });
        }
        None
    }

    /// Short name for logs and benchmarks.
    pub fn name(self) -> &'static str {
        match (self.avx2, self.vnni) {
            (_, true) => "avx512-vnni",
            (true, false) => "avx2",
            (false, false) => "scalar",
        }
    }

    /// `dst = src + Σ add − Σ sub`, lane by lane with i16 wrap-around
    /// (docs/net-format.md §4).
    ///
    /// The common move shapes (one row in and one out, a capture, two in and two out)
    /// get their own fully unrolled instances.
    #[inline]
    pub fn update(self, dst: &mut Half, src: &Half, add: &[&Half], sub: &[&Half]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `self.avx2` is true only for values made by `Simd::avx2`, which checked
            // that this processor supports AVX2.
            unsafe {
                match (add, sub) {
                    ([a], [s]) => avx2::update(dst, src, [*a], [*s]),
                    ([a], [s1, s2]) => avx2::update(dst, src, [*a], [*s1, *s2]),
                    ([a1, a2], [s1, s2]) => avx2::update(dst, src, [*a1, *a2], [*s1, *s2]),
                    _ => avx2::update(dst, src, add, sub),
                }
            }
            return;
        }
        scalar::update(dst, src, add, sub);
    }

    /// `dst = bias + Σ rows`: a full refresh of one perspective.
    #[inline]
    pub fn refresh(self, dst: &mut Half, bias: &Half, rows: &[&Half]) {
        self.update(dst, bias, rows, &[]);
    }

    /// The network input: `clamp(us, 0, 127)` followed by `clamp(them, 0, 127)`
    /// (docs/net-format.md §5).
    #[inline]
    pub fn transform(self, us: &Half, them: &Half, out: &mut [u8; L1_IN]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: AVX2 was detected when `self` was made (see `update`).
            unsafe { avx2::transform(us, them, out) };
            return;
        }
        scalar::transform(us, them, out);
    }

    /// Runs `job` with this kernel set inside a function compiled for its instructions
    /// (AVX2, or AVX2 with AVX-512 VNNI), passing the set back as a constant: the job's
    /// `run` is inlined there, and with it the kernels it calls, which then inline into
    /// each other and lose their dispatch. The evaluation enters once per position this
    /// way ([`Network::propagate`], `AccumulatorStack::evaluate`).
    #[inline]
    pub fn dispatch<J: Job>(self, job: J) -> J::Output {
        #[cfg(target_arch = "x86_64")]
        if self.vnni {
            // SAFETY: `self.vnni` is true only for values made by `Simd::vnni` (see
            // `affine_l1`).
            return unsafe { avx512::run(job) };
        }
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: AVX2 was detected when `self` was made (see `update`).
            return unsafe { avx2::run(job) };
        }
        job.run(self)
    }

    /// `out = bias + W·x` for the 512 → 32 layer, in exact i32 arithmetic
    /// (docs/net-format.md §6), with inputs at most 127 (the transform's output).
    ///
    /// `grouping` says how many 32-byte chunks' byte-product pair sums the AVX2 kernel may
    /// add in 16 bits before widening ([`l1_grouping`] of `w`): two save a quarter of its
    /// multiplies, four a little more; with [`L1Grouping::Single`] every weight matrix is
    /// computed exactly. The VNNI kernel is exact for every weight matrix and ignores it.
    #[inline]
    pub fn affine_l1(
        self,
        x: &[u8; L1_IN],
        w: &[i8; HIDDEN * L1_IN],
        grouping: L1Grouping,
        bias: &[i32; HIDDEN],
        out: &mut [i32; HIDDEN],
    ) {
        #[cfg(target_arch = "x86_64")]
        if self.vnni {
            // SAFETY: `self.vnni` is true only for values made by `Simd::vnni`, which checked
            // that this processor supports AVX2, AVX-512F and AVX-512 VNNI.
            unsafe { avx512::affine::<L1_IN, { HIDDEN * L1_IN }>(x, w, bias, out) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: AVX2 was detected when `self` was made (see `update`).
            unsafe {
                const W: usize = HIDDEN * L1_IN;
                match grouping {
                    L1Grouping::Quads => avx2::affine::<L1_IN, W, 4>(x, w, bias, out),
                    L1Grouping::Pairs => avx2::affine::<L1_IN, W, 2>(x, w, bias, out),
                    L1Grouping::Single => avx2::affine::<L1_IN, W, 1>(x, w, bias, out),
                }
            }
            return;
        }
        scalar::affine(x, w, bias, out);
    }

    /// `out = bias + W·x` for the 32 → 32 layer, with inputs at most 127 (a clipped
    /// hidden layer).
    #[inline]
    pub fn affine_l2(
        self,
        x: &[u8; HIDDEN],
        w: &HiddenWeights,
        bias: &[i32; HIDDEN],
        out: &mut [i32; HIDDEN],
    ) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: AVX2 was detected when `self` was made (see `update`).
            unsafe { avx2::affine_by_quads(x, &w.by_quads.0, bias, out) };
            return;
        }
        scalar::affine(x, &w.rows.0, bias, out);
    }
}

/// The 32 → 32 layer's weights in the two orders the kernels read: by output neuron, as
/// the file stores them (docs/net-format.md §6), and by quad of inputs, where the four
/// weights of each output for inputs `4q..4q + 4` lie together, outputs in order. The AVX2
/// kernel multiplies each quad of inputs, broadcast across a register, by the second
/// order, which sums every output in a 32-bit lane of its own: no horizontal sums.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HiddenWeights {
    rows: Aligned<[i8; HIDDEN * HIDDEN]>,
    by_quads: Aligned<[i8; HIDDEN * HIDDEN]>,
}

impl HiddenWeights {
    /// The layer whose output `o` has the weights `rows[32 o..32 o + 32]`.
    pub fn new(rows: [i8; HIDDEN * HIDDEN]) -> HiddenWeights {
        let by_quads = std::array::from_fn(|i| {
            let (quad, output, k) = (i / (4 * HIDDEN), i / 4 % HIDDEN, i % 4);
            rows[output * HIDDEN + 4 * quad + k]
        });
        HiddenWeights { rows: Aligned(rows), by_quads: Aligned(by_quads) }
    }

    /// The weights by output neuron, as the file stores them.
    pub fn rows(&self) -> &[i8; HIDDEN * HIDDEN] {
        &self.rows.0
    }
}

/// Work for [`Simd::dispatch`]. `run` must be `#[inline(always)]`: only code inlined into
/// the dispatching function is compiled for its instructions (a closure is not inlined
/// there, which is why this is a trait).
pub trait Job {
    type Output;
    fn run(self, simd: Simd) -> Self::Output;
}

/// How many 32-byte chunks of inputs the AVX2 first layer adds in 16 bits before widening
/// to 32 (see [`l1_fits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L1Grouping {
    /// Each chunk widened on its own: exact for every weight matrix.
    Single,
    /// Two chunks at a time.
    Pairs,
    /// Four chunks at a time.
    Quads,
}

/// Whether the first layer's weights let an AVX2 kernel that adds the `maddubs` pair sums
/// of `chunks` consecutive 32-byte chunks of inputs lane by lane in 16 bits stay exact: a
/// lane then sums `2 · chunks` products `x·w` with `x ≤ 127`, which cannot leave the i16
/// range when those weights' magnitudes add up to at most `i16::MAX / 127` = 258. Our
/// nets and Stockfish 12's fit two chunks with room (153 and 129 at most) and ours fits
/// four (170), but an arbitrary file need not.
pub fn l1_fits(w: &[i8; HIDDEN * L1_IN], chunks: usize) -> bool {
    let limit = i32::from(i16::MAX) / 127;
    w.chunks_exact(32 * chunks).all(|group| {
        (0..16).all(|j| {
            let lane =
                |chunk: &[i8]| i32::from(chunk[2 * j]).abs() + i32::from(chunk[2 * j + 1]).abs();
            group.chunks_exact(32).map(lane).sum::<i32>() <= limit
        })
    })
}

/// The widest grouping the first layer's weights allow (see [`l1_fits`]).
pub fn l1_grouping(w: &[i8; HIDDEN * L1_IN]) -> L1Grouping {
    if l1_fits(w, 4) {
        L1Grouping::Quads
    } else if l1_fits(w, 2) {
        L1Grouping::Pairs
    } else {
        L1Grouping::Single
    }
}

/// ClippedReLU of a hidden layer: arithmetic shift by 6, then clamp to 0..=127.
/// Thirty-two values; the compiler vectorises it well enough on its own.
#[inline]
pub fn clipped_relu(y: &[i32; HIDDEN], out: &mut [u8; HIDDEN]) {
    for (o, &v) in out.iter_mut().zip(y) {
        *o = (v >> 6).clamp(0, 127) as u8;
    }
}

/// The output layer: `bias + w·x`, no activation.
#[inline]
pub fn output(x: &[u8; HIDDEN], w: &[i8; HIDDEN], bias: i32) -> i32 {
    bias + x.iter().zip(w).map(|(&x, &w)| i32::from(x) * i32::from(w)).sum::<i32>()
}

/// The reference kernels: plain loops, exactly as docs/net-format.md §4–§6 states them.
mod scalar {
    use super::*;

    pub fn update(dst: &mut Half, src: &Half, add: &[&Half], sub: &[&Half]) {
        dst.0 = src.0;
        for row in add {
            for (d, &r) in dst.0.iter_mut().zip(&row.0) {
                *d = d.wrapping_add(r);
            }
        }
        for row in sub {
            for (d, &r) in dst.0.iter_mut().zip(&row.0) {
                *d = d.wrapping_sub(r);
            }
        }
    }

    pub fn transform(us: &Half, them: &Half, out: &mut [u8; L1_IN]) {
        let (first, second) = out.split_at_mut(HALF);
        for (half, acc) in [(first, us), (second, them)] {
            for (o, &a) in half.iter_mut().zip(&acc.0) {
                *o = a.clamp(0, 127) as u8;
            }
        }
    }

    pub fn affine<const IN: usize, const W: usize>(
        x: &[u8; IN],
        w: &[i8; W],
        bias: &[i32; HIDDEN],
        out: &mut [i32; HIDDEN],
    ) {
        for (o, (row, &b)) in out.iter_mut().zip(w.chunks_exact(IN).zip(bias)) {
            *o = b + row.iter().zip(x).map(|(&w, &x)| i32::from(w) * i32::from(x)).sum::<i32>();
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::*;

    /// i16 lanes per 256-bit register.
    const LANES: usize = 16;
    /// Registers kept live per pass over the rows of an update: 4 × 16 = 64 lanes.
    const BLOCK: usize = 4;

    /// `dst = src + Σ add − Σ sub`, 64 lanes at a time so each block stays in registers
    /// while every row is folded in. Generic over how the rows come: for arrays (the
    /// common move shapes) the row counts are known at compile time and every loop
    /// unrolls; slices serve the rest (refreshes).
    ///
    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn update<'a, Add, Sub>(dst: &mut Half, src: &Half, add: Add, sub: Sub)
    where
        Add: AsRef<[&'a Half]>,
        Sub: AsRef<[&'a Half]>,
    {
        let (add, sub) = (add.as_ref(), sub.as_ref());
        for block in (0..HALF).step_by(LANES * BLOCK) {
            // SAFETY: `block + LANES * j + LANES <= HALF` for every j < BLOCK, because HALF is a
            // multiple of LANES * BLOCK; every pointer therefore addresses 16 lanes inside a
            // 256-lane array, and the loads and stores are unaligned so alignment is not needed.
            unsafe {
                let load = |h: &Half, j: usize| {
                    _mm256_loadu_si256(h.0.as_ptr().add(block + LANES * j).cast::<__m256i>())
                };
                let mut regs = [_mm256_setzero_si256(); BLOCK];
                for (j, r) in regs.iter_mut().enumerate() {
                    *r = load(src, j);
                }
                for row in add {
                    for (j, r) in regs.iter_mut().enumerate() {
                        *r = _mm256_add_epi16(*r, load(row, j));
                    }
                }
                for row in sub {
                    for (j, r) in regs.iter_mut().enumerate() {
                        *r = _mm256_sub_epi16(*r, load(row, j));
                    }
                }
                for (j, r) in regs.iter().enumerate() {
                    _mm256_storeu_si256(
                        dst.0.as_mut_ptr().add(block + LANES * j).cast::<__m256i>(),
                        *r,
                    );
                }
            }
        }
    }

    /// [`Simd::dispatch`] for the AVX2 kernels: the job compiled for AVX2.
    ///
    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn run<J: Job>(job: J) -> J::Output {
        job.run(Simd { avx2: true, vnni: false })
    }

    /// Clamp both accumulators to 0..=127 and narrow to u8. `packs` saturates to i8 and
    /// interleaves the 128-bit lanes; the 64-bit permute restores natural order.
    ///
    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn transform(us: &Half, them: &Half, out: &mut [u8; L1_IN]) {
        let zero = _mm256_setzero_si256();
        for (h, acc) in [us, them].into_iter().enumerate() {
            for i in (0..HALF).step_by(2 * LANES) {
                // SAFETY: `i + 2 * LANES <= HALF`, so both loads stay inside the 256-lane
                // accumulator, and `h * HALF + i + 32 <= L1_IN` keeps the 32-byte store inside
                // `out`. All accesses are unaligned.
                unsafe {
                    let a = _mm256_loadu_si256(acc.0.as_ptr().add(i).cast::<__m256i>());
                    let b = _mm256_loadu_si256(acc.0.as_ptr().add(i + LANES).cast::<__m256i>());
                    let packed = _mm256_max_epi8(_mm256_packs_epi16(a, b), zero);
                    let ordered = _mm256_permute4x64_epi64::<0b11_01_10_00>(packed);
                    _mm256_storeu_si256(
                        out.as_mut_ptr().add(h * HALF + i).cast::<__m256i>(),
                        ordered,
                    );
                }
            }
        }
    }

    /// `out = bias + W·x` with u8 inputs ≤ 127 and i8 weights, `CHUNKS` 32-byte chunks of
    /// inputs at a time. Each chunk's `maddubs` pair sums are at most 2·127·128 = 32,512 in
    /// magnitude, so its saturation never triggers; with `CHUNKS` of 2 or 4 those pair
    /// sums are added lane by lane in 16 bits before one `madd` widens them, which stays
    /// exact (no partial sum leaves the i16 range) for weights that pass [`l1_fits`] with
    /// `CHUNKS`. The result is then the exact integer dot product (docs/net-format.md §6);
    /// with `CHUNKS` 1 it is for every weight matrix.
    ///
    /// # Safety
    /// The processor must support AVX2. `CHUNKS` must be 1, 2 or 4, `IN` a multiple of
    /// `32 * CHUNKS` and `W == 32 * IN`; with `CHUNKS` above 1, `w` must pass [`l1_fits`]
    /// with `CHUNKS` for the result to be exact (it is never unsound).
    #[target_feature(enable = "avx2")]
    pub unsafe fn affine<const IN: usize, const W: usize, const CHUNKS: usize>(
        x: &[u8; IN],
        w: &[i8; W],
        bias: &[i32; HIDDEN],
        out: &mut [i32; HIDDEN],
    ) {
        const {
            assert!(matches!(CHUNKS, 1 | 2 | 4));
            assert!(IN.is_multiple_of(32 * CHUNKS) && W == HIDDEN * IN);
        };
        let ones = _mm256_set1_epi16(1);
        for o in (0..HIDDEN).step_by(4) {
            let mut sums = [_mm256_setzero_si256(); 4];
            for c in (0..IN).step_by(32 * CHUNKS) {
                // SAFETY: `c + 32 * CHUNKS <= IN`, so every input load stays in `x`; `(o + k)
                // * IN + c + 32 * CHUNKS <= HIDDEN * IN = W` for k < 4, so every weight load
                // stays in `w`. Unaligned.
                unsafe {
                    let xs: [__m256i; CHUNKS] = std::array::from_fn(|i| {
                        _mm256_loadu_si256(x.as_ptr().add(c + 32 * i).cast::<__m256i>())
                    });
                    for (k, s) in sums.iter_mut().enumerate() {
                        let row = w.as_ptr().add((o + k) * IN + c);
                        let mut pairs: [__m256i; CHUNKS] = std::array::from_fn(|i| {
                            let wv = _mm256_loadu_si256(row.add(32 * i).cast::<__m256i>());
                            _mm256_maddubs_epi16(xs[i], wv)
                        });
                        // Halve the chunks' pair sums as a tree: 4 → 2 → 1.
                        let mut n = CHUNKS;
                        while n > 1 {
                            n /= 2;
                            for i in 0..n {
                                pairs[i] = _mm256_adds_epi16(pairs[i], pairs[i + n]);
                            }
                        }
                        *s = _mm256_add_epi32(*s, _mm256_madd_epi16(pairs[0], ones));
                    }
                }
            }
            // SAFETY: AVX2 is enabled here, and `o + 4 <= HIDDEN`.
            unsafe { store_sums(sums, bias, out, o) };
        }
    }

    /// `out[o + k] = bias[o + k] + Σ lanes of sums[k]` for k < 4: the horizontal sums of the
    /// four registers, one per output, in a single vector.
    ///
    /// # Safety
    /// The processor must support AVX2, and `o + 4 <= HIDDEN`.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn store_sums(
        sums: [__m256i; 4],
        bias: &[i32; HIDDEN],
        out: &mut [i32; HIDDEN],
        o: usize,
    ) {
        let h01 = _mm256_hadd_epi32(sums[0], sums[1]);
        let h23 = _mm256_hadd_epi32(sums[2], sums[3]);
        let h = _mm256_hadd_epi32(h01, h23);
        let total = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
        // SAFETY: `o + 4 <= HIDDEN` (the caller's promise), so the 16-byte load and store
        // stay in `bias` and `out`.
        unsafe {
            let b = _mm_loadu_si128(bias.as_ptr().add(o).cast::<__m128i>());
            _mm_storeu_si128(out.as_mut_ptr().add(o).cast::<__m128i>(), _mm_add_epi32(total, b));
        }
    }

    /// `out = bias + W·x` for the 32 → 32 layer from its weights by quad of inputs
    /// ([`HiddenWeights`]): each quad of inputs is broadcast to every 32-bit lane, and
    /// `maddubs` then `madd` add its four products for eight outputs at once, one output a
    /// lane, into four registers that hold all 32 sums, so no horizontal sums follow.
    /// With inputs at most 127 a `maddubs` pair sum is at most 2·127·128 = 32,512 in
    /// magnitude: nothing saturates, and the sums are exact whatever the weights.
    ///
    /// # Safety
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn affine_by_quads(
        x: &[u8; HIDDEN],
        w: &[i8; HIDDEN * HIDDEN],
        bias: &[i32; HIDDEN],
        out: &mut [i32; HIDDEN],
    ) {
        let ones = _mm256_set1_epi16(1);
        // SAFETY: `8 * k + 8 <= HIDDEN` for k < 4, so each 32-byte load stays in `bias`.
        // Unaligned.
        let mut sums: [__m256i; 4] = std::array::from_fn(|k| unsafe {
            _mm256_loadu_si256(bias.as_ptr().add(8 * k).cast::<__m256i>())
        });
        for (quad, inputs) in x.chunks_exact(4).enumerate() {
            let quad_bytes = [inputs[0], inputs[1], inputs[2], inputs[3]];
            let xv = _mm256_set1_epi32(i32::from_le_bytes(quad_bytes));
            for (k, s) in sums.iter_mut().enumerate() {
                // SAFETY: `quad < 8` and `k < 4`, so `128 * quad + 32 * k + 32 <= 1024`
                // keeps the load in `w`. Unaligned.
                let wv = unsafe {
                    _mm256_loadu_si256(w.as_ptr().add(128 * quad + 32 * k).cast::<__m256i>())
                };
                let products = _mm256_maddubs_epi16(xv, wv);
                *s = _mm256_add_epi32(*s, _mm256_madd_epi16(products, ones));
            }
        }
        for (k, s) in sums.iter().enumerate() {
            // SAFETY: `8 * k + 8 <= HIDDEN`, so the store stays in `out`. Unaligned.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(8 * k).cast::<__m256i>(), *s) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::*;

    /// [`Simd::dispatch`] for the VNNI first layer: the job compiled for AVX2 and
    /// AVX-512 VNNI.
    ///
    /// # Safety
    /// The processor must support AVX2, AVX-512F and AVX-512 VNNI.
    #[target_feature(enable = "avx2,avx512f,avx512vnni")]
    #[inline]
    pub unsafe fn run<J: Job>(job: J) -> J::Output {
        job.run(Simd { avx2: true, vnni: true })
    }

    /// `out = bias + W·x` with u8 inputs and i8 weights: `vpdpbusd` multiplies unsigned by
    /// signed bytes and adds each group of four products to an i32 lane without
    /// saturating, so the result is the exact integer dot product (docs/net-format.md §6)
    /// for any weights: four products are at most 4·255·128 in magnitude and a row's sum
    /// stays far inside i32.
    ///
    /// # Safety
    /// The processor must support AVX2, AVX-512F and AVX-512 VNNI. `IN` must be a multiple
    /// of 64 and `W == 32 * IN`.
    #[target_feature(enable = "avx2,avx512f,avx512vnni")]
    pub unsafe fn affine<const IN: usize, const W: usize>(
        x: &[u8; IN],
        w: &[i8; W],
        bias: &[i32; HIDDEN],
        out: &mut [i32; HIDDEN],
    ) {
        const { assert!(IN.is_multiple_of(64) && W == HIDDEN * IN) };
        for o in (0..HIDDEN).step_by(4) {
            let mut sums = [_mm512_setzero_si512(); 4];
            for c in (0..IN).step_by(64) {
                // SAFETY: `c + 64 <= IN`, so the input load stays in `x`; `(o + k) * IN + c + 64
                // <= HIDDEN * IN = W` for k < 4, so each weight load stays in `w`. Unaligned.
                unsafe {
                    let xv = _mm512_loadu_si512(x.as_ptr().add(c).cast());
                    for (k, s) in sums.iter_mut().enumerate() {
                        let wv = _mm512_loadu_si512(w.as_ptr().add((o + k) * IN + c).cast());
                        *s = _mm512_dpbusd_epi32(*s, xv, wv);
                    }
                }
            }
            // Fold each register's two 256-bit halves, then sum as the AVX2 kernel does.
            let halves = sums.map(|s| {
                _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64::<1>(s))
            });
            // SAFETY: AVX2 is enabled here, and `o + 4 <= HIDDEN`.
            unsafe { avx2::store_sums(halves, bias, out, o) };
        }
    }
}
