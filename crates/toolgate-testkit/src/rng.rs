//! A small deterministic generator for generated and mutated test inputs.

/// xorshift64*: small and deterministic, so a failure reproduces from its
/// seed (which the test should print). Not for anything but tests.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`, which must not be 0 (xorshift stays at 0).
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n`; 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// An index into a slice of `len` items; 0 when `len` is 0.
    pub fn index(&mut self, len: usize) -> usize {
        // u64 holds every usize on the targets we build for, and the
        // result is below `len`, so both conversions are exact.
        usize::try_from(self.below(len as u64)).unwrap_or(0)
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `items`.
    ///
    /// # Panics
    ///
    /// When `items` is empty.
    #[expect(clippy::indexing_slicing, reason = "an empty list is the caller's bug")]
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.index(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_sequence_is_xorshift64_star() {
        let mut rng = Rng::new(1);
        // x = 1: x ^= x >> 12 (1); x ^= x << 25 (0x2000001);
        // x ^= x >> 27 (0x2000001); times the multiplier.
        assert_eq!(
            rng.next_u64(),
            0x2000001u64.wrapping_mul(0x2545_f491_4f6c_dd1d)
        );
    }

    #[test]
    fn below_and_index_stay_in_range_and_take_zero() {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        for n in 1..200 {
            assert!(rng.below(n) < n);
            assert!(rng.index(n as usize) < n as usize);
        }
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.index(0), 0);
        assert_eq!(rng.pick(&["only"]), "only");
    }
}
