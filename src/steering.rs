//! Steering's acts that need a model: the periodic judge, which looks at each task in
//! progress every `judge_every_secs` and lets the agent go on, steers it with a message, or
//! replaces it. The free parts (the loop detector on each step, true heartbeats, stuck
//! sessions) run inside the project runner (`project::looped`, `project::steered`), where the
//! steps arrive; the judge and the watch on a person's own Claude Code sessions sit here, on layer 6, because it uses the model layer and acts on
//! the runner's sessions from outside them, as a remedy does. See docs/steering.md.

mod judge;
pub mod own;
pub mod own_opencode;
mod prompt;

pub use judge::{answer_schema, judge_due, parse_answer, Answer, Judged, JUDGE_CHECK_SECS};
pub use own::{LiveSession, SessionOrigin};
pub use prompt::SYSTEM as JUDGE_SYSTEM;
