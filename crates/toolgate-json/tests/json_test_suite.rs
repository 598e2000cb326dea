//! Runs every JSONTestSuite parsing case through the strict parser.
fn main() {}
