//! The HalfKP 256x2-32-32-1 network in the Stockfish 12 `.nnue` format.
//!
//! [`Network`] holds the integer weights of one file, validated as docs/net-format.md
//! §2.2 describes; [`features`] maps pieces to inputs, [`accumulator`] keeps the first
//! layer up to date move by move, and [`simd`] holds the kernels. The value of a position
//! is `raw / 16` in Stockfish 12's internal units (a pawn is 208), see [`to_internal`].

pub mod accumulator;
pub mod features;
pub mod simd;

use std::{
    fmt,
    path::Path,
    sync::{Arc, OnceLock},
};

use arrayvec::ArrayVec;
use bytemuck::{Pod, Zeroable};
use shakmaty::{Board, Color};

use self::{
    features::{FeatureList, INPUTS, MAX_ACTIVE},
    simd::{HiddenWeights, Simd, HIDDEN, L1_IN},
};

/// Width of one perspective's accumulator.
pub const HALF: usize = 256;
/// File format version (docs/net-format.md §2).
pub const VERSION: u32 = 0x7AF3_2F16;
/// Hash of the feature transformer: `HalfKP(Friend)` XOR 2·256 (docs/net-format.md §2.1).
pub const FT_HASH: u32 = 0x5D69_D7B8;
/// Hash of the affine/ClippedReLU chain after the feature transformer
/// (docs/net-format.md §2.1).
pub const LAYERS_HASH: u32 = 0x6333_7156;
/// Hash in the file header: the two block hashes XORed.
pub const NETWORK_HASH: u32 = FT_HASH ^ LAYERS_HASH;
/// The architecture string every trainer of the period wrote into the header.
pub const DESCRIPTION: &str = "Features=HalfKP(Friend)[41024->256x2],Network=AffineTransform[1<-32](ClippedReLU[32](AffineTransform[32<-32](ClippedReLU[32](AffineTransform[32<-512](InputSlice[512(0:512)])))))";
/// File size without the description: every row of the table in docs/net-format.md §2
/// but row 4.
pub const FIXED_BYTES: usize = 4 * 3
    + 4
    + 2 * HALF
    + 2 * INPUTS * HALF
    + 4
    + 4 * HIDDEN
    + L1_IN * HIDDEN
    + 4 * HIDDEN
    + HIDDEN * HIDDEN
    + 4
    + HIDDEN;
/// Raw network output per internal unit: the divisor from the raw output to internal
/// units (Stockfish's `FV_SCALE`, docs/net-format.md §8).
pub const RAW_PER_INTERNAL: i32 = 16;
/// Internal units per pawn; UCI centipawns are `internal * 100 / PAWN_VALUE`
/// (docs/net-format.md §8).
pub const PAWN_VALUE: i32 = 208;

const _: () = assert!(FIXED_BYTES == 21_022_520);

/// The net compiled into the binary: `nets/<name>`, chosen and validated by `build.rs`.
/// The bytes are parsed into aligned heap arrays once, so the embedded copy itself needs
/// no alignment.
pub mod default_net {
    include!(concat!(env!("OUT_DIR"), "/default_net.rs"));
}

/// The embedded net, parsed on first use and shared after that.
pub fn default_network() -> Arc<Network> {
    static NET: OnceLock<Arc<Network>> = OnceLock::new();
    NET.get_or_init(|| {
        let net = Network::from_bytes(default_net::BYTES).expect("build.rs validated the net");
        Arc::from(net)
    })
    .clone()
}
const _: () = assert!(std::mem::size_of::<Half>() == 2 * HALF);

/// One perspective's accumulator, or one row of feature-transformer weights:
/// 256 i16 lanes, aligned for vector loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(64))]
pub struct Half(pub [i16; HALF]);

/// A 64-byte aligned wrapper for the hidden-layer weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Aligned<T>(pub T);

/// Why a byte stream is not a HalfKP 256x2-32-32 network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetError {
    /// The file ends before its 12-byte header does.
    NoHeader { len: usize },
    /// The version word is not `0x7AF32F16`.
    Version { found: u32 },
    /// One of the three architecture hashes differs.
    Hash { which: &'static str, expected: u32, found: u32 },
    /// The length does not match the one the header implies.
    Size { expected: usize, got: usize },
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            NetError::NoHeader { len } => {
                write!(f, "too short for a .nnue header: {len} bytes, need at least 12")
            }
            NetError::Version { found } => write!(
                f,
                "unsupported version {found:#010x}, expected {VERSION:#010x} (Stockfish 12 format)"
            ),
            NetError::Hash { which, expected, found } => write!(
                f,
                "{which} hash is {found:#010x}, expected {expected:#010x}: not a HalfKP 256x2-32-32 net"
            ),
            NetError::Size { expected, got } => write!(f, "expected {expected} bytes, got {got}"),
        }
    }
}

impl std::error::Error for NetError {}

/// The integer parameters of one network, laid out for the kernels.
#[derive(Clone, PartialEq, Eq)]
pub struct Network {
    /// Free text from the header; Stockfish ignores it and so do we.
    pub description: String,
    /// Feature-transformer biases.
    pub ft_bias: Half,
    /// Feature-transformer weights, one row per HalfKP input.
    pub ft_weights: Box<[Half]>,
    /// First hidden layer: 512 → 32.
    pub l1_bias: [i32; HIDDEN],
    /// Row-major by output neuron.
    pub l1_weights: Box<Aligned<[i8; HIDDEN * L1_IN]>>,
    /// [`simd::l1_grouping`] of `l1_weights`, worked out when the net is made: which exact
    /// kernel the first layer may use.
    pub l1_grouping: simd::L1Grouping,
    /// Second hidden layer: 32 → 32.
    pub l2_bias: [i32; HIDDEN],
    /// By output neuron, and by quad of inputs for the AVX2 kernel.
    pub l2_weights: HiddenWeights,
    /// Output layer: 32 → 1.
    pub out_bias: i32,
    /// Weights of the single output.
    pub out_weights: [i8; HIDDEN],
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network").field("description", &self.description).finish_non_exhaustive()
    }
}

/// A little-endian reader that never reads past the end (lengths are checked up front).
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        head
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().expect("4 bytes"))
    }
    fn i32s<const N: usize>(&mut self) -> [i32; N] {
        let mut out = [0; N];
        for (o, b) in out.iter_mut().zip(self.take(4 * N).chunks_exact(4)) {
            *o = i32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
        out
    }
    fn i16s(&mut self, out: &mut [i16]) {
        let bytes = self.take(2 * out.len());
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *o = i16::from_le_bytes([b[0], b[1]]);
        }
    }
    fn i8s(&mut self, out: &mut [i8]) {
        let bytes = self.take(out.len());
        for (o, &b) in out.iter_mut().zip(bytes) {
            *o = b as i8;
        }
    }
    fn expect_hash(&mut self, which: &'static str, expected: u32) -> Result<(), NetError> {
        let found = self.u32();
        if found == expected {
            Ok(())
        } else {
            Err(NetError::Hash { which, expected, found })
        }
    }
}

impl Network {
    /// Parses and validates a `.nnue` file image (docs/net-format.md §2.2).
    ///
    /// ```
    /// # use nue::nnue::{Network, NetError};
    /// let err = Network::from_bytes(&[0u8; 1200]).unwrap_err();
    /// assert!(matches!(err, NetError::Version { .. }));
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Box<Network>, NetError> {
        if bytes.len() < 12 {
            return Err(NetError::NoHeader { len: bytes.len() });
        }
        let mut r = Reader { bytes };
        let version = r.u32();
        if version != VERSION {
            return Err(NetError::Version { found: version });
        }
        r.expect_hash("network", NETWORK_HASH)?;
        let desc_len = r.u32() as usize;
        let expected = FIXED_BYTES.saturating_add(desc_len);
        if bytes.len() != expected {
            return Err(NetError::Size { expected, got: bytes.len() });
        }
        let description = String::from_utf8_lossy(r.take(desc_len)).into_owned();

        r.expect_hash("feature transformer", FT_HASH)?;
        let mut ft_bias = Half::zeroed();
        r.i16s(&mut ft_bias.0);
        let mut ft_weights = vec![Half::zeroed(); INPUTS].into_boxed_slice();
        r.i16s(bytemuck::cast_slice_mut(&mut ft_weights[..]));

        r.expect_hash("layers", LAYERS_HASH)?;
        let l1_bias = r.i32s();
        let mut l1_weights = Box::new(Aligned([0; HIDDEN * L1_IN]));
        r.i8s(&mut l1_weights.0);
        let l2_bias = r.i32s();
        let mut l2_weights = [0; HIDDEN * HIDDEN];
        r.i8s(&mut l2_weights);
        let [out_bias] = r.i32s();
        let mut out_weights = [0; HIDDEN];
        r.i8s(&mut out_weights);
        debug_assert!(r.bytes.is_empty());

        Ok(Box::new(Network {
            description,
            ft_bias,
            ft_weights,
            l1_bias,
            l1_grouping: simd::l1_grouping(&l1_weights.0),
            l1_weights,
            l2_bias,
            l2_weights: HiddenWeights::new(l2_weights),
            out_bias,
            out_weights,
        }))
    }

    /// Reads and validates a `.nnue` file from disk.
    pub fn load(path: &Path) -> anyhow::Result<Box<Network>> {
        use anyhow::Context;
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        Network::from_bytes(&bytes)
            .with_context(|| format!("{} is not a usable net", path.display()))
    }

    /// Serialises the network in the Stockfish 12 format, byte for byte what
    /// [`Network::from_bytes`] reads.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FIXED_BYTES + self.description.len());
        let u32 = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
        u32(&mut out, VERSION);
        u32(&mut out, NETWORK_HASH);
        u32(&mut out, self.description.len() as u32);
        out.extend_from_slice(self.description.as_bytes());
        u32(&mut out, FT_HASH);
        let rows = std::iter::once(&self.ft_bias).chain(self.ft_weights.iter());
        out.extend(rows.flat_map(|row| row.0.iter().flat_map(|v| v.to_le_bytes())));
        u32(&mut out, LAYERS_HASH);
        out.extend(self.l1_bias.iter().flat_map(|v| v.to_le_bytes()));
        out.extend(self.l1_weights.0.iter().map(|&v| v as u8));
        out.extend(self.l2_bias.iter().flat_map(|v| v.to_le_bytes()));
        out.extend(self.l2_weights.rows().iter().map(|&v| v as u8));
        out.extend(self.out_bias.to_le_bytes());
        out.extend(self.out_weights.iter().map(|&v| v as u8));
        out
    }

    /// The same net with every evaluation `by` internal units higher (lower when `by` is
    /// negative): the output bias alone moves, by `by * RAW_PER_INTERNAL`, so every raw output
    /// moves by exactly that. `None` when the bias would overflow.
    pub fn shifted(&self, by: i32) -> Option<Network> {
        let out_bias = by.checked_mul(RAW_PER_INTERNAL)?.checked_add(self.out_bias)?;
        Some(Network { out_bias, ..self.clone() })
    }

    /// The weight row of one HalfKP input.
    #[inline]
    pub fn row(&self, feature: usize) -> &Half {
        &self.ft_weights[feature]
    }

    /// Recomputes one perspective's accumulator from scratch.
    pub fn refresh(&self, simd: Simd, features: &FeatureList, dst: &mut Half) {
        let rows: ArrayVec<&Half, MAX_ACTIVE> = features.iter().map(|&f| self.row(f)).collect();
        simd.refresh(dst, &self.ft_bias, &rows);
    }

    /// Runs the layers after the feature transformer: the raw i32 output from the point
    /// of view of the side whose accumulator is `us`.
    #[inline]
    pub fn propagate(&self, simd: Simd, us: &Half, them: &Half) -> i32 {
        struct Layers<'a>(&'a Network, &'a Half, &'a Half);
        impl simd::Job for Layers<'_> {
            type Output = i32;
            #[inline(always)]
            fn run(self, simd: Simd) -> i32 {
                self.0.layers(simd, self.1, self.2)
            }
        }
        simd.dispatch(Layers(self, us, them))
    }

    /// [`Network::propagate`]'s body, for a [`Simd::dispatch`] job: always inlined, so that
    /// it is compiled for the job's instructions with `simd` known.
    #[inline(always)]
    pub(crate) fn layers(&self, simd: Simd, us: &Half, them: &Half) -> i32 {
        let mut input = Aligned([0u8; L1_IN]);
        simd.transform(us, them, &mut input.0);
        let mut sums = Aligned([0i32; HIDDEN]);
        let mut hidden = Aligned([0u8; HIDDEN]);
        simd.affine_l1(&input.0, &self.l1_weights.0, self.l1_grouping, &self.l1_bias, &mut sums.0);
        simd::clipped_relu(&sums.0, &mut hidden.0);
        simd.affine_l2(&hidden.0, &self.l2_weights, &self.l2_bias, &mut sums.0);
        simd::clipped_relu(&sums.0, &mut hidden.0);
        simd::output(&hidden.0, &self.out_weights, self.out_bias)
    }

    /// Evaluates `board` with `turn` to move by a full refresh: the raw network output,
    /// side-to-move point of view. The search uses [`accumulator::AccumulatorStack`] instead.
    pub fn evaluate(&self, simd: Simd, board: &Board, turn: Color) -> i32 {
        let mut acc = [Half::zeroed(); 2];
        for (acc, perspective) in acc.iter_mut().zip([turn, !turn]) {
            self.refresh(simd, &features::active(board, perspective), acc);
        }
        self.propagate(simd, &acc[0], &acc[1])
    }
}

/// The network's value in internal units: `raw / 16`, truncated toward zero
/// (docs/net-format.md §8).
#[inline]
pub fn to_internal(raw: i32) -> i32 {
    raw / RAW_PER_INTERNAL
}

/// Internal units to UCI centipawns: `v * 100 / 208`, truncated (docs/net-format.md §8).
#[inline]
pub fn internal_to_cp(v: i32) -> i32 {
    v * 100 / PAWN_VALUE
}
