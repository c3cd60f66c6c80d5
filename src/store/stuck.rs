//! What the stuck scan has already reported, kept across restarts: each finding is told once
//! while it lasts.

use std::collections::HashSet;

use rusqlite::params;

use super::{now, Store};
use crate::error::Result;

impl Store {
    /// Settle one scan's findings (`keys`): remember the new ones and return them, forget the
    /// remembered ones the scan no longer finds.
    pub fn settle_stuck_findings(&self, keys: &[String]) -> Result<Vec<String>> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction()?;
            let known: HashSet<String> = {
                let mut stmt = tx.prepare("SELECT key FROM healer_stuck_reported")?;
                let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            let found: HashSet<&str> = keys.iter().map(String::as_str).collect();
            for gone in known.iter().filter(|k| !found.contains(k.as_str())) {
                tx.execute(
                    "DELETE FROM healer_stuck_reported WHERE key = ?1",
                    params![gone],
                )?;
            }
            let mut new = Vec::new();
            for key in keys {
                if !known.contains(key) && !new.contains(key) {
                    tx.execute(
                        "INSERT INTO healer_stuck_reported (key, reported_at) VALUES (?1, ?2)",
                        params![key, at],
                    )?;
                    new.push(key.clone());
                }
            }
            tx.commit()?;
            Ok(new)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    #[test]
    fn a_finding_is_new_once_while_it_lasts_and_again_after_it_went() {
        use std::slice::from_ref;
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("healer.db");
        let store = Store::open(&path).expect("store");
        let a = "1/t-a/TooLong/Some(3)".to_string();
        let b = "1/t-b/Repeated/None".to_string();
        let both = [a.clone(), b.clone()];
        assert_eq!(
            store.settle_stuck_findings(from_ref(&a)).expect("s"),
            [a.as_str()]
        );
        assert!(store
            .settle_stuck_findings(from_ref(&a))
            .expect("s")
            .is_empty());
        drop(store);
        // Kept across a reopen (an engine restart).
        let store = Store::open(&path).expect("store");
        assert_eq!(store.settle_stuck_findings(&both).expect("s"), [b.as_str()]);
        // a is no longer found: forgotten, so it is new when it comes back.
        assert!(store
            .settle_stuck_findings(from_ref(&b))
            .expect("s")
            .is_empty());
        assert_eq!(store.settle_stuck_findings(&both).expect("s"), [a.as_str()]);
    }
}
