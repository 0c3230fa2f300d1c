//! The server's random generator: L'Ecuyer's three-component Tausworthe
//! generator ("taus88"), with the same seeding and the same float
//! conversions as SuperCollider's, so that distributions match.

/// 12 bytes of state; cheap to copy into registers in inner loops. C layout:
/// plugins read it as SuperCollider's `RGen`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RGen {
    pub s1: u32,
    pub s2: u32,
    pub s3: u32,
}

/// Thomas Wang's 32-bit integer hash, as SuperCollider's `Hash(int)`:
/// small seeds that humans pick get spread over all bits.
pub fn hash32(key: i32) -> i32 {
    let mut h = key as u32;
    h = h.wrapping_add(!(h << 15));
    h ^= h >> 10;
    h = h.wrapping_add(h << 3);
    h ^= h >> 6;
    h = h.wrapping_add(!(h << 11));
    h ^= h >> 16;
    h as i32
}

impl RGen {
    pub fn new(seed: u32) -> Self {
        let mut g = RGen { s1: 0, s2: 0, s3: 0 };
        g.init(seed);
        g
    }

    pub fn init(&mut self, seed: u32) {
        let seed = hash32(seed as i32) as u32;
        // Each component needs a few low bits set to stay out of its zero cycle.
        self.s1 = 1_243_598_713 ^ seed;
        if self.s1 < 2 {
            self.s1 = 1_243_598_713;
        }
        self.s2 = 3_093_459_404 ^ seed;
        if self.s2 < 8 {
            self.s2 = 3_093_459_404;
        }
        self.s3 = 1_821_928_721 ^ seed;
        if self.s3 < 16 {
            self.s3 = 1_821_928_721;
        }
    }

    #[inline]
    pub fn trand(&mut self) -> u32 {
        self.s1 = ((self.s1 & 0xFFFF_FFFE) << 12) ^ (((self.s1 << 13) ^ self.s1) >> 19);
        self.s2 = ((self.s2 & 0xFFFF_FFF8) << 4) ^ (((self.s2 << 2) ^ self.s2) >> 25);
        self.s3 = ((self.s3 & 0xFFFF_FFF0) << 17) ^ (((self.s3 << 3) ^ self.s3) >> 11);
        self.s1 ^ self.s2 ^ self.s3
    }

    /// [0, 1) with 32 random mantissa bits.
    #[inline]
    pub fn drand(&mut self) -> f64 {
        let bits = (0x4130_0000u64 << 32) | self.trand() as u64;
        f64::from_bits(bits) - 1_048_576.0
    }

    /// [0, 1) as f32 (23 random mantissa bits).
    #[inline]
    pub fn frand(&mut self) -> f32 {
        f32::from_bits(0x3F80_0000 | (self.trand() >> 9)) - 1.0
    }

    /// [1, 2)
    #[inline]
    pub fn frand0(&mut self) -> f32 {
        f32::from_bits(0x3F80_0000 | (self.trand() >> 9))
    }

    /// [-1, 1)
    #[inline]
    pub fn frand2(&mut self) -> f32 {
        f32::from_bits(0x4000_0000 | (self.trand() >> 9)) - 3.0
    }

    /// [-0.125, 0.125)
    #[inline]
    pub fn frand8(&mut self) -> f32 {
        f32::from_bits(0x3E80_0000 | (self.trand() >> 9)) - 0.375
    }

    /// -1.0 or +1.0
    #[inline]
    pub fn fcoin(&mut self) -> f32 {
        f32::from_bits(0x3F80_0000 | (0x8000_0000 & self.trand()))
    }

    pub fn flinrand(&mut self) -> f32 {
        let a = self.frand();
        let b = self.frand();
        a.min(b)
    }

    pub fn fbilinrand(&mut self) -> f32 {
        let a = self.frand();
        let b = self.frand();
        a - b
    }

    pub fn fsum3rand(&mut self) -> f32 {
        // The three draws are summed in single precision, the rest in double.
        let sum = self.frand() + self.frand() + self.frand();
        ((sum as f64 - 1.5) * 0.666666667) as f32
    }

    /// 0 ..= scale - 1
    pub fn irand(&mut self, scale: i32) -> i32 {
        (scale as f64 * self.drand()).floor() as i32
    }

    /// -scale ..= scale
    pub fn irand2(&mut self, scale: i32) -> i32 {
        ((2.0 * scale as f64 + 1.0) * self.drand() - scale as f64).floor() as i32
    }

    pub fn drand2(&mut self, scale: f64) -> f64 {
        (self.drand() * 2.0 - 1.0) * scale
    }

    pub fn linrand(&mut self, scale: f64) -> f64 {
        let a = self.drand();
        let b = self.drand();
        a.min(b) * scale
    }

    pub fn bilinrand(&mut self, scale: f64) -> f64 {
        let a = self.drand();
        let b = self.drand();
        (a - b) * scale
    }

    pub fn exprandrng(&mut self, lo: f64, hi: f64) -> f64 {
        lo * ((hi / lo).ln() * self.drand()).exp()
    }

    pub fn sum3rand(&mut self, scale: f64) -> f64 {
        (self.drand() + self.drand() + self.drand() - 1.5) * 0.666666667 * scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_stay_in_their_documented_ranges() {
        let mut g = RGen::new(1);
        for _ in 0..100_000 {
            let f = g.frand();
            assert!((0.0..1.0).contains(&f));
            let f2 = g.frand2();
            assert!((-1.0..1.0).contains(&f2));
            let c = g.fcoin();
            assert!(c == 1.0 || c == -1.0);
            let i = g.irand(7);
            assert!((0..7).contains(&i));
        }
    }

    #[test]
    fn different_seeds_give_different_streams() {
        let mut a = RGen::new(1);
        let mut b = RGen::new(2);
        let same = (0..64).filter(|_| a.trand() == b.trand()).count();
        assert!(same < 4);
    }
}
