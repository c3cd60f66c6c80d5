//! Where Healer keeps secret values (provider keys, a workflow's secrets): the OS keyring, or —
//! on a computer where no keyring service runs, and only once the person has said yes — Healer's
//! own secrets file in the data folder. Never the database.
//!
//! The file (`secrets.json`) holds each value sealed with AES-256-GCM under a key kept beside it
//! (`secrets.key`); both are mode 0600. What that protects against and what not is said to the
//! person before they accept it (see [`FILE_PROTECTS`]) and in docs/decisions.md: a copy of the
//! one file alone (a backup, a sync folder, a screenshot of its text) reveals nothing; anyone who
//! can read the data folder as this user can read both and so the secrets — like `gh`'s
//! plain-text fallback, it is no defence against malware running as you.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The keyring "service" under which Healer keeps its secrets.
const KEYRING_SERVICE: &str = "healer";

/// Set to `off` to never touch the OS keyring (CI, tests, a machine where probing it hangs).
pub const KEYRING_ENV: &str = "HEALER_KEYRING";

/// The sentence a person reads before choosing the secrets file.
pub const FILE_PROTECTS: &str = "Healer keeps the values in a file in its data folder that only \
your user can open, sealed with a key kept beside it. A copy of that one file on its own (a \
backup, a synced folder) reveals nothing, but anyone or any program that can read your files can \
read both and so your keys. A keyring service protects them better when your computer has one.";

const FILE: &str = "secrets.json";
const KEY_FILE: &str = "secrets.key";
const NONCE_LEN: usize = 12;

/// Where a value is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum KeptIn {
    Keyring,
    File,
}

/// What this computer offers, as Settings shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct KeepStatus {
    /// The OS keyring answers.
    pub keyring: bool,
    /// The person chose Healer's own file (it exists).
    pub file: bool,
    /// Where a new value would go; `None`: nowhere yet (the person has to choose the file).
    pub new_values_go_to: Option<KeptIn>,
    /// What the file protects against and what not, to show beside the choice.
    pub file_protects: String,
}

#[derive(Debug, thiserror::Error)]
pub enum KeepError {
    #[error(
        "this computer has no keyring service, so Healer cannot keep the value there; \
         choose to keep it in Healer's own secrets file, or put it in an environment variable"
    )]
    NoPlace,
    #[error("the secrets file could not be used: {0}")]
    File(String),
    #[error("the keyring refused: {0}")]
    Keyring(String),
}

/// Secret values by name ("provider:openai", "workflow:3:API_TOKEN"). Cheap to clone.
#[derive(Clone)]
pub struct Keep {
    keyring: bool,
    no_service: Arc<AtomicBool>,
    dir: Option<PathBuf>,
}

impl Keep {
    /// The keyring (unless `HEALER_KEYRING=off`), and the secrets file in `data_dir` once chosen.
    pub fn new(data_dir: &Path) -> Keep {
        let off =
            super::env_var(KEYRING_ENV).is_some_and(|value| value.eq_ignore_ascii_case("off"));
        Keep {
            keyring: !off,
            no_service: Arc::default(),
            dir: Some(data_dir.to_path_buf()),
        }
    }

    /// Nowhere: values come only from environment variables (the providers' key variables).
    pub fn nowhere() -> Keep {
        Keep {
            keyring: false,
            no_service: Arc::default(),
            dir: None,
        }
    }

    /// The secrets file's folder chosen, keyring left alone (tests of the fallback).
    pub fn file_only(data_dir: &Path) -> Keep {
        Keep {
            keyring: false,
            no_service: Arc::default(),
            dir: Some(data_dir.to_path_buf()),
        }
    }

    /// What this computer offers. Blocking (asks the keyring once).
    pub fn status(&self) -> KeepStatus {
        let keyring = self.keyring_answers();
        let file = self.file_chosen();
        KeepStatus {
            keyring,
            file,
            new_values_go_to: if keyring {
                Some(KeptIn::Keyring)
            } else if file {
                Some(KeptIn::File)
            } else {
                None
            },
            file_protects: FILE_PROTECTS.to_string(),
        }
    }

    /// The person said yes to the secrets file: make its key (kept if there is one already).
    pub fn choose_file(&self) -> Result<(), KeepError> {
        let dir = self.dir.as_deref().ok_or(KeepError::NoPlace)?;
        std::fs::create_dir_all(dir).map_err(file_error)?;
        let key_path = dir.join(KEY_FILE);
        if key_path.exists() {
            return Ok(());
        }
        let key: [u8; 32] = rand::random();
        let temp = dir.join(format!("{KEY_FILE}.{}", std::process::id()));
        write_private(&temp, &key)?;
        // A key another process made in the meantime wins; ours is dropped.
        let linked = std::fs::hard_link(&temp, &key_path);
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => Ok(()),
            Err(_) if key_path.exists() => Ok(()),
            Err(e) => Err(file_error(e)),
        }
    }

    /// The value kept as `name`, and where. Blocking.
    pub fn get(&self, name: &str) -> Option<(String, KeptIn)> {
        if let Some(value) = self.keyring_get(name) {
            return Some((value, KeptIn::Keyring));
        }
        let value = self.file_get(name).ok().flatten()?;
        Some((value, KeptIn::File))
    }

    /// Keep `value` as `name`: in the keyring when it answers, else in the chosen file.
    /// Blocking.
    pub fn set(&self, name: &str, value: &str) -> Result<KeptIn, KeepError> {
        if self.keyring && !self.no_service.load(Ordering::Relaxed) {
            match entry(name).and_then(|e| e.set_password(value)) {
                Ok(()) => return Ok(KeptIn::Keyring),
                Err(e) if no_service(&e) => self.no_service.store(true, Ordering::Relaxed),
                Err(e) => return Err(KeepError::Keyring(keyring_text(e))),
            }
        }
        if !self.file_chosen() {
            return Err(KeepError::NoPlace);
        }
        self.edit_file(|values, cipher| {
            values.insert(name.to_string(), seal(cipher, name, value)?);
            Ok(())
        })?;
        Ok(KeptIn::File)
    }

    /// Forget `name` wherever it is kept (nothing to forget is fine). Blocking.
    pub fn forget(&self, name: &str) -> Result<(), KeepError> {
        if self.keyring && !self.no_service.load(Ordering::Relaxed) {
            match entry(name).and_then(|e| e.delete_credential()) {
                Ok(()) | Err(keyring::Error::NoEntry) => {}
                Err(e) if no_service(&e) => self.no_service.store(true, Ordering::Relaxed),
                Err(e) => return Err(KeepError::Keyring(keyring_text(e))),
            }
        }
        if self.file_chosen() {
            self.edit_file(|values, _| {
                values.remove(name);
                Ok(())
            })?;
        }
        Ok(())
    }

    fn keyring_answers(&self) -> bool {
        if !self.keyring || self.no_service.load(Ordering::Relaxed) {
            return false;
        }
        match entry("probe").and_then(|e| e.get_password()) {
            Ok(_) | Err(keyring::Error::NoEntry) => true,
            Err(e) => {
                if no_service(&e) {
                    self.no_service.store(true, Ordering::Relaxed);
                }
                false
            }
        }
    }

    fn keyring_get(&self, name: &str) -> Option<String> {
        if !self.keyring || self.no_service.load(Ordering::Relaxed) {
            return None;
        }
        match entry(name).and_then(|e| e.get_password()) {
            Ok(value) if !value.trim().is_empty() => Some(value),
            Ok(_) | Err(keyring::Error::NoEntry) => None,
            Err(e) => {
                if no_service(&e) {
                    // Headless: the file and environment variables are the sources from now on.
                    self.no_service.store(true, Ordering::Relaxed);
                }
                tracing::debug!("keyring not used: {}", keyring_text(e));
                None
            }
        }
    }

    fn file_chosen(&self) -> bool {
        self.dir
            .as_deref()
            .is_some_and(|dir| dir.join(KEY_FILE).is_file())
    }

    fn file_get(&self, name: &str) -> Result<Option<String>, KeepError> {
        if !self.file_chosen() {
            return Ok(None);
        }
        let dir = self.dir.as_deref().ok_or(KeepError::NoPlace)?;
        let cipher = cipher(dir)?;
        let values = read_values(&dir.join(FILE))?;
        values
            .get(name)
            .map(|sealed| open(&cipher, name, sealed))
            .transpose()
    }

    /// Read, change and write the file under an exclusive lock (the app and the CLI may both
    /// write); written whole to a temporary file and renamed, so a crash leaves the old or the
    /// new file, never half of one.
    fn edit_file(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, String>, &Aes256Gcm) -> Result<(), KeepError>,
    ) -> Result<(), KeepError> {
        let dir = self.dir.as_deref().ok_or(KeepError::NoPlace)?;
        let cipher = cipher(dir)?;
        let lock = File::open(dir.join(KEY_FILE)).map_err(file_error)?;
        let _held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| KeepError::File(e.to_string()))?;
        let path = dir.join(FILE);
        let mut values = read_values(&path)?;
        change(&mut values, &cipher)?;
        let text =
            serde_json::to_vec_pretty(&values).map_err(|e| KeepError::File(e.to_string()))?;
        let temp = dir.join(format!("{FILE}.{}", std::process::id()));
        write_private(&temp, &text)?;
        std::fs::rename(&temp, &path).map_err(file_error)
    }
}

fn cipher(dir: &Path) -> Result<Aes256Gcm, KeepError> {
    let mut key = Vec::new();
    File::open(dir.join(KEY_FILE))
        .and_then(|mut f| f.read_to_end(&mut key))
        .map_err(file_error)?;
    Aes256Gcm::new_from_slice(&key)
        .map_err(|_| KeepError::File(format!("{KEY_FILE} is not a key Healer made")))
}

fn read_values(path: &Path) -> Result<BTreeMap<String, String>, KeepError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| KeepError::File(format!("{FILE} cannot be read: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(file_error(e)),
    }
}

/// `value` sealed for `name` (the name is bound in, so a value moved to another name fails).
fn seal(cipher: &Aes256Gcm, name: &str, value: &str) -> Result<String, KeepError> {
    let nonce: [u8; NONCE_LEN] = rand::random();
    let sealed = cipher
        .encrypt(
            Nonce::from_slice(&nonce),
            Payload {
                msg: value.as_bytes(),
                aad: name.as_bytes(),
            },
        )
        .map_err(|_| KeepError::File("a value could not be sealed".to_string()))?;
    let mut bytes = nonce.to_vec();
    bytes.extend(sealed);
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn open(cipher: &Aes256Gcm, name: &str, sealed: &str) -> Result<String, KeepError> {
    let unreadable = || KeepError::File(format!("the value of {name} cannot be opened"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(sealed)
        .map_err(|_| unreadable())?;
    if bytes.len() < NONCE_LEN {
        return Err(unreadable());
    }
    let (nonce, text) = bytes.split_at(NONCE_LEN);
    let plain = cipher
        .decrypt(
            Nonce::from_slice(nonce),
            Payload {
                msg: text,
                aad: name.as_bytes(),
            },
        )
        .map_err(|_| unreadable())?;
    String::from_utf8(plain).map_err(|_| unreadable())
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), KeepError> {
    super::write_private(path, bytes).map_err(file_error)
}

fn file_error(e: std::io::Error) -> KeepError {
    KeepError::File(e.to_string())
}

fn entry(name: &str) -> Result<keyring::Entry, keyring::Error> {
    keyring::Entry::new(KEYRING_SERVICE, name)
}

fn no_service(e: &keyring::Error) -> bool {
    matches!(
        e,
        keyring::Error::NoStorageAccess(_) | keyring::Error::PlatformFailure(_)
    )
}

/// keyring's errors never contain the secret, but say it plainly anyway.
fn keyring_text(e: keyring::Error) -> String {
    match e {
        keyring::Error::NoEntry => "nothing kept under that name".to_string(),
        // Its payload is the stored secret's bytes: never format it.
        keyring::Error::BadEncoding(_) => "the kept value is not valid text".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_file_keeps_values_sealed_private_and_only_once_chosen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let keep = Keep::file_only(dir.path());
        assert!(matches!(
            keep.set("provider:openai", "sk-file-kept-1234"),
            Err(KeepError::NoPlace)
        ));
        assert_eq!(keep.status().new_values_go_to, None);

        keep.choose_file().expect("chosen");
        assert_eq!(keep.status().new_values_go_to, Some(KeptIn::File));
        assert_eq!(
            keep.set("provider:openai", "sk-file-kept-1234")
                .expect("kept"),
            KeptIn::File
        );
        keep.set("workflow:3:TOKEN", "tok-0987654321")
            .expect("kept");
        assert_eq!(
            keep.get("provider:openai"),
            Some(("sk-file-kept-1234".to_string(), KeptIn::File))
        );
        for file in [FILE, KEY_FILE] {
            let mode = std::fs::metadata(dir.path().join(file))
                .expect("file")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{file}");
        }
        let bytes = std::fs::read(dir.path().join(FILE)).expect("read");
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("sk-file-kept-1234") && !text.contains("tok-0987654321"));

        // Choosing again keeps the key (and so the values).
        keep.choose_file().expect("again");
        keep.forget("provider:openai").expect("forgotten");
        assert_eq!(keep.get("provider:openai"), None);
        assert_eq!(
            keep.get("workflow:3:TOKEN").map(|(v, _)| v).as_deref(),
            Some("tok-0987654321")
        );
    }

    #[test]
    fn a_value_moved_to_another_name_does_not_open() {
        let dir = tempfile::tempdir().expect("tempdir");
        let keep = Keep::file_only(dir.path());
        keep.choose_file().expect("chosen");
        keep.set("workflow:1:A", "value-for-a-1234").expect("kept");
        let path = dir.path().join(FILE);
        let mut values = read_values(&path).expect("values");
        let sealed = values.get("workflow:1:A").cloned().expect("sealed");
        values.insert("workflow:2:A".to_string(), sealed);
        std::fs::write(&path, serde_json::to_vec(&values).expect("json")).expect("write");
        assert_eq!(keep.get("workflow:2:A"), None);
    }
}
