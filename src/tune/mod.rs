//! `nue tune`: an SPSA tune of the search parameters that can be stopped at any moment and
//! resumed later, and ends where a tune that was never stopped would have ended.
//!
//! Its parts: OpenBench's schedule and each iteration's plan, drawn from the seed and the
//! iteration's number alone ([`spsa`]), and the tune's whole state in one checksummed text
//! file ([`state`]).

pub mod spsa;
pub mod state;

pub use self::{
    spsa::{Openings, Plan, Schedule, Tuned},
    state::{Anomalies, Note, Played, State, Step},
};
