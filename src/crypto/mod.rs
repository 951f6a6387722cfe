//! The layer just above `util` (beside `wire` and `schema`, importing only `util`): JWS
//! signature verification with public keys, written by hand because no crypto crate may be
//! added. RS256 and PS256 (`rsa.rs`, on the
//! Montgomery arithmetic of `montgomery.rs`), ES256 (`p256.rs`) and EdDSA with Ed25519
//! (`ed25519.rs`, with `sha512.rs`); the curves share `residue.rs` (256-bit modular
//! arithmetic) and `straus.rs` (`[a]P + [b]Q`). `key.rs` is the surface a JWT check uses.
//!
//! Verification only: nothing here holds a secret, so nothing here is constant time. What is
//! guarded against is a hostile key or token: bounds on RSA keys, points checked to be on
//! their curve, canonical encodings, and every Wycheproof vector (`wycheproof.rs`).

// Until the JWT check of issue 29 calls it, only the tests do.
#![cfg_attr(
    not(test),
    expect(dead_code, unused_imports, reason = "the JWT check will be the first caller")
)]

mod ed25519;
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

pub(crate) use key::{Algorithm, PublicKey, VerifyError};
pub(crate) use key_error::KeyError;
