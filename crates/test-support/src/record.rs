//! Machine-readable results for `scripts/bench-report`: when the environment variable
//! `BENCH_JSON` names a file, each measurement is appended to it as one JSON object per line
//! (`{"bench": ..., ...}`). The human-readable output on stdout is unchanged.

use std::io::Write;

/// Appends `fields` (a JSON object) with `"bench": bench` to `$BENCH_JSON`, if set.
pub fn record(bench: &str, mut fields: serde_json::Value) {
    let Some(path) = std::env::var_os("BENCH_JSON") else {
        return;
    };
    if let Some(object) = fields.as_object_mut() {
        object.insert("bench".into(), bench.into());
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open BENCH_JSON {}: {e}", path.to_string_lossy()));
    writeln!(file, "{fields}").expect("write BENCH_JSON");
}
