//! Nothing readable in Temporal: every payload Healer hands to Temporal (a run's script, its
//! environment, what it printed, its result) is sealed with AES-256-GCM before it leaves the
//! process, and opened only by a process that holds the key (the control room, from its
//! keyring or secrets file; a worker, from the key file or variable it was started with).
//! Temporal's database and its web UI see only `binary/encrypted` payloads.
//!
//! Sealing is also the authentication: AES-GCM's tag fails for anything not sealed with this
//! key, and a payload that is not sealed at all is refused too, never passed through. Anyone
//! who can reach the namespace can start a `HealerRun` or answer for one; only the control
//! room and its workers hold the key (docs/cluster.md, "What a worker trusts").

use std::collections::HashMap;

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine as _;
use futures::future::BoxFuture;
use futures::FutureExt;
use serde::{Deserialize, Serialize};
use temporalio_common::data_converters::{
    DataConverter, DefaultFailureConverter, PayloadCodec, PayloadConversionError, PayloadConverter,
    SerializationContextData,
};
use temporalio_common::protos::temporal::api::common::v1::Payload;

/// The `encoding` a sealed payload carries.
pub const SEALED_ENCODING: &[u8] = b"binary/encrypted";
/// Which key sealed it (one key per Healer today; named so a rotation can tell them apart).
const KEY_ID: &[u8] = b"healer-1";
const NONCE_LEN: usize = 12;
/// The key's length in bytes (AES-256).
pub const KEY_LEN: usize = 32;

/// A cluster key: 32 random bytes, written and read as base64.
#[derive(Clone)]
pub struct ClusterKey([u8; KEY_LEN]);

impl std::fmt::Debug for ClusterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClusterKey(…)")
    }
}

impl ClusterKey {
    pub fn generate() -> ClusterKey {
        ClusterKey(rand::random())
    }

    /// Read a key as written by [`ClusterKey::to_text`] (surrounding white space ignored).
    pub fn from_text(text: &str) -> Option<ClusterKey> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .ok()?;
        Some(ClusterKey(bytes.try_into().ok()?))
    }

    pub fn to_text(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.0)
    }

    /// The Temporal data converter that seals every payload with this key.
    pub fn data_converter(&self) -> DataConverter {
        DataConverter::new(
            PayloadConverter::default(),
            DefaultFailureConverter::default(),
            SealCodec::new(self),
        )
    }
}

/// The payload codec: each payload (metadata and data) becomes one sealed blob.
#[derive(Clone)]
pub struct SealCodec {
    cipher: Aes256Gcm,
}

/// A payload as sealed: its metadata and data, so nothing of it stays outside.
#[derive(Serialize, Deserialize)]
struct Inner {
    metadata: HashMap<String, String>,
    data: String,
}

impl SealCodec {
    pub fn new(key: &ClusterKey) -> SealCodec {
        SealCodec {
            cipher: Aes256Gcm::new((&key.0).into()),
        }
    }

    pub fn seal(&self, payload: Payload) -> Result<Payload, PayloadConversionError> {
        let b64 = base64::engine::general_purpose::STANDARD;
        let inner = Inner {
            metadata: payload
                .metadata
                .into_iter()
                .map(|(k, v)| (k, b64.encode(v)))
                .collect(),
            data: b64.encode(&payload.data),
        };
        let plain = serde_json::to_vec(&inner).map_err(encoding)?;
        let nonce: [u8; NONCE_LEN] = rand::random();
        let sealed = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), plain.as_slice())
            .map_err(|_| encoding("a payload could not be sealed"))?;
        let mut data = nonce.to_vec();
        data.extend(sealed);
        Ok(Payload {
            metadata: HashMap::from([
                ("encoding".to_string(), SEALED_ENCODING.to_vec()),
                ("encryption-key-id".to_string(), KEY_ID.to_vec()),
            ]),
            data,
            ..Payload::default()
        })
    }

    pub fn open(&self, payload: Payload) -> Result<Payload, PayloadConversionError> {
        if payload.metadata.is_empty() && payload.data.is_empty() {
            // Nothing at all (an absent value): nothing to believe or to run.
            return Ok(payload);
        }
        if payload.metadata.get("encoding").map(Vec::as_slice) != Some(SEALED_ENCODING) {
            tracing::debug!(
                "the refused payload: {:?}, {} bytes",
                payload
                    .metadata
                    .iter()
                    .map(|(k, v)| format!("{k}={}", String::from_utf8_lossy(v)))
                    .collect::<Vec<_>>(),
                payload.data.len()
            );
            return Err(refused(NOT_SEALED));
        }
        if payload.data.len() < NONCE_LEN {
            return Err(refused(OTHER_KEY));
        }
        let (nonce, sealed) = payload.data.split_at(NONCE_LEN);
        let plain = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), sealed)
            .map_err(|_| refused(OTHER_KEY))?;
        let inner: Inner = serde_json::from_slice(&plain).map_err(encoding)?;
        let b64 = base64::engine::general_purpose::STANDARD;
        let decode = |text: &str| b64.decode(text).map_err(encoding);
        Ok(Payload {
            metadata: inner
                .metadata
                .iter()
                .map(|(k, v)| Ok((k.clone(), decode(v)?)))
                .collect::<Result<_, PayloadConversionError>>()?,
            data: decode(&inner.data)?,
            ..Payload::default()
        })
    }
}

/// What a refused payload is told (and the worker's log says).
pub const NOT_SEALED: &str =
    "refused a payload that is not sealed with the cluster key: only the control room and its workers hold it, so this was sent by something else";
pub const OTHER_KEY: &str =
    "refused a payload sealed with another cluster key (or altered on the way): this process holds another key, or someone else made it";

fn refused(why: &'static str) -> PayloadConversionError {
    tracing::warn!("{why}");
    encoding(why)
}

fn encoding(e: impl ToString) -> PayloadConversionError {
    PayloadConversionError::EncodingError(e.to_string().into())
}

impl PayloadCodec for SealCodec {
    fn encode(
        &self,
        _: &SerializationContextData,
        payloads: Vec<Payload>,
    ) -> BoxFuture<'static, Result<Vec<Payload>, PayloadConversionError>> {
        let sealed = payloads.into_iter().map(|p| self.seal(p)).collect();
        async move { sealed }.boxed()
    }

    fn decode(
        &self,
        _: &SerializationContextData,
        payloads: Vec<Payload>,
    ) -> BoxFuture<'static, Result<Vec<Payload>, PayloadConversionError>> {
        let opened = payloads.into_iter().map(|p| self.open(p)).collect();
        async move { opened }.boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_payload_holds_nothing_readable_and_opens_only_with_its_key() {
        let key = ClusterKey::generate();
        let codec = SealCodec::new(&key);
        let payload = Payload {
            metadata: HashMap::from([("encoding".to_string(), b"json/plain".to_vec())]),
            data: br#"{"env":"CANARY-7731"}"#.to_vec(),
            ..Payload::default()
        };
        let sealed = codec.seal(payload.clone()).expect("sealed");
        let bytes = [
            sealed.data.clone(),
            sealed.metadata.values().flatten().copied().collect(),
        ]
        .concat();
        assert!(!String::from_utf8_lossy(&bytes).contains("CANARY-7731"));
        assert!(!String::from_utf8_lossy(&bytes).contains("json/plain"));
        assert_eq!(codec.open(sealed.clone()).expect("opened"), payload);

        let other = SealCodec::new(&ClusterKey::generate());
        assert!(other.open(sealed.clone()).is_err());
        let mut altered = sealed;
        if let Some(last) = altered.data.last_mut() {
            *last ^= 1;
        }
        assert!(codec.open(altered).is_err(), "a changed byte fails the tag");
        let text = key.to_text();
        assert_eq!(
            ClusterKey::from_text(&format!(" {text}\n")).map(|k| k.0),
            Some(key.0)
        );
        assert!(ClusterKey::from_text("short").is_none());
    }

    #[test]
    fn a_payload_that_is_not_sealed_is_refused_not_passed_through() {
        let codec = SealCodec::new(&ClusterKey::generate());
        let plain = Payload {
            metadata: HashMap::from([("encoding".to_string(), b"json/plain".to_vec())]),
            data: br#"{"code":"import os"}"#.to_vec(),
            ..Payload::default()
        };
        let error = codec.open(plain).expect_err("refused").to_string();
        assert!(error.contains("not sealed"), "{error}");
        let forged = Payload {
            metadata: HashMap::from([("encoding".to_string(), SEALED_ENCODING.to_vec())]),
            data: vec![7; 40],
            ..Payload::default()
        };
        assert!(codec.open(forged).is_err());
        assert_eq!(
            codec.open(Payload::default()).expect("empty"),
            Payload::default()
        );
    }
}
