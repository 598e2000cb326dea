//! toolgate's own benchmarks: the gate (`benches/decide.rs`), Cedar
//! (`benches/authz.rs`), the store (`benches/store_gate.rs`), the service
//! load test (`load/`) and the proxies' overhead (`examples/`). The
//! comparisons with other crates live in `bench/peers`, a workspace of
//! their own, so that each peer is built as its users build it.
