//! One name for "what decides a caller's response": the gate alone, whose
//! session state is what the context carries, or a gate over a store
//! (`toolgate_store::StoreGate`), which keeps that state and records every
//! decision. Front ends that offer both (the CLI's `check --no-store`, the
//! Python package's `store=False`) hold a `Box<dyn Decider>` and decide
//! through it the same way.

use crate::{Context, Decisions, Format, Gate};

/// Decides every call of a response body for a caller.
pub trait Decider: Send + Sync {
    /// Reads `body` as `format` and decides each call it proposes for the
    /// caller `context` describes.
    fn decide_body(&self, body: &[u8], format: Format, context: &Context) -> Decisions;
}

/// The gate alone: the session state is the context's own.
impl Decider for Gate {
    fn decide_body(&self, body: &[u8], format: Format, context: &Context) -> Decisions {
        self.decide(body, format, context, context)
    }
}
