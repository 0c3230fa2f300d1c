//! The running median window that the Median filter and Pitch's smoothing
//! share, kept as scsynth keeps theirs.

pub(crate) const MAX_MEDIAN: usize = 32;

/// A running median of the last `size` values (at most 32), kept sorted
/// with their ages, as scsynth's Median and Pitch keep theirs.
pub(crate) struct MedianWindow {
    values: [f32; MAX_MEDIAN],
    ages: [i32; MAX_MEDIAN],
    size: usize,
}

impl MedianWindow {
    /// A window of `size` values, all `value` (size clamped to the maximum).
    pub(crate) fn new(size: usize, value: f32) -> MedianWindow {
        let size = size.min(MAX_MEDIAN);
        let mut ages = [0; MAX_MEDIAN];
        for (i, a) in ages.iter_mut().enumerate() {
            *a = i as i32;
        }
        MedianWindow { values: [value; MAX_MEDIAN], ages, size }
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Replaces the oldest value with `value`, keeps the window sorted and
    /// returns its middle element.
    pub(crate) fn insert(&mut self, value: f32) -> f32 {
        let size = self.size;
        if size == 0 {
            return value;
        }
        let last = size as i32 - 1;
        let mut pos = 0usize;
        for i in 0..size {
            if self.ages[i] == last {
                pos = i;
            } else {
                self.ages[i] += 1;
            }
        }
        while pos != 0 && value < self.values[pos - 1] {
            self.values[pos] = self.values[pos - 1];
            self.ages[pos] = self.ages[pos - 1];
            pos -= 1;
        }
        while pos != size - 1 && value > self.values[pos + 1] {
            self.values[pos] = self.values[pos + 1];
            self.ages[pos] = self.ages[pos + 1];
            pos += 1;
        }
        self.values[pos] = value;
        self.ages[pos] = 0;
        self.values[size >> 1]
    }
}
