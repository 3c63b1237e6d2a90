// Rust without frame pointers (std's own code, linked in, is unwound by its
// CFI too): a closure comparator given to std's slice sort, generic
// recursion, iterator chains. Stacks: uw_rust::rs_weight <- the closure <-
// core::slice::sort::... <- uw_rust::rs_sort <- uw_rust::rs_recurse (x8)
// <- uw_rust::main <- std's runtime <- main.
use std::time::{Duration, Instant};

#[inline(never)]
fn rs_weight(x: u64) -> u64 {
    let mut h = x;
    for _ in 0..24 {
        h = (h ^ (h >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    h
}

#[inline(never)]
fn rs_sort(v: &mut [u64]) {
    v.sort_by(|a, b| rs_weight(*a).cmp(&rs_weight(*b)));
}

#[inline(never)]
fn rs_recurse<T: Copy + Into<u64>>(depth: T, left: u32, v: &mut Vec<u64>) -> u64 {
    if left == 0 {
        rs_sort(v);
        v[0]
    } else {
        let r = rs_recurse(depth, left - 1, v);
        r ^ depth.into()
    }
}

fn main() {
    let ms: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(500.0);
    let end = Instant::now() + Duration::from_secs_f64(ms / 1000.0);
    let mut acc = 0u64;
    let mut seed = 1u64;
    while Instant::now() < end {
        let mut v: Vec<u64> = (0..2000)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                seed >> 11
            })
            .collect();
        acc ^= rs_recurse(7u32, 8, &mut v);
    }
    std::process::exit((acc == 42) as i32);
}
