//! CPU time of this process, shared by the timing examples (included by `#[path]`).

/// CPU seconds (user + system, all threads) of this process so far, from
/// `/proc/self/stat` (Linux; 0 elsewhere). The machine may be shared, so wall time alone
/// can mislead.
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the comm field.
    (ticks(11) + ticks(12)) / 100.0
}
