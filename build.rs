//! Embeds the default net, and names the commit the binary is built from.
//!
//! The net is `nets/<DEFAULT_NET>` (or the file named by the `NUE_NET` environment
//! variable, to try a candidate net without touching the tree). The build fails with a
//! clear message when the file is missing or is not a HalfKP 256x2-32-32 net of the
//! Stockfish 12 format: version, the three architecture hashes and the exact size are
//! checked here, the same checks the engine's loader makes at run time.

use std::{env, fs, path::PathBuf};

/// The default net: trained by us, see `nets/README.md`.
const DEFAULT_NET: &str = "nn-1f7c2a37363a.nnue";

const VERSION: u32 = 0x7AF3_2F16;
const FT_HASH: u32 = 0x5D69_D7B8;
const LAYERS_HASH: u32 = 0x6333_7156;
/// File size without the description string (docs/net-format.md §2).
const FIXED_BYTES: usize = 21_022_520;

fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

fn check(bytes: &[u8]) -> Result<(), String> {
    if bytes.len() < 12 {
        return Err(format!("{} bytes is too short for a .nnue header", bytes.len()));
    }
    if word(bytes, 0) != VERSION {
        return Err(format!("version {:#010x}, expected {VERSION:#010x}", word(bytes, 0)));
    }
    if word(bytes, 4) != FT_HASH ^ LAYERS_HASH {
        return Err(format!(
            "network hash {:#010x}, expected {:#010x}",
            word(bytes, 4),
            FT_HASH ^ LAYERS_HASH
        ));
    }
    let expected = FIXED_BYTES + word(bytes, 8) as usize;
    if bytes.len() != expected {
        return Err(format!("expected {expected} bytes, got {}", bytes.len()));
    }
    let ft = 12 + word(bytes, 8) as usize;
    if word(bytes, ft) != FT_HASH {
        return Err(format!(
            "feature transformer hash {:#010x}, expected {FT_HASH:#010x}",
            word(bytes, ft)
        ));
    }
    let layers = ft + 4 + 2 * 256 + 2 * 41024 * 256;
    if word(bytes, layers) != LAYERS_HASH {
        return Err(format!(
            "layers hash {:#010x}, expected {LAYERS_HASH:#010x}",
            word(bytes, layers)
        ));
    }
    Ok(())
}

/// The short hash of the checkout's commit, or `None` outside a git checkout (a source
/// archive) or without git. Cargo runs this again when the checkout moves to another
/// commit.
fn commit() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git").args(args).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    // Only this project's own checkout: a source archive unpacked inside another
    // repository must not take that one's commit.
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    if top.canonicalize().ok()? != manifest.canonicalize().ok()? {
        return None;
    }
    let head = git(&["rev-parse", "--git-path", "HEAD"])?;
    println!("cargo:rerun-if-changed={head}");
    if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
        println!("cargo:rerun-if-changed={}", git(&["rev-parse", "--git-path", &reference])?);
        println!("cargo:rerun-if-changed={}", git(&["rev-parse", "--git-path", "packed-refs"])?);
    }
    git(&["rev-parse", "--short=7", "HEAD"]).filter(|hash| !hash.is_empty())
}

fn main() {
    // `id name`'s version: the package's, and the commit when built from a checkout.
    let version = env::var("CARGO_PKG_VERSION").expect("cargo sets it");
    let version = match commit() {
        Some(hash) => format!("{version} ({hash})"),
        None => version,
    };
    println!("cargo:rustc-env=NUE_VERSION={version}");

    println!("cargo:rerun-if-env-changed=NUE_NET");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let path = match env::var_os("NUE_NET") {
        Some(p) => PathBuf::from(p),
        None => manifest.join("nets").join(DEFAULT_NET),
    };
    println!("cargo:rerun-if-changed={}", path.display());
    let bytes = fs::read(&path).unwrap_or_else(|e| {
        panic!("cannot read the default net {}: {e} (build.rs names it; nets/README.md says how it was made)", path.display())
    });
    if let Err(e) = check(&bytes) {
        panic!(
            "{} is not a HalfKP 256x2-32-32 net in the Stockfish 12 format: {e}",
            path.display()
        );
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it"));
    let code = format!(
        "/// File name of the embedded net.\npub const NAME: &str = {name:?};\n\
         /// The embedded net, validated by build.rs.\npub static BYTES: &[u8] = include_bytes!({:?});\n",
        path.canonicalize().unwrap_or(path.clone()).display().to_string()
    );
    fs::write(out.join("default_net.rs"), code).expect("OUT_DIR is writable");
}
