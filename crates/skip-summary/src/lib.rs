//! Nothing to use: this crate's one test prints, at the end of `cargo test --workspace`,
//! one line counting the tests and benchmarks that skipped for want of `../shared`, a C
//! compiler or a browser (each printed its own `SKIPPED:` line where it ran, and logged
//! it; see `recap_gen::shared`).

#[cfg(test)]
mod tests {
    use recap_gen::shared;
    use std::io::Write as _;

    #[test]
    fn tests_skipped_in_this_run() {
        let skipped = shared::skipped_in_this_run();
        let line = shared::summary(skipped.len(), &shared::skip_log());
        // Through the stderr handle: libtest would hide what `eprintln!` prints.
        let _ = writeln!(std::io::stderr(), "\n{line}\n");
        // The run is summed up; a log someone else keeps (RECAP_SKIP_LOG, `.ci/run`)
        // is theirs to clear.
        if std::env::var_os("RECAP_SKIP_LOG").is_none() {
            let _ = std::fs::remove_file(shared::skip_log());
        }
    }
}
