//! The limits' names, defaults and ceilings are a documented contract
//! (config keys, error messages): each is pinned here, one by one.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate_json::{Limit, Limits};

const TABLE: [(Limit, &str, usize, usize); 6] = [
    (Limit::InputBytes, "max_input_bytes", 8 << 20, 1 << 30),
    (Limit::Depth, "max_depth", 64, 1024),
    (Limit::StringBytes, "max_string_bytes", 1 << 20, 1 << 30),
    (
        Limit::ObjectMembers,
        "max_object_members",
        10_000,
        10_000_000,
    ),
    (Limit::ArrayItems, "max_array_items", 100_000, 100_000_000),
    (Limit::Values, "max_values", 1_000_000, 100_000_000),
];

#[test]
fn names_defaults_and_ceilings() {
    assert_eq!(Limit::ALL.len(), TABLE.len());
    for ((limit, name, default, ceiling), listed) in TABLE.into_iter().zip(Limit::ALL) {
        assert_eq!(limit, listed);
        assert_eq!(limit.name(), name);
        assert_eq!(limit.to_string(), name);
        assert_eq!(limit.default_value(), default, "{name}");
        assert_eq!(limit.ceiling(), ceiling, "{name}");
        assert_eq!(Limits::new().get(limit), default, "{name}");
        assert_eq!(Limits::default().get(limit), default, "{name}");
    }
    assert_eq!(Limits::new(), Limits::default());
}

#[test]
fn each_limit_is_set_on_its_own() {
    for (limit, name, _, ceiling) in TABLE {
        for value in [1, 2, 63, ceiling - 1, ceiling] {
            let set = Limits::new().set(limit, value).unwrap();
            assert_eq!(set.get(limit), value, "{name}");
            for (other, _, default, _) in TABLE {
                if other != limit {
                    assert_eq!(set.get(other), default, "{name} moved {other}");
                }
            }
        }
        for value in [0, ceiling + 1, usize::MAX] {
            let e = Limits::new().set(limit, value).unwrap_err();
            assert_eq!(e.limit(), limit);
            assert_eq!(e.requested(), value);
            assert_eq!(
                e.to_string(),
                format!("`{name}` must be between 1 and {ceiling}, got {value}")
            );
        }
    }
}
