//! The shapes and the unit the float model (`model.rs`) and its quantisation
//! (`quantize.rs`) share: 32-lane vectors, feature-transformer rows of eight such chunks,
//! the numbering of the factoriser's virtual rows after the real ones
//! (docs/net-format.md §10.3), the dense parameters after the transformer, and the
//! internal units that one unit of the model's output stands for.

use bytemuck::{Pod, Zeroable};

use crate::nnue::{
    features::{INPUTS, PIECE_SQUARES},
    simd::{HIDDEN, L1_IN},
    HALF,
};

/// Columns per feature-transformer chunk, and the width of each hidden layer.
pub const LANES: usize = 32;
/// Number of column chunks: 256 / 32.
pub const CHUNKS: usize = HALF / LANES;
/// First HalfK virtual input.
pub const K_BASE: usize = INPUTS;
/// Number of virtual inputs: 64 HalfK and 640 P.
pub const VIRTUAL: usize = 64 + PIECE_SQUARES;
/// All feature-transformer inputs while training.
pub const FT_ROWS: usize = INPUTS + VIRTUAL;
/// Internal units per unit of the float model's output (nodchip's `kPonanzaConstant`,
/// docs/net-format.md §10.1): the model evaluates a position as `600 × out`.
pub const INTERNAL_PER_FLOAT_OUTPUT: f32 = 600.0;

/// 32 floats: one chunk of an accumulator, or one hidden layer.
pub type Lanes = [f32; LANES];
/// One whole feature-transformer row (256 floats), chunk by chunk.
pub type Row = [Lanes; CHUNKS];

const _: () = assert!(HIDDEN == LANES && L1_IN == 2 * CHUNKS * LANES);

/// The feature-transformer biases and the three layers after the transformer.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub struct Dense {
    /// The feature transformer's biases.
    pub ft_b: [Lanes; CHUNKS],
    /// The first hidden layer's weights, input-major: `l1_w[i]` holds the 32 weights
    /// leaving input i.
    pub l1_w: [Lanes; L1_IN],
    /// The first hidden layer's biases.
    pub l1_b: Lanes,
    /// The second hidden layer's weights, input-major.
    pub l2_w: [Lanes; HIDDEN],
    /// The second hidden layer's biases.
    pub l2_b: Lanes,
    /// The output's weights.
    pub out_w: Lanes,
    /// The output's bias.
    pub out_b: f32,
}

impl Dense {
    /// Every parameter, in the order of the fields.
    pub fn as_slice(&self) -> &[f32] {
        bytemuck::cast_slice(std::slice::from_ref(self))
    }

    /// Every parameter, in the order of the fields, to write.
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        bytemuck::cast_slice_mut(std::slice::from_mut(self))
    }
}
