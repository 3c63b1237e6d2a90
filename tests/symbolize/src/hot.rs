// A Rust program with two hot functions kept out of line (#[inline(never)])
// and one helper forced inline into the first.  Built by rustc -C opt-level=2
// -g.  ~0.5 s of CPU with no argument; an argument scales it.
use std::hint::black_box;

#[inline(always)]
fn rs_step(x: u64, i: u64) -> u64 {
    let y = x.rotate_left(17) ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    y.wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (y >> 29)
}

#[inline(never)]
#[no_mangle]
pub fn rs_scramble(n: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..n {
        x = rs_step(black_box(x), i);
    }
    x
}

#[inline(never)]
pub fn rs_digits(n: u64) -> u64 {
    let mut total = 0u64;
    for mut v in 1..=n {
        while v != 0 {
            total += v % 10;
            v /= 10;
        }
    }
    total
}

fn main() {
    let scale: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let base = (scale * 1_000_000.0) as u64;
    let r = rs_scramble(black_box(base * 190)) ^ rs_digits(black_box(base * 25));
    println!("hot.rs {}", r);
}
