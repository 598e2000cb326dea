//! Stage 8: the kill switch. `deny_all` denies every call; `deny_writes`
//! denies every call of a non-read tool. A kill switch that cannot be read
//! denies `store_unavailable`.

use crate::context::{KillSwitch, StateView};
use crate::reason::{Code, Reason};
use crate::registry::Risk;

/// `Ok` if the kill switch lets a call of this risk tier through.
pub(crate) fn check(state: &dyn StateView, risk: Risk) -> Result<(), Reason> {
    match state.kill_switch() {
        Ok(KillSwitch::Off) => Ok(()),
        Ok(KillSwitch::DenyWrites) if risk == Risk::Read => Ok(()),
        Ok(_) => Err(Reason::whole(Code::KillSwitch)),
        Err(_) => Err(Reason::whole(Code::StoreUnavailable)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Context;

    #[test]
    fn modes() {
        let mut ctx = Context::new("u", "s", 1);
        assert!(check(&ctx, Risk::Destructive).is_ok());
        ctx.kill_switch = KillSwitch::DenyWrites;
        assert!(check(&ctx, Risk::Read).is_ok());
        assert_eq!(
            check(&ctx, Risk::Write),
            Err(Reason::whole(Code::KillSwitch))
        );
        ctx.kill_switch = KillSwitch::DenyAll;
        assert_eq!(
            check(&ctx, Risk::Read),
            Err(Reason::whole(Code::KillSwitch))
        );
    }
}
