//! Holding what Healer starts: the pieces every process it launches goes through, so that the
//! runner of scripts, the sandbox and (later) the coding agents hold their children the same
//! way. Here: dropping capabilities between fork and exec, so that a child running as root
//! cannot read the engine's memory.

#[cfg(target_os = "linux")]
pub mod caps;
