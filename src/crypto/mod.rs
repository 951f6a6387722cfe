//! The layer just above `util` (beside `wire` and `schema`, importing only `util`): JWS
//! signature verification with public keys, written by hand because no crypto crate may be
//! added. `compact_jws.rs` checks a token's header and signature against a key set that
//! `jwks.rs` reads; `key.rs` is the key API under both. RS256 and PS256 (`rsa.rs`, on the
//! Montgomery arithmetic of `montgomery.rs`), ES256 (`p256.rs`) and EdDSA with Ed25519
//! (`ed25519.rs`, with `sha512.rs`); the curves share `residue.rs` (256-bit modular
//! arithmetic) and `straus.rs` (`[a]P + [b]Q`).
//!
//! Verification only: nothing here holds a secret, so nothing here is constant time. What is
//! guarded against is a hostile key or token: bounds on RSA keys, points checked to be on
//! their curve, canonical encodings, and every Wycheproof vector (`wycheproof.rs`).

mod compact_jws;
mod ed25519;
mod jwks;
mod key;
mod key_error;
mod montgomery;
mod p256;
mod residue;
mod rsa;
mod sha512;
mod straus;
#[cfg(test)]
mod wycheproof;

pub(crate) use compact_jws::{JwsError, refuse_extensions, verify as verify_jws};
pub(crate) use jwks::{KeySet, MAX_JWKS_BYTES};
// The key API is the JWS check's; only the Wycheproof tests call it from outside.
#[cfg(test)]
pub(crate) use key::{Algorithm, PublicKey, VerifyError};
#[cfg(test)]
pub(crate) use key_error::KeyError;
