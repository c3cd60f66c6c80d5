//! The engine's healing-memory and safety API: error signatures and their fixes (the Memory
//! page), the decisions log (Activity), and the scheduler's pause by a breaker.

use super::Handle;
use crate::breakers::{self, BreakerSettings};
use crate::error::Result;
use crate::memory::{LoggedDecision, Pattern, PatternDetail};

impl Handle {
    /// Error signatures, most recently seen first.
    pub fn patterns(&self, limit: u32) -> Result<Vec<Pattern>> {
        self.services.store.patterns(limit)
    }

    /// One signature with every fix tried for it.
    pub fn pattern(&self, signature: &str) -> Result<PatternDetail> {
        self.services.store.pattern(signature.trim())
    }

    /// Decisions Healer made on its own, newest first.
    pub fn decisions(&self, limit: u32) -> Result<Vec<LoggedDecision>> {
        self.services.store.decisions(limit)
    }

    /// Why scheduled runs are paused, if a breaker paused them.
    pub fn scheduler_pause(&self) -> Result<Option<String>> {
        breakers::scheduler_paused(&self.services.store)
    }

    /// Let scheduled runs go again after a breaker paused them.
    pub fn resume_scheduler(&self) -> Result<()> {
        breakers::resume_scheduler(&self.services)
    }

    pub fn breaker_settings(&self) -> Result<BreakerSettings> {
        breakers::settings(&self.services.store)
    }

    pub fn set_breaker_settings(&self, settings: BreakerSettings) -> Result<()> {
        self.services
            .store
            .set_setting(breakers::BREAKERS, &settings)
    }
}
