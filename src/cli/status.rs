//! `healer status` and `healer events`: where the data lives, whether an engine runs, and what
//! happened lately.

use healer::lease::Lease;
use healer::{Paths, Result};
use serde::Serialize;

use crate::print::print_json;
use crate::reach::open;

#[derive(Serialize)]
struct Status {
    data_dir: String,
    database: String,
    schema_version: i64,
    engine_running: bool,
    engine: Option<String>,
}

pub fn status(paths: &Paths, json: bool) -> Result<()> {
    let store = open(paths)?;
    let running = Lease::is_held(paths)?;
    let status = Status {
        data_dir: paths.data_dir().display().to_string(),
        database: paths.db().display().to_string(),
        schema_version: store.schema_version()?,
        engine_running: running,
        engine: running.then(|| Lease::holder(paths)),
    };
    if json {
        return print_json(&status).map(|_| ());
    }
    println!("Data folder:  {}", status.data_dir);
    println!(
        "Database:     {} (schema {})",
        status.database, status.schema_version
    );
    match &status.engine {
        Some(holder) => println!("Engine:       running ({holder})"),
        None => println!("Engine:       not running (start the desktop app or `healer daemon`)"),
    }
    Ok(())
}

pub fn events(paths: &Paths, json: bool, limit: u32) -> Result<bool> {
    let store = open(paths)?;
    let events = store.list_events(None, limit)?;
    if json {
        return print_json(&events);
    }
    if events.is_empty() {
        println!("No events yet.");
    }
    for record in &events {
        println!(
            "#{:<6} {}  {}",
            record.id,
            record.at,
            crate::print::one_line(&record.event.describe())
        );
    }
    Ok(true)
}
