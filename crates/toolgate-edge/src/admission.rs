//! The pre-authentication and per-address budgets: which connections are
//! still anonymous, which addresses hold how many, and which connection
//! gives way when the anonymous ones are too many.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// The listener's book of open connections.
#[derive(Default)]
pub(crate) struct Book {
    next: u64,
    /// Anonymous connections, oldest first, each with its address and the
    /// way to close it.
    anonymous: BTreeMap<u64, (IpAddr, oneshot::Sender<()>)>,
    /// Anonymous connections per address.
    anonymous_by_address: HashMap<IpAddr, usize>,
    /// Open connections per address.
    open_by_address: HashMap<IpAddr, usize>,
}

/// The shared book.
pub(crate) type Shared = Arc<Mutex<Book>>;

fn lock(m: &Mutex<Book>) -> MutexGuard<'_, Book> {
    // Every change is a few inserts and removes under the lock, none of
    // which panics: a poisoned book is consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn decrement(map: &mut HashMap<IpAddr, usize>, address: IpAddr) {
    if let Some(n) = map.get_mut(&address) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            map.remove(&address);
        }
    }
}

/// A connection's mark, carried in each of its requests' extensions.
#[derive(Clone)]
pub(crate) struct Mark {
    id: u64,
    address: IpAddr,
    book: Shared,
}

impl Mark {
    /// The connection made an authenticated request: it leaves the
    /// anonymous ones and is never closed to make room.
    pub(crate) fn authenticated(&self) {
        let mut b = lock(&self.book);
        if b.anonymous.remove(&self.id).is_some() {
            decrement(&mut b.anonymous_by_address, self.address);
        }
    }
}

/// Marks the connection that carried these request extensions as
/// authenticated: it no longer counts against the pre-authentication
/// budget, and is never closed to make room for another. Front ends call
/// it once a request's credentials are accepted; outside the edge's
/// listener (a router driven directly in tests), it does nothing.
pub fn authenticated(extensions: &axum::http::Extensions) {
    if let Some(mark) = extensions.get::<Mark>() {
        mark.authenticated();
    }
}

/// The peer address of the connection that carried these request
/// extensions (`None` outside the edge's listener): what a front end
/// checks before believing headers a trusted reverse proxy sets.
pub fn peer_address(extensions: &axum::http::Extensions) -> Option<IpAddr> {
    extensions.get::<Mark>().map(|m| m.address)
}

/// What the book says about a new connection.
pub(crate) enum Admit {
    /// Served, anonymous until it authenticates; `evicted` is closed when
    /// the book sends on its channel.
    Yes(Admitted),
    /// Its address already holds its per-address budget.
    OverAddressBudget,
}

/// An admitted connection: its mark, and the signal that it must give way.
pub(crate) struct Admitted {
    pub(crate) mark: Mark,
    pub(crate) evicted: oneshot::Receiver<()>,
    pub(crate) leave: Leave,
}

/// Admits a connection from `address`: refuses it past `per_address`, and
/// past `anonymous_budget` closes the oldest anonymous connection of the
/// address that holds the most.
pub(crate) fn admit(
    book: &Shared,
    address: IpAddr,
    per_address: Option<usize>,
    anonymous_budget: usize,
) -> Admit {
    let mut b = lock(book);
    let open = b.open_by_address.get(&address).copied().unwrap_or(0);
    if per_address.is_some_and(|cap| open >= cap) {
        return Admit::OverAddressBudget;
    }
    *b.open_by_address.entry(address).or_insert(0) += 1;
    let id = b.next;
    b.next = b.next.wrapping_add(1);
    let (tx, rx) = oneshot::channel();
    b.anonymous.insert(id, (address, tx));
    *b.anonymous_by_address.entry(address).or_insert(0) += 1;
    while b.anonymous.len() > anonymous_budget {
        if !evict_one(&mut b) {
            break;
        }
    }
    let mark = Mark {
        id,
        address,
        book: Arc::clone(book),
    };
    Admit::Yes(Admitted {
        leave: Leave(mark.clone()),
        mark,
        evicted: rx,
    })
}

/// Closes the oldest anonymous connection of the address holding the most
/// anonymous connections (the oldest of all among equals).
fn evict_one(b: &mut Book) -> bool {
    let most = b.anonymous_by_address.values().copied().max().unwrap_or(0);
    let victim = b
        .anonymous
        .iter()
        .find(|(_, (a, _))| b.anonymous_by_address.get(a).copied() == Some(most))
        .map(|(id, _)| *id);
    let Some(id) = victim else { return false };
    match b.anonymous.remove(&id) {
        Some((address, close)) => {
            decrement(&mut b.anonymous_by_address, address);
            let _ignored = close.send(());
            true
        }
        None => false,
    }
}

/// Takes a connection out of the book when it ends, whatever ends it.
pub(crate) struct Leave(Mark);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.authenticated();
        decrement(&mut lock(&self.0.book).open_by_address, self.0.address);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    fn yes(a: Admit) -> Admitted {
        match a {
            Admit::Yes(a) => a,
            Admit::OverAddressBudget => panic!("refused within budget"),
        }
    }

    #[test]
    fn a_flooding_address_gives_way_before_anyone_else() {
        let book: Shared = Arc::default();
        let mut quiet = yes(admit(&book, ip(1), None, 3));
        let mut flood: Vec<Admitted> = (0..2).map(|_| yes(admit(&book, ip(2), None, 3))).collect();
        // Budget full (3): one more from the flooder closes its own oldest.
        flood.push(yes(admit(&book, ip(2), None, 3)));
        assert!(quiet.evicted.try_recv().is_err());
        assert_eq!(flood[0].evicted.try_recv(), Ok(()));
        assert!(flood[1].evicted.try_recv().is_err());
    }

    #[test]
    fn an_authenticated_connection_is_never_closed_for_room() {
        let book: Shared = Arc::default();
        let mut first = yes(admit(&book, ip(1), None, 1));
        first.mark.authenticated();
        let mut second = yes(admit(&book, ip(1), None, 1));
        let _third = yes(admit(&book, ip(1), None, 1));
        assert!(first.evicted.try_recv().is_err());
        assert_eq!(second.evicted.try_recv(), Ok(()));
    }

    #[test]
    fn the_per_address_budget_refuses_and_frees_on_leave() {
        let book: Shared = Arc::default();
        let a = yes(admit(&book, ip(1), Some(2), 10));
        let _b = yes(admit(&book, ip(1), Some(2), 10));
        assert!(matches!(
            admit(&book, ip(1), Some(2), 10),
            Admit::OverAddressBudget
        ));
        assert!(matches!(admit(&book, ip(2), Some(2), 10), Admit::Yes(_)));
        drop(a);
        assert!(matches!(admit(&book, ip(1), Some(2), 10), Admit::Yes(_)));
    }
}
